// The verifier's Custom rules (verifier_impl.h): one case of check_rule per op whose typing
// ops.def marks Custom, so that an op's typing lives in one place, and the rules of reduce, scan
// and dot that those cases share.
#include "ir/verifier_impl.h"

namespace tri::ir::verify_detail {

Status Verifier::check_rule(OpId o, OpId parent, int region) {
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

Status Verifier::results_match_inits(OpId o, const std::vector<ValueId>& inits) {
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

Status Verifier::check_reduce_scan(OpId o) {
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

Status Verifier::check_dot(OpId o) {
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
  if (enum_of(o, "precision") == 2 && in != Scalar::F8E4M3 && in != Scalar::F8E5M2)
    return op_err(o, "precision=fast needs f8e4m3 or f8e5m2 inputs, got " + ts(elem(a)));
  return result_is(o, c);
}

}  // namespace tri::ir::verify_detail
