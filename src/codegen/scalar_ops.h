// Target-independent LLVM IR emitters for the scalar semantics of docs/ir.md that LLVM's own
// instructions do not give: where LLVM has undefined behaviour or poison (shifts past the width,
// division by zero, INT_MIN / -1, float-to-int overflow) and the number formats it has no
// portable arithmetic for (f16, bf16, f8e4m3, f8e5m2, tf32).
//
// Representation (shared by every backend that uses these helpers):
//  - integers i1..i64, f32 and f64 are the LLVM types of the same name in registers;
//  - f16, bf16, f8e4m3 and f8e5m2 are kept as their *bits* (i16 / i8) in registers and in
//    memory, so loads, stores, selects and bitcasts copy them exactly; arithmetic decodes them to
//    f32 (exactly), computes in f32 and encodes the result back with round-to-nearest-even.
//  - in memory, i1 is one byte (0 or 1; loads read nonzero as true).
// Everything here is built from integer and f32/f64 instructions only, so it needs no
// compiler-rt or libgcc soft-float helper (__truncsfhf2, __truncsfbf2, ...), vectorizes, and folds
// to a constant when its input is one.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "ir/types.h"

namespace tri::codegen {

// True for the types stored as bits and computed in f32 (f16 bf16 f8e4m3 f8e5m2).
bool is_small_float(ir::Scalar s);

// The LLVM type of a value of scalar type `s` in a register / in memory.
llvm::Type* reg_type(llvm::LLVMContext& c, ir::Scalar s);
llvm::Type* mem_type(llvm::LLVMContext& c, ir::Scalar s);
// The type arithmetic on `s` is done in: f32 for small floats, else reg_type.
llvm::Type* arith_type(llvm::LLVMContext& c, ir::Scalar s);

// Register value <-> memory value (only i1 differs: i8 0/1 in memory).
llvm::Value* to_mem(llvm::IRBuilder<>& b, llvm::Value* v, ir::Scalar s);
llvm::Value* from_mem(llvm::IRBuilder<>& b, llvm::Value* v, ir::Scalar s);

// Small float bits -> the same value as f32 (exact; a NaN keeps its payload and comes out
// quiet, as IEEE 754 conversion makes it, except from bf16, whose bits just move up: docs/ir.md).
llvm::Value* emit_small_to_f32(llvm::IRBuilder<>& b, llvm::Value* bits, ir::Scalar s);
// An f32 value with a signaling NaN made quiet (the quiet bit set, payload kept); others as
// they are.
llvm::Value* quiet_nan(llvm::IRBuilder<>& b, llvm::Value* x);
// f32 or f64 value -> bits of small float `s`, correctly rounded (nearest-even, or toward zero
// when `rtz`). Overflow gives inf (f16, bf16, f8e5m2; the largest finite value under rtz) and
// saturates to +-448 for f8e4m3, which has no infinity (as NVIDIA's cvt.rn.satfinite does). A NaN
// becomes the format's quiet NaN with the same sign (payload dropped).
llvm::Value* emit_to_small(llvm::IRBuilder<>& b, llvm::Value* x, ir::Scalar s, bool rtz);
// f32 rounded to tf32 precision (10 fraction bits, nearest-even); inf and NaN pass through.
llvm::Value* emit_round_tf32(llvm::IRBuilder<>& b, llvm::Value* x);
// f64 -> f32 rounded toward zero.
llvm::Value* emit_fptrunc_rtz(llvm::IRBuilder<>& b, llvm::Value* x);

// Integer ops with every case defined (docs/ir.md "Integer arithmetic"). `a` and `b` have one
// integer type. Division or remainder by zero gives an unspecified value: 0 here, as in the
// reference interpreter.
llvm::Value* emit_sdiv(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_srem(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_udiv(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_urem(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_cdiv(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_umulhi(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_shl(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_lshr(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_ashr(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);

// Integer -> f64, correctly rounded to f64 when `target_bits` < 53 would otherwise suffer double
// rounding: values needing more than 53 bits are first rounded to odd, so a later rounding to
// a narrower format (f16, bf16, f8) is still correct.
llvm::Value* emit_int_to_f64_for_narrow(llvm::IRBuilder<>& b, llvm::Value* x, bool is_signed);

}  // namespace tri::codegen
