// Per-element semantics as LLVM IR, shared by the backends (elem_emitter.cpp says why).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tri::codegen {

// The element type of a value: a scalar, or a pointer (with its pointee's scalar).
struct EType {
  bool ptr = false;
  ir::Scalar s = ir::Scalar::I32;
};

inline int elem_bytes(EType e) {
  if (e.ptr) return 8;
  switch (e.s) {
    case ir::Scalar::I1: case ir::Scalar::I8: case ir::Scalar::F8E4M3: case ir::Scalar::F8E5M2: return 1;
    case ir::Scalar::I16: case ir::Scalar::F16: case ir::Scalar::BF16: return 2;
    case ir::Scalar::I32: case ir::Scalar::F32: return 4;
    case ir::Scalar::I64: case ir::Scalar::F64: return 8;
  }
  return 8;
}

// An enum attribute of op `o` as the index of its value (the spec's default when absent), and
// as its name.
int64_t enum_attr(const ir::Function& f, ir::OpId o, const char* name);
// A bool attribute's value; false when the op has no attribute of that name (a lowering shared
// by ops of different attributes: `get` is lowered as a `load`).
bool bool_attr(const ir::Function& f, ir::OpId o, const char* name);
std::string enum_name(const ir::Function& f, ir::OpId o, const char* name);

class ElemEmitter {
 public:
  explicit ElemEmitter(llvm::IRBuilder<>& b) : b_(b) {}
  virtual ~ElemEmitter() = default;

  // ---- the target's hooks
  // Small-float bits (f16, bf16, f8) to f32, and f32/f64 to small-float bits.
  virtual llvm::Value* decode(llvm::Value* bits, ir::Scalar s) = 0;
  virtual llvm::Value* encode(llvm::Value* x, ir::Scalar s, bool rtz) = 0;
  // A math function on f32 or f64 arguments: exp exp2 log log2 sin cos tanh erf pow fmod and
  // the names of ir/math_fns.def, and "exp2.flush" (f32 exp2 with results below 2^-126 made +0).
  // nullptr when the target cannot compute it.
  virtual llvm::Value* math_fn(const std::string& name, const std::vector<llvm::Value*>& args) = 0;
  // add, sub or mul (`code`) of two f16 or bf16 values (their bits) in the type itself, or
  // nullptr where the target has no such instruction. The result must equal the f32 computation
  // rounded to the type, which holds for these ops: f32 has more than twice their precision plus
  // two bits, so rounding twice gives the correctly rounded result.
  virtual llvm::Value* half_arith(ir::Opcode code, ir::Scalar s, llvm::Value* a, llvm::Value* b) { return nullptr; }
  // Whether LLVM's f32 `atomicrmw fadd` on this target already flushes subnormal operands and
  // results to zero of the same sign (the semantics of `atomic[kind=add]` on f32, docs/ir.md):
  // then atomic_lane emits it as is instead of a compare-and-swap loop that flushes.
  virtual bool atomic_fadd_f32_flushes() const { return false; }

  // ---- elements (scalar_ops.h says how each type is held in registers)
  llvm::Type* reg_ty(EType e) const;
  // The register value of a `const` op's value attribute for element type e (not a pointer).
  llvm::Value* constant(const ir::Attr& a, EType e);
  llvm::Value* to_arith(llvm::Value* v, EType e);
  llvm::Value* from_arith(llvm::Value* v, EType e);
  // f applied to the arithmetic form of v (f32 for small floats), rounded back to e.
  llvm::Value* float_arith(EType e, const std::vector<llvm::Value*>& v,
                           const std::function<llvm::Value*(const std::vector<llvm::Value*>&)>& f);
  // One element of elementwise op `o` of `f` (arithmetic, math, compares, select, addptr,
  // casts); `ets` are the operands' element types. nullptr for an op that is not elementwise
  // or does not apply to these types (the verifier makes that a bug).
  llvm::Value* scalar_op(const ir::Function& f, ir::OpId o, EType ret, const std::vector<EType>& ets,
                         const std::vector<llvm::Value*>& v);
  llvm::Value* cast(ir::Opcode code, llvm::Value* v, EType from, EType to, bool rtz);
  llvm::Value* float_cast(llvm::Value* v, ir::Scalar from, ir::Scalar to, bool rtz);
  llvm::Value* math(const std::string& name, EType e, const std::vector<llvm::Value*>& v);
  // The builtin combiner `kind` of reduce/scan (sum prod max min umax umin and or xor); nullptr
  // when it does not apply to the type.
  llvm::Value* builtin_combine(const std::string& kind, EType e, llvm::Value* a, llvm::Value* b);
  // One lane of atomic op `o` (not atomic_cas) at address p; returns the old value.
  llvm::Value* atomic_lane(const ir::Function& f, ir::OpId o, llvm::Value* p, llvm::Value* val, EType e);

 protected:
  llvm::IRBuilder<>& b_;
};

// The memory ordering of an atomic's `order` attribute index, and the failure ordering of a
// compare-and-swap with that success ordering.
llvm::AtomicOrdering atomic_ordering(int64_t order_index);
llvm::AtomicOrdering atomic_failure_ordering(llvm::AtomicOrdering o);

}  // namespace tri::codegen
