// The reference interpreter (interpreter.h): walks verified, specialized IR op by op, one program
// instance after another, holding every value as a whole block of lanes.
//
// A value is a vector of 64-bit lane patterns (numeric.h says how each type sits in them), plus,
// for pointers, the kernel argument each lane derives from (its provenance, for bounds checks),
// plus, in checked mode, for each lane whether it is undefined and which op made it so. The rules
// this file implements are docs/ir.md's "Semantics"; the choices that text leaves open are:
//  - A masked-off lane of a `load` without `other` (or of an `atomic`/`atomic_cas`) holds 0 bits.
//    In checked mode it is *undefined*: undefinedness flows through elementwise ops, shape ops,
//    reductions, scans and dot (any undefined input lane makes the lanes computed from it
//    undefined; `select` takes it only from the condition and the chosen operand), through
//    loop-carried values and into device functions, and is reported where it is used: a store's
//    value, an address, a mask, a control-flow condition (`if`, `while`, `assert`, `assume`) or
//    a `for` bound. Passing it to a call is not a use: the callee's uses are.
//  - Provenance survives addptr, splat, broadcast, the shape ops, select, bitcast and calls;
//    inttoptr makes a pointer without one, which checked mode does not bounds-check (it still
//    checks alignment). A pointer argument with extent 0 is not bounds-checked either.
//  - Checked mode also checks the launch arguments against their `align`/`divisible` facts, and
//    the facts of multiple_of and max_contiguous (as docs/ir.md words them) on defined lanes.
//  - `for` counts in exact integers (iv never wraps: the loop ends once iv >= hi). A step <= 0 is
//    an error in checked mode, and in any mode when the loop would run (it would never end).
//  - Reductions and scans combine sequentially in index order (scan[reverse] from the last
//    element, the running value as the combine's first operand). argmax/argmin keep the first
//    index of a strictly better value; a NaN never beats anything. Float atomics min/max follow
//    fmin/fmax with NaN propagation; atomic_cas compares bit patterns.
//  - dot sums over K in order, c = c + a*b with a separate rounding for the multiply and the add.
//  - Integer division or remainder by zero gives 0 (numeric.h). Checked mode reports it at the
//    first lane with a defined zero divisor; division has no mask, so that includes lanes a later
//    masked store discards (a masked load's `other` of 0 used as a divisor is reported).
//  - Device calls nest at most kMaxCallDepth deep (deeper is Code::Runtime); the verifier already
//    forbids recursion. A grid with a zero dimension runs no instance.
//  - print sends, per program instance and print op, one text of lines
//      <prefix>pid (x, y, z) idx (i, j): v0, v1
//    one line per active lane in row-major order (`idx (...)` is left out when every value is a
//    scalar). Integers print as signed decimals (i1 as 0/1), floats in the shortest form that
//    reads back to the same f32/f64 (f16, bf16 and f8 through f32), pointers as 0x hex, and an
//    undefined lane in checked mode as `undef`.
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

namespace tri::interp {
namespace {

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

constexpr int32_t kDefined = -1;  // Val::undef entry of a defined lane
constexpr int32_t kNoProv = -1;   // Val::prov entry of a pointer of unknown origin
constexpr int kMaxCallDepth = ir::kMaxCallDepth;
// Accesses below this address are NULL dereferences, reported in every mode (interpreter.h).
constexpr uint64_t kNullPageBytes = 4096;

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

int mem_bytes(Scalar s) {
  int bits = ir::scalar_bits(s);
  return bits < 8 ? 1 : bits / 8;
}

uint64_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_f32(uint64_t b) {
  uint32_t u = static_cast<uint32_t>(b);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint64_t f64_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
double bits_f64(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

// A float lane as f32 (exact for every float type but f64).
float lane_f32(uint64_t bits, Scalar s) {
  return s == Scalar::F32 ? bits_f32(bits) : static_cast<float>(decode_float(bits, s));
}
uint64_t f32_to_lane(float x, Scalar s) { return s == Scalar::F32 ? f32_bits(x) : encode_float(x, s); }

// ---- math_call: the functions of math_fns.def, for f32 (`name`f) and f64 (`name`)
struct MathFn {
  const char* name;
  int arity;
  float (*f1)(float);
  double (*d1)(double);
  float (*f2)(float, float);
  double (*d2)(double, double);
};
MathFn math_entry(const char* name, float (*f)(float), double (*d)(double)) {
  return {name, 1, f, d, nullptr, nullptr};
}
MathFn math_entry(const char* name, float (*f)(float, float), double (*d)(double, double)) {
  return {name, 2, nullptr, nullptr, f, d};
}
// glibc 2.36's tgammaf is off by up to 6 ulp (at x = -3.0802424: 1.896209 for 1.8962097); the
// double version rounded to float is within 1 ulp, as docs/ir.md promises 4.
float tgamma_f32(float x) { return static_cast<float>(std::tgamma(static_cast<double>(x))); }

const MathFn* find_math_fn(const std::string& name) {
  static const MathFn kFns[] = {
#define TRI_MATH_FN(fn, arity) math_entry(#fn, ::fn##f, ::fn),
#include "ir/math_fns.def"
#undef TRI_MATH_FN
  };
  static const MathFn kTgamma = math_entry("tgamma", &tgamma_f32, static_cast<double (*)(double)>(::tgamma));
  if (name == "tgamma") return &kTgamma;
  for (const MathFn& f : kFns)
    if (name == f.name) return &f;
  return nullptr;
}
float apply_math(const MathFn* m, const float* x) { return m->arity == 1 ? m->f1(x[0]) : m->f2(x[0], x[1]); }
double apply_math(const MathFn* m, const double* x) { return m->arity == 1 ? m->d1(x[0]) : m->d2(x[0], x[1]); }

// A float op computed in T (float for every type but f64: docs/ir.md computes f16, bf16 and f8 in
// f32 and rounds after each op).
template <class T>
T float_compute(Opcode code, const T* x, bool nan_propagate, const MathFn* mf) {
  switch (code) {
    case Opcode::Add: return x[0] + x[1];
    case Opcode::Sub: return x[0] - x[1];
    case Opcode::Mul: return x[0] * x[1];
    case Opcode::Neg: return -x[0];
    case Opcode::Abs: return std::fabs(x[0]);
    case Opcode::FDiv: return x[0] / x[1];
    case Opcode::FRem: return std::fmod(x[0], x[1]);
    case Opcode::FMin: return float_min(x[0], x[1], nan_propagate);
    case Opcode::FMax: return float_max(x[0], x[1], nan_propagate);
    case Opcode::Pow: return std::pow(x[0], x[1]);
    case Opcode::Fma: return std::fma(x[0], x[1], x[2]);
    case Opcode::Exp: return std::exp(x[0]);
    case Opcode::Exp2: return std::exp2(x[0]);
    case Opcode::Log: return std::log(x[0]);
    case Opcode::Log2: return std::log2(x[0]);
    case Opcode::Sqrt: return std::sqrt(x[0]);
    case Opcode::Rsqrt: return T(1) / std::sqrt(x[0]);
    case Opcode::Sin: return std::sin(x[0]);
    case Opcode::Cos: return std::cos(x[0]);
    case Opcode::Tanh: return std::tanh(x[0]);
    case Opcode::Erf: return std::erf(x[0]);
    case Opcode::Floor: return std::floor(x[0]);
    case Opcode::Ceil: return std::ceil(x[0]);
    case Opcode::MathCall: return apply_math(mf, x);
    default: break;
  }
  assert(!"not a float op");
  return T(0);
}

uint64_t eval_float(Opcode code, Scalar s, const uint64_t* in, int nin, bool nan_propagate, const MathFn* mf) {
  if (s == Scalar::F64) {
    double x[3] = {0, 0, 0};
    for (int k = 0; k < nin; ++k) x[k] = bits_f64(in[k]);
    return f64_bits(float_compute<double>(code, x, nan_propagate, mf));
  }
  float x[3] = {0, 0, 0};
  for (int k = 0; k < nin; ++k) x[k] = lane_f32(in[k], s);
  return f32_to_lane(float_compute<float>(code, x, nan_propagate, mf), s);
}

bool int_op_of(Opcode code, IntOp* out) {
  switch (code) {
    case Opcode::Add: *out = IntOp::Add; return true;
    case Opcode::Sub: *out = IntOp::Sub; return true;
    case Opcode::Mul: *out = IntOp::Mul; return true;
    case Opcode::SDiv: *out = IntOp::SDiv; return true;
    case Opcode::UDiv: *out = IntOp::UDiv; return true;
    case Opcode::SRem: *out = IntOp::SRem; return true;
    case Opcode::URem: *out = IntOp::URem; return true;
    case Opcode::CDiv: *out = IntOp::CDiv; return true;
    case Opcode::UMulHi: *out = IntOp::UMulHi; return true;
    case Opcode::And: *out = IntOp::And; return true;
    case Opcode::Or: *out = IntOp::Or; return true;
    case Opcode::Xor: *out = IntOp::Xor; return true;
    case Opcode::Shl: *out = IntOp::Shl; return true;
    case Opcode::LShr: *out = IntOp::LShr; return true;
    case Opcode::AShr: *out = IntOp::AShr; return true;
    case Opcode::SMin: *out = IntOp::SMin; return true;
    case Opcode::SMax: *out = IntOp::SMax; return true;
    case Opcode::UMin: *out = IntOp::UMin; return true;
    case Opcode::UMax: *out = IntOp::UMax; return true;
    default: return false;
  }
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string shortest(float f) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}
std::string shortest(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
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

// ---------------------------------------------------------------------------------------------
// Launch

Status Interp::validate_block(const Function& f, BlockId b, std::set<const Function*>* seen) const {
  const BlockData& bd = f.block(b);
  auto concrete = [&](ValueId v, Loc loc) -> Status {
    if (types_.is_concrete(f.type_of(v))) return Status::ok();
    return error_at(Code::InvalidArgument, m_.source_name, loc,
                    "@" + f.name + " is not specialized: type " + m_.type_str(f.type_of(v)) +
                        " names a constexpr");
  };
  for (ValueId v : bd.args) TRI_RETURN_IF_ERROR(concrete(v, bd.loc));
  for (OpId o : bd.ops) {
    const OpData& op = f.op(o);
    const ir::OpInfo& info = ir::op_info(op.code);
    for (ValueId v : op.results) TRI_RETURN_IF_ERROR(concrete(v, op.loc));
    for (size_t i = 0; i < op.attrs.size(); ++i) {
      if (op.attrs[i].kind == Attr::Kind::Sym)
        return error_at(Code::InvalidArgument, m_.source_name, op.loc,
                        "@" + f.name + " is not specialized: '" + info.name + "' attribute '" + info.attrs[i].name +
                            "' names the constexpr " + op.attrs[i].s);
    }
    if (op.code == Opcode::InlineAsm)
      return error_at(Code::Unsupported, m_.source_name, op.loc, "inline_asm runs only on the GPU backend");
    if (op.code == Opcode::Call) {
      const std::string& name = f.attr(o, "callee").s;
      const Function* callee = m_.find(name);
      if (!callee || callee->is_kernel)
        return error_at(Code::InvalidArgument, m_.source_name, op.loc, "call to unknown device function @" + name);
      if (seen->insert(callee).second) TRI_RETURN_IF_ERROR(validate(*callee, seen));
    }
    for (BlockId r : op.regions) TRI_RETURN_IF_ERROR(validate_block(f, r, seen));
  }
  return Status::ok();
}

Status Interp::validate(const Function& f, std::set<const Function*>* seen) const {
  return validate_block(f, f.body, seen);
}

Status Interp::check_facts(const std::vector<Val>& argvals) const {
  for (size_t i = 0; i < kernel_.params.size(); ++i) {
    const ir::Param& p = kernel_.params[i];
    const Val& v = argvals[i];
    bool is_ptr = types_.is_ptr(p.type);
    if (p.align > 1 && is_ptr && v.bits[0] % p.align != 0)
      return error_at(Code::Runtime, m_.source_name, p.loc,
                      "argument %" + p.name + " is " + hex(v.bits[0]) + ", which is not aligned to " +
                          std::to_string(p.align) + " bytes as its {align=" + std::to_string(p.align) +
                          "} fact says");
    if (p.divisible > 1) {
      bool ok = is_ptr ? v.bits[0] % p.divisible == 0
                       : sext_bits(v.bits[0], elem_width(p.type)) % static_cast<int64_t>(p.divisible) == 0;
      if (!ok)
        return error_at(Code::Runtime, m_.source_name, p.loc,
                        "argument %" + p.name + " is " +
                            (is_ptr ? hex(v.bits[0]) : std::to_string(sext_bits(v.bits[0], elem_width(p.type)))) +
                            ", which is not divisible by " + std::to_string(p.divisible) + " as its {divisible=" +
                            std::to_string(p.divisible) + "} fact says");
    }
  }
  return Status::ok();
}

Status Interp::run(const Grid& grid, uint64_t first, uint64_t last) {
  if (!kernel_.is_kernel)
    return Status(Code::InvalidArgument, "@" + kernel_.name + " is a device function, not a kernel");
  if (nargs_ != kernel_.params.size())
    return Status(Code::LaunchArgs, "kernel @" + kernel_.name + " takes " + std::to_string(kernel_.params.size()) +
                                        " argument" + (kernel_.params.size() == 1 ? "" : "s") + ", got " +
                                        std::to_string(nargs_));
  if (nargs_ > 0 && !args_) return Status(Code::InvalidArgument, "launch arguments are NULL");
  std::set<const Function*> seen{&kernel_};
  TRI_RETURN_IF_ERROR(validate(kernel_, &seen));

  std::vector<Val> argvals;
  for (size_t i = 0; i < kernel_.params.size(); ++i) {
    TypeId t = kernel_.params[i].type;
    assert(!types_.is_block(t) && "kernel parameters are scalars or pointers");
    Val v = new_val(t);
    if (types_.is_ptr(t)) {
      v.bits[0] = args_[i].bits;
      v.prov[0] = static_cast<int32_t>(i);
    } else {
      v.bits[0] = trunc_bits(args_[i].bits, elem_width(t));
    }
    argvals.push_back(std::move(v));
  }
  if (checked_) TRI_RETURN_IF_ERROR(check_facts(argvals));

  if (opt_.memory_limit) {
    const uint64_t need = memory_estimate(m_, kernel_, checked_);
    if (need > opt_.memory_limit)
      return Status(Code::LimitExceeded,
                    "the interpreter would need about " + std::to_string(need) + " bytes for kernel @" + kernel_.name +
                        " (its block values, held at once), over the context's budget of " +
                        std::to_string(opt_.memory_limit) +
                        " bytes; use smaller blocks, the \"cpu\" target, or raise the budget "
                        "(tri_context_options_set_interp_memory_limit)");
  }

  grid_[0] = grid.x;
  grid_[1] = grid.y;
  grid_[2] = grid.z;
  for (uint64_t id = first; id < last; ++id) {
    pid_[0] = static_cast<uint32_t>(id % grid.x);
    pid_[1] = static_cast<uint32_t>(id / grid.x % grid.y);
    pid_[2] = static_cast<uint32_t>(id / grid.x / grid.y);
    if (opt_.cancel.requested()) return cancelled();
    Frame fr{&kernel_, std::vector<Val>(kernel_.values.size()), 0};
    std::vector<Val> out;
    TRI_RETURN_IF_ERROR(exec_block(fr, kernel_.body, argvals, &out));
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Blocks and dispatch

Status Interp::exec_block(Frame& fr, BlockId b, std::vector<Val> args, std::vector<Val>* out) {
  const BlockData& bd = fr.f->block(b);
  assert(args.size() == bd.args.size());
  for (size_t i = 0; i < args.size(); ++i) fr.vals[bd.args[i]] = std::move(args[i]);
  out->clear();
  for (OpId o : bd.ops) {
    const OpData& op = fr.f->op(o);
    if (ir::op_info(op.code).is_terminator()) {
      for (ValueId v : op.operands) out->push_back(fr.vals[v]);
      return Status::ok();
    }
    TRI_RETURN_IF_ERROR(exec_op(fr, o));
  }
  return Status::ok();
}

Status Interp::exec_op(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  switch (op.code) {
    case Opcode::ProgramId:
    case Opcode::NumPrograms: {
      int64_t axis = int_attr(f, o, "axis");
      assert(axis >= 0 && axis < 3);
      uint64_t v = op.code == Opcode::ProgramId ? pid_[axis] : grid_[axis];
      TypeId t = f.type_of(op.results[0]);
      fr.vals[op.results[0]] = scalar_val(t, trunc_bits(v, elem_width(t)));
      return Status::ok();
    }
    case Opcode::Const: return exec_const(fr, o);
    case Opcode::Arange: {
      TypeId t = f.type_of(op.results[0]);
      Val r = new_val(t);
      int64_t start = int_attr(f, o, "start");
      for (int64_t i = 0; i < r.size(); ++i) r.bits[i] = trunc_bits(static_cast<uint64_t>(start + i), elem_width(t));
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Splat:
    case Opcode::Broadcast:
    case Opcode::ExpandDims:
    case Opcode::Reshape:
    case Opcode::Permute:
    case Opcode::Join:
    case Opcode::Split:
    case Opcode::Cat:
      return exec_shape(fr, o);
    case Opcode::AddPtr: return exec_addptr(fr, o);
    case Opcode::Load: return exec_load(fr, o);
    case Opcode::Store: return exec_store(fr, o);
    case Opcode::Atomic:
    case Opcode::AtomicCas:
      return exec_atomic(fr, o);
    case Opcode::Reduce:
    case Opcode::Scan:
      return exec_reduce_scan(fr, o);
    case Opcode::Dot: return exec_dot(fr, o);
    case Opcode::Rank:
    case Opcode::NumRanks: {
      const uint32_t v = op.code == Opcode::Rank ? (opt_.team ? opt_.team->rank : 0)
                                                 : (opt_.team ? opt_.team->num_ranks : 1);
      fr.vals[op.results[0]] = scalar_val(f.type_of(op.results[0]), v);
      return Status::ok();
    }
    case Opcode::SymmAt: return exec_symm_at(fr, o);
    case Opcode::Wait: return exec_wait(fr, o);
    case Opcode::ConsumeToken:
      // The value passes through; the token only orders (the interpreter runs ops in order).
      fr.vals[op.results[0]] = fr.vals[op.operands[0]];
      return Status::ok();
    case Opcode::Notify: return exec_notify(fr, o);
    case Opcode::Put: return exec_put(fr, o);
    case Opcode::Get: return exec_get(fr, o);
    case Opcode::For: return exec_for(fr, o);
    case Opcode::If: return exec_if(fr, o);
    case Opcode::While: return exec_while(fr, o);
    case Opcode::Call: return exec_call(fr, o);
    case Opcode::Print: return exec_print(fr, o);
    case Opcode::Assert: return exec_assert(fr, o);
    case Opcode::Assume: return exec_assume(fr, o);
    case Opcode::DebugBarrier: return Status::ok();
    case Opcode::MultipleOf:
    case Opcode::MaxContiguous:
      // Facts for the compiler: the value passes through (checked mode checks the fact first).
      if (checked_ && bool_attr(*fr.f, o, "checked")) TRI_RETURN_IF_ERROR(check_hint(fr, o));
      fr.vals[op.results[0]] = fr.vals[op.operands[0]];
      fr.vals[op.results[0]].type = f.type_of(op.results[0]);
      return Status::ok();
    case Opcode::InlineAsm:
      return error_at(Code::Unsupported, m_.source_name, op.loc, "inline_asm runs only on the GPU backend");
    case Opcode::Yield:
    case Opcode::Condition:
    case Opcode::Return:
      assert(!"terminators are handled by exec_block");
      return Status::ok();
    default:
      return exec_elementwise(fr, o);
  }
}

Status Interp::exec_const(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  TypeId t = f.type_of(op.results[0]);
  const Attr& a = f.attr(o, "value");
  uint64_t bits = 0;
  if (elem_is_ptr(t)) {
    bits = static_cast<uint64_t>(a.i);
  } else {
    Scalar s = elem_scalar(t);
    if (ir::is_int(s)) {
      uint64_t v = a.kind == Attr::Kind::Float ? float_to_int(a.f, 64, true) : static_cast<uint64_t>(a.i);
      bits = s == Scalar::I1 ? (v != 0) : trunc_bits(v, ir::scalar_bits(s));
    } else {
      long double v = a.kind == Attr::Kind::Float ? static_cast<long double>(a.f) : static_cast<long double>(a.i);
      bits = encode_float(v, s);
    }
  }
  Val r = new_val(t);
  for (auto& b : r.bits) b = bits;
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Shape ops: every result lane is a copy of one source lane (value, provenance, undefinedness).

Status Interp::exec_shape(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& src = fr.vals[op.operands[0]];
  TypeId rt = f.type_of(op.results[0]);
  switch (op.code) {
    case Opcode::Splat:
    case Opcode::ExpandDims:
    case Opcode::Reshape: {
      // Row-major order is unchanged: lane i of the result is lane i of the source (or the
      // scalar, for splat).
      Val r = new_val(rt);
      for (int64_t i = 0; i < r.size(); ++i) copy_lane(r, i, src, src.size() == 1 ? 0 : i);
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Broadcast: {
      // Dimensions align at the right; a source dimension of 1 (or a missing one) repeats.
      std::vector<int64_t> rs = shape_of(rt), ss = shape_of(src.type);
      Val r = new_val(rt);
      size_t off = rs.size() - ss.size();
      for (int64_t i = 0; i < r.size(); ++i) {
        int64_t rem = i, from = 0, stride = 1;
        for (size_t d = rs.size(); d-- > 0;) {
          int64_t idx = rem % rs[d];
          rem /= rs[d];
          if (d >= off) {
            int64_t sd = ss[d - off];
            from += (sd == 1 ? 0 : idx) * stride;
            stride *= sd;
          }
        }
        copy_lane(r, i, src, from);
      }
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Permute: {
      // Result dimension k is source dimension order[k].
      const std::vector<int64_t>& order = f.attr(o, "order").ints;
      std::vector<int64_t> rs = shape_of(rt), ss = shape_of(src.type);
      std::vector<int64_t> sstride(ss.size(), 1);
      for (size_t d = ss.size(); d-- > 1;) sstride[d - 1] = sstride[d] * ss[d];
      Val r = new_val(rt);
      for (int64_t i = 0; i < r.size(); ++i) {
        int64_t rem = i, from = 0;
        for (size_t d = rs.size(); d-- > 0;) {
          from += (rem % rs[d]) * sstride[order[d]];
          rem /= rs[d];
        }
        copy_lane(r, i, src, from);
      }
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Join: {
      // A new minor dimension of size 2: lhs at index 0, rhs at index 1.
      const Val& rhs = fr.vals[op.operands[1]];
      Val r = new_val(rt);
      for (int64_t i = 0; i < r.size() / 2; ++i) {
        copy_lane(r, 2 * i, src, i);
        copy_lane(r, 2 * i + 1, rhs, i);
      }
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Split: {
      // The inverse of join: the last dimension (of size 2) is split into two results.
      Val r0 = new_val(rt), r1 = new_val(f.type_of(op.results[1]));
      for (int64_t i = 0; i < r0.size(); ++i) {
        copy_lane(r0, i, src, 2 * i);
        copy_lane(r1, i, src, 2 * i + 1);
      }
      fr.vals[op.results[0]] = std::move(r0);
      fr.vals[op.results[1]] = std::move(r1);
      return Status::ok();
    }
    case Opcode::Cat: {
      // Concatenation along dimension 0, which in row-major order is lhs's lanes then rhs's.
      const Val& rhs = fr.vals[op.operands[1]];
      Val r = new_val(rt);
      assert(r.size() == src.size() + rhs.size());
      for (int64_t i = 0; i < src.size(); ++i) copy_lane(r, i, src, i);
      for (int64_t i = 0; i < rhs.size(); ++i) copy_lane(r, src.size() + i, rhs, i);
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    default: break;
  }
  assert(!"not a shape op");
  return Status::ok();
}

Status Interp::exec_addptr(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[op.operands[0]];
  const Val& off = fr.vals[op.operands[1]];
  TypeId rt = f.type_of(op.results[0]);
  const int64_t size = mem_bytes(pointee_scalar(rt));
  const int ow = elem_width(off.type);
  Val r = new_val(rt);
  for (int64_t i = 0; i < r.size(); ++i) {
    copy_lane(r, i, p, i);
    r.bits[i] = lane(p, i) + static_cast<uint64_t>(sext_bits(lane(off, i), ow)) * static_cast<uint64_t>(size);
    merge_undef(r, i, off, i);
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Memory

Status Interp::check_access(const Frame& fr, OpId o, const char* verb, const Val& p, int64_t i, int bytes) const {
  const uint64_t addr = lane(p, i);
  const int32_t arg = prov_at(p, i);
  auto head = [&] {
    return op_name(*fr.f, o) + lane_str(p.type, i) + " " + verb + " " + std::to_string(bytes) + " bytes at " + hex(addr);
  };
  // NULL, in every mode: an address in the first page, or (checked) any address derived from a
  // NULL argument, whatever extent came with it. Reported like an out-of-bounds access.
  const bool null_arg = arg != kNoProv && args_[arg].bits == 0;
  if (addr < kNullPageBytes || (checked_ && null_arg))
    return runtime_error(fr, o, head() + ", out of bounds: " +
                                    (null_arg ? "argument %" + kernel_.params[arg].name + " is NULL"
                                              : std::string("a NULL pointer (the first ") +
                                                    std::to_string(kNullPageBytes) + " bytes are never valid)"));
  if (!checked_) return Status::ok();
  if (addr % bytes != 0) return runtime_error(fr, o, head() + ", which is not " + std::to_string(bytes) + "-byte aligned");
  if (arg == kNoProv || args_[arg].extent == 0) return Status::ok();
  const uint64_t base = args_[arg].bits, extent = args_[arg].extent;
  const int64_t off = static_cast<int64_t>(addr - base);
  if (off >= 0 && static_cast<uint64_t>(off) <= extent && extent - static_cast<uint64_t>(off) >= static_cast<uint64_t>(bytes))
    return Status::ok();
  return runtime_error(fr, o, head() + ", out of bounds: byte offset " + std::to_string(off) + " of argument %" +
                                  kernel_.params[arg].name + " (extent " + std::to_string(extent) + " bytes)");
}

Status Interp::exec_load(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[op.operands[0]];
  const Val* mask = optional(fr, o, "mask");
  const Val* other = optional(fr, o, "other");
  TypeId rt = f.type_of(op.results[0]);
  const Scalar s = pointee_scalar(p.type);
  Val r = new_val(rt);
  for (int64_t i = 0; i < r.size(); ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) {
      if (other) {
        copy_lane(r, i, *other, i);
      } else if (checked_) {
        r.undef[i] = origin_of(fr, o);
      }
      continue;
    }
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    TRI_RETURN_IF_ERROR(check_access(fr, o, "reads", p, i, mem_bytes(s)));
    r.bits[i] = read_mem(lane(p, i), s);
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

Status Interp::exec_store(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[op.operands[0]];
  const Val& v = fr.vals[op.operands[1]];
  const Val* mask = optional(fr, o, "mask");
  const Scalar s = pointee_scalar(p.type);
  const int64_t n = types_.num_elements(p.type);
  for (int64_t i = 0; i < n; ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", v, i));
    TRI_RETURN_IF_ERROR(check_access(fr, o, "writes", p, i, mem_bytes(s)));
    write_mem(lane(p, i), s, lane(v, i));
  }
  return Status::ok();
}

Status Interp::exec_atomic(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const bool cas = op.code == Opcode::AtomicCas;
  const Val& p = fr.vals[op.operands[0]];
  const Val* cmp = cas ? &fr.vals[op.operands[1]] : nullptr;
  const Val& v = fr.vals[op.operands[cas ? 2 : 1]];
  const Val* mask = optional(fr, o, "mask");
  const std::string kind = cas ? std::string() : enum_attr(f, o, "kind");
  const Scalar s = pointee_scalar(p.type);
  const int w = ir::scalar_bits(s);
  TypeId rt = f.type_of(op.results[0]);
  Val r = new_val(rt);
  for (int64_t i = 0; i < r.size(); ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) {
      if (checked_) r.undef[i] = origin_of(fr, o);
      continue;
    }
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    if (cmp) TRI_RETURN_IF_ERROR(check_defined(fr, o, "cmp", *cmp, i));
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", v, i));
    TRI_RETURN_IF_ERROR(check_access(fr, o, "updates", p, i, mem_bytes(s)));
    const uint64_t addr = lane(p, i);
    const uint64_t x = lane(v, i);
    // One atomic read-modify-write of the memory's bits (other threads, and other ranks of a
    // team, may update the same address): compute from what was read, retry if it changed.
    const int bytes = mem_bytes(s);
    uint64_t raw = atomic_load_raw(addr, bytes);
    uint64_t old;
    for (;;) {
      old = s == Scalar::I1 ? (raw != 0) : raw;
      uint64_t next = old;
      bool dz = false;
      if (cas) {
        if (old == lane(*cmp, i)) next = x;
      } else if (kind == "xchg") {
        next = x;
      } else if (kind == "and" || kind == "or" || kind == "xor" || kind == "umin" || kind == "umax") {
        IntOp iop = kind == "and" ? IntOp::And : kind == "or" ? IntOp::Or : kind == "xor" ? IntOp::Xor
                  : kind == "umin" ? IntOp::UMin : IntOp::UMax;
        next = int_binary(iop, old, x, w, &dz);
      } else if (ir::is_float(s)) {
        // f32 add flushes subnormal operands and results to sign-preserving zero (docs/ir.md,
        // "Atomics": what the GPU's atom.add.f32 does, so every target gives the same bits).
        const bool ftz = s == Scalar::F32 && kind == "add";
        auto flush = [&](uint64_t b) { return ftz && (b & 0x7f800000u) == 0 ? (b & 0x80000000u) : b; };
        uint64_t in[2] = {flush(old), flush(x)};
        Opcode c = kind == "add" ? Opcode::Add : kind == "min" ? Opcode::FMin : Opcode::FMax;
        next = flush(eval_float(c, s, in, 2, true, nullptr));
      } else {
        IntOp iop = kind == "add" ? IntOp::Add : kind == "min" ? IntOp::SMin : IntOp::SMax;
        next = int_binary(iop, old, x, w, &dz);
      }
      if (s == Scalar::I1) next &= 1;
      if (atomic_cas_raw(addr, bytes, &raw, next)) break;
    }
    r.bits[i] = old;
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Distributed ops: ranks, the symmetric heap, signals (docs/distributed.md)

Status Interp::symm_delta(const Frame& fr, OpId o, const Val& rank, uint64_t* delta) const {
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "rank", rank, 0));
  const int64_t r = sext_bits(lane(rank, 0), 32);
  const TeamLaunch* t = opt_.team;
  const int64_t n = t ? t->num_ranks : 1;
  if (r < 0 || r >= n) {
    if (!t)
      return runtime_error(fr, o, op_name(*fr.f, o) + " names rank " + std::to_string(r) +
                                      ", but a launch outside a team is rank 0 of 1 (launch it with tri_team_launch)");
    return runtime_error(fr, o, op_name(*fr.f, o) + " names rank " + std::to_string(r) + ", but the team has " +
                                    std::to_string(n) + " ranks (0 to " + std::to_string(n - 1) + ")");
  }
  *delta = t && t->heap_bases ? t->heap_bases[r] - t->heap_bases[t->rank] : 0;
  return Status::ok();
}

Status Interp::check_symm(const Frame& fr, OpId o, const Val& p, int64_t i) const {
  const TeamLaunch* t = opt_.team;
  if (!t || !t->heap_bases) return Status::ok();
  const uint64_t addr = lane(p, i), base = t->heap_bases[t->rank];
  if (addr - base < t->heap_bytes) return Status::ok();
  return runtime_error(fr, o, op_name(*fr.f, o) + lane_str(p.type, i) + " address " + hex(addr) +
                                  " is not in this rank's symmetric heap [" + hex(base) + ", " +
                                  hex(base + t->heap_bytes) + ")" +
                                  "; pass addresses of tri_team_alloc'd buffers (tri_team_ptr)");
}

void Interp::signal_write(uint64_t addr, int bytes, bool add, uint64_t value) {
  // Release: every store this program made before is visible to whoever acquires the signal.
  if (bytes == 8) {
    auto* p = reinterpret_cast<uint64_t*>(addr);
    if (add) __atomic_fetch_add(p, value, __ATOMIC_RELEASE);
    else __atomic_store_n(p, value, __ATOMIC_RELEASE);
  } else {
    auto* p = reinterpret_cast<uint32_t*>(addr);
    if (add) __atomic_fetch_add(p, static_cast<uint32_t>(value), __ATOMIC_RELEASE);
    else __atomic_store_n(p, static_cast<uint32_t>(value), __ATOMIC_RELEASE);
  }
}

Status Interp::exec_symm_at(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[f.operand(o, "ptr")];
  uint64_t delta;
  TRI_RETURN_IF_ERROR(symm_delta(fr, o, fr.vals[f.operand(o, "rank")], &delta));
  Val r = new_val(f.type_of(op.results[0]));
  for (int64_t i = 0; i < r.size(); ++i) {
    copy_lane(r, i, p, i);
    if (undef_at(p, i) != kDefined) continue;  // reported where it is used
    TRI_RETURN_IF_ERROR(check_symm(fr, o, p, i));
    r.bits[i] = lane(p, i) + delta;
    // A peer's address is not in the argument it came from: checked mode checks it for
    // alignment only (its heap was checked here).
    if (delta != 0) r.prov[i] = kNoProv;
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

Status Interp::exec_wait(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[f.operand(o, "ptr")];
  const Val& value = fr.vals[f.operand(o, "value")];
  const Val* mask = optional(fr, o, "mask");
  const Scalar s = pointee_scalar(p.type);
  const int bytes = mem_bytes(s);
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", value, 0));
  WaitRequest w;
  w.bytes = bytes;
  w.cmp = enum_attr(f, o, "cmp") == "ge" ? WaitCmp::Ge : WaitCmp::Eq;
  w.value = sext_bits(lane(value, 0), bytes * 8);
  w.acquire = enum_attr(f, o, "order") == "acquire";
  const TeamLaunch* t = opt_.team;
  const uint64_t timeout = t ? t->wait_timeout_ms : kDefaultWaitTimeoutMs;
  const int64_t n = types_.num_elements(p.type);
  for (int64_t i = 0; i < n; ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    TRI_RETURN_IF_ERROR(check_access(fr, o, "waits on", p, i, bytes));
    w.addr = lane(p, i);
    int64_t last = 0;
    switch (wait_signal(w, timeout, stop_, t ? t->abort : nullptr, opt_.cancel, &last)) {
      case WaitEnd::Done: break;
      case WaitEnd::TimedOut:
        return runtime_error(fr, o, op_name(f, o) + lane_str(p.type, i) + " timed out after " +
                                        std::to_string(timeout) + " ms: the signal at " + hex(w.addr) + " holds " +
                                        std::to_string(last) + ", and it waits for " +
                                        (w.cmp == WaitCmp::Eq ? "== " : ">= ") + std::to_string(w.value) +
                                        " (is a notify missing? tri_team_set_wait_timeout sets the limit)");
      case WaitEnd::Stopped:
        return Status(Code::Cancelled, error_at(Code::Runtime, m_.source_name, op.loc,
                                                op_name(f, o) + " gave up: another program failed; " + program()).message());
      case WaitEnd::Cancelled: return cancelled();
    }
  }
  fr.vals[op.results[0]] = scalar_val(f.type_of(op.results[0]), 0);
  return Status::ok();
}

Status Interp::exec_notify(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const Val& p = fr.vals[f.operand(o, "ptr")];
  const Val& value = fr.vals[f.operand(o, "value")];
  uint64_t delta;
  TRI_RETURN_IF_ERROR(symm_delta(fr, o, fr.vals[f.operand(o, "rank")], &delta));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, 0));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", value, 0));
  const int bytes = mem_bytes(pointee_scalar(p.type));
  TRI_RETURN_IF_ERROR(check_access(fr, o, "signals", p, 0, bytes));
  TRI_RETURN_IF_ERROR(check_symm(fr, o, p, 0));
  signal_write(lane(p, 0) + delta, bytes, enum_attr(f, o, "kind") == "add", lane(value, 0));
  return Status::ok();
}

Status Interp::exec_put(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const Val& p = fr.vals[f.operand(o, "ptr")];
  const Val& v = fr.vals[f.operand(o, "value")];
  const Val* mask = optional(fr, o, "mask");
  const Val* signal = optional(fr, o, "signal");
  const Val* signal_value = optional(fr, o, "signal_value");
  uint64_t delta;
  TRI_RETURN_IF_ERROR(symm_delta(fr, o, fr.vals[f.operand(o, "rank")], &delta));
  const Scalar s = pointee_scalar(p.type);
  const int64_t n = types_.num_elements(p.type);
  for (int64_t i = 0; i < n; ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", v, i));
    // This rank's address is checked against its argument; the peer's is in the peer's heap.
    TRI_RETURN_IF_ERROR(check_access(fr, o, "writes", p, i, mem_bytes(s)));
    TRI_RETURN_IF_ERROR(check_symm(fr, o, p, i));
    write_mem(lane(p, i) + delta, s, lane(v, i));
  }
  if (!signal) return Status::ok();
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "signal", *signal, 0));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "signal_value", *signal_value, 0));
  const int bytes = mem_bytes(pointee_scalar(signal->type));
  TRI_RETURN_IF_ERROR(check_access(fr, o, "signals", *signal, 0, bytes));
  TRI_RETURN_IF_ERROR(check_symm(fr, o, *signal, 0));
  signal_write(lane(*signal, 0) + delta, bytes, enum_attr(f, o, "signal_kind") == "add", lane(*signal_value, 0));
  return Status::ok();
}

Status Interp::exec_get(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[f.operand(o, "ptr")];
  const Val* mask = optional(fr, o, "mask");
  const Val* other = optional(fr, o, "other");
  uint64_t delta;
  TRI_RETURN_IF_ERROR(symm_delta(fr, o, fr.vals[f.operand(o, "rank")], &delta));
  const Scalar s = pointee_scalar(p.type);
  Val r = new_val(f.type_of(op.results[0]));
  for (int64_t i = 0; i < r.size(); ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) {
      if (other) {
        copy_lane(r, i, *other, i);
      } else if (checked_) {
        r.undef[i] = origin_of(fr, o);
      }
      continue;
    }
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    TRI_RETURN_IF_ERROR(check_access(fr, o, "reads", p, i, mem_bytes(s)));
    TRI_RETURN_IF_ERROR(check_symm(fr, o, p, i));
    r.bits[i] = read_mem(lane(p, i) + delta, s);
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Elementwise ops: arithmetic, comparisons, select, casts, math

Status Interp::exec_elementwise(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Opcode code = op.code;
  const int nin = static_cast<int>(op.operands.size());
  assert(nin >= 1 && nin <= 3);
  const Val* in[3] = {nullptr, nullptr, nullptr};
  for (int k = 0; k < nin; ++k) in[k] = &fr.vals[op.operands[k]];
  const TypeId rt = f.type_of(op.results[0]);
  // The type that decides how operand bits are read (select's value operands, not its condition).
  const TypeId it = code == Opcode::Select ? in[1]->type : in[0]->type;
  const bool in_ptr = elem_is_ptr(it), out_ptr = elem_is_ptr(rt);
  const Scalar is = in_ptr ? Scalar::I64 : elem_scalar(it);
  const Scalar os = out_ptr ? Scalar::I64 : elem_scalar(rt);
  const int iw = elem_width(it), ow = elem_width(rt);

  IntOp iop{};
  const bool int_arith = !in_ptr && ir::is_int(is) && int_op_of(code, &iop);
  const ir::OpInfo& info = ir::op_info(code);
  const bool nan_propagate = info.attr_index("nan") < 0 || enum_attr(f, o, "nan") == "propagate";
  const bool flush_subnormal = info.attr_index("subnormal") >= 0 && enum_attr(f, o, "subnormal") == "flush";
  const std::string pred = info.attr_index("pred") >= 0 ? enum_attr(f, o, "pred") : std::string();
  const Round rounding =
      code == Opcode::FPTrunc && enum_attr(f, o, "rounding") == "rtz" ? Round::TowardZero : Round::NearestEven;
  const MathFn* mf = nullptr;
  if (code == Opcode::MathCall) {
    mf = find_math_fn(str_attr(f, o, "name"));
    assert(mf && "math_call of an unknown function (the verifier checks names)");
  }

  Val r = new_val(rt);
  for (int64_t i = 0; i < r.size(); ++i) {
    uint64_t x[3] = {0, 0, 0};
    for (int k = 0; k < nin; ++k) x[k] = lane(*in[k], i);
    uint64_t out = 0;
    bool div_by_zero = false;
    if (int_arith) {
      out = int_binary(iop, x[0], x[1], iw, &div_by_zero);
    } else {
      switch (code) {
        case Opcode::Neg:
        case Opcode::Abs:
          if (ir::is_int(is)) {
            int64_t v = sext_bits(x[0], iw);
            out = (code == Opcode::Neg || v < 0) ? trunc_bits(0 - x[0], iw) : x[0];
          } else {
            out = eval_float(code, is, x, 1, nan_propagate, nullptr);
          }
          break;
        case Opcode::Cmp: {
          const int64_t a = sext_bits(x[0], iw), b = sext_bits(x[1], iw);
          const uint64_t ua = x[0], ub = x[1];
          bool c = pred == "eq"    ? ua == ub
                   : pred == "ne"  ? ua != ub
                   : pred == "slt" ? a < b
                   : pred == "sle" ? a <= b
                   : pred == "sgt" ? a > b
                   : pred == "sge" ? a >= b
                   : pred == "ult" ? ua < ub
                   : pred == "ule" ? ua <= ub
                   : pred == "ugt" ? ua > ub
                                   : ua >= ub;
          out = c;
          break;
        }
        case Opcode::FCmp: {
          const long double a = decode_float(x[0], is), b = decode_float(x[1], is);
          const bool uno = std::isnan(a) || std::isnan(b);
          bool c;
          if (pred == "ord") c = !uno;
          else if (pred == "uno") c = uno;
          else {
            const std::string rel = pred.substr(1);
            bool cmp = rel == "eq" ? a == b : rel == "ne" ? a != b : rel == "lt" ? a < b
                     : rel == "le" ? a <= b : rel == "gt" ? a > b : a >= b;
            c = uno ? pred[0] == 'u' : cmp;
          }
          out = c;
          break;
        }
        case Opcode::Select: {
          const bool c = x[0] & 1;
          out = c ? x[1] : x[2];
          if (!r.prov.empty()) r.prov[i] = prov_at(*in[c ? 1 : 2], i);
          break;
        }
        case Opcode::Trunc:
        case Opcode::ZExt:
        case Opcode::PtrToInt:
        case Opcode::IntToPtr:
          out = trunc_bits(x[0], ow);
          break;
        case Opcode::SExt:
          out = trunc_bits(static_cast<uint64_t>(sext_bits(x[0], iw)), ow);
          break;
        case Opcode::FPTrunc:
        case Opcode::FPExt:
          // bf16 -> f32 is exact, a signaling NaN staying signaling (docs/ir.md); every other
          // conversion quiets it.
          if (code == Opcode::FPExt && is == Scalar::BF16 && os == Scalar::F32) out = (x[0] & 0xffff) << 16;
          else out = encode_float(decode_float(x[0], is), os, rounding);
          break;
        case Opcode::FPToSI:
        case Opcode::FPToUI:
          out = float_to_int(decode_float(x[0], is), ow, code == Opcode::FPToSI);
          break;
        case Opcode::SIToFP:
        case Opcode::UIToFP:
          out = int_to_float(x[0], iw, code == Opcode::SIToFP, float_format(os));
          break;
        case Opcode::Bitcast:
          out = x[0];
          if (in_ptr && out_ptr) r.prov[i] = prov_at(*in[0], i);
          break;
        default:
          assert(ir::is_float(is) && "an elementwise op on floats");
          out = eval_float(code, is, x, nin, nan_propagate, mf);
          if (flush_subnormal && is != Scalar::F64) {  // exp2[subnormal=flush]: an f32 result below 2^-126 is +0
            const float v = std::exp2(lane_f32(x[0], is));
            if (v < std::numeric_limits<float>::min()) out = f32_to_lane(0.0f, is);
          }
          break;
      }
    }
    r.bits[i] = out;
    if (checked_) {
      if (code == Opcode::Select) {
        merge_undef(r, i, *in[0], i);
        merge_undef(r, i, *in[(x[0] & 1) ? 1 : 2], i);
      } else {
        for (int k = 0; k < nin; ++k) merge_undef(r, i, *in[k], i);
      }
      if (div_by_zero && undef_at(*in[1], i) == kDefined)
        return runtime_error(fr, o, op_name(f, o) + lane_str(rt, i) + " divides by zero");
    }
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Reductions, scans, dot

uint64_t Interp::combine_builtin(const std::string& kind, TypeId elem, uint64_t a, uint64_t b) const {
  const Scalar s = elem_scalar(elem);
  const int w = ir::scalar_bits(s);
  bool dz = false;
  if (ir::is_float(s)) {
    uint64_t in[2] = {a, b};
    Opcode c = kind == "sum" ? Opcode::Add : kind == "prod" ? Opcode::Mul : kind == "max" ? Opcode::FMax
             : Opcode::FMin;
    assert(kind == "sum" || kind == "prod" || kind == "max" || kind == "min");
    return eval_float(c, s, in, 2, true, nullptr);
  }
  IntOp op = kind == "sum"    ? IntOp::Add
             : kind == "prod" ? IntOp::Mul
             : kind == "max"  ? IntOp::SMax
             : kind == "min"  ? IntOp::SMin
             : kind == "umax" ? IntOp::UMax
             : kind == "umin" ? IntOp::UMin
             : kind == "and"  ? IntOp::And
             : kind == "or"   ? IntOp::Or
                              : IntOp::Xor;
  return int_binary(op, a, b, w, &dz);
}

Status Interp::exec_reduce_scan(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const bool scan = op.code == Opcode::Scan;
  const std::vector<ValueId> srcs = f.variadic(o);
  const size_t nsrc = srcs.size();
  const int64_t axis = int_attr(f, o, "axis");
  const std::string kind = enum_attr(f, o, "kind");
  const bool reverse = scan && bool_attr(f, o, "reverse");
  const std::vector<int64_t> shape = shape_of(f.type_of(srcs[0]));
  const int64_t n = shape[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];

  std::vector<const Val*> in;
  for (ValueId v : srcs) in.push_back(&fr.vals[v]);
  std::vector<Val> res;
  for (ValueId v : op.results) res.push_back(new_val(f.type_of(v)));
  const bool arg = kind == "argmax" || kind == "argmin";
  const BlockId region = op.regions.empty() ? ir::kNoBlock : op.regions[0];

  for (int64_t ou = 0; ou < outer; ++ou) {
    for (int64_t inn = 0; inn < inner; ++inn) {
      auto src_lane = [&](int64_t k) { return (ou * n + k) * inner + inn; };
      const int64_t out_lane = ou * inner + inn;
      const int64_t first = reverse ? n - 1 : 0;
      const int64_t step = reverse ? -1 : 1;
      if (arg) {
        // One i32 index per source: the first lane holding the extreme value.
        for (size_t j = 0; j < nsrc; ++j) {
          const Val& x = *in[j];
          const TypeId et = types_.elem_of(x.type);
          const Scalar s = elem_scalar(et);
          auto key = [&](int64_t k) -> long double {
            uint64_t b = lane(x, src_lane(k));
            return ir::is_float(s) ? decode_float(b, s) : static_cast<long double>(sext_bits(b, ir::scalar_bits(s)));
          };
          int64_t best = 0;
          int32_t u = undef_at(x, src_lane(0));
          for (int64_t k = 1; k < n; ++k) {
            long double a = key(k), b = key(best);
            if (kind == "argmax" ? a > b : a < b) best = k;
            if (u == kDefined) u = undef_at(x, src_lane(k));
          }
          res[j].bits[out_lane] = trunc_bits(static_cast<uint64_t>(best), elem_width(res[j].type));
          if (checked_) res[j].undef[out_lane] = u;
        }
        continue;
      }
      // The running value of each source, combined with the next lane in order.
      std::vector<Val> acc;
      for (size_t j = 0; j < nsrc; ++j) {
        Val a = new_val(types_.elem_of(in[j]->type));
        copy_lane(a, 0, *in[j], src_lane(first));
        acc.push_back(std::move(a));
      }
      auto emit = [&](int64_t to) {
        for (size_t j = 0; j < nsrc; ++j) copy_lane(res[j], to, acc[j], 0);
      };
      if (scan) emit(src_lane(first));
      for (int64_t c = 1; c < n; ++c) {
        const int64_t k = first + c * step;
        if (region == ir::kNoBlock) {
          for (size_t j = 0; j < nsrc; ++j) {
            const TypeId et = types_.elem_of(in[j]->type);
            acc[j].bits[0] = combine_builtin(kind, et, acc[j].bits[0], lane(*in[j], src_lane(k)));
            merge_undef(acc[j], 0, *in[j], src_lane(k));
          }
        } else {
          std::vector<Val> args = acc;
          for (size_t j = 0; j < nsrc; ++j) {
            Val b = new_val(types_.elem_of(in[j]->type));
            copy_lane(b, 0, *in[j], src_lane(k));
            args.push_back(std::move(b));
          }
          std::vector<Val> out;
          TRI_RETURN_IF_ERROR(exec_block(fr, region, std::move(args), &out));
          assert(out.size() == nsrc);
          for (size_t j = 0; j < nsrc; ++j) {
            out[j].type = acc[j].type;
            acc[j] = std::move(out[j]);
          }
        }
        if (scan) emit(src_lane(k));
      }
      if (!scan) emit(out_lane);
    }
  }
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(res[j]);
  return Status::ok();
}

Status Interp::exec_dot(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& a = fr.vals[op.operands[0]];
  const Val& b = fr.vals[op.operands[1]];
  const Val& acc = fr.vals[op.operands[2]];
  const TypeId rt = f.type_of(op.results[0]);
  const std::vector<int64_t> sa = shape_of(a.type), sb = shape_of(b.type);
  const bool batched = sa.size() == 3;
  const int64_t B = batched ? sa[0] : 1, M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  const Scalar ea = elem_scalar(a.type), eb = elem_scalar(b.type), ec = elem_scalar(acc.type), er = elem_scalar(rt);
  const bool tf32 = enum_attr(f, o, "precision") == "tf32";
  Val r = new_val(rt);
  for (int64_t bt = 0; bt < B; ++bt) {
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        const int64_t ci = (bt * M + m) * N + n;
        auto ai = [&](int64_t k) { return (bt * M + m) * K + k; };
        auto bi = [&](int64_t k) { return (bt * K + k) * N + n; };
        uint64_t out;
        if (ir::is_int(ea)) {
          // Integer products accumulate in the accumulator's width and wrap.
          const int w = ir::scalar_bits(ec);
          uint64_t c = lane(acc, ci);
          for (int64_t k = 0; k < K; ++k) {
            uint64_t p = static_cast<uint64_t>(sext_bits(lane(a, ai(k)), ir::scalar_bits(ea))) *
                         static_cast<uint64_t>(sext_bits(lane(b, bi(k)), ir::scalar_bits(eb)));
            c = trunc_bits(c + p, w);
          }
          out = trunc_bits(c, ir::scalar_bits(er));
        } else {
          // Float inputs (f16, bf16, f8, f32) accumulate in f32 (docs/ir.md: dot).
          assert(ea != Scalar::F64 && eb != Scalar::F64 && ec != Scalar::F64);
          float c = lane_f32(lane(acc, ci), ec);
          for (int64_t k = 0; k < K; ++k) {
            float x = lane_f32(lane(a, ai(k)), ea), y = lane_f32(lane(b, bi(k)), eb);
            if (tf32 && ea == Scalar::F32) x = round_to_tf32(x);
            if (tf32 && eb == Scalar::F32) y = round_to_tf32(y);
            float p = x * y;
            c = c + p;
          }
          out = f32_to_lane(c, er);
        }
        r.bits[ci] = out;
        if (checked_) {
          merge_undef(r, ci, acc, ci);
          for (int64_t k = 0; k < K; ++k) {
            merge_undef(r, ci, a, ai(k));
            merge_undef(r, ci, b, bi(k));
          }
        }
      }
    }
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Control flow and calls

Status Interp::exec_for(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& lo = fr.vals[op.operands[0]];
  const Val& hi = fr.vals[op.operands[1]];
  const Val& st = fr.vals[op.operands[2]];
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "lo", lo, 0));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "hi", hi, 0));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "step", st, 0));
  const TypeId ivt = lo.type;
  const int w = elem_width(ivt);
  const __int128 l = sext_bits(lo.bits[0], w), h = sext_bits(hi.bits[0], w), s = sext_bits(st.bits[0], w);
  if (s <= 0 && (checked_ || l < h))
    return runtime_error(fr, o, "'for' step is " + std::to_string(static_cast<int64_t>(s)) + ", but it must be positive");
  std::vector<Val> iters;
  for (size_t k = 3; k < op.operands.size(); ++k) iters.push_back(fr.vals[op.operands[k]]);
  for (__int128 iv = l; iv < h; iv += s) {
    if (opt_.cancel.requested()) return cancelled();
    std::vector<Val> args;
    args.push_back(scalar_val(ivt, trunc_bits(static_cast<uint64_t>(iv), w)));
    for (Val& v : iters) args.push_back(std::move(v));
    TRI_RETURN_IF_ERROR(exec_block(fr, op.regions[0], std::move(args), &iters));
  }
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(iters[j]);
  return Status::ok();
}

Status Interp::exec_if(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& c = fr.vals[op.operands[0]];
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "cond", c, 0));
  const size_t which = (c.bits[0] & 1) ? 0 : 1;
  if (which >= op.regions.size()) return Status::ok();  // no else region (and no results)
  std::vector<Val> out;
  TRI_RETURN_IF_ERROR(exec_block(fr, op.regions[which], {}, &out));
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(out[j]);
  return Status::ok();
}

Status Interp::exec_while(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const BlockId before = op.regions[0], after = op.regions[1];
  const OpId condition = f.block(before).ops.back();
  std::vector<Val> vals;
  for (ValueId v : op.operands) vals.push_back(fr.vals[v]);
  for (;;) {
    if (opt_.cancel.requested()) return cancelled();
    std::vector<Val> out;
    TRI_RETURN_IF_ERROR(exec_block(fr, before, std::move(vals), &out));
    TRI_RETURN_IF_ERROR(check_defined(fr, condition, "cond", out[0], 0));
    const bool go_on = out[0].bits[0] & 1;
    vals.assign(std::make_move_iterator(out.begin() + 1), std::make_move_iterator(out.end()));
    if (!go_on) break;
    TRI_RETURN_IF_ERROR(exec_block(fr, after, std::move(vals), &out));
    vals = std::move(out);
  }
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(vals[j]);
  return Status::ok();
}

Status Interp::exec_call(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Function* callee = m_.find(f.attr(o, "callee").s);
  assert(callee && "validate() checked the callee");
  if (fr.depth + 1 > kMaxCallDepth)
    return runtime_error(fr, o, "'call' of @" + callee->name + " nests deeper than " + std::to_string(kMaxCallDepth) +
                                    " calls");
  Frame cf{callee, std::vector<Val>(callee->values.size()), fr.depth + 1};
  std::vector<Val> args;
  for (ValueId v : op.operands) args.push_back(fr.vals[v]);
  std::vector<Val> out;
  TRI_RETURN_IF_ERROR(exec_block(cf, callee->body, std::move(args), &out));
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(out[j]);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Debugging ops

std::string Interp::format_lane(const Val& v, int64_t i) const {
  if (undef_at(v, i) != kDefined) return "undef";
  const uint64_t b = lane(v, i);
  if (elem_is_ptr(v.type)) return hex(b);
  const Scalar s = elem_scalar(v.type);
  if (s == Scalar::I1) return std::to_string(b & 1);
  if (ir::is_int(s)) return std::to_string(sext_bits(b, ir::scalar_bits(s)));
  if (s == Scalar::F64) return shortest(bits_f64(b));
  return shortest(lane_f32(b, s));
}

Status Interp::exec_print(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const std::vector<ValueId> vals = f.variadic(o);
  const Val* mask = optional(fr, o, "mask");
  TypeId shape_type = ir::kNoType;
  for (ValueId v : vals)
    if (types_.is_block(f.type_of(v))) shape_type = f.type_of(v);
  if (shape_type == ir::kNoType && mask && types_.is_block(mask->type)) shape_type = mask->type;
  const std::vector<int64_t> shape = shape_type == ir::kNoType ? std::vector<int64_t>() : shape_of(shape_type);
  const int64_t n = shape_type == ir::kNoType ? 1 : types_.num_elements(shape_type);
  const std::string prefix = str_attr(f, o, "prefix");
  const std::string pid = "pid (" + std::to_string(pid_[0]) + ", " + std::to_string(pid_[1]) + ", " +
                          std::to_string(pid_[2]) + ")";
  std::string text;
  for (int64_t i = 0; i < n; ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    std::string line = prefix + pid;
    if (!shape.empty()) {
      line += " idx (";
      int64_t rem = i;
      std::vector<int64_t> idx(shape.size());
      for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = rem % shape[d];
        rem /= shape[d];
      }
      for (size_t d = 0; d < idx.size(); ++d) line += (d ? ", " : "") + std::to_string(idx[d]);
      line += ")";
    }
    for (size_t k = 0; k < vals.size(); ++k) line += (k ? ", " : ": ") + format_lane(fr.vals[vals[k]], i);
    if (!text.empty()) text += '\n';
    text += line;
  }
  if (!text.empty() && opt_.print) opt_.print(text);
  return Status::ok();
}

Status Interp::exec_assert(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const Val& c = fr.vals[f.op(o).operands[0]];
  const Val* mask = optional(fr, o, "mask");
  const std::string msg = str_attr(f, o, "msg");
  for (int64_t i = 0; i < c.size(); ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "cond", c, i));
    if (!(c.bits[i] & 1))
      return runtime_error(fr, o, "'assert'" + lane_str(c.type, i) + " failed" + (msg.empty() ? "" : ": " + msg));
  }
  return Status::ok();
}

// multiple_of: along dimension d, the first lane of each run of values[d] lanes is a multiple of
// values[d] (an address, for pointers). max_contiguous: along dimension d, lanes come in runs of
// values[d] consecutive values (consecutive elements, for pointers). Undefined lanes are skipped:
// their uses are reported where they happen.
Status Interp::check_hint(const Frame& fr, OpId o) const {
  const Function& f = *fr.f;
  const Val& v = fr.vals[f.op(o).operands[0]];
  const std::vector<int64_t>& values = f.attr(o, "values").ints;
  const bool multiple = f.op(o).code == Opcode::MultipleOf;
  const bool is_ptr = elem_is_ptr(v.type);
  const int w = elem_width(v.type);
  const int64_t step = is_ptr ? mem_bytes(pointee_scalar(v.type)) : 1;
  std::vector<int64_t> shape = shape_of(v.type);
  if (shape.empty()) shape = {1};
  auto show = [&](uint64_t bits) { return is_ptr ? hex(bits) : std::to_string(sext_bits(bits, w)); };
  // stride[d]: the lane distance between neighbours along dimension d.
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  for (int64_t i = 0; i < v.size(); ++i) {
    if (undef_at(v, i) != kDefined) continue;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t n = values[d];
      const int64_t pos = (i / stride[d]) % shape[d];
      const std::string run = " of " + std::to_string(n) + " along dimension " + std::to_string(d);
      if (multiple) {
        if (pos % n != 0) continue;
        const bool ok = is_ptr ? lane(v, i) % static_cast<uint64_t>(n) == 0 : sext_bits(lane(v, i), w) % n == 0;
        if (!ok)
          return runtime_error(fr, o, op_name(f, o) + lane_str(v.type, i) + " is " + show(lane(v, i)) +
                                          ", which is not a multiple of " + std::to_string(n) +
                                          " as the first of a run" + run);
      } else {
        if (pos % n == 0) continue;
        const int64_t prev = i - stride[d];
        if (undef_at(v, prev) != kDefined) continue;
        if (trunc_bits(lane(v, prev) + static_cast<uint64_t>(step), w) != lane(v, i))
          return runtime_error(fr, o, op_name(f, o) + lane_str(v.type, i) + " is " + show(lane(v, i)) +
                                          " but the lane before it is " + show(lane(v, prev)) + ", which breaks a run of " +
                                          std::to_string(n) + (is_ptr ? " consecutive elements" : " consecutive values") +
                                          " along dimension " + std::to_string(d));
      }
    }
  }
  return Status::ok();
}

Status Interp::exec_assume(Frame& fr, OpId o) {
  if (!checked_) return Status::ok();
  const Val& c = fr.vals[fr.f->op(o).operands[0]];
  for (int64_t i = 0; i < c.size(); ++i) {
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "cond", c, i));
    if (!(c.bits[i] & 1)) return runtime_error(fr, o, "'assume'" + lane_str(c.type, i) + " is false");
  }
  return Status::ok();
}

}  // namespace

uint64_t memory_estimate(const ir::Module& m, const ir::Function& kernel, bool checked) {
  std::set<const Function*> seen{&kernel};
  std::vector<const Function*> work{&kernel};
  uint64_t bytes = 0;
  while (!work.empty()) {
    const Function* f = work.back();
    work.pop_back();
    for (const ir::ValueData& v : f->values) {
      const uint64_t n = static_cast<uint64_t>(m.types.num_elements(v.type));
      const bool ptr = m.types.is_ptr(m.types.elem_of(v.type));
      bytes += n * (8 + (ptr ? 4 : 0) + (checked ? 4 : 0));
    }
    for (OpId o = 0; o < f->ops.size(); ++o) {
      if (f->op(o).code != Opcode::Call) continue;
      const Function* callee = m.find(f->attr(o, "callee").s);
      if (callee && seen.insert(callee).second) work.push_back(callee);
    }
  }
  return 2 * bytes;
}

namespace {
bool is_wait(Opcode c) { return c == Opcode::Wait; }
}  // namespace

Status run(const ir::Module& m, const ir::Function& kernel, const Grid& grid, const ArgValue* args, size_t nargs,
           const Options& options) {
  const uint64_t count = grid.count();
  if (count == 0 || ir::find_op(m, kernel, &is_wait, nullptr) == ir::kNoOp) {
    Interp interp(m, kernel, args, nargs, options);
    return interp.run(grid, 0, count);
  }
  // A kernel that waits: every instance at once (interpreter.h). Check the launch once first.
  {
    Interp probe(m, kernel, args, nargs, options);
    TRI_RETURN_IF_ERROR(probe.run(Grid{grid.x, grid.y, grid.z}, 0, 0));
  }
  if (count > kMaxCoresidentPrograms)
    return Status(Code::LimitExceeded,
                  "kernel @" + kernel.name + " waits on signals, so its " + std::to_string(count) +
                      " program instances must all run at once, and the host targets run at most " +
                      std::to_string(kMaxCoresidentPrograms) + "; use a smaller grid");
  std::atomic<bool> stop{false};
  std::vector<Status> results(count);
  Status started = run_coresident(
      count, size_t(16) << 20,
      [&](uint64_t id) {
        Interp interp(m, kernel, args, nargs, options, &stop);
        results[id] = interp.run(grid, id, id + 1);
        if (!results[id].is_ok()) {
          stop.store(true);
          if (options.team && options.team->abort && results[id].code() != Code::Cancelled)
            options.team->abort->store(true);
        }
      },
      &stop);
  // The first real failure; instances that stopped because of it (or a cancel) come last.
  for (const Status& st : results)
    if (!st.is_ok() && st.code() != Code::Cancelled) return st;
  TRI_RETURN_IF_ERROR(started);
  for (const Status& st : results)
    if (!st.is_ok()) return st;
  return Status::ok();
}

}  // namespace tri::interp
