/* The building blocks of the math library's native f32 functions: f32 arithmetic, fma and
 * integer bit manipulation only (no f64), written branch-free where both sides are cheap so
 * that the GPU code is straight-line. Polynomials come from poly_f32.h (gen_f32.py).
 *
 * exp: x = k ln2 + r with |r| <= ln2/2, r + rl carrying x - k ln2 to about 2^-48 (the first
 * step, x - k f32(ln2), is exact with fma), expm1(r) = r + r^2 Q(r); the result is p 2^k with
 * p = 1 + expm1(r + rl) in [0.7, 1.42], scaled by two exact multiplications so that a subnormal
 * result is rounded once.
 *
 * log: x = 2^e (1 + f) with 1 + f in [2/3, 4/3) (so f = m - 1 is exact), log1p(f) = f + f^2 U(f),
 * and e ln2 added with e f32(ln2) split so the product is exact and its sum with f is carried as
 * a pair: one final rounding. A low part c of the argument (log(u + c), what log1p needs) enters
 * as c 2^-e / (1 + f). */
#ifndef TRI_MATHLIB_KERNELS_F32_H
#define TRI_MATHLIB_KERNELS_F32_H

#include "impl.h"
#include "poly_f32.h"

#define INFF (__builtin_inff())
/* Rare inputs (specials, results that overflow or are subnormal): their code is laid out after
 * the common path's. */
#define UNLIKELY(c) __builtin_expect(!!(c), 0)
#define NANF (__builtin_nanf(""))

/* Horner: c[0] + c[1] x + ... + c[n-1] x^(n-1), with fma. */
static inline float polyf(const float* c, int n, float x) {
  float p = c[n - 1];
  for (int i = n - 2; i >= 0; --i) p = FMAF(p, x, c[i]);
  return p;
}
#define POLYF(c, x) polyf((c), (int)(sizeof(c) / sizeof((c)[0])), (x))

static inline float fminf_(float a, float b) { return a < b ? a : b; }
static inline float fmaxf_(float a, float b) { return a > b ? a : b; }
static inline float sqrtf_(float x) { return __builtin_sqrtf(x); }

/* s + e = a + b exactly when |a| >= |b| or a == 0 (exponent of a at least b's). */
static inline float fast_two_sum_f(float a, float b, float* e) {
  float s = a + b;
  *e = b - (s - a);
  return s;
}
/* s + e = a + b exactly, any magnitudes. */
static inline float two_sum_f(float a, float b, float* e) {
  float s = a + b;
  float bb = s - a;
  *e = (a - (s - bb)) + (b - bb);
  return s;
}

/* x rounded toward zero to an integer (bit masks; keeps the sign of zero). */
static inline float truncf_(float x) {
  uint32_t u = asu32(x);
  int e = (int)((u >> 23) & 0xffu) - 127;
  if (e >= 23) return x; /* integers, inf, NaN */
  if (e < 0) return asf32(u & 0x80000000u);
  return asf32(u & ~(0x007fffffu >> e));
}

/* Nearest integer to x as a float and an int, |x| < 2^22 (1.5 2^23 added and taken away). */
static inline float rint_f(float x, int* k) {
  float t = x + 0x1.8p23f;
  *k = (int)(asu32(t) - asu32(0x1.8p23f));
  return t - 0x1.8p23f;
}

/* x 2^k for -252 <= k <= 254, rounded once (2^k as two exact factors). */
static inline float ldexpf_(float x, int k) {
  int k1 = k >> 1, k2 = k - k1;
  return (x * asf32((uint32_t)(k1 + 127) << 23)) * asf32((uint32_t)(k2 + 127) << 23);
}
/* x 2^k when the result and 2^k are normal: one multiplication. */
static inline float ldexpf_normal(float x, int k) { return x * asf32((uint32_t)(k + 127) << 23); }

/* ---- exp */

#define LN2F_HI 0x1.62e430p-1f /* f32(ln2): x - k LN2F_HI is exact with fma for |k| <= 2^8 */
#define LN2F_LO -0x1.05c610p-29f
#define INVLN2F 0x1.715476p+0f

/* r + rl = x - k ln2 with |r| <= ln2/2 (a little more) and |rl| <= ulp(r), for |x| < 2^22;
 * returns k. */
static inline int reduce_ln2f(float x, float* r, float* rl) {
  int k;
  float kf = rint_f(x * INVLN2F, &k);
  float r1 = FMAF(-kf, LN2F_HI, x); /* exact */
  float r2 = FMAF(-kf, LN2F_LO, r1);
  *rl = FMAF(-kf, LN2F_LO, r1 - r2); /* r1 - r2 is exact */
  *r = r2;
  return k;
}
/* The same for x + xl, |xl| <= ulp(x): the low part joins r through an exact two-sum. */
static inline int reduce_ln2f_lo(float x, float xl, float* r, float* rl) {
  float r2, e2;
  int k = reduce_ln2f(x, &r2, &e2);
  float e;
  *r = two_sum_f(r2, xl, &e);
  *rl = e + e2;
  return k;
}

/* expm1(r + rl) as h + l (|l| small against h), |r| <= ln2/2, |rl| <= ulp(r). */
static inline float expm1f_poly(float r, float rl, float* l) {
  float q = POLYF(EXPM1_Q, r);
  float z = r * r;
  *l = FMAF(z, q, FMAF(FMAF(r, r, -z), q, rl)); /* r^2 = z + its residual */
  return r;
}

/* exp(x) = p 2^k with p in about [0.7, 1.42], for -104 <= x <= 89 (NaN gives NaN). */
static inline float expf_core(float x, int* k) {
  float r, rl;
  *k = reduce_ln2f(x, &r, &rl);
  float l;
  float h = expm1f_poly(r, rl, &l);
  return 1.0f + (h + l);
}
/* exp(x + xl), |xl| <= ulp(x). */
static inline float expf_core_lo(float x, float xl, int* k) {
  float r, rl;
  *k = reduce_ln2f_lo(x, xl, &r, &rl);
  float l;
  float h = expm1f_poly(r, rl, &l);
  return 1.0f + (h + l);
}

/* exp(x) within 2^-23 relative for -87 <= x <= 88 (normal results): no low parts, the scaling
 * added to the exponent. For uses whose result is not much affected (erf's 1 - exp). */
static inline float expf_fast(float x) {
  int k;
  float kf = rint_f(x * INVLN2F, &k);
  float r = FMAF(-kf, LN2F_LO, FMAF(-kf, LN2F_HI, x));
  float p = 1.0f + FMAF(r * r, POLYF(EXPM1_Q, r), r);
  return asf32(asu32(p) + ((uint32_t)k << 23));
}

/* ---- log */

#define LN2F_S 0x1.62ep-1f      /* ln2 to 12 bits: e LN2F_S is exact */
#define LN2F_M 0x1.0bfbe8p-15f  /* ln2 - LN2F_S */

/* u = 2^e (1 + f) for finite u > 0 (subnormals too): returns f, exact, in [sqrt(1/2) - 1,
 * sqrt(2) - 1); *ef = e. (Splitting at sqrt(2) rather than 4/3 keeps e ln2 + log1p(f) free of
 * cancellation: where e = 1, log1p(f) >= -ln2/2.) */
static inline float log_reduce(float u, float* ef) {
  int sub = u < 0x1p-126f;
  uint32_t b = asu32(sub ? u * 0x1p23f : u);
  int32_t ix = (int32_t)(b - 0x3f3504f3u); /* sqrt(1/2) */
  int32_t e = ix >> 23;
  float m = asf32(b - ((uint32_t)e << 23));
  *ef = (float)(e - (sub ? 23 : 0));
  return m - 1.0f;
}

/* e ln2 + log1p(f) + ct for f from log_reduce (exact), |ct| <= 2^-23 or so (a low part c of the
 * argument enters as ct = c / (1 + f), log1p_args'), e an integer. Pass ct = -0.0f for none: the
 * additions of -0 fold away. */
static inline float log_core(float f, float ct, float ef) {
  float t = f * f;
  float tail = FMAF(t, POLYF(LOG_U, f), FMAF(ef, LN2F_M, ct));
  float e;
  float s = fast_two_sum_f(ef * LN2F_S, f, &e);
  return s + (e + tail);
}

/* log1p(a + al) for a > -1, |al| <= ulp(a) (log_core's arguments, *ct its low term): a small
 * directly, else through u = 1 + a and its rounding error. */
static inline float log1p_args(float a, float al, float* ct, float* ef) {
  float hi = fmaxf_(a, 1.0f), lo = fminf_(a, 1.0f);
  float err;
  float u = fast_two_sum_f(hi, lo, &err);
  float e;
  float f = log_reduce(u, &e);
  int small = a >= -0x1.2bec34p-2f && a <= 0x1.a8279ap-2f; /* [sqrt(1/2) - 1, sqrt(2) - 1] */
  /* (err + al) 2^-e, exact: err + al is tiny against u (past e = 126, a >= 2^126, it no longer
   * matters and 2^-126 stands in for 2^-e) */
  int ie = (int)e > 126 ? 126 : (int)e;
  float c = small ? al : (err + al) * asf32((uint32_t)(127 - ie) << 23);
  f = small ? a : f;
  *ef = small ? 0.0f : e;
  *ct = c * FMAF(f, f - 1.0f, 1.0f); /* c / (1 + f), the quotient to second order */
  return f;
}

#define TWO3_HI 0x1.555556p-1f /* 2/3 */
#define TWO3_LO -0x1.555556p-26f
#define LN2F_L2 0x1.cf78p-40f /* ln2 - LN2F_S - LN2F_M */

/* log(x + c) = h + *l for finite x > 0 (subnormals too) and |c| <= ulp(x) (has_c 0: c = 0), |*l| <= ulp(h), relative
 * error about 2^-34: x = 2^e (1 + f), s = f / (2 + f) as a pair, log1p(f) = 2s + (2/3)s^3 +
 * s^5 R(s^2) with the first two terms in pairs, e ln2 added as a pair, c entering as
 * c 2^-e / (1 + f). */
static inline float log_pair_c(float x, float c, int has_c, float* l) {
  float ef;
  float f = log_reduce(x, &ef);
  int ie = (int)ef > 126 ? 126 : (int)ef < -126 ? -126 : (int)ef;
  float cm = has_c ? c * asf32((uint32_t)(127 - ie) << 23) * FMAF(f, f - 1.0f, 1.0f) : -0.0f;
  float dl;
  float d = fast_two_sum_f(2.0f, f, &dl); /* 2 + f = d + dl */
  float rd = 1.0f / d;
  float sh = f * rd;
  float sl = (FMAF(-sh, d, f) - sh * dl) * rd; /* s = f / (2 + f) = sh + sl */
  float z = sh * sh;
  float zl = FMAF(sh, sh, -z);
  /* s^3 = c3 + c3l */
  float c3 = z * sh;
  float c3l = FMAF(z, sh, -c3) + FMAF(zl, sh, 3.0f * z * sl);
  /* (2/3) s^3 + s^5 R(s^2) = s^3 (2/3 + z R(z)) = th + tl */
  float q = FMAF(z, POLYF(POWLOG_R, z), TWO3_LO);
  float th = c3 * TWO3_HI;
  float tl = FMAF(c3, TWO3_HI, -th) + FMAF(c3, q, c3l * TWO3_HI);
  /* 2s + th + (2sl + tl) */
  float e1;
  float h1 = fast_two_sum_f(2.0f * sh, th, &e1);
  float l1 = e1 + (FMAF(2.0f, sl, tl) + cm);
  /* + e ln2, e LN2F_S exact */
  float e2;
  float h2 = fast_two_sum_f(ef * LN2F_S, h1, &e2);
  float l2 = e2 + (l1 + FMAF(ef, LN2F_M, ef * LN2F_L2));
  return fast_two_sum_f(h2, l2, l);
}
static inline float log_pair(float x, float* l) { return log_pair_c(x, -0.0f, 0, l); }

/* ---- sin and cos of |r| <= pi/4 + a little, with rl a low part of the argument */

static inline float sinf_poly(float r, float rl) {
  float z = r * r;
  return r + FMAF(r * z, POLYF(SIN_S, z), rl);
}
static inline float cosf_poly(float r, float rl) {
  float z = r * r;
  float ze = FMAF(r, r, -z);
  float e;
  float h = fast_two_sum_f(1.0f, -0.5f * z, &e); /* 1 - z/2 as a pair */
  return h + (FMAF(z * z, POLYF(COS_C, z), FMAF(-0.5f, ze, e)) - r * rl);
}
/* tan(r + rl) as h + *l. */
static inline float tanf_poly(float r, float rl, float* l) {
  float z = r * r;
  return fast_two_sum_f(r, FMAF(r * z, POLYF(TAN_T, z), rl * FMAF(r, r, 1.0f)), l);
}

#endif
