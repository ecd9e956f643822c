// The IR verifier (verifier.h): checks a module against every structural and typing rule of
// docs/ir.md and the op table, and reports the first violation as one located message that
// names the op, what it found and what it expected. Generic rules (operand slots, result and
// region counts, attribute kinds, the EwNum/EwInt/EwFloat/Cast typing rules) are driven by
// op_info(); every Custom rule of ops.def is one case of the switch in Verifier::check_rule, so
// an op's typing lives in one place. The verifier must accept nothing the backends cannot run
// and must never crash on a module a reader built from untrusted bytes, so ids are checked
// before they are followed. It checks in the order a reader meets the text, and stops at the
// first error so that one mistake gives one message, not a cascade.
#include "ir/verifier.h"

#include <charconv>
#include <climits>
#include <cmath>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/limits.h"

namespace tri::ir {
namespace {

struct MathFn {
  const char* name;
  int arity;
};

constexpr MathFn kMathFns[] = {
#define TRI_MATH_FN(name, arity) {#name, arity},
#include "ir/math_fns.def"
#undef TRI_MATH_FN
};

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string q(const std::string& s) { return "'" + s + "'"; }

std::string count_of(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The shortest decimal that reads back as the same double, written as the text format writes
// floats (always with a '.' or an exponent). to_chars ignores the host's locale, which an
// embedding application may have changed.
std::string fmt_float(double v) {
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

std::string fmt_ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string attr_value_str(const Attr& a) {
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

const char* attr_kind_desc(Attr::Kind k) {
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

std::string join_words(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) s += (i ? "|" : "") + words[i];
  return s;
}

std::string spec_kind_desc(const AttrSpec& a) {
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

bool attr_kind_fits(AttrKind spec, Attr::Kind k) {
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
bool int_fits(int64_t v, Scalar s) {
  int bits = scalar_bits(s);
  if (bits >= 64) return true;
  if (s == Scalar::I1) return v == 0 || v == 1;
  int64_t lo = -(int64_t(1) << (bits - 1));
  int64_t hi = (int64_t(1) << bits) - 1;
  return v >= lo && v <= hi;
}

bool valid_scalar(Scalar s) { return static_cast<int>(s) < kNumScalars; }

std::string ordinal_list(int n) {  // "0", "0 or 1", "0 to 2"
  if (n <= 1) return "0";
  if (n == 2) return "0 or 1";
  return "0 to " + std::to_string(n - 1);
}

class Verifier {
 public:
  explicit Verifier(const Module& m) : m_(m), T_(m.types) {}

  Status run() {
    // Names first: calls and constexpr resolution look functions up by name.
    for (size_t i = 0; i < m_.functions.size(); ++i) {
      const Function& f = *m_.functions[i];
      if (!fn_index_.emplace(f.name, i).second)
        return err(f.loc, "function @" + f.name + " is defined twice");
    }
    build_call_graph();
    for (size_t i = 0; i < m_.functions.size(); ++i) TRI_RETURN_IF_ERROR(verify_function(i));
    TRI_RETURN_IF_ERROR(check_recursion());
    return check_call_depth();
  }

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
  bool well_formed(TypeId t, int depth = 0) const {
    if (t >= T_.size() || depth > 8) return false;
    const TypeData& d = T_.get(t);
    switch (d.kind) {
      case TypeKind::Scalar: return valid_scalar(d.scalar);
      case TypeKind::Ptr: return well_formed(d.pointee, depth + 1);
      case TypeKind::Block:
        if (d.elem >= T_.size() || T_.is_block(d.elem) || !well_formed(d.elem, depth + 1)) return false;
        for (const Dim& dim : d.dims)
          if (dim.symbolic && dim.sym >= m_.symbols.size()) return false;
        return true;
    }
    return false;
  }

  // "" when a well-formed type obeys the type rules here; otherwise the clause that completes
  // "X has type T, whose ...".
  std::string type_problem(TypeId t) {
    if (t < type_ok_.size() && type_ok_[t]) return "";
    const TypeData& d = T_.get(t);
    std::string p;
    if (d.kind == TypeKind::Ptr) {
      if (!T_.is_scalar(d.pointee)) p = "pointee " + ts(d.pointee) + " is not a scalar";
    } else if (d.kind == TypeKind::Block) {
      if (d.dims.empty() || d.dims.size() > static_cast<size_t>(kMaxBlockRank)) {
        p = "rank " + std::to_string(d.dims.size()) + " is not 1 to " + std::to_string(kMaxBlockRank);
      } else if (T_.is_ptr(d.elem) && !T_.is_scalar(T_.get(d.elem).pointee)) {
        p = "element " + ts(d.elem) + " is not a pointer to a scalar";
      } else {
        for (const Dim& dim : d.dims) {
          if (dim.symbolic) {
            const std::string& name = m_.symbols[dim.sym];
            std::string r = resolve(name, need_integer);
            if (!r.empty()) {
              p = "dimension " + name + " " + r;
              break;
            }
          } else if (!is_pow2(dim.value)) {
            p = "dimension " + std::to_string(dim.value) + " is not a power of two";
            break;
          } else if (dim.value > kMaxDim) {
            p = "dimension " + std::to_string(dim.value) + " exceeds the limit " + std::to_string(kMaxDim);
            break;
          }
        }
        // The element count of the concrete dimensions (all of them once specialized). Each is a
        // power of two, so the count is 2^(sum of their log2s) and is computed without overflow.
        if (p.empty()) {
          int total = 0;
          for (const Dim& dim : d.dims)
            if (!dim.symbolic) total += __builtin_ctzll(static_cast<uint64_t>(dim.value));
          if (total > __builtin_ctzll(static_cast<uint64_t>(kMaxBlockElements)))
            p = "element count 2^" + std::to_string(total) + " exceeds the limit of " +
                std::to_string(kMaxBlockElements) + " (2^20) elements per block; use smaller block dimensions";
        }
      }
    }
    if (p.empty()) {
      if (t >= type_ok_.size()) type_ok_.resize(t + 1, 0);
      type_ok_[t] = 1;
    }
    return p;
  }

  // Checks a type where it is declared; `what` names the declaration ("'splat' result").
  Status check_type(TypeId t, Loc loc, const std::string& what) {
    if (!well_formed(t)) return err(loc, what + " has a malformed type (id " + std::to_string(t) + ")");
    std::string p = type_problem(t);
    if (!p.empty()) return err(loc, what + " has type " + ts(t) + ", whose " + p);
    return Status::ok();
  }

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
  Scalar scalar_of(TypeId t) const {
    Scalar e = Scalar::I32;
    T_.elem_scalar(t, &e);
    return e;
  }
  const std::vector<Dim>& dims(TypeId t) const { return T_.get(t).dims; }
  std::vector<Dim> dims_or_none(TypeId t) const { return T_.is_block(t) ? dims(t) : std::vector<Dim>{}; }
  bool same_shape(TypeId a, TypeId b) const { return dims_or_none(a) == dims_or_none(b); }
  // Whether t is the type `shape` x `e` (a scalar e when shape is empty).
  bool is_shaped(TypeId t, const std::vector<Dim>& shape, TypeId e) const {
    return dims_or_none(t) == shape && elem(t) == e;
  }
  std::string dim_str(const Dim& d) const { return d.symbolic ? m_.symbols[d.sym] : std::to_string(d.value); }
  // The text of the type `shape` x `e`, which may not exist in the type table.
  std::string shaped_str(const std::vector<Dim>& shape, TypeId e) const {
    if (shape.empty()) return ts(e);
    std::string s = "<";
    for (const Dim& d : shape) s += dim_str(d) + " x ";
    return s + ts(e) + ">";
  }

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

  void build_call_graph() {
    size_t n = m_.functions.size();
    callees_.assign(n, {});
    callers_.assign(n, {});
    // Only calls reachable from the body count: a pass may leave dead ops in the op table.
    const int callee_attr = op_info(Opcode::Call).attr_index("callee");
    for (size_t i = 0; i < n; ++i) {
      const Function& f = *m_.functions[i];
      if (f.body >= f.blocks.size()) continue;
      std::vector<uint8_t> visited(f.blocks.size(), 0);
      std::vector<BlockId> work{f.body};
      visited[f.body] = 1;
      while (!work.empty()) {
        BlockId b = work.back();
        work.pop_back();
        for (OpId o : f.blocks[b].ops) {
          if (o >= f.ops.size()) continue;
          const OpData& d = f.ops[o];
          for (BlockId r : d.regions)
            if (r < f.blocks.size() && !visited[r]) {
              visited[r] = 1;
              work.push_back(r);
            }
          if (static_cast<uint32_t>(d.code) >= kNumOpcodes || d.code != Opcode::Call) continue;
          if (d.attrs.size() <= static_cast<size_t>(callee_attr) || d.attrs[callee_attr].kind != Attr::Kind::Func)
            continue;
          auto it = fn_index_.find(d.attrs[callee_attr].s);
          if (it != fn_index_.end()) callees_[i].push_back({it->second, d.loc});
        }
      }
    }
    // Each kernel's reach: the device functions it runs, which take its constexprs.
    for (size_t k = 0; k < n; ++k) {
      if (!m_.functions[k]->is_kernel) continue;
      std::vector<uint8_t> seen(n, 0);
      std::vector<size_t> stack{k};
      seen[k] = 1;
      while (!stack.empty()) {
        size_t f = stack.back();
        stack.pop_back();
        for (const Edge& e : callees_[f]) {
          if (seen[e.callee] || m_.functions[e.callee]->is_kernel) continue;
          seen[e.callee] = 1;
          callers_[e.callee].push_back(k);
          stack.push_back(e.callee);
        }
      }
    }
  }

  // Device functions may not recurse, directly or through others: backends inline calls.
  Status check_recursion() {
    size_t n = m_.functions.size();
    std::vector<uint8_t> color(n, 0);  // 0 new, 1 on the path, 2 done
    std::vector<size_t> path;
    for (size_t root = 0; root < n; ++root) {
      if (color[root]) continue;
      // Iterative DFS: (function, next edge index).
      std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
      color[root] = 1;
      path.assign(1, root);
      while (!stack.empty()) {
        auto& [f, next] = stack.back();
        if (next == callees_[f].size()) {
          color[f] = 2;
          stack.pop_back();
          path.pop_back();
          continue;
        }
        const Edge& e = callees_[f][next++];
        if (color[e.callee] == 1) {
          std::string cycle;
          bool on = false;
          for (size_t p : path) {
            on = on || p == e.callee;
            if (on) cycle += "@" + m_.functions[p]->name + " -> ";
          }
          cycle += "@" + m_.functions[e.callee]->name;
          return err(e.loc, "'call' of @" + m_.functions[e.callee]->name + " is recursive: " + cycle);
        }
        if (color[e.callee] == 0) {
          color[e.callee] = 1;
          path.push_back(e.callee);
          stack.push_back({e.callee, 0});
        }
      }
    }
    return Status::ok();
  }

  // Calls may nest at most kMaxCallDepth deep on every target (the interpreter keeps a frame per
  // call; the other backends inline). With recursion ruled out the call graph is acyclic, so the
  // longest chain of calls from each function is computed once per function.
  Status check_call_depth() {
    const size_t n = m_.functions.size();
    std::vector<int> depth(n, -1);  // calls in the longest chain starting at the function
    std::vector<size_t> next(n, 0);  // (the callee it goes through is kept for the message)
    std::vector<size_t> via(n, SIZE_MAX);
    for (size_t root = 0; root < n; ++root) {
      if (depth[root] >= 0) continue;
      std::vector<size_t> stack{root};
      while (!stack.empty()) {
        size_t f = stack.back();
        if (next[f] < callees_[f].size()) {
          size_t c = callees_[f][next[f]++].callee;
          if (depth[c] < 0) stack.push_back(c);
          continue;
        }
        int d = 0;
        for (const Edge& e : callees_[f])
          if (depth[e.callee] + 1 > d) {
            d = depth[e.callee] + 1;
            via[f] = e.callee;
          }
        depth[f] = d;
        stack.pop_back();
      }
      if (depth[root] > kMaxCallDepth) {
        std::string chain = "@" + m_.functions[root]->name;
        size_t f = root;
        for (int shown = 0; via[f] != SIZE_MAX && shown < 4; ++shown) {
          f = via[f];
          chain += " -> @" + m_.functions[f]->name;
        }
        if (via[f] != SIZE_MAX) chain += " -> ...";
        return error_at(Code::LimitExceeded, m_.source_name, m_.functions[root]->loc,
                        "calls from @" + m_.functions[root]->name + " nest " + std::to_string(depth[root]) +
                            " deep (" + chain + "), over the limit of " + std::to_string(kMaxCallDepth) +
                            " nested calls (kMaxCallDepth); inline some of the device functions");
      }
    }
    return Status::ok();
  }

  // ---------------------------------------------------------------- functions

  Status verify_function(size_t index) {
    fn_ = index;
    f_ = m_.functions[index].get();
    const Function& f = *f_;
    type_ok_.clear();
    names_.clear();
    seen_.assign(f.values.size(), 0);
    visible_.assign(f.values.size(), 0);
    block_seen_.assign(f.blocks.size(), 0);
    op_seen_.clear();
    const std::string fn = "@" + f.name;

    if (f.params.size() > kMaxParams)
      return error_at(Code::LimitExceeded, m_.source_name, f.loc,
                      fn + " has " + std::to_string(f.params.size()) + " parameters, more than the limit of " +
                          std::to_string(kMaxParams) + " (kMaxParams); pass the values through a buffer");
    if (f.constexprs.size() > kMaxConstexprs)
      return error_at(Code::LimitExceeded, m_.source_name, f.loc,
                      fn + " has " + std::to_string(f.constexprs.size()) + " constexprs, more than the limit of " +
                          std::to_string(kMaxConstexprs) + " (kMaxConstexprs)");
    if (f.is_kernel && !f.results.empty())
      return err(f.loc, "kernel " + fn + " has results; a kernel returns nothing");
    if (!f.is_kernel && !f.constexprs.empty())
      return err(f.constexprs[0].loc, "device function " + fn + " declares constexprs; only kernels have them");
    for (size_t i = 0; i < f.constexprs.size(); ++i) TRI_RETURN_IF_ERROR(check_constexpr(i));

    if (f.body >= f.blocks.size()) return err(f.loc, "function " + fn + " has no body");
    block_seen_[f.body] = 1;
    const BlockData& body = f.block(f.body);
    if (body.args.size() != f.params.size())
      return err(f.loc, "body of " + fn + " has " + count_of(body.args.size(), "argument", "arguments") + " for " +
                            count_of(f.params.size(), "parameter", "parameters"));
    for (size_t i = 0; i < f.params.size(); ++i) TRI_RETURN_IF_ERROR(check_param(i));
    for (size_t i = 0; i < f.results.size(); ++i)
      TRI_RETURN_IF_ERROR(check_type(f.results[i], f.loc, "result " + std::to_string(i) + " of " + fn));
    return verify_block(f.body, kNoOp, 0, 0);
  }

  Status check_constexpr(size_t i) {
    const Constexpr& c = f_->constexprs[i];
    for (size_t j = 0; j < i; ++j)
      if (f_->constexprs[j].name == c.name) return err(c.loc, "constexpr " + c.name + " is declared twice");
    if (!valid_scalar(c.type)) return err(c.loc, "constexpr " + c.name + " has an invalid type");
    const Attr& d = c.default_value;
    if (!d.present()) return Status::ok();
    bool ok = false;
    if (c.type == Scalar::I1) {
      ok = d.kind == Attr::Kind::Bool || (d.kind == Attr::Kind::Int && (d.i == 0 || d.i == 1));
    } else if (is_int(c.type)) {
      ok = d.kind == Attr::Kind::Int && int_fits(d.i, c.type);
    } else {
      ok = d.kind == Attr::Kind::Float || d.kind == Attr::Kind::Int;
    }
    if (!ok)
      return err(c.loc, "constexpr " + c.name + " of type " + scalar_name(c.type) + " has default " +
                            attr_value_str(d) + ", which is not a value of that type");
    return Status::ok();
  }

  Status check_param(size_t i) {
    const Param& p = f_->params[i];
    const std::string what = "parameter %" + p.name + " of @" + f_->name;
    ValueId v = f_->block(f_->body).args[i];
    if (p.value != v || v >= f_->values.size() || f_->values[v].type != p.type)
      return err(p.loc, what + " is not argument " + std::to_string(i) + " of the body");
    TRI_RETURN_IF_ERROR(check_type(p.type, p.loc, what));
    if (f_->is_kernel && T_.is_block(p.type))
      return err(p.loc, what + " has type " + ts(p.type) + "; kernel parameters are scalars or pointers");
    if (p.align != 0) {
      if (!T_.is_ptr(p.type)) return err(p.loc, what + " has 'align' but is not a pointer");
      if (!is_pow2(p.align))
        return err(p.loc, what + " has align=" + std::to_string(p.align) + ", expected a power of two");
    }
    if (p.divisible != 0 && !(T_.is_scalar(p.type) && index_elem(p.type)))
      return err(p.loc, what + " has 'divisible' but is not an integer");
    if (p.noalias && !T_.is_ptr(p.type)) return err(p.loc, what + " has 'noalias' but is not a pointer");
    return define(v, p.loc);
  }

  // Marks a value defined and visible (dominance), once.
  Status define(ValueId v, Loc loc) {
    if (seen_[v]) return err(loc, vname(v) + " is defined twice");
    seen_[v] = visible_[v] = 1;
    // Names are scoped by region (docs/ir.md, "Text format"): a name may be reused once the value
    // that had it is out of scope, but never while that value is visible.
    const std::string& name = f_->values[v].name;
    if (name.empty()) return Status::ok();
    auto [it, fresh] = names_.emplace(name, v);
    if (!fresh) {
      if (visible_[it->second] && it->second != v) return err(loc, "value name %" + name + " is defined twice");
      it->second = v;
    }
    return Status::ok();
  }

  // ---------------------------------------------------------------- blocks

  // The terminator a region must end with.
  const char* expected_terminator(OpId parent, int region) const {
    if (parent == kNoOp) return "return";
    if (f_->op(parent).code == Opcode::While && region == 0) return "condition";
    return "yield";
  }

  std::string region_desc(OpId parent, int region) const {
    if (parent == kNoOp) return "body of @" + f_->name;
    const OpData& d = f_->op(parent);
    if (d.regions.size() == 1) return "region of " + q(op_name(parent));
    return "region " + std::to_string(region) + " of " + q(op_name(parent));
  }

  Status verify_block(BlockId b, OpId parent, int region, int depth) {
    if (depth > kMaxNesting)
      return Status(Code::LimitExceeded,
                    format_diag(m_.source_name, parent == kNoOp ? f_->loc : f_->op(parent).loc,
                                "regions nested deeper than " + std::to_string(kMaxNesting)));
    const BlockData& blk = f_->block(b);
    Loc owner_loc = parent == kNoOp ? f_->loc : f_->op(parent).loc;
    std::vector<ValueId> defined;
    if (parent != kNoOp) {  // the body's arguments are the parameters, defined by check_param
      for (ValueId a : blk.args) {
        TRI_RETURN_IF_ERROR(check_type(f_->type_of(a), owner_loc,
                                       q(op_name(parent)) + " region argument " + vname(a)));
        TRI_RETURN_IF_ERROR(define(a, owner_loc));
        defined.push_back(a);
      }
    } else {
      defined = blk.args;
    }
    for (size_t i = 0; i < blk.ops.size(); ++i) {
      OpId o = blk.ops[i];
      if (o >= f_->ops.size() || op_seen_.count(o))
        return err(owner_loc, region_desc(parent, region) + " holds an invalid op (id " + std::to_string(o) + ")");
      op_seen_.insert(o);
      if (static_cast<uint32_t>(f_->op(o).code) >= kNumOpcodes)
        return err(f_->op(o).loc, "op has an invalid opcode " + std::to_string(static_cast<int>(f_->op(o).code)));
      bool last = i + 1 == blk.ops.size();
      if (op_info(f_->op(o).code).is_terminator() && !last)
        return op_err(o, "must be the last op of its region");
      TRI_RETURN_IF_ERROR(verify_op(o, parent, region, depth));
      for (ValueId r : f_->op(o).results) defined.push_back(r);
    }
    const char* term = expected_terminator(parent, region);
    if (blk.ops.empty())
      return err(blk.loc.known() ? blk.loc : owner_loc,
                 region_desc(parent, region) + " is empty; it must end with '" + term + "'");
    OpId last = blk.ops.back();
    if (!op_info(f_->op(last).code).is_terminator())
      return err(f_->op(last).loc, region_desc(parent, region) + " ends with " + q(op_name(last)) +
                                       "; it must end with '" + term + "'");
    for (ValueId v : defined) visible_[v] = 0;
    return Status::ok();
  }

  // ---------------------------------------------------------------- ops

  Status verify_op(OpId o, OpId parent, int region, int depth) {
    TRI_RETURN_IF_ERROR(check_structure(o));
    TRI_RETURN_IF_ERROR(check_attrs(o));
    TRI_RETURN_IF_ERROR(check_rule(o, parent, region));
    const OpData& d = f_->op(o);
    for (size_t i = 0; i < d.regions.size(); ++i)
      TRI_RETURN_IF_ERROR(verify_block(d.regions[i], o, static_cast<int>(i), depth + 1));
    // Results become visible after the op, so its own regions cannot use them.
    for (ValueId r : d.results) TRI_RETURN_IF_ERROR(define(r, d.loc));
    return Status::ok();
  }

  // Counts and ids: operands per slots, dominance of operands, results, regions.
  Status check_structure(OpId o) {
    const OpData& d = f_->op(o);
    const OpInfo& info = op_info(d.code);
    int nregions = static_cast<int>(d.regions.size());
    if (nregions < info.min_regions || nregions > info.max_regions) {
      std::string want = info.min_regions == info.max_regions
                             ? std::to_string(info.min_regions)
                             : std::to_string(info.min_regions) + " or " + std::to_string(info.max_regions);
      if (info.max_regions - info.min_regions > 1)
        want = std::to_string(info.min_regions) + " to " + std::to_string(info.max_regions);
      return op_err(o, "has " + count_of(nregions, "region", "regions") + ", expected " + want);
    }

    size_t nreq = 0, nopt = 0;
    const OperandSlot* var = nullptr;
    for (const OperandSlot& s : info.operands) {
      if (s.kind == SlotKind::Required) ++nreq;
      if (s.kind == SlotKind::Optional) ++nopt;
      if (s.kind == SlotKind::Variadic || s.kind == SlotKind::Variadic1) var = &s;
    }
    if (d.operands.size() < nopt)
      return op_err(o, "has " + count_of(d.operands.size(), "operand entry", "operand entries") + "; its " +
                           std::to_string(nopt) + " optional slots need one entry each");
    size_t npos = d.operands.size() - nopt;  // required + variadic
    const char* noun = nopt ? "positional operand" : "operand";
    const char* nouns = nopt ? "positional operands" : "operands";
    if (!var && npos != nreq)
      return op_err(o, "takes " + count_of(nreq, noun, nouns) + ", got " + std::to_string(npos));
    if (var && npos < nreq)
      return op_err(o, "takes at least " + count_of(nreq, noun, nouns) + ", got " + std::to_string(npos));
    if (var && var->kind == SlotKind::Variadic1 && npos == nreq)
      return op_err(o, "needs at least one value for '" + var->name + "'");
    for (size_t i = 0; i < d.operands.size(); ++i) {
      ValueId v = d.operands[i];
      if (v == kNoValue) {
        if (i < npos) return op_err(o, "has an empty operand " + std::to_string(i));
        continue;
      }
      if (v >= f_->values.size())
        return op_err(o, "operand " + std::to_string(i) + " is not a value of @" + f_->name);
      if (!visible_[v]) {
        if (seen_[v]) return op_err(o, "uses " + vname(v) + ", which is defined in a region that does not enclose it");
        return op_err(o, "uses " + vname(v) + " before its definition");
      }
    }

    if (info.num_results >= 0 && d.results.size() != static_cast<size_t>(info.num_results))
      return op_err(o, "has " + count_of(d.results.size(), "result", "results") + ", expected " +
                           std::to_string(info.num_results));
    for (size_t i = 0; i < d.results.size(); ++i) {
      ValueId r = d.results[i];
      if (r >= f_->values.size()) return op_err(o, "result " + std::to_string(i) + " is not a value of @" + f_->name);
      std::string what = d.results.size() == 1 ? "result" : "result " + std::to_string(i);
      TRI_RETURN_IF_ERROR(check_type(f_->type_of(r), d.loc, q(info.name) + " " + what));
    }
    for (size_t i = 0; i < d.regions.size(); ++i) {
      BlockId b = d.regions[i];
      if (b >= f_->blocks.size() || block_seen_[b] || b == f_->body)
        return op_err(o, "region " + std::to_string(i) + " is not a block of its own");
      block_seen_[b] = 1;
      for (ValueId a : f_->block(b).args)
        if (a >= f_->values.size() || !well_formed(f_->type_of(a)))
          return op_err(o, "region " + std::to_string(i) + " has a malformed argument");
    }
    return Status::ok();
  }

  // Presence and kind of every attribute, enum ranges, and constexpr names in int attributes.
  Status check_attrs(OpId o) {
    const OpData& d = f_->op(o);
    const OpInfo& info = op_info(d.code);
    if (d.attrs.size() != info.attrs.size())
      return op_err(o, "has " + count_of(d.attrs.size(), "attribute entry", "attribute entries") + ", expected " +
                           std::to_string(info.attrs.size()));
    for (size_t i = 0; i < info.attrs.size(); ++i) {
      const AttrSpec& spec = info.attrs[i];
      const Attr& a = d.attrs[i];
      const std::string what = "attribute '" + spec.name + "'";
      if (!a.present()) {
        if (!spec.optional) return op_err(o, "needs " + what);
        continue;
      }
      if (!attr_kind_fits(spec.kind, a.kind))
        return op_err(o, what + " must be " + spec_kind_desc(spec) + ", got " + attr_kind_desc(a.kind));
      if (spec.kind == AttrKind::Enum && (a.i < 0 || a.i >= static_cast<int64_t>(spec.enum_values.size())))
        return op_err(o, what + " has enum index " + std::to_string(a.i) + ", expected one of " +
                             join_words(spec.enum_values));
      if (spec.kind == AttrKind::Str && a.s.size() > kMaxStringBytes)
        return op_err(o, what + " is longer than " + std::to_string(kMaxStringBytes) + " bytes");
      if (a.kind == Attr::Kind::Sym) {
        std::string p = spec.kind == AttrKind::Int ? resolve(a.s, need_integer) : resolve(a.s, need_nothing);
        if (!p.empty()) return op_err(o, what + " names " + a.s + ", which " + p);
      }
    }
    return Status::ok();
  }

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
  Status pointer_operand(OpId o, ValueId p, TypeId* pointee) {
    if (!ptr_elem(ty(p)))
      return op_err(o, "pointer has type " + ts(ty(p)) + ", expected a pointer or a block of pointers");
    *pointee = T_.get(elem(ty(p))).pointee;
    return Status::ok();
  }

  // The `rank` operand of a distributed op: a scalar i32.
  Status rank_operand(OpId o) {
    TypeId r = ty(opnd(o, "rank"));
    return type_is(o, r == scalar_type(Scalar::I32), "rank", r, "i32");
  }

  // A signal: a pointer to i32 or i64 (or, unless scalar_only, a block of them); gives its pointee.
  Status signal_pointer(OpId o, ValueId p, bool scalar_only, TypeId* pointee) {
    TypeId t = ty(p);
    bool ok = ptr_elem(t) && (!scalar_only || !T_.is_block(t));
    if (ok) {
      *pointee = T_.get(elem(t)).pointee;
      ok = *pointee == scalar_type(Scalar::I32) || *pointee == scalar_type(Scalar::I64);
    }
    if (ok) return Status::ok();
    return op_err(o, std::string(p == opnd(o, "ptr") ? "pointer" : "signal") + " has type " + ts(t) + ", expected " +
                         (scalar_only ? "ptr<i32> or ptr<i64> (a signal)"
                                      : "ptr<i32> or ptr<i64> or a block of them (signals)"));
  }

  // An optional i1 mask with the shape of `shape_of`.
  Status mask_operand(OpId o, ValueId shape_of, const std::string& shape_what) {
    ValueId m = opnd(o, "mask");
    if (m == kNoValue) return Status::ok();
    TypeId i1 = scalar_type(Scalar::I1);
    std::vector<Dim> shape = dims_or_none(ty(shape_of));
    if (is_shaped(ty(m), shape, i1)) return Status::ok();
    return op_err(o, "mask has type " + ts(ty(m)) + ", expected " + shaped_str(shape, i1) + " (the shape of " +
                         shape_what + ")");
  }

  // A value with the pointer operand's shape and its pointee as the element.
  Status pointee_value(OpId o, ValueId v, const std::string& what, ValueId ptr, TypeId pointee) {
    std::vector<Dim> shape = dims_or_none(ty(ptr));
    if (is_shaped(ty(v), shape, pointee)) return Status::ok();
    return op_err(o, what + " has type " + ts(ty(v)) + ", expected " + shaped_str(shape, pointee));
  }

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

  std::vector<TypeId> types_of(const std::vector<ValueId>& vals) const {
    std::vector<TypeId> t;
    for (ValueId v : vals) t.push_back(ty(v));
    return t;
  }

  // What a yield in region `region` of `parent` must give.
  std::vector<TypeId> yield_types(OpId parent) const {
    const OpData& p = f_->op(parent);
    switch (p.code) {
      case Opcode::For:
      case Opcode::While: return types_of(f_->variadic(parent));
      case Opcode::If: return types_of(p.results);
      case Opcode::Reduce:
      case Opcode::Scan: {
        std::vector<TypeId> t;
        for (ValueId v : f_->variadic(parent)) t.push_back(elem(ty(v)));
        return t;
      }
      default: return {};
    }
  }

  // ---- the generic rules

  // What makes operands of types `a` and `b` match, when it is one op away: a scalar next to a
  // block of its type is splat to it; blocks of one element type and different ranks or sizes
  // are matched with expand_dims and broadcast. "" otherwise.
  std::string shape_hint(TypeId a, TypeId b) {
    const bool ba = T_.is_block(a), bb = T_.is_block(b);
    if (ba != bb) {
      TypeId block = ba ? a : b, scalar = ba ? b : a;
      if (elem(block) == scalar)
        return " (a scalar joins a block through 'splat': `%v = splat %s : " + ts(block) + "`)";
      return "";
    }
    if (!ba || elem(a) != elem(b)) return "";
    if (T_.rank(a) != T_.rank(b))
      return " (blocks of different ranks: add dimensions of size 1 with 'expand_dims[axis=A]', then 'broadcast' "
             "both to one shape)";
    for (int i = 0; i < T_.rank(a); ++i) {
      const Dim &x = dims(a)[i], &y = dims(b)[i];
      if (x != y && x != Dim::lit(1) && y != Dim::lit(1)) return "";
    }
    return " ('broadcast' grows the dimensions of size 1 to match)";
  }

  Status check_elementwise(OpId o) {
    const OpData& d = f_->op(o);
    const OpInfo& info = op_info(d.code);
    TypeId t = ty(d.operands[0]);
    for (size_t i = 1; i < d.operands.size(); ++i)
      if (ty(d.operands[i]) != t)
        return op_err(o, "operands have types " + ts(t) + " and " + ts(ty(d.operands[i])) +
                             shape_hint(t, ty(d.operands[i])));
    bool ok = info.rule == OpRule::EwInt ? int_elem(t)
              : info.rule == OpRule::EwFloat ? float_elem(t)
                                             : int_elem(t) || float_elem(t);
    if (!ok) {
      const char* want = info.rule == OpRule::EwInt ? "integers" : info.rule == OpRule::EwFloat ? "floats"
                                                                                                : "integers or floats";
      return op_err(o, std::string(d.operands.size() == 1 ? "operand has type " : "operands have type ") + ts(t) +
                           ", expected " + want);
    }
    return result_is(o, t);
  }

  Status check_cast(OpId o) {
    TypeId src = ty(f_->op(o).operands[0]);
    TypeId dst = res_ty(o);
    if (!same_shape(src, dst))
      return op_err(o, "result has type " + ts(dst) + ", expected the shape of its operand " + ts(src));
    TypeId se = elem(src), de = elem(dst);
    bool sp = T_.is_ptr(se), dp = T_.is_ptr(de);
    Scalar s = scalar_of(se), t = scalar_of(de);
    bool si = !sp && is_int(s), sf = !sp && is_float(s);
    bool di = !dp && is_int(t), df = !dp && is_float(t);
    int sb = sp ? 64 : scalar_bits(s), db = dp ? 64 : scalar_bits(t);
    bool ok = false;
    const char* rule = "";
    switch (f_->op(o).code) {
      case Opcode::Trunc: ok = si && di && db < sb; rule = "an integer to a narrower integer"; break;
      case Opcode::ZExt:
      case Opcode::SExt: ok = si && di && db > sb; rule = "an integer to a wider integer"; break;
      case Opcode::FPTrunc: ok = sf && df && db < sb; rule = "a float to a narrower float"; break;
      case Opcode::FPExt: ok = sf && df && db > sb; rule = "a float to a wider float"; break;
      case Opcode::FPToSI:
      case Opcode::FPToUI: ok = sf && di; rule = "a float to an integer"; break;
      case Opcode::SIToFP:
      case Opcode::UIToFP: ok = si && df; rule = "an integer to a float"; break;
      case Opcode::Bitcast:
        ok = (sp && dp) || (!sp && !dp && sb == db);
        rule = "between types of one bit width, or between pointers";
        break;
      case Opcode::PtrToInt: ok = sp && !dp && t == Scalar::I64; rule = "a pointer to i64"; break;
      case Opcode::IntToPtr: ok = !sp && s == Scalar::I64 && dp; rule = "i64 to a pointer"; break;
      default: break;
    }
    if (!ok) return op_err(o, std::string("casts ") + rule + ", not " + ts(se) + " to " + ts(de));
    return Status::ok();
  }

  // ---- the Custom rules: one case per op

  Status check_rule(OpId o, OpId parent, int region) {
    const OpData& d = f_->op(o);
    switch (d.code) {
      case Opcode::ProgramId:
      case Opcode::NumPrograms: {
        int64_t axis;
        if (lit(o, "axis", &axis) && (axis < 0 || axis > 2))
          return op_err(o, "attribute 'axis' is " + std::to_string(axis) + ", expected 0, 1 or 2");
        return result_is(o, scalar_type(Scalar::I32));
      }

      case Opcode::Const: {
        TypeId t = res_ty(o);
        if (!T_.is_scalar(elem(t)))
          return op_err(o, "result has type " + ts(t) + ", expected an integer or float scalar or block");
        Scalar e = scalar_of(t);
        const Attr& v = attr(o, "value");
        if (v.kind == Attr::Kind::Sym) {
          std::string p = resolve(v.s, [&](const Constexpr& c, const std::string& where) -> std::string {
            if (!valid_scalar(c.type)) return "is a constexpr of an invalid type" + where;
            bool fits = c.type == Scalar::I1 ? e == Scalar::I1 : is_int(c.type) ? e != Scalar::I1 : is_float(e);
            if (fits) return "";
            return std::string("is a constexpr of type ") + scalar_name(c.type) + where + " and does not fit type " +
                   scalar_name(e);
          });
          if (!p.empty()) return op_err(o, "attribute 'value' names " + v.s + ", which " + p);
          return Status::ok();
        }
        bool fits = v.kind == Attr::Kind::Int     ? is_float(e) || int_fits(v.i, e)
                    : v.kind == Attr::Kind::Float ? is_float(e)
                                                  : e == Scalar::I1;
        if (!fits) return op_err(o, "value " + attr_value_str(v) + " does not fit type " + scalar_name(e));
        return Status::ok();
      }

      case Opcode::Arange: {
        TypeId t = res_ty(o);
        if (T_.rank(t) != 1 || !elem_is(t, Scalar::I32))
          return op_err(o, "result has type " + ts(t) + ", expected a 1-D block of i32");
        int64_t start, end;
        bool s_lit = lit(o, "start", &start), e_lit = lit(o, "end", &end);
        if (s_lit && (start < INT32_MIN || start > INT32_MAX))
          return op_err(o, "start " + std::to_string(start) + " is not an i32");
        if (e_lit && (end < INT32_MIN || end - 1 > INT32_MAX))
          return op_err(o, "end " + std::to_string(end) + " is past the range of i32");
        if (s_lit && e_lit) {
          if (end <= start)
            return op_err(o, "end " + std::to_string(end) + " must be greater than start " + std::to_string(start));
          const Dim& n = dims(t)[0];
          if (!n.symbolic && n.value != end - start)
            return op_err(o, "range [" + std::to_string(start) + ", " + std::to_string(end) + ") has " +
                                 std::to_string(end - start) + " elements, result type " + ts(t) + " has " +
                                 std::to_string(n.value));
        }
        return Status::ok();
      }

      case Opcode::Splat: {
        TypeId s = ty(opnd(o, "src")), t = res_ty(o);
        if (T_.is_block(s)) return op_err(o, "operand has type " + ts(s) + ", expected a scalar or a pointer");
        if (!T_.is_block(t) || elem(t) != s)
          return op_err(o, "result has type " + ts(t) + ", expected a block of " + ts(s));
        return Status::ok();
      }

      case Opcode::Broadcast: {
        TypeId s = ty(opnd(o, "src")), t = res_ty(o);
        if (!T_.is_block(s))
          return op_err(o, "operand has type " + ts(s) + ", expected a block ('splat' makes blocks of scalars)");
        if (!T_.is_block(t) || elem(t) != elem(s) || T_.rank(t) != T_.rank(s))
          return op_err(o, "result has type " + ts(t) + ", expected a block of " + ts(elem(s)) + " of rank " +
                               std::to_string(T_.rank(s)) +
                               (T_.is_block(t) && elem(t) == elem(s) && T_.rank(t) > T_.rank(s)
                                    ? " ('broadcast' keeps the rank: add dimensions of size 1 with "
                                      "'expand_dims[axis=A]' first, then broadcast them)"
                                    : std::string()));
        for (int i = 0; i < T_.rank(s); ++i) {
          const Dim& a = dims(s)[i];
          const Dim& b = dims(t)[i];
          if (a != b && a != Dim::lit(1))
            return op_err(o, "cannot broadcast " + ts(s) + " to " + ts(t) + ": dimension " + std::to_string(i) +
                                 " is " + dim_str(a) + ", expected 1 or " + dim_str(b));
        }
        return Status::ok();
      }

      case Opcode::ExpandDims: {
        TypeId s = ty(opnd(o, "src")), t = res_ty(o);
        int r = T_.rank(s);
        if (r >= kMaxBlockRank)
          return op_err(o, "operand has type " + ts(s) + ", whose rank is already " + std::to_string(kMaxBlockRank));
        int64_t axis;
        if (!lit(o, "axis", &axis)) return Status::ok();
        TRI_RETURN_IF_ERROR(axis_in(o, axis, r + 1));
        std::vector<Dim> want = dims_or_none(s);
        want.insert(want.begin() + axis, Dim::lit(1));
        return type_is(o, is_shaped(t, want, elem(s)), "result", t, shaped_str(want, elem(s)));
      }

      case Opcode::Reshape: {
        TypeId s = ty(opnd(o, "src")), t = res_ty(o);
        if (!T_.is_block(s)) return op_err(o, "operand has type " + ts(s) + ", expected a block");
        if (!T_.is_block(t) || elem(t) != elem(s))
          return op_err(o, "result has type " + ts(t) + ", expected a block of " + ts(elem(s)));
        if (T_.is_concrete(s) && T_.is_concrete(t) && T_.num_elements(s) != T_.num_elements(t))
          return op_err(o, "cannot reshape " + ts(s) + " (" + std::to_string(T_.num_elements(s)) +
                               " elements) to " + ts(t) + " (" + std::to_string(T_.num_elements(t)) + " elements)");
        return Status::ok();
      }

      case Opcode::Permute: {
        TypeId s = ty(opnd(o, "src")), t = res_ty(o);
        if (!T_.is_block(s)) return op_err(o, "operand has type " + ts(s) + ", expected a block");
        const std::vector<int64_t>& order = attr(o, "order").ints;
        int r = T_.rank(s);
        std::vector<uint8_t> used(r, 0);
        bool ok = static_cast<int>(order.size()) == r;
        for (size_t i = 0; ok && i < order.size(); ++i) {
          ok = order[i] >= 0 && order[i] < r && !used[order[i]];
          if (ok) used[order[i]] = 1;
        }
        if (!ok) {
          std::vector<int64_t> iota;
          for (int i = 0; i < r; ++i) iota.push_back(i);
          return op_err(o, "attribute 'order' is " + fmt_ints(order) + ", expected a permutation of " +
                               fmt_ints(iota) + " for " + ts(s));
        }
        std::vector<Dim> want;
        for (int64_t i : order) want.push_back(dims(s)[i]);
        return type_is(o, is_shaped(t, want, elem(s)), "result", t, shaped_str(want, elem(s)));
      }

      case Opcode::Join: {
        TypeId a = ty(opnd(o, "lhs")), b = ty(opnd(o, "rhs")), t = res_ty(o);
        if (a != b) return op_err(o, "operands have types " + ts(a) + " and " + ts(b));
        if (T_.rank(a) >= kMaxBlockRank)
          return op_err(o, "operands have type " + ts(a) + ", whose rank is already " + std::to_string(kMaxBlockRank));
        std::vector<Dim> want = dims_or_none(a);
        want.push_back(Dim::lit(2));
        return type_is(o, is_shaped(t, want, elem(a)), "result", t, shaped_str(want, elem(a)));
      }

      case Opcode::Split: {
        TypeId s = ty(opnd(o, "src"));
        if (!T_.is_block(s) || dims(s).back() != Dim::lit(2))
          return op_err(o, "operand has type " + ts(s) + ", expected a block whose last dimension is 2");
        std::vector<Dim> want = dims(s);
        want.pop_back();
        for (size_t i = 0; i < 2; ++i) {
          TypeId t = res_ty(o, i);
          if (!is_shaped(t, want, elem(s)))
            return op_err(o, "result " + std::to_string(i) + " has type " + ts(t) + ", expected " +
                                 shaped_str(want, elem(s)));
        }
        return Status::ok();
      }

      case Opcode::Cat: {
        TypeId a = ty(opnd(o, "lhs")), b = ty(opnd(o, "rhs")), t = res_ty(o);
        if (!T_.is_block(a) || !T_.is_block(b) || elem(a) != elem(b) || T_.rank(a) != T_.rank(b))
          return op_err(o, "operands have types " + ts(a) + " and " + ts(b) + ", expected blocks of one rank and element type");
        for (int i = 1; i < T_.rank(a); ++i)
          if (dims(a)[i] != dims(b)[i])
            return op_err(o, "operands have types " + ts(a) + " and " + ts(b) + ", which differ in dimension " +
                                 std::to_string(i));
        if (!T_.is_block(t) || elem(t) != elem(a) || T_.rank(t) != T_.rank(a))
          return op_err(o, "result has type " + ts(t) + ", expected a block of " + ts(elem(a)) + " of rank " +
                               std::to_string(T_.rank(a)));
        for (int i = 1; i < T_.rank(a); ++i)
          if (dims(t)[i] != dims(a)[i])
            return op_err(o, "result has type " + ts(t) + ", whose dimension " + std::to_string(i) + " is not " +
                                 dim_str(dims(a)[i]));
        const Dim &da = dims(a)[0], &db = dims(b)[0], &dt = dims(t)[0];
        if (!da.symbolic && !db.symbolic && !dt.symbolic && dt.value != da.value + db.value)
          return op_err(o, "result has type " + ts(t) + ", whose dimension 0 is not " + std::to_string(da.value) +
                               " + " + std::to_string(db.value));
        return Status::ok();
      }

      case Opcode::AddPtr: {
        ValueId p = opnd(o, "ptr"), off = opnd(o, "offset");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(pointer_operand(o, p, &pointee));
        if (!index_elem(ty(off)) || !same_shape(ty(off), ty(p)))
          return op_err(o, "offset has type " + ts(ty(off)) + ", expected integers of the shape of " + ts(ty(p)));
        return result_is(o, ty(p));
      }

      case Opcode::Load: {
        ValueId p = opnd(o, "ptr");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(pointer_operand(o, p, &pointee));
        TRI_RETURN_IF_ERROR(mask_operand(o, p, "the pointer"));
        std::vector<Dim> shape = dims_or_none(ty(p));
        std::string want = shaped_str(shape, pointee);
        ValueId other = opnd(o, "other");
        if (other != kNoValue) TRI_RETURN_IF_ERROR(pointee_value(o, other, "other", p, pointee));
        TypeId t = res_ty(o);
        return type_is(o, is_shaped(t, shape, pointee), "result", t, want);
      }

      case Opcode::Store: {
        ValueId p = opnd(o, "ptr");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(pointer_operand(o, p, &pointee));
        TRI_RETURN_IF_ERROR(pointee_value(o, opnd(o, "value"), "value", p, pointee));
        return mask_operand(o, p, "the pointer");
      }

      case Opcode::Atomic: {
        ValueId p = opnd(o, "ptr"), v = opnd(o, "value");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(pointer_operand(o, p, &pointee));
        TRI_RETURN_IF_ERROR(pointee_value(o, v, "value", p, pointee));
        TRI_RETURN_IF_ERROR(mask_operand(o, p, "the pointer"));
        const std::string& kind = enum_word(o, "kind", attr(o, "kind").i);
        bool int_only = kind == "and" || kind == "or" || kind == "xor" || kind == "umin" || kind == "umax";
        if (int_only && !int_elem(pointee))
          return op_err(o, "kind=" + kind + " needs integer elements, got " + ts(pointee));
        return result_is(o, ty(v));
      }

      case Opcode::AtomicCas: {
        ValueId p = opnd(o, "ptr"), v = opnd(o, "value");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(pointer_operand(o, p, &pointee));
        TRI_RETURN_IF_ERROR(pointee_value(o, opnd(o, "cmp"), "cmp", p, pointee));
        TRI_RETURN_IF_ERROR(pointee_value(o, v, "value", p, pointee));
        TRI_RETURN_IF_ERROR(mask_operand(o, p, "the pointer"));
        return result_is(o, ty(v));
      }

      case Opcode::Rank:
      case Opcode::NumRanks:
        return result_is(o, scalar_type(Scalar::I32));

      case Opcode::SymmAt: {
        ValueId p = opnd(o, "ptr");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(pointer_operand(o, p, &pointee));
        TRI_RETURN_IF_ERROR(rank_operand(o));
        return result_is(o, ty(p));
      }

      case Opcode::Wait: {
        ValueId p = opnd(o, "ptr");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(signal_pointer(o, p, /*scalar_only=*/false, &pointee));
        ValueId v = opnd(o, "value");
        if (ty(v) != pointee)
          return op_err(o, "value has type " + ts(ty(v)) + ", expected " + ts(pointee) +
                               " (one value, compared with every lane's signal)");
        TRI_RETURN_IF_ERROR(mask_operand(o, p, "the pointer"));
        return result_is(o, scalar_type(Scalar::I32));
      }

      case Opcode::ConsumeToken: {
        ValueId t = opnd(o, "token");
        if (ty(t) != scalar_type(Scalar::I32))
          return op_err(o, "token has type " + ts(ty(t)) + ", expected i32 (the result of a 'wait')");
        return result_is(o, ty(opnd(o, "src")));
      }

      case Opcode::Notify: {
        ValueId p = opnd(o, "ptr");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(signal_pointer(o, p, /*scalar_only=*/true, &pointee));
        ValueId v = opnd(o, "value");
        if (ty(v) != pointee) return op_err(o, "value has type " + ts(ty(v)) + ", expected " + ts(pointee));
        return rank_operand(o);
      }

      case Opcode::Put: {
        ValueId p = opnd(o, "ptr");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(pointer_operand(o, p, &pointee));
        TRI_RETURN_IF_ERROR(pointee_value(o, opnd(o, "value"), "value", p, pointee));
        TRI_RETURN_IF_ERROR(rank_operand(o));
        TRI_RETURN_IF_ERROR(mask_operand(o, p, "the pointer"));
        ValueId s = opnd(o, "signal"), sv = opnd(o, "signal_value");
        if ((s == kNoValue) != (sv == kNoValue))
          return op_err(o, s == kNoValue ? "has a signal_value but no signal; write both or neither"
                                         : "has a signal but no signal_value; write both or neither");
        if (s == kNoValue) return Status::ok();
        TypeId spointee;
        TRI_RETURN_IF_ERROR(signal_pointer(o, s, /*scalar_only=*/true, &spointee));
        if (ty(sv) != spointee)
          return op_err(o, "signal_value has type " + ts(ty(sv)) + ", expected " + ts(spointee));
        return Status::ok();
      }

      case Opcode::Get: {
        ValueId p = opnd(o, "ptr");
        TypeId pointee;
        TRI_RETURN_IF_ERROR(pointer_operand(o, p, &pointee));
        TRI_RETURN_IF_ERROR(rank_operand(o));
        TRI_RETURN_IF_ERROR(mask_operand(o, p, "the pointer"));
        std::vector<Dim> shape = dims_or_none(ty(p));
        ValueId other = opnd(o, "other");
        if (other != kNoValue) TRI_RETURN_IF_ERROR(pointee_value(o, other, "other", p, pointee));
        TypeId t = res_ty(o);
        return type_is(o, is_shaped(t, shape, pointee), "result", t, shaped_str(shape, pointee));
      }

      case Opcode::MathCall: {
        const std::string& name = attr(o, "name").s;
        const MathFn* fn = nullptr;
        for (const MathFn& m : kMathFns)
          if (name == m.name) fn = &m;
        if (!fn) return op_err(o, "attribute 'name' is \"" + name + "\", which is not a math function of Tri");
        if (d.operands.size() != static_cast<size_t>(fn->arity))
          return op_err(o, "\"" + name + "\" takes " + count_of(fn->arity, "operand", "operands") + ", got " +
                               std::to_string(d.operands.size()));
        return check_elementwise(o);
      }

      case Opcode::Cmp:
      case Opcode::FCmp: {
        TypeId a = ty(opnd(o, "lhs")), b = ty(opnd(o, "rhs"));
        if (a != b) return op_err(o, "operands have types " + ts(a) + " and " + ts(b) + shape_hint(a, b));
        if (d.code == Opcode::Cmp && !int_elem(a) && !ptr_elem(a))
          return op_err(o, "operands have type " + ts(a) + ", expected integers or pointers ('fcmp' compares floats)");
        if (d.code == Opcode::FCmp && !float_elem(a))
          return op_err(o, "operands have type " + ts(a) + ", expected floats ('cmp' compares integers)");
        TypeId t = res_ty(o), i1 = scalar_type(Scalar::I1);
        return type_is(o, is_shaped(t, dims_or_none(a), i1), "result", t, shaped_str(dims_or_none(a), i1));
      }

      case Opcode::Select: {
        TypeId c = ty(opnd(o, "cond")), a = ty(opnd(o, "lhs")), b = ty(opnd(o, "rhs"));
        TypeId i1 = scalar_type(Scalar::I1);
        if (!is_shaped(c, dims_or_none(a), i1))
          return op_err(o, "condition has type " + ts(c) + ", expected " + shaped_str(dims_or_none(a), i1));
        if (a != b) return op_err(o, "operands have types " + ts(a) + " and " + ts(b) + shape_hint(a, b));
        return result_is(o, a);
      }

      case Opcode::Trunc: case Opcode::ZExt: case Opcode::SExt: case Opcode::FPTrunc: case Opcode::FPExt:
      case Opcode::FPToSI: case Opcode::FPToUI: case Opcode::SIToFP: case Opcode::UIToFP:
      case Opcode::Bitcast: case Opcode::PtrToInt: case Opcode::IntToPtr:
        return check_cast(o);

      case Opcode::Reduce:
      case Opcode::Scan: return check_reduce_scan(o);

      case Opcode::Dot: return check_dot(o);

      case Opcode::For: {
        TypeId lo = ty(opnd(o, "lo")), hi = ty(opnd(o, "hi")), step = ty(opnd(o, "step"));
        if (!T_.is_scalar(lo) || !index_elem(lo))
          return op_err(o, "lower bound has type " + ts(lo) + ", expected a scalar integer");
        if (hi != lo || step != lo)
          return op_err(o, "bounds and step have types " + ts(lo) + ", " + ts(hi) + " and " + ts(step) +
                               ", expected one type");
        std::vector<ValueId> inits = f_->variadic(o);
        TRI_RETURN_IF_ERROR(results_match_inits(o, inits));
        const BlockData& body = f_->block(d.regions[0]);
        if (body.args.size() != inits.size() + 1)
          return op_err(o, "region has " + count_of(body.args.size(), "argument", "arguments") + ", expected " +
                               std::to_string(inits.size() + 1) + " (the induction variable and " +
                               count_of(inits.size(), "carried value", "carried values") + ")");
        if (ty(body.args[0]) != lo)
          return op_err(o, "induction variable " + vname(body.args[0]) + " has type " + ts(ty(body.args[0])) +
                               ", expected " + ts(lo) + " (the type of the bounds)");
        for (size_t i = 0; i < inits.size(); ++i)
          if (ty(body.args[i + 1]) != ty(inits[i]))
            return op_err(o, "region argument " + vname(body.args[i + 1]) + " has type " + ts(ty(body.args[i + 1])) +
                                 ", expected " + ts(ty(inits[i])) + " (the type of initial value " +
                                 std::to_string(i) + ")");
        return Status::ok();
      }

      case Opcode::If: {
        TypeId c = ty(opnd(o, "cond"));
        if (c != scalar_type(Scalar::I1)) return op_err(o, "condition has type " + ts(c) + ", expected i1");
        if (!d.results.empty() && d.regions.size() < 2) return op_err(o, "with results needs an else region");
        for (size_t i = 0; i < d.regions.size(); ++i)
          if (!f_->block(d.regions[i]).args.empty())
            return op_err(o, "region " + std::to_string(i) + " has " +
                                 count_of(f_->block(d.regions[i]).args.size(), "argument", "arguments") +
                                 ", expected none");
        return Status::ok();
      }

      case Opcode::While: {
        std::vector<ValueId> inits = f_->variadic(o);
        const BlockData& before = f_->block(d.regions[0]);
        const BlockData& after = f_->block(d.regions[1]);
        if (before.args.size() != inits.size())
          return op_err(o, "first region has " + count_of(before.args.size(), "argument", "arguments") +
                               ", expected " + std::to_string(inits.size()) + " (one per initial value)");
        for (size_t i = 0; i < inits.size(); ++i)
          if (ty(before.args[i]) != ty(inits[i]))
            return op_err(o, "first region argument " + vname(before.args[i]) + " has type " +
                                 ts(ty(before.args[i])) + ", expected " + ts(ty(inits[i])) +
                                 " (the type of initial value " + std::to_string(i) + ")");
        if (after.args.size() != d.results.size())
          return op_err(o, "second region has " + count_of(after.args.size(), "argument", "arguments") +
                               ", expected " + std::to_string(d.results.size()) + " (one per result)");
        for (size_t i = 0; i < d.results.size(); ++i)
          if (ty(after.args[i]) != res_ty(o, i))
            return op_err(o, "second region argument " + vname(after.args[i]) + " has type " +
                                 ts(ty(after.args[i])) + ", expected " + ts(res_ty(o, i)) + " (the type of result " +
                                 std::to_string(i) + ")");
        return Status::ok();
      }

      case Opcode::Yield: {
        if (parent == kNoOp) return op_err(o, "cannot end a function body; it ends with 'return'");
        const OpData& p = f_->op(parent);
        if (p.code == Opcode::While && region == 0)
          return op_err(o, "cannot end the first region of 'while'; it ends with 'condition'");
        const std::string whose = "the enclosing " + q(op_name(parent));
        return types_match(o, d.operands, yield_types(parent), "gives", whose, [&](size_t) { return whose; });
      }

      case Opcode::Condition: {
        if (parent == kNoOp || f_->op(parent).code != Opcode::While || region != 0)
          return op_err(o, "can only end the first region of a 'while'");
        TypeId c = ty(opnd(o, "cond"));
        if (c != scalar_type(Scalar::I1)) return op_err(o, "condition has type " + ts(c) + ", expected i1");
        return types_match(o, f_->variadic(o), types_of(f_->op(parent).results), "passes",
                           "the results of the enclosing 'while'",
                           [](size_t i) { return "result " + std::to_string(i) + " of the enclosing 'while'"; });
      }

      case Opcode::Return: {
        if (parent != kNoOp)
          return op_err(o, "must end the function body, not a region of " + q(op_name(parent)));
        if (f_->is_kernel) {
          if (!d.operands.empty())
            return op_err(o, "returns " + count_of(d.operands.size(), "value", "values") + "; kernel @" + f_->name +
                                 " returns nothing");
          return Status::ok();
        }
        return types_match(o, d.operands, f_->results, "returns", "the results of @" + f_->name,
                           [&](size_t i) { return "result " + std::to_string(i) + " of @" + f_->name; });
      }

      case Opcode::Call: return check_call(o);

      case Opcode::Print: {
        ValueId m = opnd(o, "mask");
        if (m == kNoValue) return Status::ok();
        if (!elem_is(ty(m), Scalar::I1)) return op_err(o, "mask has type " + ts(ty(m)) + ", expected i1 elements");
        std::vector<ValueId> vals = f_->variadic(o);
        for (size_t i = 0; i < vals.size(); ++i)
          if (!same_shape(ty(m), ty(vals[i])))
            return op_err(o, "mask has type " + ts(ty(m)) + ", expected " +
                                 shaped_str(dims_or_none(ty(vals[i])), scalar_type(Scalar::I1)) + " (the shape of value " +
                                 std::to_string(i) + ")");
        return Status::ok();
      }

      case Opcode::Assert: {
        ValueId c = opnd(o, "cond");
        if (!elem_is(ty(c), Scalar::I1))
          return op_err(o, "condition has type " + ts(ty(c)) + ", expected i1 or a block of i1");
        return mask_operand(o, c, "the condition");
      }

      case Opcode::Assume: {
        TypeId c = ty(opnd(o, "cond"));
        if (!elem_is(c, Scalar::I1)) return op_err(o, "condition has type " + ts(c) + ", expected i1 or a block of i1");
        return Status::ok();
      }

      case Opcode::DebugBarrier: return Status::ok();

      case Opcode::MultipleOf:
      case Opcode::MaxContiguous: {
        TypeId s = ty(opnd(o, "src"));
        if (!index_elem(s) && !ptr_elem(s))
          return op_err(o, "operand has type " + ts(s) + ", expected integers or pointers");
        const std::vector<int64_t>& vals = attr(o, "values").ints;
        size_t want = T_.is_block(s) ? static_cast<size_t>(T_.rank(s)) : 1;
        if (vals.size() != want)
          return op_err(o, "attribute 'values' is " + fmt_ints(vals) + ", expected " +
                               count_of(want, "value", "values") + " for " + ts(s));
        for (int64_t v : vals)
          if (v <= 0) return op_err(o, "attribute 'values' is " + fmt_ints(vals) + ", expected positive values");
        return result_is(o, s);
      }

      case Opcode::InlineAsm: {
        if (attr(o, "asm").s.empty()) return op_err(o, "attribute 'asm' is empty");
        int64_t pack = 1;
        if (lit(o, "pack", &pack) && !is_pow2(pack))
          return op_err(o, "attribute 'pack' is " + std::to_string(pack) + ", expected a power of two");
        // Elementwise: every block operand and result has one shape.
        std::vector<ValueId> all = d.operands;
        all.insert(all.end(), d.results.begin(), d.results.end());
        const ValueId* shaped = nullptr;
        for (const ValueId& v : all)
          if (T_.is_block(ty(v))) {
            shaped = &v;
            break;
          }
        for (size_t i = 0; i < d.results.size(); ++i) {
          TypeId t = res_ty(o, i);
          if (!T_.is_scalar(elem(t)))
            return op_err(o, "result " + std::to_string(i) + " has type " + ts(t) + ", expected integers or floats");
        }
        if (!shaped) return Status::ok();
        for (ValueId v : all)
          if (T_.is_block(ty(v)) && !same_shape(ty(v), ty(*shaped)))
            return op_err(o, "mixes the shapes of " + ts(ty(*shaped)) + " and " + ts(ty(v)));
        for (size_t i = 0; i < d.results.size(); ++i)
          if (!T_.is_block(res_ty(o, i)))
            return op_err(o, "result " + std::to_string(i) + " has type " + ts(res_ty(o, i)) +
                                 ", expected a block of the shape of " + ts(ty(*shaped)));
        if (T_.is_concrete(ty(*shaped)) && T_.num_elements(ty(*shaped)) % pack != 0)
          return op_err(o, "attribute 'pack' is " + std::to_string(pack) + ", which does not divide the " +
                               std::to_string(T_.num_elements(ty(*shaped))) + " elements of " + ts(ty(*shaped)));
        return Status::ok();
      }

      default: break;
    }
    const OpInfo& info = op_info(d.code);
    if (info.rule == OpRule::Cast) return check_cast(o);
    if (info.rule != OpRule::Custom) return check_elementwise(o);
    // A Custom op without a case above is a bug in this file, not in the module.
    return Status(Code::Internal, "the verifier has no rule for '" + info.name + "'");
  }

  // for: its results are the carried values, one per initial value and of its type.
  Status results_match_inits(OpId o, const std::vector<ValueId>& inits) {
    const OpData& d = f_->op(o);
    if (d.results.size() != inits.size())
      return op_err(o, "has " + count_of(d.results.size(), "result", "results") + ", expected " +
                           std::to_string(inits.size()) + " (one per initial value)");
    for (size_t i = 0; i < inits.size(); ++i)
      if (res_ty(o, i) != ty(inits[i]))
        return op_err(o, "result " + std::to_string(i) + " has type " + ts(res_ty(o, i)) + ", expected " +
                             ts(ty(inits[i])) + " (the type of initial value " + std::to_string(i) + ")");
    return Status::ok();
  }

  Status check_reduce_scan(OpId o) {
    const OpData& d = f_->op(o);
    bool is_reduce = d.code == Opcode::Reduce;
    std::vector<ValueId> srcs = f_->variadic(o);
    TypeId s0 = ty(srcs[0]);
    for (size_t i = 0; i < srcs.size(); ++i) {
      TypeId s = ty(srcs[i]);
      if (!T_.is_block(s) || !T_.is_scalar(elem(s)))
        return op_err(o, "operand " + std::to_string(i) + " has type " + ts(s) + ", expected a block of integers or floats");
      if (!same_shape(s, s0))
        return op_err(o, "operand " + std::to_string(i) + " has type " + ts(s) + ", expected the shape of " + ts(s0));
    }
    int64_t axis = 0;
    bool axis_lit = lit(o, "axis", &axis);
    if (axis_lit) TRI_RETURN_IF_ERROR(axis_in(o, axis, T_.rank(s0)));

    int64_t kind = enum_of(o, "kind");
    std::string kind_word = kind >= 0 ? enum_word(o, "kind", kind) : "";
    if (kind >= 0 && !d.regions.empty()) return op_err(o, "has both attribute 'kind' and a combine region");
    if (kind < 0 && d.regions.empty()) return op_err(o, "needs attribute 'kind' or a combine region");
    if (kind >= 0) {
      if (srcs.size() != 1)
        return op_err(o, "with kind=" + kind_word + " takes 1 operand, got " + std::to_string(srcs.size()));
      bool int_only = kind_word == "umax" || kind_word == "umin" || kind_word == "and" || kind_word == "or" ||
                      kind_word == "xor";
      if (int_only && !int_elem(s0))
        return op_err(o, "kind=" + kind_word + " needs integer elements, got " + ts(elem(s0)));
    } else {
      const BlockData& comb = f_->block(d.regions[0]);
      size_t n = srcs.size();
      if (comb.args.size() != 2 * n)
        return op_err(o, "combine region has " + count_of(comb.args.size(), "argument", "arguments") +
                             ", expected " + std::to_string(2 * n) + " (two per operand)");
      for (size_t i = 0; i < 2 * n; ++i)
        if (ty(comb.args[i]) != elem(ty(srcs[i % n])))
          return op_err(o, "combine region argument " + vname(comb.args[i]) + " has type " + ts(ty(comb.args[i])) +
                               ", expected " + ts(elem(ty(srcs[i % n]))) + " (the element type of operand " +
                               std::to_string(i % n) + ")");
    }

    if (d.results.size() != srcs.size())
      return op_err(o, "has " + count_of(d.results.size(), "result", "results") + ", expected " +
                           std::to_string(srcs.size()) + " (one per operand)");
    if (!axis_lit) return Status::ok();  // the shape of a constexpr axis is checked once specialized
    for (size_t i = 0; i < srcs.size(); ++i) {
      TypeId s = ty(srcs[i]);
      std::vector<Dim> shape = dims(s);
      if (is_reduce) shape.erase(shape.begin() + axis);
      TypeId e = elem(s);
      if (kind_word == "argmax" || kind_word == "argmin") e = scalar_type(Scalar::I32);
      TypeId t = res_ty(o, i);
      if (!is_shaped(t, shape, e))
        return op_err(o, (d.results.size() == 1 ? std::string("result") : "result " + std::to_string(i)) +
                             " has type " + ts(t) + ", expected " + shaped_str(shape, e));
    }
    return Status::ok();
  }

  Status check_dot(OpId o) {
    TypeId a = ty(opnd(o, "a")), b = ty(opnd(o, "b")), c = ty(opnd(o, "acc"));
    int r = T_.rank(a);
    if (r != 2 && r != 3) return op_err(o, "operand 'a' has type " + ts(a) + ", expected a 2-D or batched 3-D block");
    if (T_.rank(b) != r)
      return op_err(o, "operand 'b' has type " + ts(b) + ", expected a block of rank " + std::to_string(r) + " like 'a'");
    if (elem(a) != elem(b))
      return op_err(o, "operands 'a' and 'b' have element types " + ts(elem(a)) + " and " + ts(elem(b)));
    Scalar in = scalar_of(a);
    bool f32_acc = in == Scalar::F16 || in == Scalar::BF16 || in == Scalar::F8E4M3 || in == Scalar::F8E5M2 ||
                   in == Scalar::F32;
    if (!T_.is_scalar(elem(a)) || (!f32_acc && in != Scalar::I8))
      return op_err(o, "inputs have element type " + ts(elem(a)) + ", expected f16, bf16, f8e4m3, f8e5m2, f32 or i8");
    const std::vector<Dim>& da = dims(a);
    const std::vector<Dim>& db = dims(b);
    if (r == 3 && da[0] != db[0])
      return op_err(o, "operands " + ts(a) + " and " + ts(b) + " differ in the batch dimension");
    if (da[r - 1] != db[r - 2])
      return op_err(o, "operands " + ts(a) + " and " + ts(b) + " differ in the inner dimension (" +
                           dim_str(da[r - 1]) + " and " + dim_str(db[r - 2]) + ")");
    std::vector<Dim> want(da.begin(), da.end() - 1);
    want.push_back(db[r - 1]);
    TypeId acc_e = scalar_type(f32_acc ? Scalar::F32 : Scalar::I32);
    if (!is_shaped(c, want, acc_e))
      return op_err(o, "accumulator has type " + ts(c) + ", expected " + shaped_str(want, acc_e) + " for " +
                           ts(elem(a)) + " inputs");
    if (enum_of(o, "precision") == 1 && in != Scalar::F32)
      return op_err(o, "precision=tf32 needs f32 inputs, got " + ts(elem(a)));
    return result_is(o, c);
  }

  Status check_call(OpId o) {
    const OpData& d = f_->op(o);
    const std::string& name = attr(o, "callee").s;
    const Function* g = m_.find(name);
    if (!g) return op_err(o, "callee @" + name + " is not defined");
    if (g->is_kernel) return op_err(o, "callee @" + name + " is a kernel; only device functions can be called");
    std::vector<ValueId> args = f_->variadic(o);
    if (args.size() != g->params.size())
      return op_err(o, "passes " + count_of(args.size(), "argument", "arguments") + ", @" + name + " takes " +
                           std::to_string(g->params.size()));
    for (size_t i = 0; i < args.size(); ++i)
      if (ty(args[i]) != g->params[i].type)
        return op_err(o, "argument " + std::to_string(i) + " has type " + ts(ty(args[i])) + ", expected " +
                             ts(g->params[i].type) + " (parameter %" + g->params[i].name + " of @" + name + ")");
    if (d.results.size() != g->results.size())
      return op_err(o, "has " + count_of(d.results.size(), "result", "results") + ", @" + name + " returns " +
                           std::to_string(g->results.size()));
    for (size_t i = 0; i < d.results.size(); ++i)
      if (res_ty(o, i) != g->results[i])
        return op_err(o, "result " + std::to_string(i) + " has type " + ts(res_ty(o, i)) + ", expected " +
                             ts(g->results[i]) + " (result " + std::to_string(i) + " of @" + name + ")");
    return Status::ok();
  }

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

}  // namespace

Status verify(const Module& m) { return Verifier(m).run(); }

Status check_work_per_thread(const Module& m, int64_t threads) {
  if (threads <= 0) return Status::ok();
  for (const auto& fp : m.functions) {
    const Function& f = *fp;
    for (size_t v = 0; v < f.values.size(); ++v) {
      const TypeData& t = m.types.get(f.values[v].type);
      if (t.kind != TypeKind::Block) continue;
      int64_t elements = 1;
      bool concrete = true;
      for (const Dim& d : t.dims) {
        if (d.symbolic || d.value <= 0 || elements > kMaxBlockElements) {
          concrete = false;
          break;
        }
        elements *= d.value;
      }
      if (!concrete) continue;
      const int64_t per_thread = (elements + threads - 1) / threads;
      if (per_thread <= kMaxElementsPerThread) continue;
      const ValueData& vd = f.values[v];
      Loc loc = vd.def_op != kNoOp ? f.op(vd.def_op).loc : f.loc;
      std::string name = vd.name.empty() ? "a value" : "%" + vd.name;
      return error_at(Code::LimitExceeded, m.source_name, loc,
                      name + " of @" + f.name + " has type " + m.type_str(vd.type) + ", " + std::to_string(elements) +
                          " elements over " + std::to_string(threads) + " threads: " + std::to_string(per_thread) +
                          " per thread, more than the limit of " + std::to_string(kMaxElementsPerThread) +
                          " (kMaxElementsPerThread); use more warps or smaller blocks");
    }
  }
  return Status::ok();
}

}  // namespace tri::ir
