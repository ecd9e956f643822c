// Affine lane forms (see Affine in lower_impl.h) and what they decide cheaply: the address
// range of a pointer block, whether every lane of a mask is on, and the box of lanes a mask of
// compares selects; and the versioned walks of masked memory accesses built on them.
#include "codegen/cpu/lower_impl.h"

#include <algorithm>
#include <cassert>

#include "codegen/scalar_ops.h"
#include "codegen/vec_math.h"

namespace tri::codegen::cpu::detail {

std::shared_ptr<const Affine> FnLowering::make_affine(llvm::Value* base, std::vector<llvm::Value*> stride,
                                                      const Shape& s, llvm::Value* ptr, llvm::Value* exact) {
  auto a = std::make_shared<Affine>();
  a->base = base;
  a->stride = std::move(stride);
  a->ptr = ptr;
  if (!exact) {
    llvm::Value *lo, *hi;
    affine_range(*a, s, &lo, &hi);
    exact = fits_i32(lo, hi);
  }
  a->exact = exact;
  return a;
}

std::shared_ptr<const Affine> FnLowering::affine_of(const Rep& r) {
  if (r.aff) return r.aff;
  if (!r.is_uniform()) return nullptr;
  std::vector<llvm::Value*> zeros(r.shape.size(), b_.getInt64(0));
  if (r.et.ptr) return make_affine(b_.getInt64(0), zeros, r.shape, r.v, b_.getTrue());
  if (r.et.s != Scalar::I32) return nullptr;
  return make_affine(b_.CreateSExt(r.v, b_.getInt64Ty()), zeros, r.shape, nullptr, b_.getTrue());
}

std::shared_ptr<const Affine> FnLowering::affine_result(Opcode code, const std::vector<Rep>& ins,
                                                        const std::vector<EType>& ets, const Shape& s) {
  if (ins.size() != 2) return nullptr;
  auto stride = [&](const Affine& a, size_t d) { return d < a.stride.size() ? a.stride[d] : b_.getInt64(0); };
  if (code == Opcode::AddPtr) {
    if (!ets[0].ptr || ets[1].ptr || ets[1].s != Scalar::I32) return nullptr;
    auto p = affine_of(ins[0]), o = affine_of(ins[1]);
    if (!p || !o || !p->ptr || o->ptr) return nullptr;
    llvm::Value* sz = b_.getInt64(elem_bytes(EType{false, ets[0].s}));
    std::vector<llvm::Value*> st;
    for (size_t d = 0; d < s.size(); ++d) st.push_back(b_.CreateAdd(stride(*p, d), b_.CreateMul(stride(*o, d), sz)));
    return make_affine(b_.CreateAdd(p->base, b_.CreateMul(o->base, sz)), st, s, p->ptr, b_.CreateAnd(p->exact, o->exact));
  }
  if (code != Opcode::Add && code != Opcode::Sub && code != Opcode::Mul) return nullptr;
  if (ets[0].ptr || ets[0].s != Scalar::I32) return nullptr;
  auto a = affine_of(ins[0]), b = affine_of(ins[1]);
  if (!a || !b || a->ptr || b->ptr) return nullptr;
  std::vector<llvm::Value*> st;
  if (code == Opcode::Mul) {
    // Only by a uniform factor; the other side keeps its strides, scaled.
    const Affine* var = a.get();
    llvm::Value* k = b->base;
    if (!ins[1].is_uniform()) {
      if (!ins[0].is_uniform()) return nullptr;
      var = b.get();
      k = a->base;
    }
    for (size_t d = 0; d < s.size(); ++d) st.push_back(b_.CreateMul(stride(*var, d), k));
    return make_affine(b_.CreateMul(var->base, k), st, s);
  }
  bool add = code == Opcode::Add;
  for (size_t d = 0; d < s.size(); ++d)
    st.push_back(add ? b_.CreateAdd(stride(*a, d), stride(*b, d)) : b_.CreateSub(stride(*a, d), stride(*b, d)));
  return make_affine(add ? b_.CreateAdd(a->base, b->base) : b_.CreateSub(a->base, b->base), st, s);
}

void FnLowering::affine_range(const Affine& a, const Shape& s, llvm::Value** lo, llvm::Value** hi) {
  llvm::Value* l = a.base;
  llvm::Value* h = a.base;
  for (size_t d = 0; d < a.stride.size() && d < s.size(); ++d) {
    if (s[d] == 1) continue;
    llvm::Value* span = b_.CreateMul(a.stride[d], b_.getInt64(s[d] - 1));
    llvm::Value* neg = b_.CreateICmpSLT(span, b_.getInt64(0));
    l = b_.CreateAdd(l, b_.CreateSelect(neg, span, b_.getInt64(0)));
    h = b_.CreateAdd(h, b_.CreateSelect(neg, b_.getInt64(0), span));
  }
  *lo = l;
  *hi = h;
}

llvm::Value* FnLowering::fits_i32(llvm::Value* lo, llvm::Value* hi) {
  return b_.CreateAnd(b_.CreateICmpSGE(lo, b_.getInt64(INT32_MIN)), b_.CreateICmpSLE(hi, b_.getInt64(INT32_MAX)));
}

llvm::Value* FnLowering::mask_all_on(ValueId v, int depth) {
  const Rep& r = rep(v);
  if (r.is_uniform()) return r.v;
  const ir::ValueData& vd = f_.value(v);
  if (vd.def_op == ir::kNoOp || depth > 16) return nullptr;
  const ir::OpData& op = f_.op(vd.def_op);
  switch (op.code) {
    case Opcode::And: {
      llvm::Value* a = mask_all_on(op.operands[0], depth + 1);
      llvm::Value* b = a ? mask_all_on(op.operands[1], depth + 1) : nullptr;
      return b ? b_.CreateAnd(a, b) : nullptr;
    }
    case Opcode::Broadcast: case Opcode::ExpandDims: case Opcode::Reshape: case Opcode::Permute:
    case Opcode::MultipleOf: case Opcode::MaxContiguous:
      return mask_all_on(op.operands[0], depth + 1);
    case Opcode::Cmp: {
      const Rep& ra = rep(op.operands[0]);
      const Rep& rb = rep(op.operands[1]);
      if (ra.et.ptr || ra.et.s != Scalar::I32) return nullptr;
      auto a = affine_of(ra), b = affine_of(rb);
      if (!a || !b || a->ptr || b->ptr) return nullptr;
      const Shape& sh = r.shape;
      std::vector<llvm::Value*> st;
      for (size_t d = 0; d < sh.size(); ++d)
        st.push_back(b_.CreateSub(d < a->stride.size() ? a->stride[d] : b_.getInt64(0),
                                  d < b->stride.size() ? b->stride[d] : b_.getInt64(0)));
      Affine diff;
      diff.base = b_.CreateSub(a->base, b->base);
      diff.stride = st;
      llvm::Value *lo, *hi, *alo, *ahi, *blo, *bhi;
      affine_range(diff, sh, &lo, &hi);
      affine_range(*a, sh, &alo, &ahi);
      affine_range(*b, sh, &blo, &bhi);
      llvm::Value* zero = b_.getInt64(0);
      llvm::Value* nonneg = b_.CreateAnd(b_.CreateICmpSGE(alo, zero), b_.CreateICmpSGE(blo, zero));
      llvm::Value* all;
      switch (enum_attr(vd.def_op, "pred")) {
        case 2: all = b_.CreateICmpSLT(hi, zero); break;                                   // slt
        case 3: all = b_.CreateICmpSLE(hi, zero); break;                                   // sle
        case 4: all = b_.CreateICmpSGT(lo, zero); break;                                   // sgt
        case 5: all = b_.CreateICmpSGE(lo, zero); break;                                   // sge
        case 6: all = b_.CreateAnd(nonneg, b_.CreateICmpSLT(hi, zero)); break;             // ult
        case 7: all = b_.CreateAnd(nonneg, b_.CreateICmpSLE(hi, zero)); break;             // ule
        case 8: all = b_.CreateAnd(nonneg, b_.CreateICmpSGT(lo, zero)); break;             // ugt
        case 9: all = b_.CreateAnd(nonneg, b_.CreateICmpSGE(lo, zero)); break;             // uge
        default: return nullptr;
      }
      return b_.CreateAnd(all, b_.CreateAnd(a->exact, b->exact));
    }
    default:
      return nullptr;
  }
}

void FnLowering::addr_range(const Rep& p, int bytes, llvm::Value** lo, llvm::Value** hi) {
  llvm::Type* i64 = b_.getInt64Ty();
  if (auto a = affine_of(p)) {
    if (a->ptr) {
      llvm::Value *l, *h;
      affine_range(*a, p.shape, &l, &h);
      llvm::Value* base = b_.CreatePtrToInt(a->ptr, i64);
      // Lanes that wrapped make the range unknown: report all of memory (a conflict).
      *lo = b_.CreateSelect(a->exact, b_.CreateAdd(base, l), b_.getInt64(0));
      *hi = b_.CreateSelect(a->exact, b_.CreateAdd(b_.CreateAdd(base, h), b_.getInt64(bytes)), b_.getInt64(~uint64_t(0)));
      return;
    }
  }
  if (p.is_uniform()) {
    *lo = b_.CreatePtrToInt(p.v, i64);
    *hi = b_.CreateAdd(*lo, b_.getInt64(bytes));
    return;
  }
  llvm::Value* lv = alloca_scalar(i64);
  llvm::Value* hv = alloca_scalar(i64);
  b_.CreateStore(b_.getInt64(~uint64_t(0)), lv);
  b_.CreateStore(b_.getInt64(0), hv);
  loop_nest(p.shape, [&](const Idx& idx) {
    llvm::Value* a = b_.CreatePtrToInt(elem(p, idx), i64);
    b_.CreateStore(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b_.CreateLoad(i64, lv), a), lv);
    b_.CreateStore(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, b_.CreateLoad(i64, hv), a), hv);
  });
  *lo = b_.CreateLoad(i64, lv);
  *hi = b_.CreateAdd(b_.CreateLoad(i64, hv), b_.getInt64(bytes));
}

llvm::Value* FnLowering::all_active(ValueId v) {
  for (auto& scope : mask_scopes_)
    for (auto& [mv, flag] : scope)
      if (mv == v) return flag;
  const Rep& m = rep(v);
  llvm::Value* all;
  if (m.is_uniform()) {
    all = m.v;
  } else if (llvm::Value* known = mask_all_on(v)) {
    all = known;
  } else {
    llvm::Value* flag = alloca_scalar(b_.getInt1Ty());
    b_.CreateStore(b_.getTrue(), flag);
    loop_nest(m.shape, [&](const Idx& idx) {
      b_.CreateStore(b_.CreateAnd(b_.CreateLoad(b_.getInt1Ty(), flag), elem(m, idx)), flag);
    });
    all = b_.CreateLoad(b_.getInt1Ty(), flag);
  }
  if (!mask_scopes_.empty()) mask_scopes_.back().push_back({v, all});
  return all;
}

void FnLowering::versioned(ValueId mask, const Shape& s, const std::function<void(const Walk&)>& body) {
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "masked.end", lf_);
  Walk box{Walk::Kind::Box, {}, {}};
  for (int64_t d : s) {
    box.lo.push_back(b_.getInt64(0));
    box.hi.push_back(b_.getInt64(d));
  }
  llvm::Value* ok = b_.getTrue();
  // A box covers the all-on case too (as the whole block), so there is no separate all-on walk
  // then: its loops have run-time bounds, which cost nothing measurable and halve the code.
  const bool has_box = !s.empty() && mask_box(mask, s, &box.lo, &box.hi, &ok);
  if (!has_box) {
    llvm::Value* all = all_active(mask);
    llvm::BasicBlock* fast = llvm::BasicBlock::Create(c_, "all.on", lf_);
    llvm::BasicBlock* rest = llvm::BasicBlock::Create(c_, "not.all.on", lf_);
    b_.CreateCondBr(all, fast, rest);
    b_.SetInsertPoint(fast);
    body(Walk{Walk::Kind::AllOn, {}, {}});
    b_.CreateBr(done);
    b_.SetInsertPoint(rest);
  }
  if (has_box) {
    for (size_t d = 0; d < s.size(); ++d) {
      llvm::Value* zero = b_.getInt64(0);
      llvm::Value* l = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, box.lo[d], zero), b_.getInt64(s[d]));
      llvm::Value* h = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, box.hi[d], b_.getInt64(s[d]));
      box.lo[d] = l;
      box.hi[d] = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, h, l);
    }
    llvm::BasicBlock* boxed = llvm::BasicBlock::Create(c_, "box", lf_);
    llvm::BasicBlock* slow = llvm::BasicBlock::Create(c_, "masked", lf_);
    b_.CreateCondBr(ok, boxed, slow);
    b_.SetInsertPoint(boxed);
    body(box);
    b_.CreateBr(done);
    b_.SetInsertPoint(slow);
    // Only lanes whose offsets wrap around i32 get here.
    bool was = cold_;
    cold_ = true;
    body(Walk{Walk::Kind::Masked, {}, {}});
    cold_ = was;
  } else {
    body(Walk{Walk::Kind::Masked, {}, {}});
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void FnLowering::walk_lanes(const Shape& s, const Walk& w, const std::function<void(const Idx&)>& body) {
  if (w.kind != Walk::Kind::Box) {
    loop_nest(s, body);
    return;
  }
  Idx idx(s.size(), nullptr);
  std::function<void(size_t)> rec = [&](size_t d) {
    if (d == s.size()) {
      body(idx);
      return;
    }
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(c_, "box.loop", lf_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(c_, "box.end", lf_);
    b_.CreateCondBr(b_.CreateICmpSLT(w.lo[d], w.hi[d]), loop, exit);
    b_.SetInsertPoint(loop);
    llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2);
    iv->addIncoming(w.lo[d], pre);
    idx[d] = iv;
    rec(d + 1);
    llvm::Value* next = b_.CreateAdd(iv, b_.getInt64(1), "", true, true);
    iv->addIncoming(next, b_.GetInsertBlock());
    mark_loop(b_.CreateCondBr(b_.CreateICmpSLT(next, w.hi[d]), loop, exit));
    ++loops_;
    b_.SetInsertPoint(exit);
  };
  rec(0);
}

bool FnLowering::mask_box(ValueId v, const Shape& s, std::vector<llvm::Value*>* lo, std::vector<llvm::Value*>* hi,
                          llvm::Value** ok, int depth) {
  const Rep& r = rep(v);
  if (r.is_uniform()) {
    if (!s.empty()) (*hi)[0] = b_.CreateSelect(r.v, (*hi)[0], b_.getInt64(0));
    return true;
  }
  const ir::ValueData& vd = f_.value(v);
  if (vd.def_op == ir::kNoOp || depth > 16) return false;
  const ir::OpData& op = f_.op(vd.def_op);
  auto narrow_lo = [&](size_t d, llvm::Value* x) { (*lo)[d] = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, (*lo)[d], x); };
  auto narrow_hi = [&](size_t d, llvm::Value* x) { (*hi)[d] = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, (*hi)[d], x); };
  switch (op.code) {
    case Opcode::And:
      return mask_box(op.operands[0], s, lo, hi, ok, depth + 1) && mask_box(op.operands[1], s, lo, hi, ok, depth + 1);
    case Opcode::MultipleOf: case Opcode::MaxContiguous:
      return mask_box(op.operands[0], s, lo, hi, ok, depth + 1);
    case Opcode::Broadcast: {
      Shape ss = shape(f_.type_of(op.operands[0]));
      if (ss.size() != s.size()) return false;
      std::vector<llvm::Value*> slo, shi;
      for (int64_t d : ss) {
        slo.push_back(b_.getInt64(0));
        shi.push_back(b_.getInt64(d));
      }
      if (!mask_box(op.operands[0], ss, &slo, &shi, ok, depth + 1)) return false;
      for (size_t d = 0; d < s.size(); ++d) {
        if (ss[d] == s[d]) {
          narrow_lo(d, slo[d]);
          narrow_hi(d, shi[d]);
        } else {
          // A broadcast dimension is all on or all off, as its one source lane.
          llvm::Value* on = b_.CreateAnd(b_.CreateICmpSLE(slo[d], b_.getInt64(0)), b_.CreateICmpSGT(shi[d], b_.getInt64(0)));
          (*hi)[d] = b_.CreateSelect(on, (*hi)[d], b_.getInt64(0));
        }
      }
      return true;
    }
    case Opcode::ExpandDims: {
      size_t axis = static_cast<size_t>(f_.attr(vd.def_op, "axis").i);
      if (axis >= s.size()) return false;
      Shape ss;
      std::vector<llvm::Value*> slo, shi;
      for (size_t d = 0; d < s.size(); ++d)
        if (d != axis) {
          ss.push_back(s[d]);
          slo.push_back((*lo)[d]);
          shi.push_back((*hi)[d]);
        }
      if (!mask_box(op.operands[0], ss, &slo, &shi, ok, depth + 1)) return false;
      for (size_t d = 0, k = 0; d < s.size(); ++d)
        if (d != axis) {
          (*lo)[d] = slo[k];
          (*hi)[d] = shi[k++];
        }
      return true;
    }
    case Opcode::Cmp: {
      const Rep& ra = rep(op.operands[0]);
      const Rep& rb = rep(op.operands[1]);
      if (ra.et.ptr || ra.et.s != Scalar::I32) return false;
      auto a = affine_of(ra), b = affine_of(rb);
      if (!a || !b || a->ptr || b->ptr) return false;
      // d(idx) = a - b must move along at most one dimension, with stride +-1.
      int dim = -1;
      int64_t sigma = 0;
      for (size_t d = 0; d < s.size(); ++d) {
        llvm::Value* st = b_.CreateSub(d < a->stride.size() ? a->stride[d] : b_.getInt64(0),
                                       d < b->stride.size() ? b->stride[d] : b_.getInt64(0));
        auto* c = llvm::dyn_cast<llvm::ConstantInt>(st);
        if (!c) return false;
        int64_t k = c->getSExtValue();
        if (k == 0 || s[d] == 1) continue;
        if ((k != 1 && k != -1) || dim >= 0) return false;
        dim = static_cast<int>(d);
        sigma = k;
      }
      llvm::Value* base = b_.CreateSub(a->base, b->base);
      int64_t pred = enum_attr(vd.def_op, "pred");
      llvm::Value* exact = b_.CreateAnd(a->exact, b->exact);
      if (pred >= 6 && pred <= 9) {  // unsigned: the same as signed when both sides are >= 0
        llvm::Value *alo, *ahi, *blo, *bhi;
        affine_range(*a, s, &alo, &ahi);
        affine_range(*b, s, &blo, &bhi);
        exact = b_.CreateAnd(exact, b_.CreateAnd(b_.CreateICmpSGE(alo, b_.getInt64(0)), b_.CreateICmpSGE(blo, b_.getInt64(0))));
        pred -= 4;
      }
      if (pred < 2 || pred > 5) return false;
      *ok = b_.CreateAnd(*ok, exact);
      llvm::Value* one = b_.getInt64(1);
      if (dim < 0) {
        // The same for every lane: all on or all off.
        llvm::Value* zero = b_.getInt64(0);
        llvm::Value* on = pred == 2 ? b_.CreateICmpSLT(base, zero) : pred == 3 ? b_.CreateICmpSLE(base, zero)
                        : pred == 4 ? b_.CreateICmpSGT(base, zero) : b_.CreateICmpSGE(base, zero);
        (*hi)[0] = b_.CreateSelect(on, (*hi)[0], zero);
        return true;
      }
      llvm::Value* nb = b_.CreateNeg(base);
      size_t d = static_cast<size_t>(dim);
      // base + sigma * i  (pred)  0
      if (sigma == 1) {
        if (pred == 2) narrow_hi(d, nb);                      // i < -base
        if (pred == 3) narrow_hi(d, b_.CreateAdd(nb, one));   // i <= -base
        if (pred == 4) narrow_lo(d, b_.CreateAdd(nb, one));   // i > -base
        if (pred == 5) narrow_lo(d, nb);                      // i >= -base
      } else {
        if (pred == 2) narrow_lo(d, b_.CreateAdd(base, one)); // i > base
        if (pred == 3) narrow_lo(d, base);                    // i >= base
        if (pred == 4) narrow_hi(d, base);                    // i < base
        if (pred == 5) narrow_hi(d, b_.CreateAdd(base, one)); // i <= base
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace tri::codegen::cpu::detail
