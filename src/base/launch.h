// What every backend receives at launch: the grid and the runtime arguments.
//
// Arguments are the kernel's runtime parameters in order (constexprs are gone after
// specialization). Each is 64 bits: a pointer's address, or a scalar's bit pattern in the low
// bits (i1..i64: the value truncated to the type's width; f16/bf16/f32/f64: the IEEE bits of that
// width, so an f32 is its 32-bit pattern, not a double). `extent` is the byte size of the buffer
// a pointer argument points into, or 0 when unknown (the interpreter's checked mode uses it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace tri {

struct Grid {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
};

struct ArgValue {
  uint64_t bits = 0;
  uint64_t extent = 0;
};

// Receives the text of `print` ops (one call per print op per program instance).
using PrintSink = std::function<void(const std::string&)>;

}  // namespace tri
