/* Tri's GPU math library (docs/codegen.md, "The math library"): the functions the NVPTX lowering
 * calls for math ops it does not emit inline. Portable C11 built from + - * /, sqrt, fma and
 * integer bit manipulation only; the build compiles it to NVPTX bitcode that the lowering links
 * into kernels, and the tests compile the same files for the host.
 *
 * __tri_<name> is the f64 function, __tri_<name>f the f32 one, which computes in f32 only (no
 * f64). The f64 functions are within 4 ulp of the exact result, the f32 ones within the bound of
 * CUDA's Math API for the same function (docs/ir.md); all follow C99 Annex F for special values
 * (NaN, infinities, signed zeros, subnormals).
 */
#ifndef TRI_MATHLIB_H
#define TRI_MATHLIB_H

#ifdef __cplusplus
extern "C" {
#endif

#define TRI_MATHLIB_UNARY(X) \
  X(exp) X(exp2) X(exp10) X(expm1) X(log) X(log2) X(log10) X(log1p) \
  X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) \
  X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) \
  X(erf) X(erfc) X(lgamma) X(tgamma) X(cbrt) X(round) X(trunc)
#define TRI_MATHLIB_BINARY(X) X(pow) X(atan2) X(hypot) X(fmod) X(copysign)

#define TRI_MATHLIB_DECL1(n) double __tri_##n(double x); float __tri_##n##f(float x);
#define TRI_MATHLIB_DECL2(n) double __tri_##n(double x, double y); float __tri_##n##f(float x, float y);
TRI_MATHLIB_UNARY(TRI_MATHLIB_DECL1)
TRI_MATHLIB_BINARY(TRI_MATHLIB_DECL2)
#undef TRI_MATHLIB_DECL1
#undef TRI_MATHLIB_DECL2

#ifdef __cplusplus
}
#endif

#endif
