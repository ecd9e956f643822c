// The verifier's generic rules (verifier_impl.h): the EwNum/EwInt/EwFloat and Cast typing rules
// the op table names, and the pieces every rule shares (pointer, mask and signal operands,
// axes, matching lists of types).
#include "ir/verifier_impl.h"

namespace tri::ir::verify_detail {

Status Verifier::pointer_operand(OpId o, ValueId p, TypeId* pointee) {
  if (!ptr_elem(ty(p)))
    return op_err(o, "pointer has type " + ts(ty(p)) + ", expected a pointer or a block of pointers");
  *pointee = T_.get(elem(ty(p))).pointee;
  return Status::ok();
}

Status Verifier::signal_pointer(OpId o, ValueId p, bool scalar_only, TypeId* pointee) {
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

Status Verifier::mask_operand(OpId o, ValueId shape_of, const std::string& shape_what) {
  ValueId m = opnd(o, "mask");
  if (m == kNoValue) return Status::ok();
  TypeId i1 = scalar_type(Scalar::I1);
  std::vector<Dim> shape = dims_or_none(ty(shape_of));
  if (is_shaped(ty(m), shape, i1)) return Status::ok();
  return op_err(o, "mask has type " + ts(ty(m)) + ", expected " + shaped_str(shape, i1) + " (the shape of " +
                       shape_what + ")");
}

Status Verifier::pointee_value(OpId o, ValueId v, const std::string& what, ValueId ptr, TypeId pointee) {
  std::vector<Dim> shape = dims_or_none(ty(ptr));
  if (is_shaped(ty(v), shape, pointee)) return Status::ok();
  return op_err(o, what + " has type " + ts(ty(v)) + ", expected " + shaped_str(shape, pointee));
}

std::vector<TypeId> Verifier::types_of(const std::vector<ValueId>& vals) const {
  std::vector<TypeId> t;
  for (ValueId v : vals) t.push_back(ty(v));
  return t;
}

std::vector<TypeId> Verifier::yield_types(OpId parent) const {
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

std::string Verifier::shape_hint(TypeId a, TypeId b) {
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

Status Verifier::check_elementwise(OpId o) {
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

Status Verifier::check_cast(OpId o) {
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

}  // namespace tri::ir::verify_detail
