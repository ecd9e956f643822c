// Dead code elimination.
#pragma once

#include "ir/ir.h"

namespace tri::passes {

// Removes pure ops (ops.def flag Pure) none of whose results is used, repeatedly, in every
// region. Returns true when something was removed.
bool dce(ir::Function& f);

}  // namespace tri::passes
