// Lowering of specialized block IR to LLVM IR for the host (see lower.h for the entry point).
// This file holds the core (how values are represented, buffers, loops, the op dispatch); the
// ops live in lower_elementwise.cpp, lower_memory.cpp, lower_reduce.cpp and lower_control.cpp,
// the lane analyses in lower_affine.cpp, and the shared declarations in lower_impl.h.
//
// Why blocks look the way they do here:
//  - A block value is a *lazy* per-element expression as long as that is cheap: its consumers
//    inline it into their own loops. This is what keeps address arithmetic visible to LLVM: a
//    `load` of `addptr(splat(x), offs)` becomes a loop over `x + offs(i)`, which the loop
//    vectorizer recognizes as contiguous, instead of a gather from a buffer of addresses.
//  - Everything else is a *buffer*: a stack array (static alloca) holding the block row-major.
//    Loads, reductions, scans, dots, calls and expressions that are expensive and used more than
//    once (or inside a loop while defined outside it) become buffers, so nothing expensive is
//    computed twice and code size stays bounded. A load whose only consumer is a store, reduce,
//    scan or dot later in the same region is read by that consumer instead (one pass over
//    memory, like a fused C loop), after a run-time check that the store does not overlap it.
//  - i32 index blocks and pointer blocks carry an affine form (base + sum idx*stride) when they
//    have one, which makes address ranges and "is every lane of this mask on" scalar questions,
//    and turns masks like `offs < n` into the box of lanes a loop walks without masks.
//  - Loop-carried blocks live in per-loop slots (buffers written at each `yield`), except the
//    common pointer-increment pattern (`yield addptr(%p, splat(%k))`), which is carried as the
//    loop-invariant lazy start plus a scalar delta so that loads in the loop stay contiguous.
//  - Reductions fold into a few accumulator lanes and finish with a short tree, which is how
//    float sums vectorize without reassociation flags (docs/ir.md leaves the order free).
//  - Masked lanes that are no box are branches around the memory access; LLVM turns them into
//    masked vector loads and stores. Masked-off lanes never touch memory.
//  - Every function returns an i32 status: 0, or 1 after a failed assert (the callback has
//    recorded it), which unwinds the instance through the callers.
#include "codegen/cpu/lower.h"

#include <algorithm>
#include <cassert>

#include "codegen/cpu/lower_impl.h"
#include "codegen/scalar_ops.h"
#include "codegen/vec_math.h"

namespace tri::codegen::cpu {
namespace detail {

// ---------------------------------------------------------------------------------------------
// ModuleLowering

llvm::Function* ModuleLowering::function(const ir::Function& f) {
  auto it = funcs.find(&f);
  if (it != funcs.end()) return it->second;
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  std::vector<llvm::Type*> params;
  for (const ir::Param& p : f.params) {
    const ir::TypeData& td = m.types.get(p.type);
    if (td.kind == ir::TypeKind::Block || td.kind == ir::TypeKind::Ptr) {
      params.push_back(ptr);
    } else {
      params.push_back(reg_type(c, td.scalar));
    }
  }
  for (size_t i = 0; i < f.results.size(); ++i) params.push_back(ptr);
  for (int i = 0; i < 6; ++i) params.push_back(i32);
  params.push_back(ptr);
  auto* ft = llvm::FunctionType::get(i32, params, false);
  std::string name = (f.is_kernel ? "tri.kernel." : "tri.func.") + f.name;
  llvm::Function* lf = llvm::Function::Create(ft, llvm::GlobalValue::InternalLinkage, name, mod);
  lf->addFnAttr(llvm::Attribute::NoUnwind);
  // Frames can be large (whole blocks); probe them so an overflow faults on the guard page.
  lf->addFnAttr("probe-stack", "inline-asm");
  unsigned a = 0;
  for (const ir::Param& p : f.params) {
    const ir::TypeData& td = m.types.get(p.type);
    if (td.kind == ir::TypeKind::Ptr) {
      if (p.noalias) lf->addParamAttr(a, llvm::Attribute::NoAlias);
      if (p.align > 1 && (p.align & (p.align - 1)) == 0)
        lf->addParamAttr(a, llvm::Attribute::getWithAlignment(c, llvm::Align(p.align)));
    } else if (td.kind == ir::TypeKind::Block) {
      lf->addParamAttr(a, llvm::Attribute::ReadOnly);
      lf->addParamAttr(a, llvm::Attribute::NoCapture);
    }
    ++a;
  }
  for (size_t i = 0; i < f.results.size(); ++i, ++a) {
    lf->addParamAttr(a, llvm::Attribute::NoAlias);
    lf->addParamAttr(a, llvm::Attribute::NoCapture);
  }
  funcs[&f] = lf;
  pending.push_back(&f);
  return lf;
}

llvm::Function* ModuleLowering::helper(const std::string& name, llvm::Type* ret, std::vector<llvm::Type*> params,
                                       const std::function<llvm::Value*(llvm::IRBuilder<>&, llvm::Function*)>& body) {
  if (llvm::Function* f = mod->getFunction(name)) return f;
  auto* ft = llvm::FunctionType::get(ret, params, false);
  llvm::Function* f = llvm::Function::Create(ft, llvm::GlobalValue::InternalLinkage, name, mod);
  f->addFnAttr(llvm::Attribute::AlwaysInline);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr(llvm::Attribute::WillReturn);
  f->setDoesNotAccessMemory();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  b.CreateRet(body(b, f));
  return f;
}

llvm::Value* ModuleLowering::decode(llvm::IRBuilder<>& b, llvm::Value* bits, Scalar s) {
  if (llvm::isa<llvm::Constant>(bits)) return emit_small_to_f32(b, bits, s);
  llvm::Function* f = helper(std::string("tri.dec.") + ir::scalar_name(s), llvm::Type::getFloatTy(c), {bits->getType()},
                             [s](llvm::IRBuilder<>& hb, llvm::Function* hf) {
                               return emit_small_to_f32(hb, hf->getArg(0), s);
                             });
  return b.CreateCall(f, {bits});
}

llvm::Value* ModuleLowering::encode(llvm::IRBuilder<>& b, llvm::Value* x, Scalar s, bool rtz) {
  if (llvm::isa<llvm::Constant>(x)) return emit_to_small(b, x, s, rtz);
  std::string name = std::string("tri.enc.") + (x->getType()->isDoubleTy() ? "f64." : "f32.") + ir::scalar_name(s) +
                     (rtz ? ".rtz" : "");
  llvm::Function* f = helper(name, reg_type(c, s), {x->getType()}, [s, rtz](llvm::IRBuilder<>& hb, llvm::Function* hf) {
    return emit_to_small(hb, hf->getArg(0), s, rtz);
  });
  return b.CreateCall(f, {x});
}

llvm::Function* ModuleLowering::math_helper(const std::string& name) {
  llvm::Type* f32 = llvm::Type::getFloatTy(c);
  return helper("tri." + name + ".f32", f32, {f32}, [&name](llvm::IRBuilder<>& hb, llvm::Function* hf) {
    llvm::Value* x = hf->getArg(0);
    if (name == "exp") return emit_exp_f32(hb, x);
    if (name == "exp2") return emit_exp2_f32(hb, x);
    if (name == "log") return emit_log_f32(hb, x);
    return emit_tanh_f32(hb, x);
  });
}

llvm::FunctionCallee ModuleLowering::libm(const std::string& name, llvm::Type* t, int arity) {
  std::vector<llvm::Type*> params(arity, t);
  auto* ft = llvm::FunctionType::get(t, params, false);
  llvm::FunctionCallee fc = mod->getOrInsertFunction(name, ft);
  if (auto* f = llvm::dyn_cast<llvm::Function>(fc.getCallee())) {
    // The math library's functions are pure here: errno is never read.
    f->setDoesNotAccessMemory();
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::WillReturn);
  }
  return fc;
}

llvm::FunctionCallee ModuleLowering::print_fn() {
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  auto* ft = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr, llvm::Type::getInt32Ty(c), ptr, ptr, ptr}, false);
  return mod->getOrInsertFunction(kPrintFn, ft);
}

llvm::FunctionCallee ModuleLowering::assert_fn() {
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  auto* ft = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr, llvm::Type::getInt32Ty(c), ptr, ptr, ptr}, false);
  return mod->getOrInsertFunction(kAssertFn, ft);
}

llvm::FunctionCallee ModuleLowering::error_fn() {
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  auto* ft = llvm::FunctionType::get(llvm::Type::getVoidTy(c),
                                     {ptr, llvm::Type::getInt32Ty(c), ptr, llvm::Type::getInt64Ty(c)}, false);
  return mod->getOrInsertFunction(kErrorFn, ft);
}

llvm::FunctionCallee ModuleLowering::wait_fn() {
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  auto* ft = llvm::FunctionType::get(i32, {ptr, i32, ptr, ptr, ptr, i64, i64, i32}, false);
  return mod->getOrInsertFunction(kWaitFn, ft);
}

llvm::FunctionCallee ModuleLowering::dist_error_fn() {
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  auto* ft = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr, i32, ptr, i32, llvm::Type::getInt64Ty(c)}, false);
  return mod->getOrInsertFunction(kDistErrorFn, ft);
}

Status ModuleLowering::run(const ir::Function& kernel) {
  llvm::Function* body = function(kernel);
  while (!pending.empty()) {
    const ir::Function* f = pending.back();
    pending.pop_back();
    FnLowering fl(*this, *f, funcs[f]);
    TRI_RETURN_IF_ERROR(fl.lower());
  }
  if (stack_bytes > kMaxStackBytes) {
    return Status(Code::LimitExceeded, format_diag(m.source_name, kernel.loc,
                                                   "kernel '" + kernel.name + "' needs " + std::to_string(stack_bytes) +
                                                       " bytes of block buffers per program instance (limit " +
                                                       std::to_string(kMaxStackBytes) + ")"));
  }

  // The entry: unpack the arguments once, then run the instances [begin, end).
  llvm::Type* i32 = llvm::Type::getInt32Ty(c);
  llvm::Type* i64 = llvm::Type::getInt64Ty(c);
  llvm::Type* ptr = llvm::PointerType::getUnqual(c);
  auto* ft = llvm::FunctionType::get(i32, {ptr, ptr, i32, i32, i32, i64, i64}, false);
  llvm::Function* entry = llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage, kEntryFn, mod);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  entry->addFnAttr("probe-stack", "inline-asm");
  llvm::Argument* args = entry->getArg(0);
  llvm::Argument* launch = entry->getArg(1);
  llvm::Value* g[3] = {entry->getArg(2), entry->getArg(3), entry->getArg(4)};
  llvm::Argument* begin = entry->getArg(5);
  llvm::Argument* end = entry->getArg(6);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", entry));
  std::vector<llvm::Value*> call_args;
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::TypeData& td = m.types.get(kernel.params[i].type);
    llvm::Value* bits = b.CreateLoad(i64, b.CreateConstGEP1_64(i64, args, i));
    if (td.kind == ir::TypeKind::Ptr) {
      call_args.push_back(b.CreateIntToPtr(bits, ptr));
    } else {
      llvm::Type* rt = reg_type(c, td.scalar);
      if (rt->isFloatTy()) {
        call_args.push_back(b.CreateBitCast(b.CreateTrunc(bits, i32), rt));
      } else if (rt->isDoubleTy()) {
        call_args.push_back(b.CreateBitCast(bits, rt));
      } else {
        call_args.push_back(b.CreateTrunc(bits, rt));
      }
    }
  }
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c, "instance", entry);
  llvm::BasicBlock* next = llvm::BasicBlock::Create(c, "next", entry);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c, "done", entry);
  llvm::BasicBlock* failed = llvm::BasicBlock::Create(c, "failed", entry);
  llvm::BasicBlock* pre = b.GetInsertBlock();
  b.CreateCondBr(b.CreateICmpULT(begin, end), loop, done);
  b.SetInsertPoint(loop);
  llvm::PHINode* id = b.CreatePHI(i64, 2);
  id->addIncoming(begin, pre);
  llvm::Value* gx = b.CreateZExt(g[0], i64);
  llvm::Value* gy = b.CreateZExt(g[1], i64);
  llvm::Value* x = b.CreateURem(id, gx);
  llvm::Value* yz = b.CreateUDiv(id, gx);
  llvm::Value* y = b.CreateURem(yz, gy);
  llvm::Value* z = b.CreateUDiv(yz, gy);
  std::vector<llvm::Value*> full = call_args;
  full.push_back(b.CreateTrunc(x, i32));
  full.push_back(b.CreateTrunc(y, i32));
  full.push_back(b.CreateTrunc(z, i32));
  full.push_back(g[0]);
  full.push_back(g[1]);
  full.push_back(g[2]);
  full.push_back(launch);
  llvm::Value* st = b.CreateCall(body, full);
  b.CreateCondBr(b.CreateICmpEQ(st, b.getInt32(0)), next, failed);
  b.SetInsertPoint(next);
  llvm::Value* id1 = b.CreateAdd(id, b.getInt64(1));
  llvm::BasicBlock* more = llvm::BasicBlock::Create(c, "more", entry);
  b.CreateCondBr(b.CreateICmpULT(id1, end), more, done);
  // Between instances: stop when the launch was cancelled (CancelHead).
  b.SetInsertPoint(more);
  llvm::Value* counter = b.CreateLoad(ptr, launch, "cancel.counter");
  llvm::LoadInst* now = b.CreateLoad(i64, counter, "cancel.now");
  now->setAtomic(llvm::AtomicOrdering::Monotonic);
  now->setAlignment(llvm::Align(8));
  llvm::Value* seen = b.CreateLoad(i64, b.CreateConstGEP1_64(b.getInt8Ty(), launch, 8), "cancel.seen");
  id->addIncoming(id1, more);
  b.CreateCondBr(b.CreateICmpNE(now, seen), failed, loop);
  b.SetInsertPoint(done);
  b.CreateRet(b.getInt32(0));
  b.SetInsertPoint(failed);
  b.CreateRet(b.getInt32(1));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// FnLowering: setup, types, reps, buffers and loops

FnLowering::FnLowering(ModuleLowering& ml, const ir::Function& f, llvm::Function* lf)
    : ml_(ml), m_(ml.m), f_(f), lf_(lf), c_(ml.c), b_(ml.c), em_(b_, ml) {
  reps_.resize(f.values.size());
  uses_.assign(f.values.size(), 0);
  loop_use_.assign(f.values.size(), false);
  // Loop depth of every block, then uses and uses from a deeper loop than the definition.
  std::vector<int> depth(f.blocks.size(), 0);
  std::vector<BlockId> work = {f.body};
  while (!work.empty()) {
    BlockId b = work.back();
    work.pop_back();
    for (OpId o : f.block(b).ops) {
      const ir::OpData& op = f.op(o);
      bool loop = op.code == Opcode::For || op.code == Opcode::While;
      for (BlockId r : op.regions) {
        depth[r] = depth[b] + (loop ? 1 : 0);
        work.push_back(r);
      }
    }
  }
  auto value_depth = [&](ValueId v) {
    const ir::ValueData& vd = f.value(v);
    return vd.def_op != ir::kNoOp ? depth[f.op(vd.def_op).parent] : depth[vd.def_block];
  };
  for (OpId o = 0; o < f.ops.size(); ++o) {
    const ir::OpData& op = f.op(o);
    if (op.parent == ir::kNoBlock) continue;
    for (ValueId v : op.operands) {
      if (v == ir::kNoValue) continue;
      ++uses_[v];
      if (depth[op.parent] > value_depth(v)) loop_use_[v] = true;
    }
  }
  analyze_deferred_loads();
}

EType FnLowering::etype(TypeId t) const {
  TypeId e = m_.types.elem_of(t);
  const ir::TypeData& d = m_.types.get(e);
  EType r;
  if (d.kind == ir::TypeKind::Ptr) {
    r.ptr = true;
    r.s = m_.types.get(d.pointee).scalar;
  } else {
    r.s = d.scalar;
  }
  return r;
}

Shape FnLowering::shape(TypeId t) const {
  Shape s;
  if (!m_.types.is_block(t)) return s;
  for (const ir::Dim& d : m_.types.get(t).dims) s.push_back(d.value);
  return s;
}

llvm::Type* FnLowering::reg_ty(EType e) const {
  return e.ptr ? llvm::PointerType::getUnqual(c_) : reg_type(c_, e.s);
}
llvm::Type* FnLowering::mem_ty(EType e) const {
  return e.ptr ? llvm::PointerType::getUnqual(c_) : mem_type(c_, e.s);
}

Rep FnLowering::scalar_rep(llvm::Value* v, EType e) const {
  Rep r;
  r.kind = Rep::Kind::Scalar;
  r.et = e;
  r.v = v;
  return r;
}

Rep FnLowering::uniform_rep(llvm::Value* v, EType e, Shape s) const {
  Rep r;
  r.kind = Rep::Kind::Uniform;
  r.et = e;
  r.v = v;
  r.shape = std::move(s);
  return r;
}

Rep FnLowering::buffer_rep(llvm::Value* p, EType e, Shape s) const {
  Rep r;
  r.kind = Rep::Kind::Buffer;
  r.et = e;
  r.v = p;
  r.shape = std::move(s);
  return r;
}

Rep FnLowering::lazy_rep(EType e, Shape s, int cost, Gen g) const {
  Rep r;
  r.kind = Rep::Kind::Lazy;
  r.et = e;
  r.shape = std::move(s);
  r.cost = cost;
  r.gen = std::make_shared<Gen>(std::move(g));
  return r;
}

llvm::Value* FnLowering::linear(const Idx& idx, const Shape& s) {
  assert(idx.size() == s.size());
  llvm::Value* lin = b_.getInt64(0);
  int64_t stride = 1;
  for (size_t d = s.size(); d-- > 0;) {
    if (s[d] != 1) lin = b_.CreateAdd(lin, b_.CreateMul(idx[d], b_.getInt64(stride)));
    stride *= s[d];
  }
  return lin;
}

llvm::Value* FnLowering::elem(const Rep& r, const Idx& idx) {
  switch (r.kind) {
    case Rep::Kind::Scalar:
    case Rep::Kind::Uniform:
      return r.v;
    case Rep::Kind::Buffer: {
      llvm::Type* mt = mem_ty(r.et);
      llvm::Value* p = b_.CreateGEP(mt, r.v, linear(idx, r.shape));
      return from_mem(b_, b_.CreateLoad(mt, p), r.et.s);
    }
    case Rep::Kind::Lazy:
      return (*r.gen)(idx);
    case Rep::Kind::None:
      break;
  }
  assert(!"value used before it was lowered");
  return nullptr;
}

llvm::Value* FnLowering::alloca_buffer(llvm::Type* elem_ty, int64_t n, int elem_size) {
  ml_.stack_bytes += uint64_t(n) * elem_size;
  llvm::IRBuilder<> ab(entry_, entry_->getFirstInsertionPt());
  llvm::AllocaInst* a = ab.CreateAlloca(llvm::ArrayType::get(elem_ty, n));
  a->setAlignment(llvm::Align(64));
  return a;
}

llvm::Value* FnLowering::alloca_scalar(llvm::Type* ty) {
  llvm::IRBuilder<> ab(entry_, entry_->getFirstInsertionPt());
  return ab.CreateAlloca(ty);
}

void FnLowering::emit_loop(int64_t n, const std::function<void(llvm::Value*)>& body) {
  if (n <= 0) return;
  if (n == 1) {
    body(b_.getInt64(0));
    return;
  }
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c_, "loop", lf_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c_, "loop.end", lf_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2);
  iv->addIncoming(b_.getInt64(0), pre);
  const uint64_t inner_before = loops_;
  body(iv);
  llvm::Value* next = b_.CreateAdd(iv, b_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
  iv->addIncoming(next, b_.GetInsertBlock());
  llvm::Instruction* br = b_.CreateCondBr(b_.CreateICmpULT(next, b_.getInt64(n)), loop, exit);
  if (n <= 4 && !cold_ && loops_ == inner_before) {
    // A tiny innermost loop (the last levels of a reduction tree): unrolled, as the pipeline's
    // unroller is off (target/cpu/compile/jit.cpp says why).
    llvm::Metadata* full[] = {llvm::MDString::get(c_, "llvm.loop.unroll.full")};
    llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(c_, full)};
    llvm::MDNode* md = llvm::MDNode::getDistinct(c_, ops);
    md->replaceOperandWith(0, md);
    br->setMetadata(llvm::LLVMContext::MD_loop, md);
  }
  ++loops_;
  mark_loop(br);
  b_.SetInsertPoint(exit);
}

void FnLowering::mark_loop(llvm::Instruction* latch_branch) {
  if (!cold_) return;
  llvm::LLVMContext& c = c_;
  llvm::Metadata* novec[] = {llvm::MDString::get(c, "llvm.loop.vectorize.enable"),
                             llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(c))};
  llvm::Metadata* nounroll[] = {llvm::MDString::get(c, "llvm.loop.unroll.disable")};
  llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(c, novec), llvm::MDNode::get(c, nounroll)};
  llvm::MDNode* loop = llvm::MDNode::getDistinct(c, ops);
  loop->replaceOperandWith(0, loop);
  latch_branch->setMetadata(llvm::LLVMContext::MD_loop, loop);
}

void FnLowering::loop_nest(const Shape& s, const std::function<void(const Idx&)>& body) {
  Idx idx(s.size(), nullptr);
  std::function<void(size_t)> rec = [&](size_t d) {
    if (d == s.size()) {
      body(idx);
      return;
    }
    if (s[d] == 1) {
      idx[d] = b_.getInt64(0);
      rec(d + 1);
      return;
    }
    emit_loop(s[d], [&](llvm::Value* iv) {
      idx[d] = iv;
      rec(d + 1);
    });
  };
  rec(0);
}

void FnLowering::emit_if(llvm::Value* cond, const std::function<void()>& then_fn) {
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(c_, "then", lf_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(c_, "endif", lf_);
  b_.CreateCondBr(cond, then_bb, merge);
  b_.SetInsertPoint(then_bb);
  then_fn();
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
}

void FnLowering::store_into(const Rep& r, llvm::Value* buf) {
  llvm::Type* mt = mem_ty(r.et);
  if (r.kind == Rep::Kind::Buffer) {
    if (r.v == buf) return;
    uint64_t bytes = uint64_t(num_elems(r.shape)) * elem_bytes(r.et);
    b_.CreateMemCpy(buf, llvm::MaybeAlign(1), r.v, llvm::MaybeAlign(1), bytes);
    return;
  }
  if (r.kind == Rep::Kind::Scalar) {
    b_.CreateStore(to_mem(b_, r.v, r.et.s), buf);
    return;
  }
  loop_nest(r.shape, [&](const Idx& idx) {
    llvm::Value* v = to_mem(b_, elem(r, idx), r.et.s);
    b_.CreateStore(v, b_.CreateGEP(mt, buf, linear(idx, r.shape)));
  });
}

Rep FnLowering::materialize(const Rep& r) {
  assert(r.is_block());
  llvm::Value* buf = alloca_buffer(mem_ty(r.et), num_elems(r.shape), elem_bytes(r.et));
  store_into(r, buf);
  Rep out = buffer_rep(buf, r.et, r.shape);
  out.aff = r.aff;
  return out;
}

Rep FnLowering::as_buffer(const Rep& r) { return r.kind == Rep::Kind::Buffer ? r : materialize(r); }

void FnLowering::set_result(ValueId v, Rep r) {
  if (r.kind == Rep::Kind::Lazy) {
    int limit = r.et.ptr ? kPtrCostLimit : kCostLimit;
    bool shared = (uses_[v] > 1 || loop_use_[v]) && !r.et.ptr && r.cost > kShareCost;
    if (r.cost > limit || shared) r = materialize(r);
  }
  reps_[v] = std::move(r);
}

void FnLowering::emit_cancel_poll() {
  llvm::Value* counter = b_.CreateLoad(b_.getPtrTy(), launch_, "cancel.counter");
  llvm::LoadInst* now = b_.CreateLoad(b_.getInt64Ty(), counter, "cancel.now");
  now->setAtomic(llvm::AtomicOrdering::Monotonic);
  now->setAlignment(llvm::Align(8));
  llvm::Value* seen = b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstGEP1_64(b_.getInt8Ty(), launch_, 8), "cancel.seen");
  llvm::BasicBlock* go = llvm::BasicBlock::Create(c_, "cancel.no", lf_);
  b_.CreateCondBr(b_.CreateICmpNE(now, seen), fail_block(), go);
  b_.SetInsertPoint(go);
}

llvm::BasicBlock* FnLowering::fail_block() {
  if (!fail_) {
    fail_ = llvm::BasicBlock::Create(c_, "assert.failed", lf_);
    llvm::IRBuilder<> fb(fail_);
    fb.CreateRet(fb.getInt32(1));
  }
  return fail_;
}

Status FnLowering::error(OpId o, Code code, const std::string& what) const {
  return error_at(code, m_.source_name, f_.op(o).loc, what);
}

// ---------------------------------------------------------------------------------------------
// FnLowering: functions and regions

Status FnLowering::lower() {
  entry_ = llvm::BasicBlock::Create(c_, "entry", lf_);
  llvm::BasicBlock* start = llvm::BasicBlock::Create(c_, "start", lf_);
  {
    llvm::IRBuilder<> eb(entry_);
    eb.CreateBr(start);
  }
  b_.SetInsertPoint(start);
  // Every type must be concrete and every attribute resolved (specialization's job).
  for (const ir::ValueData& vd : f_.values) {
    if (!m_.types.is_concrete(vd.type))
      return error_at(Code::Compile, m_.source_name, f_.loc,
                      "function '" + f_.name + "' is not specialized: type " + m_.type_str(vd.type) +
                          " has a symbolic dimension");
  }
  for (OpId o = 0; o < f_.ops.size(); ++o) {
    for (const ir::Attr& a : f_.op(o).attrs)
      if (a.kind == ir::Attr::Kind::Sym)
        return error(o, Code::Compile, "constexpr '" + a.s + "' is not specialized");
  }
  const size_t np = f_.params.size();
  const ir::BlockData& body = f_.block(f_.body);
  unsigned ai = 0;
  for (size_t i = 0; i < np; ++i, ++ai) {
    const ir::Param& p = f_.params[i];
    ValueId v = p.value != ir::kNoValue ? p.value : body.args[i];
    llvm::Value* arg = lf_->getArg(ai);
    TypeId t = f_.type_of(v);
    if (m_.types.is_block(t)) {
      reps_[v] = buffer_rep(arg, etype(t), shape(t));
    } else {
      reps_[v] = scalar_rep(arg, etype(t));
      if (p.divisible > 1 && !m_.types.is_ptr(t) && arg->getType()->isIntegerTy() &&
          arg->getType()->getIntegerBitWidth() > 1) {
        llvm::Value* d = llvm::ConstantInt::get(arg->getType(), p.divisible);
        llvm::Value* ok = b_.CreateICmpEQ(b_.CreateSRem(arg, d), llvm::ConstantInt::get(arg->getType(), 0));
        b_.CreateAssumption(ok);
      }
    }
  }
  for (size_t i = 0; i < f_.results.size(); ++i) outs_.push_back(lf_->getArg(ai++));
  for (int i = 0; i < 3; ++i) pid_[i] = lf_->getArg(ai++);
  for (int i = 0; i < 3; ++i) nprog_[i] = lf_->getArg(ai++);
  launch_ = lf_->getArg(ai++);

  OpId term = ir::kNoOp;
  TRI_RETURN_IF_ERROR(lower_ops(f_.body, &term));
  if (term == ir::kNoOp || f_.op(term).code != Opcode::Return)
    return error_at(Code::Compile, m_.source_name, f_.loc, "function '" + f_.name + "' does not end with 'return'");
  return lower_return(term);
}

Status FnLowering::lower_ops(BlockId b, OpId* terminator) {
  *terminator = ir::kNoOp;
  struct Scope {
    std::vector<std::vector<std::pair<ValueId, llvm::Value*>>>& s;
    explicit Scope(std::vector<std::vector<std::pair<ValueId, llvm::Value*>>>& x) : s(x) { s.emplace_back(); }
    ~Scope() { s.pop_back(); }
  } scope(mask_scopes_);
  const std::vector<OpId>& ops = f_.block(b).ops;
  for (size_t i = 0; i < ops.size(); ++i) {
    OpId o = ops[i];
    if (ir::op_info(f_.op(o).code).is_terminator()) {
      *terminator = o;
      return Status::ok();
    }
    TRI_RETURN_IF_ERROR(lower_op(o));
  }
  return Status::ok();
}

Status FnLowering::lower_return(OpId o) {
  const ir::OpData& op = f_.op(o);
  if (op.operands.size() != outs_.size())
    return error(o, Code::Compile, "'return' has " + std::to_string(op.operands.size()) + " values, the function " +
                                       std::to_string(outs_.size()) + " results");
  for (size_t i = 0; i < op.operands.size(); ++i) store_into(rep(op.operands[i]), outs_[i]);
  b_.CreateRet(b_.getInt32(0));
  return Status::ok();
}

Status FnLowering::lower_combine(BlockId region, const std::vector<llvm::Value*>& args,
                                 std::vector<llvm::Value*>* out) {
  const ir::BlockData& bd = f_.block(region);
  if (bd.args.size() != args.size())
    return error_at(Code::Compile, m_.source_name, bd.loc, "combine region has the wrong number of arguments");
  for (size_t i = 0; i < args.size(); ++i) reps_[bd.args[i]] = scalar_rep(args[i], etype(f_.type_of(bd.args[i])));
  OpId term = ir::kNoOp;
  TRI_RETURN_IF_ERROR(lower_ops(region, &term));
  if (term == ir::kNoOp || f_.op(term).code != Opcode::Yield)
    return error_at(Code::Compile, m_.source_name, bd.loc, "combine region does not end with 'yield'");
  out->clear();
  for (ValueId v : f_.op(term).operands) out->push_back(rep(v).v);
  return Status::ok();
}


// ---------------------------------------------------------------------------------------------
// FnLowering: op dispatch

Status FnLowering::lower_op(OpId o) {
  const ir::OpData& op = f_.op(o);
  switch (op.code) {
    case Opcode::ProgramId:
    case Opcode::NumPrograms: {
      int64_t axis = f_.attr(o, "axis").i;
      if (axis < 0 || axis > 2) return error(o, Code::Compile, "program axis " + std::to_string(axis) + " is not 0, 1 or 2");
      llvm::Value* v = op.code == Opcode::ProgramId ? pid_[axis] : nprog_[axis];
      EType e = etype(f_.type_of(op.results[0]));
      reps_[op.results[0]] = scalar_rep(b_.CreateIntCast(v, reg_ty(e), false), e);
      return Status::ok();
    }
    case Opcode::Const:
    case Opcode::Arange:
    case Opcode::Splat:
    case Opcode::Broadcast:
    case Opcode::ExpandDims:
    case Opcode::Reshape:
    case Opcode::Permute:
    case Opcode::Join:
    case Opcode::Split:
    case Opcode::Cat:
      return lower_shape(o);
    case Opcode::Load: return lower_load(o);
    case Opcode::Store: return lower_store(o);
    case Opcode::Atomic:
    case Opcode::AtomicCas:
      return lower_atomic(o);
    case Opcode::Reduce: return lower_reduce(o);
    case Opcode::Scan: return lower_scan(o);
    case Opcode::Dot: return lower_dot(o);
    case Opcode::For: return lower_for(o);
    case Opcode::If: return lower_if(o);
    case Opcode::While: return lower_while(o);
    case Opcode::Call: return lower_call(o);
    case Opcode::Print: return lower_print(o);
    case Opcode::Assert: return lower_assert(o);
    case Opcode::DebugBarrier:
      return Status::ok();  // one program instance is one thread here
    case Opcode::MultipleOf:
    case Opcode::MaxContiguous:
      reps_[op.results[0]] = rep(op.operands[0]);
      return Status::ok();
    case Opcode::Assume: {
      const Rep& c = rep(op.operands[0]);
      if (c.kind == Rep::Kind::Scalar || c.kind == Rep::Kind::Uniform) b_.CreateAssumption(c.v);
      return Status::ok();
    }
    case Opcode::InlineAsm:
      return error(o, Code::Unsupported, "'inline_asm' runs only on the GPU backend");
    case Opcode::Rank:
    case Opcode::NumRanks:
    case Opcode::SymmAt:
    case Opcode::Wait:
    case Opcode::ConsumeToken:
    case Opcode::Notify:
    case Opcode::Put:
    case Opcode::Get:
      return lower_distributed(o);
    case Opcode::Yield:
    case Opcode::Condition:
    case Opcode::Return:
      return error(o, Code::Compile, "'" + ir::op_info(op.code).name + "' outside of its place");
    default:
      return lower_elementwise(o);
  }
}

}  // namespace detail

using detail::ModuleLowering;

Status lower_kernel(const ir::Module& m, const ir::Function& kernel, llvm::LLVMContext& ctx, LoweredKernel* out) {
  if (!kernel.is_kernel) return Status(Code::InvalidArgument, "'" + kernel.name + "' is a device function, not a kernel");
  auto mod = std::make_unique<llvm::Module>("tri." + kernel.name, ctx);
  LoweredKernel lk;
  lk.sites.source = m.source_name;
  ModuleLowering ml(m, ctx, mod.get(), &lk.sites);
  TRI_RETURN_IF_ERROR(ml.run(kernel));
  lk.stack_bytes = ml.stack_bytes;
  lk.module = std::move(mod);
  *out = std::move(lk);
  return Status::ok();
}

}  // namespace tri::codegen::cpu
