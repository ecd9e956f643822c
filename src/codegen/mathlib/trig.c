/* Circular functions: sin cos tan asin acos atan atan2, and sin/cos of pi * x for tgamma.
 *
 * sin, cos, tan: reduction to r = x - n pi/2 with |r| <= pi/4 (about), carried as a
 * double-double. For |x| < 2^20, Cody-Waite with pi/2 in three pieces (the first two of 33 bits,
 * so n * piece is exact). Beyond, Payne-Hanek: the 53-bit significand times the 224 bits of 2/pi
 * that matter at its exponent (__tri_two_over_pi; gen_tables.py recomputes and checks it), giving
 * 2 integer bits (n mod 4) and 128 fraction bits, enough for the closest any double comes to a
 * multiple of pi/2 (about 2^-61 relative). Kernels: Taylor series of sin to x^19 and cos to x^20
 * on |r| <= pi/4 (truncation below 2^-60), with the low part of r added through the derivative;
 * tan = sin / cos with the quotient corrected by one fma.
 *
 * atan: |x| > 1 through pi/2 - atan(1/x); [0, 1] is split at tan((2i+1) pi/32) and reduced with
 * atan(x) = atan(c_i) + atan((x - c_i) / (1 + x c_i)), c_i = tan(i pi/16) rounded, atan(c_i) a
 * double-double constant, leaving |t| <= 0.0985 for an odd Taylor series to t^17. asin, acos and
 * atan2 are atan of a double-double quotient (asin x = atan(x / sqrt(1 - x^2)), 1 - x^2 exact). */
#include "impl.h"

#define PIO2_1 0x1.921fb54400000p+0
#define PIO2_2 0x1.0b4611a600000p-34
#define PIO2_3 0x1.3198a2e037073p-69
#define PIO2_H 0x1.921fb54442d18p+0
#define PIO2_L 0x1.1a62633145c07p-54
#define PI_H 0x1.921fb54442d18p+1
#define PI_L 0x1.1a62633145c07p-53
#define INV_PIO2 0x1.45f306dc9c883p-1

const uint32_t __tri_two_over_pi[40] = {
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041,
    0xfe5163ab, 0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c,
    0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484, 0xe99c7026, 0xb45f7e41,
    0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f,
    0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d,
    0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08,
    0x56033046, 0xfc7b6bab, 0xf0cfbc20, 0x9af4361d,
};

/* Bits [pos, pos + 64) of the little-endian 32-bit limbs p[0..n). */
static uint64_t bits64(const uint32_t* p, int n, int pos) {
  int w = pos >> 5, b = pos & 31;
  uint64_t l0 = w < n ? p[w] : 0, l1 = w + 1 < n ? p[w + 1] : 0, l2 = w + 2 < n ? p[w + 2] : 0;
  uint64_t v = (l0 >> b) | (l1 << (32 - b));
  if (b) v |= l2 << (64 - b);
  else v = l0 | (l1 << 32);
  return v;
}

/* Payne-Hanek for |x| >= 2^20 (rem_pio2). Kept out of line: it is rare, and large. */
static __attribute__((noinline)) int rem_pio2_large(double x, dd* r) {
  double ax = fabs_(x);
  uint64_t u = asu64(ax);
  int e = (int)(u >> 52) - 1023 - 52; /* ax = m 2^e, e >= -32 */
  uint64_t m = (u & 0x000fffffffffffffull) | 0x0010000000000000ull;
  /* Words before j0 contribute multiples of 4 to x * 2/pi: drop them. */
  int j0 = e >= 34 ? (e - 34) / 32 + 1 : 0;
  int sh = e - 32 * j0; /* -32 .. 33 */
  uint32_t w[7], p[9];
  for (int k = 0; k < 7; ++k) w[k] = __tri_two_over_pi[j0 + 6 - k]; /* little-endian */
  for (int k = 0; k < 9; ++k) p[k] = 0;
  uint32_t mh[2] = {(uint32_t)m, (uint32_t)(m >> 32)};
  for (int h = 0; h < 2; ++h) {
    uint64_t carry = 0;
    for (int k = 0; k < 7; ++k) {
      uint64_t t = (uint64_t)w[k] * mh[h] + p[k + h] + carry;
      p[k + h] = (uint32_t)t;
      carry = t >> 32;
    }
    p[7 + h] += (uint32_t)carry;
  }
  /* x * 2/pi = P 2^(sh - 224): the binary point is at bit B of P. */
  int B = 224 - sh;
  int n = (int)(bits64(p, 9, B) & 3);
  uint64_t fh = bits64(p, 9, B - 64), fl = bits64(p, 9, B - 128);
  int neg = 0;
  if (fh >> 63) { /* fraction >= 1/2: round n up, take 1 - fraction */
    n += 1;
    neg = 1;
    fl = ~fl + 1;
    fh = ~fh + (fl == 0);
  }
  int lz;
  if (fh == 0) {
    fh = fl;
    fl = 0;
    lz = 64 + (fh ? __builtin_clzll(fh) : 0);
    if (fh) fh <<= lz - 64;
  } else {
    lz = __builtin_clzll(fh);
    if (lz) {
      fh = (fh << lz) | (fl >> (64 - lz));
      fl <<= lz;
    }
  }
  /* fraction = (fh + fl 2^-64) 2^(-64 - lz) */
  double sc = asf64((uint64_t)(1023 - 64 - lz) << 52);
  double hd = (double)(fh & ~0x7ffull) * sc;
  double ld = ((double)(fh & 0x7ffull) + (double)fl * 0x1p-64) * sc;
  dd f = fast_two_sum(hd, ld);
  dd res = dd_mul(f, dd_make(PIO2_H, PIO2_L));
  if (neg) res = dd_neg(res);
  if (x < 0) {
    res = dd_neg(res);
    n = -n;
  }
  *r = res;
  return n & 3;
}

/* r = x - n pi/2 (|r| <= pi/4 + a little) as a double-double, for finite |x| > pi/4; returns
 * n mod 4. */
static inline int rem_pio2(double x, dd* r) {
  if (fabs_(x) >= 0x1p20) return rem_pio2_large(x, r);
  double n = rint_small(x * INV_PIO2);
  double t = x - n * PIO2_1; /* exact: n * PIO2_1 has at most 53 bits, and t is close to x's scale */
  dd s = two_sum(t, -(n * PIO2_2));
  s.lo -= n * PIO2_3;
  *r = fast_two_sum(s.hi, s.lo);
  return (int)n & 3;
}

/* sin(x + xl) for |x| <= pi/4 + a little. */
static double sin_k(double x, double xl) {
  double z = x * x;
  double p = -1.0 / 121645100408832000.0; /* -1/19! */
  p = p * z + 1.0 / 355687428096000.0;
  p = p * z - 1.0 / 1307674368000.0;
  p = p * z + 1.0 / 6227020800.0;
  p = p * z - 1.0 / 39916800.0;
  p = p * z + 1.0 / 362880.0;
  p = p * z - 1.0 / 5040.0;
  p = p * z + 1.0 / 120.0;
  p = p * z - 1.0 / 6.0;
  return x + (x * z * p + xl * (1.0 - 0.5 * z));
}

/* cos(x + xl) for |x| <= pi/4 + a little. */
static double cos_k(double x, double xl) {
  dd z = two_prod(x, x);
  double hz = 0.5 * z.hi;
  double w = 1.0 - hz;
  double zz = z.hi;
  double p = 1.0 / 2432902008176640000.0; /* 1/20! */
  p = p * zz - 1.0 / 6402373705728000.0;
  p = p * zz + 1.0 / 20922789888000.0;
  p = p * zz - 1.0 / 87178291200.0;
  p = p * zz + 1.0 / 479001600.0;
  p = p * zz - 1.0 / 3628800.0;
  p = p * zz + 1.0 / 40320.0;
  p = p * zz - 1.0 / 720.0;
  p = p * zz + 1.0 / 24.0;
  return w + (((1.0 - w) - hz) + (zz * zz * p - 0.5 * z.lo - x * xl));
}

/* a / b with the quotient's rounding corrected once (a, b carry about 1 ulp each). */
static inline double div_fix(double a, double b) {
  double q = a / b;
  return q + FMA(-q, b, a) / b;
}

double __tri_sin(double x) {
  if (!isfinite_(x)) return x - x;
  double ax = fabs_(x);
  if (ax < 0x1p-26) return x;
  if (ax <= 0x1.921fb54442d18p-1) return sin_k(x, 0.0);
  dd r;
  int n = rem_pio2(x, &r);
  switch (n) {
    case 0: return sin_k(r.hi, r.lo);
    case 1: return cos_k(r.hi, r.lo);
    case 2: return -sin_k(r.hi, r.lo);
    default: return -cos_k(r.hi, r.lo);
  }
}

double __tri_cos(double x) {
  if (!isfinite_(x)) return x - x;
  double ax = fabs_(x);
  if (ax < 0x1p-27) return 1.0;
  if (ax <= 0x1.921fb54442d18p-1) return cos_k(x, 0.0);
  dd r;
  int n = rem_pio2(x, &r);
  switch (n) {
    case 0: return cos_k(r.hi, r.lo);
    case 1: return -sin_k(r.hi, r.lo);
    case 2: return -cos_k(r.hi, r.lo);
    default: return sin_k(r.hi, r.lo);
  }
}

double __tri_tan(double x) {
  if (!isfinite_(x)) return x - x;
  double ax = fabs_(x);
  if (ax < 0x1p-27) return x;
  dd r = dd_make(x, 0.0);
  int n = 0;
  if (ax > 0x1.921fb54442d18p-1) n = rem_pio2(x, &r);
  double s = sin_k(r.hi, r.lo), c = cos_k(r.hi, r.lo);
  return (n & 1) ? -div_fix(c, s) : div_fix(s, c);
}

/* sin(pi x), cos(pi x) for finite x: x reduced exactly to r in [-1/4, 1/4] and quadrant q. */
static int reduce_pi(double x, dd* t) {
  double ax = fabs_(x);
  if (ax >= 0x1p52) { /* an integer: sin(pi x) = 0 (sign of x), cos = +-1 */
    *t = dd_make(0.0 * x, 0.0);
    return ax >= 0x1p53 ? 0 : (int)(asu64(ax) & 1) * 2;
  }
  if (ax >= 0x1p30) x -= 2.0 * trunc_(0.5 * x); /* exact; sin and cos have period 2 */
  double n = rint_small(2.0 * x); /* x = n/2 + r exactly */
  double r = x - 0.5 * n;
  dd p = two_prod(r, PI_H);
  p.lo = FMA(r, PI_L, p.lo);
  *t = fast_two_sum(p.hi, p.lo);
  return (int)((int64_t)n & 3);
}

double __tri_k_sinpi(double x) {
  dd t;
  int q = reduce_pi(x, &t);
  if (t.hi == 0.0 && (q & 1) == 0) return q ? -copysign_(0.0, x) : copysign_(0.0, x);
  switch (q) {
    case 0: return sin_k(t.hi, t.lo);
    case 1: return cos_k(t.hi, t.lo);
    case 2: return -sin_k(t.hi, t.lo);
    default: return -cos_k(t.hi, t.lo);
  }
}

double __tri_k_cospi(double x) {
  dd t;
  int q = reduce_pi(x, &t);
  switch (q) {
    case 0: return cos_k(t.hi, t.lo);
    case 1: return -sin_k(t.hi, t.lo);
    case 2: return -cos_k(t.hi, t.lo);
    default: return sin_k(t.hi, t.lo);
  }
}

/* atan(t) - t for |t| <= 0.0985: t^3 (-1/3 + t^2/5 - ... + t^16/17). */
static inline double atan_tail(double t) {
  double z = t * t;
  double p = 1.0 / 17.0;
  p = p * z - 1.0 / 15.0;
  p = p * z + 1.0 / 13.0;
  p = p * z - 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z - 1.0 / 7.0;
  p = p * z + 1.0 / 5.0;
  p = p * z - 1.0 / 3.0;
  return t * z * p;
}

static const double ATAN_C[4] = {0.0, 0x1.975f5e0553158p-3, 0x1.a827999fcef32p-2, 0x1.561b82ab7f990p-1};
static const double ATAN_AH[5] = {0.0, 0x1.921fb54442d18p-3, 0x1.921fb54442d18p-2, 0x1.2d97c7f3321d2p-1,
                                  0x1.921fb54442d18p-1};
static const double ATAN_AL[5] = {0.0, 0x1.f93470dfef04ap-58, 0x1.c398861b78b55p-59, -0x1.8f57cafebcf16p-58,
                                  0x1.1a62633145c07p-55};

/* atan(x) as a double-double for 0 <= x <= 1 (a double-double). */
static dd atan01(dd x) {
  int i = x.hi < 0x1.936bb8c5b2da2p-4   ? 0
          : x.hi < 0x1.36a08355c63dcp-2 ? 1
          : x.hi < 0x1.11ab7190834ecp-1 ? 2
          : x.hi < 0x1.a43002ae42850p-1 ? 3
                                        : 4;
  if (i == 0) return dd_add_d(x, atan_tail(x.hi));
  double c = i == 4 ? 1.0 : ATAN_C[i];
  dd num = dd_add_d(x, -c);
  dd den = dd_add_d(dd_mul_d(x, c), 1.0);
  dd t = dd_div(num, den);
  dd a = dd_add_d(t, atan_tail(t.hi));
  return dd_add(dd_make(ATAN_AH[i], ATAN_AL[i]), a);
}

/* atan(num / den) for num, den >= 0 double-doubles, not both 0, neither infinite. */
static dd atan_frac(dd num, dd den) {
  if (num.hi <= den.hi) {
    if (num.hi == 0.0) return dd_make(0.0, 0.0);
    double q = num.hi / den.hi;
    if (q < 0x1p-900) return dd_make(q, 0.0); /* no room for a low part; atan(q) = q */
    return atan01(dd_div(num, den));
  }
  double q = den.hi / num.hi;
  if (q < 0x1p-900) return fast_two_sum(PIO2_H, PIO2_L - q);
  dd a = atan01(dd_div(den, num));
  return dd_add(dd_make(PIO2_H, PIO2_L), dd_neg(a));
}

double __tri_atan(double x) {
  if (isnan_(x)) return x;
  double ax = fabs_(x);
  if (ax < 0x1p-27) return x;
  if (isinf_(x)) return copysign_(PIO2_H, x);
  dd a = atan_frac(dd_make(ax, 0.0), dd_make(1.0, 0.0));
  return copysign_(a.hi, x);
}

/* sqrt(1 - x^2) as a double-double for 0 <= x <= 1. */
static dd sqrt_one_minus_sq(double x) {
  dd p = two_prod(x, x);
  dd s = two_sum(1.0, -p.hi);
  s.lo -= p.lo;
  s = fast_two_sum(s.hi, s.lo);
  if (s.hi <= 0.0) return dd_make(0.0, 0.0);
  double h = SQRT(s.hi);
  double l = (FMA(-h, h, s.hi) + s.lo) / (2.0 * h);
  return fast_two_sum(h, l);
}

double __tri_asin(double x) {
  if (isnan_(x)) return x;
  double ax = fabs_(x);
  if (ax > 1.0) return NAN_;
  if (ax < 0x1p-27) return x;
  dd a = atan_frac(dd_make(ax, 0.0), sqrt_one_minus_sq(ax));
  return copysign_(a.hi, x);
}

double __tri_acos(double x) {
  if (isnan_(x)) return x;
  double ax = fabs_(x);
  if (ax > 1.0) return NAN_;
  if (x == 1.0) return 0.0;
  dd a = atan_frac(sqrt_one_minus_sq(ax), dd_make(ax, 0.0));
  if (x < 0) a = dd_add(dd_make(PI_H, PI_L), dd_neg(a));
  return a.hi;
}

double __tri_atan2(double y, double x) {
  if (isnan_(x) || isnan_(y)) return x + y;
  int xneg = (int)(asu64(x) >> 63); /* -0 counts as negative (C99 F.9.1.4) */
  double ay = fabs_(y), ax = fabs_(x);
  dd a;
  if (isinf_(ay) || isinf_(ax)) {
    if (isinf_(ay) && isinf_(ax)) a = dd_make(0x1.921fb54442d18p-1, 0x1.1a62633145c07p-55);
    else if (isinf_(ay)) a = dd_make(PIO2_H, PIO2_L);
    else a = dd_make(0.0, 0.0);
  } else if (ay == 0.0 && ax == 0.0) {
    a = dd_make(0.0, 0.0);
  } else {
    /* Scale both by the same power of 2 so the quotient's parts stay normal. */
    int ey = (int)(asu64(ay) >> 52), ex = (int)(asu64(ax) >> 52);
    int big = ey > ex ? ey : ex;
    if (big > 1023 + 500 || big < 1023 - 500) {
      int k = 1023 - big;
      ay = scale2(ay, k);
      ax = scale2(ax, k);
    }
    a = atan_frac(dd_make(ay, 0.0), dd_make(ax, 0.0));
  }
  if (xneg) a = dd_add(dd_make(PI_H, PI_L), dd_neg(a));
  return copysign_(a.hi, y);
}
