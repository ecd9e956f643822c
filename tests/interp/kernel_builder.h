// A thin layer over ir::Builder for the interpreter's tests: build a kernel in a few readable
// lines (types inferred where the op table makes them obvious), give ops known locations so that
// diagnostics can be compared exactly, and launch it on host buffers.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "interp/interpreter.h"
#include "ir/ir.h"
#include "ir/verifier.h"

namespace tri_test {

using tri::ArgValue;
using tri::Code;
using tri::Grid;
using tri::Loc;
using tri::Status;
using tri::ir::Attr;
using tri::ir::BlockId;
using tri::ir::Dim;
using tri::ir::Function;
using tri::ir::Module;
using tri::ir::OpId;
using tri::ir::Opcode;
using tri::ir::Scalar;
using tri::ir::TypeId;
using tri::ir::ValueId;
using tri::ir::kNoValue;

// The enum attribute `name` of op `code` with the value spelled `value`.
inline Attr enum_attr(Opcode code, const std::string& name, const std::string& value) {
  const tri::ir::OpInfo& info = tri::ir::op_info(code);
  const tri::ir::AttrSpec& spec = info.attrs[info.attr_index(name)];
  for (size_t i = 0; i < spec.enum_values.size(); ++i)
    if (spec.enum_values[i] == value) return Attr::of_enum(static_cast<int64_t>(i));
  std::abort();
}

// Attributes by name, placed in the op's spec order.
inline std::vector<Attr> attrs_of(Opcode code, const std::vector<std::pair<std::string, Attr>>& named) {
  const tri::ir::OpInfo& info = tri::ir::op_info(code);
  std::vector<Attr> out(info.attrs.size());
  for (const auto& [name, a] : named) {
    int i = info.attr_index(name);
    if (i < 0) std::abort();
    out[i] = a;
  }
  return out;
}

class KB {
 public:
  explicit KB(const std::string& kernel_name = "k") : m(std::make_unique<Module>()) {
    m->source_name = "t.tri";
    kernel = func(kernel_name, true);
  }

  std::unique_ptr<Module> m;
  Function* kernel = nullptr;
  Function* f = nullptr;  // the function being built
  Loc next_loc{0, 0};     // when set, the next op gets this location; otherwise line = op count + 1

  // ---- functions and regions
  Function* func(const std::string& name, bool is_kernel, std::vector<TypeId> results = {}) {
    m->functions.push_back(std::make_unique<Function>());
    Function* fn = m->functions.back().get();
    fn->name = name;
    fn->is_kernel = is_kernel;
    fn->results = std::move(results);
    tri::ir::Builder b(m.get(), fn);
    fn->body = b.create_block({});
    use(fn);
    return fn;
  }
  void use(Function* fn) {
    f = fn;
    blocks_.assign(1, fn->body);
  }
  ValueId param(const std::string& name, TypeId type, uint32_t align = 0, uint32_t divisible = 0) {
    tri::ir::Builder b(m.get(), f);
    auto& args = f->blocks[f->body].args;
    ValueId v = b.new_value(type, tri::ir::kNoOp, f->body, static_cast<uint32_t>(args.size()));
    f->values[v].name = name;
    args.push_back(v);
    tri::ir::Param p;
    p.name = name;
    p.type = type;
    p.align = align;
    p.divisible = divisible;
    p.value = v;
    p.loc = Loc{1, static_cast<uint32_t>(10 * f->params.size() + 10)};
    f->params.push_back(p);
    return v;
  }
  // Adds a region to op `o`, with arguments of these types, and makes it the insertion block.
  std::vector<ValueId> region(OpId o, const std::vector<TypeId>& arg_types) {
    tri::ir::Builder b(m.get(), f);
    BlockId blk = b.add_region(o, arg_types);
    blocks_.push_back(blk);
    return f->blocks[blk].args;
  }
  void end_region() { blocks_.pop_back(); }

  // ---- types
  TypeId t(Scalar s) { return m->types.scalar(s); }
  TypeId ptr(Scalar s) { return m->types.ptr(t(s)); }
  TypeId blk(const std::vector<int64_t>& dims, TypeId elem) {
    std::vector<Dim> ds;
    for (int64_t d : dims) ds.push_back(Dim::lit(d));
    return m->types.block(ds, elem);
  }
  TypeId blk(const std::vector<int64_t>& dims, Scalar s) { return blk(dims, t(s)); }
  TypeId type(ValueId v) const { return f->type_of(v); }
  TypeId with_elem(ValueId v, TypeId elem) { return m->types.with_elem(type(v), elem); }
  TypeId pointee(TypeId ptr_or_block) {
    return m->types.get(m->types.elem_of(ptr_or_block)).pointee;
  }

  // ---- ops
  OpId make(Opcode code, const std::vector<ValueId>& operands, const std::vector<TypeId>& results,
            std::vector<Attr> attrs = {}) {
    tri::ir::Builder b(m.get(), f);
    b.set_insertion_block(blocks_.back());
    Loc loc = next_loc.known() ? next_loc : Loc{static_cast<uint32_t>(f->ops.size() + 1), 3};
    next_loc = Loc{0, 0};
    return b.create(code, operands, results, std::move(attrs), loc);
  }
  ValueId op(Opcode code, const std::vector<ValueId>& operands, TypeId result, std::vector<Attr> attrs = {}) {
    return f->ops[make(code, operands, {result}, std::move(attrs))].results[0];
  }
  Loc loc_of(ValueId v) const { return f->ops[f->values[v].def_op].loc; }

  ValueId c(TypeId type, int64_t v) { return op(Opcode::Const, {}, type, {Attr::of_int(v)}); }
  ValueId cf(TypeId type, double v) { return op(Opcode::Const, {}, type, {Attr::of_float(v)}); }
  ValueId i32(int64_t v) { return c(t(Scalar::I32), v); }
  ValueId pid(int axis = 0) { return op(Opcode::ProgramId, {}, t(Scalar::I32), {Attr::of_int(axis)}); }
  ValueId nprog(int axis = 0) { return op(Opcode::NumPrograms, {}, t(Scalar::I32), {Attr::of_int(axis)}); }
  ValueId arange(int64_t start, int64_t end) {
    return op(Opcode::Arange, {}, blk({end - start}, Scalar::I32), {Attr::of_int(start), Attr::of_int(end)});
  }
  ValueId splat(ValueId v, const std::vector<int64_t>& dims) { return op(Opcode::Splat, {v}, blk(dims, type(v))); }
  ValueId bin(Opcode code, ValueId a, ValueId b, std::vector<Attr> attrs = {}) {
    return op(code, {a, b}, type(a), std::move(attrs));
  }
  ValueId un(Opcode code, ValueId a) { return op(code, {a}, type(a)); }
  ValueId cmp(const std::string& pred, ValueId a, ValueId b) {
    return op(Opcode::Cmp, {a, b}, with_elem(a, t(Scalar::I1)), {enum_attr(Opcode::Cmp, "pred", pred)});
  }
  ValueId fcmp(const std::string& pred, ValueId a, ValueId b) {
    return op(Opcode::FCmp, {a, b}, with_elem(a, t(Scalar::I1)), {enum_attr(Opcode::FCmp, "pred", pred)});
  }
  ValueId select(ValueId c, ValueId a, ValueId b) { return op(Opcode::Select, {c, a, b}, type(a)); }
  ValueId cast(Opcode code, ValueId a, Scalar to) { return op(code, {a}, with_elem(a, t(to))); }
  ValueId addptr(ValueId p, ValueId off) {
    TypeId rt = m->types.is_block(type(p)) ? type(p) : with_elem(off, type(p));
    return op(Opcode::AddPtr, {p, off}, rt);
  }
  ValueId load(ValueId p, ValueId mask = kNoValue, ValueId other = kNoValue) {
    return op(Opcode::Load, {p, mask, other}, with_elem(p, pointee(type(p))));
  }
  void store(ValueId p, ValueId v, ValueId mask = kNoValue) { make(Opcode::Store, {p, v, mask}, {}); }
  ValueId atomic(const std::string& kind, ValueId p, ValueId v, ValueId mask = kNoValue) {
    return op(Opcode::Atomic, {p, v, mask}, type(v), {enum_attr(Opcode::Atomic, "kind", kind)});
  }
  ValueId cas(ValueId p, ValueId cmpv, ValueId v, ValueId mask = kNoValue) {
    return op(Opcode::AtomicCas, {p, cmpv, v, mask}, type(v));
  }
  void yield(const std::vector<ValueId>& vals) { make(Opcode::Yield, vals, {}); }
  void ret(const std::vector<ValueId>& vals = {}) { make(Opcode::Return, vals, {}); }

  // `p` (a pointer scalar) + the lane offsets pid*block + arange(block): a block of pointers.
  ValueId lanes_of(ValueId p, ValueId offs) { return addptr(splat(p, {num(offs)}), offs); }
  int64_t num(ValueId v) const { return m->types.num_elements(type(v)); }

  // Runs the kernel, after checking that the module verifies (tests of IR the verifier rejects
  // clear `verify_first`): the interpreter's contract is verified IR.
  bool verify_first = true;
  Status run(Grid grid, const std::vector<ArgValue>& args, bool checked = false, std::string* printed = nullptr) {
    if (verify_first) {
      Status v = tri::ir::verify(*m);
      if (!v.is_ok()) return Status(Code::Internal, "test kernel does not verify: " + v.message());
    }
    tri::interp::Options o;
    o.checked = checked;
    if (printed) {
      printed->clear();
      o.print = [printed](const std::string& s) {
        *printed += s;
        *printed += '\n';
      };
    }
    return tri::interp::run(*m, *kernel, grid, args.data(), args.size(), o);
  }

 private:
  std::vector<BlockId> blocks_;  // insertion block stack: the body, then nested regions
};

inline ArgValue arg_ptr(const void* p, uint64_t extent_bytes = 0) {
  return ArgValue{reinterpret_cast<uint64_t>(p), extent_bytes};
}
inline ArgValue arg_int(int64_t v) { return ArgValue{static_cast<uint64_t>(v), 0}; }
inline ArgValue arg_f32(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return ArgValue{u, 0};
}
inline ArgValue arg_f64(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return ArgValue{u, 0};
}

inline std::string hexaddr(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint64_t f64_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
inline double bits_f64(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}
inline uint16_t f16_bits(_Float16 h) {
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
inline _Float16 bits_f16(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return h;
}

// Bytes per element in memory, as docs/ir.md says (i1 and f8 take one byte).
inline int elem_bytes(Scalar s) {
  int bits = tri::ir::scalar_bits(s);
  return bits < 8 ? 1 : bits / 8;
}

// Packs 64-bit lane patterns into a buffer of elements of type s, and back.
inline std::vector<uint8_t> pack(const std::vector<uint64_t>& v, Scalar s) {
  int n = elem_bytes(s);
  std::vector<uint8_t> out(v.size() * n + 8);
  for (size_t i = 0; i < v.size(); ++i) std::memcpy(&out[i * n], &v[i], n);
  return out;
}
inline std::vector<uint64_t> unpack(const std::vector<uint8_t>& buf, size_t count, Scalar s) {
  int n = elem_bytes(s);
  std::vector<uint64_t> out(count, 0);
  for (size_t i = 0; i < count; ++i) std::memcpy(&out[i], &buf[i * n], n);
  return out;
}

// Runs `out[i] = code(in0[i], in1[i], ...)` for every i, through a kernel that loads each input
// with a mask (the count need not be a power of two) and stores the result with the same mask:
//   kernel @ew(%x0: ptr<A>, ..., %out: ptr<R>, %n: i32) over BLOCK-lane program instances.
// The op under test sits at t.tri:20:7. On failure it returns nothing and sets *status.
inline std::vector<uint64_t> run_elementwise(Opcode code, const std::vector<Scalar>& in_types, Scalar out_type,
                                             const std::vector<std::vector<uint64_t>>& inputs,
                                             std::vector<Attr> attrs = {}, Status* status = nullptr,
                                             bool checked = true, int64_t block = 64) {
  KB kb("ew");
  std::vector<ValueId> ptrs;
  for (size_t k = 0; k < in_types.size(); ++k) ptrs.push_back(kb.param("x" + std::to_string(k), kb.ptr(in_types[k])));
  ValueId out = kb.param("out", kb.ptr(out_type));
  ValueId n = kb.param("n", kb.t(Scalar::I32));
  ValueId start = kb.bin(Opcode::Mul, kb.pid(), kb.i32(block));
  ValueId offs = kb.bin(Opcode::Add, kb.splat(start, {block}), kb.arange(0, block));
  ValueId mask = kb.cmp("slt", offs, kb.splat(n, {block}));
  std::vector<ValueId> vals;
  for (size_t k = 0; k < in_types.size(); ++k) {
    // Masked-off lanes read 1 (not 0), so that the idle tail never divides by zero.
    ValueId one = kb.c(kb.blk({block}, in_types[k]), 1);
    vals.push_back(kb.load(kb.lanes_of(ptrs[k], offs), mask, one));
  }
  kb.next_loc = Loc{20, 7};  // diagnostics of the op under test point here
  ValueId r = kb.op(code, vals, kb.blk({block}, out_type), std::move(attrs));
  kb.store(kb.lanes_of(out, offs), r, mask);
  kb.ret();

  const size_t count = inputs.empty() ? 0 : inputs[0].size();
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<ArgValue> args;
  for (size_t k = 0; k < in_types.size(); ++k) {
    bufs.push_back(pack(inputs[k], in_types[k]));
    args.push_back(arg_ptr(bufs.back().data(), count * elem_bytes(in_types[k])));
  }
  std::vector<uint8_t> outbuf(count * elem_bytes(out_type) + 8, 0xcd);
  args.push_back(arg_ptr(outbuf.data(), count * elem_bytes(out_type)));
  args.push_back(arg_int(static_cast<int64_t>(count)));
  Grid g;
  g.x = static_cast<uint32_t>((count + block - 1) / block);
  Status st = kb.run(g, args, checked);
  if (status) *status = st;
  if (!st.is_ok()) return {};
  return unpack(outbuf, count, out_type);
}

}  // namespace tri_test
