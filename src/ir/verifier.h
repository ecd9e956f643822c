// The verifier: every structural and typing rule of docs/ir.md.
#pragma once

#include "base/status.h"
#include "ir/ir.h"

namespace tri::ir {

// Checks a module and returns the first error as Code::Verify with a message that names the op,
// the place and what was expected, e.g.
//   softmax.tri:12:9: error: 'add' operands have types <128 x f32> and <256 x f32>
// Checks: types and shapes of every op (its rule in ops.def, or the op's custom rule), operand
// and result counts, attribute kinds and ranges, regions (count, arguments, terminators),
// dominance, calls (callee exists, argument and result types), constexpr names (declared, of an
// integer type when used as a dimension), power-of-two dimensions, rank 1..4, pointer types.
// Dimensions that are still symbolic are checked as far as they can be (equal names are equal);
// relations that need values (cat's sum, reshape's element count) are checked once concrete.
// Counts past the limits of limits.h (parameters, constexprs, call depth) are
// Code::LimitExceeded.
Status verify(const Module& m);

// GPU targets, before compiling: every block value of the module's functions (a prepared kernel
// and the device functions it calls) has at most kMaxElementsPerThread elements per thread of a
// program of `threads` threads, which bounds the code the compile unrolls. Code::LimitExceeded
// naming the value, its place and the way out otherwise.
Status check_work_per_thread(const Module& m, int64_t threads);

}  // namespace tri::ir
