/* pow: x^y = exp(y log x) with log x as a double-double (relative error about 2^-66, so y log x
 * is known to about 2^-60 absolute even where it nears the overflow threshold 709.8) and the
 * product's low part carried into exp (__tri_k_exp_dd). Special cases follow C99 F.9.4.4. The f32
 * version is native (f32 arithmetic only) with the same structure in pairs of floats. */
#include "impl.h"

/* 0: y is not an integer; 1: an even integer; 2: an odd integer (y finite). */
static int int_kind(double y) {
  double ay = fabs_(y);
  if (ay >= 0x1p53) return 1;
  if (trunc_(y) != y) return 0;
  double h = 0.5 * ay;
  return trunc_(h) == h ? 1 : 2;
}

double __tri_pow(double x, double y) {
  if (issnan_(x) || issnan_(y)) return x + y;
  if (y == 0.0) return 1.0;
  if (x == 1.0) return 1.0;
  if (isnan_(x) || isnan_(y)) return x + y;
  double ax = fabs_(x);
  if (isinf_(y)) {
    if (ax == 1.0) return 1.0;
    return (ax > 1.0) == (y > 0.0) ? INF : 0.0;
  }
  int yk = int_kind(y);
  if (x == 0.0) {
    if (y < 0.0) return yk == 2 ? copysign_(INF, x) : INF;
    return yk == 2 ? x : 0.0;
  }
  if (isinf_(x)) {
    if (x > 0.0) return y > 0.0 ? INF : 0.0;
    if (y > 0.0) return yk == 2 ? -INF : INF;
    return yk == 2 ? -0.0 : 0.0;
  }
  double sign = 1.0;
  if (x < 0.0) {
    if (yk == 0) return NAN_;
    if (yk == 2) sign = -1.0;
  }
  dd l = __tri_k_log_dd(ax);
  double th = y * l.hi;
  if (th > 1000.0) return sign * INF;
  if (th < -1100.0) return sign * 0.0;
  double tl = FMA(y, l.hi, -th) + y * l.lo;
  return sign * __tri_k_exp_dd(th, tl);
}
