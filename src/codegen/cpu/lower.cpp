// Lowering of specialized block IR to LLVM IR for the host (see lower.h for the entry point).
//
// Why blocks look the way they do here:
//  - A block value is a *lazy* per-element expression as long as that is cheap: its consumers
//    inline it into their own loops. This is what keeps address arithmetic visible to LLVM: a
//    `load` of `addptr(splat(x), offs)` becomes a loop over `x + offs(i)`, which the loop
//    vectorizer recognizes as contiguous, instead of a gather from a buffer of addresses.
//  - Everything else is a *buffer*: a stack array (static alloca) holding the block row-major.
//    Loads, reductions, scans, dots, calls and expressions that are expensive and used more than
//    once (or inside a loop while defined outside it) become buffers, so nothing expensive is
//    computed twice and code size stays bounded.
//  - Loop-carried blocks live in per-loop slots (buffers written at each `yield`), except the
//    common pointer-increment pattern (`yield addptr(%p, splat(%k))`), which is carried as the
//    loop-invariant lazy start plus a scalar delta so that loads in the loop stay contiguous.
//  - Reductions combine in a halving tree (each level a vectorizable elementwise loop), which is
//    how float sums vectorize without reassociation flags; docs/ir.md leaves the order free.
//  - Masked lanes are branches around the memory access; LLVM turns them into masked vector
//    loads and stores, and masked-off lanes never touch memory.
//  - Every function returns an i32 status: 0, or 1 after a failed assert (the callback has
//    recorded it), which unwinds the instance through the callers.
#include "codegen/cpu/lower.h"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cassert>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/scalar_ops.h"
#include "codegen/vec_math.h"

namespace tri::codegen::cpu {
namespace {

using ir::BlockId;
using ir::Opcode;
using ir::OpId;
using ir::Scalar;
using ir::TypeId;
using ir::ValueId;

using Idx = llvm::SmallVector<llvm::Value*, 4>;
using Shape = std::vector<int64_t>;

// Tuning of lazy vs buffer. Costs are rough instruction counts of one element.
constexpr int kCostLimit = 48;       // a lazy expression larger than this becomes a buffer
constexpr int kPtrCostLimit = 256;   // pointer blocks stay lazy far longer (see the file comment)
constexpr int kShareCost = 6;        // shared or loop-invariant expressions above this become buffers
constexpr uint64_t kMaxStackBytes = uint64_t(48) << 20;  // below the pool's 64 MiB worker stacks

// The element type of a value: a scalar, or a pointer (with its pointee's scalar).
struct EType {
  bool ptr = false;
  Scalar s = Scalar::I32;
};

int elem_bytes(EType e) {
  if (e.ptr) return 8;
  switch (e.s) {
    case Scalar::I1: case Scalar::I8: case Scalar::F8E4M3: case Scalar::F8E5M2: return 1;
    case Scalar::I16: case Scalar::F16: case Scalar::BF16: return 2;
    case Scalar::I32: case Scalar::F32: return 4;
    case Scalar::I64: case Scalar::F64: return 8;
  }
  return 8;
}

int64_t num_elems(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

using Gen = std::function<llvm::Value*(const Idx&)>;

// The lanes of an i32 block as an affine function of the lane index, base + sum idx[d] *
// stride[d], in exact i64 arithmetic; for a pointer block, the byte offsets of its lanes from
// `ptr`. The i32 lanes equal the function modulo 2^32 (wrapping is consistent), so they equal
// it exactly when `exact` holds at run time: every value of the function fits in i32. This is
// what makes the address ranges of loads and stores and the "every lane on" test of masks like
// `offs < n` a few scalar instructions instead of a pass over the block.
struct Affine {
  llvm::Value* base = nullptr;       // i64
  std::vector<llvm::Value*> stride;  // i64, one per dimension
  llvm::Value* ptr = nullptr;        // pointer blocks: the address the offsets start from
  llvm::Value* exact = nullptr;      // i1
};

// How one IR value exists in the generated code (see the file comment).
struct Rep {
  enum class Kind : uint8_t { None, Scalar, Uniform, Buffer, Lazy };
  Kind kind = Kind::None;
  Shape shape;  // empty for Scalar
  EType et;
  llvm::Value* v = nullptr;  // Scalar/Uniform: the value; Buffer: the pointer to element 0
  std::shared_ptr<Gen> gen;  // Lazy
  int cost = 0;              // Lazy: cost of one element
  std::shared_ptr<const Affine> aff;  // when known (i32 and pointer blocks)

  bool is_block() const { return kind == Kind::Uniform || kind == Kind::Buffer || kind == Kind::Lazy; }
  bool is_uniform() const { return kind == Kind::Scalar || kind == Kind::Uniform; }
};

class ModuleLowering;

class FnLowering {
 public:
  FnLowering(ModuleLowering& ml, const ir::Function& f, llvm::Function* lf);
  Status lower();

 private:
  friend class ModuleLowering;
  // ---- types and reps
  EType etype(TypeId t) const;
  Shape shape(TypeId t) const;
  llvm::Type* reg_ty(EType e) const;
  llvm::Type* mem_ty(EType e) const;
  const Rep& rep(ValueId v) const { return reps_[v]; }
  Rep scalar_rep(llvm::Value* v, EType e) const;
  Rep uniform_rep(llvm::Value* v, EType e, Shape s) const;
  Rep buffer_rep(llvm::Value* p, EType e, Shape s) const;
  Rep lazy_rep(EType e, Shape s, int cost, Gen g) const;
  // The element of `r` at `idx` (a register value); idx is ignored for Scalar/Uniform.
  llvm::Value* elem(const Rep& r, const Idx& idx);
  llvm::Value* linear(const Idx& idx, const Shape& s);
  // ---- buffers and loops
  llvm::Value* alloca_buffer(llvm::Type* elem_ty, int64_t n, int elem_size);
  llvm::Value* alloca_scalar(llvm::Type* ty);
  void store_into(const Rep& r, llvm::Value* buf);
  Rep materialize(const Rep& r);
  Rep as_buffer(const Rep& r);
  void emit_loop(int64_t n, const std::function<void(llvm::Value*)>& body);
  // Loops emitted while cold_ is set run only in rare cases (a fallback behind a run-time test):
  // they are kept scalar and not unrolled, which saves compile time and code.
  void mark_loop(llvm::Instruction* latch_branch);
  bool cold_ = false;
  uint64_t loops_ = 0;  // loops emitted so far (to tell innermost loops)
  void loop_nest(const Shape& s, const std::function<void(const Idx&)>& body);
  void emit_if(llvm::Value* cond, const std::function<void()>& then_fn);
  // Whether every lane of mask `v` is on (computed once per mask per region, see mask_scopes_).
  llvm::Value* all_active(ValueId v);
  // How the lanes of a masked access are walked: all of them unmasked (every lane is on), the
  // box lo[d] <= idx[d] < hi[d] unmasked (the mask is known to be exactly that box), or all of
  // them with a branch around each lane.
  struct Walk {
    enum class Kind { AllOn, Box, Masked } kind = Kind::Masked;
    std::vector<llvm::Value*> lo, hi;
  };
  // Emits `body` once per walk the mask may need, behind run-time tests: Box when the mask is a
  // box (mask_box) whose affine lanes are exact, else Masked (a cold path then); for other
  // masks, AllOn when all_active(mask), else Masked.
  void versioned(ValueId mask, const Shape& s, const std::function<void(const Walk&)>& body);
  // Loops over the lanes of walk w of shape s (the box for Box, every lane otherwise).
  void walk_lanes(const Shape& s, const Walk& w, const std::function<void(const Idx&)>& body);
  // The lanes of mask v as a box (intersected into lo/hi, i64), from compares of affine values
  // with unit stride along one dimension, `and`, broadcast and expand_dims; *ok (i1) says
  // whether the box is exact at run time. False when the mask has another form.
  bool mask_box(ValueId v, const Shape& s, std::vector<llvm::Value*>* lo, std::vector<llvm::Value*>* hi,
                llvm::Value** ok, int depth = 0);
  void set_result(ValueId v, Rep r);
  llvm::BasicBlock* fail_block();
  // ---- ops
  Status lower_ops(BlockId b, OpId* terminator);
  Status lower_op(OpId o);
  Status lower_elementwise(OpId o);
  Status lower_shape(OpId o);
  Status lower_load(OpId o);
  Status lower_store(OpId o);
  // One lane of a load (a branch around it when masked; `other` or 0 for masked-off lanes).
  llvm::Value* load_lane(const Rep& ptr, const Rep& mask, const Rep& other, EType e, bool vol, const Idx& idx,
                         bool masked, std::pair<llvm::MDNode*, llvm::MDNode*> alias = {nullptr, nullptr});
  // [lo, hi) of the addresses of the lanes of pointer block p (elements of `bytes`), as i64.
  void addr_range(const Rep& p, int bytes, llvm::Value** lo, llvm::Value** hi);
  bool known_on(ValueId mask) const;
  // Affine forms (see Affine): of a rep (uniform i32 and pointer reps have one implicitly).
  std::shared_ptr<const Affine> affine_of(const Rep& r);
  // The affine form of add/sub/mul on i32 blocks and of addptr, from their operands'.
  std::shared_ptr<const Affine> affine_result(Opcode code, const std::vector<Rep>& ins, const std::vector<EType>& ets,
                                              const Shape& s);
  void affine_range(const Affine& a, const Shape& s, llvm::Value** lo, llvm::Value** hi);
  llvm::Value* fits_i32(llvm::Value* lo, llvm::Value* hi);
  std::shared_ptr<const Affine> make_affine(llvm::Value* base, std::vector<llvm::Value*> stride, const Shape& s,
                                            llvm::Value* ptr = nullptr, llvm::Value* exact = nullptr);
  // Whether every lane of mask v is on, from its definition (compares of affine values, and),
  // or nullptr when that is not known without looking at every lane.
  llvm::Value* mask_all_on(ValueId v, int depth = 0);
  Status lower_atomic(OpId o);
  Status lower_reduce(OpId o);
  Status lower_scan(OpId o);
  Status lower_dot(OpId o);
  Status lower_for(OpId o);
  Status lower_if(OpId o);
  Status lower_while(OpId o);
  Status lower_call(OpId o);
  Status lower_print(OpId o);
  Status lower_assert(OpId o);
  Status lower_return(OpId o);
  // Lowers a combine region (reduce/scan) on scalar arguments and returns the yielded values.
  Status lower_combine(BlockId region, const std::vector<llvm::Value*>& args, std::vector<llvm::Value*>* out);
  llvm::Value* builtin_combine(const std::string& kind, EType e, llvm::Value* a, llvm::Value* b);
  // ---- scalar semantics
  llvm::Value* scalar_op(OpId o, EType result, const std::vector<EType>& ets, const std::vector<llvm::Value*>& v);
  llvm::Value* to_arith(llvm::Value* v, EType e);
  llvm::Value* from_arith(llvm::Value* v, EType e);
  llvm::Value* float_arith(EType e, const std::vector<llvm::Value*>& v,
                           const std::function<llvm::Value*(const std::vector<llvm::Value*>&)>& f);
  llvm::Value* cast(Opcode code, llvm::Value* v, EType from, EType to, bool rtz);
  llvm::Value* float_cast(llvm::Value* v, Scalar from, Scalar to, bool rtz);
  llvm::Value* math(const std::string& name, EType e, const std::vector<llvm::Value*>& v);
  llvm::Value* atomic_lane(OpId o, llvm::Value* p, llvm::Value* val, EType e);
  int64_t enum_attr(OpId o, const char* name) const;
  std::string enum_name(OpId o, const char* name) const;
  Status error(OpId o, Code code, const std::string& what) const;
  bool is_uniform_ir(ValueId v, int depth = 0) const;

  ModuleLowering& ml_;
  const ir::Module& m_;
  const ir::Function& f_;
  llvm::Function* lf_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  llvm::BasicBlock* entry_ = nullptr;  // holds the allocas
  llvm::BasicBlock* fail_ = nullptr;
  std::vector<Rep> reps_;
  std::vector<int> uses_;
  std::vector<bool> loop_use_;
  llvm::Value* pid_[3] = {};
  llvm::Value* nprog_[3] = {};
  llvm::Value* launch_ = nullptr;
  std::vector<llvm::Value*> outs_;  // device function result pointers
  // all_active() results, one scope per region being lowered: a value computed in an enclosing
  // region dominates the inner ones; scopes are dropped when their region ends.
  std::vector<std::vector<std::pair<ValueId, llvm::Value*>>> mask_scopes_;
  // Deferred loads (see analyze_deferred_loads): the load is read where its single consumer
  // (a store, reduce, scan or dot later in the same region) evaluates it, instead of through a
  // buffer. A store that consumes deferred loads checks at run time that its addresses do not
  // overlap theirs, and otherwise fills the buffers first (use_buffer).
  struct Deferred {
    Rep ptr, mask, other;
    EType e;
    Shape shape;
    ValueId ptr_v = ir::kNoValue, mask_v = ir::kNoValue;
    bool use_buffer = false;
    llvm::Value* buf = nullptr;
    std::pair<llvm::MDNode*, llvm::MDNode*> alias{nullptr, nullptr};  // (alias.scope, noalias) while fused
  };
  std::pair<llvm::MDNode*, llvm::MDNode*> alias_store_{nullptr, nullptr};
  void analyze_deferred_loads();
  std::vector<OpId> defer_sink_;                      // per op: the sink of a deferred load, or kNoOp
  std::map<OpId, std::vector<OpId>> sink_loads_;      // per sink: its deferred loads
  std::map<OpId, std::shared_ptr<Deferred>> deferred_;
  std::vector<ValueId> known_on_;  // masks known to be all on where code is being emitted
};

class ModuleLowering {
 public:
  ModuleLowering(const ir::Module& m, llvm::LLVMContext& c, llvm::Module* mod, RuntimeSites* sites)
      : m(m), c(c), mod(mod), sites(sites) {}

  // The LLVM function of an IR function (kernel body or device function), declared on first use
  // and lowered later by run().
  llvm::Function* function(const ir::Function& f);
  Status run(const ir::Function& kernel);

  llvm::Function* helper(const std::string& name, llvm::Type* ret, std::vector<llvm::Type*> params,
                         const std::function<llvm::Value*(llvm::IRBuilder<>&, llvm::Function*)>& body);
  llvm::Value* decode(llvm::IRBuilder<>& b, llvm::Value* bits, Scalar s);
  llvm::Value* encode(llvm::IRBuilder<>& b, llvm::Value* x, Scalar s, bool rtz);
  llvm::FunctionCallee libm(const std::string& name, llvm::Type* t, int arity);
  // An internal always-inline f32 function for exp, exp2, log, log2 or tanh (vec_math.h).
  llvm::Function* math_helper(const std::string& name);
  llvm::FunctionCallee print_fn();
  llvm::FunctionCallee assert_fn();
  llvm::FunctionCallee error_fn();

  const ir::Module& m;
  llvm::LLVMContext& c;
  llvm::Module* mod;
  RuntimeSites* sites;
  uint64_t stack_bytes = 0;
  std::map<const ir::Function*, llvm::Function*> funcs;
  std::vector<const ir::Function*> pending;
};

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
    if (name == "log2") return emit_log2_f32(hb, x);
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
  id->addIncoming(id1, next);
  b.CreateCondBr(b.CreateICmpULT(id1, end), loop, done);
  b.SetInsertPoint(done);
  b.CreateRet(b.getInt32(0));
  b.SetInsertPoint(failed);
  b.CreateRet(b.getInt32(1));
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// FnLowering: setup, types, reps, buffers and loops

FnLowering::FnLowering(ModuleLowering& ml, const ir::Function& f, llvm::Function* lf)
    : ml_(ml), m_(ml.m), f_(f), lf_(lf), c_(ml.c), b_(ml.c) {
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
    return c == Opcode::Store || c == Opcode::Atomic || c == Opcode::AtomicCas || c == Opcode::Call ||
           c == Opcode::For || c == Opcode::If || c == Opcode::While || c == Opcode::InlineAsm;
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
    // unroller is off (cpu_kernel.cpp says why).
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

int64_t FnLowering::enum_attr(OpId o, const char* name) const {
  const ir::Attr& a = f_.attr(o, name);
  if (a.present()) return a.i;
  const ir::OpInfo& info = ir::op_info(f_.op(o).code);
  const ir::AttrSpec& spec = info.attrs[info.attr_index(name)];
  for (size_t i = 0; i < spec.enum_values.size(); ++i)
    if (spec.enum_values[i] == spec.default_text) return static_cast<int64_t>(i);
  return -1;
}

std::string FnLowering::enum_name(OpId o, const char* name) const {
  int64_t i = enum_attr(o, name);
  if (i < 0) return std::string();
  const ir::OpInfo& info = ir::op_info(f_.op(o).code);
  return info.attrs[info.attr_index(name)].enum_values[i];
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
    case Opcode::Yield:
    case Opcode::Condition:
    case Opcode::Return:
      return error(o, Code::Compile, "'" + ir::op_info(op.code).name + "' outside of its place");
    default:
      return lower_elementwise(o);
  }
}

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

llvm::Value* FnLowering::to_arith(llvm::Value* v, EType e) {
  return (!e.ptr && is_small_float(e.s)) ? ml_.decode(b_, v, e.s) : v;
}

llvm::Value* FnLowering::from_arith(llvm::Value* v, EType e) {
  return (!e.ptr && is_small_float(e.s)) ? ml_.encode(b_, v, e.s, false) : v;
}

llvm::Value* FnLowering::float_arith(EType e, const std::vector<llvm::Value*>& v,
                                     const std::function<llvm::Value*(const std::vector<llvm::Value*>&)>& f) {
  std::vector<llvm::Value*> a;
  for (llvm::Value* x : v) a.push_back(to_arith(x, e));
  return from_arith(f(a), e);
}

llvm::Value* FnLowering::scalar_op(OpId o, EType ret, const std::vector<EType>& ets,
                                   const std::vector<llvm::Value*>& v) {
  const ir::OpData& op = f_.op(o);
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
      return fl ? float_arith(e, v, [&](const V& a) { return b.CreateFDiv(a[0], a[1]); }) : nullptr;
    case Opcode::FRem:
      return fl ? float_arith(e, v, [&](const V& a) { return b.CreateFRem(a[0], a[1]); }) : nullptr;
    case Opcode::FMin:
    case Opcode::FMax: {
      if (!fl) return nullptr;
      bool ignore = enum_attr(o, "nan") == 1;
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
    case Opcode::Exp: return fl ? math("exp", e, v) : nullptr;
    case Opcode::Exp2: return fl ? math("exp2", e, v) : nullptr;
    case Opcode::Log: return fl ? math("log", e, v) : nullptr;
    case Opcode::Log2: return fl ? math("log2", e, v) : nullptr;
    case Opcode::Sin: return fl ? math("sin", e, v) : nullptr;
    case Opcode::Cos: return fl ? math("cos", e, v) : nullptr;
    case Opcode::Tanh: return fl ? math("tanh", e, v) : nullptr;
    case Opcode::Erf: return fl ? math("erf", e, v) : nullptr;
    case Opcode::Sqrt: return fl ? unary_intr(llvm::Intrinsic::sqrt) : nullptr;
    case Opcode::Rsqrt:
      return fl ? float_arith(e, v,
                              [&](const V& a) {
                                llvm::Value* s = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]);
                                return b.CreateFDiv(llvm::ConstantFP::get(s->getType(), 1.0), s);
                              })
                : nullptr;
    case Opcode::Floor: return fl ? unary_intr(llvm::Intrinsic::floor) : nullptr;
    case Opcode::Ceil: return fl ? unary_intr(llvm::Intrinsic::ceil) : nullptr;
    case Opcode::MathCall: return fl ? math(f_.attr(o, "name").s, e, v) : nullptr;
    case Opcode::Cmp: {
      static const llvm::CmpInst::Predicate preds[] = {
          llvm::CmpInst::ICMP_EQ,  llvm::CmpInst::ICMP_NE,  llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_SLE,
          llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_ULT, llvm::CmpInst::ICMP_ULE,
          llvm::CmpInst::ICMP_UGT, llvm::CmpInst::ICMP_UGE};
      int64_t p = enum_attr(o, "pred");
      if (fl || p < 0 || p >= 10) return nullptr;
      return b.CreateICmp(preds[p], v[0], v[1]);
    }
    case Opcode::FCmp: {
      static const llvm::CmpInst::Predicate preds[] = {
          llvm::CmpInst::FCMP_OEQ, llvm::CmpInst::FCMP_ONE, llvm::CmpInst::FCMP_OLT, llvm::CmpInst::FCMP_OLE,
          llvm::CmpInst::FCMP_OGT, llvm::CmpInst::FCMP_OGE, llvm::CmpInst::FCMP_ORD, llvm::CmpInst::FCMP_UEQ,
          llvm::CmpInst::FCMP_UNE, llvm::CmpInst::FCMP_ULT, llvm::CmpInst::FCMP_ULE, llvm::CmpInst::FCMP_UGT,
          llvm::CmpInst::FCMP_UGE, llvm::CmpInst::FCMP_UNO};
      int64_t p = enum_attr(o, "pred");
      if (!fl || p < 0 || p >= 14) return nullptr;
      return b.CreateFCmp(preds[p], to_arith(v[0], e), to_arith(v[1], e));
    }
    case Opcode::Select:
      return b.CreateSelect(v[0], v[1], v[2]);
    case Opcode::AddPtr: {
      llvm::Value* off = b.CreateSExtOrTrunc(v[1], b.getInt64Ty());
      return b.CreateGEP(mem_type(c_, e.s), v[0], off);
    }
    case Opcode::Trunc: case Opcode::ZExt: case Opcode::SExt: case Opcode::FPTrunc: case Opcode::FPExt:
    case Opcode::FPToSI: case Opcode::FPToUI: case Opcode::SIToFP: case Opcode::UIToFP: case Opcode::Bitcast:
    case Opcode::PtrToInt: case Opcode::IntToPtr: {
      bool rtz = op.code == Opcode::FPTrunc && enum_attr(o, "rounding") == 1;
      return cast(op.code, v[0], ets[0], ret, rtz);
    }
    default:
      return nullptr;
  }
}

llvm::Value* FnLowering::float_cast(llvm::Value* v, Scalar from, Scalar to, bool rtz) {
  if (from == to) return v;
  llvm::Value* x = v;
  if (is_small_float(from)) {
    x = ml_.decode(b_, v, from);
    from = Scalar::F32;
    if (from == to) return x;
  }
  if (to == Scalar::F32) return rtz ? emit_fptrunc_rtz(b_, x) : b_.CreateFPTrunc(x, b_.getFloatTy());
  if (to == Scalar::F64) return b_.CreateFPExt(x, b_.getDoubleTy());
  return ml_.encode(b_, x, to, rtz);
}

llvm::Value* FnLowering::cast(Opcode code, llvm::Value* v, EType from, EType to, bool rtz) {
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
      auto id = code == Opcode::FPToSI ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
      return b_.CreateIntrinsic(id, {rt, x->getType()}, {x});
    }
    case Opcode::SIToFP:
    case Opcode::UIToFP: {
      bool sign = code == Opcode::SIToFP;
      if (to.s == Scalar::F32 || to.s == Scalar::F64) return sign ? b_.CreateSIToFP(v, rt) : b_.CreateUIToFP(v, rt);
      return ml_.encode(b_, emit_int_to_f64_for_narrow(b_, v, sign), to.s, false);
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

llvm::Value* FnLowering::math(const std::string& name, EType e, const std::vector<llvm::Value*>& v) {
  return float_arith(e, v, [&](const std::vector<llvm::Value*>& a) -> llvm::Value* {
    llvm::Type* t = a[0]->getType();
    const bool f32 = t->isFloatTy();
    if (name == "trunc") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, a[0]);
    if (name == "round") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::round, a[0]);
    if (name == "copysign") return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, a[0], a[1]);
    if (name == "fmod") return b_.CreateFRem(a[0], a[1]);
    // The hot ones in kernels (softmax, attention, GeLU) are inlined for f32 so that they
    // vectorize; the others call the math library (scalar, one call per element).
    if (f32 && (name == "exp" || name == "exp2" || name == "log" || name == "log2" || name == "tanh"))
      return b_.CreateCall(ml_.math_helper(name), {a[0]});
    // lgamma writes the global `signgam`; the runtime's wrapper calls the reentrant lgamma_r.
    std::string sym = name == "lgamma" ? std::string("tri.rt.lgamma") : name;
    if (f32) sym += "f";
    return b_.CreateCall(ml_.libm(sym, t, static_cast<int>(a.size())), a);
  });
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
      double d = a.kind == ir::Attr::Kind::Float ? a.f : static_cast<double>(a.i);
      int64_t i = a.kind == ir::Attr::Kind::Float ? static_cast<int64_t>(a.f) : a.i;
      llvm::Value* c;
      if (ir::is_int(e.s)) {
        unsigned w = reg_ty(e)->getIntegerBitWidth();
        uint64_t mask = w == 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
        c = llvm::ConstantInt::get(reg_ty(e), static_cast<uint64_t>(i) & mask);
      } else if (is_small_float(e.s)) {
        c = emit_to_small(b_, llvm::ConstantFP::get(b_.getDoubleTy(), d), e.s, false);
      } else {
        c = llvm::ConstantFP::get(reg_ty(e), d);
      }
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

namespace {
llvm::AtomicOrdering ordering(int64_t i) {
  switch (i) {
    case 0: return llvm::AtomicOrdering::Monotonic;
    case 1: return llvm::AtomicOrdering::Acquire;
    case 2: return llvm::AtomicOrdering::Release;
    default: return llvm::AtomicOrdering::AcquireRelease;
  }
}
llvm::AtomicOrdering failure_ordering(llvm::AtomicOrdering o) {
  switch (o) {
    case llvm::AtomicOrdering::Acquire:
    case llvm::AtomicOrdering::AcquireRelease:
      return llvm::AtomicOrdering::Acquire;
    default:
      return llvm::AtomicOrdering::Monotonic;
  }
}
}  // namespace

llvm::Value* FnLowering::atomic_lane(OpId o, llvm::Value* p, llvm::Value* val, EType e) {
  const ir::OpData& op = f_.op(o);
  llvm::AtomicOrdering ord = ordering(enum_attr(o, "order"));
  llvm::MaybeAlign align(elem_bytes(e));
  assert(op.code == Opcode::Atomic);
  std::string kind = enum_name(o, "kind");
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
  if (kind == "add" && !small) {
    return b_.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd, p, val, align, ord);
  }
  // Everything else is a compare-and-swap loop on the bits: small-float arithmetic (computed in
  // f32 and rounded, like any other op on the type) and float min/max (IEEE minimum/maximum).
  llvm::Type* it = b_.getIntNTy(elem_bytes(e) * 8);
  auto combine = [&](llvm::Value* old_bits) -> llvm::Value* {
    llvm::Value* old = small ? old_bits : b_.CreateBitCast(old_bits, reg_ty(e));
    llvm::Value* r;
    if (kind == "add") {
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
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c_, "cas", lf_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "cas.end", lf_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* old = b_.CreatePHI(it, 2);
  old->addIncoming(init, pre);
  llvm::Value* nv = combine(old);
  llvm::Value* pair = b_.CreateAtomicCmpXchg(p, old, nv, align, ord, failure_ordering(ord));
  llvm::Value* cur = b_.CreateExtractValue(pair, 0);
  llvm::Value* ok = b_.CreateExtractValue(pair, 1);
  old->addIncoming(cur, b_.GetInsertBlock());
  b_.CreateCondBr(ok, done, loop);
  b_.SetInsertPoint(done);
  return small ? static_cast<llvm::Value*>(old) : b_.CreateBitCast(old, reg_ty(e));
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
  llvm::AtomicOrdering ord = ordering(enum_attr(o, "order"));
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
    llvm::Value* pair = b_.CreateAtomicCmpXchg(p, bits(elem(cmp, idx)), bits(v), align, ord, failure_ordering(ord));
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

// ---------------------------------------------------------------------------------------------
// Reductions, scans, dot

llvm::Value* FnLowering::builtin_combine(const std::string& kind, EType e, llvm::Value* a, llvm::Value* b) {
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

Status FnLowering::lower_reduce(OpId o) {
  const ir::OpData& op = f_.op(o);
  std::vector<ValueId> srcs = f_.variadic(o);
  const int64_t axis = f_.attr(o, "axis").i;
  const std::string kind = enum_name(o, "kind");
  const bool has_region = !op.regions.empty();
  if (!has_region && kind.empty()) return error(o, Code::Compile, "'reduce' has neither a kind nor a combine region");
  if (srcs.empty()) return error(o, Code::Compile, "'reduce' has no operand");
  Shape s = shape(f_.type_of(srcs[0]));
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return error(o, Code::Compile, "'reduce' axis out of range");
  const size_t a = static_cast<size_t>(axis);
  const int64_t n = s[a];
  const bool arg = kind == "argmax" || kind == "argmin";
  if (!has_region && !arg && srcs.size() != 1) return error(o, Code::Compile, "builtin 'reduce' takes one operand");
  if (arg && srcs.size() != 1) return error(o, Code::Compile, "'" + kind + "' takes one operand");
  std::vector<Rep> in;
  for (ValueId v : srcs) in.push_back(rep(v));
  EType i32e{false, Scalar::I32};
  if (arg) {
    in.push_back(lazy_rep(i32e, s, 1, [this, a](const Idx& idx) { return b_.CreateTrunc(idx[a], b_.getInt32Ty()); }));
  }
  if (!has_region && !arg) {
    llvm::BasicBlock* probe = llvm::BasicBlock::Create(c_, "probe", lf_);
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(probe);
    llvm::Value* u = llvm::UndefValue::get(reg_ty(in[0].et));
    llvm::Value* ok = builtin_combine(kind, in[0].et, u, u);
    probe->eraseFromParent();
    if (!ok) return error(o, Code::Compile, "'reduce' kind '" + kind + "' does not apply to " + ir::scalar_name(in[0].et.s));
  }
  // W accumulator lanes along the axis, each folding C = n / W elements sequentially, then a
  // tree over the lanes. Builtin kinds are commutative: lane j folds elements j, W + j, ...
  // (contiguous vector loads) and the tree pairs j with j + W/2. A combine region need only be
  // associative, so the order of elements is kept: lane j folds the chunk [j*C, (j+1)*C) and
  // the tree pairs neighbours. The source is read through its lazy form, so the expression
  // that feeds a reduction (exp(x - m)) is computed inside the fold loop.
  const bool ordered = has_region;
  int64_t inner = 1;
  for (size_t d = a + 1; d < s.size(); ++d) inner *= s[d];
  constexpr int64_t kLanes = 32;
  const int64_t W = inner >= kLanes ? 1 : std::min(n, kLanes / inner);
  const int64_t C = n / W;
  Shape ws = s;
  ws[a] = W;
  std::vector<Rep> acc;
  for (const Rep& r : in) {
    llvm::Value* buf = alloca_buffer(mem_ty(r.et), num_elems(ws), elem_bytes(r.et));
    acc.push_back(buffer_rep(buf, r.et, ws));
  }
  Status st;
  auto combine = [&](const std::vector<llvm::Value*>& x, const std::vector<llvm::Value*>& y) {
    std::vector<llvm::Value*> r;
    if (has_region) {
      std::vector<llvm::Value*> args = x;
      args.insert(args.end(), y.begin(), y.end());
      st = lower_combine(op.regions[0], args, &r);
      if (!st.is_ok()) r.assign(x.size(), nullptr);
    } else if (arg) {
      EType e = in[0].et;
      llvm::Value* va = to_arith(x[0], e);
      llvm::Value* vb = to_arith(y[0], e);
      bool mx = kind == "argmax";
      llvm::Value* better;
      llvm::Value* equal;
      if (ir::is_float(e.s)) {
        better = mx ? b_.CreateFCmpOGT(vb, va) : b_.CreateFCmpOLT(vb, va);
        equal = b_.CreateFCmpOEQ(vb, va);
      } else {
        better = mx ? b_.CreateICmpSGT(vb, va) : b_.CreateICmpSLT(vb, va);
        equal = b_.CreateICmpEQ(vb, va);
      }
      // Ties go to the lower index (the first extreme element).
      llvm::Value* take = b_.CreateOr(better, b_.CreateAnd(equal, b_.CreateICmpSLT(y[1], x[1])));
      r = {b_.CreateSelect(take, y[0], x[0]), b_.CreateSelect(take, y[1], x[1])};
    } else {
      r = {builtin_combine(kind, in[0].et, x[0], y[0])};
    }
    return r;
  };
  auto store_acc = [&](const Idx& idx, const std::vector<llvm::Value*>& r) {
    llvm::Value* lin = linear(idx, ws);
    for (size_t j = 0; j < acc.size(); ++j) {
      llvm::Type* mt = mem_ty(acc[j].et);
      b_.CreateStore(to_mem(b_, r[j], acc[j].et.s), b_.CreateGEP(mt, acc[j].v, lin));
    }
  };
  auto src_pos = [&](llvm::Value* j, llvm::Value* c) -> llvm::Value* {
    return ordered ? b_.CreateAdd(b_.CreateMul(j, b_.getInt64(C)), c) : b_.CreateAdd(b_.CreateMul(c, b_.getInt64(W)), j);
  };
  // Lanes start with the first element of their share.
  loop_nest(ws, [&](const Idx& idx) {
    Idx sidx = idx;
    sidx[a] = src_pos(idx[a], b_.getInt64(0));
    std::vector<llvm::Value*> v;
    for (const Rep& r : in) v.push_back(elem(r, sidx));
    store_acc(idx, v);
  });
  if (C > 1) {
    Shape outer(s.begin(), s.begin() + a);
    Shape rest(ws.begin() + a, ws.end());
    loop_nest(outer, [&](const Idx& oi) {
      emit_loop(C - 1, [&](llvm::Value* c0) {
        llvm::Value* c = b_.CreateAdd(c0, b_.getInt64(1));
        loop_nest(rest, [&](const Idx& ri) {
          if (!st.is_ok()) return;
          Idx idx = oi;
          idx.append(ri.begin(), ri.end());
          Idx sidx = idx;
          sidx[a] = src_pos(idx[a], c);
          std::vector<llvm::Value*> x, y;
          for (size_t j = 0; j < in.size(); ++j) {
            x.push_back(elem(acc[j], idx));
            y.push_back(elem(in[j], sidx));
          }
          std::vector<llvm::Value*> r = combine(x, y);
          if (st.is_ok()) store_acc(idx, r);
        });
      });
    });
    TRI_RETURN_IF_ERROR(st);
  }
  for (int64_t half = W / 2; half >= 1; half /= 2) {
    Shape hs = ws;
    hs[a] = half;
    loop_nest(hs, [&](const Idx& idx) {
      if (!st.is_ok()) return;
      Idx ia = idx, ib = idx;
      if (ordered) {
        ia[a] = b_.CreateMul(idx[a], b_.getInt64(2));
        ib[a] = b_.CreateAdd(ia[a], b_.getInt64(1));
      } else {
        ib[a] = b_.CreateAdd(idx[a], b_.getInt64(half));
      }
      std::vector<llvm::Value*> x, y;
      for (const Rep& w : acc) {
        x.push_back(elem(w, ia));
        y.push_back(elem(w, ib));
      }
      std::vector<llvm::Value*> r = combine(x, y);
      if (st.is_ok()) store_acc(idx, r);
    });
    TRI_RETURN_IF_ERROR(st);
  }
  for (size_t j = 0; j < op.results.size(); ++j) {
    const Rep& w = arg ? acc.back() : acc[j];
    ValueId res = op.results[j];
    TypeId rt = f_.type_of(res);
    if (!m_.types.is_block(rt)) {
      Idx zero(s.size(), b_.getInt64(0));
      reps_[res] = scalar_rep(elem(w, zero), etype(rt));
      continue;
    }
    reps_[res] = lazy_rep(etype(rt), shape(rt), 1, [this, w, a](const Idx& idx) {
      Idx full(idx.begin(), idx.end());
      full.insert(full.begin() + a, b_.getInt64(0));
      return elem(w, full);
    });
  }
  return Status::ok();
}

Status FnLowering::lower_scan(OpId o) {
  const ir::OpData& op = f_.op(o);
  std::vector<ValueId> srcs = f_.variadic(o);
  const int64_t axis = f_.attr(o, "axis").i;
  const std::string kind = enum_name(o, "kind");
  const bool reverse = f_.attr(o, "reverse").i != 0;
  const bool has_region = !op.regions.empty();
  if (!has_region && kind.empty()) return error(o, Code::Compile, "'scan' has neither a kind nor a combine region");
  if (srcs.empty()) return error(o, Code::Compile, "'scan' has no operand");
  Shape s = shape(f_.type_of(srcs[0]));
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return error(o, Code::Compile, "'scan' axis out of range");
  if (!has_region && srcs.size() != 1) return error(o, Code::Compile, "builtin 'scan' takes one operand");
  const int64_t n = s[axis];
  std::vector<Rep> work;
  for (ValueId v : srcs) {
    const Rep& r = rep(v);
    llvm::Value* buf = alloca_buffer(mem_ty(r.et), num_elems(s), elem_bytes(r.et));
    store_into(r, buf);
    work.push_back(buffer_rep(buf, r.et, s));
  }
  if (!has_region) {
    llvm::BasicBlock* probe = llvm::BasicBlock::Create(c_, "probe", lf_);
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(probe);
    llvm::Value* u = llvm::UndefValue::get(reg_ty(work[0].et));
    llvm::Value* ok = builtin_combine(kind, work[0].et, u, u);
    probe->eraseFromParent();
    if (!ok) return error(o, Code::Compile, "'scan' kind '" + kind + "' does not apply to " + ir::scalar_name(work[0].et.s));
  }
  Status st;
  Shape rest = s;
  rest[axis] = 1;
  // Sequential along the axis (element k combines the running value at k-1, or k+1 when
  // reversed, with its own); every step is one loop over all the other dimensions.
  emit_loop(n - 1, [&](llvm::Value* kk) {
    llvm::Value* k = reverse ? b_.CreateSub(b_.getInt64(n - 2), kk) : b_.CreateAdd(kk, b_.getInt64(1));
    llvm::Value* prev = reverse ? b_.CreateAdd(k, b_.getInt64(1)) : b_.CreateSub(k, b_.getInt64(1));
    loop_nest(rest, [&](const Idx& idx0) {
      if (!st.is_ok()) return;
      Idx cur = idx0, before = idx0;
      cur[axis] = k;
      before[axis] = prev;
      std::vector<llvm::Value*> a, bv, r;
      for (const Rep& w : work) {
        a.push_back(elem(w, before));
        bv.push_back(elem(w, cur));
      }
      if (has_region) {
        std::vector<llvm::Value*> args = a;
        args.insert(args.end(), bv.begin(), bv.end());
        st = lower_combine(op.regions[0], args, &r);
        if (!st.is_ok()) return;
      } else {
        r = {builtin_combine(kind, work[0].et, a[0], bv[0])};
      }
      llvm::Value* lin = linear(cur, s);
      for (size_t j = 0; j < work.size(); ++j) {
        llvm::Type* mt = mem_ty(work[j].et);
        b_.CreateStore(to_mem(b_, r[j], work[j].et.s), b_.CreateGEP(mt, work[j].v, lin));
      }
    });
  });
  TRI_RETURN_IF_ERROR(st);
  for (size_t j = 0; j < op.results.size() && j < work.size(); ++j) reps_[op.results[j]] = work[j];
  return Status::ok();
}

Status FnLowering::lower_dot(OpId o) {
  const ir::OpData& op = f_.op(o);
  Rep a = rep(op.operands[0]), bm = rep(op.operands[1]), acc = rep(op.operands[2]);
  ValueId res = op.results[0];
  TypeId rt = f_.type_of(res);
  EType ec = etype(rt);
  Shape sa = a.shape, sb = bm.shape, sc = shape(rt);
  const size_t rank = sc.size();
  if ((rank != 2 && rank != 3) || sa.size() != rank || sb.size() != rank)
    return error(o, Code::Compile, "'dot' operands must be 2-D or 3-D blocks of one rank");
  const int64_t B = rank == 3 ? sc[0] : 1;
  const int64_t M = sc[rank - 2], N = sc[rank - 1], K = sa[rank - 1];
  if (sa[rank - 2] != M || sb[rank - 2] != K || sb[rank - 1] != N)
    return error(o, Code::Compile, "'dot' shapes do not match");
  const bool tf32 = enum_attr(o, "precision") == 1;
  // Compute type: the accumulator's (f32 for small-float accumulators).
  llvm::Type* ct = ir::is_int(ec.s) ? reg_ty(ec) : (ec.s == Scalar::F64 ? b_.getDoubleTy() : b_.getFloatTy());
  const int cbytes = static_cast<int>(ct->getPrimitiveSizeInBits() / 8);
  auto conv = [&](llvm::Value* v, EType e, bool input) -> llvm::Value* {
    if (ir::is_int(e.s)) return b_.CreateSExtOrTrunc(v, ct);
    llvm::Value* x = to_arith(v, e);
    if (tf32 && input && x->getType()->isFloatTy()) x = emit_round_tf32(b_, x);
    if (x->getType() != ct) x = ct->isDoubleTy() ? b_.CreateFPExt(x, ct) : b_.CreateFPTrunc(x, ct);
    return x;
  };
  if (ir::is_int(ec.s) != ir::is_int(a.et.s) || ir::is_int(ec.s) != ir::is_int(bm.et.s))
    return error(o, Code::Compile, "'dot' mixes integer and float operands");
  auto stage = [&](const Rep& r, const Shape& sh, bool input) {
    llvm::Value* buf = alloca_buffer(ct, num_elems(sh), cbytes);
    loop_nest(sh, [&](const Idx& idx) {
      b_.CreateStore(conv(elem(r, idx), r.et, input), b_.CreateGEP(ct, buf, linear(idx, sh)));
    });
    return buf;
  };
  llvm::Value* A = stage(a, sa, true);
  llvm::Value* Bb = stage(bm, sb, true);
  llvm::Value* C = stage(acc, sc, false);
  // C[m, n] += A[m, k] * B[k, n] with n innermost: a vectorizable elementwise update per k.
  emit_loop(B, [&](llvm::Value* bi) {
    emit_loop(M, [&](llvm::Value* m) {
      emit_loop(K, [&](llvm::Value* k) {
        llvm::Value* arow = b_.CreateAdd(b_.CreateMul(bi, b_.getInt64(M * K)), b_.CreateMul(m, b_.getInt64(K)));
        llvm::Value* av = b_.CreateLoad(ct, b_.CreateGEP(ct, A, b_.CreateAdd(arow, k)));
        llvm::Value* brow = b_.CreateAdd(b_.CreateMul(bi, b_.getInt64(K * N)), b_.CreateMul(k, b_.getInt64(N)));
        llvm::Value* crow = b_.CreateAdd(b_.CreateMul(bi, b_.getInt64(M * N)), b_.CreateMul(m, b_.getInt64(N)));
        emit_loop(N, [&](llvm::Value* nn) {
          llvm::Value* bv = b_.CreateLoad(ct, b_.CreateGEP(ct, Bb, b_.CreateAdd(brow, nn)));
          llvm::Value* cp = b_.CreateGEP(ct, C, b_.CreateAdd(crow, nn));
          llvm::Value* cv = b_.CreateLoad(ct, cp);
          // c + a*b rounded twice, summed over k in order: docs/ir.md allows no contraction
          // into an fma, and this is the interpreter's order, so the results agree bit for bit.
          llvm::Value* r = ct->isIntegerTy() ? b_.CreateAdd(cv, b_.CreateMul(av, bv))
                                             : b_.CreateFAdd(cv, b_.CreateFMul(av, bv));
          b_.CreateStore(r, cp);
        });
      });
    });
  });
  EType ce = ec;
  if (ct->isFloatTy()) ce.s = Scalar::F32;
  Rep cr = buffer_rep(C, ce, sc);
  if (ce.s == ec.s) {
    reps_[res] = cr;
  } else {
    set_result(res, lazy_rep(ec, sc, 14, [this, cr, ec](const Idx& idx) {
                 return ml_.encode(b_, elem(cr, idx), ec.s, false);
               }));
  }
  return Status::ok();
}

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

}  // namespace

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
