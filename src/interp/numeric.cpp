// Float formats, conversions and integer rules for the reference interpreter (see numeric.h).
// Every conversion is one exact step into long double and one rounding out of it, so the code
// reads as the definition of rounding rather than as bit tricks.
#include "interp/numeric.h"

#include <cassert>
#include <cmath>

namespace tri::interp {

using ir::Scalar;

FloatFormat float_format(Scalar s) {
  switch (s) {
    case Scalar::F16: return {5, 10, false};
    case Scalar::BF16: return {8, 7, false};
    case Scalar::F32: return {8, 23, false};
    case Scalar::F64: return {11, 52, false};
    case Scalar::F8E4M3: return {4, 3, true};
    case Scalar::F8E5M2: return {5, 2, false};
    default: break;
  }
  assert(!"float_format of a non-float type");
  return {8, 23, false};
}

namespace {

int bias_of(FloatFormat f) { return (1 << (f.exp_bits - 1)) - 1; }
uint64_t exp_all_ones(FloatFormat f) { return (uint64_t(1) << f.exp_bits) - 1; }
// The unbiased exponent of the largest finite value: fn formats use the all-ones exponent too.
int emax_of(FloatFormat f) { return static_cast<int>(exp_all_ones(f)) - bias_of(f) - (f.fn ? 0 : 1); }

long double max_finite(FloatFormat f) {
  // Largest significand as an integer of man_bits+1 bits: all ones, or all ones but the last
  // for fn formats (their all-ones pattern is NaN).
  uint64_t sig = (uint64_t(1) << (f.man_bits + 1)) - (f.fn ? 2 : 1);
  return std::ldexp(static_cast<long double>(sig), emax_of(f) - f.man_bits);
}

// Bits of a finite non-negative value that is exactly representable in the format.
uint64_t encode_exact(long double v, FloatFormat f) {
  if (v == 0) return 0;
  int emin = 1 - bias_of(f);
  if (v < std::ldexp(1.0L, emin)) return static_cast<uint64_t>(std::ldexp(v, f.man_bits - emin));
  int ex;
  std::frexp(v, &ex);
  int e = ex - 1;  // v in [2^e, 2^(e+1))
  uint64_t sig = static_cast<uint64_t>(std::ldexp(v, f.man_bits - e));
  uint64_t mant = sig - (uint64_t(1) << f.man_bits);
  return (static_cast<uint64_t>(e + bias_of(f)) << f.man_bits) | mant;
}

}  // namespace

long double decode_float(uint64_t bits, FloatFormat f) {
  const uint64_t man_mask = (uint64_t(1) << f.man_bits) - 1;
  const bool neg = (bits >> (f.exp_bits + f.man_bits)) & 1;
  const uint64_t ef = (bits >> f.man_bits) & exp_all_ones(f);
  const uint64_t mant = bits & man_mask;
  long double v;
  if (ef == exp_all_ones(f) && (!f.fn || mant == man_mask)) {
    v = (!f.fn && mant == 0) ? HUGE_VALL : NAN;
  } else if (ef == 0) {
    v = std::ldexp(static_cast<long double>(mant), 1 - bias_of(f) - f.man_bits);
  } else {
    v = std::ldexp(static_cast<long double>(mant | (man_mask + 1)),
                   static_cast<int>(ef) - bias_of(f) - f.man_bits);
  }
  return neg ? -v : v;
}

uint64_t encode_float(long double x, FloatFormat f, Round r) {
  const uint64_t sign = std::signbit(x) ? uint64_t(1) << (f.exp_bits + f.man_bits) : 0;
  const uint64_t inf_bits = exp_all_ones(f) << f.man_bits;
  if (std::isnan(x)) {
    // Canonical quiet NaN: fn formats have one NaN pattern (all ones); IEEE ones set the top
    // mantissa bit.
    uint64_t man = f.fn ? (uint64_t(1) << f.man_bits) - 1 : uint64_t(1) << (f.man_bits - 1);
    return sign | inf_bits | man;
  }
  const long double maxf = max_finite(f);
  const long double a = std::fabs(x);
  if (std::isinf(a)) return sign | (f.fn ? encode_exact(maxf, f) : inf_bits);
  if (a == 0) return sign;
  // The quantum (weight of the last mantissa bit) at a's binade, or at the subnormal binade.
  int ex;
  std::frexp(a, &ex);
  const int e = ex - 1;
  const int emin = 1 - bias_of(f);
  const int q_exp = (e > emin ? e : emin) - f.man_bits;
  const long double q = std::ldexp(a, -q_exp);  // exact: a power-of-two scaling
  long double n = std::floor(q);
  const long double rem = q - n;
  if (r == Round::NearestEven && (rem > 0.5L || (rem == 0.5L && std::fmod(n, 2.0L) != 0))) n += 1;
  const long double v = std::ldexp(n, q_exp);
  if (v > maxf) {
    // fn formats saturate; IEEE formats overflow to inf, or to the largest finite value when
    // rounding toward zero.
    if (f.fn || r == Round::TowardZero) return sign | encode_exact(maxf, f);
    return sign | inf_bits;
  }
  return sign | encode_exact(v, f);
}

float round_to_tf32(float x) {
  return static_cast<float>(decode_float(encode_float(x, kTf32), kTf32));
}

uint64_t int_to_float(uint64_t bits, int w, bool is_signed, FloatFormat f) {
  long double v = is_signed ? static_cast<long double>(sext_bits(bits, w))
                            : static_cast<long double>(trunc_bits(bits, w));
  return encode_float(v, f);
}

uint64_t float_to_int(long double x, int w, bool is_signed) {
  if (std::isnan(x)) return 0;
  const long double t = std::trunc(x);
  if (is_signed) {
    const long double lo = -std::ldexp(1.0L, w - 1);
    const long double hi = std::ldexp(1.0L, w - 1) - 1;
    if (t <= lo) return trunc_bits(static_cast<uint64_t>(static_cast<int64_t>(lo)), w);
    if (t >= hi) return trunc_bits(static_cast<uint64_t>(static_cast<int64_t>(hi)), w);
    return trunc_bits(static_cast<uint64_t>(static_cast<int64_t>(t)), w);
  }
  const long double hi = std::ldexp(1.0L, w) - 1;
  if (t <= 0) return 0;
  if (t >= hi) return width_mask(w);
  return static_cast<uint64_t>(t);
}

uint64_t int_binary(IntOp op, uint64_t a, uint64_t b, int w, bool* div_by_zero) {
  const uint64_t m = width_mask(w);
  a &= m;
  b &= m;
  const int64_t sa = sext_bits(a, w), sb = sext_bits(b, w);
  // Signed division by -1 is negation (which wraps INT_MIN to itself); C++ leaves INT_MIN / -1
  // undefined, so it never reaches the `/` below.
  auto sdiv = [&](int64_t x, int64_t y) -> uint64_t {
    if (y == 0) {
      *div_by_zero = true;
      return 0;
    }
    if (y == -1) return (0 - static_cast<uint64_t>(x)) & m;
    return static_cast<uint64_t>(x / y) & m;
  };
  switch (op) {
    case IntOp::Add: return (a + b) & m;
    case IntOp::Sub: return (a - b) & m;
    case IntOp::Mul: return (a * b) & m;
    case IntOp::SDiv: return sdiv(sa, sb);
    case IntOp::UDiv:
      if (b == 0) {
        *div_by_zero = true;
        return 0;
      }
      return a / b;
    case IntOp::SRem:
      if (sb == 0) {
        *div_by_zero = true;
        return 0;
      }
      if (sb == -1) return 0;
      return static_cast<uint64_t>(sa % sb) & m;
    case IntOp::URem:
      if (b == 0) {
        *div_by_zero = true;
        return 0;
      }
      return a % b;
    case IntOp::CDiv:
      return sdiv(sext_bits(a + b - 1, w), sb);
    case IntOp::UMulHi: {
      unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
      return static_cast<uint64_t>(p >> w) & m;
    }
    case IntOp::And: return a & b;
    case IntOp::Or: return a | b;
    case IntOp::Xor: return a ^ b;
    case IntOp::Shl: return b >= static_cast<uint64_t>(w) ? 0 : (a << b) & m;
    case IntOp::LShr: return b >= static_cast<uint64_t>(w) ? 0 : a >> b;
    case IntOp::AShr:
      if (b >= static_cast<uint64_t>(w)) return sa < 0 ? m : 0;
      return static_cast<uint64_t>(sa >> b) & m;
    case IntOp::SMin: return sa < sb ? a : b;
    case IntOp::SMax: return sa > sb ? a : b;
    case IntOp::UMin: return a < b ? a : b;
    case IntOp::UMax: return a > b ? a : b;
  }
  assert(!"unknown integer op");
  return 0;
}

}  // namespace tri::interp
