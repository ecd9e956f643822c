/* Hyperbolic functions and their inverses, from expm1, exp, log1p and the double-double log.
 *
 * sinh(x) = (t + t / (t + 1)) / 2 with t = expm1(|x|) (no cancellation near 0); cosh from exp
 * (and from expm1 near 0); tanh(x) = t / (t + 2) with t = expm1(2|x|). Near the overflow
 * threshold exp(|x|) / 2 is computed as exp(|x| - ln2) so it does not overflow early.
 * asinh, acosh: log1p of an argument without cancellation below 2, log (double-double, the
 * square root's rounding corrected) above; atanh(x) = log1p(2x / (1 - x)) / 2. */
#include "impl.h"

#define LN2_H 0x1.62e42fefa39efp-1
#define LN2_L 0x1.abc9e3b39803fp-56

/* exp(a) / 2 for a >= 0 (no early overflow). */
static inline double half_exp(double a) {
  dd d = two_sum(a, -LN2_H);
  return __tri_k_exp_dd(d.hi, d.lo - LN2_L);
}

double __tri_sinh(double x) {
  if (!isfinite_(x)) return x;
  double ax = fabs_(x);
  if (ax < 0x1p-28) return x;
  double r;
  if (ax < 1.0) {
    double t = __tri_expm1(ax);
    r = 0.5 * (2.0 * t - t * t / (t + 1.0));
  } else if (ax < 22.0) {
    double t = __tri_expm1(ax);
    r = 0.5 * (t + t / (t + 1.0));
  } else {
    r = half_exp(ax);
  }
  return copysign_(r, x);
}

double __tri_cosh(double x) {
  if (isnan_(x)) return x;
  double ax = fabs_(x);
  if (isinf_(x)) return ax;
  if (ax < 0x1p-28) return 1.0;
  if (ax < 0.3465) {
    double t = __tri_expm1(ax);
    return 1.0 + t * t / (2.0 * (1.0 + t));
  }
  if (ax < 22.0) {
    double e = __tri_exp(ax);
    return 0.5 * e + 0.5 / e;
  }
  return half_exp(ax);
}

double __tri_tanh(double x) {
  if (isnan_(x)) return x;
  double ax = fabs_(x);
  double r;
  if (ax < 0x1p-28) return x;
  if (ax > 22.0) {
    r = 1.0;
  } else if (ax >= 1.0) {
    r = 1.0 - 2.0 / (__tri_expm1(2.0 * ax) + 2.0);
  } else {
    double t = __tri_expm1(-2.0 * ax);
    r = -t / (t + 2.0);
  }
  return copysign_(r, x);
}

double __tri_asinh(double x) {
  if (!isfinite_(x)) return x;
  double ax = fabs_(x);
  if (ax < 0x1p-28) return x;
  double r;
  if (ax > 0x1p28) {
    dd l = __tri_k_log_dd(ax);
    r = (l.hi + LN2_H) + (l.lo + LN2_L);
  } else if (ax >= 2.0) {
    /* log(ax + sqrt(ax^2 + 1)) with the argument as a double-double */
    dd s2 = dd_add_d(two_prod(ax, ax), 1.0);
    double h = SQRT(s2.hi);
    double hl = (FMA(-h, h, s2.hi) + s2.lo) / (2.0 * h);
    dd a = dd_add_d(fast_two_sum(h, hl), ax);
    dd l = __tri_k_log_dd(a.hi);
    r = l.hi + (l.lo + a.lo / a.hi);
  } else {
    double z = ax * ax;
    r = __tri_log1p(ax + z / (1.0 + SQRT(1.0 + z)));
  }
  return copysign_(r, x);
}

double __tri_acosh(double x) {
  if (isnan_(x)) return x;
  if (x < 1.0) return NAN_;
  if (isinf_(x)) return x;
  if (x > 0x1p28) {
    dd l = __tri_k_log_dd(x);
    return (l.hi + LN2_H) + (l.lo + LN2_L);
  }
  if (x >= 2.0) {
    dd s2 = dd_add_d(two_prod(x, x), -1.0);
    double h = SQRT(s2.hi);
    double hl = (FMA(-h, h, s2.hi) + s2.lo) / (2.0 * h);
    dd a = dd_add_d(fast_two_sum(h, hl), x);
    dd l = __tri_k_log_dd(a.hi);
    return l.hi + (l.lo + a.lo / a.hi);
  }
  double t = x - 1.0; /* exact */
  return __tri_log1p(t + SQRT(2.0 * t + t * t));
}

double __tri_atanh(double x) {
  if (isnan_(x)) return x;
  double ax = fabs_(x);
  if (ax > 1.0) return NAN_;
  if (ax == 1.0) return copysign_(INF, x);
  if (ax < 0x1p-28) return x;
  /* 2x / (1 - x) as a double-double (1 - x exact for x >= 1/2; else one rounding) */
  double d = 1.0 - ax;
  double dl = (1.0 - d) - ax;
  double q = 2.0 * ax / d;
  double ql = (FMA(-q, d, 2.0 * ax) - q * dl) / d;
  double l = __tri_log1p(q);
  /* log1p(q + ql) = log1p(q) + ql / (1 + q) */
  return copysign_(0.5 * (l + ql / (1.0 + q)), x);
}
