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
  // Checked before each program instance and at each `for`/`while` iteration: once requested,
  // the launch stops with Code::Cancelled.
  CancelToken cancel;
  // The most bytes the launch may plan to use (0: no budget); see memory_estimate.
  uint64_t memory_limit = 0;
  // The team the launch runs in (docs/distributed.md); null: rank 0 of 1, no symmetric heap,
  // waits time out after kDefaultWaitTimeoutMs.
  const TeamLaunch* team = nullptr;
};

// The interpreter's working memory for one program instance of `kernel`, estimated from the
// IR: every value of the kernel and of the device functions it calls held at once, twice over
// (loop-carried and call arguments are copied), at 8 bytes per lane plus 4 per pointer lane
// (provenance) and 4 per lane in checked mode. run() refuses a launch whose estimate passes
// Options::memory_limit with Code::LimitExceeded before running anything.
uint64_t memory_estimate(const ir::Module& m, const ir::Function& kernel, bool checked);

// Runs kernel `kernel` of module `m` over `grid`. The module must be verified and specialized
// (every type concrete, no constexpr names left). args/nargs as base/launch.h describes; a count
// that does not match the kernel's runtime parameters is Code::LaunchArgs. A failed `assert`, or
// a checked-mode violation, is Code::Runtime; program instances run in order x, then y, then z.
// An access to an address below 4096 (NULL) is Code::Runtime in every mode. Cancellation (see
// Options::cancel) is Code::Cancelled.
// A kernel that holds a `wait` (or calls a function that does) instead runs every program
// instance at once, each on its own thread, at most kMaxCoresidentPrograms (more is
// Code::LimitExceeded); the failure of the instance with the lowest linear id is reported,
// leaving out instances whose wait gave up because another failed. A wait that times out is
// Code::Runtime with its location. A distributed op that names a rank outside the team, or a
// pointer outside this rank's symmetric heap, is Code::Runtime in every mode. Atomics, notify,
// put's signal and wait are atomic with respect to other threads and launches.
Status run(const ir::Module& m, const ir::Function& kernel, const Grid& grid, const ArgValue* args, size_t nargs,
           const Options& options);

}  // namespace tri::interp
