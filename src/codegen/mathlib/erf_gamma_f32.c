/* Native f32 error and gamma functions: erf erfc lgamma tgamma (f32 arithmetic, fma and integer
 * bit manipulation only).
 *
 * erf(x) = x (C0 + E(x^2)) for |x| < 3/4; 1 - exp(G(|x| - 3/2)) for 3/4 <= |x| <= 3.92, G a fit
 * of log(erfc) (its error matters in proportion to erfc, small there); 1 beyond (with x's sign).
 * erfc(x) = 1 - x C0 - x E(x^2) for |x| < 3/4, the first difference carried as a pair;
 * exp(-x^2) P(t) / (x + 2) for x >= 3/4 with t = (x - 2) / (x + 2) (after Shepherd and
 * Laframboise: (x + 2) exp(x^2) erfc(x) is smooth in t up to x = inf), x^2 carried as a pair into
 * exp and exp's result kept as a pair for the last product; 2 - erfc(-x) for x <= -3/4.
 *
 * lgamma(x) for x > 0 as a pair of floats: t A(t) with t = x - 1 on [3/4, 5/4), C(x - 3/2) on
 * [5/4, 7/4) and t B(t) with t = x - 2 on [7/4, 3) (A and B keep the relative accuracy at the
 * zeros 1 and 2); lgamma(1 + x) - log x below 3/4 (A(x) or C(x - 1/2)); on [3, 8) t B(t) + log((x - 1) ... (x - n)) with x - n in [2, 3) and the
 * product carried as a pair; Stirling's series from 8 with log x a pair (log_pair). For x < 0 the
 * reflection log(pi / |x sin(pi x)|) - lgamma(-x), sin(pi x) from an exact reduction of x; its
 * terms cancel near lgamma's zeros below -2, where the result is accurate in absolute terms only.
 * tgamma is exp of that pair (so overflow, underflow and subnormal results come out of exp), with
 * the sign of sin(pi x) below 0 and exact factorials at the integers up to 14. */
#include "kernels_f32.h"

float __tri_erff(float x) {
  float ax = fabsf_(x);
  float r;
  if (ax < 0.75f) {
    r = FMAF(ax, ERF_C0, ax * POLYF(ERF_E, ax * ax));
  } else {
    r = 1.0f - expf_fast(POLYF(ERF_G, fminf_(ax, 3.92f) - 1.5f));
  }
  return x != x ? x + x : asf32(asu32(r) | (asu32(x) & 0x80000000u));
}

float __tri_erfcf(float x) {
  float ax = fabsf_(x);
  float r;
  if (ax < 0.75f) {
    /* 1 - x C0 - x E(x^2), the first difference exact as a pair */
    float p = x * ERF_C0, pe = FMAF(x, ERF_C0, -p);
    float se;
    float s = fast_two_sum_f(1.0f, -p, &se);
    r = s + (se - FMAF(x, POLYF(ERF_E, x * x), pe));
  } else {
    float a = fminf_(ax, 10.1f); /* erfc(10.1) is below half the smallest subnormal */
    /* w = 1/(a + 2) as w0 + wl, from a + 2 = d + dl */
    float dl;
    float d = fast_two_sum_f(fmaxf_(a, 2.0f), fminf_(a, 2.0f), &dl);
    float w0 = 1.0f / d;
    float wl = w0 * FMAF(-w0, dl, FMAF(-w0, d, 1.0f));
    float am2 = a - 2.0f; /* exact */
    float t = am2 * w0;
    float tl = FMAF(am2, w0, -t) + am2 * wl; /* t + tl = (a - 2) / (a + 2) */
    /* P(t + tl) = c0 + c1 t + t^2 S(t) + P'(t) tl = ph + pl (c0 + c1 t as a pair; pl is not
     * small against ph, nor ql against qh and el against eh below: the products keep all terms) */
    float m = ERFC_P[1] * t, me = FMAF(ERFC_P[1], t, -m);
    float pe;
    float ph = fast_two_sum_f(ERFC_P[0], m, &pe);
    float pl = FMAF(t * t, polyf(ERFC_P + 2, 8, t), pe + me + ERFC_P_LO0);
    pl = FMAF(FMAF(2.0f * ERFC_P[2], t, ERFC_P[1]), tl, pl);
    /* q = P(t) / (a + 2) = qh + ql */
    float qh = ph * w0;
    float ql = FMAF(ph, w0, -qh) + FMAF(ph, wl, pl * w0);
    /* exp(-a^2) = (eh + el) 2^k, a^2 carried as a pair */
    float h = a * a, l = FMAF(a, a, -h);
    float rr, rl;
    int k = reduce_ln2f_lo(-h, -l, &rr, &rl);
    float ml;
    float mh = expm1f_poly(rr, rl, &ml);
    float ee;
    float eh = two_sum_f(1.0f, mh, &ee);
    float el = ee + ml;
    float e = ldexpf_(FMAF(eh, qh, FMAF(eh, ql, FMAF(el, qh, el * ql))), k); /* (eh + el)(qh + ql) */
    r = x < 0.0f ? 2.0f - e : e;
  }
  return x != x ? x + x : r;
}

#define HALF_LN2PI_H 0x1.d67f1cp-1f
#define HALF_LN2PI_L 0x1.0c97d6p-26f
#define LNPI_H 0x1.250d04p+0f
#define LNPI_L 0x1.1cf438p-25f
#define PIF_H 0x1.921fb6p+1f
#define PIF_L -0x1.777a5cp-24f

/* t P(t) as a pair for the split-constant polynomials LGAMMA_A and LGAMMA_B (n coefficients). */
static inline float t_poly(const float* c, float c0l, int n, float t, float* l) {
  float e;
  float ah = fast_two_sum_f(c[0], FMAF(t, polyf(c + 1, n - 1, t), c0l), &e); /* |c[0]| is the larger */
  float h = t * ah;
  *l = FMAF(t, ah, -h) + t * e;
  return h;
}

/* lgamma(3/2 + u) = C(u) as a pair. */
static inline float c_poly(float u, float* l) {
  return fast_two_sum_f(LGAMMA_C[0], FMAF(u, polyf(LGAMMA_C + 1, 8, u), LGAMMA_C_LO0), l);
}

/* lgamma(x) = h + *l for finite x > 0. One log (of x, or of the product below) and one
 * polynomial per argument, so that the inlined code stays small. */
static float lgamma_pos(float x, float* l) {
  /* [3, 8): lgamma(x - n) + log((x - 1) ... (x - n)), x - n in [2, 3), the product as a pair */
  int mid = x >= 3.0f && x < 8.0f;
  int n = mid ? (int)x - 2 : 0;
  float ph = 1.0f, pl = 0.0f;
#ifdef __clang__
#pragma clang loop unroll(disable) /* small n: keep the inlined code short */
#endif
  for (int k = 1; k <= n; ++k) {
    float f = x - (float)k; /* exact */
    float h = ph * f;
    pl = FMAF(ph, f, -h) + pl * f;
    ph = h;
  }
  float ll;
  float lh = log_pair_c(mid ? ph : x, pl, mid, &ll);
  if (x >= 8.0f) {
    /* x (log x - 1) - (log x)/2 + log(2 pi)/2 + 1/(12x) - 1/(360x^3) + 1/(1260x^5) */
    float a = lh - 1.0f; /* exact: log x >= 2 */
    float sh = x * a;
    if (!(sh < INFF)) {
      *l = 0.0f;
      return INFF;
    }
    float sl = FMAF(x, a, -sh) + x * ll;
    float w = 1.0f / x, z = w * w;
    float corr = w * FMAF(z, FMAF(z, 0x1.a01a02p-11f, -0x1.6c16c2p-9f), 0x1.555556p-4f);
    float se;
    float s = fast_two_sum_f(sh, -0.5f * lh, &se);
    float h2e;
    float h2 = two_sum_f(s, HALF_LN2PI_H, &h2e);
    return fast_two_sum_f(h2, h2e + (se + (FMAF(-0.5f, ll, sl) + (HALF_LN2PI_L + corr))), l);
  }
  /* the polynomial part: t B(t) from 7/4 (t = x - n - 2), C(x - 3/2) on [5/4, 7/4), t A(t) on
   * [3/4, 5/4) (t = x - 1), and lgamma(1 + x) below 3/4: C(x - 1/2) from 1/4, A(x) below */
  float qh, ql;
  if (x >= 1.75f) {
    qh = t_poly(LGAMMA_B, LGAMMA_B_LO0, 10, x - (float)(n + 2), &ql);
  } else if (x >= 1.25f || (x >= 0.25f && x < 0.75f)) {
    qh = c_poly(x - (x >= 1.25f ? 1.5f : 0.5f), &ql);
  } else {
    qh = t_poly(LGAMMA_A, LGAMMA_A_LO0, 9, x - (x >= 0.75f ? 1.0f : 0.0f), &ql);
  }
  if (x >= 0.75f && !mid) return fast_two_sum_f(qh, ql, l);
  /* plus log of the product ([3, 8)), or minus log x (below 3/4); the log is the larger */
  float sg = mid ? 1.0f : -1.0f;
  float e;
  float h = fast_two_sum_f(sg * lh, qh, &e);
  return fast_two_sum_f(h, e + (ql + sg * ll), l);
}

/* For finite x < 0 not an integer: log|pi / (x sin(pi x))| = h + *l; *sgn gets the sign of
 * sin(pi x) (that of tgamma(x)). */
static float reflect(float x, float* l, float* sgn) {
  /* x = q/2 + r exactly with |r| <= 1/4, after taking whole periods (2) off large x */
  float xr = fabsf_(x) >= 0x1p20f ? FMAF(-2.0f, truncf_(0.5f * x), x) : x; /* exact */
  int q;
  float qf = rint_f(2.0f * xr, &q);
  float r = FMAF(-0.5f, qf, xr);
  float rh = r * PIF_H, rl = FMAF(r, PIF_H, -rh) + r * PIF_L;
  float s = (q & 1) ? cosf_poly(rh, rl) : sinf_poly(rh, rl);
  s = (q & 2) ? -s : s;
  *sgn = s;
  /* |x s| as a pair, then log pi - log|x s| */
  float ps = fabsf_(x * s), pe = FMAF(fabsf_(x), fabsf_(s), -ps);
  float ll;
  float lh = log_pair_c(ps, pe, 1, &ll);
  float e;
  float h = two_sum_f(LNPI_H, -lh, &e);
  return fast_two_sum_f(h, e + (LNPI_L - ll), l);
}

float __tri_lgammaf(float x) {
  float ax = fabsf_(x);
  if (!(ax < INFF)) return x * x; /* inf: inf; NaN */
  if (x == 0.0f || (x < 0.0f && truncf_(ax) == ax)) return INFF; /* a pole */
  if (x < 0.0f && ax < 0x1p-25f) { /* -log|x| - gamma x */
    float ll;
    float lh = log_pair(ax, &ll);
    return -(lh + ll);
  }
  float gl;
  float gh = lgamma_pos(ax, &gl);
  if (x > 0.0f) return gh + gl;
  /* log|pi / (x sin(pi x))| - lgamma(-x) */
  float sg, rl;
  float rh = reflect(x, &rl, &sg);
  float e;
  float h = two_sum_f(rh, -gh, &e);
  return h + (e + (rl - gl));
}

/* n! for n = 0 .. 13 (exact in f32); tgamma(n + 1). */
static const float FACTORIAL[14] = {1.0f, 1.0f, 2.0f, 6.0f, 24.0f, 120.0f, 720.0f, 5040.0f, 40320.0f, 362880.0f,
                                    3628800.0f, 39916800.0f, 479001600.0f, 6227020800.0f};

float __tri_tgammaf(float x) {
  float ax = fabsf_(x);
  if (x != x) return x + x;
  if (x == INFF) return x;
  if (x == 0.0f) return 1.0f / x; /* +-inf */
  if (x < 0.0f && truncf_(ax) == ax) return NANF; /* a pole, or -inf */
  if (x > 0.0f && x <= 14.0f && truncf_(x) == x) return FACTORIAL[(int)x - 1];
  if (x < 0.0f && ax < 0x1p-25f) return 1.0f / x; /* 1/x - gamma */
  float gl;
  float gh = lgamma_pos(ax, &gl); /* inf past about 4e36: then tgamma(x) is inf or 0 */
  float h = gh, l = gl, sg = 1.0f;
  if (x < 0.0f) {
    /* |tgamma(x)| = exp(log|pi / (x sin(pi x))| - lgamma(-x)), sign of sin(pi x) */
    float rl;
    float rh = reflect(x, &rl, &sg);
    float e;
    h = two_sum_f(rh, -gh, &e);
    l = e + (rl - gl);
  }
  int out = !(h > -105.0f && h < 90.0f);
  int k;
  float p = expf_core_lo(out ? (h > 0.0f ? 90.0f : -105.0f) : h, out ? 0.0f : l, &k);
  float r = ldexpf_(p, k);
  return sg < 0.0f ? -r : r;
}
