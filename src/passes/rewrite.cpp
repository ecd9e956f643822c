#include "passes/rewrite.h"

namespace tri::passes {

using namespace ir;

void replace_uses(Function& f, const std::unordered_map<ValueId, ValueId>& repl) {
  if (repl.empty()) return;
  auto resolve = [&](ValueId v) {
    for (auto it = repl.find(v); it != repl.end(); it = repl.find(v)) v = it->second;
    return v;
  };
  for (OpData& op : f.ops)
    for (ValueId& v : op.operands)
      if (v != kNoValue) v = resolve(v);
}

std::vector<uint32_t> use_counts(const Function& f) {
  std::vector<uint32_t> uses(f.values.size(), 0);
  walk_ops(f, f.body, [&](OpId o) {
    for (ValueId v : f.op(o).operands)
      if (v != kNoValue) ++uses[v];
  });
  return uses;
}

namespace {

struct Compactor {
  const Function& src;
  Function dst;
  std::vector<ValueId> vmap;

  explicit Compactor(const Function& f) : src(f), vmap(f.values.size(), kNoValue) {
    dst.name = f.name;
    dst.is_kernel = f.is_kernel;
    dst.params = f.params;
    dst.constexprs = f.constexprs;
    dst.results = f.results;
    dst.loc = f.loc;
  }

  ValueId add_value(ValueId old, OpId def_op, BlockId def_block, uint32_t index) {
    ValueData v = src.values[old];
    v.def_op = def_op;
    v.def_block = def_block;
    v.index = index;
    dst.values.push_back(std::move(v));
    vmap[old] = static_cast<ValueId>(dst.values.size() - 1);
    return vmap[old];
  }

  BlockId copy_block(BlockId b, OpId parent_op) {
    BlockId nb = static_cast<BlockId>(dst.blocks.size());
    dst.blocks.emplace_back();
    dst.blocks[nb].parent_op = parent_op;
    dst.blocks[nb].loc = src.block(b).loc;
    const std::vector<ValueId>& args = src.block(b).args;
    for (uint32_t i = 0; i < args.size(); ++i) {
      ValueId v = add_value(args[i], kNoOp, nb, i);
      dst.blocks[nb].args.push_back(v);
    }
    for (OpId o : src.block(b).ops) {
      const OpData& op = src.op(o);
      OpId no = static_cast<OpId>(dst.ops.size());
      dst.ops.emplace_back();
      {
        OpData& d = dst.ops[no];
        d.code = op.code;
        d.loc = op.loc;
        d.attrs = op.attrs;
        d.parent = nb;
        for (ValueId v : op.operands) d.operands.push_back(v == kNoValue ? kNoValue : vmap[v]);
      }
      dst.blocks[nb].ops.push_back(no);
      for (BlockId r : op.regions) {
        BlockId nr = copy_block(r, no);
        dst.ops[no].regions.push_back(nr);
      }
      for (uint32_t i = 0; i < op.results.size(); ++i) {
        ValueId v = add_value(op.results[i], no, kNoBlock, i);
        dst.ops[no].results.push_back(v);
      }
    }
    return nb;
  }
};

}  // namespace

void compact(Function& f) {
  Compactor c(f);
  c.dst.body = c.copy_block(f.body, kNoOp);
  for (Param& p : c.dst.params) p.value = c.vmap[p.value];
  f = std::move(c.dst);
}

}  // namespace tri::passes
