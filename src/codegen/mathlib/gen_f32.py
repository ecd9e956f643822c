#!/usr/bin/env python3
"""Writes poly_f32.h: the minimax polynomials of the math library's native f32 functions (needs
mpmath from PyPI; remez.py does the fitting). Each table is a polynomial's coefficients, lowest
power first, rounded to f32 (the fit refits the rest after each rounding, then nudges single
coefficients by an ulp or two while that helps); its comment gives the form and the maximum
weighted error on the interval, which for all of them is the relative error the polynomial adds
to the function's result (before rounding errors of the evaluation).

usage: python3 src/codegen/mathlib/gen_f32.py > src/codegen/mathlib/poly_f32.h  (about a minute)"""
import sys

import mpmath as M

from remez import Grid, c_float, f32, fit_f32

sqrt = M.sqrt
# The reductions the C code makes (the intervals below add a little for rounding at the ends).
LN2_HALF = M.log(2) / 2 * M.mpf("1.002")
ERFC_K = 2  # erfc: t = (x - K) / (x + K)
ERFC_XMAX = M.mpf("10.1")


def z_form(fn, lead=1):
    """fn(r) = lead r + r^3 P(r^2): (P, its weight) as functions of z = r^2 (relative error of fn)."""
    def P(z):
        r = sqrt(z)
        return (fn(r) - lead * r) / (z * r) if z else None
    def W(z):
        r = sqrt(z)
        return z * r / fn(r) if z else 0
    return P, W


def fits():
    out = []

    def add(name, doc, f, w, a, b, powers, zero=None, npts=1000, split=(), fixed=None):
        """zero: f's value at the point where the formula is 0/0 (its limit); split: powers whose
        coefficient is a pair of floats (the table holds the high part, NAME_LO<power> the low)."""
        ff = (lambda x: (lambda v: zero if v is None else v)(f(x))) if zero is not None else f
        g = Grid(ff, w, a, b, npts)
        fixed = fixed or {}
        c, e = fit_f32(g, [p for p in powers if p not in fixed], fixed=fixed, split=split)
        out.append((name, doc, [c[p] for p in sorted(c)], e))
        print("  %s: 2^%.2f" % (name, float(M.log(e, 2))), file=sys.stderr)

    # exp and expm1 share one polynomial: expm1(r) = r + r^2 Q(r) for |r| <= ln2/2; the weight is
    # expm1's relative error (exp's is smaller).
    add("EXPM1_Q", "expm1(r) = r + r^2 Q(r), |r| <= ln2/2",
        lambda r: (M.expm1(r) - r) / r ** 2 if r else None, lambda r: r * r / M.expm1(r) if r else 0,
        -LN2_HALF, LN2_HALF, range(6), zero=M.mpf(1) / 2)
    # log: log1p(f) = f + f^2 U(f) for f = m - 1, m in [sqrt(1/2), sqrt(2))
    add("LOG_U", "log1p(f) = f + f^2 U(f), U(0) = -1/2 exactly, sqrt(1/2) - 1 <= f <= sqrt(2) - 1",
        lambda f: (M.log1p(f) - f) / f ** 2 if f else None, lambda f: f * f / M.log1p(f) if f else 0,
        sqrt(M.mpf(1) / 2) - 1 - M.mpf(2) ** -20, sqrt(2) - 1 + M.mpf(2) ** -20, range(9), zero=-M.mpf(1) / 2,
        fixed={0: -M.mpf(1) / 2})
    # pow's log in pairs: log1p(f) = 2s + (2/3) s^3 + s^5 R(s^2), s = f / (2 + f), |s| <= 1/5; the
    # weight makes the error relative to log1p(f).
    add("POWLOG_R", "log1p(f) = 2s + 2s^3/3 + s^5 R(s^2), s = f / (2 + f), |s| <= 0.1716",
        lambda z: (2 * M.atanh(sqrt(z)) - 2 * sqrt(z) - 2 * sqrt(z) ** 3 / 3) / sqrt(z) ** 5 if z else None,
        lambda z: sqrt(z) ** 5 / (2 * M.atanh(sqrt(z))) if z else 0, 0, M.mpf("0.1716") ** 2 * M.mpf("1.001"), range(3),
        zero=M.mpf(2) / 5)
    # sin and cos on |r| <= pi/4 (a little more: the reduced argument may pass it by rounding)
    z4 = (M.pi / 4) ** 2 * M.mpf("1.01")
    P, W = z_form(M.sin)
    add("SIN_S", "sin(r) = r + r^3 S(r^2), |r| <= pi/4", P, W, 0, z4, range(3), zero=-M.mpf(1) / 6)
    add("COS_C", "cos(r) = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4",
        lambda z: (M.cos(sqrt(z)) - 1 + z / 2) / z ** 2 if z else None, lambda z: z * z / M.cos(sqrt(z)),
        0, z4, range(3), zero=M.mpf(1) / 24)
    P, W = z_form(M.tan)
    add("TAN_T", "tan(r) = r + r^3 T(r^2), |r| <= pi/4", P, W, 0, z4, range(7), zero=M.mpf(1) / 3)
    P, W = z_form(M.asin)
    add("ASIN_P", "asin(x) = x + x^3 P(x^2), |x| <= 1/2", P, W, 0, M.mpf(1) / 4, range(5), zero=M.mpf(1) / 6)
    P, W = z_form(M.atan)
    add("ATAN_T", "atan(x) = x + x^3 T(x^2), |x| <= 1", P, W, 0, 1, range(8), zero=-M.mpf(1) / 3)
    P, W = z_form(M.sinh)
    add("SINH_H", "sinh(x) = x + x^3 H(x^2), |x| <= 1", P, W, 0, 1, range(3), zero=M.mpf(1) / 6)
    P, W = z_form(M.tanh)
    add("TANH_T", "tanh(x) = x + x^3 T(x^2), |x| <= 0.55", P, W, 0, M.mpf("0.55") ** 2, range(5),
        zero=-M.mpf(1) / 3)
    # erf(x) = x (C0 + E(x^2)) for |x| <= 3/4, C0 = 2/sqrt(pi) rounded to f32 (E(0) is the rest)
    c0 = M.mpf(f32(2 / sqrt(M.pi)))
    add("ERF_E", "erf(x) = x (ERF_C0 + E(x^2)), |x| <= 3/4, ERF_C0 = f32(2/sqrt(pi))",
        lambda z: M.erf(sqrt(z)) / sqrt(z) - c0 if z else None, lambda z: sqrt(z) / M.erf(sqrt(z)) if z else 1,
        0, M.mpf("0.5625"), range(6), zero=2 / sqrt(M.pi) - c0)
    # erf(x) = 1 - exp(G(x - 3/2)) for 3/4 <= x <= 3.92 (erf rounds to 1 above): the weight
    # erfc(x) makes the error that of erf, relative to 1; x - 3/2 is exact below 3, and above
    # erfc is too small for its rounding to matter
    add("ERF_G", "erf(x) = 1 - exp(G(x - 3/2)), 3/4 <= x <= 3.92; error of erf, absolute",
        lambda t: M.log(M.erfc(t + M.mpf(3) / 2)), lambda t: M.erfc(t + M.mpf(3) / 2), -M.mpf(3) / 4,
        M.mpf("2.42"), range(9))
    # erfc(x) = exp(-x^2) P(t) / (x + 2), t = (x - 2) / (x + 2), 3/4 <= x <= 10.1 (Shepherd and
    # Laframboise's variable: (x + 2) exp(x^2) erfc(x) is smooth in t all the way to x = inf)
    def erfc_p(t):
        x = ERFC_K * (1 + t) / (1 - t)
        return (x + ERFC_K) * M.exp(x * x) * M.erfc(x)
    x0 = M.mpf(3) / 4
    add("ERFC_P", "erfc(x) = exp(-x^2) P(t) / (x + 2), t = (x - 2) / (x + 2), 3/4 <= x <= 10.1",
        erfc_p, lambda t: 1 / erfc_p(t), (x0 - ERFC_K) / (x0 + ERFC_K), (ERFC_XMAX - ERFC_K) / (ERFC_XMAX + ERFC_K),
        range(10), split=(0,))
    # lgamma near its zeros at 1 and 2: lgamma(1 + t) = t A(t), lgamma(2 + t) = t B(t), and C
    # between them; relative error (the constant terms are pairs of floats)
    lg = M.loggamma
    add("LGAMMA_A", "lgamma(1 + t) = t A(t), |t| <= 1/4",
        lambda t: lg(1 + t) / t if abs(t) > 1e-20 else None,
        lambda t: abs(t / lg(1 + t)) if abs(t) > 1e-20 else 1 / M.euler,
        -M.mpf(1) / 4, M.mpf(1) / 4, range(9), zero=-M.euler, split=(0,))
    add("LGAMMA_C", "lgamma(3/2 + u) = C(u), |u| <= 1/4 (around the minimum, no zero)",
        lambda u: lg(M.mpf(3) / 2 + u), lambda u: 1 / abs(lg(M.mpf(3) / 2 + u)),
        -M.mpf(1) / 4, M.mpf(1) / 4, range(9), split=(0,))
    add("LGAMMA_B", "lgamma(2 + t) = t B(t), -1/4 <= t <= 1",
        lambda t: lg(2 + t) / t if abs(t) > 1e-20 else None,
        lambda t: abs(t / lg(2 + t)) if abs(t) > 1e-20 else 1 / (1 - M.euler),
        -M.mpf(1) / 4, 1, range(10), zero=1 - M.euler, split=(0,))
    return out


def main():
    print("/* generated by gen_f32.py (mpmath " + M.__version__ + "): do not edit. The native f32 functions'")
    print(" * minimax polynomials, lowest power first; each comment gives the form and the polynomial's")
    print(" * maximum relative error on its interval. */")
    print("#ifndef TRI_MATHLIB_POLY_F32_H")
    print("#define TRI_MATHLIB_POLY_F32_H")
    print("#define ERF_C0 %s" % c_float(f32(2 / sqrt(M.pi))))
    for name, doc, coefs, err in fits():
        print("/* %s: 2^%.1f */" % (doc, float(M.log(err, 2))))
        for p, c in enumerate(coefs):
            if isinstance(c, tuple):
                print("#define %s_LO%d %s" % (name, p, c_float(c[1])))
        hi = [c[0] if isinstance(c, tuple) else c for c in coefs]
        print("static const float %s[%d] = {%s};" % (name, len(hi), ", ".join(c_float(c) for c in hi)))
    print("#endif")


if __name__ == "__main__":
    main()
