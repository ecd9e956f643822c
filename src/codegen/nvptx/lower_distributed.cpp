// The distributed ops on the GPU (docs/distributed.md). A kernel that holds one gets four hidden
// parameters after its own (lower.h): its rank, the team's size, the device address of the
// table of every rank's heap base as mapped on this GPU (NVSHMEM maps the peers' heaps over
// NVLink into this process; null outside a team) and the wait timeout in nanoseconds.
//
//  - symm_at adds bases[r] - bases[me] to the addresses (0 outside a team); with NVSHMEM's
//    device library linked (GpuOptions::nvshmem_device_library), the peer's base comes from
//    NVSHMEM's device state instead (nvshmem_ptr, inlined). A rank outside the team, or one
//    NVSHMEM does not map, stops the kernel with a message naming the op's location;
//  - put and get are the block store and load of lower_memory.cpp on the shifted addresses;
//  - notify (and put's signal) is a barrier, so that every thread's stores come first, then one
//    thread's st.release or red.release at the op's scope on the peer's signal;
//  - wait spins with ld.acquire (one thread for a scalar signal, each thread on the lanes it
//    holds for a block), naps between reads, and reports and stops the kernel once the timeout
//    passes; a barrier after it passes the acquired order on to every thread of the program.
// The wait's inline assembly has side effects and clobbers memory, and the barrier is
// convergent, so LLVM moves no load above them: consume_token passes its value through.
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen/nvptx/lower_impl.h"

namespace tri::codegen::nvptx::detail {
namespace {

const char* scope_text(int64_t scope) { return scope == 0 ? "cta" : scope == 1 ? "gpu" : "sys"; }

}  // namespace

void GpuLowering::setup_team_params(size_t first) {
  team_rank_ = lf_->getArg(first);
  team_size_ = lf_->getArg(first + 1);
  team_bases_ = lf_->getArg(first + 2);
  team_timeout_ = lf_->getArg(first + 3);
  lf_->getArg(first)->setName("tri_rank");
  lf_->getArg(first + 1)->setName("tri_num_ranks");
  lf_->getArg(first + 2)->setName("tri_heap_bases");
  lf_->getArg(first + 3)->setName("tri_wait_timeout_ns");
}

void GpuLowering::fail_with(OpId o, const std::string& what, const std::string& fmt, std::vector<llvm::Value*> args) {
  if (wgmma_used_) {
    // A call anywhere in the kernel (vprintf, __assertfail) makes ptxas serialize every wgmma
    // (C7510): here the failure is a bare trap, and the launch fails without the message.
    if (!trap_note_) {
      trap_note_ = true;
      if (!notes_.empty()) notes_ += "; ";
      notes_ += "the distributed ops' failures (rank outside the team, wait timeout) trap without a message in @" +
                f_->name + ": a call would serialize its wgmma";
    }
    b_.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
    return;
  }
  llvm::FunctionCallee vprintf = mod_->getOrInsertFunction(
      "vprintf", llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}, false));
  const std::string where = format_diag(m_.source_name, f_->op(o).loc, what);
  static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  for (int i = 0; i < 3; ++i) args.push_back(b_.CreateIntrinsic(ids[i], {}, {}));
  args.push_back(team_rank_);
  args.push_back(team_size_);
  std::vector<llvm::Type*> ts;
  for (llvm::Value* a : args) ts.push_back(a->getType());
  auto* st = llvm::StructType::get(c_, ts);
  llvm::IRBuilder<> eb(&*entry_->getFirstInsertionPt());
  llvm::Value* buf = eb.CreateAlloca(st);
  for (size_t i = 0; i < args.size(); ++i) b_.CreateStore(args[i], b_.CreateStructGEP(st, buf, static_cast<unsigned>(i)));
  llvm::Value* text = b_.CreateGlobalStringPtr(
      where + ": " + fmt + "; program (%u, %u, %u) of rank %d (of %d)\n", "tri.dist.fmt", 0, mod_);
  b_.CreateCall(vprintf, {text, b_.CreateAddrSpaceCast(buf, b_.getPtrTy())});
  assert_fail(where, f_->op(o).loc.line);
}

llvm::Value* GpuLowering::symm_delta(OpId o, llvm::Value* rank) {
  const std::string name = "'" + ir::op_info(f_->op(o).code).name + "'";
  emit_if(b_.CreateICmpUGE(rank, team_size_), [&] {
    fail_with(o, name + " to a rank outside the team", "rank %d, but the team has %d ranks", {rank, team_size_});
  });
  // Outside a team there is no table and rank 0 is the only rank: no shift.
  llvm::Value* in_team = b_.CreateICmpNE(team_bases_, llvm::ConstantPointerNull::get(b_.getPtrTy(1)));
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::Value* delta = nullptr;
  llvm::BasicBlock* in = pre;
  emit_if(in_team, [&] {
    auto base = [&](llvm::Value* r) {
      llvm::Value* p = b_.CreateGEP(b_.getInt64Ty(), team_bases_, b_.CreateZExt(r, b_.getInt64Ty()));
      return b_.CreateAlignedLoad(b_.getInt64Ty(), p, llvm::Align(8));
    };
    llvm::Value* mine = base(team_rank_);
    if (opt_.nvshmem_device_library.empty()) {
      delta = b_.CreateSub(base(rank), mine);
    } else {
      // NVSHMEM's own table of the peers' heaps (its device state, filled at module load);
      // nvshmem_ptr is inlined: two constant loads and one global load.
      llvm::FunctionCallee np = mod_->getOrInsertFunction(
          "nvshmem_ptr", llvm::FunctionType::get(b_.getPtrTy(), {b_.getPtrTy(), b_.getInt32Ty()}, false));
      llvm::Value* peer = b_.CreatePtrToInt(b_.CreateCall(np, {b_.CreateIntToPtr(mine, b_.getPtrTy()), rank}),
                                            b_.getInt64Ty());
      emit_if(b_.CreateICmpEQ(peer, b_.getInt64(0)), [&] {
        fail_with(o, name + " to a rank NVSHMEM does not map into this GPU",
                  "rank %d's heap is not reachable by loads and stores from rank %d (another node, or the module's "
                  "NVSHMEM state was not initialized)",
                  {rank, team_rank_});
      });
      delta = b_.CreateSub(peer, mine);
    }
    in = b_.GetInsertBlock();
  });
  llvm::PHINode* phi = b_.CreatePHI(b_.getInt64Ty(), 2);
  phi->addIncoming(delta, in);
  phi->addIncoming(b_.getInt64(0), pre);
  return phi;
}

Val GpuLowering::shift_ptrs(const Val& p, llvm::Value* delta) {
  auto shift = [this, delta](llvm::Value* x) { return b_.CreateGEP(b_.getInt8Ty(), x, delta); };
  switch (p.kind) {
    case Val::Kind::Scalar: return scalar(shift(p.s), p.et);
    case Val::Kind::Lazy: {
      std::shared_ptr<const Gen> g = p.gen;
      return lazy(p.et, p.shape, [g, shift](const Coord& c) { return shift((*g)(c)); });
    }
    default: {
      Val d = as_dist(p);
      std::vector<llvm::Value*> regs;
      for (llvm::Value* r : d.regs) regs.push_back(shift(r));
      return dist(p.et, d.lay, std::move(regs));
    }
  }
}

void GpuLowering::emit_spin(OpId o, llvm::Value* ptr, int bytes, llvm::Value* value, bool ge, bool acquire,
                            int64_t scope) {
  llvm::Type* it = bytes == 8 ? b_.getInt64Ty() : b_.getInt32Ty();
  const std::string w = bytes == 8 ? "b64" : "b32";
  const std::string ld = std::string("ld.") + (acquire ? "acquire." : "relaxed.") + scope_text(scope) + "." + w;
  llvm::Value* addr = b_.CreatePtrToInt(ptr, b_.getInt64Ty());
  auto now = [&] { return inline_asm("mov.u64 $0, %globaltimer;", "=l", b_.getInt64Ty()); };
  llvm::Value* start = now();
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c_, "wait.read", lf_);
  llvm::BasicBlock* slow = llvm::BasicBlock::Create(c_, "wait.slow", lf_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "wait.done", lf_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* nap = b_.CreatePHI(b_.getInt32Ty(), 2);
  nap->addIncoming(b_.getInt32(32), pre);
  llvm::Value* v = inline_asm(ld + " $0, [$1];", std::string(bytes == 8 ? "=l" : "=r") + ",l,~{memory}", it, {addr});
  llvm::Value* want = b_.CreateSExtOrTrunc(value, it);
  llvm::Value* ok = ge ? b_.CreateICmpSGE(v, want) : b_.CreateICmpEQ(v, want);
  b_.CreateCondBr(ok, done, slow, llvm::MDBuilder(c_).createBranchWeights(1 << 10, 1));
  b_.SetInsertPoint(slow);
  llvm::Value* waited = b_.CreateSub(now(), start);
  llvm::Value* late = b_.CreateAnd(b_.CreateICmpNE(team_timeout_, b_.getInt64(0)), b_.CreateICmpUGT(waited, team_timeout_));
  emit_if(late, [&] {
    llvm::Value* ms = b_.CreateUDiv(team_timeout_, b_.getInt64(1000000));
    fail_with(o, "'wait' timed out",
              "'wait' timed out after %llu ms: the signal at %p holds %lld, and it waits for " +
                  std::string(ge ? ">= " : "== ") + "%lld",
              {ms, addr, b_.CreateSExt(v, b_.getInt64Ty()), b_.CreateSExt(want, b_.getInt64Ty())});
  });
  // Naps that double up to 1 us, so that a long wait leaves the memory system alone.
  inline_asm("nanosleep.u32 $0;", "r", b_.getVoidTy(), {nap});
  llvm::Value* next = b_.CreateSelect(b_.CreateICmpULT(nap, b_.getInt32(1024)), b_.CreateShl(nap, 1), nap);
  nap->addIncoming(next, b_.GetInsertBlock());
  b_.CreateBr(loop);
  b_.SetInsertPoint(done);
}

void GpuLowering::emit_signal(llvm::Value* ptr, int bytes, llvm::Value* value, bool add, bool release, int64_t scope) {
  const std::string w = bytes == 8 ? "64" : "32";
  const std::string sem = std::string(release ? "release." : "relaxed.") + scope_text(scope);
  const std::string text = add ? "red." + sem + ".add.u" + w + " [$0], $1;" : "st." + sem + ".b" + w + " [$0], $1;";
  // Every thread's stores before the signal: the barrier orders them before thread 0's release.
  if (release) barrier();
  emit_if(b_.CreateICmpEQ(tid_, b_.getInt32(0)), [&] {
    inline_asm(text, std::string("l,") + (bytes == 8 ? "l" : "r") + ",~{memory}", b_.getVoidTy(),
               {b_.CreatePtrToInt(ptr, b_.getInt64Ty()), value});
  });
}

Status GpuLowering::lower_distributed(OpId o) {
  const ir::OpData& op = f_->op(o);
  switch (op.code) {
    case Opcode::Rank:
      set(op.results[0], scalar(team_rank_, etype(f_->type_of(op.results[0]))));
      return Status::ok();
    case Opcode::NumRanks:
      set(op.results[0], scalar(team_size_, etype(f_->type_of(op.results[0]))));
      return Status::ok();
    case Opcode::ConsumeToken:
      set(op.results[0], val(op.operands[0]));
      return Status::ok();
    case Opcode::SymmAt: {
      llvm::Value* delta = symm_delta(o, val(f_->operand(o, "rank")).s);
      set(op.results[0], shift_ptrs(val(f_->operand(o, "ptr")), delta));
      return Status::ok();
    }
    case Opcode::Wait: {
      ++mem_epoch_;
      const Val& p = val(f_->operand(o, "ptr"));
      ValueId mv = f_->operand(o, "mask");
      const int bytes = elem_bytes(EType{false, p.et.s});
      const bool ge = enum_name(*f_, o, "cmp") == "ge", acquire = enum_name(*f_, o, "order") == "acquire";
      const int64_t scope = enum_attr(*f_, o, "scope");
      llvm::Value* value = val(f_->operand(o, "value")).s;
      if (p.kind == Val::Kind::Scalar) {
        llvm::Value* cond = b_.CreateICmpEQ(tid_, b_.getInt32(0));
        if (mv != ir::kNoValue) cond = b_.CreateAnd(cond, val(mv).s);
        emit_if(cond, [&] { emit_spin(o, p.s, bytes, value, ge, acquire, scope); });
      } else {
        Layout l = p.kind == Val::Kind::Dist ? p.lay : default_layout(p.shape, p.et);
        std::vector<llvm::Value*> ptrs = regs_in(p, l);
        std::vector<llvm::Value*> masks = mv != ir::kNoValue ? regs_in(val(mv), l) : std::vector<llvm::Value*>();
        const uint64_t dup = replicated_reg_mask(l);
        llvm::Value* own = owner(l);
        for (int64_t r = 0; r < l.nregs(); ++r) {
          if (r & dup) continue;
          llvm::Value* cond = masks.empty() ? own : b_.CreateAnd(own, masks[r]);
          emit_if(cond, [&] { emit_spin(o, ptrs[r], bytes, value, ge, acquire, scope); });
        }
      }
      // The threads that did not read the signal see what the readers acquired.
      barrier();
      set(op.results[0], scalar(b_.getInt32(0), etype(f_->type_of(op.results[0]))));
      return Status::ok();
    }
    case Opcode::Notify: {
      ++mem_epoch_;
      const Val& p = val(f_->operand(o, "ptr"));
      llvm::Value* delta = symm_delta(o, val(f_->operand(o, "rank")).s);
      emit_signal(b_.CreateGEP(b_.getInt8Ty(), p.s, delta), elem_bytes(EType{false, p.et.s}),
                  val(f_->operand(o, "value")).s, enum_name(*f_, o, "kind") == "add",
                  enum_name(*f_, o, "order") == "release", enum_attr(*f_, o, "scope"));
      return Status::ok();
    }
    case Opcode::Put: {
      llvm::Value* delta = symm_delta(o, val(f_->operand(o, "rank")).s);
      Val peer = shift_ptrs(val(f_->operand(o, "ptr")), delta);
      TRI_RETURN_IF_ERROR(lower_store(o, &peer));
      ValueId sig = f_->operand(o, "signal");
      if (sig == ir::kNoValue) return Status::ok();
      const Val& s = val(sig);
      emit_signal(b_.CreateGEP(b_.getInt8Ty(), s.s, delta), elem_bytes(EType{false, s.et.s}),
                  val(f_->operand(o, "signal_value")).s, enum_name(*f_, o, "signal_kind") == "add", true,
                  enum_attr(*f_, o, "scope"));
      return Status::ok();
    }
    case Opcode::Get: {
      llvm::Value* delta = symm_delta(o, val(f_->operand(o, "rank")).s);
      Val peer = shift_ptrs(val(f_->operand(o, "ptr")), delta);
      return lower_load(o, &peer);
    }
    default: break;
  }
  return error(o, Code::Compile, "not a distributed op");
}

}  // namespace tri::codegen::nvptx::detail
