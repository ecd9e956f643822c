// Common subexpression elimination.
#pragma once

#include "ir/ir.h"

namespace tri::passes {

// Replaces a pure op without regions by an earlier identical one (same opcode, operands,
// attributes and result types) that dominates it: defined earlier in the same block or in an
// enclosing one. Returns true when something was replaced; the duplicates are left for dce().
bool cse(ir::Function& f);

}  // namespace tri::passes
