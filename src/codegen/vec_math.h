// Vectorizable f32 math functions emitted as LLVM IR: exp, exp2, log and tanh built from
// f32 multiplies and adds (no FMA, so results are the same on every target), integer bit
// manipulation and selects, with no calls, so LLVM's loop vectorizer turns a block of them into
// SIMD code. A libm call per element (what the other math functions cost) cannot be vectorized.
//
// Accuracy (docs/ir.md's bounds: 2 ulp for exp, exp2 and tanh, 1 for log): exp, exp2, log
// <= 1 ulp, tanh <= 2 ulp, checked by tests/target/cpu/test_cpu_float.cpp and
// tests/capi/test_math_accuracy.cpp. (The CPU backend calls libm's log2f: this file's log2 was
// within 1.7 ulp, above log2's bound of 1.) Special values
// follow C99 Annex F: exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(x < 0) = NaN, NaN in,
// NaN out; subnormal inputs and results are kept.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace tri::codegen {

llvm::Value* emit_exp_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_exp2_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_log_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x);

// Pieces the GPU's own exp (src/codegen/nvptx/lower.cpp) shares: 2^n for an i32 n in [-252, 254]
// as two exactly representable powers whose product is 2^n (so y * p1 * p2 rounds once, even
// into subnormals), and x when x is NaN, else r.
void pow2_split(llvm::IRBuilder<>& b, llvm::Value* n, llvm::Value** p1, llvm::Value** p2);
llvm::Value* keep_nan(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* r);

}  // namespace tri::codegen
