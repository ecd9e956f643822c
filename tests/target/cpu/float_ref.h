// Independent references for the float formats, for the CPU backend's tests: small floats
// decoded by their definition and encoded by searching the nearest representable value (ties to
// the even code), which shares nothing with the bit-manipulation code under test.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/types.h"

namespace tri_test {

struct SmallFmt {
  int E, M, bias;
  bool ieee;  // all-ones exponent is inf/NaN; otherwise (f8e4m3) only S.1111.111 is NaN
  int width;
};

inline SmallFmt small_fmt(tri::ir::Scalar s) {
  switch (s) {
    case tri::ir::Scalar::F16: return {5, 10, 15, true, 16};
    case tri::ir::Scalar::BF16: return {8, 7, 127, true, 16};
    case tri::ir::Scalar::F8E5M2: return {5, 2, 15, true, 8};
    default: return {4, 3, 7, false, 8};
  }
}

inline bool ref_is_nan(tri::ir::Scalar s, uint32_t code) {
  SmallFmt f = small_fmt(s);
  uint32_t e = (code >> f.M) & ((1u << f.E) - 1), m = code & ((1u << f.M) - 1);
  if (f.ieee) return e == (1u << f.E) - 1 && m != 0;
  return e == (1u << f.E) - 1 && m == (1u << f.M) - 1;
}

inline long double ref_decode(tri::ir::Scalar s, uint32_t code) {
  SmallFmt f = small_fmt(s);
  uint32_t sign = (code >> (f.E + f.M)) & 1, e = (code >> f.M) & ((1u << f.E) - 1), m = code & ((1u << f.M) - 1);
  long double v;
  if (ref_is_nan(s, code)) return sign ? -(long double)NAN : (long double)NAN;
  if (f.ieee && e == (1u << f.E) - 1) v = INFINITY;
  else if (e == 0) v = std::ldexp((long double)m, 1 - f.bias - f.M);
  else v = std::ldexp((long double)(m + (1u << f.M)), int(e) - f.bias - f.M);
  return sign ? -v : v;
}

inline uint32_t ref_max_code(tri::ir::Scalar s) {
  SmallFmt f = small_fmt(s);
  return f.ieee ? (((1u << f.E) - 1) << f.M) - 1 : (1u << (f.width - 1)) - 2;
}

// Nearest representable value (ties to the even code), or toward zero; overflow gives inf for
// the IEEE-like formats and the largest finite value for f8e4m3 (and under rtz).
inline uint32_t ref_encode(tri::ir::Scalar s, long double x, bool rtz = false) {
  SmallFmt f = small_fmt(s);
  uint32_t sign = std::signbit(x) ? 1u << (f.width - 1) : 0;
  const uint32_t maxc = ref_max_code(s);
  const uint32_t inf = ((1u << f.E) - 1) << f.M;
  if (std::isnan(x)) return f.ieee ? sign | inf | (1u << (f.M - 1)) : sign | (maxc + 1);
  long double ax = std::fabs(x);
  if (std::isinf(ax)) return sign | (f.ieee ? inf : maxc);
  uint32_t lo = 0, hi = maxc;  // largest code with value <= ax
  while (lo < hi) {
    uint32_t mid = (lo + hi + 1) / 2;
    if (ref_decode(s, mid) <= ax) lo = mid; else hi = mid - 1;
  }
  long double vlo = ref_decode(s, lo);
  if (vlo == ax) return sign | lo;
  long double vhi = lo == maxc ? vlo + (vlo - ref_decode(s, maxc - 1)) : ref_decode(s, lo + 1);
  uint32_t c;
  if (rtz) {
    c = lo;
  } else {
    long double dl = ax - vlo, dh = vhi - ax;
    c = dl < dh ? lo : dh < dl ? lo + 1 : ((lo & 1) ? lo + 1 : lo);
  }
  if (c > maxc) c = f.ieee ? inf : maxc;
  return sign | c;
}

inline uint32_t bits_f32(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float f32_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint64_t bits_f64(double f) { uint64_t u; std::memcpy(&u, &f, 8); return u; }
inline double f64_bits(uint64_t u) { double f; std::memcpy(&f, &u, 8); return f; }

// Distance in units in the last place between two finite floats of one format.
inline int64_t ulp_dist_f32(float a, float b) {
  auto key = [](float x) { int32_t i = static_cast<int32_t>(bits_f32(x)); return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i); };
  int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}
inline int64_t ulp_dist_f64(double a, double b) {
  auto key = [](double x) {
    int64_t i = static_cast<int64_t>(bits_f64(x));
    return i < 0 ? (__int128)INT64_MIN - i : (__int128)i;
  };
  __int128 d = key(a) - key(b);
  if (d < 0) d = -d;
  return d > INT64_MAX ? INT64_MAX : int64_t(d);
}

}  // namespace tri_test
