// Target-independent LLVM IR for the per-element semantics of docs/ir.md: arithmetic, casts,
// math, the builtin combiners of reduce and scan, and one lane of an atomic. Every backend that
// lowers blocks to LLVM (the CPU's loops, the GPU's per-thread registers) emits elements through
// one ElemEmitter, so an op means the same thing on every target; what differs per target is
// behind three hooks: how small floats are decoded and encoded, and how a math function is
// computed (the host's libm, or Tri's own implementation on the GPU).
#include "codegen/elem_emitter.h"

#include <cassert>

#include "codegen/scalar_ops.h"

namespace tri::codegen {

using ir::Opcode;
using ir::OpId;
using ir::Scalar;

bool bool_attr(const ir::Function& f, OpId o, const char* name) {
  if (ir::op_info(f.op(o).code).attr_index(name) < 0) return false;
  const ir::Attr& a = f.attr(o, name);
  return a.present() && a.i;
}

int64_t enum_attr(const ir::Function& f, OpId o, const char* name) {
  // An op without the attribute (a `get` lowered as a `load`) has its first value, "none".
  if (ir::op_info(f.op(o).code).attr_index(name) < 0) return 0;
  const ir::Attr& a = f.attr(o, name);
  if (a.present()) return a.i;
  const ir::OpInfo& info = ir::op_info(f.op(o).code);
  const ir::AttrSpec& spec = info.attrs[info.attr_index(name)];
  for (size_t i = 0; i < spec.enum_values.size(); ++i)
    if (spec.enum_values[i] == spec.default_text) return static_cast<int64_t>(i);
  return -1;
}

std::string enum_name(const ir::Function& f, OpId o, const char* name) {
  int64_t i = enum_attr(f, o, name);
  if (i < 0) return std::string();
  const ir::OpInfo& info = ir::op_info(f.op(o).code);
  return info.attrs[info.attr_index(name)].enum_values[i];
}

llvm::Value* ElemEmitter::constant(const ir::Attr& a, EType e) {
  const double d = a.kind == ir::Attr::Kind::Float ? a.f : static_cast<double>(a.i);
  const int64_t i = a.kind == ir::Attr::Kind::Float ? static_cast<int64_t>(a.f) : a.i;
  if (ir::is_int(e.s)) {
    unsigned w = reg_ty(e)->getIntegerBitWidth();
    uint64_t mask = w == 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
    return llvm::ConstantInt::get(reg_ty(e), static_cast<uint64_t>(i) & mask);
  }
  // Small floats are their bits, rounded from the exact value (a constant folds to a constant).
  if (is_small_float(e.s)) return emit_to_small(b_, llvm::ConstantFP::get(b_.getDoubleTy(), d), e.s, false);
  return llvm::ConstantFP::get(reg_ty(e), d);
}

llvm::Type* ElemEmitter::reg_ty(EType e) const {
  return e.ptr ? llvm::PointerType::getUnqual(b_.getContext()) : reg_type(b_.getContext(), e.s);
}

llvm::Value* ElemEmitter::to_arith(llvm::Value* v, EType e) {
  return (!e.ptr && is_small_float(e.s)) ? decode(v, e.s) : v;
}

llvm::Value* ElemEmitter::from_arith(llvm::Value* v, EType e) {
  return (!e.ptr && is_small_float(e.s)) ? encode(v, e.s, false) : v;
}

llvm::Value* ElemEmitter::float_arith(EType e, const std::vector<llvm::Value*>& v,
                                     const std::function<llvm::Value*(const std::vector<llvm::Value*>&)>& f) {
  std::vector<llvm::Value*> a;
  for (llvm::Value* x : v) a.push_back(to_arith(x, e));
  llvm::Value* r = f(a);
  return r ? from_arith(r, e) : nullptr;
}

llvm::Value* ElemEmitter::scalar_op(const ir::Function& f, OpId o, EType ret, const std::vector<EType>& ets,
                                   const std::vector<llvm::Value*>& v) {
  const ir::OpData& op = f.op(o);
  EType e = ets.empty() ? ret : ets[0];
  const bool fl = !e.ptr && ir::is_float(e.s);
  const bool small = !e.ptr && is_small_float(e.s);
  auto& b = b_;
  using V = std::vector<llvm::Value*>;
  auto unary_intr = [&](llvm::Intrinsic::ID id) {
    return float_arith(e, v, [&](const V& a) { return b.CreateUnaryIntrinsic(id, a[0]); });
  };
  auto binary_intr = [&](llvm::Intrinsic::ID id) {
    return float_arith(e, v, [&](const V& a) { return b.CreateBinaryIntrinsic(id, a[0], a[1]); });
  };
  // approx=true on an op computed in f32 (f16 and bf16 compute in f32 too; f64 stays exact):
  // the backend's approximate version, "<name>.approx" (docs/ir.md, "Approximate math").
  auto approx_f32 = [&]() { return bool_attr(f, o, "approx") && e.s != Scalar::F64; };
  if (fl && (e.s == Scalar::F16 || e.s == Scalar::BF16) && !e.ptr &&
      (op.code == Opcode::Add || op.code == Opcode::Sub || op.code == Opcode::Mul))
    if (llvm::Value* r = half_arith(op.code, e.s, v[0], v[1])) return r;
  switch (op.code) {
    case Opcode::Add:
      return fl ? float_arith(e, v, [&](const V& a) { return b.CreateFAdd(a[0], a[1]); }) : b.CreateAdd(v[0], v[1]);
    case Opcode::Sub:
      return fl ? float_arith(e, v, [&](const V& a) { return b.CreateFSub(a[0], a[1]); }) : b.CreateSub(v[0], v[1]);
    case Opcode::Mul:
      return fl ? float_arith(e, v, [&](const V& a) { return b.CreateFMul(a[0], a[1]); }) : b.CreateMul(v[0], v[1]);
    case Opcode::Neg:
      if (small) {
        unsigned w = v[0]->getType()->getIntegerBitWidth();
        return b.CreateXor(v[0], llvm::ConstantInt::get(v[0]->getType(), uint64_t(1) << (w - 1)));
      }
      return fl ? b.CreateFNeg(v[0]) : b.CreateSub(llvm::Constant::getNullValue(v[0]->getType()), v[0]);
    case Opcode::Abs:
      if (small) {
        unsigned w = v[0]->getType()->getIntegerBitWidth();
        return b.CreateAnd(v[0], llvm::ConstantInt::get(v[0]->getType(), (uint64_t(1) << (w - 1)) - 1));
      }
      if (fl) return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v[0]);
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, v[0], b.getFalse());
    case Opcode::SDiv: return fl ? nullptr : emit_sdiv(b, v[0], v[1]);
    case Opcode::UDiv: return fl ? nullptr : emit_udiv(b, v[0], v[1]);
    case Opcode::SRem: return fl ? nullptr : emit_srem(b, v[0], v[1]);
    case Opcode::URem: return fl ? nullptr : emit_urem(b, v[0], v[1]);
    case Opcode::CDiv: return fl ? nullptr : emit_cdiv(b, v[0], v[1]);
    case Opcode::UMulHi: return fl ? nullptr : emit_umulhi(b, v[0], v[1]);
    case Opcode::And: return fl ? nullptr : b.CreateAnd(v[0], v[1]);
    case Opcode::Or: return fl ? nullptr : b.CreateOr(v[0], v[1]);
    case Opcode::Xor: return fl ? nullptr : b.CreateXor(v[0], v[1]);
    case Opcode::Shl: return fl ? nullptr : emit_shl(b, v[0], v[1]);
    case Opcode::LShr: return fl ? nullptr : emit_lshr(b, v[0], v[1]);
    case Opcode::AShr: return fl ? nullptr : emit_ashr(b, v[0], v[1]);
    case Opcode::SMin: return fl ? nullptr : b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, v[0], v[1]);
    case Opcode::SMax: return fl ? nullptr : b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, v[0], v[1]);
    case Opcode::UMin: return fl ? nullptr : b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, v[0], v[1]);
    case Opcode::UMax: return fl ? nullptr : b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, v[0], v[1]);
    case Opcode::FDiv:
      if (fl && approx_f32()) return float_arith(e, v, [&](const V& a) { return math_fn("div.approx", a); });
      return fl ? float_arith(e, v, [&](const V& a) { return b.CreateFDiv(a[0], a[1]); }) : nullptr;
    case Opcode::FRem: return fl ? math("fmod", e, v) : nullptr;
    case Opcode::FMin:
    case Opcode::FMax: {
      if (!fl) return nullptr;
      bool ignore = enum_attr(f, o, "nan") == 1;
      bool mx = op.code == Opcode::FMax;
      return binary_intr(ignore ? (mx ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum)
                                : (mx ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum));
    }
    case Opcode::Pow: return fl ? math("pow", e, v) : nullptr;
    case Opcode::Fma:
      return fl ? float_arith(e, v,
                              [&](const V& a) {
                                return b.CreateIntrinsic(llvm::Intrinsic::fma, {a[0]->getType()}, {a[0], a[1], a[2]});
                              })
                : nullptr;
    case Opcode::Exp:
      if (fl && approx_f32()) return float_arith(e, v, [&](const V& a) { return math_fn("exp.approx", a); });
      return fl ? math("exp", e, v) : nullptr;
    case Opcode::Exp2:
      // subnormal=flush: f32 results below 2^-126 are +0 (each backend's "exp2.flush"); f64 keeps them.
      if (fl && enum_attr(f, o, "subnormal") == 1)
        return float_arith(e, v, [&](const V& a) { return math_fn(a[0]->getType()->isFloatTy() ? "exp2.flush" : "exp2", a); });
      return fl ? math("exp2", e, v) : nullptr;
    case Opcode::Log: return fl ? math("log", e, v) : nullptr;
    case Opcode::Log2: return fl ? math("log2", e, v) : nullptr;
    case Opcode::Sin: return fl ? math("sin", e, v) : nullptr;
    case Opcode::Cos: return fl ? math("cos", e, v) : nullptr;
    case Opcode::Tanh: return fl ? math("tanh", e, v) : nullptr;
    case Opcode::Erf: return fl ? math("erf", e, v) : nullptr;
    case Opcode::Sqrt:
      if (fl && approx_f32()) return float_arith(e, v, [&](const V& a) { return math_fn("sqrt.approx", a); });
      return fl ? unary_intr(llvm::Intrinsic::sqrt) : nullptr;
    case Opcode::Rsqrt:
      if (fl && approx_f32()) return float_arith(e, v, [&](const V& a) { return math_fn("rsqrt.approx", a); });
      return fl ? float_arith(e, v,
                              [&](const V& a) {
                                llvm::Value* s = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]);
                                return b.CreateFDiv(llvm::ConstantFP::get(s->getType(), 1.0), s);
                              })
                : nullptr;
    case Opcode::Floor: return fl ? unary_intr(llvm::Intrinsic::floor) : nullptr;
    case Opcode::Ceil: return fl ? unary_intr(llvm::Intrinsic::ceil) : nullptr;
    case Opcode::MathCall: return fl ? math(f.attr(o, "name").s, e, v) : nullptr;
    case Opcode::Cmp: {
      static const llvm::CmpInst::Predicate preds[] = {
          llvm::CmpInst::ICMP_EQ,  llvm::CmpInst::ICMP_NE,  llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_SLE,
          llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_ULT, llvm::CmpInst::ICMP_ULE,
          llvm::CmpInst::ICMP_UGT, llvm::CmpInst::ICMP_UGE};
      int64_t p = enum_attr(f, o, "pred");
      if (fl || p < 0 || p >= 10) return nullptr;
      return b.CreateICmp(preds[p], v[0], v[1]);
    }
    case Opcode::FCmp: {
      static const llvm::CmpInst::Predicate preds[] = {
          llvm::CmpInst::FCMP_OEQ, llvm::CmpInst::FCMP_ONE, llvm::CmpInst::FCMP_OLT, llvm::CmpInst::FCMP_OLE,
          llvm::CmpInst::FCMP_OGT, llvm::CmpInst::FCMP_OGE, llvm::CmpInst::FCMP_ORD, llvm::CmpInst::FCMP_UEQ,
          llvm::CmpInst::FCMP_UNE, llvm::CmpInst::FCMP_ULT, llvm::CmpInst::FCMP_ULE, llvm::CmpInst::FCMP_UGT,
          llvm::CmpInst::FCMP_UGE, llvm::CmpInst::FCMP_UNO};
      int64_t p = enum_attr(f, o, "pred");
      if (!fl || p < 0 || p >= 14) return nullptr;
      return b.CreateFCmp(preds[p], to_arith(v[0], e), to_arith(v[1], e));
    }
    case Opcode::Select:
      return b.CreateSelect(v[0], v[1], v[2]);
    case Opcode::AddPtr: {
      llvm::Value* off = b.CreateSExtOrTrunc(v[1], b.getInt64Ty());
      return b.CreateGEP(mem_type(b_.getContext(), e.s), v[0], off);
    }
    case Opcode::Trunc: case Opcode::ZExt: case Opcode::SExt: case Opcode::FPTrunc: case Opcode::FPExt:
    case Opcode::FPToSI: case Opcode::FPToUI: case Opcode::SIToFP: case Opcode::UIToFP: case Opcode::Bitcast:
    case Opcode::PtrToInt: case Opcode::IntToPtr: {
      bool rtz = op.code == Opcode::FPTrunc && enum_attr(f, o, "rounding") == 1;
      return cast(op.code, v[0], ets[0], ret, rtz);
    }
    default:
      return nullptr;
  }
}

llvm::Value* ElemEmitter::float_cast(llvm::Value* v, Scalar from, Scalar to, bool rtz) {
  if (from == to) return v;
  llvm::Value* x = v;
  if (is_small_float(from)) {
    x = decode(v, from);
    from = Scalar::F32;
    if (from == to) return x;
  }
  if (to == Scalar::F32) return rtz ? emit_fptrunc_rtz(b_, x) : b_.CreateFPTrunc(x, b_.getFloatTy());
  if (to == Scalar::F64) return b_.CreateFPExt(x, b_.getDoubleTy());
  return encode(x, to, rtz);
}

llvm::Value* ElemEmitter::cast(Opcode code, llvm::Value* v, EType from, EType to, bool rtz) {
  llvm::Type* rt = reg_ty(to);
  switch (code) {
    case Opcode::Trunc: return b_.CreateTrunc(v, rt);
    case Opcode::ZExt: return b_.CreateZExt(v, rt);
    case Opcode::SExt: return b_.CreateSExt(v, rt);
    case Opcode::FPTrunc:
    case Opcode::FPExt:
      return float_cast(v, from.s, to.s, rtz);
    case Opcode::FPToSI:
    case Opcode::FPToUI: {
      llvm::Value* x = to_arith(v, from);
      if (rt->isIntegerTy(1)) {
        // Saturating to i1 ([-1, 0] signed, [0, 1] unsigned) is a compare; NVPTX miscompiles
        // the i1 forms of the saturating intrinsics.
        llvm::Value* one = llvm::ConstantFP::get(x->getType(), code == Opcode::FPToSI ? -1.0 : 1.0);
        return code == Opcode::FPToSI ? b_.CreateFCmpOLE(x, one) : b_.CreateFCmpOGE(x, one);
      }
      auto id = code == Opcode::FPToSI ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
      return b_.CreateIntrinsic(id, {rt, x->getType()}, {x});
    }
    case Opcode::SIToFP:
    case Opcode::UIToFP: {
      bool sign = code == Opcode::SIToFP;
      if (to.s == Scalar::F32 || to.s == Scalar::F64) return sign ? b_.CreateSIToFP(v, rt) : b_.CreateUIToFP(v, rt);
      return encode(emit_int_to_f64_for_narrow(b_, v, sign), to.s, false);
    }
    case Opcode::Bitcast:
      if (v->getType() == rt) return v;
      if (v->getType()->isPointerTy() || rt->isPointerTy()) return nullptr;
      return b_.CreateBitCast(v, rt);
    case Opcode::PtrToInt: return b_.CreatePtrToInt(v, rt);
    case Opcode::IntToPtr: return b_.CreateIntToPtr(v, rt);
    default: return nullptr;
  }
}

llvm::Value* ElemEmitter::math(const std::string& name, EType e, const std::vector<llvm::Value*>& v) {
  return float_arith(e, v, [&](const std::vector<llvm::Value*>& a) -> llvm::Value* {
    if (name == "trunc") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, a[0]);
    if (name == "round") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::round, a[0]);
    if (name == "copysign") return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, a[0], a[1]);
    if (e.s != Scalar::BF16) return math_fn(name, a);
    // A bf16 argument widens exactly, a signaling NaN staying signaling (docs/ir.md); the math
    // functions see it quiet, as from every other type, since some absorb a quiet NaN alone
    // (pow(1, NaN) = 1, hypot(inf, NaN) = inf).
    std::vector<llvm::Value*> q;
    for (llvm::Value* x : a) q.push_back(quiet_nan(b_, x));
    return math_fn(name, q);
  });
}

llvm::Value* ElemEmitter::builtin_combine(const std::string& kind, EType e, llvm::Value* a, llvm::Value* b) {
  const bool fl = ir::is_float(e.s);
  using V = std::vector<llvm::Value*>;
  if (kind == "sum")
    return fl ? float_arith(e, {a, b}, [&](const V& x) { return b_.CreateFAdd(x[0], x[1]); }) : b_.CreateAdd(a, b);
  if (kind == "prod")
    return fl ? float_arith(e, {a, b}, [&](const V& x) { return b_.CreateFMul(x[0], x[1]); }) : b_.CreateMul(a, b);
  if (kind == "max" || kind == "min") {
    bool mx = kind == "max";
    if (fl)
      return float_arith(e, {a, b}, [&](const V& x) {
        return b_.CreateBinaryIntrinsic(mx ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, x[0], x[1]);
      });
    return b_.CreateBinaryIntrinsic(mx ? llvm::Intrinsic::smax : llvm::Intrinsic::smin, a, b);
  }
  if (fl) return nullptr;
  if (kind == "umax") return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, a, b);
  if (kind == "umin") return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, a, b);
  if (kind == "and") return b_.CreateAnd(a, b);
  if (kind == "or") return b_.CreateOr(a, b);
  if (kind == "xor") return b_.CreateXor(a, b);
  return nullptr;
}

llvm::AtomicOrdering atomic_ordering(int64_t i) {
  switch (i) {
    case 0: return llvm::AtomicOrdering::Monotonic;
    case 1: return llvm::AtomicOrdering::Acquire;
    case 2: return llvm::AtomicOrdering::Release;
    default: return llvm::AtomicOrdering::AcquireRelease;
  }
}
llvm::AtomicOrdering atomic_failure_ordering(llvm::AtomicOrdering o) {
  switch (o) {
    case llvm::AtomicOrdering::Acquire:
    case llvm::AtomicOrdering::AcquireRelease:
      return llvm::AtomicOrdering::Acquire;
    default:
      return llvm::AtomicOrdering::Monotonic;
  }
}

llvm::Value* ElemEmitter::atomic_lane(const ir::Function& f, OpId o, llvm::Value* p, llvm::Value* val, EType e) {
  llvm::AtomicOrdering ord = atomic_ordering(enum_attr(f, o, "order"));
  llvm::MaybeAlign align(elem_bytes(e));
  assert(f.op(o).code == Opcode::Atomic);
  std::string kind = enum_name(f, o, "kind");
  const bool fl = ir::is_float(e.s);
  const bool small = is_small_float(e.s);
  if (!fl) {
    llvm::Value* x = e.s == Scalar::I1 ? b_.CreateZExt(val, b_.getInt8Ty()) : val;
    llvm::AtomicRMWInst::BinOp bop;
    if (kind == "add") bop = llvm::AtomicRMWInst::Add;
    else if (kind == "min") bop = llvm::AtomicRMWInst::Min;
    else if (kind == "max") bop = llvm::AtomicRMWInst::Max;
    else if (kind == "umin") bop = llvm::AtomicRMWInst::UMin;
    else if (kind == "umax") bop = llvm::AtomicRMWInst::UMax;
    else if (kind == "and") bop = llvm::AtomicRMWInst::And;
    else if (kind == "or") bop = llvm::AtomicRMWInst::Or;
    else if (kind == "xor") bop = llvm::AtomicRMWInst::Xor;
    else bop = llvm::AtomicRMWInst::Xchg;
    llvm::Value* r = b_.CreateAtomicRMW(bop, p, x, align, ord);
    return e.s == Scalar::I1 ? b_.CreateICmpNE(r, b_.getInt8(0)) : r;
  }
  if (kind == "xchg") {
    return b_.CreateAtomicRMW(llvm::AtomicRMWInst::Xchg, p, val, align, ord);
  }
  if (kind == "add" && (e.s == Scalar::F64 || (e.s == Scalar::F32 && atomic_fadd_f32_flushes()))) {
    return b_.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd, p, val, align, ord);
  }
  // Everything else is a compare-and-swap loop on the bits: small-float arithmetic (computed in
  // f32 and rounded, like any other op on the type), f32 add where the target's own does not
  // flush (it flushes subnormal operands
  // and results to sign-preserving zero, as the GPU's atom.add.f32 does: docs/ir.md, "Atomics")
  // and float min/max (IEEE minimum/maximum).
  auto flush = [&](llvm::Value* x) -> llvm::Value* {
    llvm::Value* tiny = b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                                         llvm::ConstantFP::get(x->getType(), 0x1p-126));
    llvm::Value* zero = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, llvm::ConstantFP::get(x->getType(), 0.0), x);
    return b_.CreateSelect(tiny, zero, x);
  };
  llvm::Type* it = b_.getIntNTy(elem_bytes(e) * 8);
  auto combine = [&](llvm::Value* old_bits) -> llvm::Value* {
    llvm::Value* old = small ? old_bits : b_.CreateBitCast(old_bits, reg_ty(e));
    llvm::Value* r;
    if (kind == "add" && e.s == Scalar::F32) {
      r = flush(b_.CreateFAdd(flush(old), flush(val)));
    } else if (kind == "add") {
      r = float_arith(e, {old, val}, [&](const std::vector<llvm::Value*>& a) { return b_.CreateFAdd(a[0], a[1]); });
    } else if (kind == "min" || kind == "max") {
      auto id = kind == "min" ? llvm::Intrinsic::minimum : llvm::Intrinsic::maximum;
      r = float_arith(e, {old, val},
                      [&](const std::vector<llvm::Value*>& a) { return b_.CreateBinaryIntrinsic(id, a[0], a[1]); });
    } else {
      llvm::Value* ob = old_bits;
      llvm::Value* vb = small ? val : b_.CreateBitCast(val, it);
      if (kind == "and") r = b_.CreateAnd(ob, vb);
      else if (kind == "or") r = b_.CreateOr(ob, vb);
      else if (kind == "xor") r = b_.CreateXor(ob, vb);
      else if (kind == "umin") r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, ob, vb);
      else r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, ob, vb);
      return r;
    }
    return small ? r : b_.CreateBitCast(r, it);
  };
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::LoadInst* init = b_.CreateAlignedLoad(it, p, *align);
  init->setAtomic(llvm::AtomicOrdering::Monotonic);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(b_.getContext(), "cas", b_.GetInsertBlock()->getParent());
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b_.getContext(), "cas.end", b_.GetInsertBlock()->getParent());
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* old = b_.CreatePHI(it, 2);
  old->addIncoming(init, pre);
  llvm::Value* nv = combine(old);
  llvm::Value* pair = b_.CreateAtomicCmpXchg(p, old, nv, align, ord, atomic_failure_ordering(ord));
  llvm::Value* cur = b_.CreateExtractValue(pair, 0);
  llvm::Value* ok = b_.CreateExtractValue(pair, 1);
  old->addIncoming(cur, b_.GetInsertBlock());
  b_.CreateCondBr(ok, done, loop);
  b_.SetInsertPoint(done);
  return small ? static_cast<llvm::Value*>(old) : b_.CreateBitCast(old, reg_ty(e));
}


}  // namespace tri::codegen
