#include "passes/fold.h"

#include <optional>
#include <unordered_map>

#include "passes/rewrite.h"

namespace tri::passes {
namespace {

using namespace ir;

// The integer value of a scalar `const` with an Int or Bool value, if `v` is one.
std::optional<int64_t> const_int(const Module& m, const Function& f, ValueId v) {
  const ValueData& d = f.value(v);
  if (d.def_op == kNoOp) return std::nullopt;
  const OpData& op = f.op(d.def_op);
  if (op.code != Opcode::Const || !m.types.is_scalar(d.type)) return std::nullopt;
  Scalar s;
  if (!m.types.elem_scalar(d.type, &s) || !is_int(s)) return std::nullopt;
  const Attr& a = op.attrs[0];
  if (a.kind != Attr::Kind::Int && a.kind != Attr::Kind::Bool) return std::nullopt;
  return a.i;
}

// Wraps v to the width of s, sign-extended (the canonical form of integer constants).
int64_t wrap(Scalar s, uint64_t v) {
  int bits = scalar_bits(s);
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t(1) << bits) - 1;
  v &= mask;
  if (bits > 1 && (v >> (bits - 1))) v |= ~mask;  // i1 stays 0/1
  return static_cast<int64_t>(v);
}

uint64_t as_unsigned(Scalar s, int64_t v) {
  int bits = scalar_bits(s);
  return bits >= 64 ? static_cast<uint64_t>(v) : static_cast<uint64_t>(v) & ((uint64_t(1) << bits) - 1);
}

std::optional<int64_t> eval_binary(Opcode code, Scalar s, int64_t a, int64_t b) {
  uint64_t ua = as_unsigned(s, a), ub = as_unsigned(s, b);
  switch (code) {
    case Opcode::Add: return wrap(s, ua + ub);
    case Opcode::Sub: return wrap(s, ua - ub);
    case Opcode::Mul: return wrap(s, ua * ub);
    case Opcode::And: return wrap(s, ua & ub);
    case Opcode::Or: return wrap(s, ua | ub);
    case Opcode::Xor: return wrap(s, ua ^ ub);
    case Opcode::SMin: return a < b ? a : b;
    case Opcode::SMax: return a > b ? a : b;
    case Opcode::UMin: return wrap(s, ua < ub ? ua : ub);
    case Opcode::UMax: return wrap(s, ua > ub ? ua : ub);
    default: return std::nullopt;
  }
}

bool eval_cmp(const std::string& pred, Scalar s, int64_t a, int64_t b) {
  uint64_t ua = as_unsigned(s, a), ub = as_unsigned(s, b);
  if (pred == "eq") return a == b;
  if (pred == "ne") return a != b;
  if (pred == "slt") return a < b;
  if (pred == "sle") return a <= b;
  if (pred == "sgt") return a > b;
  if (pred == "sge") return a >= b;
  if (pred == "ult") return ua < ub;
  if (pred == "ule") return ua <= ub;
  if (pred == "ugt") return ua > ub;
  return ua >= ub;  // uge
}

class Folder {
 public:
  Folder(Module& m, Function& f) : m_(m), f_(f) {}

  bool run() {
    fold_block(f_.body);
    replace_uses(f_, repl_);
    return changed_;
  }

 private:
  // Resolves a value through the replacements made so far.
  ValueId resolve(ValueId v) const {
    for (auto it = repl_.find(v); it != repl_.end(); it = repl_.find(v)) v = it->second;
    return v;
  }

  void fold_block(BlockId b) {
    std::vector<OpId> out;
    std::vector<OpId> ops = f_.block(b).ops;
    for (OpId o : ops) {
      for (ValueId& v : f_.op(o).operands)
        if (v != kNoValue) v = resolve(v);
      if (f_.op(o).code == Opcode::If) {
        if (auto c = const_int(m_, f_, f_.op(o).operands[0])) {
          inline_if(o, *c != 0, b, &out);
          changed_ = true;
          continue;
        }
      }
      // Copy: folding a region may add ops, which moves f_.ops.
      std::vector<BlockId> regions = f_.op(o).regions;
      for (BlockId r : regions) fold_block(r);
      fold_scalar(o, b, &out);
      out.push_back(o);
    }
    f_.block(b).ops = std::move(out);
  }

  // Moves the taken region's ops into `out` (folding them too) and maps the if's results.
  void inline_if(OpId o, bool taken_then, BlockId parent, std::vector<OpId>* out) {
    const OpData& op = f_.op(o);
    size_t idx = taken_then ? 0 : 1;
    if (idx >= op.regions.size()) return;  // no else region: the `if` (without results) vanishes
    BlockId r = op.regions[idx];
    std::vector<ValueId> results = op.results;
    fold_block(r);
    std::vector<OpId> body = f_.block(r).ops;
    for (OpId inner : body) {
      if (f_.op(inner).code == Opcode::Yield) {
        const std::vector<ValueId>& ys = f_.op(inner).operands;
        for (size_t i = 0; i < results.size() && i < ys.size(); ++i) repl_[results[i]] = resolve(ys[i]);
        continue;
      }
      f_.op(inner).parent = parent;
      out->push_back(inner);
    }
  }

  // Replaces an integer op on scalar constants by a new const placed where the op was.
  void fold_scalar(OpId o, BlockId b, std::vector<OpId>* out) {
    OpData& op = f_.op(o);
    if (op.results.size() != 1) return;
    ValueId res = op.results[0];
    if (!m_.types.is_scalar(f_.type_of(res))) return;
    std::optional<int64_t> value;
    if (op.code == Opcode::Select) {
      if (auto c = const_int(m_, f_, op.operands[0])) repl_[res] = *c ? op.operands[1] : op.operands[2], changed_ = true;
      return;
    }
    if (op.operands.size() != 2) return;
    auto a = const_int(m_, f_, op.operands[0]);
    auto c = const_int(m_, f_, op.operands[1]);
    if (!a || !c) return;
    Scalar s;
    if (!m_.types.elem_scalar(f_.type_of(op.operands[0]), &s)) return;
    if (op.code == Opcode::Cmp) {
      const OpInfo& info = op_info(op.code);
      value = eval_cmp(info.attrs[0].enum_values[op.attrs[0].i], s, *a, *c);
    } else {
      value = eval_binary(op.code, s, *a, *c);
    }
    if (!value) return;
    Builder bld(&m_, &f_);
    bld.set_insertion_block(b);
    Scalar rs;
    m_.types.elem_scalar(f_.type_of(res), &rs);
    Attr v = rs == Scalar::I1 ? Attr::of_bool(*value != 0) : Attr::of_int(*value);
    ValueId k = bld.create1(Opcode::Const, {}, f_.type_of(res), {v}, f_.op(o).loc);
    OpId ko = f_.value(k).def_op;
    f_.block(b).ops.pop_back();  // create1 appended it; place it here instead
    out->push_back(ko);
    f_.values[k].name = f_.values[res].name;
    f_.values[res].name.clear();  // the dead op keeps no name, so names stay unique
    repl_[res] = k;
    changed_ = true;
  }

  Module& m_;
  Function& f_;
  std::unordered_map<ValueId, ValueId> repl_;
  bool changed_ = false;
};

}  // namespace

bool fold(Module& m, Function& f) { return Folder(m, f).run(); }

}  // namespace tri::passes
