// What the combine region of a reduce or scan allows its lowering to do. A region only has to be
// associative (docs/ir.md), so a backend that reorders the elements must know more: whether the
// region is also commutative. Frontends write even a plain sum or max as a region (every
// `tt.reduce` of Triton's TTIR has one), so this is what lets those reduce in whatever layout
// their operands already have instead of first moving them to an ordered one.
#pragma once

#include "ir/ir.h"

namespace tri::passes {

// Whether combine region `region` of `f` (arguments a..., b...: one scalar per source on each
// side) gives the same values with its sides swapped, f(a, b) == f(b, a), judged from its
// text: each yielded value, written as an expression over the arguments with the operands of
// commutative ops (add, mul, and, or, xor, smin/smax/umin/umax, fmin/fmax, eq/ne comparisons)
// in a canonical order, must read the same after a and b trade places. Pure ops only; anything
// else (calls, loads, nested regions) answers false. Sound, not complete: a region commutative
// only by reasoning about values (an argmax that breaks ties on the index) answers false.
bool combine_is_commutative(const ir::Function& f, ir::BlockId region);

}  // namespace tri::passes
