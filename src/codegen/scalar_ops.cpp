// The emitters use plain integer and f32/f64 instructions and selects (no intrinsics) so that
// IRBuilder's constant folder turns them into constants when their inputs are constants (the
// lowering relies on that for float constants of the small types).
#include "codegen/scalar_ops.h"

#include <cassert>
#include <cmath>

namespace tri::codegen {
namespace {

using ir::Scalar;

// Layout of a small float: exponent bits, fraction bits, bias, whether the all-ones exponent
// means inf/NaN (IEEE) or, for f8e4m3 ("fn"), only S.1111.111 is NaN and there is no inf.
struct Format {
  int ebits, mbits, bias;
  bool ieee;
  int width;
};

Format format_of(Scalar s) {
  switch (s) {
    case Scalar::F16: return {5, 10, 15, true, 16};
    case Scalar::BF16: return {8, 7, 127, true, 16};
    case Scalar::F8E5M2: return {5, 2, 15, true, 8};
    case Scalar::F8E4M3: return {4, 3, 7, false, 8};
    default: break;
  }
  assert(!"not a small float");
  return {0, 0, 0, false, 0};
}

llvm::Constant* cint(llvm::Type* t, uint64_t v) { return llvm::ConstantInt::get(t, v); }

}  // namespace

bool is_small_float(Scalar s) {
  return s == Scalar::F16 || s == Scalar::BF16 || s == Scalar::F8E4M3 || s == Scalar::F8E5M2;
}

llvm::Type* reg_type(llvm::LLVMContext& c, Scalar s) {
  switch (s) {
    case Scalar::I1: return llvm::Type::getInt1Ty(c);
    case Scalar::I8: return llvm::Type::getInt8Ty(c);
    case Scalar::I16: return llvm::Type::getInt16Ty(c);
    case Scalar::I32: return llvm::Type::getInt32Ty(c);
    case Scalar::I64: return llvm::Type::getInt64Ty(c);
    case Scalar::F16: return llvm::Type::getInt16Ty(c);
    case Scalar::BF16: return llvm::Type::getInt16Ty(c);
    case Scalar::F32: return llvm::Type::getFloatTy(c);
    case Scalar::F64: return llvm::Type::getDoubleTy(c);
    case Scalar::F8E4M3: return llvm::Type::getInt8Ty(c);
    case Scalar::F8E5M2: return llvm::Type::getInt8Ty(c);
  }
  return nullptr;
}

llvm::Type* mem_type(llvm::LLVMContext& c, Scalar s) {
  return s == Scalar::I1 ? llvm::Type::getInt8Ty(c) : reg_type(c, s);
}

llvm::Type* arith_type(llvm::LLVMContext& c, Scalar s) {
  return is_small_float(s) ? llvm::Type::getFloatTy(c) : reg_type(c, s);
}

llvm::Value* to_mem(llvm::IRBuilder<>& b, llvm::Value* v, Scalar s) {
  return s == Scalar::I1 ? b.CreateZExt(v, b.getInt8Ty()) : v;
}

llvm::Value* from_mem(llvm::IRBuilder<>& b, llvm::Value* v, Scalar s) {
  return s == Scalar::I1 ? b.CreateICmpNE(v, b.getInt8(0)) : v;
}

llvm::Value* quiet_nan(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* w = b.CreateBitCast(x, i32);
  llvm::Value* is_nan = b.CreateICmpUGT(b.CreateAnd(w, cint(i32, 0x7fffffffu)), cint(i32, 0x7f800000u));
  return b.CreateBitCast(b.CreateSelect(is_nan, b.CreateOr(w, cint(i32, 0x00400000u)), w), b.getFloatTy());
}

llvm::Value* emit_small_to_f32(llvm::IRBuilder<>& b, llvm::Value* bits, Scalar s) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* h = b.CreateZExt(bits, i32);
  // bf16 -> f32 is exact: the 16 bits become the top half, a signaling NaN staying signaling
  // (docs/ir.md; NVIDIA's cvt.f32.bf16 is this shift, and so is Triton's widening). Arithmetic on
  // the result quiets it as usual.
  if (s == Scalar::BF16) return b.CreateBitCast(b.CreateShl(h, 16), b.getFloatTy());
  Format f = format_of(s);
  const int E = f.ebits, M = f.mbits;
  llvm::Value* sign = b.CreateShl(b.CreateLShr(h, E + M), 31);
  llvm::Value* ef = b.CreateAnd(b.CreateLShr(h, M), (1u << E) - 1);
  llvm::Value* mf = b.CreateAnd(h, (1u << M) - 1);
  llvm::Value* normal = b.CreateOr(b.CreateShl(b.CreateAdd(ef, cint(i32, 127 - f.bias)), 23), b.CreateShl(mf, 23 - M));
  // Subnormal: mf * 2^(emin - M), exact in f32 for every small format.
  llvm::Value* sub_f = b.CreateFMul(b.CreateUIToFP(mf, b.getFloatTy()),
                                    llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, 1 - f.bias - M)));
  llvm::Value* sub = b.CreateBitCast(sub_f, i32);
  llvm::Value* r = b.CreateSelect(b.CreateICmpEQ(ef, cint(i32, 0)), sub, normal);
  if (f.ieee) {
    llvm::Value* special = b.CreateOr(b.CreateShl(mf, 23 - M), cint(i32, 0x7f800000u));
    // A NaN (nonzero fraction) comes out quiet, as IEEE 754 conversion makes it.
    special = b.CreateSelect(b.CreateICmpNE(mf, cint(i32, 0)), b.CreateOr(special, cint(i32, 0x00400000u)), special);
    r = b.CreateSelect(b.CreateICmpEQ(ef, cint(i32, (1u << E) - 1)), special, r);
  } else {
    llvm::Value* is_nan = b.CreateAnd(b.CreateICmpEQ(ef, cint(i32, (1u << E) - 1)),
                                      b.CreateICmpEQ(mf, cint(i32, (1u << M) - 1)));
    r = b.CreateSelect(is_nan, cint(i32, 0x7fc00000u), r);
  }
  return b.CreateBitCast(b.CreateOr(r, sign), b.getFloatTy());
}

llvm::Value* emit_to_small(llvm::IRBuilder<>& b, llvm::Value* x, Scalar s, bool rtz) {
  const bool dbl = x->getType()->isDoubleTy();
  assert(dbl || x->getType()->isFloatTy());
  const int W = dbl ? 64 : 32, Ms = dbl ? 52 : 23, Es = dbl ? 11 : 8, bias_s = dbl ? 1023 : 127;
  Format f = format_of(s);
  const int Md = f.mbits, Ed = f.ebits;
  const int64_t emin_d = 1 - f.bias;
  llvm::Type* it = b.getIntNTy(W);
  llvm::Type* ot = b.getIntNTy(f.width);
  const uint64_t wmask = W == 64 ? ~uint64_t(0) : (uint64_t(1) << W) - 1;
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(it, static_cast<uint64_t>(v) & wmask); };

  llvm::Value* xb = b.CreateBitCast(x, it);
  llvm::Value* sign = b.CreateShl(b.CreateTrunc(b.CreateLShr(xb, W - 1), ot), f.width - 1);
  llvm::Value* a = b.CreateAnd(xb, c(int64_t(~(uint64_t(1) << (W - 1)))));
  llvm::Value* ef = b.CreateLShr(a, Ms);
  llvm::Value* mf = b.CreateAnd(a, c(int64_t((uint64_t(1) << Ms) - 1)));
  const uint64_t inf_s = ((uint64_t(1) << Es) - 1) << Ms;
  llvm::Value* is_nan = b.CreateICmpUGT(a, c(int64_t(inf_s)));
  llvm::Value* is_inf = b.CreateICmpEQ(a, c(int64_t(inf_s)));
  llvm::Value* ef0 = b.CreateICmpEQ(ef, c(0));
  llvm::Value* sig = b.CreateSelect(ef0, mf, b.CreateOr(mf, c(int64_t(uint64_t(1) << Ms))));
  llvm::Value* e = b.CreateSub(b.CreateSelect(ef0, c(1), ef), c(bias_s));  // value = sig * 2^(e - Ms)
  llvm::Value* extra = b.CreateSub(c(emin_d), e);
  extra = b.CreateSelect(b.CreateICmpSLT(extra, c(0)), c(0), extra);
  llvm::Value* shift = b.CreateAdd(extra, c(Ms - Md));
  // Past Ms + 2 every bit is below half an ulp: the result is 0 with a sticky remainder.
  shift = b.CreateSelect(b.CreateICmpUGT(shift, c(Ms + 2)), c(Ms + 2), shift);
  llvm::Value* q = b.CreateLShr(sig, shift);
  if (!rtz) {
    llvm::Value* rem = b.CreateAnd(sig, b.CreateSub(b.CreateShl(c(1), shift), c(1)));
    llvm::Value* half = b.CreateShl(c(1), b.CreateSub(shift, c(1)));
    llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(q, c(1)), c(0));
    llvm::Value* up = b.CreateOr(b.CreateICmpUGT(rem, half), b.CreateAnd(b.CreateICmpEQ(rem, half), odd));
    q = b.CreateAdd(q, b.CreateZExt(up, it));
  }
  llvm::Value* ebase = b.CreateSub(e, c(emin_d));
  ebase = b.CreateSelect(b.CreateICmpSLT(ebase, c(0)), c(0), ebase);
  // q carries its implicit bit, which lands in the exponent field: (e - emin + 1) = e + bias.
  llvm::Value* bits = b.CreateAdd(b.CreateShl(ebase, Md), q);
  const uint64_t inf_d = ((uint64_t(1) << Ed) - 1) << Md;
  const uint64_t max_d = f.ieee ? inf_d - 1 : (uint64_t(1) << (f.width - 1)) - 2;
  llvm::Value* overflow = b.CreateICmpUGT(bits, c(int64_t(max_d)));
  llvm::Value* ovf = c(int64_t(f.ieee && !rtz ? inf_d : max_d));
  bits = b.CreateSelect(overflow, ovf, bits);
  bits = b.CreateSelect(is_inf, c(int64_t(f.ieee ? inf_d : max_d)), bits);
  // NaN becomes the canonical quiet NaN of the format, with its sign (the interpreter's choice).
  llvm::Value* nan = c(int64_t(f.ieee ? inf_d | (uint64_t(1) << (Md - 1)) : (uint64_t(1) << (f.width - 1)) - 1));
  bits = b.CreateSelect(is_nan, nan, bits);
  return b.CreateOr(b.CreateTrunc(bits, ot), sign);
}

llvm::Value* emit_round_tf32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* bits = b.CreateBitCast(x, i32);
  llvm::Value* special = b.CreateICmpEQ(b.CreateAnd(bits, cint(i32, 0x7f800000u)), cint(i32, 0x7f800000u));
  llvm::Value* odd = b.CreateAnd(b.CreateLShr(bits, 13), cint(i32, 1));
  llvm::Value* r = b.CreateAnd(b.CreateAdd(bits, b.CreateAdd(odd, cint(i32, 0xfff))), cint(i32, ~0x1fffu));
  return b.CreateBitCast(b.CreateSelect(special, bits, r), b.getFloatTy());
}

llvm::Value* emit_fptrunc_rtz(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Value* r = b.CreateFPTrunc(x, b.getFloatTy());
  llvm::Value* back = b.CreateFPExt(r, b.getDoubleTy());
  // |back| > |x|: the nearest float was rounded away from zero; step one ulp toward zero (also
  // turns an overflowed inf into the largest finite float).
  llvm::Value* abs_back = b.CreateBitCast(b.CreateAnd(b.CreateBitCast(back, b.getInt64Ty()), INT64_MAX), b.getDoubleTy());
  llvm::Value* abs_x = b.CreateBitCast(b.CreateAnd(b.CreateBitCast(x, b.getInt64Ty()), INT64_MAX), b.getDoubleTy());
  llvm::Value* away = b.CreateFCmpOGT(abs_back, abs_x);
  llvm::Value* stepped = b.CreateBitCast(b.CreateSub(b.CreateBitCast(r, b.getInt32Ty()), b.getInt32(1)), b.getFloatTy());
  return b.CreateSelect(away, stepped, r);
}

llvm::Value* emit_sdiv(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  llvm::Value* zero = b.CreateICmpEQ(y, llvm::Constant::getNullValue(t));
  llvm::Value* m1 = b.CreateICmpEQ(y, llvm::Constant::getAllOnesValue(t));
  llvm::Value* bad = b.CreateOr(zero, m1);
  llvm::Value* q = b.CreateSDiv(x, b.CreateSelect(bad, llvm::ConstantInt::get(t, 1), y));
  q = b.CreateSelect(m1, b.CreateSub(llvm::Constant::getNullValue(t), x), q);
  return b.CreateSelect(zero, llvm::Constant::getNullValue(t), q);
}

llvm::Value* emit_srem(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  // y == -1 gives 0 (also for INT_MIN), as does the substituted divisor 1.
  llvm::Value* bad = b.CreateOr(b.CreateICmpEQ(y, llvm::Constant::getNullValue(t)),
                                b.CreateICmpEQ(y, llvm::Constant::getAllOnesValue(t)));
  return b.CreateSRem(x, b.CreateSelect(bad, llvm::ConstantInt::get(t, 1), y));
}

llvm::Value* emit_udiv(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  llvm::Value* zero = b.CreateICmpEQ(y, llvm::Constant::getNullValue(t));
  llvm::Value* q = b.CreateUDiv(x, b.CreateSelect(zero, llvm::ConstantInt::get(t, 1), y));
  return b.CreateSelect(zero, llvm::Constant::getNullValue(t), q);
}

llvm::Value* emit_urem(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  llvm::Value* zero = b.CreateICmpEQ(y, llvm::Constant::getNullValue(t));
  return b.CreateURem(x, b.CreateSelect(zero, llvm::ConstantInt::get(t, 1), y));
}

llvm::Value* emit_cdiv(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Value* n = b.CreateSub(b.CreateAdd(x, y), llvm::ConstantInt::get(x->getType(), 1));
  return emit_sdiv(b, n, y);
}

llvm::Value* emit_umulhi(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  unsigned w = x->getType()->getIntegerBitWidth();
  llvm::Type* wide = b.getIntNTy(2 * w);
  llvm::Value* p = b.CreateMul(b.CreateZExt(x, wide), b.CreateZExt(y, wide));
  return b.CreateTrunc(b.CreateLShr(p, w), x->getType());
}

llvm::Value* emit_shl(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  unsigned w = t->getIntegerBitWidth();
  llvm::Value* big = b.CreateICmpUGE(y, llvm::ConstantInt::get(t, w));
  llvm::Value* r = b.CreateShl(x, b.CreateAnd(y, llvm::ConstantInt::get(t, w - 1)));
  return b.CreateSelect(big, llvm::Constant::getNullValue(t), r);
}

llvm::Value* emit_lshr(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  unsigned w = t->getIntegerBitWidth();
  llvm::Value* big = b.CreateICmpUGE(y, llvm::ConstantInt::get(t, w));
  llvm::Value* r = b.CreateLShr(x, b.CreateAnd(y, llvm::ConstantInt::get(t, w - 1)));
  return b.CreateSelect(big, llvm::Constant::getNullValue(t), r);
}

llvm::Value* emit_ashr(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  unsigned w = t->getIntegerBitWidth();
  llvm::Value* big = b.CreateICmpUGE(y, llvm::ConstantInt::get(t, w));
  return b.CreateAShr(x, b.CreateSelect(big, llvm::ConstantInt::get(t, w - 1), y));
}

llvm::Value* emit_int_to_f64_for_narrow(llvm::IRBuilder<>& b, llvm::Value* x, bool is_signed) {
  llvm::Type* dt = b.getDoubleTy();
  unsigned w = x->getType()->getIntegerBitWidth();
  if (w < 64) return is_signed ? b.CreateSIToFP(x, dt) : b.CreateUIToFP(x, dt);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* neg = is_signed ? b.CreateICmpSLT(x, b.getInt64(0)) : b.getFalse();
  llvm::Value* mag = is_signed ? b.CreateSelect(neg, b.CreateSub(b.getInt64(0), x), x) : x;
  // Round to odd at 53 bits: truncate 11 bits and keep whether any was set in the last bit.
  llvm::Value* sticky = b.CreateZExt(b.CreateICmpNE(b.CreateAnd(mag, b.getInt64(0x7ff)), b.getInt64(0)), i64);
  llvm::Value* odd = b.CreateOr(b.CreateLShr(mag, 11), sticky);
  llvm::Value* big = b.CreateICmpUGE(mag, b.getInt64(uint64_t(1) << 53));
  llvm::Value* d = b.CreateSelect(big, b.CreateFMul(b.CreateUIToFP(odd, dt), llvm::ConstantFP::get(dt, 2048.0)),
                                  b.CreateUIToFP(mag, dt));
  return b.CreateSelect(neg, b.CreateFNeg(d), d);
}

}  // namespace tri::codegen
