// Loads, stores and atomics of the CPU lowering: masked lanes as branches (or walks over a
// mask's box), loads deferred into their only consumer with a run-time overlap check against
// the store that reads them, and atomics as LLVM atomicrmw/cmpxchg (compare-and-swap loops where
// LLVM has no operation for the type or kind).
#include "codegen/cpu/lower_impl.h"

#include <algorithm>
#include <cassert>

#include "codegen/scalar_ops.h"
#include "codegen/vec_math.h"

namespace tri::codegen::cpu::detail {

// A load is deferred when its value flows, through single-use elementwise and shape ops in the
// same region, into one store (as the value or the mask), reduce, scan or dot there, with no op
// that may write memory in between: then reading it where the consumer evaluates it gives the
// same values as reading it first, and saves a pass over a buffer.
void FnLowering::analyze_deferred_loads() {
  const ir::Function& f = f_;
  defer_sink_.assign(f.ops.size(), ir::kNoOp);
  std::vector<std::vector<OpId>> users(f.values.size());
  std::vector<size_t> pos(f.ops.size(), 0);
  for (const ir::BlockData& bd : f.blocks)
    for (size_t i = 0; i < bd.ops.size(); ++i) pos[bd.ops[i]] = i;
  for (OpId o = 0; o < f.ops.size(); ++o) {
    if (f.op(o).parent == ir::kNoBlock) continue;
    for (ValueId v : f.op(o).operands)
      if (v != ir::kNoValue) users[v].push_back(o);
  }
  auto chain_op = [](const ir::OpData& op) {
    switch (op.code) {
      case Opcode::Cmp: case Opcode::FCmp: case Opcode::Select: case Opcode::AddPtr: case Opcode::Broadcast:
      case Opcode::ExpandDims: case Opcode::Permute: case Opcode::Reshape: case Opcode::Join:
      case Opcode::MultipleOf: case Opcode::MaxContiguous:
        return op.results.size() == 1;
      default: {
        ir::OpRule r = ir::op_info(op.code).rule;
        return r != ir::OpRule::Custom && op.results.size() == 1;
      }
    }
  };
  auto writes = [](Opcode c) {
    // A wait lets other programs' stores in: a load before it must read before it.
    return c == Opcode::Store || c == Opcode::Atomic || c == Opcode::AtomicCas || c == Opcode::Call ||
           c == Opcode::For || c == Opcode::If || c == Opcode::While || c == Opcode::InlineAsm ||
           c == Opcode::Wait || c == Opcode::Notify || c == Opcode::Put;
  };
  for (OpId l = 0; l < f.ops.size(); ++l) {
    const ir::OpData& lo = f.op(l);
    if (lo.code != Opcode::Load || lo.parent == ir::kNoBlock || f.attr(l, "volatile").i != 0) continue;
    if (!m_.types.is_block(f.type_of(lo.results[0]))) continue;
    ValueId v = lo.results[0];
    OpId sink = ir::kNoOp;
    for (;;) {
      if (users[v].size() != 1) break;
      OpId u = users[v][0];
      const ir::OpData& uo = f.op(u);
      if (uo.parent != lo.parent) break;
      if (uo.code == Opcode::Store) {
        if (uo.operands[0] != v) sink = u;  // not the address
        break;
      }
      if (uo.code == Opcode::Reduce || uo.code == Opcode::Scan || uo.code == Opcode::Dot) {
        sink = u;
        break;
      }
      if (!chain_op(uo)) break;
      v = uo.results[0];
    }
    if (sink == ir::kNoOp) continue;
    const std::vector<OpId>& ops = f.block(lo.parent).ops;
    bool clean = true;
    for (size_t i = pos[l] + 1; i < pos[sink]; ++i)
      if (writes(f.op(ops[i]).code)) clean = false;
    if (!clean) continue;
    defer_sink_[l] = sink;
    sink_loads_[sink].push_back(l);
  }
}

// ---------------------------------------------------------------------------------------------
// Memory

llvm::Value* FnLowering::load_lane(const Rep& ptr, const Rep& mask, const Rep& other, EType e, bool vol,
                                   const Idx& idx, bool masked, std::pair<llvm::MDNode*, llvm::MDNode*> alias) {
  llvm::Type* mt = mem_ty(e);
  llvm::Align align(elem_bytes(e));
  llvm::Value* addr = elem(ptr, idx);
  auto load = [&] {
    llvm::LoadInst* ld = b_.CreateAlignedLoad(mt, addr, align, vol);
    if (alias.first) {
      ld->setMetadata(llvm::LLVMContext::MD_alias_scope, alias.first);
      ld->setMetadata(llvm::LLVMContext::MD_noalias, alias.second);
    }
    return from_mem(b_, ld, e.s);
  };
  if (!masked) return load();
  llvm::Value* m = elem(mask, idx);
  // Masked-off lanes read `other`, or 0 when it is absent (any value would do).
  llvm::Value* alt = other.kind != Rep::Kind::None ? elem(other, idx) : llvm::Constant::getNullValue(reg_ty(e));
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* ld_bb = llvm::BasicBlock::Create(c_, "load", lf_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(c_, "load.end", lf_);
  b_.CreateCondBr(m, ld_bb, merge);
  b_.SetInsertPoint(ld_bb);
  llvm::Value* x = load();
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  llvm::PHINode* phi = b_.CreatePHI(reg_ty(e), 2);
  phi->addIncoming(x, ld_bb);
  phi->addIncoming(alt, pre);
  return phi;
}

bool FnLowering::known_on(ValueId mask) const {
  return std::find(known_on_.begin(), known_on_.end(), mask) != known_on_.end();
}

Status FnLowering::lower_load(OpId o) {
  const ir::OpData& op = f_.op(o);
  ValueId res = op.results[0];
  TypeId rt = f_.type_of(res);
  EType e = etype(rt);
  Rep ptr = rep(op.operands[0]);
  ValueId mv = f_.operand(o, "mask"), ov = f_.operand(o, "other");
  Rep mask = mv != ir::kNoValue ? rep(mv) : Rep();
  Rep other = ov != ir::kNoValue ? rep(ov) : Rep();
  const bool vol = f_.attr(o, "volatile").i != 0;
  const bool has_mask = mask.kind != Rep::Kind::None;
  if (!m_.types.is_block(rt)) {
    reps_[res] = scalar_rep(load_lane(ptr, mask, other, e, vol, Idx{}, has_mask), e);
    return Status::ok();
  }
  Shape rs = shape(rt);
  if (defer_sink_[o] != ir::kNoOp) {
    auto d = std::make_shared<Deferred>();
    d->ptr = ptr;
    d->mask = mask;
    d->other = other;
    d->e = e;
    d->shape = rs;
    d->ptr_v = op.operands[0];
    d->mask_v = mv;
    deferred_[o] = d;
    int cost = 4 + (ptr.kind == Rep::Kind::Lazy ? ptr.cost : 1);
    reps_[res] = lazy_rep(e, rs, cost, [this, d](const Idx& idx) -> llvm::Value* {
      if (d->use_buffer) return elem(buffer_rep(d->buf, d->e, d->shape), idx);
      bool masked = d->mask.kind != Rep::Kind::None && !known_on(d->mask_v);
      return load_lane(d->ptr, d->mask, d->other, d->e, false, idx, masked, d->alias);
    });
    return Status::ok();
  }
  llvm::Type* mt = mem_ty(e);
  llvm::Value* buf = alloca_buffer(mt, num_elems(rs), elem_bytes(e));
  auto fill = [&](const Walk& w) {
    if (w.kind == Walk::Kind::Box) {
      // Lanes outside the box read `other` (or 0): fill those first, then load the box.
      Rep alt = other.kind != Rep::Kind::None ? other : uniform_rep(llvm::Constant::getNullValue(reg_ty(e)), e, rs);
      store_into(alt.kind == Rep::Kind::Scalar ? uniform_rep(alt.v, e, rs) : alt, buf);
    }
    walk_lanes(rs, w, [&](const Idx& idx) {
      llvm::Value* v = to_mem(b_, load_lane(ptr, mask, other, e, vol, idx, w.kind == Walk::Kind::Masked), e.s);
      b_.CreateStore(v, b_.CreateGEP(mt, buf, linear(idx, rs)));
    });
  };
  if (has_mask) {
    versioned(mv, rs, fill);
  } else {
    fill(Walk{Walk::Kind::AllOn, {}, {}});
  }
  reps_[res] = buffer_rep(buf, e, rs);
  return Status::ok();
}

Status FnLowering::lower_store(OpId o) {
  const ir::OpData& op = f_.op(o);
  Rep ptr = rep(op.operands[0]);
  Rep val = rep(op.operands[1]);
  ValueId mv = f_.operand(o, "mask");
  Rep mask = mv != ir::kNoValue ? rep(mv) : Rep();
  EType e = etype(f_.type_of(op.operands[1]));
  llvm::Type* mt = mem_ty(e);
  llvm::Align align(elem_bytes(e));
  auto lane = [&](const Idx& idx, bool masked) {
    auto body = [&] {
      llvm::Value* v = to_mem(b_, elem(val, idx), e.s);
      llvm::StoreInst* st = b_.CreateAlignedStore(v, elem(ptr, idx), align);
      if (alias_store_.first) {
        st->setMetadata(llvm::LLVMContext::MD_alias_scope, alias_store_.first);
        st->setMetadata(llvm::LLVMContext::MD_noalias, alias_store_.second);
      }
    };
    if (!masked) {
      body();
    } else {
      emit_if(elem(mask, idx), body);
    }
  };
  const bool has_mask = mask.kind != Rep::Kind::None;
  if (!ptr.is_block()) {
    lane(Idx{}, has_mask);
    return Status::ok();
  }
  (void)mt;
  auto all = [&](const Walk& w) {
    bool masked = w.kind == Walk::Kind::Masked;
    if (!masked && has_mask) known_on_.push_back(mv);
    walk_lanes(ptr.shape, w, [&](const Idx& idx) { lane(idx, masked); });
    if (!masked && has_mask) known_on_.pop_back();
  };
  auto store_all = [&] {
    if (has_mask) {
      versioned(mv, ptr.shape, all);
    } else {
      all(Walk{Walk::Kind::AllOn, {}, {}});
    }
  };
  // Deferred loads are read while this store writes: fine lane by lane at the same address
  // (an in-place update through the same pointer value), or when the address ranges are
  // disjoint; otherwise they are read into buffers first, as the block semantics say.
  std::vector<std::shared_ptr<Deferred>> ds;
  auto it = sink_loads_.find(o);
  if (it != sink_loads_.end())
    for (OpId l : it->second) {
      auto d = deferred_.find(l);
      if (d != deferred_.end() && d->second->ptr_v != op.operands[0]) ds.push_back(d->second);
    }
  if (ds.empty()) {
    store_all();
    return Status::ok();
  }
  llvm::Value *slo, *shi;
  addr_range(ptr, elem_bytes(e), &slo, &shi);
  llvm::Value* ok = b_.getTrue();
  for (const auto& d : ds) {
    llvm::Value *dlo, *dhi;
    addr_range(d->ptr, elem_bytes(d->e), &dlo, &dhi);
    ok = b_.CreateAnd(ok, b_.CreateOr(b_.CreateICmpULE(shi, dlo), b_.CreateICmpULE(dhi, slo)));
  }
  // Whether the mask is all on is cached for the rest of the region (all_active): compute it
  // here, before the branch, so the cached value dominates the later ops that reuse it.
  if (has_mask && !ptr.shape.empty()) all_active(mv);
  llvm::BasicBlock* fused = llvm::BasicBlock::Create(c_, "store.fused", lf_);
  llvm::BasicBlock* staged = llvm::BasicBlock::Create(c_, "store.staged", lf_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "store.end", lf_);
  b_.CreateCondBr(ok, fused, staged);
  b_.SetInsertPoint(fused);
  {
    // Here the store and the deferred loads are known not to overlap: say so to LLVM (scoped
    // noalias metadata), so that the vectorizer needs no run-time checks of its own.
    llvm::MDBuilder mdb(c_);
    llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain("tri.store");
    llvm::MDNode* store_scope = mdb.createAnonymousAliasScope(domain, "store");
    llvm::MDNode* load_scope = mdb.createAnonymousAliasScope(domain, "loads");
    alias_store_ = {llvm::MDNode::get(c_, {store_scope}), llvm::MDNode::get(c_, {load_scope})};
    for (const auto& d : ds) d->alias = {llvm::MDNode::get(c_, {load_scope}), llvm::MDNode::get(c_, {store_scope})};
    store_all();
    for (const auto& d : ds) d->alias = {nullptr, nullptr};
    alias_store_ = {nullptr, nullptr};
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(staged);
  // Only overlapping memory gets here.
  bool was_cold = cold_;
  cold_ = true;
  for (const auto& d : ds) {
    d->buf = alloca_buffer(mem_ty(d->e), num_elems(d->shape), elem_bytes(d->e));
    bool masked = d->mask.kind != Rep::Kind::None;
    loop_nest(d->shape, [&](const Idx& idx) {
      llvm::Value* v = to_mem(b_, load_lane(d->ptr, d->mask, d->other, d->e, false, idx, masked), d->e.s);
      b_.CreateStore(v, b_.CreateGEP(mem_ty(d->e), d->buf, linear(idx, d->shape)));
    });
    d->use_buffer = true;
  }
  all(Walk{has_mask ? Walk::Kind::Masked : Walk::Kind::AllOn, {}, {}});
  for (const auto& d : ds) d->use_buffer = false;
  cold_ = was_cold;
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return Status::ok();
}

Status FnLowering::lower_atomic(OpId o) {
  const ir::OpData& op = f_.op(o);
  const bool cas = op.code == Opcode::AtomicCas;
  ValueId res = op.results[0];
  TypeId rt = f_.type_of(res);
  EType e = etype(rt);
  if (e.ptr) return error(o, Code::Compile, "atomics on pointer elements are not supported");
  Rep ptr = rep(op.operands[0]);
  Rep cmp = cas ? rep(op.operands[1]) : Rep();
  Rep val = rep(op.operands[cas ? 2 : 1]);
  ValueId mv = f_.operand(o, "mask");
  Rep mask = mv != ir::kNoValue ? rep(mv) : Rep();
  llvm::AtomicOrdering ord = atomic_ordering(enum_attr(o, "order"));
  llvm::MaybeAlign align(elem_bytes(e));
  auto one = [&](const Idx& idx) -> llvm::Value* {
    llvm::Value* p = elem(ptr, idx);
    llvm::Value* v = elem(val, idx);
    if (!cas) return atomic_lane(o, p, v, e);
    // Compare-and-swap compares bits (floats included, as the GPU does).
    llvm::Type* it = b_.getIntNTy(elem_bytes(e) * 8);
    auto bits = [&](llvm::Value* x) -> llvm::Value* {
      if (e.s == Scalar::I1) return b_.CreateZExt(x, it);
      return x->getType() == it ? x : b_.CreateBitCast(x, it);
    };
    llvm::Value* pair = b_.CreateAtomicCmpXchg(p, bits(elem(cmp, idx)), bits(v), align, ord, atomic_failure_ordering(ord));
    llvm::Value* old = b_.CreateExtractValue(pair, 0);
    if (e.s == Scalar::I1) return b_.CreateICmpNE(old, b_.getInt8(0));
    return old->getType() == reg_ty(e) ? old : b_.CreateBitCast(old, reg_ty(e));
  };
  auto lane = [&](const Idx& idx) -> llvm::Value* {
    if (mask.kind == Rep::Kind::None) return one(idx);
    llvm::Value* m = elem(mask, idx);
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* on = llvm::BasicBlock::Create(c_, "atomic", lf_);
    llvm::BasicBlock* merge = llvm::BasicBlock::Create(c_, "atomic.end", lf_);
    b_.CreateCondBr(m, on, merge);
    b_.SetInsertPoint(on);
    llvm::Value* r = one(idx);
    llvm::BasicBlock* on_end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
    llvm::PHINode* phi = b_.CreatePHI(reg_ty(e), 2);
    phi->addIncoming(r, on_end);
    phi->addIncoming(llvm::Constant::getNullValue(reg_ty(e)), pre);
    return phi;
  };
  if (!m_.types.is_block(rt)) {
    reps_[res] = scalar_rep(lane(Idx{}), e);
    return Status::ok();
  }
  Shape rs = shape(rt);
  llvm::Type* mt = mem_ty(e);
  llvm::Value* buf = alloca_buffer(mt, num_elems(rs), elem_bytes(e));
  loop_nest(rs, [&](const Idx& idx) {
    llvm::Value* v = to_mem(b_, lane(idx), e.s);
    b_.CreateStore(v, b_.CreateGEP(mt, buf, linear(idx, rs)));
  });
  reps_[res] = buffer_rep(buf, e, rs);
  return Status::ok();
}

}  // namespace tri::codegen::cpu::detail
