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

// Receives the text of `print` ops (one call per print op per program instance).
using PrintSink = std::function<void(const std::string&)>;

}  // namespace tri
