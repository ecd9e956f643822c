// Unstructured control flow in TTIR: regions of several blocks joined by `cf.br` and
// `cf.cond_br`, made into Tri's structured `if`s at import (docs/import.md, "Early returns").
//
// Triton's frontend writes an `if` that contains a `return` as branches between blocks (its
// `visit_if_top_level`), and MLIR's inliner does the same for a helper function with several
// returns (each return becomes a `cf.br` to the block after the call, with the returned values as
// block arguments). Triton refuses returns inside loops, so the graph of blocks has no cycles.
//
// Any acyclic graph is arranged here, without copying any block, by its dominator tree: a block
// is emitted, in order, inside the region of the block that dominates it. A block entered by one
// edge only is emitted where that edge is taken (inside the `if` of a cond_br, with its block
// arguments replaced by the values the edge passes). A block entered by several edges (a join)
// is emitted after the terminator of its immediate dominator: the `if`s leading there yield which
// join comes next (an i32 selector, when it can be one of several) and the values for its block
// arguments, and an `if %sel == J` runs the join. The exits (`tt.return`, or whatever terminates
// the region) become one terminator at the end, whose values are yielded the same way; a block
// whose exit is taken (an early return) thus leaves the rest of the region unexecuted, as the
// `else` of the `if` that returns. Values keep their definitions: a value defined in a block is
// visible in every block it dominates, which is emitted inside it.
#include <algorithm>
#include <map>

#include "import/triton/ttir_reader.h"
#include "ir/limits.h"
#include "passes/rewrite.h"

namespace tri::import {

using namespace tri::ir;

namespace {
// Blocks per region: far above what Triton writes (a few per early return), and low enough that
// the recursion over the dominator tree cannot exhaust the stack.
constexpr size_t kMaxCfgBlocks = 1024;

std::string block_name(const CfgBlock& b) { return b.label.empty() ? std::string("the entry block") : "^" + b.label; }
}  // namespace

// ---------------------------------------------------------------- reading

RegionCfg& Reader::current_cfg() {
  RegionState& r = regions_.back();
  if (!r.cfg) {
    r.cfg = std::make_unique<RegionCfg>();
    r.cfg->region = r.region;
    r.cfg->blocks.emplace_back();
    r.cfg->blocks[0].block = r.region;
    r.cfg->blocks[0].at = r.first;
  }
  return *r.cfg;
}

namespace {
int block_index(RegionCfg& cfg, const std::string& label, Loc at) {
  auto it = cfg.by_label.find(label);
  if (it != cfg.by_label.end()) return it->second;
  if (cfg.blocks.size() >= kMaxCfgBlocks)
    throw ImportError{error_at(Code::LimitExceeded, "", at, "")};  // replaced by the caller's message
  int i = static_cast<int>(cfg.blocks.size());
  cfg.blocks.emplace_back();
  cfg.blocks[i].label = label;
  cfg.blocks[i].ref_at = at;
  cfg.by_label.emplace(label, i);
  return i;
}
}  // namespace

void Reader::parse_cfg_label() {
  Loc at = c_.loc();
  RegionCfg& cfg = current_cfg();
  std::vector<std::string> names;
  std::vector<TypeId> types;
  std::string label;
  parse_block_header(&names, &types, &label);
  int i;
  try {
    i = block_index(cfg, label, at);
  } catch (const ImportError&) {
    throw ImportError{error_at(Code::LimitExceeded, source_, at,
                               "a region of more than " + std::to_string(kMaxCfgBlocks) + " blocks")};
  }
  CfgBlock& blk = cfg.blocks[i];
  if (blk.block != kNoBlock) c_.fail(at, "block ^" + label + " is defined twice");
  blk.block = b_->create_block(types);
  blk.at = at;
  for (size_t k = 0; k < names.size(); ++k) define(names[k], f_->blocks[blk.block].args[k]);
  cfg.current = i;
  b_->set_insertion_block(blk.block);
}

void Reader::op_branch(const std::string& name) {
  // cf.br ^bb3(%v : T)        cf.cond_br %c [weights([a, b])], ^bb1, ^bb2(%v : T) [{attrs}]
  RegionCfg& cfg = current_cfg();
  int self = cfg.current;
  if (cfg.blocks[self].term != CfgBlock::Term::None) malformed("a second branch ends the same block");
  auto successor = [&](CfgEdge* e) {
    Loc at = c_.loc();
    c_.expect('^', "a successor block (^bb1)");
    std::string label = c_.ident("a block label");
    try {
      e->target = block_index(cfg, label, at);
    } catch (const ImportError&) {
      throw ImportError{error_at(Code::LimitExceeded, source_, at,
                                 "a region of more than " + std::to_string(kMaxCfgBlocks) + " blocks")};
    }
    if (c_.eat('(')) {
      e->args = operand_list();
      c_.expect(':', "':' before the types of the block arguments");
      parse_type_list();
      c_.expect(')', "')' closing the block arguments");
    }
  };
  CfgEdge e0, e1;
  ValueId cond = kNoValue;
  if (name == "cf.br") {
    successor(&e0);
  } else {
    Loc cat = c_.loc();
    cond = operand();
    if (f_->type_of(cond) != scalar(Scalar::I1)) c_.fail(cat, "cf.cond_br's condition is not an i1 scalar");
    if (c_.eat_word("weights")) c_.skip_balanced();
    c_.expect(',', "',' after the condition");
    successor(&e0);
    c_.expect(',', "',' between the successors");
    successor(&e1);
  }
  skip_trailing_attrs();
  CfgBlock& blk = cfg.blocks[self];  // (block_index may have grown the vector)
  blk.term = name == "cf.br" ? CfgBlock::Term::Branch : CfgBlock::Term::CondBranch;
  blk.cond = cond;
  blk.edges[0] = std::move(e0);
  blk.edges[1] = std::move(e1);
  cur_.branch_block = self;
}

// ---------------------------------------------------------------- structuring

class CfgStructurer {
 public:
  CfgStructurer(Reader& r, RegionCfg& cfg) : r_(r), f_(*r.f_), cfg_(cfg), n_(static_cast<int>(cfg.blocks.size())) {}

  void run() {
    check_blocks();
    order();
    dominators();
    r_.b_->set_insertion_block(cfg_.region);
    Flow flow = emit_block(0);
    if (flow.targets.size() != 1 || flow.targets[0] != exit_id())
      r_.malformed("internal error: a branch target was left unstructured");  // unreachable
    const CfgBlock& last = cfg_.blocks[exit_block_];
    r_.with_loc(last.term_at, exit_loc_, [&] { r_.make(exit_code_, flow.args[exit_id()], {}); });
    check_placed();
  }

 private:
  // Where control goes next, with the values it carries: a join (a block index) or the exit.
  struct Flow {
    std::vector<int> targets;  // sorted, distinct
    ValueId sel = kNoValue;    // i32 holding the target, when there are several
    std::map<int, std::vector<ValueId>> args;
  };

  int exit_id() const { return n_; }

  [[noreturn]] void fail(Loc at, const std::string& what) {
    throw ImportError{error_at(Code::Parse, r_.source_, at, what)};
  }

  // Every block is defined and ends with a branch or with a terminator of one kind (whose
  // values have one list of types); branches pass values of the successor's argument types.
  void check_blocks() {
    exit_block_ = -1;
    for (int i = 0; i < n_; ++i) {
      CfgBlock& b = cfg_.blocks[i];
      if (b.block == kNoBlock) fail(b.ref_at, "a branch to ^" + b.label + ", which is not defined in the region");
      std::vector<OpId>& ops = f_.blocks[b.block].ops;
      bool ends_with_term = !ops.empty() && op_info(f_.ops[ops.back()].code).is_terminator();
      if (b.term != CfgBlock::Term::None) {
        int edges = b.term == CfgBlock::Term::CondBranch ? 2 : 1;
        for (int k = 0; k < edges; ++k) {
          const CfgEdge& e = b.edges[k];
          if (e.target == 0) fail(b.term_at, "a branch to the region's entry block");
          if (cfg_.blocks[e.target].block == kNoBlock)
            fail(cfg_.blocks[e.target].ref_at, "a branch to ^" + cfg_.blocks[e.target].label +
                                                   ", which is not defined in the region");
          const BlockData& t = f_.blocks[cfg_.blocks[e.target].block];
          if (e.args.size() != t.args.size())
            fail(b.term_at, "the branch to ^" + cfg_.blocks[e.target].label + " passes " + std::to_string(e.args.size()) +
                                " value(s); the block takes " + std::to_string(t.args.size()));
          for (size_t a = 0; a < e.args.size(); ++a)
            if (f_.type_of(e.args[a]) != f_.type_of(t.args[a]))
              fail(b.term_at, "the branch to ^" + cfg_.blocks[e.target].label + " passes a " +
                                  r_.m_->type_str(f_.type_of(e.args[a])) + " for an argument of type " +
                                  r_.m_->type_str(f_.type_of(t.args[a])));
        }
        continue;
      }
      if (!ends_with_term) fail(b.at, block_name(b) + " does not end with a terminator");
      OpId t = ops.back();
      exit_op_.emplace(i, t);
      std::vector<TypeId> types;
      for (ValueId v : f_.ops[t].operands) types.push_back(f_.type_of(v));
      if (exit_block_ < 0) {
        exit_block_ = i;
        exit_code_ = f_.ops[t].code;
        exit_types_ = types;
        b.term_at = f_.ops[t].loc;
      } else if (f_.ops[t].code != exit_code_ || types != exit_types_) {
        fail(f_.ops[t].loc, "the blocks of a region end with different terminators ('" +
                                std::string(op_info(exit_code_).name) + "' and '" + op_info(f_.ops[t].code).name + "')");
      }
      if (exit_block_ == i) b.term_at = f_.ops[t].loc;
    }
    if (exit_block_ < 0) fail(cfg_.blocks[0].at, "no block of the region ends with a terminator (every path loops)");
    // The location the final terminator gets: that of the first exit (a pending location).
    for (const auto& p : r_.pending_)
      if (p.f == &f_ && p.op == exit_op_[exit_block_]) exit_loc_ = p.loc;
  }

  // Reverse postorder from the entry; a back edge (a cycle) is refused.
  void order() {
    std::vector<int> state(n_, 0);  // 0 new, 1 on the stack, 2 done
    std::vector<int> post;
    std::vector<std::pair<int, int>> stack = {{0, 0}};
    state[0] = 1;
    while (!stack.empty()) {
      auto& [b, next] = stack.back();
      const CfgBlock& blk = cfg_.blocks[b];
      int edges = blk.term == CfgBlock::Term::CondBranch ? 2 : blk.term == CfgBlock::Term::Branch ? 1 : 0;
      if (next < edges) {
        int t = blk.edges[next++].target;
        if (state[t] == 1)
          r_.unsupported_at(blk.term_at, "a loop made of branches (" + block_name(blk) + " branches back to " +
                                             block_name(cfg_.blocks[t]) +
                                             ") is not supported: Tri's loops are structured (Triton writes them as "
                                             "scf.for and scf.while)");
        if (state[t] == 0) {
          state[t] = 1;
          stack.emplace_back(t, 0);
        }
        continue;
      }
      state[b] = 2;
      post.push_back(b);
      stack.pop_back();
    }
    rpo_.assign(post.rbegin(), post.rend());
    rpo_index_.assign(n_, -1);
    for (size_t i = 0; i < rpo_.size(); ++i) rpo_index_[rpo_[i]] = static_cast<int>(i);
    preds_.assign(n_, {});
    for (int b : rpo_) {
      const CfgBlock& blk = cfg_.blocks[b];
      int edges = blk.term == CfgBlock::Term::CondBranch ? 2 : blk.term == CfgBlock::Term::Branch ? 1 : 0;
      for (int k = 0; k < edges; ++k) preds_[blk.edges[k].target].push_back(b);
    }
  }

  // Immediate dominators (Cooper, Harvey and Kennedy's iteration over the reverse postorder;
  // one pass suffices on an acyclic graph) and each block's joins.
  void dominators() {
    idom_.assign(n_, -1);
    idom_[0] = 0;
    auto intersect = [&](int a, int b) {
      while (a != b) {
        while (rpo_index_[a] > rpo_index_[b]) a = idom_[a];
        while (rpo_index_[b] > rpo_index_[a]) b = idom_[b];
      }
      return a;
    };
    for (size_t i = 1; i < rpo_.size(); ++i) {
      int b = rpo_[i], d = -1;
      for (int p : preds_[b]) d = d < 0 ? p : intersect(p, d);
      idom_[b] = d;
    }
    joins_.assign(n_, {});
    for (int b : rpo_)
      if (b != 0 && preds_[b].size() > 1) joins_[idom_[b]].push_back(b);  // in reverse postorder
  }

  bool is_join(int b) const { return preds_[b].size() > 1; }

  // A block that only exits (MLIR merges the `tt.return`s of early returns into one such block):
  // an edge to it is the exit itself, with the block's arguments replaced by the edge's values.
  bool only_exits(int b) const {
    auto exit = exit_op_.find(b);
    return exit != exit_op_.end() && f_.blocks[cfg_.blocks[b].block].ops.size() == 1;
  }

  // Where an edge leads when its target is not emitted in place: the exit, or the join.
  Flow edge_flow(const CfgEdge& e) const {
    Flow f;
    if (only_exits(e.target)) {
      const std::vector<ValueId>& args = f_.blocks[cfg_.blocks[e.target].block].args;
      std::vector<ValueId> vals = f_.ops[exit_op_.at(e.target)].operands;
      for (ValueId& v : vals)
        for (size_t i = 0; i < args.size(); ++i)
          if (v == args[i]) v = e.args[i];
      f.targets = {exit_id()};
      f.args[exit_id()] = std::move(vals);
      return f;
    }
    f.targets = {e.target};
    f.args[e.target] = e.args;
    return f;
  }

  std::vector<TypeId> target_types(int t) const {
    if (t == exit_id()) return exit_types_;
    std::vector<TypeId> out;
    for (ValueId a : f_.blocks[cfg_.blocks[t].block].args) out.push_back(f_.type_of(a));
    return out;
  }

  // Block b's arguments are `vals` from here on.
  void bind_args(int b, const std::vector<ValueId>& vals) {
    const std::vector<ValueId>& args = f_.blocks[cfg_.blocks[b].block].args;
    for (size_t i = 0; i < args.size(); ++i) repl_[args[i]] = vals[i];
  }

  // Emits block b (and the blocks it dominates) at the insertion point; returns where control
  // goes after them.
  Flow emit_block(int b) {
    Flow flow;
    for (;;) {
      const CfgBlock& blk = cfg_.blocks[b];
      BlockId dst = r_.b_->insertion_block();
      std::vector<OpId>& ops = f_.blocks[blk.block].ops;
      auto exit = exit_op_.find(b);
      if (exit != exit_op_.end()) ops.pop_back();
      if (blk.block != dst) {
        for (OpId o : ops) {
          f_.ops[o].parent = dst;
          f_.blocks[dst].ops.push_back(o);
        }
        ops.clear();
      }
      if (exit != exit_op_.end()) {
        flow.targets = {exit_id()};
        flow.args[exit_id()] = f_.ops[exit->second].operands;
      } else if (blk.term == CfgBlock::Term::Branch) {
        const CfgEdge& e = blk.edges[0];
        if (!is_join(e.target) && !only_exits(e.target)) {
          // A straight line: continue with the successor here (no recursion for long chains). b
          // dominates no join: its successor dominates whatever b does but b itself.
          bind_args(e.target, e.args);
          b = e.target;
          continue;
        }
        flow = edge_flow(e);
      } else {
        flow = emit_cond_branch(blk);
      }
      emit_joins(b, &flow);
      return flow;
    }
  }

  void emit_joins(int b, Flow* flow) {
    for (int j : joins_[b]) {
      auto at = std::find(flow->targets.begin(), flow->targets.end(), j);
      if (at == flow->targets.end()) continue;  // every edge to j was an exit (only_exits)
      if (flow->targets.size() == 1) {
        bind_args(j, flow->args[j]);
        *flow = emit_block(j);
        continue;
      }
      // if %sel == j { j } else { pass the other targets on }
      const CfgBlock& jb = cfg_.blocks[j];
      ValueId is_j = kNoValue;
      OpId if_op = kNoOp;
      r_.with_loc(jb.at, kNoLoc, [&] {
        ValueId code = r_.const_i32(j);
        is_j = r_.make1(Opcode::Cmp, {flow->sel, code}, r_.scalar(Scalar::I1), {Attr::of_enum(0)});  // eq
        if_op = r_.make(Opcode::If, {is_j}, {});
      });
      Flow rest = *flow;
      rest.targets.erase(std::find(rest.targets.begin(), rest.targets.end(), j));
      rest.args.erase(j);
      std::vector<ValueId> jargs = flow->args[j];
      *flow = emit_if(if_op, jb.at, kNoLoc, [&] {
        bind_args(j, jargs);
        return emit_block(j);
      }, [&] { return rest; });
    }
  }

  // cond_br %c, T, F: if %c { T } else { F }, each side emitting its successor when the edge is
  // its only way in, else passing the join on.
  Flow emit_cond_branch(const CfgBlock& blk) {
    OpId if_op = kNoOp;
    r_.with_loc(blk.term_at, blk.term_loc, [&] { if_op = r_.make(Opcode::If, {blk.cond}, {}); });
    auto side = [&](const CfgEdge& e) {
      return [&, e]() -> Flow {
        if (!is_join(e.target) && !only_exits(e.target)) {
          bind_args(e.target, e.args);
          return emit_block(e.target);
        }
        return edge_flow(e);
      };
    };
    return emit_if(if_op, blk.term_at, blk.term_loc, side(blk.edges[0]), side(blk.edges[1]));
  }

  // Fills the two regions of `if_op` with what `then_fn` and `else_fn` emit, and gives the if
  // the results that carry their flows on.
  template <class ThenFn, class ElseFn>
  Flow emit_if(OpId if_op, Loc at, LocId loc, ThenFn&& then_fn, ElseFn&& else_fn) {
    if (r_.depth_ + ++nesting_ > kMaxNesting)
      throw ImportError{error_at(Code::LimitExceeded, r_.source_, at,
                                 "branches nested more than " + std::to_string(kMaxNesting) +
                                     " deep once structured (kMaxNesting)")};
    BlockId saved = r_.b_->insertion_block();
    BlockId then_b = r_.b_->add_region(if_op, {});
    BlockId else_b = r_.b_->add_region(if_op, {});
    r_.b_->set_insertion_block(then_b);
    Flow f0 = then_fn();
    BlockId then_end = r_.b_->insertion_block();
    r_.b_->set_insertion_block(else_b);
    Flow f1 = else_fn();
    BlockId else_end = r_.b_->insertion_block();
    --nesting_;

    Flow out;
    std::set_union(f0.targets.begin(), f0.targets.end(), f1.targets.begin(), f1.targets.end(),
                   std::back_inserter(out.targets));
    bool selector = out.targets.size() > 1;
    std::vector<TypeId> types;
    if (selector) types.push_back(r_.scalar(Scalar::I32));
    for (int t : out.targets)
      for (TypeId ty : target_types(t)) types.push_back(ty);
    auto yield = [&](BlockId b, Flow& f) {
      r_.b_->set_insertion_block(b);
      r_.with_loc(at, loc, [&] {
        std::vector<ValueId> vals;
        if (selector) vals.push_back(f.targets.size() == 1 ? r_.const_i32(f.targets[0]) : f.sel);
        for (int t : out.targets) {
          auto it = f.args.find(t);
          if (it != f.args.end()) {
            vals.insert(vals.end(), it->second.begin(), it->second.end());
          } else {
            for (TypeId ty : target_types(t)) vals.push_back(r_.filler(ty));  // never read
          }
        }
        r_.make(Opcode::Yield, vals, {});
      });
    };
    yield(then_end, f0);
    yield(else_end, f1);
    r_.b_->set_insertion_block(saved);
    for (uint32_t i = 0; i < types.size(); ++i)
      f_.ops[if_op].results.push_back(r_.b_->new_value(types[i], if_op, kNoBlock, i));
    const std::vector<ValueId>& res = f_.ops[if_op].results;
    size_t k = 0;
    if (selector) out.sel = res[k++];
    for (int t : out.targets) {
      std::vector<ValueId>& a = out.args[t];
      for (size_t i = 0; i < target_types(t).size(); ++i) {
        // A join's arguments keep their names (made unique: several ifs may carry them).
        if (t != exit_id())
          f_.values[res[k]].name = r_.tri_value_name(f_.values[f_.blocks[cfg_.blocks[t].block].args[i]].name);
        a.push_back(res[k++]);
      }
    }
    return out;
  }

  // Every value an op uses is defined by an op that was placed, or is a block argument of a
  // placed block (a block no path reaches is dropped; nothing placed may use its values).
  void check_placed() {
    passes::replace_uses(f_, repl_);
    std::vector<char> placed(f_.values.size(), 0);
    std::vector<BlockId> stack = {cfg_.region};
    std::vector<OpId> ops;
    for (ValueId v : f_.blocks[cfg_.region].args) placed[v] = 1;
    while (!stack.empty()) {
      BlockId b = stack.back();
      stack.pop_back();
      for (OpId o : f_.blocks[b].ops) {
        ops.push_back(o);
        for (ValueId v : f_.ops[o].results) placed[v] = 1;
        for (BlockId rb : f_.ops[o].regions) {
          for (ValueId v : f_.blocks[rb].args) placed[v] = 1;
          stack.push_back(rb);
        }
      }
    }
    std::vector<char> dropped(f_.values.size(), 0);
    for (int b = 0; b < n_; ++b) {
      if (rpo_index_[b] >= 0) continue;
      for (ValueId v : f_.blocks[cfg_.blocks[b].block].args) dropped[v] = 1;
      std::vector<BlockId> st = {cfg_.blocks[b].block};
      while (!st.empty()) {
        BlockId x = st.back();
        st.pop_back();
        for (OpId o : f_.blocks[x].ops) {
          for (ValueId v : f_.ops[o].results) dropped[v] = 1;
          for (BlockId rb : f_.ops[o].regions) {
            for (ValueId v : f_.blocks[rb].args) dropped[v] = 1;
            st.push_back(rb);
          }
        }
      }
    }
    for (OpId o : ops)
      for (ValueId v : f_.ops[o].operands)
        if (v != kNoValue && dropped[v] && !placed[v])
          fail(f_.ops[o].loc, "a value defined in a block that no path reaches is used (%" + f_.values[v].name + ")");
  }

  Reader& r_;
  Function& f_;
  RegionCfg& cfg_;
  int n_;
  std::vector<int> rpo_, rpo_index_, idom_;
  std::vector<std::vector<int>> preds_, joins_;
  std::map<int, OpId> exit_op_;  // exit blocks and their terminators
  int exit_block_ = -1;
  Opcode exit_code_ = Opcode::Return;
  std::vector<TypeId> exit_types_;
  LocId exit_loc_ = kNoLoc;
  std::unordered_map<ValueId, ValueId> repl_;  // block arguments -> the values they receive
  int nesting_ = 0;
};

void Reader::structure(RegionCfg& cfg) {
  CfgStructurer(*this, cfg).run();
  if (std::find(structured_.begin(), structured_.end(), f_) == structured_.end()) structured_.push_back(f_);
}

}  // namespace tri::import
