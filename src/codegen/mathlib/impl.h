/* Helpers shared by the math library's files (tri_mathlib.h): bit casts, exact sums and products
 * (double-double arithmetic), scaling by powers of two, and the internal kernels one file
 * provides to others. Everything here is static inline or declared with a __tri_k_ prefix. */
#ifndef TRI_MATHLIB_IMPL_H
#define TRI_MATHLIB_IMPL_H

#include <stdint.h>

#include "tri_mathlib.h"

#define FMA(a, b, c) __builtin_fma((a), (b), (c))
#define SQRT(a) __builtin_sqrt(a)
#define FMAF(a, b, c) __builtin_fmaf((a), (b), (c))
#define INF (__builtin_inf())
#define NAN_ (__builtin_nan(""))

typedef union {
  double f;
  uint64_t u;
} tri_d64;
typedef union {
  float f;
  uint32_t u;
} tri_f32;

static inline uint64_t asu64(double x) {
  tri_d64 v;
  v.f = x;
  return v.u;
}
static inline double asf64(uint64_t u) {
  tri_d64 v;
  v.u = u;
  return v.f;
}
static inline uint32_t asu32(float x) {
  tri_f32 v;
  v.f = x;
  return v.u;
}
static inline float asf32(uint32_t u) {
  tri_f32 v;
  v.u = u;
  return v.f;
}
static inline double fabs_(double x) { return asf64(asu64(x) & 0x7fffffffffffffffull); }
static inline double copysign_(double x, double s) {
  return asf64((asu64(x) & 0x7fffffffffffffffull) | (asu64(s) & 0x8000000000000000ull));
}
static inline int isnan_(double x) { return (asu64(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }
/* A signaling NaN (quiet bit clear): IEEE 754 quiets it in every operation, so the C99 cases
 * that ignore a NaN operand (pow(1, y), pow(x, 0), hypot(inf, y)) do not apply to it. */
static inline int issnan_(double x) {
  return isnan_(x) && !(asu64(x) & 0x0008000000000000ull);
}
static inline int issnanf_(float x) {
  return (asu32(x) & 0x7fffffffu) > 0x7f800000u && !(asu32(x) & 0x00400000u);
}
static inline int isinf_(double x) { return (asu64(x) & 0x7fffffffffffffffull) == 0x7ff0000000000000ull; }
static inline int isfinite_(double x) { return (asu64(x) & 0x7fffffffffffffffull) < 0x7ff0000000000000ull; }

/* 2^k for -1022 <= k <= 1023. */
static inline double pow2i(int k) { return asf64((uint64_t)(k + 1023) << 52); }
/* x * 2^k for any int k, rounded once where the result is subnormal only through the last step
 * (x with at most 53 bits: the intermediate products are exact). */
static inline double scale2(double x, int k) {
  if (k > 1023) {
    x *= 0x1p1023;
    k -= 1023;
    if (k > 1023) {
      x *= 0x1p1023;
      k -= 1023;
      if (k > 1023) k = 1023;
    }
  } else if (k < -1022) {
    /* Scale by 2^(-1022 + 53) first so the final multiply rounds only once. */
    x *= 0x1p-969;
    k += 969;
    if (k < -1022) {
      x *= 0x1p-969;
      k += 969;
      if (k < -1022) k = -1022;
    }
  }
  return x * pow2i(k);
}
/* Round to the nearest integer, ties to even, for |x| < 2^51 (the 1.5 * 2^52 trick: without
 * fast-math the compiler keeps (x + c) - c). */
static inline double rint_small(double x) {
  const double c = 0x1.8p52;
  return (x + c) - c;
}

/* x rounded toward zero to an integer (keeps the sign of zero). */
static inline double trunc_(double x) {
  uint64_t u = asu64(x);
  int e = (int)((u >> 52) & 0x7ff) - 1023;
  if (e >= 52) return x;
  if (e < 0) return asf64(u & 0x8000000000000000ull);
  return asf64(u & ~((1ull << (52 - e)) - 1));
}

/* f32 helpers for the functions with a native f32 path. */
static inline float fabsf_(float x) { return asf32(asu32(x) & 0x7fffffffu); }
static inline float copysignf_(float x, float s) { return asf32((asu32(x) & 0x7fffffffu) | (asu32(s) & 0x80000000u)); }
static inline int isfinitef_(float x) { return (asu32(x) & 0x7fffffffu) < 0x7f800000u; }
/* Round to nearest even for |x| < 2^22. */
static inline float rintf_small(float x) {
  const float c = 0x1.8p23f;
  return (x + c) - c;
}
/* 2^k for -126 <= k <= 127. */
static inline float pow2f(int k) { return asf32((uint32_t)(k + 127) << 23); }
/* x * 2^k for -252 <= k <= 254 (one rounding where the result is subnormal, from the last
 * multiply). */
static inline float scale2f(float x, int k) {
  if (k > 127) {
    x *= 0x1p127f;
    k -= 127;
  } else if (k < -126) {
    x *= 0x1p-102f;
    k += 102;
  }
  return x * pow2f(k);
}

/* Double-double: hi + lo with |lo| <= ulp(hi) / 2. */
typedef struct {
  double hi, lo;
} dd;
static inline dd dd_make(double hi, double lo) {
  dd r;
  r.hi = hi;
  r.lo = lo;
  return r;
}
/* a + b exactly, any order of magnitudes. */
static inline dd two_sum(double a, double b) {
  double s = a + b;
  double bb = s - a;
  double e = (a - (s - bb)) + (b - bb);
  return dd_make(s, e);
}
/* a + b exactly when |a| >= |b| (or a == 0). */
static inline dd fast_two_sum(double a, double b) {
  double s = a + b;
  return dd_make(s, b - (s - a));
}
static inline dd two_prod(double a, double b) {
  double p = a * b;
  return dd_make(p, FMA(a, b, -p));
}
static inline dd dd_add(dd a, dd b) {
  dd s = two_sum(a.hi, b.hi);
  dd t = two_sum(a.lo, b.lo);
  s.lo += t.hi;
  s = fast_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return fast_two_sum(s.hi, s.lo);
}
static inline dd dd_add_d(dd a, double b) {
  dd s = two_sum(a.hi, b);
  s.lo += a.lo;
  return fast_two_sum(s.hi, s.lo);
}
static inline dd dd_mul(dd a, dd b) {
  dd p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return fast_two_sum(p.hi, p.lo);
}
static inline dd dd_mul_d(dd a, double b) {
  dd p = two_prod(a.hi, b);
  p.lo = FMA(a.lo, b, p.lo);
  return fast_two_sum(p.hi, p.lo);
}
static inline dd dd_div(dd a, dd b) {
  double q = a.hi / b.hi;
  /* r = a - q * b */
  dd p = two_prod(q, b.hi);
  double r = ((a.hi - p.hi) - p.lo + a.lo - q * b.lo) / b.hi;
  return fast_two_sum(q, r);
}
static inline dd dd_neg(dd a) { return dd_make(-a.hi, -a.lo); }

/* Internal kernels (defined in the file named). */
/* exp_log.c: exp(hi + lo) for |lo| small against hi, including overflow to inf and underflow
 * to subnormals and 0; hi may be anything finite or infinite. */
double __tri_k_exp_dd(double hi, double lo);
/* exp_log.c: log(x) as a double-double for finite x > 0 (relative error about 2^-66). */
dd __tri_k_log_dd(double x);
/* trig.c: sin and cos of pi * x for finite x (exact argument reduction). */
double __tri_k_sinpi(double x);
double __tri_k_cospi(double x);
/* trig.c: the bits of 2/pi after the binary point, 32 a word, most significant first
 * (gen_tables.py recomputes and checks them). */
extern const uint32_t __tri_two_over_pi[40];

#endif
