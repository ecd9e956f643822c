// Software pipelining of the loads that feed a dot in a `for` loop: num_stages - 1 iterations
// ahead, the tiles carried as loop values. Shown for two stages:
//
// A loop like the K loop of a matmul
//
//     for %k = lo to hi step s  carried (%acc, %pa, %pb):
//       %a = load %pa, mask=m(%k)     %b = load %pb, mask=m'(%k)
//       %acc2 = dot %a, %b, %acc      yield %acc2, %pa + s, %pb + s
//
// becomes one whose loads run an iteration ahead: the loads of the first iteration move before
// the loop, each iteration loads what the next one needs (masked off when there is no next
// iteration) and carries it, and the dot uses what the previous iteration loaded:
//
//     %a0 = load %pa0, mask=m(lo) & (lo < hi)   ...
//     for %k carried (%acc, %pa, %pb, %a, %b):
//       %acc2 = dot %a, %b, %acc
//       %an = load %pa + s, mask=m(%k + s) & (%k + s < hi)   ...
//       yield %acc2, %pa + s, %pb + s, %an, %bn
//
// so a GPU waits for a tile's memory while it multiplies the previous one. With s stages the
// first s - 1 iterations' loads precede the loop, the body loads iteration k + s - 1 and the
// yield shifts the carried tiles down by one; the carried values the loads read (the pointers)
// are advanced by copies of the ops that compute their next values. The values computed
// are the same as before on every target; the loads happen in the same order relative to every
// other memory operation because the pass only touches loops whose bodies do nothing but load
// and compute (no store, atomic, call, assert, print or inline asm, in the body or nested),
// except that a loop marked `for[loads_ahead=true]` may also store and do atomics: its
// iterations pass no values through memory (docs/ir.md), so a later iteration's loads may come
// before them. Triton's own pipeliner assumes that of every loop, and the TTIR importer marks
// every scf.for so (fla's chunked kernels store a state per chunk in the loop that loads the
// next chunk's tiles).
// Only a dot's operands (directly, or through a transpose) go the whole s - 1 iterations ahead;
// another tile of the body goes one iteration ahead (on the GPU it waits in registers, s - 1
// copies of it would spill), and a row or column used only spread over the block (expand_dims
// and broadcast) stays in place, where the GPU loads it in the layout of its use.
// A load qualifies when it is directly in the body and what its pointer, mask and other depend
// on in the body is pure ops without regions, the induction variable, and carried values whose
// next value does not depend on a load of the body.
#pragma once

#include "ir/ir.h"

namespace tri::passes {

// Pipelines the qualifying loads of every `for` whose body holds a dot, `stages` - 1 iterations
// ahead (stages >= 2). Returns true when it changed something.
bool pipeline_loads(ir::Module& m, ir::Function& f, int stages);

}  // namespace tri::passes
