/* Native f32 circular functions: sin cos tan asin acos atan atan2 (f32 arithmetic, fma and
 * integer bit manipulation only).
 *
 * sin, cos, tan: |x| = n pi/2 + r + rl. Below 2^17, Cody-Waite with pi/2 in three floats and
 * fma (the first step exact, the second's rounding error kept as rl). Above, Payne-Hanek in
 * integers: the 24-bit significand times 96 bits of 2/pi from __tri_two_over_pi (the bits before
 * them only add multiples of 4), n from the integer part and the fraction's top 64 bits turned
 * into r + rl; out of line, as it is rare. Both minimax kernels are evaluated and the quadrant
 * picks one; tan is their quotient.
 *
 * asin: x + x^3 P(x^2) up to 1/2, pi/2 - 2 asin(sqrt((1 - |x|) / 2)) above, with the same
 * polynomial; acos from the same pieces. atan: x + x^3 T(x^2) on [0, 1], pi/2 - atan(1/|x|)
 * above; atan2 through atan(min/max) and the octant. */
#include "kernels_f32.h"

#define INV_PIO2F 0x1.45f306p-1f
#define PIO2F_1 0x1.921fb6p+0f /* pi/2 = PIO2F_1 + PIO2F_2 + PIO2F_3 to about 2^-75 */
#define PIO2F_2 -0x1.777a5cp-25f
#define PIO2F_3 -0x1.ee59dap-50f
#define PIO2F_HI 0x1.921fb6p+0f
#define PIO2F_LO -0x1.777a5cp-25f
#define PIF_HI 0x1.921fb6p+1f
#define PIF_LO -0x1.777a5cp-24f

/* |x| = n pi/2 + r + rl for 0 <= ax < 2^17; returns n. ax - n PIO2F_1 is exact (both are
 * multiples of ulp(ax) or 2^-24 and close); n PIO2F_2 is split exactly and subtracted through a
 * two-sum, so r + rl keeps its relative accuracy near multiples of pi/2. */
static inline int rem_pio2f(float ax, float* r, float* rl) {
  int n;
  float nf = rint_f(ax * INV_PIO2F, &n);
  float r1 = FMAF(-nf, PIO2F_1, ax);
  float ph = nf * PIO2F_2;
  float pl = FMAF(nf, PIO2F_2, -ph);
  float se;
  float s = two_sum_f(r1, -ph, &se);
  *r = fast_two_sum_f(s, (se - pl) - nf * PIO2F_3, rl);
  return n;
}

/* Payne-Hanek for finite ax >= 2^17. */
static __attribute__((noinline)) int rem_pio2f_large(float ax, float* r, float* rl) {
  uint32_t u = asu32(ax);
  int e = (int)(u >> 23) - 150; /* ax = m 2^e, e >= -6 */
  uint32_t m = (u & 0x007fffffu) | 0x00800000u;
  /* 2/pi = (bits before j) + B 2^-(j + 96) + (less than 2^-(j + 96)); m 2^e times the first is
   * a multiple of 4 when e - j >= 2. */
  int j = e > 2 ? e - 2 : 0;
  int w = j >> 5, b = j & 31;
  uint32_t t0 = __tri_two_over_pi[w], t1 = __tri_two_over_pi[w + 1], t2 = __tri_two_over_pi[w + 2],
           t3 = __tri_two_over_pi[w + 3];
  uint32_t b0 = b ? (t0 << b) | (t1 >> (32 - b)) : t0;
  uint32_t b1 = b ? (t1 << b) | (t2 >> (32 - b)) : t1;
  uint32_t b2 = b ? (t2 << b) | (t3 >> (32 - b)) : t2;
  /* P = m B (120 bits) = p0 2^64 + lo; ax 2/pi = P 2^(d - 96) (mod 4), d = e - j in [-6, 2] */
  uint64_t q2 = (uint64_t)m * b2;
  uint64_t q1 = (uint64_t)m * b1 + (q2 >> 32);
  uint64_t p0 = (uint64_t)m * b0 + (q1 >> 32);
  uint64_t lo = (q1 << 32) | (q2 & 0xffffffffu);
  int s = 32 - (e - j); /* the binary point is at bit 64 + s of P */
  int n = (int)(p0 >> s) & 3;
  uint64_t frac = (lo >> s) | (p0 << (64 - s)); /* the fraction's top 64 bits */
  /* fraction >= 1/2: round n up and take fraction - 1 (the two's complement reading) */
  int64_t fs = (int64_t)frac;
  n += (int)(frac >> 63);
  uint64_t mag = fs < 0 ? (uint64_t)0 - (uint64_t)fs : (uint64_t)fs;
  if (mag == 0) {
    *r = 0.0f;
    *rl = 0.0f;
    return n & 3;
  }
  int lz = __builtin_clzll(mag);
  uint64_t nm = mag << lz;
  /* fraction = nm 2^(-64 - lz): its top 48 bits as two exact floats */
  float hi = (float)(uint32_t)(nm >> 40) * asf32((uint32_t)(127 - 24 - lz) << 23);
  float lo24 = (float)(uint32_t)((nm >> 16) & 0xffffffu) * asf32((uint32_t)(127 - 48 - lz) << 23);
  float rh = hi * PIO2F_HI;
  float rlo = FMAF(hi, PIO2F_HI, -rh) + FMAF(hi, PIO2F_LO, lo24 * PIO2F_HI);
  float sg = fs < 0 ? -1.0f : 1.0f;
  *r = sg * rh;
  *rl = sg * rlo;
  return n & 3;
}

/* sin (want_cos 0) or cos (1) of |x| = n pi/2 + r + rl. */
static inline float sincos_quadrant(float r, float rl, int n, int want_cos) {
  float s = sinf_poly(r, rl), c = cosf_poly(r, rl);
  int q = (n + want_cos) & 3;
  float v = (q & 1) ? c : s;
  return (q & 2) ? -v : v;
}

static inline int reduce_pio2f(float ax, float* r, float* rl) {
  if (ax < 0x1p17f) return rem_pio2f(ax, r, rl);
  return rem_pio2f_large(ax, r, rl);
}

static inline float flip_sign(float v, float x) { return asf32(asu32(v) ^ (asu32(x) & 0x80000000u)); }

float __tri_sinf(float x) {
  float ax = fabsf_(x);
  if (UNLIKELY(!(ax < INFF))) return x - x;
  float r, rl;
  int n = reduce_pio2f(ax, &r, &rl);
  return flip_sign(sincos_quadrant(r, rl, n, 0), x);
}

float __tri_cosf(float x) {
  float ax = fabsf_(x);
  if (UNLIKELY(!(ax < INFF))) return x - x;
  float r, rl;
  int n = reduce_pio2f(ax, &r, &rl);
  return sincos_quadrant(r, rl, n, 1);
}

float __tri_tanf(float x) {
  float ax = fabsf_(x);
  if (UNLIKELY(!(ax < INFF))) return x - x;
  float r, rl;
  int n = reduce_pio2f(ax, &r, &rl);
  float tl;
  float t = tanf_poly(r, rl, &tl);
  /* odd n: -1/(t + tl) = q (1 + rho + q tl) with q = -1/t and rho = 1 + q t (exact) */
  float q = -1.0f / t;
  float rho = FMAF(q, t, 1.0f);
  float v = (n & 1) ? FMAF(q, FMAF(q, tl, rho), q) : t + tl;
  return flip_sign(v, x);
}

/* asin(|x|) for |x| <= 1/2 is s + w, w = s z P(z), with s = |x|, z = x^2; above, pi/2 - 2 (s + w)
 * with z = (1 - |x|)/2, s = sqrt(z). Returns s (w in *w); *big says which. */
static inline float asin_core(float ax, float* w, int* big) {
  *big = ax > 0.5f;
  float z = *big ? 0.5f - 0.5f * ax : ax * ax; /* exact for ax >= 1/2 */
  float s = *big ? sqrtf_(z) : ax;
  *w = s * z * POLYF(ASIN_P, z);
  return s;
}

float __tri_asinf(float x) {
  float ax = fabsf_(x);
  int big;
  float w;
  float s = asin_core(ax, &w, &big);
  float e;
  float h = fast_two_sum_f(PIO2F_HI, -2.0f * s, &e); /* pi/2 - 2s as a pair: 2s <= 1 */
  float r = big ? h + (e + FMAF(-2.0f, w, PIO2F_LO)) : s + w;
  r = ax > 1.0f ? NANF : r; /* NaN flows through the arithmetic */
  return flip_sign(r, x);
}

float __tri_acosf(float x) {
  float ax = fabsf_(x);
  int big;
  float w;
  float s = asin_core(ax, &w, &big);
  int neg = x < 0.0f;
  /* small: pi/2 - asin(x); big: 2(s + w) for x > 0, pi - 2(s + w) for x < 0 */
  float ch = big ? (neg ? PIF_HI : 0.0f) : PIO2F_HI, cl = big ? (neg ? PIF_LO : 0.0f) : PIO2F_LO;
  float m = big ? (neg ? -2.0f : 2.0f) : (neg ? 1.0f : -1.0f);
  float e;
  float h = fast_two_sum_f(ch, m * s, &e); /* |ch| >= |m s| or ch = 0 */
  float r = h + (e + FMAF(m, w, cl));
  r = ax > 1.0f ? NANF : r; /* NaN flows through the arithmetic */
  return r;
}

/* atan(t) for 0 <= t <= 1. */
static inline float atan01(float t) {
  float z = t * t;
  return FMAF(t * z, POLYF(ATAN_T, z), t);
}

float __tri_atanf(float x) {
  float ax = fabsf_(x);
  int big = ax > 1.0f;
  float t = big ? 1.0f / ax : ax;
  /* t + tl = 1/ax; atan(t + tl) = atan(t) + tl / (1 + t^2) */
  float tl = big && ax < INFF ? FMAF(-t, ax, 1.0f) * t : 0.0f;
  float z = t * t;
  float w = t * z * POLYF(ATAN_T, z); /* atan(t) = t + w */
  float pl = FMAF(-tl, z, tl);
  float e;
  float h = fast_two_sum_f(PIO2F_HI, -t, &e);
  float r = big ? h + (e + (PIO2F_LO - (w + pl))) : t + w;
  return x != x ? x + x : flip_sign(r, x);
}

/* atan2(y, x) = +-(C + s atan(min/max)) with C in {0, pi/2, pi} and s = +-1 by octant. */
float __tri_atan2f(float y, float x) {
  if (x != x || y != y) return x + y;
  float ax = fabsf_(x), ay = fabsf_(y);
  float mx = fmaxf_(ax, ay), mn = fminf_(ax, ay);
  float t = mx == 0.0f ? 0.0f : mx == INFF ? (mn == INFF ? 1.0f : 0.0f) : mn / mx;
  float p = atan01(t);
  int steep = ay > ax, xneg = (asu32(x) >> 31) != 0;
  float ch = steep ? PIO2F_HI : xneg ? PIF_HI : 0.0f;
  float cl = steep ? PIO2F_LO : xneg ? PIF_LO : 0.0f;
  float sp = steep != xneg ? -p : p;
  float r = ch + (cl + sp);
  return flip_sign(r, y);
}
