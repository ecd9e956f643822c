#include "passes/pipeline_loads.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "ir/op_info.h"
#include "passes/rewrite.h"

namespace tri::passes {
namespace {

using namespace ir;

// Whether an op may read or write memory or have another effect the loads must stay ordered
// with: everything that is not pure, except loads themselves.
bool has_effect(const Function& f, OpId o) {
  const OpData& op = f.op(o);
  if (op.code == Opcode::Load) return false;
  if (!op_info(op.code).is_pure() && !op_info(op.code).is_terminator()) return true;
  for (BlockId r : op.regions)
    for (OpId x : f.block(r).ops)
      if (has_effect(f, x)) return true;
  return false;
}

bool holds_dot(const Function& f, BlockId b) {
  for (OpId o : f.block(b).ops) {
    if (f.op(o).code == Opcode::Dot) return true;
    for (BlockId r : f.op(o).regions)
      if (holds_dot(f, r)) return true;
  }
  return false;
}

class Pipeliner {
 public:
  Pipeliner(Module& m, Function& f, OpId loop) : m_(m), f_(f), loop_(loop) {}

  bool run() {
    const OpData& op = f_.op(loop_);
    body_ = op.regions[0];
    const BlockData& b = f_.block(body_);
    if (b.ops.empty() || !holds_dot(f_, body_)) return false;
    for (OpId o : b.ops)
      if (has_effect(f_, o)) return false;
    yield_ = b.ops.back();
    for (size_t i = 0; i < b.ops.size(); ++i) pos_[b.ops[i]] = i;
    // Carried values whose next value depends on a load of the body cannot feed an early load.
    const std::vector<ValueId>& ys = f_.op(yield_).operands;
    for (size_t i = 0; i < ys.size(); ++i)
      if (!depends_on_load(ys[i])) usable_.insert(b.args[i + 1]);
    std::vector<OpId> loads;
    for (OpId o : b.ops)
      if (f_.op(o).code == Opcode::Load && m_.types.is_block(f_.type_of(f_.op(o).results[0])) && slice_ok(o))
        loads.push_back(o);
    if (loads.empty()) return false;
    for (OpId l : loads) pipeline(l);
    return true;
  }

 private:
  // Whether v, computed in the body, depends on a load of the body (through ops of the body).
  bool depends_on_load(ValueId v) {
    const OpId d = f_.value(v).def_op;
    if (d == kNoOp || !pos_.count(d)) return false;
    if (f_.op(d).code == Opcode::Load) return true;
    auto it = load_dep_.find(v);
    if (it != load_dep_.end()) return it->second;
    load_dep_[v] = false;
    bool dep = false;
    for (ValueId x : f_.op(d).operands)
      if (x != kNoValue && depends_on_load(x)) dep = true;
    for (BlockId r : f_.op(d).regions) dep = dep || region_loads(r);
    load_dep_[v] = dep;
    return dep;
  }
  bool region_loads(BlockId r) {
    for (OpId o : f_.block(r).ops) {
      if (f_.op(o).code == Opcode::Load) return true;
      for (BlockId x : f_.op(o).regions)
        if (region_loads(x)) return true;
    }
    return false;
  }

  // The ops of the body that load `l`'s operands depend on, in body order, when they can all be
  // computed an iteration early; false otherwise.
  bool slice_ok(OpId l) {
    std::set<size_t> seen;
    std::function<bool(ValueId)> visit = [&](ValueId v) {
      if (v == kNoValue) return true;
      const ValueData& vd = f_.value(v);
      if (vd.def_op == kNoOp) {
        if (vd.def_block != body_) return true;  // defined outside the loop
        return vd.index == 0 || usable_.count(v) > 0;
      }
      auto p = pos_.find(vd.def_op);
      if (p == pos_.end()) return true;  // defined outside the loop
      const OpData& d = f_.op(vd.def_op);
      if (!op_info(d.code).is_pure() || !d.regions.empty()) return false;
      if (!seen.insert(p->second).second) return true;
      for (ValueId x : d.operands)
        if (!visit(x)) return false;
      return true;
    };
    for (ValueId x : f_.op(l).operands)
      if (!visit(x)) return false;
    std::vector<OpId> s;
    for (size_t i : seen) s.push_back(f_.block(body_).ops[i]);
    slices_[l] = s;
    return true;
  }

  // Copies `l`'s slice and `l` itself at the end of `block` with the body's arguments mapped by
  // `map`; the copy's mask also requires `go` (an i1 scalar). Returns the loaded value.
  ValueId clone_load(OpId l, BlockId block, std::unordered_map<ValueId, ValueId> map, ValueId go) {
    Builder bld(&m_, &f_);
    bld.set_insertion_block(block);
    auto get = [&](ValueId v) {
      if (v == kNoValue) return v;
      auto it = map.find(v);
      return it == map.end() ? v : it->second;
    };
    for (OpId o : slices_[l]) {
      const OpData d = f_.op(o);  // a copy: create() may grow the table
      std::vector<ValueId> ops;
      for (ValueId x : d.operands) ops.push_back(get(x));
      std::vector<TypeId> ts;
      for (ValueId r : d.results) ts.push_back(f_.type_of(r));
      OpId c = bld.create(d.code, ops, ts, d.attrs, d.loc);
      for (size_t i = 0; i < d.results.size(); ++i) map[d.results[i]] = f_.op(c).results[i];
    }
    const OpData d = f_.op(l);
    const TypeId t = f_.type_of(d.results[0]);
    const TypeId mask_t = m_.types.with_elem(t, m_.types.scalar(Scalar::I1));
    ValueId go_v = bld.create1(Opcode::Splat, {go}, mask_t, {}, d.loc);
    const int mask_slot = op_info(Opcode::Load).slot_index("mask");
    std::vector<ValueId> ops;
    for (ValueId x : d.operands) ops.push_back(get(x));
    ops[mask_slot] = ops[mask_slot] == kNoValue ? go_v : bld.create1(Opcode::And, {ops[mask_slot], go_v}, mask_t, {}, d.loc);
    return bld.create1(Opcode::Load, ops, t, d.attrs, d.loc);
  }

  ValueId cmp(Builder& bld, const char* pred, ValueId a, ValueId b, Loc loc) {
    const AttrSpec& spec = op_info(Opcode::Cmp).attrs[0];
    const int64_t k = std::find(spec.enum_values.begin(), spec.enum_values.end(), pred) - spec.enum_values.begin();
    return bld.create1(Opcode::Cmp, {a, b}, m_.types.scalar(Scalar::I1), {Attr::of_enum(k)}, loc);
  }

  // Moves the ops created at the end of `block` since it had `n` ops to just before `before`.
  void move_before(BlockId block, size_t n, OpId before) {
    std::vector<OpId>& ops = f_.block(block).ops;
    std::vector<OpId> made(ops.begin() + static_cast<long>(n), ops.end());
    ops.resize(n);
    ops.insert(std::find(ops.begin(), ops.end(), before), made.begin(), made.end());
  }

  void pipeline(OpId l) {
    const Loc loc = f_.op(l).loc;
    const ValueId lo = f_.op(loop_).operands[0], hi = f_.op(loop_).operands[1], step = f_.op(loop_).operands[2];
    const BlockId outer = f_.op(loop_).parent;
    const TypeId it = f_.type_of(lo);
    Builder bld(&m_, &f_);
    // Before the loop: the first iteration's load, when there is a first iteration.
    {
      const size_t n = f_.block(outer).ops.size();
      bld.set_insertion_block(outer);
      ValueId zero = bld.create1(Opcode::Const, {}, it, {Attr::of_int(0)}, loc);
      ValueId go = bld.create1(Opcode::And, {cmp(bld, "slt", lo, hi, loc), cmp(bld, "sgt", step, zero, loc)},
                               m_.types.scalar(Scalar::I1), {}, loc);
      std::unordered_map<ValueId, ValueId> map;
      const BlockData& b = f_.block(body_);
      map[b.args[0]] = lo;
      for (size_t i = 1; i < b.args.size(); ++i) map[b.args[i]] = f_.op(loop_).operands[3 + i - 1];
      ValueId first = clone_load(l, outer, map, go);
      move_before(outer, n, loop_);
      // The loaded tile becomes a carried value: an init, an argument and a result.
      const TypeId t = f_.type_of(first);
      f_.op(loop_).operands.push_back(first);
      const uint32_t idx = static_cast<uint32_t>(f_.block(body_).args.size());
      ValueId arg = bld.new_value(t, kNoOp, body_, idx);
      f_.block(body_).args.push_back(arg);
      ValueId res = bld.new_value(t, loop_, kNoBlock, static_cast<uint32_t>(f_.op(loop_).results.size()));
      f_.op(loop_).results.push_back(res);
      replace_uses(f_, {{f_.op(l).results[0], arg}});
      carried_ = arg;
    }
    // At the end of the body: the next iteration's load, when there is a next iteration (k + s
    // below hi, and not wrapped past the top of the type).
    {
      const size_t n = f_.block(body_).ops.size();
      bld.set_insertion_block(body_);
      const BlockData& b = f_.block(body_);
      ValueId k = b.args[0];
      ValueId next = bld.create1(Opcode::Add, {k, step}, it, {}, loc);
      ValueId go = bld.create1(Opcode::And, {cmp(bld, "slt", next, hi, loc), cmp(bld, "sgt", next, k, loc)},
                               m_.types.scalar(Scalar::I1), {}, loc);
      std::unordered_map<ValueId, ValueId> map;
      map[b.args[0]] = next;
      const std::vector<ValueId> ys = f_.op(yield_).operands;
      for (size_t i = 0; i < ys.size(); ++i) map[f_.block(body_).args[i + 1]] = ys[i];
      ValueId loaded = clone_load(l, body_, map, go);
      move_before(body_, n, yield_);
      f_.op(yield_).operands.push_back(loaded);
    }
    // The original load is gone: its uses read the carried value.
    std::vector<OpId>& ops = f_.block(body_).ops;
    ops.erase(std::find(ops.begin(), ops.end(), l));
  }

  Module& m_;
  Function& f_;
  OpId loop_;
  BlockId body_ = kNoBlock;
  OpId yield_ = kNoOp;
  ValueId carried_ = kNoValue;
  std::unordered_map<OpId, size_t> pos_;
  std::set<ValueId> usable_;
  std::unordered_map<ValueId, bool> load_dep_;
  std::unordered_map<OpId, std::vector<OpId>> slices_;
};

void collect_loops(const Function& f, BlockId b, std::vector<OpId>* out) {
  for (OpId o : f.block(b).ops) {
    for (BlockId r : f.op(o).regions) collect_loops(f, r, out);
    if (f.op(o).code == Opcode::For) out->push_back(o);
  }
}

}  // namespace

bool pipeline_loads(Module& m, Function& f) {
  std::vector<OpId> loops;
  collect_loops(f, f.body, &loops);
  bool changed = false;
  for (OpId o : loops) changed |= Pipeliner(m, f, o).run();
  return changed;
}

}  // namespace tri::passes
