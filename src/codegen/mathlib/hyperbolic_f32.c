/* Native f32 hyperbolic functions and their inverses: sinh cosh tanh asinh acosh atanh (f32
 * arithmetic, fma and integer bit manipulation only).
 *
 * sinh and cosh of |x| = k ln2 + r: e^|x| / 2 and e^-|x| / 2 share the reduction, so
 * (2^(k-1) +- 2^(-k-1)) + 2^(k-1) expm1(r) +- 2^(-k-1) expm1(-r), the first sum exact for the k
 * where the second term matters; sinh below 1 is x + x^3 H(x^2). tanh below 0.55 is
 * x + x^3 T(x^2), above 1 - 2 / (e^(2|x|) + 1). asinh, acosh and atanh are log1p (log_core) of
 * arguments formed without cancellation, their rounding error carried along:
 * asinh(x) = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), acosh(x) = log1p(t + sqrt(t (t + 2))) with
 * t = x - 1, both log1p(|x| - 1) + ln2 past 2^12; atanh(x) = log1p(2|x| + 2x^2 / (1 - |x|)) / 2
 * below 1/2, log1p(2|x| / (1 - |x|)) / 2 above. */
#include "kernels_f32.h"

/* e^a / 2 +- e^-a / 2 for 0 <= a <= 89.5 (sign +1: cosh, -1: sinh). */
static inline float exp_pair(float a, float sign) {
  float r, rl;
  int k = reduce_ln2f(a, &r, &rl);
  float lp, lm;
  float hp = expm1f_poly(r, rl, &lp);
  float hm = expm1f_poly(-r, -rl, &lm);
  /* 2^(k-2) e^r - or + 2^(-k-2) e^-r, doubled at the end (k may be 129: 2^(k-1) overflows) */
  int kk = k > 40 ? 40 : k; /* past that e^-a is below 2^-80 of e^a */
  float tp = asf32((uint32_t)(127 + k - 2) << 23), tm = sign * asf32((uint32_t)(127 - kk - 2) << 23);
  float e;
  float s = two_sum_f(tp, tm, &e); /* exact when the second term matters */
  float rest = FMAF(tp, hp, FMAF(tp, lp, FMAF(tm, hm, FMAF(tm, lm, e))));
  return 2.0f * (s + rest);
}

float __tri_sinhf(float x) {
  float ax = fabsf_(x);
  float r;
  if (ax < 1.0f) {
    float z = x * x;
    r = FMAF(ax * z, POLYF(SINH_H, z), ax);
  } else {
    r = exp_pair(fminf_(ax, 89.5f), -1.0f);
  }
  return x != x ? x + x : asf32(asu32(r) | (asu32(x) & 0x80000000u));
}

float __tri_coshf(float x) {
  float ax = fabsf_(x);
  float r = exp_pair(fminf_(ax, 89.5f), 1.0f);
  return x != x ? x + x : r;
}

float __tri_tanhf(float x) {
  float ax = fabsf_(x);
  float r;
  if (ax < 0.55f) {
    float z = x * x;
    r = FMAF(ax * z, POLYF(TANH_T, z), ax);
  } else {
    /* 1 - 2 / (e^(2a) + 1); past 9.1 tanh rounds to 1 */
    int k;
    float p = expf_core(2.0f * fminf_(ax, 9.1f), &k);
    float e = ldexpf_normal(p, k);
    r = 1.0f - 2.0f / (e + 1.0f);
  }
  return x != x ? x + x : asf32(asu32(r) | (asu32(x) & 0x80000000u));
}

/* log1p(a + al) + extra ln2, a > -1 finite, |al| <= ulp(a). */
static inline float log1p_plus(float a, float al, float extra) {
  float c, ef;
  float f = log1p_args(a, al, &c, &ef);
  return log_core(f, c, ef + extra);
}

float __tri_asinhf(float x) {
  float ax = fabsf_(x);
  if (ax < 0x1p-12f) return x; /* asinh(x) = x - x^3/6 */
  /* log1p(a + a^2 / (1 + sqrt(1 + a^2))), past 2^12 log1p(a - 1) + ln2 (a^2 would overflow) */
  int huge = ax > 0x1p12f;
  float z = ax * ax;
  float al;
  float a = fast_two_sum_f(ax, huge ? -1.0f : z / (1.0f + sqrtf_(z + 1.0f)), &al);
  float r = log1p_plus(a, al, huge ? 1.0f : 0.0f);
  r = ax == INFF ? ax : r;
  return x != x ? x + x : asf32(asu32(r) | (asu32(x) & 0x80000000u));
}

float __tri_acoshf(float x) {
  /* log1p(t + sqrt(t (t + 2))) with t = x - 1 (exact below 2^24), past 2^12 log1p(t) + ln2 */
  int huge = x > 0x1p12f;
  float t = x - 1.0f;
  float al;
  float a = fast_two_sum_f(huge ? t : sqrtf_(FMAF(t, t, 2.0f * t)), huge ? 0.0f : t, &al);
  float r = log1p_plus(a, al, huge ? 1.0f : 0.0f);
  r = x == INFF ? x : r;
  r = x < 1.0f ? NANF : r;
  return x != x ? x + x : r;
}

float __tri_atanhf(float x) {
  float ax = fabsf_(x);
  if (ax < 0x1p-12f) return x; /* atanh(x) = x + x^3/3 */
  float d = 1.0f - ax; /* exact for ax >= 1/2 */
  int small = ax < 0.5f;
  float q = (small ? 2.0f * ax * ax : 2.0f * ax) / d;
  float al;
  float a = fast_two_sum_f(small ? 2.0f * ax : q, small ? q : 0.0f, &al);
  float r = 0.5f * log1p_plus(a, al, 0.0f);
  r = ax == 1.0f ? INFF : r;
  r = ax > 1.0f ? NANF : r;
  return x != x ? x + x : asf32(asu32(r) | (asu32(x) & 0x80000000u));
}
