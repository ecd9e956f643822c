// A fixed pool of worker threads that runs a batch of N independent tasks and waits for them.
//
// The CPU backend runs the program instances of a launch on it (in chunks, so scheduling costs
// are amortized). Tasks run on the pool's own threads, whose stacks have a size the pool chooses
// (JIT-compiled kernels keep whole blocks on the stack); the caller's thread joins in only when
// it asks to (for tasks with small frames: its stack may be small, a Rust or Go thread's), which
// saves waking a worker for a batch of one task. The pool owns no global state; a context owns
// one and several pools may coexist.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace tri {

class ThreadPool {
 public:
  // Starts `num_threads` workers (0: std::thread::hardware_concurrency(), at least 1), each with a
  // stack of `stack_bytes` (0: kDefaultStackBytes). Threads are created here, not lazily: the
  // owner creates the pool lazily when it first needs one. Starting threads can fail (an
  // address-space limit, a thread limit): the pool then has fewer workers than asked, possibly
  // none, and start_error() says why; it never aborts. A pool without workers still runs
  // batches the caller joins (on the caller alone); other batches fail (run()).
  explicit ThreadPool(unsigned num_threads = 0, size_t stack_bytes = 0);
  // Joins the workers. No batch may be running.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  static constexpr size_t kDefaultStackBytes = size_t(64) << 20;

  unsigned size() const { return static_cast<unsigned>(workers_.size()); }
  // Workers asked for, and why fewer started ("" when all did).
  unsigned requested() const { return requested_; }
  const std::string& start_error() const { return start_error_; }
  size_t stack_bytes() const { return stack_bytes_; }

  // Runs task(i) for every i in [0, n), each exactly once, on the workers (in no particular order,
  // concurrently), and returns when all have finished. With caller_joins, the calling thread runs
  // tasks too (a batch of one runs on it alone, waking no worker). Tasks must not throw. Batches
  // from several calling threads are serialized.
  // Re-entry: a task may call run() on the same pool (a print callback that launches another
  // kernel of the same context). That nested batch does not wait for the pool (which is busy
  // with the batch that called it): with caller_joins (tasks with small frames) it runs on the
  // calling thread alone, and otherwise on one temporary thread with the pool's stack size (the
  // calling task's frame still takes room on the caller's stack).
  // Errors (Code::OutOfMemory, nothing run): the pool has no worker and caller_joins is false,
  // or a temporary thread for a nested batch could not start.
  Status run(uint64_t n, const std::function<void(uint64_t)>& task, bool caller_joins = false);

 private:
  struct Worker;
  static void* worker_main(void* arg);
  void work();

  size_t stack_bytes_ = 0;
  unsigned requested_ = 0;
  std::string start_error_;
  std::vector<std::unique_ptr<Worker>> workers_;

  std::mutex run_mu_;  // serializes run() calls
  std::mutex mu_;      // guards the fields below
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ = 0;  // bumped for each batch
  bool stop_ = false;
  const std::function<void(uint64_t)>* task_ = nullptr;
  uint64_t n_ = 0;
  std::atomic_uint64_t next_{0};      // next task index to hand out
  std::atomic_uint64_t finished_{0};  // tasks finished in this batch
  unsigned busy_ = 0;                 // workers inside the current batch
};

}  // namespace tri
