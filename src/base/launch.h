// What every backend receives at launch: the grid and the runtime arguments.
//
// Arguments are the kernel's runtime parameters in order (constexprs are gone after
// specialization). Each is 64 bits: a pointer's address, or a scalar's bit pattern in the low
// bits (i1..i64: the value truncated to the type's width; f16/bf16/f32/f64: the IEEE bits of that
// width, so an f32 is its 32-bit pattern, not a double). `extent` is the byte size of the buffer
// a pointer argument points into, or 0 when unknown (the interpreter's checked mode uses it).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace tri {

// Grid limits, the same on every target (CUDA's): program_id and num_programs are i32 in the IR,
// so x stays below 2^31, and y and z below 2^16, so that x * y * z < 2^63 never wraps. A grid
// with a zero dimension is an empty launch: it succeeds and runs nothing.
constexpr uint32_t kMaxGridX = 0x7fffffffu;
constexpr uint32_t kMaxGridYZ = 0xffffu;

struct Grid {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
};

struct ArgValue {
  uint64_t bits = 0;
  uint64_t extent = 0;
};

// Lets a host stop a running launch (tri_context_cancel): the launch stops at its next loop
// back-edge or program instance once `*counter` differs from `seen` (its value when the launch
// began), and fails with Code::Cancelled. A default token never cancels.
struct CancelToken {
  const std::atomic<uint64_t>* counter = nullptr;
  uint64_t seen = 0;
  bool requested() const { return counter && counter->load(std::memory_order_relaxed) != seen; }
};

// The team a launch runs in (docs/distributed.md): this launch's rank, the team's size, and the
// rank's view of the symmetric heap. A launch outside a team has none (LaunchEnv's team is
// null): it is rank 0 of 1, and symm_at to rank 0 is the identity.
struct TeamLaunch {
  uint32_t rank = 0;
  uint32_t num_ranks = 1;
  // num_ranks addresses: the start of each rank's heap, all heap_bytes long.
  const uint64_t* heap_bases = nullptr;
  uint64_t heap_bytes = 0;
  // A `wait` that has not seen its signal after this long fails the launch (0: never).
  uint64_t wait_timeout_ms = 0;
  // The cuda target: the device address of num_ranks u64 heap bases as this rank's GPU maps
  // them (the kernel's hidden parameter).
  uint64_t device_bases = 0;
  // Set by the first program of the team that fails; every wait of the team then gives up, so
  // that no rank waits for a signal a failed rank will never send. May be null.
  std::atomic<bool>* abort = nullptr;
};

// Every rank's symmetric heap starts on this many bytes, on every target, so that the shift from
// one rank's copy of a buffer to another's (symm_at) keeps alignment up to it (axis info).
constexpr int64_t kSymmetricHeapAlign = 64;

// Program instances that a launch of a kernel with `wait` runs at once, each on its own thread
// (kernels that wait need every program they wait for to be running); a team launch counts every
// rank's programs together. Larger launches of such kernels are Code::LimitExceeded.
constexpr uint64_t kMaxCoresidentPrograms = 1024;
// The wait timeout of launches outside a team, and of a new team.
constexpr uint64_t kDefaultWaitTimeoutMs = 30000;
// A timeout in nanoseconds (the GPU's clock), where 0 is "forever": one too long to count in
// nanoseconds (above 584 years, UINT64_MAX included) saturates to forever instead of wrapping.
inline uint64_t wait_timeout_ns(uint64_t ms) { return ms > UINT64_MAX / 1000000 ? 0 : ms * 1000000; }

// Receives the text of `print` ops (one call per print op per program instance).
using PrintSink = std::function<void(const std::string&)>;

}  // namespace tri
