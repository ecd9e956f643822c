// Small tools that passes share for editing a Function in place: use counts, replacing uses,
// erasing and inserting ops, and compacting the tables afterwards.
//
// Ops removed from their block stay in Function::ops as unreachable entries until compact()
// rebuilds the tables; everything that walks IR walks blocks, so they are never seen.
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/ir.h"

namespace tri::passes {

// Replaces every use of each key by its value (chains a->b->c are followed) in all ops.
void replace_uses(ir::Function& f, const std::unordered_map<ir::ValueId, ir::ValueId>& repl);

// Number of uses of every value by ops that are still in a block reachable from the body.
std::vector<uint32_t> use_counts(const ir::Function& f);

// Calls fn(op) for every op reachable from the body, in program order (pre-order).
template <typename Fn>
void walk_ops(const ir::Function& f, ir::BlockId b, Fn&& fn) {
  for (ir::OpId o : f.block(b).ops) {
    fn(o);
    for (ir::BlockId r : f.op(o).regions) walk_ops(f, r, fn);
  }
}

// Rebuilds the function's tables with only the reachable blocks, ops and values, renumbered in
// program order, so later stages (writers, backends) see no dead entries.
void compact(ir::Function& f);

}  // namespace tri::passes
