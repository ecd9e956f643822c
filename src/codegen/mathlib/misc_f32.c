/* Native f32 cbrt hypot fmod round trunc copysign (f32 arithmetic, fma and integer bit
 * manipulation only).
 *
 * cbrt: a^(-1/3) estimated from the bits (the exponent divided by 3 in integer arithmetic),
 * refined by Newton steps r += r (1 - a r^3) / 3 (no division), then y = a r^2 corrected once with
 * the residual a - y^3 computed exactly (fma). hypot: both arguments scaled by one power of two
 * so that the larger is in [2, 4), sqrt(fma(a, a, b b)), scaled back with one rounding. fmod:
 * integer long division of the significands, 8 bits a step; exact. round and trunc: bit masks. */
#include "kernels_f32.h"

float __tri_cbrtf(float x) {
  float ax = fabsf_(x);
  if (UNLIKELY(!(ax < INFF) || ax == 0.0f)) return x + x; /* 0, inf, NaN */
  int sub = ax < 0x1p-126f;
  float a = sub ? ax * 0x1p24f : ax; /* cbrt(a) = 2^8 cbrt(ax) */
  float r = asf32(0x54a2fa8cu - asu32(a) / 3u);
  for (int i = 0; i < 3; ++i) {
    float e = FMAF(-(a * r), r * r, 1.0f);
    r = FMAF(r * 0x1.555556p-2f, e, r);
  }
  float y = (a * r) * r;
  float y2 = y * y, y2l = FMAF(y, y, -y2);
  float y3 = y2 * y, y3l = FMAF(y2, y, -y3) + y2l * y;
  float res = (a - y3) - y3l; /* a - y3 is exact: y3 is within a few ulps of a */
  y = FMAF(res, (r * r) * 0x1.555556p-2f, y);
  y = sub ? y * 0x1p-8f : y;
  return asf32(asu32(y) | (asu32(x) & 0x80000000u));
}

float __tri_hypotf(float x, float y) {
  float ax = fabsf_(x), ay = fabsf_(y);
  float a = fmaxf_(ax, ay), b = fminf_(ax, ay);
  uint32_t ea = asu32(a) & 0x7f800000u; /* a = m 2^E: ea = bits of 2^E */
  int sub = ea == 0;
  float s = sub ? 0x1p100f : asf32(0x7f800000u - ea); /* 2^(1 - E): a s in [2, 4) */
  float as = a * s, bs = b * s;
  float r = sqrtf_(FMAF(as, as, bs * bs));
  r = sub ? r * 0x1p-100f : (r * 0.5f) * asf32(ea);
  if (UNLIKELY(!(ax < INFF && ay < INFF))) /* inf even with a quiet NaN (C99 F.9.4.3), not with a signaling one */
    r = (ax == INFF || ay == INFF) && !issnanf_(x) && !issnanf_(y) ? INFF : x + y;
  return r;
}

float __tri_fmodf(float x, float y) {
  if (x != x || y != y) return x + y;
  float ax = fabsf_(x), ay = fabsf_(y);
  if (ax == INFF || ay == 0.0f) return NANF;
  if (ay == INFF || ax < ay) return x;
  uint32_t ux = asu32(ax), uy = asu32(ay);
  int ex = (int)(ux >> 23), ey = (int)(uy >> 23);
  uint32_t mx = ux & 0x007fffffu, my = uy & 0x007fffffu;
  /* significands with the top bit at 23; subnormals normalized */
  if (ex) mx |= 0x00800000u;
  else {
    int lz = __builtin_clz(mx) - 8;
    mx <<= lz;
    ex = 1 - lz;
  }
  if (ey) my |= 0x00800000u;
  else {
    int lz = __builtin_clz(my) - 8;
    my <<= lz;
    ey = 1 - lz;
  }
  /* ax = mx 2^(ex - 150), ay = my 2^(ey - 150), ex >= ey */
  int d = ex - ey;
  mx %= my;
  while (d > 0 && mx != 0) {
    int sh = d < 8 ? d : 8;
    mx = (mx << sh) % my;
    d -= sh;
  }
  if (mx == 0) return copysignf_(0.0f, x);
  int lz = __builtin_clz(mx) - 8;
  mx <<= lz;
  int e = ey - lz;
  float r = e >= 1 ? asf32(((uint32_t)e << 23) | (mx & 0x007fffffu))
                   : asf32(mx >> (1 - e)); /* subnormal: exact (a multiple of ulp(y)) */
  return copysignf_(r, x);
}

float __tri_truncf(float x) { return truncf_(x); }

float __tri_roundf(float x) {
  float ax = fabsf_(x);
  if (!(ax < 0x1p23f)) return x; /* integers, inf, NaN */
  float t = truncf_(ax);
  t += ax - t >= 0.5f ? 1.0f : 0.0f; /* ax - t is exact */
  return copysignf_(t, x);
}

float __tri_copysignf(float x, float y) { return copysignf_(x, y); }
