// What the host targets share to run distributed kernels (docs/distributed.md): the spin of a
// `wait` on a signal, with its ways of ending early, and the launcher that gives every program
// instance of a launch a thread of its own, so that a program that waits for another never
// waits for one that has not started.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "base/launch.h"
#include "base/status.h"

namespace tri {

enum class WaitCmp : uint8_t { Eq, Ge };  // Ge compares as signed integers of the signal's width

enum class WaitEnd : uint8_t {
  Done,       // the signal compared true (read with acquire ordering)
  TimedOut,   // timeout_ms passed first
  Stopped,    // *stop or *abort was set (another program failed)
  Cancelled,  // the cancel token was requested
};

struct WaitRequest {
  uint64_t addr = 0;   // the signal's address, aligned to `bytes`
  int bytes = 4;       // 4 or 8
  WaitCmp cmp = WaitCmp::Eq;
  int64_t value = 0;   // sign-extended from the signal's width
  bool acquire = true;
};

// Spins, then yields, then sleeps in short naps, until the signal compares true or a reason to
// stop appears. *last receives the last value read (sign-extended). timeout_ms 0 never times
// out. stop and abort may be null.
WaitEnd wait_signal(const WaitRequest& w, uint64_t timeout_ms, const std::atomic<bool>* stop,
                    const std::atomic<bool>* abort, const CancelToken& cancel, int64_t* last);

// Runs task(i) for every i in [0, n), each on its own new thread with a stack of stack_bytes,
// all at once, and returns when all have returned. When a thread cannot start, *stop is set (so
// that started tasks that wait give up), the started ones are joined, and the result is
// Code::OutOfMemory naming the count. n above kMaxCoresidentPrograms is Code::LimitExceeded.
Status run_coresident(uint64_t n, size_t stack_bytes, const std::function<void(uint64_t)>& task,
                      std::atomic<bool>* stop);

}  // namespace tri
