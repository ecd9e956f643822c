// The distributed ops on the CPU (docs/distributed.md): the ranks of a team are threads of one
// process and the symmetric heap is host memory, so a peer's copy of a buffer is an address
// (symm_at: p + bases[r] - heap_base, read from the launch's TeamHead), put and get are stores
// and loads through it, notify is a release store or add, and wait calls the runtime, which
// spins with a timeout. The ordering the ops promise comes from the release atomics and from
// the wait being a call LLVM cannot move memory accesses across (its acquire load is inside).
#include "codegen/cpu/lower_impl.h"

#include "codegen/scalar_ops.h"

namespace tri::codegen::cpu::detail {

llvm::Value* FnLowering::team_field(int offset, llvm::Type* t) {
  return b_.CreateLoad(t, b_.CreateConstGEP1_64(b_.getInt8Ty(), launch_, kTeamHeadOffset + offset));
}

llvm::Value* FnLowering::pid_array() {
  llvm::Value* pids = alloca_buffer(b_.getInt32Ty(), 3, 4);
  for (int i = 0; i < 3; ++i) b_.CreateStore(pid_[i], b_.CreateConstGEP1_64(b_.getInt32Ty(), pids, i));
  return pids;
}

void FnLowering::dist_error_if(OpId o, llvm::Value* bad, int what, llvm::Value* value) {
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(c_, "dist.fail", lf_);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(c_, "dist.ok", lf_);
  b_.CreateCondBr(bad, fail, ok, llvm::MDBuilder(c_).createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(fail);
  uint32_t index = static_cast<uint32_t>(ml_.sites->errors.size());
  ml_.sites->errors.push_back({f_.op(o).loc, "'" + ir::op_info(f_.op(o).code).name + "'", ""});
  b_.CreateCall(ml_.dist_error_fn(), {launch_, b_.getInt32(index), pid_array(), b_.getInt32(what), value});
  b_.CreateBr(fail_block());
  b_.SetInsertPoint(ok);
}

llvm::Value* FnLowering::symm_delta(OpId o, llvm::Value* rank) {
  llvm::Value* n = team_field(offsetof(TeamHead, num_ranks), b_.getInt32Ty());
  // Unsigned: a negative rank is out of range too.
  dist_error_if(o, b_.CreateICmpUGE(rank, n), 0, b_.CreateSExt(rank, b_.getInt64Ty()));
  llvm::Value* bases = team_field(offsetof(TeamHead, bases), b_.getPtrTy());
  llvm::Value* peer = b_.CreateLoad(b_.getInt64Ty(), b_.CreateGEP(b_.getInt64Ty(), bases, b_.CreateZExt(rank, b_.getInt64Ty())));
  return b_.CreateSub(peer, team_field(offsetof(TeamHead, heap_base), b_.getInt64Ty()));
}

void FnLowering::check_in_heap(OpId o, llvm::Value* lo, llvm::Value* hi, llvm::Value* first_bad) {
  llvm::Value* base = team_field(offsetof(TeamHead, heap_base), b_.getInt64Ty());
  llvm::Value* bytes = team_field(offsetof(TeamHead, heap_bytes), b_.getInt64Ty());
  llvm::Value* bad = b_.CreateOr(b_.CreateICmpUGE(b_.CreateSub(lo, base), bytes),
                                 b_.CreateICmpUGT(b_.CreateSub(hi, base), bytes));
  dist_error_if(o, bad, 1, first_bad);
}

Status FnLowering::lower_distributed(OpId o) {
  const ir::OpData& op = f_.op(o);
  switch (op.code) {
    case Opcode::Rank:
    case Opcode::NumRanks: {
      EType e = etype(f_.type_of(op.results[0]));
      int off = op.code == Opcode::Rank ? offsetof(TeamHead, rank) : offsetof(TeamHead, num_ranks);
      reps_[op.results[0]] = scalar_rep(team_field(off, b_.getInt32Ty()), e);
      return Status::ok();
    }
    case Opcode::ConsumeToken:
      // The wait before it already ordered the memory accesses after it (the file comment).
      reps_[op.results[0]] = rep(op.operands[0]);
      return Status::ok();
    case Opcode::SymmAt: return lower_symm_at(o);
    case Opcode::Wait: return lower_wait(o);
    case Opcode::Notify:
      return lower_notify(o, f_.operand(o, "ptr"), f_.operand(o, "value"), enum_name(o, "kind") == "add");
    case Opcode::Put: return lower_put(o);
    case Opcode::Get: return lower_get(o);
    default: break;
  }
  return error(o, Code::Compile, "not a distributed op");
}

Status FnLowering::lower_symm_at(OpId o) {
  const ir::OpData& op = f_.op(o);
  ValueId res = op.results[0];
  Rep p = rep(f_.operand(o, "ptr"));
  const EType e = p.et;
  const int bytes = elem_bytes(EType{false, e.s});
  llvm::Value* delta = symm_delta(o, rep(f_.operand(o, "rank")).v);
  auto shift = [this, delta](llvm::Value* x) { return b_.CreateGEP(b_.getInt8Ty(), x, delta); };
  if (!p.is_block() || p.is_uniform()) {
    llvm::Value* a = b_.CreatePtrToInt(p.v, b_.getInt64Ty());
    check_in_heap(o, a, b_.CreateAdd(a, b_.getInt64(bytes)), a);
    reps_[res] = p.is_block() ? uniform_rep(shift(p.v), e, p.shape) : scalar_rep(shift(p.v), e);
    return Status::ok();
  }
  // Every lane's address in the heap: the range they span is (exactly, for affine blocks).
  llvm::Value *lo, *hi;
  addr_range(p, bytes, &lo, &hi);
  llvm::Value* base = team_field(offsetof(TeamHead, heap_base), b_.getInt64Ty());
  llvm::Value* lo_bad = b_.CreateICmpUGE(b_.CreateSub(lo, base), team_field(offsetof(TeamHead, heap_bytes), b_.getInt64Ty()));
  check_in_heap(o, lo, hi, b_.CreateSelect(lo_bad, lo, b_.CreateSub(hi, b_.getInt64(bytes))));
  int cost = (p.kind == Rep::Kind::Lazy ? p.cost : 1) + 1;
  Rep r = lazy_rep(e, p.shape, cost, [this, p, shift](const Idx& idx) { return shift(elem(p, idx)); });
  if (auto a = affine_of(p); a && a->ptr) r.aff = make_affine(b_.CreateAdd(a->base, delta), a->stride, p.shape, a->ptr, a->exact);
  set_result(res, std::move(r));
  return Status::ok();
}

Status FnLowering::lower_wait(OpId o) {
  const ir::OpData& op = f_.op(o);
  Rep p = rep(f_.operand(o, "ptr"));
  ValueId mv = f_.operand(o, "mask");
  llvm::Type* ptr_ty = b_.getPtrTy();
  llvm::Value* ptrs;
  int64_t lanes = 1;
  if (p.is_block()) {
    ptrs = as_buffer(p).v;
    lanes = num_elems(p.shape);
  } else {
    ptrs = alloca_scalar(ptr_ty);
    b_.CreateStore(p.v, ptrs);
  }
  llvm::Value* maskp = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(c_));
  if (mv != ir::kNoValue) {
    const Rep& m = rep(mv);
    if (m.is_block()) {
      maskp = as_buffer(m).v;
    } else {
      maskp = alloca_scalar(b_.getInt8Ty());
      b_.CreateStore(b_.CreateZExt(m.v, b_.getInt8Ty()), maskp);
    }
  }
  const Scalar s = p.et.s;
  int32_t flags = elem_bytes(EType{false, s}) << 8;
  if (enum_name(o, "cmp") == "ge") flags |= kWaitGe;
  if (enum_name(o, "order") == "acquire") flags |= kWaitAcquire;
  llvm::Value* value = b_.CreateSExt(rep(f_.operand(o, "value")).v, b_.getInt64Ty());
  uint32_t index = static_cast<uint32_t>(ml_.sites->errors.size());
  ml_.sites->errors.push_back({op.loc, "'wait'", ""});
  llvm::Value* rc = b_.CreateCall(ml_.wait_fn(), {launch_, b_.getInt32(index), pid_array(), ptrs, maskp,
                                                  b_.getInt64(lanes), value, b_.getInt32(flags)});
  llvm::BasicBlock* go = llvm::BasicBlock::Create(c_, "wait.done", lf_);
  b_.CreateCondBr(b_.CreateICmpNE(rc, b_.getInt32(0)), fail_block(), go);
  b_.SetInsertPoint(go);
  EType te = etype(f_.type_of(op.results[0]));
  reps_[op.results[0]] = scalar_rep(b_.getInt32(0), te);
  return Status::ok();
}

Status FnLowering::lower_notify(OpId o, ValueId ptr, ValueId value, bool add) {
  Rep p = rep(ptr);
  const Scalar s = p.et.s;
  const int bytes = elem_bytes(EType{false, s});
  llvm::Value* delta = symm_delta(o, rep(f_.operand(o, "rank")).v);
  llvm::Value* a = b_.CreatePtrToInt(p.v, b_.getInt64Ty());
  check_in_heap(o, a, b_.CreateAdd(a, b_.getInt64(bytes)), a);
  llvm::Value* target = b_.CreateGEP(b_.getInt8Ty(), p.v, delta);
  llvm::Value* v = rep(value).v;
  // Release: the program's earlier stores are visible to a peer that acquires the signal. The
  // CPU always releases (order=relaxed included: stronger is allowed).
  if (add) {
    b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, target, v, llvm::MaybeAlign(bytes), llvm::AtomicOrdering::Release);
  } else {
    llvm::StoreInst* st = b_.CreateAlignedStore(v, target, llvm::MaybeAlign(bytes));
    st->setAtomic(llvm::AtomicOrdering::Release);
  }
  return Status::ok();
}

Status FnLowering::lower_put(OpId o) {
  Rep ptr = rep(f_.operand(o, "ptr"));
  ValueId vv = f_.operand(o, "value");
  Rep val = rep(vv);
  ValueId mv = f_.operand(o, "mask");
  Rep mask = mv != ir::kNoValue ? rep(mv) : Rep();
  EType e = etype(f_.type_of(vv));
  const int bytes = elem_bytes(e);
  llvm::Value* delta = symm_delta(o, rep(f_.operand(o, "rank")).v);
  llvm::Value* base = team_field(offsetof(TeamHead, heap_base), b_.getInt64Ty());
  llvm::Value* heap = team_field(offsetof(TeamHead, heap_bytes), b_.getInt64Ty());
  auto lane = [&](const Idx& idx) {
    auto body = [&] {
      llvm::Value* p = elem(ptr, idx);
      llvm::Value* a = b_.CreatePtrToInt(p, b_.getInt64Ty());
      dist_error_if(o, b_.CreateICmpUGE(b_.CreateSub(a, base), heap), 1, a);
      b_.CreateAlignedStore(to_mem(b_, elem(val, idx), e.s), b_.CreateGEP(b_.getInt8Ty(), p, delta), llvm::Align(bytes));
    };
    if (mask.kind == Rep::Kind::None) {
      body();
    } else {
      emit_if(elem(mask, idx), body);
    }
  };
  if (ptr.is_block()) {
    loop_nest(ptr.shape, lane);
  } else {
    lane(Idx{});
  }
  ValueId sig = f_.operand(o, "signal");
  if (sig == ir::kNoValue) return Status::ok();
  return lower_notify(o, sig, f_.operand(o, "signal_value"), enum_name(o, "signal_kind") == "add");
}

Status FnLowering::lower_get(OpId o) {
  const ir::OpData& op = f_.op(o);
  ValueId res = op.results[0];
  TypeId rt = f_.type_of(res);
  EType e = etype(rt);
  Rep ptr = rep(f_.operand(o, "ptr"));
  ValueId mv = f_.operand(o, "mask"), ov = f_.operand(o, "other");
  Rep mask = mv != ir::kNoValue ? rep(mv) : Rep();
  Rep other = ov != ir::kNoValue ? rep(ov) : Rep();
  const int bytes = elem_bytes(e);
  llvm::Value* delta = symm_delta(o, rep(f_.operand(o, "rank")).v);
  llvm::Value* base = team_field(offsetof(TeamHead, heap_base), b_.getInt64Ty());
  llvm::Value* heap = team_field(offsetof(TeamHead, heap_bytes), b_.getInt64Ty());
  auto lane = [&](const Idx& idx) -> llvm::Value* {
    auto read = [&]() -> llvm::Value* {
      llvm::Value* p = elem(ptr, idx);
      llvm::Value* a = b_.CreatePtrToInt(p, b_.getInt64Ty());
      dist_error_if(o, b_.CreateICmpUGE(b_.CreateSub(a, base), heap), 1, a);
      llvm::Value* x = b_.CreateAlignedLoad(mem_ty(e), b_.CreateGEP(b_.getInt8Ty(), p, delta), llvm::Align(bytes));
      return from_mem(b_, x, e.s);
    };
    if (mask.kind == Rep::Kind::None) return read();
    // Masked-off lanes give `other`, or 0.
    llvm::Value* alt = other.kind != Rep::Kind::None ? elem(other, idx) : llvm::Constant::getNullValue(reg_ty(e));
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* on = llvm::BasicBlock::Create(c_, "get", lf_);
    llvm::BasicBlock* merge = llvm::BasicBlock::Create(c_, "get.end", lf_);
    b_.CreateCondBr(elem(mask, idx), on, merge);
    b_.SetInsertPoint(on);
    llvm::Value* x = read();
    llvm::BasicBlock* on_end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
    llvm::PHINode* phi = b_.CreatePHI(reg_ty(e), 2);
    phi->addIncoming(x, on_end);
    phi->addIncoming(alt, pre);
    return phi;
  };
  if (!m_.types.is_block(rt)) {
    reps_[res] = scalar_rep(lane(Idx{}), e);
    return Status::ok();
  }
  Shape rs = shape(rt);
  llvm::Type* mt = mem_ty(e);
  llvm::Value* buf = alloca_buffer(mt, num_elems(rs), bytes);
  loop_nest(rs, [&](const Idx& idx) { b_.CreateStore(to_mem(b_, lane(idx), e.s), b_.CreateGEP(mt, buf, linear(idx, rs))); });
  reps_[res] = buffer_rep(buf, e, rs);
  return Status::ok();
}

}  // namespace tri::codegen::cpu::detail
