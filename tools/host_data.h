// Host-side data for kernels run through the public C API: element types by TRI_DTYPE_*, their
// bit patterns, conversions to and from double (narrow floats rounded to nearest even, exactly as
// docs/ir.md says casts round), text in and out, ulp distances, and aligned host buffers.
//
// The `tri` command (run, test) and the conformance suite share this file. It uses tri/tri.h only
// for the TRI_DTYPE_* numbers, never Tri's internals, so it is an independent second opinion on
// how values are encoded: if it and the library disagree about an f16 or an f8, tests show it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tri/tri.h"

namespace tri_tool {

constexpr int kNumDtypes = 11;

struct DtypeInfo {
  const char* name;  // as written in IR: "f32"
  int bits;          // 1 for i1 (which takes one byte in memory)
  int bytes;         // size in memory
  bool is_float;
  int exp_bits;      // floats: exponent and mantissa bits
  int man_bits;
  bool ieee_special; // floats: the top exponent means inf/NaN (false for f8e4m3, which has no inf)
};

// Info for a TRI_DTYPE_* value; asserts that it is valid.
const DtypeInfo& dtype_info(int32_t dtype);
inline const char* dtype_name(int32_t dtype) { return dtype_info(dtype).name; }
inline bool dtype_is_float(int32_t dtype) { return dtype_info(dtype).is_float; }
inline int dtype_bytes(int32_t dtype) { return dtype_info(dtype).bytes; }
// Parses "f32", "i1", ...; false when the name is not an element type.
bool dtype_from_name(std::string_view name, int32_t* out);

// ---- bit patterns (an element's bits in the low bits of a uint64_t)
uint64_t load_bits(const void* base, int32_t dtype, size_t index);
void store_bits(void* base, int32_t dtype, size_t index, uint64_t bits);
uint64_t bits_mask(int32_t dtype);
// An integer's bits read as signed (sign-extended from the type's width) or unsigned. i1 reads
// as 0 or -1 signed, 0 or 1 unsigned (like the IR: true is 1, sext of true is -1).
int64_t bits_to_signed(int32_t dtype, uint64_t bits);
uint64_t bits_to_unsigned(int32_t dtype, uint64_t bits);

// A float's value (exact: every format here fits in a double).
double float_bits_to_double(int32_t dtype, uint64_t bits);
// The value rounded to nearest even in a float format; overflow gives inf (NaN for f8e4m3,
// which has no inf), NaN gives the canonical quiet NaN of the format.
uint64_t double_to_float_bits(int32_t dtype, double v);
bool float_bits_is_nan(int32_t dtype, uint64_t bits);
bool float_bits_is_zero(int32_t dtype, uint64_t bits);
bool float_bits_negative(int32_t dtype, uint64_t bits);

// Number of representable values between a and b (same format, neither NaN); +0 and -0 are one
// point. Used for ulp tolerances.
uint64_t ulp_distance(int32_t dtype, uint64_t a, uint64_t b);
// The value's unit roundoff (2^-man_bits), used for reduction tolerances.
double float_epsilon(int32_t dtype);

// ---- text
// An element as text: integers in decimal (signed), floats in the shortest form that reads back
// ("1.5", "-0.0", "nan", "inf", "1e-45"); i1 as 0 or 1.
std::string format_bits(int32_t dtype, uint64_t bits);
// Parses one element of type `dtype`: integers (decimal or 0x hex, optionally negative, or
// true/false) must fit in the type read as signed or unsigned; floats are rounded to the type
// (inf, -inf, nan, -0.0 allowed); an integer literal is accepted for a float type. False with a
// message on bad text.
bool parse_element(std::string_view text, int32_t dtype, uint64_t* out_bits, std::string* error);

// ---- buffers
// Host memory for one pointer argument: 64-byte aligned, zero-initialized, never empty (a
// zero-element buffer still has an address).
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(int32_t dtype, std::vector<int64_t> shape);
  HostBuffer(const HostBuffer& o);
  HostBuffer& operator=(const HostBuffer& o);
  HostBuffer(HostBuffer&&) = default;
  HostBuffer& operator=(HostBuffer&&) = default;

  int32_t dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t count() const { return count_; }
  size_t byte_size() const { return count_ * dtype_bytes(dtype_); }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  uint64_t get(size_t i) const { return load_bits(data(), dtype_, i); }
  void set(size_t i, uint64_t bits) { store_bits(data(), dtype_, i, bits); }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  int32_t dtype_ = TRI_DTYPE_F32;
  std::vector<int64_t> shape_;
  size_t count_ = 0;
  size_t alloc_ = 0;
  std::unique_ptr<void, Free> data_;
};

// "f32[4,8]", "i32[]" (a scalar shape) for messages.
std::string describe_shape(int32_t dtype, const std::vector<int64_t>& shape);

// The calling thread's last Tri error as a string.
std::string last_error();

// The first `max_lines` lines of a message, and a note of how many were left out: a backend's
// message can hold a whole LLVM module, which drowns a test report.
std::string first_lines(const std::string& message, int max_lines);

}  // namespace tri_tool
