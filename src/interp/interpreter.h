// The reference interpreter: executes verified, specialized IR op by op with exactly the
// semantics of docs/ir.md. It is the oracle every backend is tested against, so it is written to
// be obviously right, not fast.
#pragma once

#include <cstddef>

#include "base/launch.h"
#include "base/status.h"
#include "ir/ir.h"

namespace tri::interp {

struct Options {
  // Checked mode: bounds-check every lane of every memory op against the arguments' extents,
  // and report uses of masked-off lanes of loads without `other`, division by zero, a
  // non-positive `for` step and a false `assume`. Errors are Code::Runtime with
  // "file:line:col: error: ..." naming the op, the lane's block index and the address.
  bool checked = false;
  PrintSink print;  // where `print` output goes; dropped when empty
};

// Runs kernel `kernel` of module `m` over `grid`. The module must be verified and specialized
// (every type concrete, no constexpr names left). args/nargs as base/launch.h describes; a count
// that does not match the kernel's runtime parameters is Code::LaunchArgs. A failed `assert`, or
// a checked-mode violation, is Code::Runtime; program instances run in order x, then y, then z.
Status run(const ir::Module& m, const ir::Function& kernel, const Grid& grid, const ArgValue* args, size_t nargs,
           const Options& options);

}  // namespace tri::interp
