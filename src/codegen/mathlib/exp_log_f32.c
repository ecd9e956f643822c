/* Native f32 exponentials and logarithms: exp exp2 exp10 expm1 log log2 log10 log1p, from the
 * kernels of kernels_f32.h (f32 arithmetic and fma only).
 *
 * exp2 and exp10 reduce to the same e^r, |r| <= ln2/2: exp2 through x - rint(x) (exact) times
 * ln2 as a pair; exp10 through x - k log10(2) (exact with fma) times ln10 as a pair. expm1 adds
 * 2^k - 1 to 2^k expm1(r) as an exact two-sum, so the only rounding of size is the last. log2 and
 * log10 multiply log1p(f) by 1/ln2 or 1/ln10 with the product's low part kept, and add e (or
 * e log10(2)) as a pair; log1p reduces through u = 1 + a and carries u's rounding error. */
#include "kernels_f32.h"

static inline float clampf_(float x, float lo, float hi) { return x < lo ? lo : x > hi ? hi : x; } /* NaN passes */

/* exp of x outside (-87, 87) or NaN: results that overflow, underflow or are subnormal. */
static __attribute__((noinline)) float expf_edge(float x) {
  int k;
  float p = expf_core(clampf_(x, -104.0f, 89.0f), &k);
  return ldexpf_(p, k);
}

float __tri_expf(float x) {
  if (UNLIKELY(!(fabsf_(x) < 87.0f))) return expf_edge(x);
  /* the result is normal: 2^k goes into p's exponent field */
  float r, rl;
  int k = reduce_ln2f(x, &r, &rl);
  float p = 1.0f + FMAF(r * r, POLYF(EXPM1_Q, r), r + rl);
  return asf32(asu32(p) + ((uint32_t)k << 23));
}

float __tri_exp2f(float x) {
  float xc = clampf_(x, -152.0f, 129.0f);
  int k;
  float kf = rint_f(xc, &k);
  float t = xc - kf; /* exact */
  float r = t * LN2F_HI;
  float rl = FMAF(t, LN2F_HI, -r) + t * LN2F_LO;
  float l;
  float h = expm1f_poly(r, rl, &l);
  return ldexpf_(1.0f + (h + l), k);
}

#define LOG2_10F 0x1.a934f0p+1f
#define LG2F_HI 0x1.344136p-2f /* f32(log10(2)): x - k LG2F_HI is exact with fma */
#define LG2F_LO -0x1.ec10c0p-27f
#define LN10F_HI 0x1.26bb1cp+1f
#define LN10F_LO -0x1.12aabap-25f

/* 10^x = 2^k e^(r + rl) for |x| < 45.5 (NaN passes), the scaling by two multiplications when
 * `normal` is 0. */
static inline float exp10_core(float x, int normal) {
  int k;
  float kf = rint_f(x * LOG2_10F, &k);
  float s1 = FMAF(-kf, LG2F_HI, x); /* exact, |s1| <= log10(2)/2 */
  float sl;
  float s = two_sum_f(s1, -kf * LG2F_LO, &sl); /* x - k log10(2) = s + sl */
  float r = s * LN10F_HI;
  float rl = FMAF(s, LN10F_HI, -r) + FMAF(s, LN10F_LO, sl * LN10F_HI);
  float l;
  float h = expm1f_poly(r, rl, &l);
  float p = 1.0f + (h + l);
  return normal ? asf32(asu32(p) + ((uint32_t)k << 23)) : ldexpf_(p, k);
}

static __attribute__((noinline)) float exp10f_edge(float x) { return exp10_core(clampf_(x, -46.0f, 39.0f), 0); }

float __tri_exp10f(float x) {
  if (UNLIKELY(!(fabsf_(x) < 37.5f))) return exp10f_edge(x); /* overflow, underflow, subnormals, NaN */
  return exp10_core(x, 1);
}

/* expm1(x) = 2^k (1 + h + l) - 1: for -25 <= k <= 24, (2^k - 1) + 2^k h as an exact two-sum
 * (2^k - 1 is exact there) plus 2^k l; below, -1 + 2^k (1 + h + l); above, (1 + h + l - 2^-k)
 * scaled by 2^k. */
static __attribute__((noinline)) float expm1f_edge(float x) {
  float xc = clampf_(x, -18.0f, 88.8f);
  float r, rl;
  int k = reduce_ln2f(xc, &r, &rl);
  float l;
  float h = expm1f_poly(r, rl, &l);
  int big = k > 24, tiny = k < -24;
  float t = asf32((uint32_t)(127 + (big ? 0 : k)) << 23); /* 2^k, or 1 */
  float a = big ? 1.0f : tiny ? -1.0f : t - 1.0f;
  float c = t * l + (big ? -asf32((uint32_t)(127 - (k > 126 ? 126 : k)) << 23) : tiny ? t : 0.0f);
  float e;
  float s = two_sum_f(a, t * h, &e);
  float res = s + (e + c);
  return big ? ldexpf_(res, k) : res;
}

float __tri_expm1f(float x) {
  float ax = fabsf_(x);
  if (ax < 0x1p-25f) return x; /* expm1(x) = x + x^2/2: keeps -0 and subnormals */
  if (UNLIKELY(!(ax < 16.0f))) return expm1f_edge(x); /* |k| > 23, inf, NaN */
  float r, rl;
  int k = reduce_ln2f(x, &r, &rl);
  float l;
  float h = expm1f_poly(r, rl, &l);
  float t = asf32((uint32_t)(127 + k) << 23); /* 2^k */
  float e;
  float s = two_sum_f(t - 1.0f, t * h, &e); /* 2^k - 1 is exact */
  return s + (e + t * l);
}

/* NaN for x < 0 or NaN, -inf at 0, inf at inf (behind one test); r elsewhere. */
static inline float log_specials(float x, float r) {
  if (UNLIKELY(asu32(x) - 1u >= 0x7f7fffffu)) r = /* not in (0, inf) */ x == INFF ? x : x == 0.0f ? -INFF : x < 0.0f ? NANF : x + x;
  return r;
}

float __tri_logf(float x) {
  float ef;
  float f = log_reduce(x, &ef);
  return log_specials(x, log_core(f, -0.0f, ef));
}

#define INVLN2F_LO 0x1.4ae0c0p-26f
#define INVLN10F 0x1.bcb7b2p-2f
#define INVLN10F_LO -0x1.5b235ep-27f
#define LG2F_S 0x1.344p-2f     /* log10(2) to 11 bits: e LG2F_S is exact */
#define LG2F_M 0x1.3509f8p-18f /* log10(2) - LG2F_S */

/* log_b(x) = e B + log1p(f) / ln b for B = log_b(2), with e B = bh + bl (bh exact) and
 * 1 / ln b = ih + il. log1p(f) = f - f^2/2 + f^3 V(f): f ih, (f^2/2) ih and e bh are summed as
 * exact pairs so that only the small terms round before the last addition. */
static inline float log_base(float x, float bh, float bl, float ih, float il) {
  float ef;
  float f = log_reduce(x, &ef);
  float fsq = f * f, fsqe = FMAF(f, f, -fsq);
  float v = f * fsq * polyf(LOG_U + 1, 8, f); /* LOG_U[0] = -1/2 */
  float p = f * ih, pe = FMAF(f, ih, -p);
  float h2 = -0.5f * fsq; /* exact */
  float q = h2 * ih, qe = FMAF(h2, ih, -q);
  float tail = FMAF(FMAF(-0.5f, fsqe, v), ih, FMAF(f, il, ef * bl)) + (pe + qe);
  float e1, e2;
  float s1 = fast_two_sum_f(ef * bh, p, &e1); /* |ef bh| > |p| unless ef = 0 */
  float s2 = fast_two_sum_f(s1, q, &e2);      /* |q| <= f/2 |p| */
  return log_specials(x, s2 + ((e1 + e2) + tail));
}

float __tri_log2f(float x) { return log_base(x, 1.0f, 0.0f, INVLN2F, INVLN2F_LO); }

float __tri_log10f(float x) { return log_base(x, LG2F_S, LG2F_M, INVLN10F, INVLN10F_LO); }

float __tri_log1pf(float a) {
  if (fabsf_(a) < 0x1p-24f) return a; /* log1p(a) = a - a^2/2: keeps -0 and subnormals */
  float c, ef;
  float f = log1p_args(a, 0.0f, &c, &ef);
  float r = log_core(f, c, ef);
  if (UNLIKELY(!(a > -1.0f && a < INFF))) r = a == INFF ? a : a == -1.0f ? -INFF : a < -1.0f ? NANF : a + a;
  return r;
}
