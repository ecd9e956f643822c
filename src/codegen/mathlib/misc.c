/* Functions computed exactly: round (half away from zero), trunc, fmod, copysign; and the
 * correctly compensated cbrt and hypot. */
#include "impl.h"

double __tri_trunc(double x) { return trunc_(x); }

double __tri_round(double x) {
  double ax = fabs_(x);
  if (!(ax < 0x1p52)) return x; /* integers, inf, NaN */
  double t = trunc_(ax);
  if (ax - t >= 0.5) t += 1.0; /* ax - t is exact */
  return copysign_(t, x);
}

double __tri_copysign(double x, double y) { return copysign_(x, y); }

/* fmod: |x| mod |y| by integer long division on the significands, 11 bits per step, with the
 * sign of x; exact. */
double __tri_fmod(double x, double y) {
  if (isnan_(x) || isnan_(y)) return x + y;
  if (isinf_(x) || y == 0.0) return NAN_;
  if (isinf_(y)) return x;
  double ax = fabs_(x), ay = fabs_(y);
  if (ax < ay) return x;
  uint64_t ux = asu64(ax), uy = asu64(ay);
  int ex = (int)(ux >> 52), ey = (int)(uy >> 52);
  uint64_t mx, my;
  /* Subnormals: normalize the significand so its top bit is bit 52. */
  if (ex == 0) {
    mx = ux;
    int lz = __builtin_clzll(mx) - 11;
    mx <<= lz;
    ex = 1 - lz;
  } else {
    mx = (ux & 0x000fffffffffffffull) | 0x0010000000000000ull;
  }
  if (ey == 0) {
    my = uy;
    int lz = __builtin_clzll(my) - 11;
    my <<= lz;
    ey = 1 - lz;
  } else {
    my = (uy & 0x000fffffffffffffull) | 0x0010000000000000ull;
  }
  /* ax = mx 2^(ex - 1075), ay = my 2^(ey - 1075), ex >= ey. */
  int d = ex - ey;
  mx %= my;
  while (d > 0 && mx != 0) {
    int s = d < 11 ? d : 11;
    mx = (mx << s) % my;
    d -= s;
  }
  if (mx == 0) return copysign_(0.0, x);
  /* result = mx 2^(ey - 1075), mx < my < 2^53 */
  int lz = __builtin_clzll(mx) - 11;
  mx <<= lz;
  int e = ey - lz;
  double r;
  if (e >= 1) {
    r = asf64(((uint64_t)e << 52) | (mx & 0x000fffffffffffffull));
  } else {
    r = asf64(mx >> (1 - e)); /* subnormal: exact (the result is a multiple of ulp(y)) */
  }
  return copysign_(r, x);
}

/* cbrt: an estimate from the exponent and significand bits, four Halley steps (cubic
 * convergence from a guess within 40%), then one Newton step whose residual a - y^3 is
 * computed exactly with fma. */
double __tri_cbrt(double x) {
  if (!isfinite_(x) || x == 0.0) return x + x;
  double ax = fabs_(x);
  int adj = 0;
  if (ax < 0x1p-1022) {
    ax *= 0x1p54;
    adj = -18;
  }
  uint64_t u = asu64(ax);
  int e = (int)(u >> 52) - 1023;
  /* ax = m 2^(3q + r), m in [1, 2), r in {0, 1, 2} */
  int q = e >= 0 ? e / 3 : -((-e + 2) / 3);
  int r = e - 3 * q;
  double a = asf64((u & 0x000fffffffffffffull) | ((uint64_t)(1023 + r) << 52)); /* [1, 8) */
  double y = 1.0 + a * (0.4 - a * 0.025); /* rough cube root on [1, 8) */
  for (int i = 0; i < 4; ++i) {
    double y3 = y * y * y;
    y = y * (y3 + 2.0 * a) / (2.0 * y3 + a);
  }
  dd y2 = two_prod(y, y);
  dd y3 = two_prod(y2.hi, y);
  double res = (a - y3.hi) - (y3.lo + y2.lo * y); /* a - y^3, a - y3.hi exact near the root */
  y = y + res / (3.0 * y2.hi);
  return copysign_(scale2(y, q + adj), x);
}

/* hypot: scaled so the squares neither overflow nor underflow, the sum of squares as a
 * double-double, its square root corrected once. */
double __tri_hypot(double x, double y) {
  if (issnan_(x) || issnan_(y)) return x + y;
  if (isinf_(x) || isinf_(y)) return INF; /* even with a quiet NaN (C99 F.9.4.3) */
  if (isnan_(x) || isnan_(y)) return x + y;
  double ax = fabs_(x), ay = fabs_(y);
  if (ax < ay) {
    double t = ax;
    ax = ay;
    ay = t;
  }
  if (ay == 0.0) return ax;
  int k = 0;
  int ex = (int)(asu64(ax) >> 52) - 1023;
  if (ex - (int)(asu64(ay) >> 52) + 1023 > 60) return ax + ay;
  if (ex > 500) k = -600;
  else if (ex < -500) k = 600;
  ax = scale2(ax, k);
  ay = scale2(ay, k);
  dd a2 = two_prod(ax, ax), b2 = two_prod(ay, ay);
  dd s = dd_add(a2, b2);
  double h = SQRT(s.hi);
  h += (FMA(-h, h, s.hi) + s.lo) / (2.0 * h);
  return scale2(h, -k);
}
