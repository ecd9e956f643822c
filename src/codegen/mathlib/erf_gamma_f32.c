/* Native f32 error functions: erf erfc (f32 arithmetic, fma and integer bit manipulation only).
 *
 * erf(x) = x (C0 + E(x^2)) for |x| < 3/4; 1 - exp(G(|x| - 3/2)) for 3/4 <= |x| <= 3.92, G a fit
 * of log(erfc) (its error matters in proportion to erfc, small there); 1 beyond (with x's sign).
 * erfc(x) = 1 - x C0 - x E(x^2) for |x| < 3/4, the first difference carried as a pair;
 * exp(-x^2) P(t) / (x + 2) for x >= 3/4 with t = (x - 2) / (x + 2) (after Shepherd and
 * Laframboise: (x + 2) exp(x^2) erfc(x) is smooth in t up to x = inf), x^2 carried as a pair into
 * exp and exp's result kept as a pair for the last product; 2 - erfc(-x) for x <= -3/4. */
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
