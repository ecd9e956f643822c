#include "base/fp.h"

#include <cmath>
#include <cstring>

namespace tri::fp {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Decodes a small float with `ebits` exponent bits and `mbits` mantissa bits (IEEE layout,
// bias 2^(ebits-1)-1). `ieee_special`: the top exponent means inf/NaN (false for e4m3fn, where
// only all-ones is NaN).
float decode(uint32_t v, int ebits, int mbits, bool ieee_special) {
  uint32_t sign = v >> (ebits + mbits) & 1;
  uint32_t e = v >> mbits & ((1u << ebits) - 1);
  uint32_t m = v & ((1u << mbits) - 1);
  int bias = (1 << (ebits - 1)) - 1;
  float r;
  if (ieee_special && e == (1u << ebits) - 1) {
    r = m ? NAN : INFINITY;
  } else if (!ieee_special && e == (1u << ebits) - 1 && m == (1u << mbits) - 1) {
    r = NAN;
  } else if (e == 0) {
    r = std::ldexp(static_cast<float>(m), 1 - bias - mbits);
  } else {
    r = std::ldexp(static_cast<float>(m | (1u << mbits)), static_cast<int>(e) - bias - mbits);
  }
  return sign ? -r : r;
}

// Encodes with round to nearest even. Values past the largest finite one become inf (IEEE
// formats) or NaN (e4m3fn, which has no inf), as conversion with saturation off does.
uint32_t encode(float f, int ebits, int mbits, bool ieee_special) {
  uint32_t sign = bits_of(f) >> 31;
  uint32_t sign_bit = sign << (ebits + mbits);
  uint32_t exp_all = (1u << ebits) - 1;
  if (std::isnan(f)) return sign_bit | (exp_all << mbits) | ((1u << mbits) - 1);
  int bias = (1 << (ebits - 1)) - 1;
  float a = std::fabs(f);
  // Largest finite value.
  int emax = ieee_special ? static_cast<int>(exp_all) - 1 - bias : static_cast<int>(exp_all) - bias;
  uint32_t mmax = ieee_special ? (1u << mbits) - 1 : (1u << mbits) - 2;
  if (std::isinf(a)) return ieee_special ? sign_bit | (exp_all << mbits) : sign_bit | (exp_all << mbits) | ((1u << mbits) - 1);
  // Scale to an integer mantissa at the target's precision, then round to nearest even.
  int e;
  std::frexp(a, &e);  // a = frac * 2^e, frac in [0.5, 1)
  int exp_unbiased = e - 1;
  int emin = 1 - bias;
  int shift = (exp_unbiased < emin ? emin : exp_unbiased) - mbits;  // value of the last mantissa bit
  float scaled = std::ldexp(a, -shift);                              // exact: a power-of-two scaling
  float rounded = std::nearbyint(scaled);                            // ties to even (default mode)
  uint32_t q = static_cast<uint32_t>(rounded);
  int exp_field;
  if (q >> (mbits + 1)) {  // rounding carried into the next binade
    q >>= 1;
    ++shift;
  }
  if (q >> mbits) {
    exp_field = shift + mbits + bias;
    q &= (1u << mbits) - 1;
  } else {
    exp_field = 0;  // subnormal (or zero)
  }
  if (exp_field > emax + bias || (exp_field == emax + bias && q > mmax)) {
    return ieee_special ? sign_bit | (exp_all << mbits) : sign_bit | (exp_all << mbits) | ((1u << mbits) - 1);
  }
  return sign_bit | (static_cast<uint32_t>(exp_field) << mbits) | q;
}

}  // namespace

float f16_to_f32(uint16_t h) { return decode(h, 5, 10, true); }
uint16_t f32_to_f16(float f) { return static_cast<uint16_t>(encode(f, 5, 10, true)); }
float f8e4m3_to_f32(uint8_t v) { return decode(v, 4, 3, false); }
uint8_t f32_to_f8e4m3(float f) { return static_cast<uint8_t>(encode(f, 4, 3, false)); }
float f8e5m2_to_f32(uint8_t v) { return decode(v, 5, 2, true); }
uint8_t f32_to_f8e5m2(float f) { return static_cast<uint8_t>(encode(f, 5, 2, true)); }

float bf16_to_f32(uint16_t b) { return float_of(static_cast<uint32_t>(b) << 16); }

uint16_t f32_to_bf16(float f) {
  uint32_t u = bits_of(f);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);  // keep it a quiet NaN
  uint32_t lsb = (u >> 16) & 1;
  u += 0x7fff + lsb;  // round to nearest even; overflow rounds to inf as it should
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace tri::fp
