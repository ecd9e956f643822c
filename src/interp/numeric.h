// Scalar semantics of Tri's types, written once for the reference interpreter: the bit patterns of
// every float format (f16, bf16, f32, f64, f8e4m3, f8e5m2, and tf32 for dot), correctly rounded
// conversions between them and the integers, and the integer rules of docs/ir.md (wrapping,
// shifts past the width, division by zero, umulhi).
//
// Values travel as uint64_t bit patterns in the low bits (an integer of width w is kept
// zero-extended; a float is its IEEE bits). Conversions go through long double: on x86-64 it has
// a 64-bit significand, so every value of every Tri type (and every 64-bit integer) is exact in
// it, and each conversion rounds exactly once.
//
// Decisions docs/ir.md leaves open, taken here:
//  - f8e4m3 is the "fn" variant (no inf; NaN is S.1111.111; max 448). A value past 448 (an inf
//    included) saturates to +-448, as NVIDIA's cvt.rn.satfinite does; NaN stays NaN.
//  - f8e5m2, f16, bf16, f32 and f64 are IEEE: rounding past the largest finite value gives inf
//    (or, with rtz, the largest finite value).
//  - A NaN converts to the sign-preserving canonical quiet NaN of the target (payload dropped).
//  - Integer division or remainder by zero gives 0.
#pragma once

#include <cfloat>
#include <cstdint>

#include "ir/types.h"

namespace tri::interp {

static_assert(LDBL_MANT_DIG >= 64, "conversions need a long double that holds every 64-bit integer");

enum class Round : uint8_t { NearestEven, TowardZero };

// The layout of a binary float format: exponent and mantissa widths, and whether it is the
// "finite" (fn) kind that has no inf and spends only the all-ones pattern on NaN.
struct FloatFormat {
  int exp_bits;
  int man_bits;
  bool fn;
};

constexpr FloatFormat kTf32{8, 10, false};

// The format of a float scalar (asserts on anything else).
FloatFormat float_format(ir::Scalar s);

// Exact value of the bits of a float format.
long double decode_float(uint64_t bits, FloatFormat f);
// `x` rounded once to the format, as bits. Overflow, NaN and inf follow the rules above.
uint64_t encode_float(long double x, FloatFormat f, Round r = Round::NearestEven);

inline long double decode_float(uint64_t bits, ir::Scalar s) { return decode_float(bits, float_format(s)); }
inline uint64_t encode_float(long double x, ir::Scalar s, Round r = Round::NearestEven) {
  return encode_float(x, float_format(s), r);
}

// f32 inputs of a tf32 dot: the value rounded to 10 mantissa bits (nearest even).
float round_to_tf32(float x);

// ---- integers of width w (1..64), kept zero-extended in uint64_t
inline uint64_t width_mask(int w) { return w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1; }
inline uint64_t trunc_bits(uint64_t v, int w) { return v & width_mask(w); }
inline int64_t sext_bits(uint64_t v, int w) {
  if (w >= 64) return static_cast<int64_t>(v);
  uint64_t sign = uint64_t(1) << (w - 1);
  v &= width_mask(w);
  return static_cast<int64_t>((v ^ sign) - sign);
}

// Integer value (signed or unsigned reading of w bits) to a float format, rounded to nearest even.
uint64_t int_to_float(uint64_t bits, int w, bool is_signed, FloatFormat f);
// Saturating float-to-integer (fptosi/fptoui): truncates toward zero, clamps to the type's range,
// NaN gives 0. Returns the w-bit pattern.
uint64_t float_to_int(long double x, int w, bool is_signed);

// The integer binary ops of docs/ir.md, by name, on w-bit patterns. `*div_by_zero` is set when a
// division or remainder had a zero divisor (the result is then 0).
enum class IntOp : uint8_t {
  Add, Sub, Mul, SDiv, UDiv, SRem, URem, CDiv, UMulHi, And, Or, Xor, Shl, LShr, AShr, SMin, SMax, UMin, UMax
};
uint64_t int_binary(IntOp op, uint64_t a, uint64_t b, int w, bool* div_by_zero);

// fmin/fmax of docs/ir.md. `propagate`: NaN if either is NaN (IEEE minimum/maximum); otherwise
// the non-NaN operand wins (minNum/maxNum). Both order -0.0 below +0.0.
template <class T>
T float_min(T a, T b, bool propagate) {
  if (a != a || b != b) {
    if (propagate) return a != a ? a : b;
    return a != a ? b : a;
  }
  if (a == b) return __builtin_signbit(a) ? a : b;  // -0.0 vs +0.0 (or equal values)
  return a < b ? a : b;
}
template <class T>
T float_max(T a, T b, bool propagate) {
  if (a != a || b != b) {
    if (propagate) return a != a ? a : b;
    return a != a ? b : a;
  }
  if (a == b) return __builtin_signbit(a) ? b : a;
  return a > b ? a : b;
}

}  // namespace tri::interp
