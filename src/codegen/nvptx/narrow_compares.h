// A peephole of the GPU's LLVM pipeline: float compares of widened bf16 values done in bf16.
// Tri keeps bf16 elements as their 16 bits and widens them exactly to f32 by a shift (so a
// signaling NaN stays signaling: docs/ir.md); a Triton kernel that compares bf16 data
// (`x.to(tl.float32)` before an argmax's `>`) then compares f32 values one at a time, where
// sm_90 compares bf16 directly, two lanes per instruction (setp.bf16, which ptxas pairs into
// HSETP2.BF16_V2). Widening is exact, so the compare of the widened values and the compare of
// the bf16 values agree on every input, NaN included.
#pragma once

#include <llvm/IR/PassManager.h>

namespace tri::codegen::nvptx {

// Rewrites `fcmp P (f32 widening of bf16 a), (widening of b or an f32 constant exact in bf16)`
// into `fcmp P a, b` on bfloat. The widening is bitcast(shl(zext i16 a to i32, 16)), as
// emit_small_to_f32 writes it (and InstCombine leaves it after moving selects of widenings
// below the widening).
struct NarrowBf16Compares : llvm::PassInfoMixin<NarrowBf16Compares> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

}  // namespace tri::codegen::nvptx
