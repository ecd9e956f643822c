// Helpers for the CPU backend's tests: build kernels with ir::Builder in a few lines (until the
// text parser is available to every test), compile them, and launch them on a pool.
#pragma once

#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "ir/ir.h"
#include "ir/verifier.h"
#include "target/cpu/compile/jit.h"

namespace tri_test {

using tri::ir::Attr;
using tri::ir::Opcode;
using tri::ir::Scalar;
using tri::ir::TypeId;
using tri::ir::ValueId;
using tri::ir::OpId;
using tri::ir::BlockId;

// Attributes by name, put in the op table's order.
inline std::vector<Attr> attrs(Opcode code, std::initializer_list<std::pair<const char*, Attr>> named) {
  const tri::ir::OpInfo& info = tri::ir::op_info(code);
  std::vector<Attr> out(info.attrs.size());
  for (auto& [name, a] : named) {
    int i = info.attr_index(name);
    if (i < 0) std::abort();
    out[i] = a;
  }
  return out;
}

inline Attr enum_attr(Opcode code, const char* name, const char* value) {
  const tri::ir::OpInfo& info = tri::ir::op_info(code);
  const auto& vals = info.attrs[info.attr_index(name)].enum_values;
  for (size_t i = 0; i < vals.size(); ++i)
    if (vals[i] == value) return Attr::of_enum(static_cast<int64_t>(i));
  std::abort();
}

// One function under construction. Ops get increasing line numbers so diagnostics have places.
class Fn {
 public:
  Fn(tri::ir::Module* m, const std::string& name, bool kernel) : m_(m), b_(m, nullptr) {
    auto f = std::make_unique<tri::ir::Function>();
    f->name = name;
    f->is_kernel = kernel;
    f_ = f.get();
    m->functions.push_back(std::move(f));
    b_ = tri::ir::Builder(m, f_);
    f_->body = b_.create_block({});
    b_.set_insertion_block(f_->body);
  }
  tri::ir::Function* fn() { return f_; }
  tri::ir::Builder& builder() { return b_; }

  ValueId param(TypeId t, const std::string& name = "", uint32_t align = 0, bool noalias = false) {
    auto& body = f_->blocks[f_->body];
    ValueId v = b_.new_value(t, tri::ir::kNoOp, f_->body, static_cast<uint32_t>(body.args.size()));
    f_->values[v].name = name;
    body.args.push_back(v);
    tri::ir::Param p;
    p.name = name;
    p.type = t;
    p.value = v;
    p.align = align;
    p.noalias = noalias;
    f_->params.push_back(p);
    return v;
  }

  OpId op(Opcode code, std::vector<ValueId> operands, std::vector<TypeId> results, std::vector<Attr> a = {}) {
    tri::Loc loc{++line_, 3};
    return b_.create(code, operands, results, std::move(a), loc);
  }
  ValueId op1(Opcode code, std::vector<ValueId> operands, TypeId result, std::vector<Attr> a = {}) {
    return f_->ops[op(code, std::move(operands), {result}, std::move(a))].results[0];
  }
  ValueId res(OpId o, size_t i) const { return f_->ops[o].results[i]; }

  // Regions: ops go into the region's block until end_region() returns to the enclosing one.
  BlockId begin_region(OpId o, std::vector<TypeId> arg_types) {
    stack_.push_back(b_.insertion_block());
    BlockId r = b_.add_region(o, arg_types);
    b_.set_insertion_block(r);
    return r;
  }
  void end_region() {
    b_.set_insertion_block(stack_.back());
    stack_.pop_back();
  }
  ValueId arg(BlockId b, size_t i) const { return f_->blocks[b].args[i]; }

  // Common ops.
  ValueId cint(TypeId t, int64_t v) { return op1(Opcode::Const, {}, t, attrs(Opcode::Const, {{"value", Attr::of_int(v)}})); }
  ValueId cfloat(TypeId t, double v) {
    return op1(Opcode::Const, {}, t, attrs(Opcode::Const, {{"value", Attr::of_float(v)}}));
  }
  ValueId pid(int axis = 0) {
    return op1(Opcode::ProgramId, {}, m_->types.scalar(Scalar::I32), attrs(Opcode::ProgramId, {{"axis", Attr::of_int(axis)}}));
  }
  ValueId nprog(int axis = 0) {
    return op1(Opcode::NumPrograms, {}, m_->types.scalar(Scalar::I32),
               attrs(Opcode::NumPrograms, {{"axis", Attr::of_int(axis)}}));
  }
  ValueId arange(int64_t n, int64_t start = 0) {
    TypeId t = m_->types.block({tri::ir::Dim::lit(n)}, m_->types.scalar(Scalar::I32));
    return op1(Opcode::Arange, {}, t,
               attrs(Opcode::Arange, {{"start", Attr::of_int(start)}, {"end", Attr::of_int(start + n)}}));
  }
  ValueId splat(ValueId v, TypeId t) { return op1(Opcode::Splat, {v}, t); }
  ValueId bin(Opcode code, ValueId a, ValueId b) { return op1(code, {a, b}, f_->type_of(a)); }
  ValueId un(Opcode code, ValueId a) { return op1(code, {a}, f_->type_of(a)); }
  ValueId cmp(const char* pred, ValueId a, ValueId b) {
    TypeId t = m_->types.with_elem(f_->type_of(a), m_->types.scalar(Scalar::I1));
    return op1(Opcode::Cmp, {a, b}, t, {enum_attr(Opcode::Cmp, "pred", pred)});
  }
  ValueId fcmp(const char* pred, ValueId a, ValueId b) {
    TypeId t = m_->types.with_elem(f_->type_of(a), m_->types.scalar(Scalar::I1));
    return op1(Opcode::FCmp, {a, b}, t, {enum_attr(Opcode::FCmp, "pred", pred)});
  }
  ValueId addptr(ValueId p, ValueId off) { return op1(Opcode::AddPtr, {p, off}, f_->type_of(p)); }
  ValueId cast(Opcode code, ValueId v, Scalar to, std::vector<Attr> a = {}) {
    TypeId t = m_->types.with_elem(f_->type_of(v), m_->types.scalar(to));
    return op1(code, {v}, t, std::move(a));
  }
  // load ptr [mask] [other]; result element = pointee
  ValueId load(ValueId p, ValueId mask = tri::ir::kNoValue, ValueId other = tri::ir::kNoValue) {
    TypeId pt = f_->type_of(p);
    TypeId pe = m_->types.elem_of(pt);
    TypeId rt = m_->types.with_elem(pt, m_->types.get(pe).pointee);
    return op1(Opcode::Load, {p, mask, other}, rt);
  }
  void store(ValueId p, ValueId v, ValueId mask = tri::ir::kNoValue) { op(Opcode::Store, {p, v, mask}, {}); }
  void ret(std::vector<ValueId> vals = {}) { op(Opcode::Return, vals, {}); }
  void yield(std::vector<ValueId> vals = {}) { op(Opcode::Yield, vals, {}); }

  // `ptr + (pid * n + arange(n))` with lanes < limit active: returns {pointer block, mask}.
  std::pair<ValueId, ValueId> block_ptr(ValueId base, int64_t n, ValueId limit) {
    TypeId i32 = m_->types.scalar(Scalar::I32);
    TypeId bi = m_->types.block({tri::ir::Dim::lit(n)}, i32);
    ValueId start = bin(Opcode::Mul, pid(), cint(i32, n));
    ValueId offs = bin(Opcode::Add, splat(start, bi), arange(n));
    ValueId mask = cmp("slt", offs, splat(limit, bi));
    TypeId pb = m_->types.block({tri::ir::Dim::lit(n)}, f_->type_of(base));
    return {addptr(splat(base, pb), offs), mask};
  }

 private:
  tri::ir::Module* m_;
  tri::ir::Function* f_;
  tri::ir::Builder b_;
  uint32_t line_ = 0;
  std::vector<BlockId> stack_;
};

struct Mod {
  tri::ir::Module m;
  Mod() { m.source_name = "test.tri"; }
  TypeId s(Scalar x) { return m.types.scalar(x); }
  TypeId p(Scalar x) { return m.types.ptr(m.types.scalar(x)); }
  TypeId blk(std::vector<int64_t> dims, TypeId elem) {
    std::vector<tri::ir::Dim> d;
    for (int64_t x : dims) d.push_back(tri::ir::Dim::lit(x));
    return m.types.block(d, elem);
  }
  TypeId blk(std::vector<int64_t> dims, Scalar elem) { return blk(std::move(dims), s(elem)); }
};

inline tri::ArgValue ptr_arg(const void* p) { return tri::ArgValue{reinterpret_cast<uint64_t>(p), 0}; }
inline tri::ArgValue int_arg(int64_t v) { return tri::ArgValue{static_cast<uint64_t>(v), 0}; }
inline tri::ArgValue f32_arg(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return tri::ArgValue{u, 0};
}
inline tri::ArgValue f64_arg(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return tri::ArgValue{u, 0};
}

// Verifies the module (the backend takes verified IR only), then compiles one kernel of it.
inline std::unique_ptr<tri::cpu::CpuKernel> compile_or_die(const tri::ir::Module& m, const char* kernel,
                                                           bool keep_ir = false) {
  tri::Status vs = tri::ir::verify(m);
  if (!vs.is_ok()) {
    std::fprintf(stderr, "test IR does not verify: %s\n", vs.message().c_str());
    return nullptr;
  }
  tri::cpu::CpuCompileOptions opts;
  opts.keep_llvm_ir = keep_ir;
  std::unique_ptr<tri::cpu::CpuKernel> k;
  tri::Status st = tri::cpu::compile_cpu(m, *m.find(kernel), opts, &k);
  if (!st.is_ok()) {
    std::fprintf(stderr, "compile of '%s' failed: %s\n", kernel, st.message().c_str());
    return nullptr;
  }
  return k;
}

inline uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint64_t d2u(double f) { uint64_t u; std::memcpy(&u, &f, 8); return u; }
inline double u2d(uint64_t u) { double f; std::memcpy(&f, &u, 8); return f; }

}  // namespace tri_test
