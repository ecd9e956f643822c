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
// with: everything that is not pure, except loads themselves, and except stores and atomics in a
// loop marked loads_ahead (its iterations pass no values through memory, docs/ir.md).
bool has_effect(const Function& f, OpId o, bool loads_ahead) {
  const OpData& op = f.op(o);
  if (op.code == Opcode::Load) return false;
  if (loads_ahead && (op.code == Opcode::Store || op.code == Opcode::Atomic || op.code == Opcode::AtomicCas))
    return false;
  if (!op_info(op.code).is_pure() && !op_info(op.code).is_terminator()) return true;
  for (BlockId r : op.regions)
    for (OpId x : f.block(r).ops)
      if (has_effect(f, x, loads_ahead)) return true;
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
  Pipeliner(Module& m, Function& f, OpId loop, int stages) : m_(m), f_(f), loop_(loop), stages_(stages) {}

  bool run() {
    const OpData& op = f_.op(loop_);
    body_ = op.regions[0];
    const BlockData& b = f_.block(body_);
    if (b.ops.empty() || !holds_dot(f_, body_)) return false;
    const int ai = op_info(Opcode::For).attr_index("loads_ahead");
    const bool loads_ahead =
        ai >= 0 && ai < static_cast<int>(op.attrs.size()) && op.attrs[ai].present() && op.attrs[ai].i != 0;
    for (OpId o : b.ops)
      if (has_effect(f_, o, loads_ahead)) return false;
    yield_ = b.ops.back();
    hi_ = op.operands[1];
    step_ = op.operands[2];
    ys_ = f_.op(yield_).operands;
    for (size_t i = 0; i < b.ops.size(); ++i) pos_[b.ops[i]] = i;
    // Carried values whose next value depends on a load of the body (or on an op with regions)
    // cannot feed an early load: their values iterations ahead are computed by copying the ops.
    for (size_t i = 0; i < ys_.size(); ++i)
      if (!depends_on_load(ys_[i]) && simple(ys_[i])) usable_.insert(b.args[i + 1]);
    std::vector<OpId> loads;
    for (OpId o : b.ops)
      if (f_.op(o).code == Opcode::Load && m_.types.is_block(f_.type_of(f_.op(o).results[0])) && slice_ok(o))
        loads.push_back(o);
    if (loads.empty()) return false;
    // A tile a dot reads is loaded stages - 1 iterations ahead (on the GPU it waits in a ring in
    // shared memory); any other tile is held in registers until its use, one iteration's worth
    // ahead: more would multiply its registers by the stages (attention backward's per-column
    // m and Di, and the linear-attention kernels' gates, spilled) for latency that one
    // iteration of a loop of dots already hides.
    // A row or column used only spread over the block (`m[None, :]`) stays where it is: it is
    // small, and in place the GPU loads it in its use's layout, where a carried copy would cross
    // shared memory every iteration to get there.
    for (OpId l : loads) {
      const ValueId r = f_.op(l).results[0];
      if (feeds_dot(r)) pipeline(l, stages_);
      else if (!only_spread(r)) pipeline(l, std::min(stages_, 2));
    }
    return true;
  }

 private:
  // Whether v's computation in the body is ops without regions.
  bool simple(ValueId v) {
    const OpId d = f_.value(v).def_op;
    if (d == kNoOp || !pos_.count(d)) return true;
    auto it = simple_.find(v);
    if (it != simple_.end()) return it->second;
    bool ok = f_.op(d).regions.empty();
    simple_[v] = ok;  // provisional: the IR has no cycles through ops
    for (ValueId x : f_.op(d).operands)
      if (ok && x != kNoValue && !simple(x)) ok = false;
    return simple_[v] = ok;
  }

  // Whether v is an operand of a dot of the body, directly or through transposes and views.
  bool feeds_dot(ValueId v) {
    for (OpId u : f_.block(body_).ops) {
      const OpData& uo = f_.op(u);
      for (size_t k = 0; k < uo.operands.size(); ++k) {
        if (uo.operands[k] != v) continue;
        if (uo.code == Opcode::Dot && k <= 1) return true;
        if ((uo.code == Opcode::Permute || uo.code == Opcode::Reshape) && feeds_dot(uo.results[0])) return true;
      }
    }
    return false;
  }

  // Whether every use of v in the body spreads it over a larger block (expand_dims then
  // broadcast, or broadcast).
  bool only_spread(ValueId v) {
    bool any = false;
    for (OpId u : f_.block(body_).ops) {
      const OpData& uo = f_.op(u);
      for (ValueId x : uo.operands) {
        if (x != v) continue;
        any = true;
        if (uo.code == Opcode::Broadcast) continue;
        if (uo.code == Opcode::ExpandDims && only_spread(uo.results[0])) continue;
        return false;
      }
    }
    return any;
  }

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

  // The value of `v` (computed in the body from the iteration's arguments) in the iteration that
  // `cur` maps the body's arguments to: the ops computing it are copied at the end of `where`.
  ValueId clone_value(ValueId v, BlockId where, std::unordered_map<ValueId, ValueId>& cur) {
    auto it = cur.find(v);
    if (it != cur.end()) return it->second;
    const ValueData& vd = f_.value(v);
    if (vd.def_op == kNoOp || !pos_.count(vd.def_op)) return v;  // defined outside the loop
    const OpData d = f_.op(vd.def_op);  // a copy: creating ops may grow the table
    std::vector<ValueId> ops;
    for (ValueId x : d.operands) ops.push_back(x == kNoValue ? x : clone_value(x, where, cur));
    std::vector<TypeId> ts;
    for (ValueId r : d.results) ts.push_back(f_.type_of(r));
    Builder bld(&m_, &f_);
    bld.set_insertion_block(where);
    OpId c = bld.create(d.code, ops, ts, d.attrs, d.loc);
    for (size_t i = 0; i < d.results.size(); ++i) cur[d.results[i]] = f_.op(c).results[i];
    return cur.at(v);
  }

  // The arguments of the iteration after the one `cur` describes (only the induction variable
  // and the carried values loads may read), computed at the end of `where`.
  std::unordered_map<ValueId, ValueId> advance(BlockId where, std::unordered_map<ValueId, ValueId> cur, Loc loc) {
    const BlockData& b = f_.block(body_);
    Builder bld(&m_, &f_);
    bld.set_insertion_block(where);
    std::unordered_map<ValueId, ValueId> next;
    next[b.args[0]] = bld.create1(Opcode::Add, {cur.at(b.args[0]), step_}, f_.type_of(step_), {}, loc);
    for (size_t i = 0; i < ys_.size(); ++i)
      if (usable_.count(b.args[i + 1])) next[b.args[i + 1]] = clone_value(ys_[i], where, cur);
    return next;
  }

  // Loads `l` for the iteration `map` describes, at the end of `block`, masked off unless that
  // iteration exists: `k < hi` and, for a later one, `k > prev` (no wrap past the type's top).
  ValueId load_at(OpId l, BlockId block, std::unordered_map<ValueId, ValueId> map, ValueId prev_k, Loc loc) {
    Builder bld(&m_, &f_);
    bld.set_insertion_block(block);
    const ValueId k = map.at(f_.block(body_).args[0]);
    ValueId go;
    if (prev_k == kNoValue) {
      ValueId zero = bld.create1(Opcode::Const, {}, f_.type_of(step_), {Attr::of_int(0)}, loc);
      go = bld.create1(Opcode::And, {cmp(bld, "slt", k, hi_, loc), cmp(bld, "sgt", step_, zero, loc)},
                       m_.types.scalar(Scalar::I1), {}, loc);
    } else {
      go = bld.create1(Opcode::And, {cmp(bld, "slt", k, hi_, loc), cmp(bld, "sgt", k, prev_k, loc)},
                       m_.types.scalar(Scalar::I1), {}, loc);
    }
    return clone_load(l, block, map, go);
  }

  void pipeline(OpId l, int stages) {
    const Loc loc = f_.op(l).loc;
    const BlockId outer = f_.op(loop_).parent;
    const BlockData& b0 = f_.block(body_);
    Builder bld(&m_, &f_);
    // Before the loop: the loads of the first stages - 1 iterations, each masked off when
    // that iteration does not run.
    std::vector<ValueId> firsts;
    {
      const size_t n = f_.block(outer).ops.size();
      std::unordered_map<ValueId, ValueId> map;
      map[b0.args[0]] = f_.op(loop_).operands[0];
      for (size_t i = 0; i < ys_.size(); ++i) map[b0.args[i + 1]] = f_.op(loop_).operands[3 + i];
      ValueId prev = kNoValue;
      for (int j = 0; j + 1 < stages; ++j) {
        if (j > 0) {
          prev = map.at(b0.args[0]);
          map = advance(outer, map, loc);
        }
        firsts.push_back(load_at(l, outer, map, prev, loc));
      }
      move_before(outer, n, loop_);
    }
    // The loaded tiles become carried values t_0 .. t_{stages-2} (t_j: iteration k + j): inits,
    // arguments and results of the loop. The body's uses of the load read t_0.
    std::vector<ValueId> args;
    const TypeId t = f_.type_of(f_.op(l).results[0]);
    for (ValueId first : firsts) {
      f_.op(loop_).operands.push_back(first);
      args.push_back(bld.new_value(t, kNoOp, body_, static_cast<uint32_t>(f_.block(body_).args.size())));
      f_.block(body_).args.push_back(args.back());
      f_.op(loop_).results.push_back(bld.new_value(t, loop_, kNoBlock, static_cast<uint32_t>(f_.op(loop_).results.size())));
    }
    replace_uses(f_, {{f_.op(l).results[0], args[0]}});
    // At the end of the body: the load of iteration k + (stages - 1) step, when it runs; the
    // yield shifts the tiles down by one.
    {
      const size_t n = f_.block(body_).ops.size();
      std::unordered_map<ValueId, ValueId> map;
      const BlockData& b = f_.block(body_);
      map[b.args[0]] = b.args[0];
      for (size_t i = 0; i < ys_.size(); ++i) map[b.args[i + 1]] = b.args[i + 1];
      ValueId prev = kNoValue;
      for (int j = 1; j < stages; ++j) {
        prev = map.at(b.args[0]);
        map = advance(body_, map, loc);
      }
      ValueId loaded = load_at(l, body_, map, prev, loc);
      move_before(body_, n, yield_);
      for (size_t j = 1; j < args.size(); ++j) f_.op(yield_).operands.push_back(args[j]);
      f_.op(yield_).operands.push_back(loaded);
    }
    // The original load is gone.
    std::vector<OpId>& ops = f_.block(body_).ops;
    ops.erase(std::find(ops.begin(), ops.end(), l));
  }

  Module& m_;
  Function& f_;
  OpId loop_;
  BlockId body_ = kNoBlock;
  OpId yield_ = kNoOp;
  int stages_ = 2;
  ValueId hi_ = kNoValue, step_ = kNoValue;
  std::vector<ValueId> ys_;  // the yield's operands before the pass added any
  std::unordered_map<OpId, size_t> pos_;
  std::set<ValueId> usable_;
  std::unordered_map<ValueId, bool> load_dep_, simple_;
  std::unordered_map<OpId, std::vector<OpId>> slices_;
};

void collect_loops(const Function& f, BlockId b, std::vector<OpId>* out) {
  for (OpId o : f.block(b).ops) {
    for (BlockId r : f.op(o).regions) collect_loops(f, r, out);
    if (f.op(o).code == Opcode::For) out->push_back(o);
  }
}

}  // namespace

bool pipeline_loads(Module& m, Function& f, int stages) {
  std::vector<OpId> loops;
  collect_loops(f, f.body, &loops);
  bool changed = false;
  for (OpId o : loops) changed |= Pipeliner(m, f, o, stages).run();
  return changed;
}

}  // namespace tri::passes
