// Floating-point contraction written into the IR: a float multiply whose only use is an add or
// a subtract becomes one fused multiply-add (`fma`), rounded once. Tri's own IR never contracts
// on its own (every target computes each op as written), but Triton compiles with contraction on
// by default (`enable_fp_fusion`), so the TTIR importer runs this pass: an imported kernel then
// computes what Triton's code computes, with Triton's instruction count, and every Tri target
// (interpreter, CPU, GPU) computes the same values because the fma is in the IR.
#pragma once

#include "ir/ir.h"

namespace tri::passes {

// In every region of f, for f32 and f64 values (scalars and blocks), the way LLVM's DAG combiner
// contracts for NVPTX under fp-contract=fast: add(mul(a, b), c) and add(c, mul(a, b)) -> fma(a,
// b, c); sub(mul(a, b), c) -> fma(a, b, neg(c)); sub(c, mul(a, b)) -> fma(neg(a), b, c); when
// the mul sits in the add's block, whatever its other uses (NVPTX's aggressive fusion: a mul
// used twice is fused into each add and stays for its other uses); of two muls, the one with
// fewer uses. The dead muls are left for dce. Returns true when it changed something.
bool contract_fma(ir::Module& m, ir::Function& f);

}  // namespace tri::passes
