// The reference interpreter's insides, shared by the files that implement it (interpreter.h is
// its interface): a value as lanes of bits with provenance and undefinedness, and the Interp class
// whose members are spread over interpreter.cpp (launch, dispatch, control flow, calls),
// compute.cpp (constants, shape ops, elementwise ops, reductions, scans, dot), memory.cpp (loads,
// stores, atomics and their checks), distributed.cpp (ranks, the symmetric heap, signals) and
// print.cpp (print, assert, assume and the checked facts of multiple_of and max_contiguous).
// The rules all of them follow are interpreter.cpp's opening comment.
#pragma once

#include "interp/interpreter.h"

#include <atomic>
#include <cassert>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/team.h"
#include "interp/numeric.h"
#include "ir/limits.h"

namespace tri::interp::detail {

using ir::Attr;
using ir::BlockData;
using ir::BlockId;
using ir::Function;
using ir::kNoValue;
using ir::Module;
using ir::OpData;
using ir::OpId;
using ir::Opcode;
using ir::Scalar;
using ir::TypeId;
using ir::TypeKind;
using ir::ValueId;

inline constexpr int32_t kDefined = -1;  // Val::undef entry of a defined lane
inline constexpr int32_t kNoProv = -1;   // Val::prov entry of a pointer of unknown origin
inline constexpr int kMaxCallDepth = ir::kMaxCallDepth;
// Accesses below this address are NULL dereferences, reported in every mode (interpreter.h).
inline constexpr uint64_t kNullPageBytes = 4096;

// A whole value: one lane for a scalar, row-major lanes for a block.
struct Val {
  TypeId type = ir::kNoType;
  std::vector<uint64_t> bits;
  std::vector<int32_t> prov;   // pointer elements only: kernel argument index, or kNoProv
  std::vector<int32_t> undef;  // checked mode only: kDefined or an index into Interp::origins_
  int64_t size() const { return static_cast<int64_t>(bits.size()); }
};

// A lane of a value; a scalar (or one-lane) value reads the same at every lane index.
inline uint64_t lane(const Val& v, int64_t i) { return v.bits[v.bits.size() == 1 ? 0 : i]; }
inline int32_t prov_at(const Val& v, int64_t i) {
  if (v.prov.empty()) return kNoProv;
  return v.prov[v.prov.size() == 1 ? 0 : i];
}
inline int32_t undef_at(const Val& v, int64_t i) {
  if (v.undef.empty()) return kDefined;
  return v.undef[v.undef.size() == 1 ? 0 : i];
}

inline int mem_bytes(Scalar s) {
  int bits = ir::scalar_bits(s);
  return bits < 8 ? 1 : bits / 8;
}

inline uint64_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint64_t b) {
  uint32_t u = static_cast<uint32_t>(b);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint64_t f64_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
inline double bits_f64(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

// A float lane as f32 (exact for every float type but f64).
inline float lane_f32(uint64_t bits, Scalar s) {
  return s == Scalar::F32 ? bits_f32(bits) : static_cast<float>(decode_float(bits, s));
}
inline uint64_t f32_to_lane(float x, Scalar s) { return s == Scalar::F32 ? f32_bits(x) : encode_float(x, s); }

// A float op (an elementwise one, or an atomic's combine) on lanes of type s; compute.cpp.
// `mf` is math_call's function, null for other ops.
struct MathFn;
uint64_t eval_float(Opcode code, Scalar s, const uint64_t* in, int nin, bool nan_propagate, const MathFn* mf);

// "0x1f": an address or a pointer lane, for messages.
inline std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

class Interp {
 public:
  Interp(const Module& m, const Function& kernel, const ArgValue* args, size_t nargs, const Options& options,
         std::atomic<bool>* stop = nullptr)
      : m_(m), types_(m.types), kernel_(kernel), args_(args), nargs_(nargs), opt_(options),
        checked_(options.checked), stop_(stop) {}

  // Checks the launch and runs the program instances with linear ids [first, last) (x fastest)
  // of `grid`, in order.
  Status run(const Grid& grid, uint64_t first, uint64_t last);

 private:
  struct Frame {
    const Function* f;
    std::vector<Val> vals;  // indexed by ValueId
    int depth;
  };

  // ---- types
  std::vector<int64_t> shape_of(TypeId t) const {
    std::vector<int64_t> s;
    if (types_.is_block(t))
      for (const ir::Dim& d : types_.get(t).dims) s.push_back(d.value);
    return s;
  }
  bool elem_is_ptr(TypeId t) const { return types_.is_ptr(types_.elem_of(t)); }
  // The scalar of an element (a pointer's element is not a scalar: callers check first).
  Scalar elem_scalar(TypeId t) const { return types_.get(types_.elem_of(t)).scalar; }
  int elem_width(TypeId t) const { return elem_is_ptr(t) ? 64 : ir::scalar_bits(elem_scalar(t)); }
  Scalar pointee_scalar(TypeId ptr_or_block) const {
    return types_.get(types_.get(types_.elem_of(ptr_or_block)).pointee).scalar;
  }

  Val new_val(TypeId t) const {
    Val v;
    v.type = t;
    int64_t n = types_.num_elements(t);
    v.bits.assign(n, 0);
    if (elem_is_ptr(t)) v.prov.assign(n, kNoProv);
    if (checked_) v.undef.assign(n, kDefined);
    return v;
  }
  Val scalar_val(TypeId t, uint64_t bits) const {
    Val v = new_val(t);
    v.bits[0] = bits;
    return v;
  }
  // Copies lane `from` of `src` (value, provenance, undefinedness) into lane `to` of `dst`.
  static void copy_lane(Val& dst, int64_t to, const Val& src, int64_t from) {
    dst.bits[to] = lane(src, from);
    if (!dst.prov.empty()) dst.prov[to] = prov_at(src, from);
    if (!dst.undef.empty()) dst.undef[to] = undef_at(src, from);
  }
  static void merge_undef(Val& dst, int64_t i, const Val& src, int64_t from) {
    if (!dst.undef.empty() && dst.undef[i] == kDefined) dst.undef[i] = undef_at(src, from);
  }

  // ---- attributes (absent ones take the op table's default)
  static int64_t int_attr(const Function& f, OpId o, const char* name) { return f.attr(o, name).i; }
  static std::string enum_attr(const Function& f, OpId o, const char* name) {
    const ir::OpInfo& info = ir::op_info(f.op(o).code);
    const ir::AttrSpec& spec = info.attrs[info.attr_index(name)];
    const Attr& a = f.attr(o, name);
    if (a.present()) return spec.enum_values[a.i];
    return spec.has_default ? spec.default_text : std::string();
  }
  static bool bool_attr(const Function& f, OpId o, const char* name) {
    const ir::OpInfo& info = ir::op_info(f.op(o).code);
    const Attr& a = f.attr(o, name);
    if (a.present()) return a.i != 0;
    return info.attrs[info.attr_index(name)].default_text == "true";
  }
  static std::string str_attr(const Function& f, OpId o, const char* name) {
    const Attr& a = f.attr(o, name);
    return a.present() ? a.s : std::string();
  }
  const Val* optional(Frame& fr, OpId o, const char* slot) const {
    ValueId v = fr.f->operand(o, slot);
    return v == kNoValue ? nullptr : &fr.vals[v];
  }

  // ---- diagnostics
  std::string program() const {
    return "program (" + std::to_string(pid_[0]) + ", " + std::to_string(pid_[1]) + ", " +
           std::to_string(pid_[2]) + ")" + rank_str();
  }
  static std::string op_name(const Function& f, OpId o) { return "'" + ir::op_info(f.op(o).code).name + "'"; }
  std::string loc_str(const Function& f, OpId o) const {
    Loc loc = f.op(o).loc;
    std::string src = m_.source_name.empty() ? "<input>" : m_.source_name;
    if (!loc.known()) return "in @" + f.name;
    return "at " + src + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
  }
  // " lane [i, j] of <4 x 8 x f32>" for a block, "" for a scalar.
  std::string lane_str(TypeId t, int64_t i) const {
    if (!types_.is_block(t)) return "";
    std::vector<int64_t> shape = shape_of(t);
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = i % shape[d];
      i /= shape[d];
    }
    std::string s = " lane [";
    for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
    return s + "] of " + m_.type_str(t);
  }
  Status cancelled() const {
    return Status(Code::Cancelled, "the launch of kernel @" + kernel_.name + " was cancelled (tri_context_cancel) in " +
                                       program());
  }
  Status runtime_error(const Frame& fr, OpId o, const std::string& what) const {
    return error_at(Code::Runtime, m_.source_name, fr.f->op(o).loc, what + "; " + program());
  }
  // Reports lane i of `v` (operand `slot` of op o) when it is undefined.
  Status check_defined(const Frame& fr, OpId o, const char* slot, const Val& v, int64_t i) const {
    int32_t u = undef_at(v, i);
    if (u == kDefined) return Status::ok();
    const Function& of = *origins_[u].first;
    OpId oo = origins_[u].second;
    std::string what = op_name(*fr.f, o) + " operand '" + slot + "'" + lane_str(v.type, i) +
                       " is undefined: it comes from a masked-off lane of the " + op_name(of, oo) + " " +
                       loc_str(of, oo);
    if (of.op(oo).code == Opcode::Load || of.op(oo).code == Opcode::Get) what += ", which has no 'other'";
    return runtime_error(fr, o, what);
  }
  int32_t origin_of(const Frame& fr, OpId o) {
    auto key = std::make_pair(fr.f, o);
    auto it = origin_ids_.find(key);
    if (it != origin_ids_.end()) return it->second;
    int32_t id = static_cast<int32_t>(origins_.size());
    origins_.push_back(key);
    origin_ids_.emplace(key, id);
    return id;
  }

  // ---- memory
  Status check_access(const Frame& fr, OpId o, const char* verb, const Val& p, int64_t i, int bytes) const;
  static uint64_t read_mem(uint64_t addr, Scalar s) {
    uint64_t v = 0;
    std::memcpy(&v, reinterpret_cast<const void*>(addr), mem_bytes(s));
    if (s == Scalar::I1) v = v != 0;
    return v;
  }
  static void write_mem(uint64_t addr, Scalar s, uint64_t bits) {
    if (s == Scalar::I1) bits &= 1;
    std::memcpy(reinterpret_cast<void*>(addr), &bits, mem_bytes(s));
  }
  // Atomic (sequentially consistent) access to the `bytes` (1, 2, 4 or 8) at addr.
  static uint64_t atomic_load_raw(uint64_t addr, int bytes) {
    switch (bytes) {
      case 1: return __atomic_load_n(reinterpret_cast<uint8_t*>(addr), __ATOMIC_SEQ_CST);
      case 2: return __atomic_load_n(reinterpret_cast<uint16_t*>(addr), __ATOMIC_SEQ_CST);
      case 4: return __atomic_load_n(reinterpret_cast<uint32_t*>(addr), __ATOMIC_SEQ_CST);
      default: return __atomic_load_n(reinterpret_cast<uint64_t*>(addr), __ATOMIC_SEQ_CST);
    }
  }
  // Stores `desired` when the memory holds *expected; otherwise reads it into *expected.
  static bool atomic_cas_raw(uint64_t addr, int bytes, uint64_t* expected, uint64_t desired) {
    auto cas = [&](auto* p) {
      using T = std::remove_pointer_t<decltype(p)>;
      T e = static_cast<T>(*expected);
      bool ok = __atomic_compare_exchange_n(p, &e, static_cast<T>(desired), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      *expected = e;
      return ok;
    };
    switch (bytes) {
      case 1: return cas(reinterpret_cast<uint8_t*>(addr));
      case 2: return cas(reinterpret_cast<uint16_t*>(addr));
      case 4: return cas(reinterpret_cast<uint32_t*>(addr));
      default: return cas(reinterpret_cast<uint64_t*>(addr));
    }
  }
  // Lane i of an op with an optional mask: is it active? Reports an undefined mask lane.
  Status active_lane(const Frame& fr, OpId o, const Val* mask, int64_t i, bool* active) const {
    *active = true;
    if (!mask) return Status::ok();
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "mask", *mask, i));
    *active = lane(*mask, i) & 1;
    return Status::ok();
  }

  // ---- execution
  Status validate(const Function& f, std::set<const Function*>* seen) const;
  Status validate_block(const Function& f, BlockId b, std::set<const Function*>* seen) const;
  Status check_facts(const std::vector<Val>& argvals) const;
  Status exec_block(Frame& fr, BlockId b, std::vector<Val> args, std::vector<Val>* out);
  Status exec_op(Frame& fr, OpId o);
  Status exec_const(Frame& fr, OpId o);
  Status exec_shape(Frame& fr, OpId o);
  Status exec_addptr(Frame& fr, OpId o);
  Status exec_load(Frame& fr, OpId o);
  Status exec_store(Frame& fr, OpId o);
  Status exec_atomic(Frame& fr, OpId o);
  // ---- distributed ops (docs/distributed.md)
  Status exec_symm_at(Frame& fr, OpId o);
  Status exec_wait(Frame& fr, OpId o);
  Status exec_notify(Frame& fr, OpId o);
  Status exec_put(Frame& fr, OpId o);
  Status exec_get(Frame& fr, OpId o);
  // The byte distance from this rank's copy of a symmetric buffer to rank `rank`'s (reports a
  // rank outside the team).
  Status symm_delta(const Frame& fr, OpId o, const Val& rank, uint64_t* delta) const;
  // Reports lane i of pointer p when it is not in this rank's symmetric heap (in a team).
  Status check_symm(const Frame& fr, OpId o, const Val& p, int64_t i) const;
  // Sets or adds `value` at the signal `addr` (4 or 8 bytes) with release ordering.
  static void signal_write(uint64_t addr, int bytes, bool add, uint64_t value);
  std::string rank_str() const {
    if (!opt_.team) return "";
    return " of rank " + std::to_string(opt_.team->rank) + " (of " + std::to_string(opt_.team->num_ranks) + ")";
  }
  Status exec_elementwise(Frame& fr, OpId o);
  Status exec_reduce_scan(Frame& fr, OpId o);
  Status exec_dot(Frame& fr, OpId o);
  Status exec_for(Frame& fr, OpId o);
  Status exec_if(Frame& fr, OpId o);
  Status exec_while(Frame& fr, OpId o);
  Status exec_call(Frame& fr, OpId o);
  Status exec_print(Frame& fr, OpId o);
  Status exec_assert(Frame& fr, OpId o);
  Status exec_assume(Frame& fr, OpId o);
  Status check_hint(const Frame& fr, OpId o) const;
  uint64_t combine_builtin(const std::string& kind, TypeId elem, uint64_t a, uint64_t b) const;
  std::string format_lane(const Val& v, int64_t i) const;

  const Module& m_;
  const ir::TypeTable& types_;
  const Function& kernel_;
  const ArgValue* args_;
  size_t nargs_;
  const Options& opt_;
  bool checked_;
  std::atomic<bool>* stop_;  // co-resident launches: set when an instance fails
  uint32_t pid_[3] = {0, 0, 0};
  uint32_t grid_[3] = {1, 1, 1};
  // Ops whose masked-off lanes made undefined values, for checked-mode messages.
  std::vector<std::pair<const Function*, OpId>> origins_;
  std::map<std::pair<const Function*, OpId>, int32_t> origin_ids_;
};

}  // namespace tri::interp::detail
