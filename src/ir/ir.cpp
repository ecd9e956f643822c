#include "ir/ir.h"

#include <algorithm>
#include <cassert>

namespace tri::ir {
namespace {

int num_optional(const OpInfo& info) {
  int n = 0;
  for (const OperandSlot& s : info.operands)
    if (s.kind == SlotKind::Optional) ++n;
  return n;
}

}  // namespace

ValueId Function::operand(OpId o, int slot) const {
  const OpData& d = ops[o];
  const OpInfo& info = op_info(d.code);
  assert(slot >= 0 && slot < static_cast<int>(info.operands.size()));
  const OperandSlot& s = info.operands[slot];
  assert(s.kind == SlotKind::Required || s.kind == SlotKind::Optional);
  if (s.kind == SlotKind::Required) return d.operands[slot];
  // Optional slots sit at the end, in spec order.
  int k = 0;
  for (int i = 0; i < slot; ++i)
    if (info.operands[i].kind == SlotKind::Optional) ++k;
  size_t pos = d.operands.size() - num_optional(info) + k;
  return d.operands[pos];
}

std::vector<ValueId> Function::passed_on(BlockId b) const {
  const BlockData& bd = blocks[b];
  if (bd.ops.empty()) return {};
  const OpData& t = ops[bd.ops.back()];
  if (t.code == Opcode::Yield || t.code == Opcode::Return) return t.operands;
  if (t.code == Opcode::Condition && !t.operands.empty())
    return std::vector<ValueId>(t.operands.begin() + 1, t.operands.end());
  return {};
}

std::vector<ValueId> Function::variadic(OpId o) const {
  const OpData& d = ops[o];
  const OpInfo& info = op_info(d.code);
  size_t begin = info.num_required();
  size_t end = d.operands.size() - num_optional(info);
  return std::vector<ValueId>(d.operands.begin() + begin, d.operands.begin() + end);
}

ValueId Function::operand(OpId o, std::string_view slot) const {
  int i = op_info(ops[o].code).slot_index(slot);
  assert(i >= 0 && "no operand slot of that name");
  return operand(o, i);
}

const Attr& Function::attr(OpId o, std::string_view name) const {
  int i = op_info(ops[o].code).attr_index(name);
  assert(i >= 0 && "no attribute of that name");
  return ops[o].attrs[i];
}

int Function::constexpr_index(std::string_view n) const {
  for (size_t i = 0; i < constexprs.size(); ++i)
    if (constexprs[i].name == n) return static_cast<int>(i);
  return -1;
}

int Function::param_index(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n) return static_cast<int>(i);
  return -1;
}

SymId Module::intern(const std::string& name) {
  for (size_t i = 0; i < symbols.size(); ++i)
    if (symbols[i] == name) return static_cast<SymId>(i);
  symbols.push_back(name);
  return static_cast<SymId>(symbols.size() - 1);
}

std::string Module::type_str(TypeId t) const {
  const TypeData& d = types.get(t);
  switch (d.kind) {
    case TypeKind::Scalar:
      return scalar_name(d.scalar);
    case TypeKind::Ptr:
      return "ptr<" + type_str(d.pointee) + ">";
    case TypeKind::Block: {
      std::string s = "<";
      for (const Dim& dim : d.dims) {
        s += dim.symbolic ? symbols[dim.sym] : std::to_string(dim.value);
        s += " x ";
      }
      return s + type_str(d.elem) + ">";
    }
  }
  return "?";
}

Function* Module::find(std::string_view name) {
  for (auto& f : functions)
    if (f->name == name) return f.get();
  return nullptr;
}

const Function* Module::find(std::string_view name) const {
  for (const auto& f : functions)
    if (f->name == name) return f.get();
  return nullptr;
}

ValueId Builder::new_value(TypeId t, OpId def_op, BlockId def_block, uint32_t index) {
  ValueData v;
  v.type = t;
  v.def_op = def_op;
  v.def_block = def_block;
  v.index = index;
  f_->values.push_back(std::move(v));
  return static_cast<ValueId>(f_->values.size() - 1);
}

BlockId Builder::create_block(const std::vector<TypeId>& arg_types, OpId parent_op) {
  BlockId b = static_cast<BlockId>(f_->blocks.size());
  f_->blocks.emplace_back();
  f_->blocks[b].parent_op = parent_op;
  for (uint32_t i = 0; i < arg_types.size(); ++i) {
    ValueId v = new_value(arg_types[i], kNoOp, b, i);
    f_->blocks[b].args.push_back(v);
  }
  return b;
}

OpId Builder::create(Opcode code, const std::vector<ValueId>& operands, const std::vector<TypeId>& result_types,
                     std::vector<Attr> attrs, Loc loc) {
  assert(block_ != kNoBlock && "builder has no insertion block");
  const OpInfo& info = op_info(code);
  OpId o = static_cast<OpId>(f_->ops.size());
  f_->ops.emplace_back();
  attrs.resize(info.attrs.size());
  {
    OpData& d = f_->ops[o];
    d.code = code;
    d.loc = loc;
    d.operands = operands;
    d.attrs = std::move(attrs);
    d.parent = block_;
  }
  for (uint32_t i = 0; i < result_types.size(); ++i) {
    ValueId v = new_value(result_types[i], o, kNoBlock, i);
    f_->ops[o].results.push_back(v);
  }
  f_->blocks[block_].ops.push_back(o);
  return o;
}

ValueId Builder::create1(Opcode code, const std::vector<ValueId>& operands, TypeId result_type,
                         std::vector<Attr> attrs, Loc loc) {
  OpId o = create(code, operands, {result_type}, std::move(attrs), loc);
  return f_->ops[o].results[0];
}

BlockId Builder::add_region(OpId op, const std::vector<TypeId>& arg_types) {
  BlockId b = create_block(arg_types, op);
  f_->ops[op].regions.push_back(b);
  return b;
}

namespace {
OpId find_in_block(const Module& m, const Function& f, BlockId b, bool (*pred)(Opcode),
                   std::vector<const Function*>* seen, const Function** where) {
  for (OpId o : f.block(b).ops) {
    const OpData& op = f.op(o);
    if (pred(op.code)) {
      *where = &f;
      return o;
    }
    if (op.code == Opcode::Call) {
      const Function* callee = m.find(f.attr(o, "callee").s);
      if (callee && callee->body != kNoBlock && std::find(seen->begin(), seen->end(), callee) == seen->end()) {
        seen->push_back(callee);
        OpId r = find_in_block(m, *callee, callee->body, pred, seen, where);
        if (r != kNoOp) return r;
      }
    }
    for (BlockId r : op.regions) {
      OpId x = find_in_block(m, f, r, pred, seen, where);
      if (x != kNoOp) return x;
    }
  }
  return kNoOp;
}
}  // namespace

OpId find_op(const Module& m, const Function& f, bool (*pred)(Opcode), const Function** where) {
  if (f.body == kNoBlock) return kNoOp;
  std::vector<const Function*> seen{&f};
  const Function* w = nullptr;
  OpId o = find_in_block(m, f, f.body, pred, &seen, &w);
  if (o != kNoOp && where) *where = w;
  return o;
}

bool is_distributed_op(Opcode code) {
  switch (code) {
    case Opcode::Rank: case Opcode::NumRanks: case Opcode::SymmAt: case Opcode::Wait:
    case Opcode::ConsumeToken: case Opcode::Notify: case Opcode::Put: case Opcode::Get:
      return true;
    default:
      return false;
  }
}

}  // namespace tri::ir
