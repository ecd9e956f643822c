#include "passes/specialize.h"

#include <map>
#include <set>

#include "ir/limits.h"
#include "passes/rewrite.h"

namespace tri::passes {
namespace {

using namespace ir;

// Value of every constexpr of the kernel, as an attribute of the constexpr's declared type.
using Env = std::map<std::string, Attr>;

std::string list_names(const Function& k) {
  std::string s;
  for (const Constexpr& c : k.constexprs) s += (s.empty() ? "" : ", ") + c.name;
  return s.empty() ? "none" : s;
}

std::string describe(const Attr& a) {
  switch (a.kind) {
    case Attr::Kind::Int: return std::to_string(a.i);
    case Attr::Kind::Bool: return a.i ? "true" : "false";
    case Attr::Kind::Float: return std::to_string(a.f);
    default: return "not a number";
  }
}

// Whether float type `s` represents integer v exactly: its significant bits fit the format's
// precision and its magnitude does not pass the largest finite value.
bool int_fits_float(int64_t v, Scalar s) {
  int precision;  // significand bits, the implicit one included
  double max_finite;
  switch (s) {
    case Scalar::F16: precision = 11; max_finite = 65504.0; break;
    case Scalar::BF16: precision = 8; max_finite = 3.3895313892515355e38; break;
    case Scalar::F32: precision = 24; max_finite = 3.4028234663852886e38; break;
    case Scalar::F8E4M3: precision = 4; max_finite = 448.0; break;
    case Scalar::F8E5M2: precision = 3; max_finite = 57344.0; break;
    default: precision = 53; max_finite = 1.7976931348623157e308; break;  // f64
  }
  if (v == 0) return true;
  uint64_t mag = v < 0 ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (static_cast<double>(mag) > max_finite) return false;
  mag >>= __builtin_ctzll(mag);  // the odd part carries every significant bit
  return mag < (uint64_t(1) << precision);
}

// Converts a binding to the constexpr's declared type, or explains why it cannot.
Status coerce(const Module& m, const Function& k, const Constexpr& c, const Attr& given, Attr* out) {
  auto bad = [&](const std::string& what) {
    return error_at(Code::Specialize, m.source_name, c.loc,
                    "constexpr '" + c.name + "' of kernel @" + k.name + " is " + scalar_name(c.type) + ", " + what);
  };
  if (c.type == Scalar::I1) {
    if (given.kind == Attr::Kind::Bool) { *out = given; return Status::ok(); }
    if (given.kind == Attr::Kind::Int && (given.i == 0 || given.i == 1)) { *out = Attr::of_bool(given.i); return Status::ok(); }
    return bad("but the value given (" + describe(given) + ") is not a boolean");
  }
  if (is_int(c.type)) {
    if (given.kind != Attr::Kind::Int) return bad("but the value given (" + describe(given) + ") is not an integer");
    int bits = scalar_bits(c.type);
    if (bits < 64) {
      // Accept anything that fits as signed or as unsigned.
      int64_t lo = -(int64_t(1) << (bits - 1)), hi = (int64_t(1) << bits) - 1;
      if (given.i < lo || given.i > hi)
        return bad("but the value given (" + std::to_string(given.i) + ") does not fit in " + std::to_string(bits) +
                   " bits");
    }
    *out = given;
    return Status::ok();
  }
  if (given.kind == Attr::Kind::Float) { *out = given; return Status::ok(); }
  if (given.kind == Attr::Kind::Int) {
    // An integer suits a float constexpr only when the type holds it exactly (tri.h): 2049 is
    // not an f16, 70000 is past its range.
    if (!int_fits_float(given.i, c.type))
      return bad("but the integer value given (" + std::to_string(given.i) + ") is not exactly representable in " +
                 scalar_name(c.type) + "; give a float value (tri_compile_options_set_constexpr_float)");
    *out = Attr::of_float(static_cast<double>(given.i));
    return Status::ok();
  }
  return bad("but the value given is not a number");
}

class Specializer {
 public:
  Specializer(const Module& src, const Function& kernel, Env env, Module* dst)
      : src_(src), kernel_(kernel), env_(std::move(env)), dst_(dst) {}

  // New-module type for an old-module type, with names replaced.
  Status map_type(TypeId t, Loc loc, TypeId* out) {
    auto it = type_map_.find(t);
    if (it != type_map_.end()) { *out = it->second; return Status::ok(); }
    const TypeData& d = src_.types.get(t);
    TypeId r = kNoType;
    switch (d.kind) {
      case TypeKind::Scalar:
        r = dst_->types.scalar(d.scalar);
        break;
      case TypeKind::Ptr: {
        TypeId p;
        TRI_RETURN_IF_ERROR(map_type(d.pointee, loc, &p));
        r = dst_->types.ptr(p);
        break;
      }
      case TypeKind::Block: {
        TypeId e;
        TRI_RETURN_IF_ERROR(map_type(d.elem, loc, &e));
        std::vector<Dim> dims;
        for (const Dim& dim : d.dims) {
          if (!dim.symbolic) { dims.push_back(dim); continue; }
          const std::string& name = src_.symbols[dim.sym];
          auto v = env_.find(name);
          if (v == env_.end())
            return error_at(Code::Specialize, src_.source_name, loc,
                            "block dimension '" + name + "' is not a constexpr of kernel @" + kernel_.name);
          int64_t n = v->second.i;
          if (v->second.kind != Attr::Kind::Int || n <= 0 || n > kMaxDim || (n & (n - 1)) != 0)
            return error_at(Code::Specialize, src_.source_name, loc,
                            "constexpr '" + name + "' is used as a block dimension, so it must be a power of two in 1.." +
                                std::to_string(kMaxDim) + ", but it is " + describe(v->second));
          dims.push_back(Dim::lit(n));
        }
        r = dst_->types.block(dims, e);
        break;
      }
    }
    type_map_[t] = r;
    *out = r;
    return Status::ok();
  }

  Status clone(const Function& f, std::unique_ptr<Function>* out) {
    auto g = std::make_unique<Function>(f);
    for (ValueData& v : g->values) {
      Loc loc = v.def_op != kNoOp ? f.ops[v.def_op].loc : f.blocks[v.def_block].loc;
      TRI_RETURN_IF_ERROR(map_type(v.type, loc, &v.type));
    }
    for (Param& p : g->params) TRI_RETURN_IF_ERROR(map_type(p.type, p.loc, &p.type));
    for (TypeId& t : g->results) TRI_RETURN_IF_ERROR(map_type(t, f.loc, &t));
    for (OpData& op : g->ops) {
      const OpInfo& info = op_info(op.code);
      for (size_t i = 0; i < op.attrs.size(); ++i) {
        Attr& a = op.attrs[i];
        if (a.kind != Attr::Kind::Sym) continue;
        auto v = env_.find(a.s);
        if (v == env_.end())
          return error_at(Code::Specialize, src_.source_name, op.loc,
                          "'" + info.name + "' attribute '" + info.attrs[i].name + "' names '" + a.s +
                              "', which is not a constexpr of kernel @" + kernel_.name);
        if (info.attrs[i].kind == AttrKind::Int && v->second.kind == Attr::Kind::Float)
          return error_at(Code::Specialize, src_.source_name, op.loc,
                          "'" + info.name + "' attribute '" + info.attrs[i].name + "' needs an integer, but constexpr '" +
                              a.s + "' is " + describe(v->second));
        a = v->second;
        if (info.attrs[i].kind == AttrKind::Int && a.kind == Attr::Kind::Bool) a = Attr::of_int(a.i);
      }
    }
    for (Constexpr& c : g->constexprs) {
      auto v = env_.find(c.name);
      if (v != env_.end()) c.default_value = v->second;
    }
    *out = std::move(g);
    return Status::ok();
  }

 private:
  const Module& src_;
  const Function& kernel_;
  Env env_;
  Module* dst_;
  std::map<TypeId, TypeId> type_map_;
};

// The kernel and every device function reachable from it through calls, kernel first.
std::vector<const Function*> reachable(const Module& m, const Function& kernel) {
  std::vector<const Function*> order{&kernel};
  std::set<const Function*> seen{&kernel};
  for (size_t i = 0; i < order.size(); ++i) {
    const Function* f = order[i];
    for (OpId o = 0; o < f->ops.size(); ++o) {
      if (f->ops[o].code != Opcode::Call) continue;
      const Function* callee = m.find(f->attr(o, "callee").s);
      if (callee && seen.insert(callee).second) order.push_back(callee);
    }
  }
  return order;
}

}  // namespace

Status specialize(const Module& m, std::string_view kernel_name, const std::vector<ConstexprBinding>& values,
                  const std::vector<ArgFacts>& facts, std::unique_ptr<Module>* out) {
  const Function* k = m.find(kernel_name);
  if (!k || !k->is_kernel)
    return Status(Code::NotFound, m.source_name + ": error: no kernel named @" + std::string(kernel_name));

  Env env;
  for (const ConstexprBinding& b : values) {
    int i = k->constexpr_index(b.name);
    if (i < 0)
      return Status(Code::Specialize, m.source_name + ": error: kernel @" + k->name + " has no constexpr '" + b.name +
                                          "' (its constexprs: " + list_names(*k) + ")");
    if (env.count(b.name))
      return Status(Code::Specialize, m.source_name + ": error: constexpr '" + b.name + "' is given twice");
    Attr v;
    TRI_RETURN_IF_ERROR(coerce(m, *k, k->constexprs[i], b.value, &v));
    env[b.name] = v;
  }
  for (const Constexpr& c : k->constexprs) {
    if (env.count(c.name)) continue;
    if (!c.default_value.present())
      return error_at(Code::Specialize, m.source_name, c.loc,
                      "kernel @" + k->name + " needs a value for constexpr '" + c.name + "' (it has no default)");
    Attr v;
    TRI_RETURN_IF_ERROR(coerce(m, *k, c, c.default_value, &v));
    env[c.name] = v;
  }

  auto dst = std::make_unique<Module>();
  dst->source_name = m.source_name;
  Specializer sp(m, *k, env, dst.get());
  for (const Function* f : reachable(m, *k)) {
    std::unique_ptr<Function> g;
    TRI_RETURN_IF_ERROR(sp.clone(*f, &g));
    dst->functions.push_back(std::move(g));
  }

  Function& kernel = *dst->functions[0];
  const size_t runtime_params = kernel.params.size();
  for (const ArgFacts& f : facts) {
    if (f.param >= runtime_params)
      return Status(Code::Specialize, m.source_name + ": error: argument facts for parameter " + std::to_string(f.param) +
                                          ", but kernel @" + kernel.name + " has " + std::to_string(runtime_params) +
                                          " runtime parameters");
    Param& p = kernel.params[f.param];
    Scalar s;
    bool is_ptr = dst->types.is_ptr(p.type);
    bool is_int_param = dst->types.is_scalar(p.type) && dst->types.elem_scalar(p.type, &s) && is_int(s);
    if (f.align && (!is_ptr || (f.align & (f.align - 1))))
      return Status(Code::Specialize, m.source_name + ": error: alignment " + std::to_string(f.align) + " for %" +
                                          p.name + " needs a pointer parameter and a power of two");
    if (f.divisible && !is_int_param)
      return Status(Code::Specialize,
                    m.source_name + ": error: divisibility for %" + p.name + " needs an integer parameter");
    if (f.align > p.align) p.align = f.align;
    if (f.divisible > p.divisible) p.divisible = f.divisible;
    if (f.equals_one) {
      if (!is_int_param || s == Scalar::I1)
        return Status(Code::Specialize, m.source_name + ": error: 'equal to 1' for %" + p.name +
                                            " needs an integer parameter");
      // A constant 1 at the top of the body takes the argument's place in every use.
      Builder bld(dst.get(), &kernel);
      bld.set_insertion_block(kernel.body);
      ValueId one = bld.create1(Opcode::Const, {}, p.type, {Attr::of_int(1)}, p.loc);
      std::vector<OpId>& ops = kernel.block(kernel.body).ops;
      ops.insert(ops.begin(), ops.back());
      ops.pop_back();
      replace_uses(kernel, {{p.value, one}});
    }
  }
  *out = std::move(dst);
  return Status::ok();
}

}  // namespace tri::passes
