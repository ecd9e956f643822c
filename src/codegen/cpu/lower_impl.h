// The CPU lowering's internals, shared by its files (lower.cpp says how blocks are lowered and
// why): the representation of a value (Rep, Affine), the per-function lowering (FnLowering) and
// the per-module state (ModuleLowering). lower.cpp holds the core (representations, buffers,
// loops, dispatch); lower_elementwise.cpp, lower_affine.cpp, lower_memory.cpp, lower_reduce.cpp
// and lower_control.cpp hold the ops and analyses their names say.
#pragma once

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

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cpu/lower.h"
#include "codegen/elem_emitter.h"
#include "ir/ir.h"

namespace tri::codegen::cpu::detail {

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

using codegen::EType;
using codegen::elem_bytes;

inline int64_t num_elems(const Shape& s) {
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

// The CPU's element hooks: small floats through the module's shared decode/encode helpers, the
// hot f32 math functions inline (vec_math.h, so loops of them vectorize), the rest from libm.
class CpuElemEmitter final : public codegen::ElemEmitter {
 public:
  CpuElemEmitter(llvm::IRBuilder<>& b, ModuleLowering& ml) : ElemEmitter(b), ml_(ml) {}
  llvm::Value* decode(llvm::Value* bits, Scalar s) override;
  llvm::Value* encode(llvm::Value* x, Scalar s, bool rtz) override;
  llvm::Value* math_fn(const std::string& name, const std::vector<llvm::Value*>& args) override;

 private:
  ModuleLowering& ml_;
};

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
  // Returns 1 (fail_block) when the launch was cancelled (lower.h, CancelHead); the builder
  // continues in a new block.
  void emit_cancel_poll();
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
  // ---- distributed ops (lower_distributed.cpp)
  Status lower_distributed(OpId o);
  Status lower_symm_at(OpId o);
  Status lower_wait(OpId o);
  Status lower_notify(OpId o, ValueId ptr, ValueId value, bool add);
  Status lower_put(OpId o);
  Status lower_get(OpId o);
  // A field of the launch's TeamHead (lower.h), loaded.
  llvm::Value* team_field(int offset, llvm::Type* t);
  // The pid array the runtime callbacks take.
  llvm::Value* pid_array();
  // When `bad` holds at run time: reports a distributed op's error (lower.h, kDistErrorFn) and
  // returns 1 from the function; the builder continues where `bad` is false.
  void dist_error_if(OpId o, llvm::Value* bad, int what, llvm::Value* value);
  // The byte distance (i64) from this rank's copy of a symmetric buffer to `rank`'s (i32),
  // after checking that the rank is in the team.
  llvm::Value* symm_delta(OpId o, llvm::Value* rank);
  // Checks that the byte range [lo, hi) (i64) is in this rank's heap; `first_bad` is reported.
  void check_in_heap(OpId o, llvm::Value* lo, llvm::Value* hi, llvm::Value* first_bad);
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
  // ---- scalar semantics (codegen/elem_emitter.h; the CPU's hooks are CpuElemEmitter)
  llvm::Value* scalar_op(OpId o, EType result, const std::vector<EType>& ets, const std::vector<llvm::Value*>& v) {
    return em_.scalar_op(f_, o, result, ets, v);
  }
  llvm::Value* to_arith(llvm::Value* v, EType e) { return em_.to_arith(v, e); }
  llvm::Value* from_arith(llvm::Value* v, EType e) { return em_.from_arith(v, e); }
  llvm::Value* float_arith(EType e, const std::vector<llvm::Value*>& v,
                           const std::function<llvm::Value*(const std::vector<llvm::Value*>&)>& f) {
    return em_.float_arith(e, v, f);
  }
  llvm::Value* builtin_combine(const std::string& kind, EType e, llvm::Value* a, llvm::Value* b) {
    return em_.builtin_combine(kind, e, a, b);
  }
  llvm::Value* atomic_lane(OpId o, llvm::Value* p, llvm::Value* val, EType e) { return em_.atomic_lane(f_, o, p, val, e); }
  int64_t enum_attr(OpId o, const char* name) const { return codegen::enum_attr(f_, o, name); }
  std::string enum_name(OpId o, const char* name) const { return codegen::enum_name(f_, o, name); }
  Status error(OpId o, Code code, const std::string& what) const;
  bool is_uniform_ir(ValueId v, int depth = 0) const;

  ModuleLowering& ml_;
  const ir::Module& m_;
  const ir::Function& f_;
  llvm::Function* lf_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  CpuElemEmitter em_;
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
  llvm::FunctionCallee wait_fn();
  llvm::FunctionCallee dist_error_fn();

  const ir::Module& m;
  llvm::LLVMContext& c;
  llvm::Module* mod;
  RuntimeSites* sites;
  uint64_t stack_bytes = 0;
  std::map<const ir::Function*, llvm::Function*> funcs;
  std::vector<const ir::Function*> pending;
};

}  // namespace tri::codegen::cpu::detail
