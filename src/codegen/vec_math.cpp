// Polynomials and range reductions after Cephes (S. Moshier): expf, logf and tanhf, whose
// coefficients are minimax fits for f32 on the reduced ranges used here.
#include "codegen/vec_math.h"

#include <cmath>

namespace tri::codegen {
namespace {

llvm::Value* cf(llvm::IRBuilder<>& b, double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); }
llvm::Value* ci(llvm::IRBuilder<>& b, uint32_t v) { return b.getInt32(v); }

// Horner evaluation of c[0]*x^(n-1) + ... + c[n-1] with separate roundings.
llvm::Value* horner(llvm::IRBuilder<>& b, llvm::Value* x, std::initializer_list<double> c) {
  llvm::Value* p = nullptr;
  for (double k : c) p = p ? b.CreateFAdd(b.CreateFMul(p, x), cf(b, k)) : cf(b, k);
  return p;
}

// e^r for |r| <= ln2/2 (+ a little): 1 + r + r^2 P(r).
llvm::Value* exp_poly(llvm::IRBuilder<>& b, llvm::Value* r) {
  llvm::Value* p = horner(b, r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2,
                                 1.6666665459E-1, 5.0000001201E-1});
  llvm::Value* r2 = b.CreateFMul(r, r);
  return b.CreateFAdd(b.CreateFAdd(b.CreateFMul(p, r2), r), cf(b, 1.0));
}

// n = round-to-nearest(t) for |t| < 2^22, by the 1.5 * 2^23 trick: (float n, int n).
void round_to_int(llvm::IRBuilder<>& b, llvm::Value* t, llvm::Value** nf, llvm::Value** ni) {
  llvm::Value* big = b.CreateFAdd(t, cf(b, 12582912.0));
  *nf = b.CreateFSub(big, cf(b, 12582912.0));
  *ni = b.CreateSub(b.CreateBitCast(big, b.getInt32Ty()), ci(b, 0x4b400000u));
}


// log(1 + m) - m part: returns (t = log(mantissa part), e).
void log_core(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value** t, llvm::Value** ef) {
  llvm::Type* i32 = b.getInt32Ty();
  // Subnormal inputs are scaled by 2^23 first.
  llvm::Value* sub = b.CreateFCmpOLT(x, cf(b, 1.17549435e-38));
  llvm::Value* xs = b.CreateSelect(sub, b.CreateFMul(x, cf(b, 8388608.0)), x);
  llvm::Value* bits = b.CreateBitCast(xs, i32);
  llvm::Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 23), ci(b, 0xff)), ci(b, 126));
  e = b.CreateSelect(sub, b.CreateSub(e, ci(b, 23)), e);
  // m in [0.5, 1)
  llvm::Value* m = b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, ci(b, 0x807fffffu)), ci(b, 0x3f000000u)), b.getFloatTy());
  llvm::Value* small = b.CreateFCmpOLT(m, cf(b, 0.707106781186547524));
  e = b.CreateSelect(small, b.CreateSub(e, ci(b, 1)), e);
  // m - 1, or 2m - 1 (exact either way)
  m = b.CreateSelect(small, b.CreateFSub(b.CreateFAdd(m, m), cf(b, 1.0)), b.CreateFSub(m, cf(b, 1.0)));
  llvm::Value* z = b.CreateFMul(m, m);
  llvm::Value* p = horner(b, m, {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                                 1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                                 3.3333331174E-1});
  llvm::Value* y = b.CreateFMul(b.CreateFMul(p, m), z);
  *ef = b.CreateSIToFP(e, b.getFloatTy());
  // The two small terms, then m: log(1 + m) = m - z/2 + y.
  *t = b.CreateFAdd(m, b.CreateFAdd(y, b.CreateFMul(cf(b, -0.5), z)));
}

llvm::Value* log_specials(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* r) {
  r = b.CreateSelect(b.CreateFCmpOEQ(x, cf(b, 0.0)), cf(b, -HUGE_VAL), r);
  r = b.CreateSelect(b.CreateFCmpOLT(x, cf(b, 0.0)), cf(b, NAN), r);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, cf(b, HUGE_VAL)), x, r);
  return keep_nan(b, x, r);
}

}  // namespace

// 2^n for an i32 n in [-252, 254]: two exactly representable powers whose product is 2^n, so
// that y * p1 * p2 is rounded once even when the result is subnormal.
void pow2_split(llvm::IRBuilder<>& b, llvm::Value* n, llvm::Value** p1, llvm::Value** p2) {
  llvm::Value* n1 = b.CreateAShr(n, 1);
  llvm::Value* n2 = b.CreateSub(n, n1);
  auto pw = [&](llvm::Value* k) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(k, ci(b, 127)), 23), b.getFloatTy());
  };
  *p1 = pw(n1);
  *p2 = pw(n2);
}

llvm::Value* keep_nan(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* r) {
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, r);
}

llvm::Value* emit_exp_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  // Past these the result is inf or 0 anyway; clamping keeps n in range.
  llvm::Value* xc = b.CreateSelect(b.CreateFCmpOGT(x, cf(b, 89.0)), cf(b, 89.0), x);
  xc = b.CreateSelect(b.CreateFCmpOLT(xc, cf(b, -104.0)), cf(b, -104.0), xc);
  llvm::Value *nf, *ni;
  round_to_int(b, b.CreateFMul(xc, cf(b, 1.44269504088896341)), &nf, &ni);
  // r = x - n ln2 in two steps (Cody-Waite): n * 0.693359375 is exact.
  llvm::Value* r = b.CreateFSub(xc, b.CreateFMul(nf, cf(b, 0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(nf, cf(b, -2.12194440e-4)));
  llvm::Value* y = exp_poly(b, r);
  llvm::Value *p1, *p2;
  pow2_split(b, ni, &p1, &p2);
  return keep_nan(b, x, b.CreateFMul(b.CreateFMul(y, p1), p2));
}

llvm::Value* emit_exp2_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* xc = b.CreateSelect(b.CreateFCmpOGT(x, cf(b, 129.0)), cf(b, 129.0), x);
  xc = b.CreateSelect(b.CreateFCmpOLT(xc, cf(b, -151.0)), cf(b, -151.0), xc);
  llvm::Value *nf, *ni;
  round_to_int(b, xc, &nf, &ni);
  llvm::Value* r = b.CreateFMul(b.CreateFSub(xc, nf), cf(b, 0.693147180559945309));  // x - n is exact
  llvm::Value* y = exp_poly(b, r);
  llvm::Value *p1, *p2;
  pow2_split(b, ni, &p1, &p2);
  return keep_nan(b, x, b.CreateFMul(b.CreateFMul(y, p1), p2));
}

llvm::Value* emit_log_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value *t, *ef;
  log_core(b, x, &t, &ef);
  // log(x) = t + e ln2, with ln2 = 0.693359375 - 2.12194440e-4 (the small part added first).
  llvm::Value* r = b.CreateFAdd(b.CreateFAdd(t, b.CreateFMul(ef, cf(b, -2.12194440e-4))), b.CreateFMul(ef, cf(b, 0.693359375)));
  return log_specials(b, x, r);
}

llvm::Value* emit_tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* bits = b.CreateBitCast(x, i32);
  llvm::Value* sign = b.CreateAnd(bits, ci(b, 0x80000000u));
  llvm::Value* ax = b.CreateBitCast(b.CreateAnd(bits, ci(b, 0x7fffffffu)), b.getFloatTy());
  // |x| < 0.625: x + x^3 P(x^2)
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* p = horner(b, z, {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2, 1.33314422036E-1,
                                 -3.33332819422E-1});
  // Computed on |x| and given x's sign afterwards, so tanh(-0.0) is -0.0.
  llvm::Value* small = b.CreateFAdd(b.CreateFMul(b.CreateFMul(p, z), ax), ax);
  small = b.CreateBitCast(b.CreateOr(b.CreateBitCast(small, i32), sign), b.getFloatTy());
  // otherwise 1 - 2 / (e^(2|x|) + 1), with the sign of x; e^(2|x|) is inf past ~44, giving 1.
  llvm::Value* e = emit_exp_f32(b, b.CreateFAdd(ax, ax));
  llvm::Value* big = b.CreateFSub(cf(b, 1.0), b.CreateFDiv(cf(b, 2.0), b.CreateFAdd(e, cf(b, 1.0))));
  big = b.CreateBitCast(b.CreateOr(b.CreateBitCast(big, i32), sign), b.getFloatTy());
  llvm::Value* r = b.CreateSelect(b.CreateFCmpOLT(ax, cf(b, 0.625)), small, big);
  return keep_nan(b, x, r);
}

}  // namespace tri::codegen
