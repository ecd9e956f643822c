#include "passes/dce.h"

#include "passes/rewrite.h"

namespace tri::passes {
namespace {

using namespace ir;

// One sweep, last op first, so a chain of dead ops goes in one pass over a block.
bool sweep(Function& f, BlockId b, std::vector<uint32_t>& uses) {
  bool changed = false;
  std::vector<OpId>& ops = f.block(b).ops;
  std::vector<OpId> kept;
  for (size_t i = ops.size(); i-- > 0;) {
    OpId o = ops[i];
    const OpData& op = f.op(o);
    for (BlockId r : op.regions) changed |= sweep(f, r, uses);
    bool dead = op_info(op.code).is_pure();  // a pure op's regions are pure too (combine regions)
    for (ValueId v : op.results) dead = dead && uses[v] == 0;
    if (dead) {
      for (ValueId v : op.operands)
        if (v != kNoValue) --uses[v];
      changed = true;
      continue;
    }
    kept.push_back(o);
  }
  f.block(b).ops.assign(kept.rbegin(), kept.rend());
  return changed;
}

}  // namespace

bool dce(Function& f) {
  bool any = false;
  for (;;) {
    // Recount each round: removing an op with regions drops the uses inside them too.
    std::vector<uint32_t> uses = use_counts(f);
    if (!sweep(f, f.body, uses)) return any;
    any = true;
  }
}

}  // namespace tri::passes
