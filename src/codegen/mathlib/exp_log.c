/* Exponentials and logarithms: exp exp2 exp10 expm1 log log2 log10 log1p, and the kernels other
 * files build on (__tri_k_exp_dd, __tri_k_log_dd).
 *
 * exp: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite: k * LN2_C1 is exact and so is the
 * subtraction), exp(r) by its Taylor series to degree 13 (truncation below 2^-60 relative),
 * then scaled by 2^k. A low part carried with the argument (x = hi + lo) enters as
 * exp(r + lo) = exp(r) (1 + lo), which is what pow and exp10 need.
 *
 * log: x = 2^k m with m in (sqrt(1/2), sqrt(2)], f = m - 1 exactly, s = f / (2 + f) carried as a
 * double-double, log(m) = 2 atanh(s) = 2s + 2s^3/3 + s^5 (2/5 + 2/7 s^2 + ...): the first two
 * terms in double-double, the rest (below 2^-12 of the sum) in double, for a relative error
 * near 2^-66; log2 and log10 multiply that double-double by 1/ln2 or 1/ln10 before rounding. */
#include "impl.h"

#define LN2_C1 0x1.62e42fefa4000p-1 /* ln2 to 40 bits: k * LN2_C1 exact for |k| < 2^13 */
#define LN2_C2 -0x1.8432a1b0e2634p-43
#define LN2_H 0x1.62e42fefa39efp-1
#define LN2_L 0x1.abc9e3b39803fp-56
#define INVLN2_H 0x1.71547652b82fep+0
#define INVLN2_L 0x1.777d0ffda0d24p-56
#define INVLN10_H 0x1.bcb7b1526e50ep-2
#define INVLN10_L 0x1.95355baaafad3p-57
#define LN10_H 0x1.26bb1bbb55516p+1
#define LN10_L -0x1.f48ad494ea3e9p-53
#define SQRT2 0x1.6a09e667f3bcdp+0

/* expm1(r) - r for |r| <= 0.35: r^2 (1/2 + r/6 + ... + r^11/13!). */
static inline double expm1_tail(double r) {
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  return r * r * p;
}

/* exp(r + rl) for |r| <= 0.35, |rl| tiny. */
static inline double exp_small(double r, double rl) {
  double q = expm1_tail(r) + rl * (1.0 + r);
  return 1.0 + (r + q);
}

double __tri_k_exp_dd(double hi, double lo) {
  if (isnan_(hi)) return hi;
  if (hi > 710.0) return INF;
  if (hi < -746.0) return 0.0;
  double k = rint_small(hi * INVLN2_H);
  double r = hi - k * LN2_C1; /* exact */
  dd rr = two_sum(r, lo - k * LN2_C2);
  return scale2(exp_small(rr.hi, rr.lo), (int)k);
}

double __tri_exp(double x) { return __tri_k_exp_dd(x, 0.0); }

double __tri_exp2(double x) {
  if (isnan_(x)) return x;
  if (x > 1025.0) return INF;
  if (x < -1080.0) return 0.0;
  double k = rint_small(x);
  double r = x - k; /* exact */
  double th = r * LN2_H;
  double tl = FMA(r, LN2_H, -th) + r * LN2_L;
  return scale2(exp_small(th, tl), (int)k);
}

double __tri_exp10(double x) {
  if (isnan_(x)) return x;
  if (x > 310.0) return INF;
  if (x < -330.0) return 0.0;
  double th = x * LN10_H;
  double tl = FMA(x, LN10_H, -th) + x * LN10_L;
  return __tri_k_exp_dd(th, tl);
}

double __tri_expm1(double x) {
  if (isnan_(x)) return x;
  if (x > 710.0) return INF;
  if (x < -40.0) return -1.0; /* expm1(x) > -1 by less than ulp(1)/4 */
  if (x == 0.0) return x;     /* keeps -0 */
  double k = rint_small(x * INVLN2_H);
  dd rr = two_sum(x - k * LN2_C1, -k * LN2_C2);
  double r = rr.hi, rl = rr.lo;
  double q = expm1_tail(r) + rl * (1.0 + r); /* expm1(r + rl) = r + q */
  int ki = (int)k;
  if (ki == 0) return r + q;
  if (ki > 60) return scale2(1.0 + (r + q), ki); /* the -1 is below 2^-60 of the result */
  if (ki > 52) return scale2(1.0 + ((r + q) - pow2i(-ki)), ki);
  double t = pow2i(ki);
  if (ki < -53) return -1.0 + t * (1.0 + (r + q));
  /* 2^k - 1 (exact) + 2^k r + 2^k q */
  dd s = two_sum(t - 1.0, t * r);
  return s.hi + (s.lo + t * q);
}

/* log(1 + f) as a double-double for f in [sqrt(1/2) - 1, sqrt(2) - 1], f exact. */
static dd log1p_core(double f) {
  if (f == 0.0) return dd_make(0.0, 0.0);
  double d = 2.0 + f;
  double dl = (2.0 - d) + f; /* 2 + f = d + dl exactly */
  double sh = f / d;
  double sl = (FMA(-sh, d, f) - sh * dl) / d;
  dd s = dd_make(sh, sl);
  double z = sh * sh;
  dd s2 = two_prod(sh, sh);
  s2.lo += 2.0 * sh * sl;
  dd s3 = dd_mul(s2, s);
  dd t = dd_mul(s3, dd_make(0x1.5555555555555p-1, 0x1.5555555555555p-55)); /* 2/3 */
  double p = 2.0 / 27.0;
  p = p * z + 2.0 / 25.0;
  p = p * z + 2.0 / 23.0;
  p = p * z + 2.0 / 21.0;
  p = p * z + 2.0 / 19.0;
  p = p * z + 2.0 / 17.0;
  p = p * z + 2.0 / 15.0;
  p = p * z + 2.0 / 13.0;
  p = p * z + 2.0 / 11.0;
  p = p * z + 2.0 / 9.0;
  p = p * z + 2.0 / 7.0;
  p = p * z + 2.0 / 5.0;
  double tail = s3.hi * z * p;
  dd r = dd_add(dd_make(2.0 * sh, 2.0 * sl), t);
  return dd_add_d(r, tail);
}

static dd k_ln2(int k) { return fast_two_sum(k * LN2_C1, k * LN2_C2); }

dd __tri_k_log_dd(double x) {
  uint64_t u = asu64(x);
  int k = 0;
  if (u < 0x0010000000000000ull) { /* subnormal */
    x *= 0x1p54;
    u = asu64(x);
    k = -54;
  }
  k += (int)(u >> 52) - 1023;
  double m = asf64((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m > SQRT2) {
    m *= 0.5;
    k += 1;
  }
  dd l = log1p_core(m - 1.0);
  if (k == 0) return l;
  return dd_add(k_ln2(k), l);
}

/* NaN, -inf or a result fixed by C99 F.9.3 for x <= 0 or x = inf; 0 when x is finite > 0. */
static inline int log_special(double x, double* out) {
  if (isnan_(x)) {
    *out = x;
    return 1;
  }
  if (x == 0.0) {
    *out = -INF;
    return 1;
  }
  if (x < 0.0) {
    *out = NAN_;
    return 1;
  }
  if (isinf_(x)) {
    *out = x;
    return 1;
  }
  return 0;
}

double __tri_log(double x) {
  double s;
  if (log_special(x, &s)) return s;
  return __tri_k_log_dd(x).hi;
}

double __tri_log2(double x) {
  double s;
  if (log_special(x, &s)) return s;
  dd l = __tri_k_log_dd(x);
  return dd_mul(l, dd_make(INVLN2_H, INVLN2_L)).hi;
}

double __tri_log10(double x) {
  double s;
  if (log_special(x, &s)) return s;
  dd l = __tri_k_log_dd(x);
  return dd_mul(l, dd_make(INVLN10_H, INVLN10_L)).hi;
}

double __tri_log1p(double x) {
  if (isnan_(x)) return x;
  if (x == -1.0) return -INF;
  if (x < -1.0) return NAN_;
  if (isinf_(x)) return x;
  if (fabs_(x) < 0x1p-54) return x; /* log1p(x) = x - x^2/2: the second term is below ulp(x)/2 */
  if (x > -0.29 && x < 0.41) return log1p_core(x).hi;
  dd u = two_sum(1.0, x); /* 1 + x = u.hi + u.lo exactly */
  dd l = __tri_k_log_dd(u.hi);
  return (l.hi + (l.lo + u.lo / u.hi));
}
