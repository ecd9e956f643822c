// Vectorizable f32 math functions emitted as LLVM IR: exp, exp2, log, log2 and tanh built from
// f32 multiplies and adds (no FMA, so results are the same on every target), integer bit
// manipulation and selects, with no calls, so LLVM's loop vectorizer turns a block of them into
// SIMD code. A libm call per element (what the other math functions cost) cannot be vectorized.
//
// Accuracy (docs/ir.md asks for 4 ulp): exp, exp2, log <= 1 ulp, log2 and tanh <= 2 ulp,
// checked over sweeps of the whole f32 range by tests/jit/test_cpu_float.cpp. Special values
// follow C99 Annex F: exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(x < 0) = NaN, NaN in,
// NaN out; subnormal inputs and results are kept.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace tri::codegen {

llvm::Value* emit_exp_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_exp2_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_log_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_log2_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x);

// Pieces the GPU's own exp (src/codegen/nvptx/lower.cpp) shares: 2^n for an i32 n in [-252, 254]
// as two exactly representable powers whose product is 2^n (so y * p1 * p2 rounds once, even
// into subnormals), and x when x is NaN, else r.
void pow2_split(llvm::IRBuilder<>& b, llvm::Value* n, llvm::Value** p1, llvm::Value** p2);
llvm::Value* keep_nan(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* r);

}  // namespace tri::codegen
