/* Native f32 pow (f32 arithmetic, fma and integer bit manipulation only).
 *
 * x^y = 2^k p with e^(y log|x|) = p 2^k: log|x| as a pair of floats (relative error about 2^-34,
 * enough for y log|x| to be known to 2^-26 absolute wherever the result is neither 0 nor inf),
 * from |x| = 2^e (1 + f), s = f / (2 + f) as a pair and log1p(f) = 2s + (2/3)s^3 + s^5 R(s^2) with
 * the first two terms in pairs; the product y log|x| as a pair; its low part carried into exp.
 * The special cases follow C99 F.9.4.4 and are patched in after the general value. Exponents
 * 2, 3, 1, -1, 1/2 and -1/2 take short exact or nearly exact paths: after inlining with a constant
 * exponent (x^2 in a kernel) only those remain. */
#include "kernels_f32.h"

#define TWO3_HI 0x1.555556p-1f /* 2/3 */
#define TWO3_LO -0x1.555556p-26f
#define LN2F_L2 0x1.cf78p-40f /* ln2 - LN2F_S - LN2F_M */

/* log(x) = h + *l for finite x > 0 (subnormals too), |*l| <= ulp(h). */
static inline float log_pair(float x, float* l) {
  float ef;
  float f = log_reduce(x, &ef);
  float dl;
  float d = fast_two_sum_f(2.0f, f, &dl); /* 2 + f = d + dl */
  float rd = 1.0f / d;
  float sh = f * rd;
  float sl = (FMAF(-sh, d, f) - sh * dl) * rd; /* s = f / (2 + f) = sh + sl */
  float z = sh * sh;
  float zl = FMAF(sh, sh, -z);
  /* s^3 = c + cl */
  float c = z * sh;
  float cl = FMAF(z, sh, -c) + FMAF(zl, sh, 3.0f * z * sl);
  /* (2/3) s^3 + s^5 R(s^2) = s^3 (2/3 + z R(z)) = th + tl */
  float q = FMAF(z, POLYF(POWLOG_R, z), TWO3_LO);
  float th = c * TWO3_HI;
  float tl = FMAF(c, TWO3_HI, -th) + FMAF(c, q, cl * TWO3_HI);
  /* 2s + th + (2sl + tl) */
  float e1;
  float h1 = fast_two_sum_f(2.0f * sh, th, &e1);
  float l1 = e1 + FMAF(2.0f, sl, tl);
  /* + e ln2, e LN2F_S exact */
  float e2;
  float h2 = fast_two_sum_f(ef * LN2F_S, h1, &e2);
  float l2 = e2 + (l1 + FMAF(ef, LN2F_M, ef * LN2F_L2));
  return fast_two_sum_f(h2, l2, l);
}

float __tri_powf(float x, float y) {
  /* exact or nearly exact short paths for y in {2, 1, -1, 3, 1/2, -1/2}, behind one test of y's
   * bits (|y| in {1/2, 3/4, 1, 3/2, 2, 3}); folded away unless y is a constant among them */
  uint32_t ya = asu32(y) & 0x7fffffffu;
  if ((ya & 0x003fffffu) == 0 && ya - 0x3f000000u <= 0x01400000u) {
    if (y == 2.0f) return x * x;
    if (y == 1.0f) return x * 1.0f;
    if (y == -1.0f) return 1.0f / x;
    if (y == 3.0f) {
      float p = x * x;
      if (!(fabsf_(x) < 0x1p63f) || fabsf_(x) < 0x1p-60f) return p * x; /* x^2 overflows or is subnormal, inf, NaN */
      return FMAF(p, x, FMAF(x, x, -p) * x); /* x^2 = p + (fma residual), one rounding of size */
    }
    if (y == 0.5f) return x == -INFF ? INFF : sqrtf_(x) + 0.0f; /* pow(-0, 1/2) = +0 */
    if (y == -0.5f) return x == -INFF ? 0.0f : x == 0.0f ? INFF : 1.0f / sqrtf_(x);
  }

  const float inf = INFF;
  if (issnanf_(x) || issnanf_(y)) return x + y;
  if (y == 0.0f || x == 1.0f) return 1.0f;
  if (x != x || y != y) return x + y;
  float ax = fabsf_(x), ay = fabsf_(y);
  /* y's kind: odd integer, even integer (or |y| >= 2^24), not an integer */
  int yint, yodd;
  if (ay >= 0x1p24f) {
    yint = 1;
    yodd = 0;
  } else {
    int t = (int)ay;
    yint = (float)t == ay;
    yodd = yint & t;
  }
  float ll;
  float l = log_pair(ax, &ll);
  float ph = y * l;
  float pl = FMAF(y, l, -ph) + y * ll;
  /* past the thresholds the result is 0 or inf whatever the low part (which may be NaN) */
  int out = !(ph > -105.0f && ph < 90.0f);
  float phc = out ? (ph > 0.0f ? 90.0f : -105.0f) : ph;
  int k;
  float p = expf_core_lo(phc, out ? 0.0f : pl, &k);
  float r = ldexpf_(p, k);
  if (ay == inf) r = ax == 1.0f ? 1.0f : (ax > 1.0f) == (y > 0.0f) ? inf : 0.0f;
  else if (ax == 0.0f) r = y < 0.0f ? inf : 0.0f;
  else if (ax == inf) r = y > 0.0f ? inf : 0.0f;
  else if (x < 0.0f && !yint) r = NANF;
  if (x < 0.0f && yodd && ay != inf) r = -r;
  if (x == 0.0f && yodd) r = copysignf_(r, x); /* pow(-0, odd) keeps the sign */
  return r;
}
