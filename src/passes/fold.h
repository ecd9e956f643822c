// Constant folding: what specialization makes constant, fold away.
#pragma once

#include "ir/ir.h"

namespace tri::passes {

// Folds, in place:
//  - `if` on a constant condition: the taken region's ops replace the `if` and its yielded
//    values replace the `if`'s results (this is how `if` on a constexpr disappears);
//  - `select` on a constant scalar condition;
//  - integer `add sub mul and or xor smin smax umin umax` and `cmp` of two scalar constants.
// Returns true when something changed.
bool fold(ir::Module& m, ir::Function& f);

}  // namespace tri::passes
