// The IR verifier (verifier.h): checks a module against every structural and typing rule of
// docs/ir.md and the op table, and reports the first violation as one located message that
// names the op, what it found and what it expected. Generic rules (operand slots, result and
// region counts, attribute kinds, the EwNum/EwInt/EwFloat/Cast typing rules) are driven by
// op_info(); every Custom rule of ops.def is one case of the switch in Verifier::check_rule, so
// an op's typing lives in one place. The verifier must accept nothing the backends cannot run
// and must never crash on a module a reader built from untrusted bytes, so ids are checked
// before they are followed. It checks in the order a reader meets the text, and stops at the
// first error so that one mistake gives one message, not a cascade.
#include "ir/verifier_impl.h"

namespace tri::ir {
namespace verify_detail {

Status Verifier::run() {
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

bool Verifier::well_formed(TypeId t, int depth) const {
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

std::string Verifier::type_problem(TypeId t) {
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

Status Verifier::check_type(TypeId t, Loc loc, const std::string& what) {
  if (!well_formed(t)) return err(loc, what + " has a malformed type (id " + std::to_string(t) + ")");
  std::string p = type_problem(t);
  if (!p.empty()) return err(loc, what + " has type " + ts(t) + ", whose " + p);
  return Status::ok();
}

Scalar Verifier::scalar_of(TypeId t) const {
  Scalar e = Scalar::I32;
  T_.elem_scalar(t, &e);
  return e;
}

std::string Verifier::shaped_str(const std::vector<Dim>& shape, TypeId e) const {
  if (shape.empty()) return ts(e);
  std::string s = "<";
  for (const Dim& d : shape) s += dim_str(d) + " x ";
  return s + ts(e) + ">";
}

Status Verifier::verify_function(size_t index) {
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

Status Verifier::check_constexpr(size_t i) {
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

Status Verifier::check_param(size_t i) {
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

Status Verifier::define(ValueId v, Loc loc) {
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

const char* Verifier::expected_terminator(OpId parent, int region) const {
  if (parent == kNoOp) return "return";
  if (f_->op(parent).code == Opcode::While && region == 0) return "condition";
  return "yield";
}

std::string Verifier::region_desc(OpId parent, int region) const {
  if (parent == kNoOp) return "body of @" + f_->name;
  const OpData& d = f_->op(parent);
  if (d.regions.size() == 1) return "region of " + q(op_name(parent));
  return "region " + std::to_string(region) + " of " + q(op_name(parent));
}

Status Verifier::verify_block(BlockId b, OpId parent, int region, int depth) {
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

Status Verifier::verify_op(OpId o, OpId parent, int region, int depth) {
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

Status Verifier::check_structure(OpId o) {
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

Status Verifier::check_attrs(OpId o) {
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

}  // namespace verify_detail

using verify_detail::Verifier;

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

