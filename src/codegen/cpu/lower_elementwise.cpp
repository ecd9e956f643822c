// Elementwise and shape ops of the CPU lowering: the scalar semantics of each op (integer
// guards and small-float arithmetic from codegen/scalar_ops, math functions inline or from the
// math library), casts, and the shape ops, most of which are views that remap lane indices.
#include "codegen/cpu/lower_impl.h"

#include <algorithm>
#include <cassert>

#include "codegen/scalar_ops.h"
#include "codegen/vec_math.h"

namespace tri::codegen::cpu::detail {

// ---------------------------------------------------------------------------------------------
// Elementwise ops

namespace {
int op_cost(Opcode code, EType e) {
  int small = (!e.ptr && is_small_float(e.s)) ? 12 : 0;
  bool fl = !e.ptr && ir::is_float(e.s);
  switch (code) {
    case Opcode::SDiv: case Opcode::UDiv: case Opcode::SRem: case Opcode::URem: case Opcode::CDiv:
      return 8;
    case Opcode::FDiv: case Opcode::Sqrt: case Opcode::Rsqrt:
      return 6 + small;
    case Opcode::FRem: case Opcode::Pow: case Opcode::Exp: case Opcode::Exp2: case Opcode::Log:
    case Opcode::Log2: case Opcode::Sin: case Opcode::Cos: case Opcode::Tanh: case Opcode::Erf:
    case Opcode::MathCall:
      return 30 + small;
    case Opcode::FPTrunc: case Opcode::FPExt: case Opcode::FPToSI: case Opcode::FPToUI:
    case Opcode::SIToFP: case Opcode::UIToFP:
      return 2 + small;
    default:
      return (fl ? 2 : 1) + small;
  }
}
}  // namespace

Status FnLowering::lower_elementwise(OpId o) {
  const ir::OpData& op = f_.op(o);
  if (op.results.size() != 1) return error(o, Code::Compile, "unexpected op '" + ir::op_info(op.code).name + "'");
  ValueId res = op.results[0];
  TypeId rt = f_.type_of(res);
  EType ret = etype(rt);
  std::vector<Rep> ins;
  std::vector<EType> ets;
  for (ValueId v : op.operands) {
    if (v == ir::kNoValue) continue;
    ins.push_back(rep(v));
    ets.push_back(etype(f_.type_of(v)));
  }
  bool all_uniform = true;
  int cost = op_cost(op.code, ets.empty() ? ret : ets[0]);
  for (const Rep& r : ins) {
    if (!r.is_uniform()) all_uniform = false;
    if (r.kind == Rep::Kind::Lazy) cost += r.cost;
    if (r.kind == Rep::Kind::Buffer) cost += 1;
  }
  if (!m_.types.is_block(rt) || all_uniform) {
    std::vector<llvm::Value*> vals;
    for (const Rep& r : ins) vals.push_back(r.v);
    llvm::Value* v = scalar_op(o, ret, ets, vals);
    if (!v) return error(o, Code::Compile, "cannot lower '" + ir::op_info(op.code).name + "' on these types");
    reps_[res] = m_.types.is_block(rt) ? uniform_rep(v, ret, shape(rt)) : scalar_rep(v, ret);
    return Status::ok();
  }
  // Check once that the scalar code exists for these types (the lazy generator cannot fail).
  {
    llvm::BasicBlock* probe = llvm::BasicBlock::Create(c_, "probe", lf_);
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(probe);
    std::vector<llvm::Value*> vals;
    for (const EType& e : ets) vals.push_back(llvm::UndefValue::get(reg_ty(e)));
    llvm::Value* v = scalar_op(o, ret, ets, vals);
    probe->eraseFromParent();
    if (!v) return error(o, Code::Compile, "cannot lower '" + ir::op_info(op.code).name + "' on these types");
  }
  Gen g = [this, o, ret, ets, ins](const Idx& idx) {
    std::vector<llvm::Value*> vals;
    for (const Rep& r : ins) vals.push_back(elem(r, idx));
    return scalar_op(o, ret, ets, vals);
  };
  Rep out = lazy_rep(ret, shape(rt), cost, std::move(g));
  out.aff = affine_result(op.code, ins, ets, out.shape);
  set_result(res, std::move(out));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// The CPU's element hooks

llvm::Value* CpuElemEmitter::decode(llvm::Value* bits, Scalar s) { return ml_.decode(b_, bits, s); }

llvm::Value* CpuElemEmitter::encode(llvm::Value* x, Scalar s, bool rtz) { return ml_.encode(b_, x, s, rtz); }

llvm::Value* CpuElemEmitter::math_fn(const std::string& name, const std::vector<llvm::Value*>& a) {
  llvm::Type* t = a[0]->getType();
  const bool f32 = t->isFloatTy();
  if (name == "fmod") return b_.CreateFRem(a[0], a[1]);
  // approx=true allows the GPU's approximate instructions; the CPU computes the exact values,
  // which are within their bounds (docs/ir.md, "Approximate math").
  if (name == "div.approx") return b_.CreateFDiv(a[0], a[1]);
  if (name == "sqrt.approx") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]);
  if (name == "rsqrt.approx")
    return b_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]));
  if (name == "exp.approx") return math_fn("exp", a);
  if (name == "exp2.flush") {  // exp2[subnormal=flush] on f32: results below 2^-126 become +0
    llvm::Value* r = b_.CreateCall(ml_.math_helper("exp2"), {a[0]});
    llvm::Value* tiny = b_.CreateFCmpOLT(r, llvm::ConstantFP::get(t, 0x1p-126));
    return b_.CreateSelect(tiny, llvm::ConstantFP::get(t, 0.0), r);
  }
  // The hot ones in kernels (softmax, attention, GeLU) are inlined for f32 so that they
  // vectorize; the others call the math library (scalar, one call per element). log2 is not
  // inlined: vec_math's is within 1.7 ulp, and docs/ir.md's bound for it is 1 (libm's log2f).
  if (f32 && (name == "exp" || name == "exp2" || name == "log" || name == "tanh"))
    return b_.CreateCall(ml_.math_helper(name), {a[0]});
  // lgamma writes the global `signgam`; the runtime's wrapper calls the reentrant lgamma_r.
  std::string sym = name == "lgamma" ? std::string("tri.rt.lgamma") : name;
  if (f32) sym += "f";
  return b_.CreateCall(ml_.libm(sym, t, static_cast<int>(a.size())), a);
}

// ---------------------------------------------------------------------------------------------
// Constants and shape ops

Status FnLowering::lower_shape(OpId o) {
  const ir::OpData& op = f_.op(o);
  ValueId res = op.results[0];
  TypeId rt = f_.type_of(res);
  EType e = etype(rt);
  Shape rs = shape(rt);
  // A view of src whose lane idx is src's lane map(idx); `strides` maps src's affine strides
  // to the view's (the same map on strides), when there is one.
  auto view = [&](const Rep& src, std::function<Idx(const Idx&)> map,
                  std::function<std::vector<llvm::Value*>(const std::vector<llvm::Value*>&)> strides = nullptr) {
    if (src.is_uniform()) return uniform_rep(src.v, e, rs);
    int cost = src.kind == Rep::Kind::Lazy ? src.cost : 1;
    Rep r = lazy_rep(e, rs, cost, [this, src, map](const Idx& idx) { return elem(src, map(idx)); });
    if (src.aff && strides) {
      auto a = std::make_shared<Affine>(*src.aff);
      a->stride = strides(src.aff->stride);
      r.aff = a;
    }
    return r;
  };
  switch (op.code) {
    case Opcode::Const: {
      const ir::Attr& a = f_.attr(o, "value");
      if (e.ptr) return error(o, Code::Compile, "'const' of a pointer type");
      llvm::Value* c = em_.constant(a, e);
      reps_[res] = m_.types.is_block(rt) ? uniform_rep(c, e, rs) : scalar_rep(c, e);
      return Status::ok();
    }
    case Opcode::Arange: {
      int64_t start = f_.attr(o, "start").i;
      llvm::Type* t = reg_ty(e);
      if (!t->isIntegerTy()) return error(o, Code::Compile, "'arange' of a non-integer type");
      Rep r = lazy_rep(e, rs, 1, [this, t, start](const Idx& idx) {
        return b_.CreateAdd(b_.CreateTrunc(idx[0], t), llvm::ConstantInt::get(t, start));
      });
      if (e.s == Scalar::I32) r.aff = make_affine(b_.getInt64(start), {b_.getInt64(1)}, rs);
      set_result(res, std::move(r));
      return Status::ok();
    }
    case Opcode::Splat: {
      const Rep& src = rep(op.operands[0]);
      if (src.is_block()) return error(o, Code::Compile, "'splat' of a block");
      reps_[res] = uniform_rep(src.v, e, rs);
      return Status::ok();
    }
    case Opcode::Broadcast: {
      const Rep& src = rep(op.operands[0]);
      Shape ss = src.shape;
      size_t off = rs.size() - ss.size();
      set_result(res, view(
                          src,
                          [this, ss, off](const Idx& idx) {
                            Idx r;
                            for (size_t d = 0; d < ss.size(); ++d) r.push_back(ss[d] == 1 ? b_.getInt64(0) : idx[d + off]);
                            return r;
                          },
                          [this, ss, off, &rs](const std::vector<llvm::Value*>& st) {
                            std::vector<llvm::Value*> r(rs.size(), b_.getInt64(0));
                            for (size_t d = 0; d < ss.size(); ++d)
                              if (ss[d] != 1) r[d + off] = st[d];
                            return r;
                          }));
      return Status::ok();
    }
    case Opcode::ExpandDims: {
      const Rep& src = rep(op.operands[0]);
      size_t axis = static_cast<size_t>(f_.attr(o, "axis").i);
      set_result(res, view(
                          src,
                          [axis](const Idx& idx) {
                            Idx r;
                            for (size_t d = 0; d < idx.size(); ++d)
                              if (d != axis) r.push_back(idx[d]);
                            return r;
                          },
                          [this, axis](const std::vector<llvm::Value*>& st) {
                            std::vector<llvm::Value*> r = st;
                            r.insert(r.begin() + axis, b_.getInt64(0));
                            return r;
                          }));
      return Status::ok();
    }
    case Opcode::Reshape: {
      const Rep& src = rep(op.operands[0]);
      if (num_elems(src.shape) != num_elems(rs)) return error(o, Code::Compile, "'reshape' changes the element count");
      if (src.kind == Rep::Kind::Buffer) {
        reps_[res] = buffer_rep(src.v, e, rs);  // row-major: the same memory
        return Status::ok();
      }
      Shape ss = src.shape;
      set_result(res, view(src, [this, ss, rs](const Idx& idx) {
                   llvm::Value* lin = linear(idx, rs);
                   Idx r(ss.size());
                   int64_t stride = 1;
                   for (size_t d = ss.size(); d-- > 0;) {
                     r[d] = ss[d] == 1 ? b_.getInt64(0)
                                       : b_.CreateURem(b_.CreateUDiv(lin, b_.getInt64(stride)), b_.getInt64(ss[d]));
                     stride *= ss[d];
                   }
                   return r;
                 }));
      return Status::ok();
    }
    case Opcode::Permute: {
      const Rep& src = rep(op.operands[0]);
      std::vector<int64_t> order = f_.attr(o, "order").ints;
      if (order.size() != rs.size()) return error(o, Code::Compile, "'permute' order has the wrong length");
      set_result(res, view(
                          src,
                          [order](const Idx& idx) {
                            Idx r(idx.size());
                            for (size_t i = 0; i < order.size(); ++i) r[order[i]] = idx[i];
                            return r;
                          },
                          [order](const std::vector<llvm::Value*>& st) {
                            std::vector<llvm::Value*> r(st.size());
                            for (size_t i = 0; i < order.size(); ++i) r[i] = st[order[i]];
                            return r;
                          }));
      return Status::ok();
    }
    case Opcode::Join: {
      Rep lhs = rep(op.operands[0]), rhs = rep(op.operands[1]);
      int cost = 1;
      for (const Rep* r : {&lhs, &rhs}) cost += r->kind == Rep::Kind::Lazy ? r->cost : 1;
      set_result(res, lazy_rep(e, rs, cost, [this, lhs, rhs](const Idx& idx) {
                   Idx sub(idx.begin(), idx.end() - 1);
                   llvm::Value* a = elem(lhs, sub);
                   llvm::Value* b = elem(rhs, sub);
                   return b_.CreateSelect(b_.CreateICmpEQ(idx.back(), b_.getInt64(0)), a, b);
                 }));
      return Status::ok();
    }
    case Opcode::Split: {
      Rep src = rep(op.operands[0]);
      for (int k = 0; k < 2; ++k) {
        ValueId r = op.results[k];
        if (!m_.types.is_block(f_.type_of(r))) {
          reps_[r] = scalar_rep(elem(src, Idx{b_.getInt64(k)}), e);
          continue;
        }
        set_result(r, view(src, [this, k](const Idx& idx) {
                     Idx full(idx.begin(), idx.end());
                     full.push_back(b_.getInt64(k));
                     return full;
                   }));
      }
      return Status::ok();
    }
    case Opcode::Cat: {
      const Rep& lhs = rep(op.operands[0]);
      const Rep& rhs = rep(op.operands[1]);
      if (num_elems(lhs.shape) + num_elems(rhs.shape) != num_elems(rs))
        return error(o, Code::Compile, "'cat' result has the wrong size");
      llvm::Type* mt = mem_ty(e);
      llvm::Value* buf = alloca_buffer(mt, num_elems(rs), elem_bytes(e));
      store_into(lhs, buf);
      store_into(rhs, b_.CreateConstGEP1_64(mt, buf, num_elems(lhs.shape)));
      reps_[res] = buffer_rep(buf, e, rs);
      return Status::ok();
    }
    default:
      return error(o, Code::Internal, "not a shape op");
  }
}

}  // namespace tri::codegen::cpu::detail
