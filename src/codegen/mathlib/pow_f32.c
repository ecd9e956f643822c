/* Native f32 pow (f32 arithmetic, fma and integer bit manipulation only).
 *
 * x^y = 2^k p with e^(y log|x|) = p 2^k: log|x| as a pair of floats (log_pair: relative error
 * about 2^-34, enough for y log|x| to be known to 2^-26 absolute wherever the result is neither
 * 0 nor inf); the product y log|x| as a pair; its low part carried into exp.
 * The special cases follow C99 F.9.4.4 and are patched in after the general value. Exponents
 * 2, 3, 1, -1, 1/2 and -1/2 take short exact or nearly exact paths: after inlining with a constant
 * exponent (x^2 in a kernel) only those remain. */
#include "kernels_f32.h"

float __tri_powf(float x, float y) {
  /* exact or nearly exact short paths for y in {2, 1, -1, 3, 1/2, -1/2}, behind one test of y's
   * bits (|y| in {1/2, 3/4, 1, 3/2, 2, 3}); folded away unless y is a constant among them */
  uint32_t ya = asu32(y) & 0x7fffffffu;
  if (UNLIKELY((ya & 0x003fffffu) == 0 && ya - 0x3f000000u <= 0x01400000u)) {
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

  float ax = fabsf_(x), ay = fabsf_(y);
  /* y's kind: odd integer, even integer (or |y| >= 2^24), not an integer */
  int t = (int)fminf_(ay, 0x1p24f);
  int yint = ay >= 0x1p24f || (float)t == ay;
  int yodd = ay < 0x1p24f && yint && (t & 1);
  /* |x|^y for finite x != 0 and finite y */
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
  r = x < 0.0f ? (yint ? (yodd ? -r : r) : NANF) : r;
  /* the rest of C99 F.9.4.4, behind one test: x or y zero, infinite or NaN, or x = 1 */
  if (UNLIKELY(!(ax > 0.0f && ax < INFF && ay < INFF && ay > 0.0f) || x == 1.0f)) {
    const float inf = INFF;
    if (ay == inf) r = ax == 1.0f ? 1.0f : (ax > 1.0f) == (y > 0.0f) ? inf : 0.0f;
    else if (ax == 0.0f) r = y < 0.0f ? (yodd ? copysignf_(inf, x) : inf) : (yodd ? x : 0.0f);
    else if (ax == inf) r = y > 0.0f ? (x < 0.0f && yodd ? -inf : inf) : (x < 0.0f && yodd ? -0.0f : 0.0f);
    if (x != x || y != y) r = x + y;
    /* pow(1, y) and pow(x, 0) are 1 even for a quiet NaN, not for a signaling one */
    if ((y == 0.0f || x == 1.0f) && !issnanf_(x) && !issnanf_(y)) r = 1.0f;
  }
  return r;
}
