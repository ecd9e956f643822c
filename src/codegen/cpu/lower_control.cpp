// Structured control flow, calls and the runtime callbacks (print, assert) of the CPU lowering:
// loops keep block values in slots written at each yield (or as a start plus a scalar delta for
// pointer increments), if/while merge through slots and phis, calls pass blocks by pointer.
#include "codegen/cpu/lower_impl.h"

#include <algorithm>
#include <cassert>

#include "codegen/scalar_ops.h"
#include "codegen/vec_math.h"

namespace tri::codegen::cpu::detail {

// ---------------------------------------------------------------------------------------------
// Control flow

bool FnLowering::is_uniform_ir(ValueId v, int depth) const {
  if (!m_.types.is_block(f_.type_of(v))) return true;
  if (depth > 32) return false;
  const ir::ValueData& vd = f_.value(v);
  if (vd.def_op == ir::kNoOp) return false;
  const ir::OpData& op = f_.op(vd.def_op);
  switch (op.code) {
    case Opcode::Splat:
    case Opcode::Const:
      return true;
    case Opcode::Broadcast: case Opcode::ExpandDims: case Opcode::Reshape: case Opcode::Permute:
    case Opcode::MultipleOf: case Opcode::MaxContiguous:
      return is_uniform_ir(op.operands[0], depth + 1);
    case Opcode::Cmp: case Opcode::FCmp: case Opcode::Select: case Opcode::AddPtr:
      break;
    default: {
      ir::OpRule rule = ir::op_info(op.code).rule;
      if (rule == ir::OpRule::Custom) return false;
      break;
    }
  }
  for (ValueId x : op.operands)
    if (x != ir::kNoValue && !is_uniform_ir(x, depth + 1)) return false;
  return true;
}

namespace {
enum class Carry { Scalar, Slot, Affine };
}  // namespace

Status FnLowering::lower_for(OpId o) {
  const ir::OpData& op = f_.op(o);
  llvm::Value* lo = rep(op.operands[0]).v;
  llvm::Value* hi = rep(op.operands[1]).v;
  llvm::Value* step = rep(op.operands[2]).v;
  std::vector<ValueId> inits = f_.variadic(o);
  const size_t n = inits.size();
  if (op.regions.size() != 1) return error(o, Code::Compile, "'for' needs one region");
  BlockId body = op.regions[0];
  const ir::BlockData& bd = f_.block(body);
  if (bd.args.size() != n + 1 || bd.ops.empty() || f_.op(bd.ops.back()).code != Opcode::Yield)
    return error(o, Code::Compile, "'for' region must take the induction variable and the carried values and end with 'yield'");
  const ir::OpData& yield = f_.op(bd.ops.back());
  if (yield.operands.size() != n || op.results.size() != n)
    return error(o, Code::Compile, "'for' yields the wrong number of values");

  std::vector<Carry> mode(n, Carry::Slot);
  std::vector<ValueId> delta_of(n, ir::kNoValue);
  std::vector<llvm::Value*> slot(n, nullptr);
  std::vector<Rep> init(n);
  for (size_t k = 0; k < n; ++k) {
    init[k] = rep(inits[k]);
    TypeId t = f_.type_of(inits[k]);
    if (!m_.types.is_block(t)) {
      mode[k] = Carry::Scalar;
      continue;
    }
    // The pointer-increment pattern: yield addptr(%arg, uniform) (or add for integers).
    ValueId arg = bd.args[k + 1];
    ValueId y = yield.operands[k];
    const ir::ValueData& yd = f_.value(y);
    EType e = etype(t);
    if (yd.def_op != ir::kNoOp) {
      const ir::OpData& yo = f_.op(yd.def_op);
      if (yo.code == Opcode::AddPtr && yo.operands[0] == arg && is_uniform_ir(yo.operands[1])) {
        mode[k] = Carry::Affine;
        delta_of[k] = yo.operands[1];
      } else if (yo.code == Opcode::Add && !e.ptr && ir::is_int(e.s)) {
        if (yo.operands[0] == arg && is_uniform_ir(yo.operands[1])) {
          mode[k] = Carry::Affine;
          delta_of[k] = yo.operands[1];
        } else if (yo.operands[1] == arg && is_uniform_ir(yo.operands[0])) {
          mode[k] = Carry::Affine;
          delta_of[k] = yo.operands[0];
        }
      }
    }
    if (mode[k] == Carry::Slot) {
      slot[k] = alloca_buffer(mem_ty(e), num_elems(shape(t)), elem_bytes(e));
      store_into(init[k], slot[k]);
    }
  }
  auto affine = [this](const Rep& base, llvm::Value* delta) -> Rep {
    auto apply = [this, base](llvm::Value* x, llvm::Value* d) -> llvm::Value* {
      return base.et.ptr ? b_.CreateGEP(mem_type(c_, base.et.s), x, d) : b_.CreateAdd(x, d);
    };
    if (base.is_uniform()) return uniform_rep(apply(base.v, delta), base.et, base.shape);
    int cost = (base.kind == Rep::Kind::Lazy ? base.cost : 1) + 1;
    Rep r = lazy_rep(base.et, base.shape, cost, [this, base, delta, apply](const Idx& idx) {
      return apply(elem(base, idx), delta);
    });
    if (base.aff && base.aff->ptr) {
      llvm::Value* bytes = b_.CreateMul(delta, b_.getInt64(elem_bytes(EType{false, base.et.s})));
      r.aff = make_affine(b_.CreateAdd(base.aff->base, bytes), base.aff->stride, base.shape, base.aff->ptr, base.aff->exact);
    } else if (base.aff && !base.et.ptr && base.et.s == Scalar::I32) {
      r.aff = make_affine(b_.CreateAdd(base.aff->base, b_.CreateSExt(delta, b_.getInt64Ty())), base.aff->stride, base.shape);
    }
    return r;
  };

  // A step that is not positive would never end the loop: a runtime error when the loop runs.
  if (!llvm::isa<llvm::ConstantInt>(step) || !llvm::cast<llvm::ConstantInt>(step)->getValue().isStrictlyPositive()) {
    llvm::Value* bad = b_.CreateAnd(b_.CreateICmpSLT(lo, hi),
                                    b_.CreateICmpSLE(step, llvm::ConstantInt::get(step->getType(), 0)));
    llvm::BasicBlock* fail = llvm::BasicBlock::Create(c_, "for.bad_step", lf_);
    llvm::BasicBlock* ok = llvm::BasicBlock::Create(c_, "for.pre", lf_);
    b_.CreateCondBr(bad, fail, ok);
    b_.SetInsertPoint(fail);
    uint32_t index = static_cast<uint32_t>(ml_.sites->errors.size());
    ml_.sites->errors.push_back({op.loc, "'for' step is ", ", but it must be positive"});
    llvm::Value* pids = alloca_buffer(b_.getInt32Ty(), 3, 4);
    for (int i = 0; i < 3; ++i) b_.CreateStore(pid_[i], b_.CreateConstGEP1_64(b_.getInt32Ty(), pids, i));
    b_.CreateCall(ml_.error_fn(), {launch_, b_.getInt32(index), pids, b_.CreateSExt(step, b_.getInt64Ty())});
    b_.CreateBr(fail_block());
    b_.SetInsertPoint(ok);
  }
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(c_, "for.head", lf_);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(c_, "for.body", lf_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c_, "for.end", lf_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(lo->getType(), 2);
  iv->addIncoming(lo, pre);
  std::vector<llvm::PHINode*> phi(n, nullptr);
  for (size_t k = 0; k < n; ++k) {
    if (mode[k] == Carry::Scalar) {
      phi[k] = b_.CreatePHI(init[k].v->getType(), 2);
      phi[k]->addIncoming(init[k].v, pre);
    } else if (mode[k] == Carry::Affine) {
      llvm::Type* dt = init[k].et.ptr ? b_.getInt64Ty() : reg_ty(init[k].et);
      phi[k] = b_.CreatePHI(dt, 2);
      phi[k]->addIncoming(llvm::Constant::getNullValue(dt), pre);
    }
  }
  b_.CreateCondBr(b_.CreateICmpSLT(iv, hi), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  reps_[bd.args[0]] = scalar_rep(iv, etype(f_.type_of(bd.args[0])));
  for (size_t k = 0; k < n; ++k) {
    ValueId arg = bd.args[k + 1];
    switch (mode[k]) {
      case Carry::Scalar: reps_[arg] = scalar_rep(phi[k], init[k].et); break;
      case Carry::Slot: reps_[arg] = buffer_rep(slot[k], init[k].et, init[k].shape); break;
      case Carry::Affine: reps_[arg] = affine(init[k], phi[k]); break;
    }
  }
  OpId term;
  TRI_RETURN_IF_ERROR(lower_ops(body, &term));
  // Yield in two phases: first make every new value independent of the slots it will overwrite,
  // then write the slots (a yielded value may read another slot: `yield %b, %a`).
  std::vector<Rep> next(n);
  std::vector<llvm::Value*> next_v(n, nullptr);
  for (size_t k = 0; k < n; ++k) {
    const Rep& r = rep(yield.operands[k]);
    if (mode[k] == Carry::Scalar) {
      next_v[k] = r.v;
    } else if (mode[k] == Carry::Affine) {
      const Rep& u = rep(delta_of[k]);
      if (!u.is_uniform()) return error(yield.operands[k] == ir::kNoValue ? o : o, Code::Internal, "loop increment is not uniform");
      llvm::Value* d = u.v;
      d = init[k].et.ptr ? b_.CreateSExtOrTrunc(d, b_.getInt64Ty()) : d;
      next_v[k] = b_.CreateAdd(phi[k], d);
    } else {
      Rep nr = r;
      bool reads_slot = false;
      if (nr.kind == Rep::Kind::Buffer)
        for (size_t j = 0; j < n; ++j)
          if (j != k && slot[j] == nr.v) reads_slot = true;
      if (nr.kind == Rep::Kind::Lazy || reads_slot) nr = materialize(nr);
      next[k] = nr;
    }
  }
  for (size_t k = 0; k < n; ++k)
    if (mode[k] == Carry::Slot) store_into(next[k], slot[k]);
  emit_cancel_poll();  // the back-edge
  // The induction variable counts exactly: an iv + step past the type's range ends the loop.
  llvm::Value* add = b_.CreateBinaryIntrinsic(llvm::Intrinsic::sadd_with_overflow, iv, step);
  llvm::Value* iv_next = b_.CreateExtractValue(add, 0);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  b_.CreateCondBr(b_.CreateExtractValue(add, 1), exit, header);
  iv->addIncoming(iv_next, latch);
  for (size_t k = 0; k < n; ++k)
    if (phi[k]) phi[k]->addIncoming(next_v[k], latch);
  b_.SetInsertPoint(exit);
  std::vector<llvm::PHINode*> outs(n, nullptr);
  for (size_t k = 0; k < n; ++k) {
    if (!phi[k]) continue;
    outs[k] = b_.CreatePHI(phi[k]->getType(), 2);
    outs[k]->addIncoming(phi[k], header);
    outs[k]->addIncoming(next_v[k], latch);
  }
  for (size_t k = 0; k < n; ++k) {
    ValueId res = op.results[k];
    llvm::PHINode* out = outs[k];
    switch (mode[k]) {
      case Carry::Scalar: reps_[res] = scalar_rep(out, init[k].et); break;
      case Carry::Slot: reps_[res] = buffer_rep(slot[k], init[k].et, init[k].shape); break;
      case Carry::Affine: set_result(res, affine(init[k], out)); break;
    }
  }
  return Status::ok();
}

Status FnLowering::lower_if(OpId o) {
  const ir::OpData& op = f_.op(o);
  llvm::Value* cond = rep(op.operands[0]).v;
  const size_t n = op.results.size();
  if (op.regions.empty() || (n > 0 && op.regions.size() < 2))
    return error(o, Code::Compile, "'if' with results needs both regions");
  std::vector<llvm::Value*> slot(n, nullptr);
  for (size_t k = 0; k < n; ++k) {
    TypeId t = f_.type_of(op.results[k]);
    if (m_.types.is_block(t)) {
      EType e = etype(t);
      slot[k] = alloca_buffer(mem_ty(e), num_elems(shape(t)), elem_bytes(e));
    }
  }
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(c_, "if.then", lf_);
  llvm::BasicBlock* else_bb = op.regions.size() > 1 ? llvm::BasicBlock::Create(c_, "if.else", lf_) : nullptr;
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(c_, "if.end", lf_);
  b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : merge);
  std::vector<std::vector<std::pair<llvm::Value*, llvm::BasicBlock*>>> incoming(n);
  for (size_t ri = 0; ri < op.regions.size(); ++ri) {
    b_.SetInsertPoint(ri == 0 ? then_bb : else_bb);
    OpId term;
    TRI_RETURN_IF_ERROR(lower_ops(op.regions[ri], &term));
    if (n > 0) {
      if (term == ir::kNoOp || f_.op(term).code != Opcode::Yield || f_.op(term).operands.size() != n)
        return error(o, Code::Compile, "'if' region must yield " + std::to_string(n) + " values");
      const ir::OpData& y = f_.op(term);
      for (size_t k = 0; k < n; ++k) {
        const Rep& r = rep(y.operands[k]);
        if (slot[k]) {
          store_into(r, slot[k]);
        }
      }
      for (size_t k = 0; k < n; ++k)
        if (!slot[k]) incoming[k].push_back({rep(y.operands[k]).v, b_.GetInsertBlock()});
    }
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
  for (size_t k = 0; k < n; ++k) {
    TypeId t = f_.type_of(op.results[k]);
    EType e = etype(t);
    if (slot[k]) {
      reps_[op.results[k]] = buffer_rep(slot[k], e, shape(t));
    } else {
      llvm::PHINode* p = b_.CreatePHI(reg_ty(e), 2);
      for (auto& [v, bb] : incoming[k]) p->addIncoming(v, bb);
      reps_[op.results[k]] = scalar_rep(p, e);
    }
  }
  return Status::ok();
}

Status FnLowering::lower_while(OpId o) {
  const ir::OpData& op = f_.op(o);
  std::vector<ValueId> inits = f_.variadic(o);
  const size_t n = inits.size();
  if (op.regions.size() != 2) return error(o, Code::Compile, "'while' needs two regions");
  const ir::BlockData& before = f_.block(op.regions[0]);
  const ir::BlockData& after = f_.block(op.regions[1]);
  const size_t m = op.results.size();
  if (before.args.size() != n || after.args.size() != m)
    return error(o, Code::Compile, "'while' region arguments do not match");
  std::vector<llvm::Value*> bslot(n, nullptr), aslot(m, nullptr);
  std::vector<Rep> init(n);
  for (size_t k = 0; k < n; ++k) {
    init[k] = rep(inits[k]);
    TypeId t = f_.type_of(inits[k]);
    if (m_.types.is_block(t)) {
      EType e = etype(t);
      bslot[k] = alloca_buffer(mem_ty(e), num_elems(shape(t)), elem_bytes(e));
      store_into(init[k], bslot[k]);
    }
  }
  for (size_t k = 0; k < m; ++k) {
    TypeId t = f_.type_of(op.results[k]);
    if (m_.types.is_block(t)) {
      EType e = etype(t);
      aslot[k] = alloca_buffer(mem_ty(e), num_elems(shape(t)), elem_bytes(e));
    }
  }
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(c_, "while.head", lf_);
  llvm::BasicBlock* after_bb = llvm::BasicBlock::Create(c_, "while.body", lf_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c_, "while.end", lf_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  std::vector<llvm::PHINode*> phi(n, nullptr);
  for (size_t k = 0; k < n; ++k) {
    TypeId t = f_.type_of(before.args[k]);
    if (bslot[k]) {
      reps_[before.args[k]] = buffer_rep(bslot[k], etype(t), shape(t));
    } else {
      phi[k] = b_.CreatePHI(init[k].v->getType(), 2);
      phi[k]->addIncoming(init[k].v, pre);
      reps_[before.args[k]] = scalar_rep(phi[k], etype(t));
    }
  }
  OpId term;
  TRI_RETURN_IF_ERROR(lower_ops(op.regions[0], &term));
  if (term == ir::kNoOp || f_.op(term).code != Opcode::Condition)
    return error(o, Code::Compile, "'while' first region must end with 'condition'");
  const ir::OpData& cond_op = f_.op(term);
  std::vector<ValueId> cvals(cond_op.operands.begin() + 1, cond_op.operands.end());
  if (cvals.size() != m) return error(o, Code::Compile, "'condition' passes the wrong number of values");
  llvm::Value* c = rep(cond_op.operands[0]).v;
  std::vector<llvm::Value*> scal(m, nullptr);
  for (size_t k = 0; k < m; ++k) {
    const Rep& r = rep(cvals[k]);
    if (aslot[k]) store_into(r, aslot[k]);
    else scal[k] = r.v;
  }
  b_.CreateCondBr(c, after_bb, exit);
  b_.SetInsertPoint(after_bb);
  for (size_t k = 0; k < m; ++k) {
    TypeId t = f_.type_of(after.args[k]);
    reps_[after.args[k]] = aslot[k] ? buffer_rep(aslot[k], etype(t), shape(t)) : scalar_rep(scal[k], etype(t));
  }
  TRI_RETURN_IF_ERROR(lower_ops(op.regions[1], &term));
  if (term == ir::kNoOp || f_.op(term).code != Opcode::Yield || f_.op(term).operands.size() != n)
    return error(o, Code::Compile, "'while' second region must yield the carried values");
  const ir::OpData& y = f_.op(term);
  std::vector<Rep> next(n);
  for (size_t k = 0; k < n; ++k) {
    next[k] = rep(y.operands[k]);
    // A yielded value that reads another before-slot must be copied before the slots change.
    if (bslot[k] && next[k].kind == Rep::Kind::Lazy) next[k] = materialize(next[k]);
  }
  for (size_t k = 0; k < n; ++k)
    if (bslot[k]) store_into(next[k], bslot[k]);
  emit_cancel_poll();  // the back-edge
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  b_.CreateBr(header);
  for (size_t k = 0; k < n; ++k)
    if (phi[k]) phi[k]->addIncoming(next[k].v, latch);
  b_.SetInsertPoint(exit);
  for (size_t k = 0; k < m; ++k) {
    TypeId t = f_.type_of(op.results[k]);
    reps_[op.results[k]] = aslot[k] ? buffer_rep(aslot[k], etype(t), shape(t)) : scalar_rep(scal[k], etype(t));
  }
  return Status::ok();
}

Status FnLowering::lower_call(OpId o) {
  const ir::OpData& op = f_.op(o);
  const std::string& name = f_.attr(o, "callee").s;
  const ir::Function* callee = m_.find(name);
  if (!callee) return error(o, Code::Compile, "no function '@" + name + "'");
  if (callee->is_kernel) return error(o, Code::Compile, "'@" + name + "' is a kernel, not a device function");
  std::vector<ValueId> args = f_.variadic(o);
  if (args.size() != callee->params.size() || op.results.size() != callee->results.size())
    return error(o, Code::Compile, "call of '@" + name + "' does not match its signature");
  llvm::Function* lf = ml_.function(*callee);
  std::vector<llvm::Value*> call_args;
  for (ValueId v : args) {
    const Rep& r = rep(v);
    call_args.push_back(r.is_block() ? as_buffer(r).v : r.v);
  }
  std::vector<llvm::Value*> outs;
  for (ValueId r : op.results) {
    TypeId t = f_.type_of(r);
    EType e = etype(t);
    outs.push_back(m_.types.is_block(t) ? alloca_buffer(mem_ty(e), num_elems(shape(t)), elem_bytes(e))
                                        : alloca_scalar(mem_ty(e)));
  }
  call_args.insert(call_args.end(), outs.begin(), outs.end());
  for (int i = 0; i < 3; ++i) call_args.push_back(pid_[i]);
  for (int i = 0; i < 3; ++i) call_args.push_back(nprog_[i]);
  call_args.push_back(launch_);
  llvm::Value* st = b_.CreateCall(lf, call_args);
  llvm::BasicBlock* cont = llvm::BasicBlock::Create(c_, "call.ok", lf_);
  b_.CreateCondBr(b_.CreateICmpEQ(st, b_.getInt32(0)), cont, fail_block());
  b_.SetInsertPoint(cont);
  for (size_t i = 0; i < op.results.size(); ++i) {
    TypeId t = f_.type_of(op.results[i]);
    EType e = etype(t);
    if (m_.types.is_block(t)) {
      reps_[op.results[i]] = buffer_rep(outs[i], e, shape(t));
    } else {
      reps_[op.results[i]] = scalar_rep(from_mem(b_, b_.CreateLoad(mem_ty(e), outs[i]), e.s), e);
    }
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// print and assert

Status FnLowering::lower_print(OpId o) {
  std::vector<ValueId> vals = f_.variadic(o);
  ValueId mv = f_.operand(o, "mask");
  PrintSite site;
  const ir::Attr& prefix = f_.attr(o, "prefix");
  site.prefix = prefix.present() ? prefix.s : std::string();
  site.loc = f_.op(o).loc;
  site.has_mask = mv != ir::kNoValue;
  llvm::Type* ptr = llvm::PointerType::getUnqual(c_);
  llvm::Value* arr = alloca_buffer(ptr, std::max<size_t>(vals.size(), 1), 8);
  for (size_t i = 0; i < vals.size(); ++i) {
    TypeId t = f_.type_of(vals[i]);
    EType e = etype(t);
    PrintOperand po;
    po.scalar = e.s;
    po.is_ptr = e.ptr;
    po.shape = shape(t);
    if (!po.shape.empty()) site.lanes = po.shape;
    site.operands.push_back(po);
    const Rep& r = rep(vals[i]);
    llvm::Value* p;
    if (r.is_block()) {
      p = as_buffer(r).v;
    } else {
      p = alloca_scalar(mem_ty(e));
      b_.CreateStore(to_mem(b_, r.v, e.s), p);
    }
    b_.CreateStore(p, b_.CreateConstGEP1_64(ptr, arr, i));
  }
  llvm::Value* maskp = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(c_));
  if (site.has_mask) {
    const Rep& r = rep(mv);
    if (site.lanes.empty()) site.lanes = r.shape;
    if (r.is_block()) {
      maskp = as_buffer(r).v;
    } else {
      maskp = alloca_scalar(b_.getInt8Ty());
      b_.CreateStore(b_.CreateZExt(r.v, b_.getInt8Ty()), maskp);
    }
  }
  llvm::Value* pids = alloca_buffer(b_.getInt32Ty(), 3, 4);
  for (int i = 0; i < 3; ++i) b_.CreateStore(pid_[i], b_.CreateConstGEP1_64(b_.getInt32Ty(), pids, i));
  uint32_t index = static_cast<uint32_t>(ml_.sites->prints.size());
  ml_.sites->prints.push_back(std::move(site));
  b_.CreateCall(ml_.print_fn(), {launch_, b_.getInt32(index), pids, arr, maskp});
  return Status::ok();
}

Status FnLowering::lower_assert(OpId o) {
  const ir::OpData& op = f_.op(o);
  ValueId mv = f_.operand(o, "mask");
  Rep cond = rep(op.operands[0]);
  Rep mask = mv != ir::kNoValue ? rep(mv) : Rep();
  AssertSite site;
  const ir::Attr& msg = f_.attr(o, "msg");
  site.msg = msg.present() ? msg.s : std::string();
  site.loc = op.loc;
  site.lanes = shape(f_.type_of(op.operands[0]));
  site.type = m_.type_str(f_.type_of(op.operands[0]));
  site.has_mask = mask.kind != Rep::Kind::None;
  llvm::Type* ptr = llvm::PointerType::getUnqual(c_);
  llvm::Value* bad;
  llvm::Value* condp;
  llvm::Value* maskp = llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(ptr));
  if (!cond.is_block()) {
    bad = b_.CreateNot(cond.v);
    if (site.has_mask) bad = b_.CreateAnd(bad, mask.v);
    condp = alloca_scalar(b_.getInt8Ty());
    b_.CreateStore(b_.CreateZExt(cond.v, b_.getInt8Ty()), condp);
    if (site.has_mask) {
      maskp = alloca_scalar(b_.getInt8Ty());
      b_.CreateStore(b_.CreateZExt(mask.v, b_.getInt8Ty()), maskp);
    }
  } else {
    Rep cb = as_buffer(cond);
    condp = cb.v;
    Rep mb;
    if (site.has_mask) {
      mb = mask.is_block() ? as_buffer(mask) : mask;
      if (mb.kind == Rep::Kind::Buffer) {
        maskp = mb.v;
      } else {
        mb = materialize(uniform_rep(mask.v, mask.et, site.lanes));
        maskp = mb.v;
      }
    }
    llvm::Value* flag = alloca_scalar(b_.getInt1Ty());
    b_.CreateStore(b_.getFalse(), flag);
    loop_nest(site.lanes, [&](const Idx& idx) {
      llvm::Value* x = b_.CreateNot(elem(cb, idx));
      if (site.has_mask) x = b_.CreateAnd(x, elem(mb, idx));
      b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt1Ty(), flag), x), flag);
    });
    bad = b_.CreateLoad(b_.getInt1Ty(), flag);
  }
  uint32_t index = static_cast<uint32_t>(ml_.sites->asserts.size());
  ml_.sites->asserts.push_back(std::move(site));
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(c_, "assert.fail", lf_);
  llvm::BasicBlock* cont = llvm::BasicBlock::Create(c_, "assert.ok", lf_);
  b_.CreateCondBr(bad, fail, cont);
  b_.SetInsertPoint(fail);
  llvm::Value* pids = alloca_buffer(b_.getInt32Ty(), 3, 4);
  for (int i = 0; i < 3; ++i) b_.CreateStore(pid_[i], b_.CreateConstGEP1_64(b_.getInt32Ty(), pids, i));
  b_.CreateCall(ml_.assert_fn(), {launch_, b_.getInt32(index), pids, condp, maskp});
  b_.CreateBr(fail_block());
  b_.SetInsertPoint(cont);
  return Status::ok();
}

}  // namespace tri::codegen::cpu::detail
