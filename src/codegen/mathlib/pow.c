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

/* ---- native f32 pow: the same special cases; log x as a pair of floats (relative error about
 * 2^-36: s = f / (2 + f) and the 2s^3/3 term as pairs, the rest in float), y log x as a pair,
 * exp of the pair (__tri_k_expf). */

typedef struct {
  float hi, lo;
} ff;

static inline ff ff_make(float h, float l) {
  ff r;
  r.hi = h;
  r.lo = l;
  return r;
}
static inline ff ff_fast_two_sum(float a, float b) {
  float s = a + b;
  return ff_make(s, b - (s - a));
}
static inline ff ff_two_sum(float a, float b) {
  float s = a + b;
  float bb = s - a;
  return ff_make(s, (a - (s - bb)) + (b - bb));
}
static inline ff ff_add(ff a, ff b) {
  ff s = ff_two_sum(a.hi, b.hi);
  s.lo += a.lo + b.lo;
  return ff_fast_two_sum(s.hi, s.lo);
}
static inline ff ff_mul(ff a, ff b) {
  float p = a.hi * b.hi;
  float e = FMAF(a.hi, b.hi, -p);
  e += a.hi * b.lo + a.lo * b.hi;
  return ff_fast_two_sum(p, e);
}

#define LN2F_H 0x1.62e430p-1f
#define LN2F_L -0x1.05c610p-29f

/* log(x) as a pair for finite x > 0. */
static ff logf_ff(float x) {
  uint32_t u = asu32(x);
  int k = 0;
  if (u < 0x00800000u) { /* subnormal */
    x *= 0x1p25f;
    u = asu32(x);
    k = -25;
  }
  k += (int)(u >> 23) - 127;
  float m = asf32((u & 0x007fffffu) | 0x3f800000u);
  if (m > 0x1.6a09e6p+0f) {
    m *= 0.5f;
    k += 1;
  }
  float f = m - 1.0f; /* exact */
  ff lm = ff_make(0.0f, 0.0f);
  if (f != 0.0f) {
    float d = 2.0f + f;
    float dl = (2.0f - d) + f;
    float sh = f / d;
    float sl = (FMAF(-sh, d, f) - sh * dl) / d;
    ff s = ff_make(sh, sl);
    float z = sh * sh;
    ff s3 = ff_mul(ff_mul(s, s), s);
    ff t = ff_mul(s3, ff_make(0x1.555556p-1f, -0x1.555556p-26f)); /* 2/3 */
    float p = 2.0f / 13.0f;
    p = p * z + 2.0f / 11.0f;
    p = p * z + 2.0f / 9.0f;
    p = p * z + 2.0f / 7.0f;
    p = p * z + 2.0f / 5.0f;
    lm = ff_add(ff_make(2.0f * sh, 2.0f * sl), t);
    lm = ff_add(lm, ff_make(s3.hi * z * p, 0.0f));
  }
  if (k == 0) return lm;
  float kf = (float)k;
  float kh = kf * LN2F_H;
  ff kl = ff_make(kh, FMAF(kf, LN2F_H, -kh) + kf * LN2F_L);
  return ff_add(kl, lm);
}

static int int_kindf(float y) {
  float ay = fabsf_(y);
  if (ay >= 0x1p24f) return 1;
  float t = (float)trunc_(ay);
  if (t != ay) return 0;
  float h = 0.5f * t;
  return (float)trunc_(h) == h ? 1 : 2;
}

float __tri_powf(float x, float y) {
  const float inf = asf32(0x7f800000u);
  if (issnanf_(x) || issnanf_(y)) return x + y;
  if (y == 0.0f) return 1.0f;
  if (x == 1.0f) return 1.0f;
  if (x != x || y != y) return x + y;
  float ax = fabsf_(x);
  if (!isfinitef_(y)) {
    if (ax == 1.0f) return 1.0f;
    return (ax > 1.0f) == (y > 0.0f) ? inf : 0.0f;
  }
  int yk = int_kindf(y);
  if (x == 0.0f) {
    if (y < 0.0f) return yk == 2 ? copysignf_(inf, x) : inf;
    return yk == 2 ? x : 0.0f;
  }
  if (!isfinitef_(x)) {
    if (x > 0.0f) return y > 0.0f ? inf : 0.0f;
    if (y > 0.0f) return yk == 2 ? -inf : inf;
    return yk == 2 ? -0.0f : 0.0f;
  }
  float sign = 1.0f;
  if (x < 0.0f) {
    if (yk == 0) return NAN_;
    if (yk == 2) sign = -1.0f;
  }
  ff l = logf_ff(ax);
  float th = y * l.hi;
  if (th > 89.0f) return sign * inf;
  if (th < -104.0f) return sign * 0.0f;
  float tl = FMAF(y, l.hi, -th) + y * l.lo;
  return sign * __tri_k_expf(th, tl);
}
