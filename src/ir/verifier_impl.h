// The IR verifier's insides, shared by the files that implement it (verifier.h is its interface):
// the Verifier class, whose members are spread over verifier.cpp (the walk: functions, blocks,
// ops, their structure and attributes, types), verifier_calls.cpp (the call graph: callers,
// recursion, call depth, and the rule of `call`), verifier_rules.cpp (the generic rules of the
// op table and the pieces the rules share) and verifier_custom.cpp (one case per Custom rule of
// ops.def), and the small helpers they share.
#pragma once

#include "ir/verifier.h"

#include <charconv>
#include <climits>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/limits.h"

namespace tri::ir::verify_detail {

struct MathFn {
  const char* name;
  int arity;
};

inline constexpr MathFn kMathFns[] = {
#define TRI_MATH_FN(name, arity) {#name, arity},
#include "ir/math_fns.def"
#undef TRI_MATH_FN
};

inline bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

inline std::string q(const std::string& s) { return "'" + s + "'"; }

inline std::string count_of(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The shortest decimal that reads back as the same double, written as the text format writes
// floats (always with a '.' or an exponent). to_chars ignores the host's locale, which an
// embedding application may have changed.
inline std::string fmt_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  std::string s;
  for (int prec = 1; prec <= 17; ++prec) {
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, prec);
    double back = 0;
    std::from_chars(buf, r.ptr, back);
    s.assign(buf, r.ptr);
    if (back == v) break;
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

inline std::string fmt_ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

inline std::string attr_value_str(const Attr& a) {
  switch (a.kind) {
    case Attr::Kind::Int: return std::to_string(a.i);
    case Attr::Kind::Float: return fmt_float(a.f);
    case Attr::Kind::Bool: return a.i ? "true" : "false";
    case Attr::Kind::Str: return "\"" + a.s + "\"";
    case Attr::Kind::Func: return "@" + a.s;
    case Attr::Kind::Ints: return fmt_ints(a.ints);
    case Attr::Kind::Sym: return a.s;
    case Attr::Kind::Enum: return "enum #" + std::to_string(a.i);
    case Attr::Kind::None: return "nothing";
  }
  return "?";
}

inline const char* attr_kind_desc(Attr::Kind k) {
  switch (k) {
    case Attr::Kind::None: return "nothing";
    case Attr::Kind::Int: return "an integer";
    case Attr::Kind::Float: return "a float";
    case Attr::Kind::Bool: return "a bool";
    case Attr::Kind::Str: return "a string";
    case Attr::Kind::Func: return "a function name";
    case Attr::Kind::Ints: return "a list of integers";
    case Attr::Kind::Enum: return "an enum word";
    case Attr::Kind::Sym: return "a constexpr name";
  }
  return "?";
}

inline std::string join_words(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) s += (i ? "|" : "") + words[i];
  return s;
}

inline std::string spec_kind_desc(const AttrSpec& a) {
  switch (a.kind) {
    case AttrKind::Int: return "an integer or a constexpr name";
    case AttrKind::Num: return "a number, a bool or a constexpr name";
    case AttrKind::Bool: return "a bool";
    case AttrKind::Str: return "a string";
    case AttrKind::Func: return "a function name";
    case AttrKind::Ints: return "a list of integers";
    case AttrKind::Enum: return "one of " + join_words(a.enum_values);
  }
  return "?";
}

inline bool attr_kind_fits(AttrKind spec, Attr::Kind k) {
  switch (spec) {
    case AttrKind::Int: return k == Attr::Kind::Int || k == Attr::Kind::Sym;
    case AttrKind::Num:
      return k == Attr::Kind::Int || k == Attr::Kind::Float || k == Attr::Kind::Bool || k == Attr::Kind::Sym;
    case AttrKind::Bool: return k == Attr::Kind::Bool;
    case AttrKind::Str: return k == Attr::Kind::Str;
    case AttrKind::Func: return k == Attr::Kind::Func;
    case AttrKind::Ints: return k == Attr::Kind::Ints;
    case AttrKind::Enum: return k == Attr::Kind::Enum;
  }
  return false;
}

// Whether integer `v` is a value of the signless type iN (read as signed or as unsigned).
inline bool int_fits(int64_t v, Scalar s) {
  int bits = scalar_bits(s);
  if (bits >= 64) return true;
  if (s == Scalar::I1) return v == 0 || v == 1;
  int64_t lo = -(int64_t(1) << (bits - 1));
  int64_t hi = (int64_t(1) << bits) - 1;
  return v >= lo && v <= hi;
}

inline bool valid_scalar(Scalar s) { return static_cast<int>(s) < kNumScalars; }

inline std::string ordinal_list(int n) {  // "0", "0 or 1", "0 to 2"
  if (n <= 1) return "0";
  if (n == 2) return "0 or 1";
  return "0 to " + std::to_string(n - 1);
}

class Verifier {
 public:
  explicit Verifier(const Module& m) : m_(m), T_(m.types) {}

  Status run();

 private:
  // ---------------------------------------------------------------- diagnostics

  Status err(Loc loc, const std::string& what) const {
    return error_at(Code::Verify, m_.source_name, loc, what);
  }
  const std::string& op_name(OpId o) const { return op_info(f_->op(o).code).name; }
  Status op_err(OpId o, const std::string& what) const { return err(f_->op(o).loc, q(op_name(o)) + " " + what); }
  std::string ts(TypeId t) const { return m_.type_str(t); }
  std::string vname(ValueId v) const {
    if (v < f_->values.size() && !f_->values[v].name.empty()) return "%" + f_->values[v].name;
    return "value #" + std::to_string(v);
  }

  // ---------------------------------------------------------------- types

  // True when the type's ids all lead somewhere, so it can be printed and inspected. Valid types
  // nest two deep (a block of pointers to scalars); the bound only stops a corrupt cycle.
  bool well_formed(TypeId t, int depth = 0) const;

  // "" when a well-formed type obeys the type rules here; otherwise the clause that completes
  // "X has type T, whose ...".
  std::string type_problem(TypeId t);

  // Checks a type where it is declared; `what` names the declaration ("'splat' result").
  Status check_type(TypeId t, Loc loc, const std::string& what);

  // TypeTable interns the scalars first, in enum order (types.cpp), so their ids need no lookup
  // in the (const) table.
  static TypeId scalar_type(Scalar s) { return static_cast<TypeId>(s); }
  TypeId elem(TypeId t) const { return T_.elem_of(t); }
  bool elem_is(TypeId t, Scalar s) const {
    Scalar e;
    return T_.elem_scalar(t, &e) && e == s;
  }
  bool int_elem(TypeId t) const {
    Scalar e;
    return T_.elem_scalar(t, &e) && is_int(e);
  }
  // Integers that count things (offsets, bounds): i1 is a bool, not a number.
  bool index_elem(TypeId t) const { return int_elem(t) && !elem_is(t, Scalar::I1); }
  bool float_elem(TypeId t) const {
    Scalar e;
    return T_.elem_scalar(t, &e) && is_float(e);
  }
  bool ptr_elem(TypeId t) const { return T_.is_ptr(elem(t)); }
  Scalar scalar_of(TypeId t) const;
  const std::vector<Dim>& dims(TypeId t) const { return T_.get(t).dims; }
  std::vector<Dim> dims_or_none(TypeId t) const { return T_.is_block(t) ? dims(t) : std::vector<Dim>{}; }
  bool same_shape(TypeId a, TypeId b) const { return dims_or_none(a) == dims_or_none(b); }
  // Whether t is the type `shape` x `e` (a scalar e when shape is empty).
  bool is_shaped(TypeId t, const std::vector<Dim>& shape, TypeId e) const {
    return dims_or_none(t) == shape && elem(t) == e;
  }
  std::string dim_str(const Dim& d) const { return d.symbolic ? m_.symbols[d.sym] : std::to_string(d.value); }
  // The text of the type `shape` x `e`, which may not exist in the type table.
  std::string shaped_str(const std::vector<Dim>& shape, TypeId e) const;

  // ---------------------------------------------------------------- constexpr names

  // A constexpr name is resolved in the kernel that uses it; a device function's names are
  // resolved in every kernel that calls it (directly or through other device functions).
  // Returns "" or the clause that completes "names X, which ...".
  // `check(c, where)` judges the constexpr found; `where` is "" in a kernel and
  // " in kernel @k (which calls @f)" in a device function.
  template <class Check>
  std::string resolve(const std::string& name, Check check) {
    if (f_->is_kernel) {
      int i = f_->constexpr_index(name);
      if (i < 0) return "is not a constexpr of kernel @" + f_->name;
      return check(f_->constexprs[i], std::string());
    }
    for (size_t k : callers_[fn_]) {
      const Function& kernel = *m_.functions[k];
      int i = kernel.constexpr_index(name);
      if (i < 0) return "is not a constexpr of kernel @" + kernel.name + " (which calls @" + f_->name + ")";
      std::string p = check(kernel.constexprs[i], " in kernel @" + kernel.name + " (which calls @" + f_->name + ")");
      if (!p.empty()) return p;
    }
    return "";  // a device function no kernel calls: its names mean nothing yet
  }

  static std::string need_integer(const Constexpr& c, const std::string& where) {
    if (valid_scalar(c.type) && is_int(c.type) && c.type != Scalar::I1) return "";
    return std::string("is a constexpr of type ") + (valid_scalar(c.type) ? scalar_name(c.type) : "?") + where +
           ", not an integer";
  }
  static std::string need_nothing(const Constexpr&, const std::string&) { return ""; }

  // ---------------------------------------------------------------- call graph

  void build_call_graph();

  // Device functions may not recurse, directly or through others: backends inline calls.
  Status check_recursion();

  // Calls may nest at most kMaxCallDepth deep on every target (the interpreter keeps a frame per
  // call; the other backends inline). With recursion ruled out the call graph is acyclic, so the
  // longest chain of calls from each function is computed once per function.
  Status check_call_depth();

  // ---------------------------------------------------------------- functions

  Status verify_function(size_t index);

  Status check_constexpr(size_t i);

  Status check_param(size_t i);

  // Marks a value defined and visible (dominance), once.
  Status define(ValueId v, Loc loc);

  // ---------------------------------------------------------------- blocks

  // The terminator a region must end with.
  const char* expected_terminator(OpId parent, int region) const;

  std::string region_desc(OpId parent, int region) const;

  Status verify_block(BlockId b, OpId parent, int region, int depth);

  // ---------------------------------------------------------------- ops

  Status verify_op(OpId o, OpId parent, int region, int depth);

  // Counts and ids: operands per slots, dominance of operands, results, regions.
  Status check_structure(OpId o);

  // Presence and kind of every attribute, enum ranges, and constexpr names in int attributes.
  Status check_attrs(OpId o);

  // ---- attribute access (after check_attrs)

  const Attr& attr(OpId o, const char* name) const { return f_->attr(o, name); }
  // The value of an int attribute written as a literal; false when it is a constexpr name.
  bool lit(OpId o, const char* name, int64_t* v) const {
    const Attr& a = attr(o, name);
    if (a.kind != Attr::Kind::Int) return false;
    *v = a.i;
    return true;
  }
  // The index of an enum attribute, its default when absent, or -1 when absent with no default.
  int64_t enum_of(OpId o, const char* name) const {
    const OpInfo& info = op_info(f_->op(o).code);
    int i = info.attr_index(name);
    const Attr& a = f_->op(o).attrs[i];
    if (a.present()) return a.i;
    const AttrSpec& spec = info.attrs[i];
    for (size_t k = 0; k < spec.enum_values.size(); ++k)
      if (spec.has_default && spec.enum_values[k] == spec.default_text) return static_cast<int64_t>(k);
    return -1;
  }
  const std::string& enum_word(OpId o, const char* name, int64_t index) const {
    const OpInfo& info = op_info(f_->op(o).code);
    return info.attrs[info.attr_index(name)].enum_values[index];
  }

  ValueId opnd(OpId o, const char* slot) const { return f_->operand(o, slot); }
  TypeId ty(ValueId v) const { return f_->type_of(v); }
  TypeId res_ty(OpId o, size_t i = 0) const { return ty(f_->op(o).results[i]); }

  // ---- shared pieces of rules

  // `what` has type `t`; it must be `expected_str` (already compared by the caller).
  Status type_is(OpId o, bool ok, const std::string& what, TypeId t, const std::string& expected) {
    if (ok) return Status::ok();
    return op_err(o, what + " has type " + ts(t) + ", expected " + expected);
  }

  Status result_is(OpId o, TypeId expected) {
    TypeId r = res_ty(o);
    return type_is(o, r == expected, "result", r, ts(expected));
  }

  // The operand in `slot` must be a pointer or a block of pointers; gives its pointee.
  Status pointer_operand(OpId o, ValueId p, TypeId* pointee);

  // The `rank` operand of a distributed op: a scalar i32.
  Status rank_operand(OpId o) {
    TypeId r = ty(opnd(o, "rank"));
    return type_is(o, r == scalar_type(Scalar::I32), "rank", r, "i32");
  }

  // A signal: a pointer to i32 or i64 (or, unless scalar_only, a block of them); gives its pointee.
  Status signal_pointer(OpId o, ValueId p, bool scalar_only, TypeId* pointee);

  // An optional i1 mask with the shape of `shape_of`.
  Status mask_operand(OpId o, ValueId shape_of, const std::string& shape_what);

  // A value with the pointer operand's shape and its pointee as the element.
  Status pointee_value(OpId o, ValueId v, const std::string& what, ValueId ptr, TypeId pointee);

  // A literal axis in [0, n).
  Status axis_in(OpId o, int64_t axis, int n) {
    if (axis >= 0 && axis < n) return Status::ok();
    return op_err(o, "attribute 'axis' is " + std::to_string(axis) + ", expected " + ordinal_list(n));
  }

  // Compares the values a terminator hands on with what its place expects: the count, then each
  // type. `whose` names the receiver: "the enclosing 'for'", "the results of @f"; `item(i)` names
  // one expected type in it.
  template <class Item>
  Status types_match(OpId o, const std::vector<ValueId>& vals, const std::vector<TypeId>& want, const char* verb,
                     const std::string& whose, Item item) {
    if (vals.size() != want.size())
      return op_err(o, std::string(verb) + " " + count_of(vals.size(), "value", "values") + ", expected " +
                           std::to_string(want.size()) + " for " + whose);
    for (size_t i = 0; i < vals.size(); ++i)
      if (ty(vals[i]) != want[i])
        return op_err(o, "value " + std::to_string(i) + " has type " + ts(ty(vals[i])) + ", expected " +
                             ts(want[i]) + " for " + item(i));
    return Status::ok();
  }

  std::vector<TypeId> types_of(const std::vector<ValueId>& vals) const;

  // What a yield in region `region` of `parent` must give.
  std::vector<TypeId> yield_types(OpId parent) const;

  // ---- the generic rules

  // What makes operands of types `a` and `b` match, when it is one op away: a scalar next to a
  // block of its type is splat to it; blocks of one element type and different ranks or sizes
  // are matched with expand_dims and broadcast. "" otherwise.
  std::string shape_hint(TypeId a, TypeId b);

  Status check_elementwise(OpId o);

  Status check_cast(OpId o);

  // ---- the Custom rules: one case per op

  Status check_rule(OpId o, OpId parent, int region);

  // for: its results are the carried values, one per initial value and of its type.
  Status results_match_inits(OpId o, const std::vector<ValueId>& inits);

  Status check_reduce_scan(OpId o);

  Status check_dot(OpId o);

  Status check_call(OpId o);

  struct Edge {
    size_t callee;
    Loc loc;
  };

  const Module& m_;
  const TypeTable& T_;
  std::unordered_map<std::string, size_t> fn_index_;
  std::vector<std::vector<Edge>> callees_;
  std::vector<std::vector<size_t>> callers_;  // per device function: the kernels that run it

  // The function being verified.
  size_t fn_ = 0;
  const Function* f_ = nullptr;
  std::vector<uint8_t> type_ok_;       // types already found valid here (validity may depend on constexprs)
  std::unordered_map<std::string, ValueId> names_;  // the last value given each name
  std::vector<uint8_t> seen_;          // values defined so far
  std::vector<uint8_t> visible_;       // values defined so far in an enclosing block (dominance)
  std::vector<uint8_t> block_seen_;
  std::unordered_set<OpId> op_seen_;
};

}  // namespace tri::ir::verify_detail
