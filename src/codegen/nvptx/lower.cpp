// Lowering of specialized block IR to LLVM IR for NVPTX (lower.h is the entry point; lower_impl.h
// says how values are represented). This file holds the core: kernel setup, values and layouts,
// conversions, the op dispatch, elementwise and shape ops.
#include "codegen/nvptx/lower.h"

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>

#include "codegen/mathlib/mathlib.h"
#include "codegen/nvptx/lower_impl.h"
#include "codegen/scalar_ops.h"
#include "codegen/vec_math.h"
#include "passes/axis_info.h"

namespace tri::codegen::nvptx {
namespace detail {

// ---------------------------------------------------------------------------------------------
// Element hooks: small floats through the integer-only conversions every backend shares (so NaN
// payloads and rounding are the interpreter's), math from Tri's own implementations.

llvm::Value* GpuElemEmitter::decode(llvm::Value* bits, Scalar s) {
  // f16 widens with one instruction (cvt.f32.f16, which quiets a signaling NaN as every
  // conversion does), bf16 with one shift (exact, a signaling NaN staying signaling: docs/ir.md),
  // the f8 formats through the integer code every backend shares.
  if (s == Scalar::F16) return b_.CreateFPExt(b_.CreateBitCast(bits, b_.getHalfTy()), b_.getFloatTy());
  return emit_small_to_f32(b_, bits, s);
}

llvm::Value* GpuElemEmitter::half_arith(Opcode code, Scalar s, llvm::Value* a, llvm::Value* b) {
  if (s == Scalar::BF16 && sm_ < 90) return nullptr;
  llvm::Type* t = s == Scalar::F16 ? b_.getHalfTy() : b_.getBFloatTy();
  llvm::Value* x = b_.CreateBitCast(a, t);
  llvm::Value* y = b_.CreateBitCast(b, t);
  llvm::Value* r = code == Opcode::Add ? b_.CreateFAdd(x, y) : code == Opcode::Sub ? b_.CreateFSub(x, y) : b_.CreateFMul(x, y);
  return b_.CreateBitCast(r, a->getType());
}

llvm::Value* GpuElemEmitter::encode(llvm::Value* x, Scalar s, bool rtz) {
  // Round-to-nearest-even narrowing is one cvt.rn instruction for f16 (from f32 or f64) and for
  // bf16 from f32 on sm_80+; rtz, the f8 formats and f64 -> bf16 (which would round twice
  // through f32) use the shared integer code. NaNs come out as the hardware's canonical NaN:
  // the IR leaves NaN payloads unspecified.
  if (!rtz && s == Scalar::F16) return b_.CreateBitCast(b_.CreateFPTrunc(x, b_.getHalfTy()), b_.getInt16Ty());
  if (!rtz && s == Scalar::BF16 && sm_ >= 80 && x->getType()->isFloatTy())
    return b_.CreateBitCast(b_.CreateFPTrunc(x, b_.getBFloatTy()), b_.getInt16Ty());
  return emit_to_small(b_, x, s, rtz);
}

// e^x on f32 is 2^hi * 2^lo with hi + lo = x log2(e) split exactly by FMA (hi alone would cost up to
// ~60 ulp near the ends of the range): 2^hi from the same instruction, 2^lo as 1 + lo ln2
// (|lo| < 2^-16), rounded, then one product. x is first clamped to [-104, 89], past which the
// result is 0 or inf anyway, with NaN-propagating min/max (so the product never meets inf * 0
// and NaN stays NaN). 10 instructions and one MUFU; 3 ulp at most over every f32 input
// (bench/gpu/ulp_sweep.py, on the GPU). Used inside tanh; the `exp` op itself calls the math
// library's expf (0.9 ulp: docs/ir.md's bound for exp is libdevice's 2).
//
// `nonnegative`: x is known to be >= 0 or NaN (tanh's e^(2|x|)), so the result is >= 1 and never
// subnormal: no lower clamp, and the flush-to-zero ex2, which needs none of the subnormal
// scaling ptxas wraps around the plain one (a subnormal hi flushed to 0 gives 1, as it should).
llvm::Value* emit_exp_f32_gpu(llvm::IRBuilder<>& b, llvm::Value* x, bool nonnegative = false) {
  llvm::Type* f32 = b.getFloatTy();
  auto cf = [&](double v) { return llvm::ConstantFP::get(f32, v); };
  llvm::Value* xc = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::minimum, nonnegative ? x : b.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, cf(-104.0)),
      cf(89.0));
  const double l_hi = static_cast<float>(1.4426950408889634), l_lo = 1.4426950408889634 - l_hi;
  llvm::Value* hi = b.CreateFMul(xc, cf(l_hi));
  llvm::Value* lo = b.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {xc, cf(l_hi), b.CreateFNeg(hi)});
  lo = b.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {xc, cf(static_cast<float>(l_lo)), lo});
  llvm::Value* y = b.CreateIntrinsic(
      nonnegative ? llvm::Intrinsic::nvvm_ex2_approx_ftz_f : llvm::Intrinsic::nvvm_ex2_approx_f, {}, {hi});
  llvm::Value* c = b.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {lo, cf(0.693147180559945309), cf(1.0)});
  return b.CreateFMul(y, c);
}

// tanh on f32: below |x| = 0.625 the odd polynomial of vec_math.cpp (Cephes' coefficients)
// evaluated with FMAs; above it 1 - 2 / (e^(2|x|) + 1) with e^(2|x|) from emit_exp_f32_gpu and
// the quotient from one rcp.approx plus a Newton step (two FMAs) instead of a correctly rounded
// division, which costs a dozen instructions and a slow-path branch per element. The sign is
// x's, NaN stays NaN, |x| >= 20 gives exactly 1. bench/gpu/ulp_sweep.py measures every f32 input
// against float64 (docs/ir.md's bound is 4 ulp).
llvm::Value* emit_tanh_f32_gpu(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* i32 = b.getInt32Ty();
  auto cf = [&](double v) { return llvm::ConstantFP::get(f32, v); };
  auto fma = [&](llvm::Value* p, llvm::Value* q, llvm::Value* r) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {p, q, r});
  };
  llvm::Value* bits = b.CreateBitCast(x, i32);
  llvm::Value* sign = b.CreateAnd(bits, b.getInt32(0x80000000u));
  llvm::Value* ax = b.CreateBitCast(b.CreateAnd(bits, b.getInt32(0x7fffffffu)), f32);
  // Past |x| = 20 tanh rounds to 1; the clamp keeps e^(2|x|) finite (at inf the Newton step
  // would make inf * 0 = NaN).
  llvm::Value* axc = b.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, ax, cf(20.0));
  llvm::Value* e = emit_exp_f32_gpu(b, b.CreateFAdd(axc, axc), /*nonnegative=*/true);
  llvm::Value* d = b.CreateFAdd(e, cf(1.0));
  llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::nvvm_rcp_approx_ftz_f, {}, {d});
  r = fma(r, fma(b.CreateFNeg(d), r, cf(1.0)), r);
  llvm::Value* big = b.CreateFSub(cf(1.0), b.CreateFMul(r, cf(2.0)));
  llvm::Value* z = b.CreateFMul(ax, ax);
  llvm::Value* p = cf(-5.70498872745E-3);
  for (double c : {2.06390887954E-2, -5.37397155531E-2, 1.33314422036E-1, -3.33332819422E-1}) p = fma(p, z, cf(c));
  llvm::Value* small = fma(b.CreateFMul(p, z), ax, ax);
  llvm::Value* mag = b.CreateSelect(b.CreateFCmpOLT(ax, cf(0.625)), small, big);
  llvm::Value* t = b.CreateBitCast(b.CreateOr(b.CreateBitCast(mag, i32), sign), f32);
  return keep_nan(b, x, t);
}

llvm::Value* GpuElemEmitter::math_fn(const std::string& name, const std::vector<llvm::Value*>& a) {
  const bool f32 = a[0]->getType()->isFloatTy();
  if (f32) {
    // 2^x is one ex2.approx.f32, without .ftz: within 2 ulp over the whole range, subnormal
    // results included (ptxas adds the scaling that keeps them), -inf -> +0, +inf -> +inf, NaN
    // -> NaN (docs/ir.md asks for 4 ulp; bench/gpu/ulp_sweep.py measures every f32 input).
    if (name == "exp2") return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {a[0]});
    // exp2[subnormal=flush]: the flushing instruction alone (its inputs are flushed too, which
    // changes nothing: 2^x of a subnormal x rounds to 1).
    if (name == "exp2.flush") return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {a[0]});
    // approx=true (docs/ir.md, "Approximate math"): the instructions Triton's NVIDIA backend uses
    // for its default `/`, sqrt, rsqrt and exp, so that kernels imported from it compute what it
    // computes, at its cost.
    if (name == "div.approx") {  // full-range, 2 ulp; no intrinsic in LLVM 19
      auto* ty = llvm::FunctionType::get(b_.getFloatTy(), {b_.getFloatTy(), b_.getFloatTy()}, false);
      llvm::CallInst* q = b_.CreateCall(llvm::InlineAsm::get(ty, "div.full.f32 $0, $1, $2;", "=f,f,f", false), {a[0], a[1]});
      q->setDoesNotAccessMemory();
      q->setDoesNotThrow();
      return q;
    }
    if (name == "sqrt.approx") return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_sqrt_approx_ftz_f, {}, {a[0]});
    if (name == "rsqrt.approx") return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_rsqrt_approx_ftz_f, {}, {a[0]});
    if (name == "exp.approx") {  // 2^(x log2 e), the product rounded once
      llvm::Value* t = b_.CreateFMul(a[0], llvm::ConstantFP::get(b_.getFloatTy(), 1.4426950408889634));
      return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {t});
    }
    if (name == "tanh") return emit_tanh_f32_gpu(b_, a[0]);
  }
  // Everything else calls Tri's math library (src/codegen/mathlib), linked into the module by
  // lower_kernel and inlined by the optimizer.
  std::string fn = mathlib::function_name(name, f32);
  if (fn.empty()) {
    missing = name + (f32 ? " on f32" : " on f64");
    return nullptr;
  }
  llvm::Module* mod = b_.GetInsertBlock()->getModule();
  std::vector<llvm::Type*> tys(a.size(), a[0]->getType());
  llvm::FunctionCallee callee = mod->getOrInsertFunction(fn, llvm::FunctionType::get(a[0]->getType(), tys, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
    f->setWillReturn();
  }
  return b_.CreateCall(callee, a);
}

// ---------------------------------------------------------------------------------------------
// Setup

GpuLowering::GpuLowering(const ir::Module& m, const ir::Function& kernel, const GpuOptions& opt, llvm::LLVMContext& c,
                         llvm::Module* mod)
    : m_(m), kernel_(kernel), opt_(opt), c_(c), mod_(mod), b_(c), em_(b_, opt.sm) {}

GpuLowering::~GpuLowering() = default;

const passes::AxisInfoAnalysis* GpuLowering::axis() const {
  auto it = axis_.find(f_);
  return it == axis_.end() ? nullptr : it->second.get();
}

Status GpuLowering::error(OpId o, Code code, const std::string& what) const {
  return error_at(code, m_.source_name, f_->op(o).loc, what);
}

EType GpuLowering::etype(TypeId t) const {
  const ir::TypeData& td = m_.types.get(t);
  TypeId et = td.kind == ir::TypeKind::Block ? td.elem : t;
  const ir::TypeData& ed = m_.types.get(et);
  if (ed.kind == ir::TypeKind::Ptr) return EType{true, m_.types.get(ed.pointee).scalar};
  return EType{false, ed.scalar};
}

Shape GpuLowering::shape(TypeId t) const {
  Shape s;
  if (!m_.types.is_block(t)) return s;
  for (const ir::Dim& d : m_.types.get(t).dims) s.push_back(d.value);
  return s;
}

Val GpuLowering::scalar(llvm::Value* v, EType e) const {
  Val r;
  r.kind = Val::Kind::Scalar;
  r.et = e;
  r.s = v;
  return r;
}

Val GpuLowering::lazy(EType e, Shape s, Gen g) const {
  Val r;
  r.kind = Val::Kind::Lazy;
  r.et = e;
  r.shape = std::move(s);
  r.gen = std::make_shared<const Gen>(std::move(g));
  return r;
}

Val GpuLowering::dist(EType e, Layout l, std::vector<llvm::Value*> regs) const {
  Val r;
  r.kind = Val::Kind::Dist;
  r.et = e;
  r.shape = l.shape;
  r.lay = std::move(l);
  r.regs = std::move(regs);
  return r;
}

Layout GpuLowering::default_layout(const Shape& s, EType e, const std::vector<int>& order) const {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  int vec = std::max(1, 16 / elem_bytes(e));
  vec = static_cast<int>(std::min<int64_t>(vec, std::max<int64_t>(1, n / threads())));
  return blocked(s, order.empty() ? row_major(static_cast<int>(s.size())) : order, vec, opt_.num_warps);
}

llvm::Type* GpuLowering::mem_ty(EType e) const {
  return e.ptr ? llvm::PointerType::getUnqual(c_) : mem_type(c_, e.s);
}

llvm::Value* GpuLowering::to_mem(llvm::Value* v, EType e) {
  return e.ptr ? v : codegen::to_mem(b_, v, e.s);
}

llvm::Value* GpuLowering::from_mem(llvm::Value* v, EType e) {
  return e.ptr ? v : codegen::from_mem(b_, v, e.s);
}

Coord GpuLowering::coords(const Layout& l, int64_t r) {
  std::string key = l.str();
  auto it = thread_coords_.find(key);
  if (it == thread_coords_.end()) {
    // The thread's part, computed once in the entry block (it dominates every use).
    llvm::IRBuilder<> eb(entry_->getTerminator());
    Coord t;
    for (int d = 0; d < l.rank(); ++d) {
      llvm::Value* acc = eb.getInt32(0);
      auto add_bits = [&](const std::vector<Basis>& bs, llvm::Value* id) {
        for (size_t i = 0; i < bs.size(); ++i) {
          if (bs[i][d] == 0) continue;
          llvm::Value* bit = eb.CreateAnd(eb.CreateLShr(id, i), 1);
          acc = eb.CreateOr(acc, eb.CreateMul(bit, eb.getInt32(static_cast<uint32_t>(bs[i][d]))));
        }
      };
      add_bits(l.lane, lane_);
      add_bits(l.warp, warp_);
      t.push_back(acc);
    }
    it = thread_coords_.emplace(key, std::move(t)).first;
  }
  Basis rc = l.reg_coord(r);
  Coord c;
  for (int d = 0; d < l.rank(); ++d)
    c.push_back(rc[d] ? b_.CreateOr(it->second[d], b_.getInt32(static_cast<uint32_t>(rc[d]))) : it->second[d]);
  return c;
}

llvm::Value* GpuLowering::linear(const Coord& c, const Shape& s) {
  llvm::Value* lin = b_.getInt32(0);
  for (size_t d = 0; d < s.size(); ++d) lin = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(static_cast<uint32_t>(s[d]))), c[d]);
  return lin;
}

llvm::Value* GpuLowering::owner(const Layout& l) {
  uint32_t lm = replicated_lane_mask(l), wm = replicated_warp_mask(l);
  llvm::Value* ok = b_.getTrue();
  if (lm) ok = b_.CreateICmpEQ(b_.CreateAnd(lane_, lm), b_.getInt32(0));
  if (wm) ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(warp_, wm), b_.getInt32(0)));
  return ok;
}

llvm::Value* GpuLowering::smem_ptr(llvm::Value* off) {
  return b_.CreateGEP(b_.getInt8Ty(), smem_, off);
}

void GpuLowering::barrier() {
  // A one-warp program synchronizes its lanes with a warp barrier, which also orders their
  // shared-memory accesses (PTX ISA, bar.warp.sync) and costs less than the CTA barrier (fla's
  // one-warp kernels exchange layouts through shared memory hundreds of times).
  if (opt_.num_warps == 1) {
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {b_.getInt32(0xffffffffu)});
    return;
  }
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

llvm::CallInst* GpuLowering::inline_asm(const std::string& text, const std::string& cons, llvm::Type* ret,
                                        const std::vector<llvm::Value*>& args, bool pure) {
  std::vector<llvm::Type*> tys;
  for (llvm::Value* a : args) tys.push_back(a->getType());
  llvm::FunctionType* ft = llvm::FunctionType::get(ret, tys, false);
  return b_.CreateCall(llvm::InlineAsm::get(ft, text, cons, /*hasSideEffects=*/!pure), args);
}

void GpuLowering::emit_if(llvm::Value* cond, const std::function<void()>& then) {
  if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(cond)) {
    if (k->isOne()) then();
    return;
  }
  llvm::BasicBlock* tb = llvm::BasicBlock::Create(c_, "then", lf_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "endif", lf_);
  b_.CreateCondBr(cond, tb, done);
  b_.SetInsertPoint(tb);
  then();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

namespace {
// Shuffles move 32-bit registers: wider values go in pieces, narrower ones widened.
template <typename F>
llvm::Value* shuffle32(llvm::IRBuilder<>& b, llvm::Value* v, F&& one) {
  llvm::Type* t = v->getType();
  const llvm::DataLayout dl("");
  if (t->isPointerTy()) return b.CreateIntToPtr(shuffle32(b, b.CreatePtrToInt(v, b.getInt64Ty()), one), t);
  unsigned bits = t->getPrimitiveSizeInBits();
  if (bits == 64) {
    llvm::Value* i = t->isIntegerTy() ? v : b.CreateBitCast(v, b.getInt64Ty());
    llvm::Value* lo = one(b.CreateTrunc(i, b.getInt32Ty()));
    llvm::Value* hi = one(b.CreateTrunc(b.CreateLShr(i, 32), b.getInt32Ty()));
    llvm::Value* r = b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()), b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
    return t->isIntegerTy() ? r : b.CreateBitCast(r, t);
  }
  if (bits == 32) {
    llvm::Value* i = t->isIntegerTy() ? v : b.CreateBitCast(v, b.getInt32Ty());
    llvm::Value* r = one(i);
    return t->isIntegerTy() ? r : b.CreateBitCast(r, t);
  }
  llvm::Value* w = t->isIntegerTy() ? b.CreateZExt(v, b.getInt32Ty())
                                    : b.CreateZExt(b.CreateBitCast(v, b.getIntNTy(bits)), b.getInt32Ty());
  llvm::Value* r = b.CreateTrunc(one(w), b.getIntNTy(bits));
  return t->isIntegerTy() ? r : b.CreateBitCast(r, t);
}
}  // namespace

llvm::Value* GpuLowering::shfl_xor(llvm::Value* v, int mask) {
  return shuffle32(b_, v, [&](llvm::Value* x) {
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                              {b_.getInt32(0xffffffffu), x, b_.getInt32(mask), b_.getInt32(0x1f)});
  });
}

llvm::Value* GpuLowering::shfl_up(llvm::Value* v, int delta, int width) {
  // c = segment mask << 8 | clamp (0 for up): lanes read within their segment of `width`.
  int c = ((32 - width) << 8);
  return shuffle32(b_, v, [&](llvm::Value* x) {
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_up_i32, {},
                              {b_.getInt32(0xffffffffu), x, b_.getInt32(delta), b_.getInt32(c)});
  });
}

llvm::Value* GpuLowering::shfl_down(llvm::Value* v, int delta, int width) {
  int c = ((32 - width) << 8) | 0x1f;
  return shuffle32(b_, v, [&](llvm::Value* x) {
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_down_i32, {},
                              {b_.getInt32(0xffffffffu), x, b_.getInt32(delta), b_.getInt32(c)});
  });
}

llvm::Value* GpuLowering::shfl_idx(llvm::Value* v, llvm::Value* src_lane) {
  return shuffle32(b_, v, [&](llvm::Value* x) {
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                              {b_.getInt32(0xffffffffu), x, src_lane, b_.getInt32(0x1f)});
  });
}

// ---------------------------------------------------------------------------------------------
// Conversions

std::vector<llvm::Value*> GpuLowering::convert(const Val& v, const Layout& to, const std::vector<bool>& proj) {
  std::vector<int64_t> map;
  if (v.bcast_src) {
    std::vector<bool> p = proj;
    for (size_t d = 0; d < p.size() && d < v.bcast_proj.size(); ++d) p[d] = p[d] || v.bcast_proj[d];
    if (register_map(v.bcast_src->lay, to, p, &map)) {
      std::vector<llvm::Value*> out;
      for (int64_t r : map) out.push_back(v.bcast_src->regs[r]);
      return out;
    }
    // Otherwise move the source, not the broadcast block: to the layout it needs for `to` to
    // take its registers (a reload of a row, or an exchange of the row alone through shared
    // memory, instead of the whole broadcast tile), then spread it.
    const Layout small = unbroadcast(to, p);
    if (small.shape == v.bcast_src->shape && register_map(small, to, p, &map)) {
      const std::vector<llvm::Value*> src =
          small == v.bcast_src->lay ? v.bcast_src->regs : regs_in(*v.bcast_src, small);
      std::vector<llvm::Value*> out;
      for (int64_t r : map) out.push_back(src[r]);
      return out;
    }
  }
  if (register_map(v.lay, to, proj, &map)) {
    std::vector<llvm::Value*> out;
    for (int64_t r : map) out.push_back(v.regs[r]);
    return out;
  }
  if (v.remat && v.epoch == mem_epoch_ && std::none_of(proj.begin(), proj.end(), [](bool p) { return p; }))
    return (*v.remat)(to);
  // Through shared memory: the owners write every element at its row-major index, then each
  // thread reads what its registers need, both in runs of consecutive elements along the last
  // dimension where the layouts hold them (up to 16 bytes per access). The barrier before the
  // writes keeps readers of the previous use of the scratch from seeing them.
  // Rows of a multiple of 128 bytes are padded by 16 bytes: a tensor-core accumulator's
  // accesses (8 rows x 16 bytes per warp) then fall in 32 different banks instead of 4 (an
  // 8-way conflict), rows stay 16-byte aligned for vector accesses, and an address is still the
  // thread's part plus a constant per register (an XOR swizzle would cost instructions per
  // access).
  const int eb = elem_bytes(v.et);
  int64_t n = 1;
  for (int64_t d : v.lay.shape) n *= d;
  const int last = v.lay.rank() - 1;
  const int64_t row_elems = last >= 0 ? v.lay.shape[static_cast<size_t>(last)] : 1;
  const bool pad = last >= 1 && (row_elems * eb) % 128 == 0;
  need_smem(static_cast<uint64_t>(n) * eb + (pad ? static_cast<uint64_t>(n / row_elems) * 16 : 0));
  llvm::Type* mt = mem_ty(v.et);
  // A byte offset is linear in the coordinates (byte strides per dimension, the padding in the
  // row stride): the thread's part (computed once per layout) plus a constant per register,
  // which ptxas folds into the access.
  std::vector<int64_t> stride(v.lay.shape.size(), eb);
  for (int d = last - 1; d >= 0; --d)
    stride[static_cast<size_t>(d)] = stride[static_cast<size_t>(d) + 1] * v.lay.shape[static_cast<size_t>(d) + 1] +
                                     (pad && d == last - 1 ? 16 : 0);
  auto const_offset = [&](const Basis& c) {
    int64_t off = 0;
    for (size_t d = 0; d < c.size(); ++d) off += c[d] * stride[d];
    return off;
  };
  auto thread_offset = [&](const Layout& l, const std::vector<bool>& zero) {
    const Coord c = coords(l, 0);
    llvm::Value* off = b_.getInt32(0);
    for (size_t d = 0; d < c.size(); ++d)
      if (!zero[d]) off = b_.CreateAdd(off, b_.CreateMul(c[d], b_.getInt32(static_cast<uint32_t>(stride[d]))));
    return off;
  };
  auto offset = [&](llvm::Value* thread_off, const Layout& l, int64_t r, const std::vector<bool>& zero) {
    Basis c = l.reg_coord(r);
    for (size_t d = 0; d < c.size(); ++d)
      if (zero[d]) c[d] = 0;
    const int64_t k = const_offset(c);
    return k ? b_.CreateAdd(thread_off, b_.getInt32(static_cast<uint32_t>(k))) : thread_off;
  };
  // Elements per access: the low register bits that step along the last dimension by 1, 2, 4...
  auto run = [&](const Layout& l, uint64_t dup) {
    int w = 1;
    for (size_t bit = 0; bit < l.reg.size() && w * 2 * eb <= 16 && !(dup >> bit & 1); ++bit, w *= 2) {
      Basis unit(static_cast<size_t>(l.rank()), 0);
      unit[static_cast<size_t>(last)] = w;
      if (l.reg[bit] != unit) break;
    }
    return w;
  };
  barrier();
  const uint64_t dup = replicated_reg_mask(v.lay);
  const int ww = last >= 0 && !v.et.ptr ? run(v.lay, dup) : 1;
  emit_if(owner(v.lay), [&] {
    const std::vector<bool> keep(v.lay.shape.size(), false);
    llvm::Value* base = thread_offset(v.lay, keep);
    for (int64_t r = 0; r < v.lay.nregs(); r += ww) {
      if (r & dup) continue;
      llvm::Value* off = offset(base, v.lay, r, keep);
      if (ww == 1) {
        b_.CreateAlignedStore(to_mem(v.regs[r], v.et), smem_ptr(off), llvm::Align(eb));
        continue;
      }
      llvm::Value* x = llvm::PoisonValue::get(llvm::FixedVectorType::get(mt, static_cast<unsigned>(ww)));
      for (int i = 0; i < ww; ++i) x = b_.CreateInsertElement(x, to_mem(v.regs[r + i], v.et), i);
      b_.CreateAlignedStore(x, smem_ptr(off), llvm::Align(eb * ww));
    }
  });
  barrier();
  const int rw = last >= 0 && !v.et.ptr && !proj[static_cast<size_t>(last)] ? run(to, 0) : 1;
  std::vector<llvm::Value*> out;
  llvm::Value* base = thread_offset(to, proj);
  for (int64_t r = 0; r < to.nregs(); r += rw) {
    llvm::Value* off = offset(base, to, r, proj);
    if (rw == 1) {
      out.push_back(from_mem(b_.CreateAlignedLoad(mt, smem_ptr(off), llvm::Align(eb)), v.et));
      continue;
    }
    llvm::Type* vt = llvm::FixedVectorType::get(mt, static_cast<unsigned>(rw));
    llvm::Value* x = b_.CreateAlignedLoad(vt, smem_ptr(off), llvm::Align(eb * rw));
    for (int i = 0; i < rw; ++i) out.push_back(from_mem(b_.CreateExtractElement(x, static_cast<uint64_t>(i)), v.et));
  }
  return out;
}

// The cases of convert() before its shared-memory exchange, without emitting anything.
bool GpuLowering::exchanges(const Val& v, const Layout& to) {
  if (v.kind != Val::Kind::Dist || v.lay == to) return false;
  const std::vector<bool> none(static_cast<size_t>(to.rank()), false);
  std::vector<int64_t> map;
  if (v.bcast_src) {
    std::vector<bool> p = none;
    for (size_t d = 0; d < p.size() && d < v.bcast_proj.size(); ++d) p[d] = v.bcast_proj[d];
    if (register_map(v.bcast_src->lay, to, p, &map)) return false;
    const Layout small = unbroadcast(to, p);
    if (small.shape == v.bcast_src->shape && register_map(small, to, p, &map))
      return !(small == v.bcast_src->lay) && exchanges(*v.bcast_src, small);
  }
  if (register_map(v.lay, to, none, &map)) return false;
  return !(v.remat && v.epoch == mem_epoch_);
}

std::vector<llvm::Value*> GpuLowering::regs_in(const Val& v, const Layout& l) {
  switch (v.kind) {
    case Val::Kind::Scalar:
      return std::vector<llvm::Value*>(l.nregs(), v.s);
    case Val::Kind::Lazy: {
      std::vector<llvm::Value*> out;
      for (int64_t r = 0; r < l.nregs(); ++r) out.push_back((*v.gen)(coords(l, r)));
      return out;
    }
    case Val::Kind::Dist:
      if (v.lay == l) return v.regs;
      return convert(v, l, std::vector<bool>(l.rank(), false));
    case Val::Kind::Smem: {
      // From the swizzled tile (lower_mma.cpp; dots read it with ldmatrix): each run of the
      // layout's registers along the stored rows, up to 16 bytes, as one load (a run starts on a
      // multiple of its length, so it stays inside one swizzled 16-byte chunk).
      const int eb = elem_bytes(v.et);
      const SmemTile t{v.smem_base, v.shape[0], v.shape[1], v.smem_col_major, eb};
      llvm::Type* mt = mem_type(c_, v.et.s);
      llvm::Type* it = b_.getIntNTy(static_cast<unsigned>(8 * eb));
      const size_t along = v.smem_col_major ? 0 : 1;
      int vec = 1;
      for (size_t i = 0; i < l.reg.size() && vec < 16 / eb; ++i) {
        Basis unit(2, 0);
        unit[along] = int64_t(1) << i;
        if (l.reg[i] != unit) break;
        vec *= 2;
      }
      llvm::Type* vt = vec == 1 ? it : static_cast<llvm::Type*>(llvm::FixedVectorType::get(it, static_cast<unsigned>(vec)));
      std::vector<llvm::Value*> out;
      for (int64_t r = 0; r < l.nregs(); r += vec) {
        Coord c = coords(l, r);
        llvm::Value* x = b_.CreateAlignedLoad(vt, smem_ptr(mma_smem_offset(t, c[0], c[1])),
                                              llvm::Align(static_cast<uint64_t>(eb * vec)));
        for (int i = 0; i < vec; ++i)
          out.push_back(from_mem(b_.CreateBitCast(vec == 1 ? x : b_.CreateExtractElement(x, uint64_t(i)), mt), v.et));
      }
      return out;
    }
    default:
      return {};
  }
}

Val GpuLowering::as_dist(const Val& v) {
  if (v.kind == Val::Kind::Dist) return v;
  // A tile in shared memory in the order it is stored in, so that its runs are vector loads.
  Layout l = v.kind == Val::Kind::Smem && v.smem_col_major ? default_layout(v.shape, v.et, {0, 1})
                                                            : default_layout(v.shape, v.et);
  return dist(v.et, l, regs_in(v, l));
}

// ---------------------------------------------------------------------------------------------
// Ops

bool GpuLowering::defer_load(BlockId bid, size_t at) {
  const std::vector<OpId>& ops = f_->block(bid).ops;
  const ir::OpData& op = f_->op(ops[at]);
  if (op.code != Opcode::Load || opt_.sm < 80 || op.results.size() != 1) return false;
  const ValueId res = op.results[0];
  const EType e = etype(f_->type_of(res));
  if (e.ptr || e.s == Scalar::I1 || elem_bytes(e) > 4 || shape(f_->type_of(res)).size() != 2 || uses(res) != 1) return false;
  if (val(f_->operand(ops[at], "ptr")).kind == Val::Kind::Scalar) return false;
  for (size_t i = at + 1; i < ops.size(); ++i) {
    const ir::OpData& x = f_->op(ops[i]);
    for (size_t k = 0; k < x.operands.size(); ++k)
      if (x.operands[k] == res) return x.code == Opcode::For && k >= 3;
    // Pure ops and other loads may run before it (loads do not order among themselves).
    const bool plain_load = x.code == Opcode::Load && !bool_attr(*f_, ops[i], "volatile");
    if ((!ir::op_info(x.code).is_pure() && !plain_load) || !x.regions.empty()) return false;
  }
  return false;
}

Status GpuLowering::lower_block(BlockId bid, OpId* terminator) {
  *terminator = ir::kNoOp;
  const std::vector<OpId>& ops = f_->block(bid).ops;
  for (size_t at = 0; at < ops.size(); ++at) {
    const OpId o = ops[at];
    const ir::OpInfo& info = ir::op_info(f_->op(o).code);
    if (info.is_terminator()) {
      *terminator = o;
      return Status::ok();
    }
    if (defer_load(bid, at)) {
      deferred_loads_[f_->op(o).results[0]] = o;
      continue;
    }
    // A carried accumulator whose group may still be in flight (lower_for): complete every group
    // before the first op that reads it.
    if (!wgmma_pending_.empty())
      for (ValueId v : f_->op(o).operands)
        if (wgmma_pending_.erase(v)) {
          Val acc = val(v);
          acc.regs = wgmma_wait(0, std::move(acc.regs));
          set(v, std::move(acc));
          wgmma_prev_in_flight_ = false;
        }
    TRI_RETURN_IF_ERROR(lower_op(o));
  }
  return Status::ok();
}

Status GpuLowering::lower_op(OpId o) {
  const ir::OpData& op = f_->op(o);
  // The op's instructions carry its location; ops of its regions set their own and the op's is
  // back for what follows them (a loop's latch, a reduction's combine across lanes).
  llvm::DebugLoc outer = b_.getCurrentDebugLocation();
  if (scope_) b_.SetCurrentDebugLocation(llvm::DILocation::get(c_, op.loc.line, op.loc.col, scope_));
  Status st = lower_op_at(o, op);
  b_.SetCurrentDebugLocation(outer);
  return st;
}

// Line info for ptxas, ncu and compute-sanitizer: a compile unit that asks only for `.file` and
// `.loc` directives (no DWARF sections), and one subprogram for the kernel, into which device
// functions are inlined at lowering.
void GpuLowering::start_line_info() {
  llvm::DIBuilder dib(*mod_);
  // PTX's `.file` takes the name between quotes with no escapes: characters that would end or
  // break it become '_' (a module named after a test case, `math_call[name="round"]`).
  std::string path = m_.source_name.empty() ? "<memory>" : m_.source_name;
  for (char& ch : path)
    if (ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '_';
  size_t slash = path.find_last_of('/');
  llvm::DIFile* file = slash == std::string::npos ? dib.createFile(path, ".")
                                                  : dib.createFile(path.substr(slash + 1), path.substr(0, slash));
  llvm::DICompileUnit* cu = dib.createCompileUnit(llvm::dwarf::DW_LANG_C, file, "tri", /*isOptimized=*/true, "", 0,
                                                  "", llvm::DICompileUnit::DebugDirectivesOnly);
  (void)cu;
  unsigned line = kernel_.loc.line;
  scope_ = dib.createFunction(file, kernel_.name, kernel_.name, file, line,
                              dib.createSubroutineType(dib.getOrCreateTypeArray({})), line, llvm::DINode::FlagZero,
                              llvm::DISubprogram::SPFlagDefinition | llvm::DISubprogram::SPFlagOptimized);
  lf_->setSubprogram(scope_);
  dib.finalize();
  mod_->addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
  mod_->addModuleFlag(llvm::Module::Warning, "Dwarf Version", 2);
}

Status GpuLowering::lower_op_at(OpId o, const ir::OpData& op) {
  switch (op.code) {
    case Opcode::ProgramId:
    case Opcode::NumPrograms: {
      int64_t axis = f_->attr(o, "axis").i;
      static const llvm::Intrinsic::ID pid[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                                llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                                llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
      static const llvm::Intrinsic::ID np[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
      if (axis < 0 || axis > 2) return error(o, Code::Compile, "program axis out of range");
      llvm::Value* v = b_.CreateIntrinsic(op.code == Opcode::ProgramId ? pid[axis] : np[axis], {}, {});
      set(op.results[0], scalar(v, EType{false, Scalar::I32}));
      return Status::ok();
    }
    case Opcode::Const: case Opcode::Arange: case Opcode::Splat: case Opcode::Broadcast:
    case Opcode::ExpandDims: case Opcode::Reshape: case Opcode::Permute: case Opcode::Join:
    case Opcode::Split: case Opcode::Cat:
      return lower_shape(o);
    case Opcode::Load: return lower_load(o);
    case Opcode::Store: return lower_store(o);
    case Opcode::Atomic: case Opcode::AtomicCas: return lower_atomic(o);
    case Opcode::Reduce: return lower_reduce(o);
    case Opcode::Scan: return lower_scan(o);
    case Opcode::Dot: return lower_dot(o);
    case Opcode::For: return lower_for(o);
    case Opcode::If: return lower_if(o);
    case Opcode::While: return lower_while(o);
    case Opcode::Call: return lower_call(o);
    case Opcode::Print: return lower_print(o);
    case Opcode::Assert: return lower_assert(o);
    case Opcode::InlineAsm: return lower_inline_asm(o);
    case Opcode::DebugBarrier:
      barrier();
      return Status::ok();
    case Opcode::MultipleOf:
    case Opcode::MaxContiguous:
      // Facts for axis info; the value passes through.
      set(op.results[0], val(op.operands[0]));
      return Status::ok();
    case Opcode::Assume: {
      const Val& c = val(op.operands[0]);
      if (c.kind == Val::Kind::Scalar) b_.CreateAssumption(c.s);
      return Status::ok();
    }
    case Opcode::Rank: case Opcode::NumRanks: case Opcode::SymmAt: case Opcode::Wait: case Opcode::ConsumeToken:
    case Opcode::Notify: case Opcode::Put: case Opcode::Get:
      return lower_distributed(o);
    default:
      return lower_elementwise(o);
  }
}

namespace {
// Ops whose elements are too costly to recompute in every consumer: their blocks get registers.
bool costly(Opcode c) {
  switch (c) {
    case Opcode::FDiv: case Opcode::FRem: case Opcode::Pow: case Opcode::Exp: case Opcode::Exp2:
    case Opcode::Log: case Opcode::Log2: case Opcode::Sqrt: case Opcode::Rsqrt: case Opcode::Sin:
    case Opcode::Cos: case Opcode::Tanh: case Opcode::Erf: case Opcode::MathCall: case Opcode::Fma:
      return true;
    default:
      return false;
  }
}
}  // namespace

llvm::Value* GpuLowering::uniform_f32_divisor(OpId o) {
  const ir::OpData& op = f_->op(o);
  if (op.code != Opcode::FDiv || bool_attr(*f_, o, "approx")) return nullptr;
  const EType e = etype(f_->type_of(op.results[0]));
  if (e.ptr || e.s != Scalar::F32) return nullptr;
  const Val& d = val(op.operands[1]);
  if (d.kind == Val::Kind::Scalar) return d.s;
  const OpId def = f_->value(op.operands[1]).def_op;
  if (def == ir::kNoOp || f_->op(def).code != Opcode::Splat) return nullptr;
  const Val& s = val(f_->op(def).operands[0]);
  return s.kind == Val::Kind::Scalar && s.s->getType()->isFloatTy() ? s.s : nullptr;
}

// a / d for every register, correctly rounded, with one reciprocal for the program: q0 = a r,
// e = a - q0 d (exact, by FMA), q = q0 + e r rounds to the IEEE quotient when r = RN(1/d) and
// nothing over- or underflows (Markstein's theorem). That holds when 2^-20 <= |d| <= 2^20 and
// 2^-100 <= |a| <= 2^100 (then every intermediate is normal), checked for all of the thread's
// elements at once through the smallest and largest |a| (NaN-propagating min and max); a
// thread with any element outside (zeros, infinities, NaN, huge or tiny operands) divides every
// element with div.rn instead. Per element this is 3 FMAs and 2 min/max, where div.rn costs 8
// instructions and a branch around its slow path, which also held registers: a softmax row of
// 16384 f32 on 16 warps spilled.
std::vector<llvm::Value*> GpuLowering::divide_by_uniform(const std::vector<llvm::Value*>& a, llvm::Value* d) {
  llvm::Type* f32 = b_.getFloatTy();
  auto cf = [&](double v) { return llvm::ConstantFP::get(f32, v); };
  auto fabs = [&](llvm::Value* v) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
  auto in_range = [&](llvm::Value* lo, llvm::Value* hi, double bound) {  // false for NaN
    return b_.CreateAnd(b_.CreateFCmpOGE(lo, cf(1.0 / bound)), b_.CreateFCmpOLE(hi, cf(bound)));
  };
  llvm::Value* r = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_rcp_rn_f, {}, {d});
  llvm::Value* ok = in_range(fabs(d), fabs(d), 0x1p20);
  llvm::Value *lo = nullptr, *hi = nullptr;
  std::vector<llvm::Value*> fast;
  for (llvm::Value* x : a) {
    llvm::Value* q0 = b_.CreateFMul(x, r);
    llvm::Value* e = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {b_.CreateFNeg(q0), d, x});
    fast.push_back(b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {e, r, q0}));
    llvm::Value* m = fabs(x);
    lo = lo ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, lo, m) : m;
    hi = hi ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, hi, m) : m;
  }
  if (lo) ok = b_.CreateAnd(ok, in_range(lo, hi, 0x1p100));
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* slow = llvm::BasicBlock::Create(c_, "div.slow", lf_);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(c_, "div.join", lf_);
  b_.CreateCondBr(ok, join, slow);
  b_.SetInsertPoint(slow);
  std::vector<llvm::Value*> exact;
  for (llvm::Value* x : a) exact.push_back(b_.CreateFDiv(x, d));
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  std::vector<llvm::Value*> out;
  for (size_t i = 0; i < a.size(); ++i) {
    llvm::PHINode* p = b_.CreatePHI(f32, 2);
    p->addIncoming(fast[i], pre);
    p->addIncoming(exact[i], slow);
    out.push_back(p);
  }
  return out;
}

Status GpuLowering::lower_elementwise(OpId o) {
  const ir::OpData& op = f_->op(o);
  if (op.results.size() != 1) return error(o, Code::Compile, "unexpected op '" + std::string(ir::op_info(op.code).name) + "'");
  ValueId res = op.results[0];
  EType ret = etype(f_->type_of(res));
  std::vector<ValueId> ins;
  for (ValueId v : op.operands)
    if (v != ir::kNoValue) ins.push_back(v);
  std::vector<EType> ets;
  for (ValueId v : ins) ets.push_back(val(v).et);
  // A loop's ring tile read by elementwise ops (smem_carried) comes into registers here, before
  // anything else of the iteration can overwrite its buffer, in the layout its load would have
  // given it (the one that meets the loop's other tiles; runs along the stored rows are vector
  // loads), else in its storage order.
  for (ValueId v : ins)
    if (val(v).kind == Val::Kind::Smem) {
      const Val x = val(v);
      set(v, x.smem_read && x.smem_read->shape == x.shape ? dist(x.et, *x.smem_read, regs_in(x, *x.smem_read)) : as_dist(x));
    }
  bool bad = false;
  const ir::Function* fn = f_;
  // One element; a lazy result calls it later, when `bad` is gone: the probe below has checked
  // by then that every element lowers.
  auto elem = [this, fn, o, ret, ets](const std::vector<llvm::Value*>& xs) {
    llvm::Value* r = em_.scalar_op(*fn, o, ret, ets, xs);
    return r ? r : llvm::UndefValue::get(reg_ty(ret));
  };
  auto one = [this, fn, o, ret, ets, &bad](const std::vector<llvm::Value*>& xs) {
    llvm::Value* r = em_.scalar_op(*fn, o, ret, ets, xs);
    if (!r) bad = true;
    return r ? r : llvm::UndefValue::get(reg_ty(ret));
  };
  auto fail = [&]() {
    if (!em_.missing.empty())
      return error(o, Code::Unsupported, "the GPU backend has no implementation of " + em_.missing + " yet");
    return error(o, Code::Compile,
                 "'" + std::string(ir::op_info(op.code).name) + "' cannot be lowered for these operand types");
  };
  const Val* anchor = nullptr;
  bool any_lazy = false;
  // The layout of the result: a register operand's, preferring one that cannot be loaded again
  // in another layout (the others follow it at the price of a reload, not an exchange), and
  // least a broadcast's: its layout is its source's with the broadcast dimensions stacked in
  // registers (a row broadcast over 32 rows holds 32 registers per element of the row), while
  // any other operand's layout takes the source's registers as they are when its threads hold
  // them (convert). Rope's `q * cos[None, :]` took the broadcast's layout and loaded q again
  // element by element in it (2200 SASS instructions against Triton's 144).
  auto rank = [](const Val& x) { return x.bcast_src ? 0 : x.remat ? 1 : 2; };
  for (ValueId v : ins) {
    const Val& x = val(v);
    if (x.kind == Val::Kind::Dist && (!anchor || rank(x) > rank(*anchor))) anchor = &x;
    if (x.kind == Val::Kind::Lazy) any_lazy = true;
  }
  if (!anchor && !any_lazy) {
    std::vector<llvm::Value*> xs;
    for (ValueId v : ins) xs.push_back(val(v).s);
    llvm::Value* r = one(xs);
    if (bad) return fail();
    set(res, scalar(r, ret));
    return Status::ok();
  }
  Shape rs = shape(f_->type_of(res));
  if (!anchor && !costly(op.code)) {
    std::vector<Val> vs;
    for (ValueId v : ins) vs.push_back(val(v));
    // Check once that the op lowers for these types (a probe in a block that is thrown away).
    {
      llvm::BasicBlock* probe = llvm::BasicBlock::Create(c_, "probe", lf_);
      llvm::IRBuilderBase::InsertPointGuard g(b_);
      b_.SetInsertPoint(probe);
      std::vector<llvm::Value*> xs;
      for (const Val& x : vs) xs.push_back(llvm::UndefValue::get(reg_ty(x.et)));
      one(xs);
      probe->eraseFromParent();
      if (bad) return fail();
    }
    set(res, lazy(ret, rs, [vs, elem](const Coord& c) {
          std::vector<llvm::Value*> xs;
          for (const Val& x : vs) xs.push_back(x.kind == Val::Kind::Scalar ? x.s : (*x.gen)(c));
          return elem(xs);
        }));
    return Status::ok();
  }
  // An elementwise function of broadcasts alone (and scalars): computed on the broadcasts'
  // sources and broadcast again, so the result stays a broadcast that any layout takes from the
  // source's registers. Attention's `qk * scale - m[:, None]`, contracted to fma(qk, scale,
  // neg(m[:, None])), would otherwise negate 64 registers and move them through shared memory
  // into the accumulator's layout at every iteration.
  if (anchor && !any_lazy && anchor->bcast_src) {
    bool all = true;
    for (ValueId v : ins) {
      const Val& x = val(v);
      all = all && (x.kind == Val::Kind::Scalar ||
                    (x.kind == Val::Kind::Dist && x.bcast_src && x.bcast_proj == anchor->bcast_proj &&
                     x.lay == anchor->lay && x.bcast_src->shape == anchor->bcast_src->shape));
    }
    if (all) {
      const Val src0 = *anchor->bcast_src;
      std::vector<std::vector<llvm::Value*>> in;
      for (ValueId v : ins) {
        const Val& x = val(v);
        in.push_back(x.kind == Val::Kind::Scalar ? std::vector<llvm::Value*>(src0.lay.nregs(), x.s)
                                                 : regs_in(*x.bcast_src, src0.lay));
      }
      std::vector<llvm::Value*> out;
      for (int64_t r = 0; r < src0.lay.nregs(); ++r) {
        std::vector<llvm::Value*> xs;
        for (auto& x : in) xs.push_back(x[r]);
        out.push_back(one(xs));
        if (bad) return fail();
      }
      Val src = dist(ret, src0.lay, std::move(out));
      Val result = dist(ret, anchor->lay, convert(src, anchor->lay, anchor->bcast_proj));
      result.bcast_proj = anchor->bcast_proj;
      result.bcast_src = std::make_shared<const Val>(std::move(src));
      set(res, std::move(result));
      return Status::ok();
    }
  }
  Layout l = anchor ? anchor->lay : default_layout(rs, ret);
  std::vector<std::vector<llvm::Value*>> in;
  for (ValueId v : ins) in.push_back(regs_in(val(v), l));
  std::vector<llvm::Value*> out;
  if (llvm::Value* d = uniform_f32_divisor(o)) {
    set(res, dist(ret, l, divide_by_uniform(in[0], d)));
    return Status::ok();
  }
  for (int64_t r = 0; r < l.nregs(); ++r) {
    std::vector<llvm::Value*> xs;
    for (auto& x : in) xs.push_back(x[r]);
    out.push_back(one(xs));
    if (bad) return fail();
  }
  Val result = dist(ret, l, std::move(out));
  if (anchor && anchor->slice_parent) {
    result.slice_parent = anchor->slice_parent;
    result.slice_axis = anchor->slice_axis;
  }
  // An elementwise function of loaded values can be loaded and computed again in another
  // layout, like the loads themselves (lower_impl.h, Val::remat).
  bool remat = anchor != nullptr;
  for (ValueId v : ins) {
    const Val& x = val(v);
    if (x.kind == Val::Kind::Dist && !(x.remat && x.epoch == mem_epoch_)) remat = false;
  }
  if (remat) {
    std::vector<Val> vs;
    for (ValueId v : ins) vs.push_back(val(v));
    result.remat = std::make_shared<const std::function<std::vector<llvm::Value*>(const Layout&)>>(
        [this, vs, elem](const Layout& to) {
          std::vector<std::vector<llvm::Value*>> xs;
          for (const Val& x : vs) xs.push_back(x.kind == Val::Kind::Dist ? (*x.remat)(to) : regs_in(x, to));
          std::vector<llvm::Value*> regs;
          for (int64_t r = 0; r < to.nregs(); ++r) {
            std::vector<llvm::Value*> e;
            for (auto& x : xs) e.push_back(x[r]);
            regs.push_back(elem(e));
          }
          return regs;
        });
    result.epoch = mem_epoch_;
  }
  set(res, std::move(result));
  return Status::ok();
}

Status GpuLowering::lower_shape(OpId o) {
  const ir::OpData& op = f_->op(o);
  ValueId res = op.results[0];
  TypeId rt = f_->type_of(res);
  EType e = etype(rt);
  Shape rs = shape(rt);
  const bool block = m_.types.is_block(rt);
  // A view of src whose element at c is src's element at map(c).
  auto view = [&](const Val& src, std::function<Coord(const Coord&)> map) {
    if (src.kind == Val::Kind::Scalar) return lazy(e, rs, [v = src.s](const Coord&) { return v; });
    auto g = src.gen;
    return lazy(e, rs, [g, map](const Coord& c) { return (*g)(map(c)); });
  };
  switch (op.code) {
    case Opcode::Const: {
      const ir::Attr& a = f_->attr(o, "value");
      if (e.ptr) return error(o, Code::Compile, "'const' of a pointer type");
      llvm::Value* k = em_.constant(a, e);
      set(res, block ? lazy(e, rs, [k](const Coord&) { return k; }) : scalar(k, e));
      return Status::ok();
    }
    case Opcode::Arange: {
      int64_t start = f_->attr(o, "start").i;
      llvm::Type* t = reg_ty(e);
      set(res, lazy(e, rs, [this, t, start](const Coord& c) {
            return b_.CreateAdd(b_.CreateZExtOrTrunc(c[0], t), llvm::ConstantInt::get(t, start));
          }));
      return Status::ok();
    }
    case Opcode::Splat: {
      llvm::Value* v = val(op.operands[0]).s;
      set(res, lazy(e, rs, [v](const Coord&) { return v; }));
      return Status::ok();
    }
    case Opcode::Broadcast: {
      const Val& src = val(op.operands[0]);
      std::vector<bool> proj(rs.size(), false);
      for (size_t d = 0; d < rs.size(); ++d) proj[d] = src.shape[d] == 1 && rs[d] != 1;
      if (src.kind != Val::Kind::Dist) {
        set(res, view(src, [this, proj](const Coord& c) {
              Coord r = c;
              for (size_t d = 0; d < r.size(); ++d)
                if (proj[d]) r[d] = b_.getInt32(0);
              return r;
            }));
        return Status::ok();
      }
      // Prefer the layout that keeps the source's threads (the slice it came from, expanded
      // back): broadcasting a reduction's result then needs no data movement. A reduction's
      // result broadcast back to its operand's shape takes the operand's layout first.
      Layout l = default_layout(rs, e);
      std::vector<int64_t> map;
      std::vector<Layout> cands;
      if (src.slice_parent && src.slice_parent->shape == rs) {
        std::vector<bool> axis_only(rs.size(), false);
        axis_only[static_cast<size_t>(src.slice_axis)] = true;
        if (proj == axis_only) cands.push_back(*src.slice_parent);
      }
      for (const Layout& cand : {src.lay, l}) {
        Layout full = cand;
        full.shape = rs;
        // Fill the broadcast dimensions with registers on top of the source's layout.
        for (size_t d = 0; d < rs.size(); ++d)
          if (proj[d])
            for (int64_t k = 1; k < rs[d]; k *= 2) {
              Basis b(rs.size(), 0);
              b[d] = k;
              full.reg.push_back(b);
            }
        cands.push_back(full);
      }
      for (const Layout& cand : cands) {
        if (cand.nregs() <= 256 && register_map(src.lay, cand, proj, &map)) {
          l = cand;
          break;
        }
      }
      Val r = dist(e, l, convert(src, l, proj));
      r.bcast_src = std::make_shared<const Val>(src);
      r.bcast_proj = proj;
      // In another layout the broadcast is made again from its source (moved alone to where
      // that layout needs it), so elementwise functions of broadcasts and lazy blocks can be
      // computed again too instead of exchanging the whole block: a histogram's
      // `bins[:, None] == key[None, :]` added into a [16 x 1024] accumulator moved 128 KB through
      // shared memory per iteration (FlagGems' sort_histogram); it now moves the 1024 keys.
      Val b = r;
      r.remat = std::make_shared<const std::function<std::vector<llvm::Value*>(const Layout&)>>(
          [this, b](const Layout& to) { return convert(b, to, std::vector<bool>(to.rank(), false)); });
      r.epoch = mem_epoch_;
      set(res, std::move(r));
      return Status::ok();
    }
    case Opcode::ExpandDims: {
      const Val& src = val(op.operands[0]);
      int axis = static_cast<int>(f_->attr(o, "axis").i);
      if (src.kind == Val::Kind::Dist) {
        Val r = dist(e, expand(src.lay, axis), src.regs);
        if (src.remat) {
          // A loaded row stays loadable again in another layout (`m[:, None]` meeting a dot's
          // accumulator): the inserted dimension has size 1, so the layout without it holds the
          // same registers in the same order.
          auto inner = src.remat;
          r.remat = std::make_shared<const std::function<std::vector<llvm::Value*>(const Layout&)>>(
              [inner, axis](const Layout& to) { return (*inner)(slice(to, axis)); });
          r.epoch = src.epoch;
        }
        if (src.slice_parent && axis == src.slice_axis) {
          r.slice_parent = src.slice_parent;
          r.slice_axis = axis;
        }
        set(res, std::move(r));
      } else {
        set(res, view(src, [axis](const Coord& c) {
              Coord r = c;
              r.erase(r.begin() + axis);
              return r;
            }));
      }
      return Status::ok();
    }
    case Opcode::Reshape: {
      const Val& src = val(op.operands[0]);
      if (src.kind == Val::Kind::Dist) {
        set(res, dist(e, reshape(src.lay, rs), src.regs));
        return Status::ok();
      }
      Shape ss = src.shape;
      set(res, view(src, [this, rs, ss](const Coord& c) {
            llvm::Value* lin = linear(c, rs);
            Coord r(ss.size());
            for (int d = static_cast<int>(ss.size()) - 1; d >= 0; --d) {
              r[d] = b_.CreateURem(lin, b_.getInt32(static_cast<uint32_t>(ss[d])));
              lin = b_.CreateUDiv(lin, b_.getInt32(static_cast<uint32_t>(ss[d])));
            }
            return r;
          }));
      return Status::ok();
    }
    case Opcode::Permute: {
      const Val& src = val(op.operands[0]);
      std::vector<int64_t> order = f_->attr(o, "order").ints;
      if (src.kind == Val::Kind::Dist) {
        set(res, dist(e, permute(src.lay, order), src.regs));
        return Status::ok();
      }
      if (src.kind == Val::Kind::Smem) {
        // The transpose of a tile in shared memory (a loop's ring tile, smem_carried): the same
        // bytes read the other way round (a row-major tile of [n x d] is a column-major one of
        // [d x n]), so a dot reads K^T where K was copied.
        Val t = src;
        std::swap(t.shape[0], t.shape[1]);
        t.smem_col_major = !src.smem_col_major;
        set(res, std::move(t));
        return Status::ok();
      }
      set(res, view(src, [order](const Coord& c) {
            Coord r(c.size());
            for (size_t i = 0; i < order.size(); ++i) r[order[i]] = c[i];
            return r;
          }));
      return Status::ok();
    }
    case Opcode::Join:
    case Opcode::Cat: {
      const Val& lhs = val(op.operands[0]);
      const Val& rhs = val(op.operands[1]);
      const bool join = op.code == Opcode::Join;
      const int64_t half = join ? 1 : lhs.shape[0];
      if (lhs.kind != Val::Kind::Dist && rhs.kind != Val::Kind::Dist) {
        auto gl = lhs.kind == Val::Kind::Scalar ? std::make_shared<const Gen>([v = lhs.s](const Coord&) { return v; }) : lhs.gen;
        auto gr = rhs.kind == Val::Kind::Scalar ? std::make_shared<const Gen>([v = rhs.s](const Coord&) { return v; }) : rhs.gen;
        set(res, lazy(e, rs, [this, gl, gr, join, half](const Coord& c) {
              Coord r = c;
              llvm::Value* second;
              if (join) {
                second = b_.CreateICmpNE(c.back(), b_.getInt32(0));
                r.pop_back();
              } else {
                second = b_.CreateICmpUGE(c[0], b_.getInt32(static_cast<uint32_t>(half)));
                r[0] = b_.CreateAnd(c[0], b_.getInt32(static_cast<uint32_t>(half - 1)));
              }
              llvm::Value* a = (*gl)(r);
              llvm::Value* b = (*gr)(r);
              return b_.CreateSelect(second, b, a);
            }));
        return Status::ok();
      }
      Val l = as_dist(lhs.kind == Val::Kind::Dist ? lhs : rhs);
      std::vector<llvm::Value*> a = regs_in(lhs, l.lay), b = regs_in(rhs, l.lay);
      a.insert(a.end(), b.begin(), b.end());
      Layout base = join ? expand(l.lay, l.lay.rank()) : l.lay;
      Basis top(rs.size(), 0);
      if (join) top.back() = 1;
      else top[0] = half;
      set(res, dist(e, add_reg_bit(base, rs, top), std::move(a)));
      return Status::ok();
    }
    case Opcode::Split: {
      const Val& src = val(op.operands[0]);
      const int last = static_cast<int>(src.shape.size()) - 1;
      if (src.kind != Val::Kind::Dist) {
        for (int h = 0; h < 2; ++h)
          set(op.results[h], view(src, [this, h](const Coord& c) {
                Coord r = c;
                r.push_back(b_.getInt32(h));
                return r;
              }));
        return Status::ok();
      }
      // The halves must be in registers: find the register bit of the last dimension.
      Val s = src;
      auto bit_of_last = [&](const Layout& l) {
        for (size_t i = 0; i < l.reg.size(); ++i)
          if (l.reg[i][last] == 1) return static_cast<int>(i);
        return -1;
      };
      if (bit_of_last(s.lay) < 0) {
        std::vector<int> order = row_major(last + 1);
        Layout l = blocked(s.shape, order, 2, opt_.num_warps);
        s = dist(s.et, l, regs_in(s, l));
      }
      int bit = bit_of_last(s.lay);
      Layout out = s.lay;
      out.reg.erase(out.reg.begin() + bit);
      out.shape.pop_back();
      for (auto* bs : {&out.reg, &out.lane, &out.warp})
        for (Basis& bb : *bs) bb.pop_back();
      for (int h = 0; h < 2; ++h) {
        std::vector<llvm::Value*> regs;
        for (int64_t r = 0; r < s.lay.nregs(); ++r)
          if (((r >> bit) & 1) == h) regs.push_back(s.regs[r]);
        set(op.results[h], dist(e, out, std::move(regs)));
      }
      return Status::ok();
    }
    default:
      return error(o, Code::Compile, "unexpected shape op");
  }
}

// ---------------------------------------------------------------------------------------------
// The kernel

Status GpuLowering::run(KernelInfo* info) {
  for (const auto& fn : m_.functions)
    for (OpId o = 0; o < fn->ops.size(); ++o) {
      MmaLayouts ml;
      if (fn->ops[o].code == Opcode::Dot && mma_layouts(*fn, o, &ml) && ml.wgmma) wgmma_used_ = true;
    }
  // One parameter per runtime parameter, in order (lower.h says how they are passed).
  std::vector<llvm::Type*> params;
  for (const ir::Param& p : kernel_.params) {
    const ir::TypeData& td = m_.types.get(p.type);
    if (td.kind == ir::TypeKind::Ptr) params.push_back(llvm::PointerType::get(c_, 1));
    else if (td.kind == ir::TypeKind::Scalar && td.scalar == Scalar::I1) params.push_back(b_.getInt8Ty());
    else if (td.kind == ir::TypeKind::Scalar) params.push_back(reg_type(c_, td.scalar));
    else return error_at(Code::Compile, m_.source_name, p.loc, "a kernel parameter must be a scalar or a pointer");
  }
  // The team's hidden parameters (lower.h), for kernels with distributed ops.
  const bool team = ir::find_op(m_, kernel_, &ir::is_distributed_op, nullptr) != ir::kNoOp;
  if (team) {
    params.push_back(b_.getInt32Ty());
    params.push_back(b_.getInt32Ty());
    params.push_back(llvm::PointerType::get(c_, 1));
    params.push_back(b_.getInt64Ty());
  }
  auto* ft = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  lf_ = llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage, kernel_.name, mod_);
  lf_->setCallingConv(llvm::CallingConv::PTX_Kernel);
  lf_->addFnAttr(llvm::Attribute::NoUnwind);
  for (size_t i = 0; i < kernel_.params.size(); ++i) {
    const ir::Param& p = kernel_.params[i];
    if (!m_.types.is_ptr(p.type)) continue;
    if (p.noalias) lf_->addParamAttr(i, llvm::Attribute::NoAlias);
    if (p.align > 1 && (p.align & (p.align - 1)) == 0)
      lf_->addParamAttr(i, llvm::Attribute::getWithAlignment(c_, llvm::Align(p.align)));
  }
  smem_ = new llvm::GlobalVariable(*mod_, llvm::ArrayType::get(b_.getInt8Ty(), 0), false,
                                   llvm::GlobalValue::ExternalLinkage, nullptr, "tri_smem", nullptr,
                                   llvm::GlobalValue::NotThreadLocal, 3);
  smem_->setAlignment(llvm::Align(1024));  // wgmma's swizzled operand tiles

  if (opt_.line_info) start_line_info();
  entry_ = llvm::BasicBlock::Create(c_, "entry", lf_);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(c_, "body", lf_);
  b_.SetInsertPoint(entry_);
  tid_ = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  lane_ = b_.CreateAnd(tid_, 31);
  // The warp index, read back from lane 0 with a shuffle: the value is the same, but ptxas then
  // knows it is uniform across the warp, so what is computed from it alone (wgmma descriptors,
  // per-warp shared memory offsets) goes to the uniform datapath instead of every lane.
  warp_ = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                             {b_.getInt32(0xffffffffu), b_.CreateLShr(tid_, 5), b_.getInt32(0), b_.getInt32(31)});
  if (team) setup_team_params(kernel_.params.size());
  std::vector<Val> vals(kernel_.values.size());
  f_ = &kernel_;
  vals_ = &vals;
  axis_[&kernel_] = std::make_unique<passes::AxisInfoAnalysis>(m_, kernel_);
  const ir::BlockData& bd = kernel_.block(kernel_.body);
  for (size_t i = 0; i < kernel_.params.size(); ++i) {
    llvm::Value* a = lf_->getArg(i);
    EType e = etype(kernel_.params[i].type);
    if (e.ptr) a = b_.CreateAddrSpaceCast(a, llvm::PointerType::getUnqual(c_));
    else if (e.s == Scalar::I1) a = b_.CreateICmpNE(a, b_.getInt8(0));
    set(bd.args[i], scalar(a, e));
  }
  b_.CreateBr(body);
  b_.SetInsertPoint(body);
  OpId term;
  TRI_RETURN_IF_ERROR(lower_block(kernel_.body, &term));
  b_.CreateRetVoid();

  // Mark the kernel and its block size (LLVM 19 reads nvvm.annotations).
  llvm::NamedMDNode* ann = mod_->getOrInsertNamedMetadata("nvvm.annotations");
  auto md = [&](const char* key, int v) {
    llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(lf_), llvm::MDString::get(c_, key),
                             llvm::ValueAsMetadata::get(b_.getInt32(v))};
    ann->addOperand(llvm::MDNode::get(c_, ops));
  };
  md("kernel", 1);
  md("maxntidx", threads());
  // Two programs per SM for kernels without dot: a program that waits at a barrier (the
  // cross-warp step of a reduction) or on its loads leaves the SM to the other. The register
  // file (64K) holds two programs of T threads at 32768 / T registers each; the bound is set
  // only where it is at least 128, which memory-bound kernels stay under without spilling, so
  // it binds at 8 warps (256 threads: 128 registers) and nowhere else. Measured on the H100:
  // the driver's compiler gave layer norm (16384 columns, 8 warps) 148 registers, one program
  // per SM, 0.73x Triton (docs/codegen.md, "Registers").
  const int two_programs = 32768 / threads() / 8 * 8;
  if (!has_dot_ && two_programs >= 128 && two_programs < 255) md("maxnreg", two_programs);
  info->name = kernel_.name;
  info->team = team;
  info->nvshmem = team && !opt_.nvshmem_device_library.empty();
  info->notes = notes_;
  info->min_ptx_version = min_ptx_version_;
  info->num_warps = opt_.num_warps;
  const uint64_t scratch = (smem_bytes_ + 1023) / 1024 * 1024;  // tiles above it start on 1024 bytes (wgmma)
  if (persist_base_gv_) {
    // Loop-carried tiles sit above the scratch; their base is a constant the optimizer folds.
    persist_base_gv_->setInitializer(b_.getInt32(static_cast<uint32_t>(scratch)));
    persist_base_gv_->setConstant(true);
  }
  info->shared_bytes = static_cast<uint32_t>(persist_peak_ ? scratch + persist_peak_ : (smem_bytes_ + 15) / 16 * 16);
  return Status::ok();
}

}  // namespace detail

Status lower_kernel(const ir::Module& m, const ir::Function& kernel, const GpuOptions& opt, llvm::LLVMContext& ctx,
                    std::unique_ptr<llvm::Module>* out, KernelInfo* info) {
  if (opt.num_warps < 1 || opt.num_warps > 32 || (opt.num_warps & (opt.num_warps - 1)))
    return Status(Code::InvalidArgument, "num_warps must be 1, 2, 4, 8, 16 or 32, not " + std::to_string(opt.num_warps));
  auto mod = std::make_unique<llvm::Module>(kernel.name, ctx);
  mod->setTargetTriple("nvptx64-nvidia-cuda");
  // NVPTX's layout with 32-bit shared, const and local pointers (ptx.cpp sets nvptx-short-ptr).
  mod->setDataLayout("e-p3:32:32-p4:32:32-p5:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64");
  detail::GpuLowering l(m, kernel, opt, ctx, mod.get());
  TRI_RETURN_IF_ERROR(l.run(info));
  TRI_RETURN_IF_ERROR(mathlib::link_into(*mod));
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*mod, &os)) {
    return Status(Code::Internal, "the NVPTX lowering of kernel '" + kernel.name + "' made invalid LLVM IR: " + err);
  }
  *out = std::move(mod);
  return Status::ok();
}

}  // namespace tri::codegen::nvptx
