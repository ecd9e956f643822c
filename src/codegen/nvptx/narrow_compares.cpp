// NarrowBf16Compares (narrow_compares.h): f32 compares of widened bf16 values done in bf16.
#include "codegen/nvptx/narrow_compares.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>

namespace tri::codegen::nvptx {

namespace {

// The i16 bits of the bf16 value whose exact widening to f32 is v, or null: v is
// bitcast(shl(zext i16 x, 16)), emit_small_to_f32's widening. (The halves of a packed pair,
// bitcast(shl(x, 16)) and bitcast(and(x, 0xffff0000)), are left alone: narrowing those too made
// FlagGems' argmax 8 instructions shorter and 10 registers larger, 3 -> 2 CTAs per SM.)
llvm::Value* bf16_bits(llvm::Value* v) {
  using namespace llvm::PatternMatch;
  llvm::Value* x = nullptr;
  if (v->getType()->isFloatTy() && match(v, m_BitCast(m_Shl(m_ZExt(m_Value(x)), m_SpecificInt(16)))) &&
      x->getType()->isIntegerTy(16))
    return x;
  return nullptr;
}

// v as a bfloat (a widening, or an f32 constant exact in bf16), or null.
llvm::Value* narrowed(llvm::Value* v, llvm::IRBuilder<>& b) {
  if (llvm::Value* x = bf16_bits(v)) return b.CreateBitCast(x, b.getBFloatTy());
  if (auto* c = llvm::dyn_cast<llvm::ConstantFP>(v)) {
    if (!c->getType()->isFloatTy()) return nullptr;
    llvm::APFloat f = c->getValueAPF();
    if (f.bitcastToAPInt().getZExtValue() & 0xffffu) return nullptr;  // not exact in bf16
    bool lost = false;
    f.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven, &lost);
    return lost ? nullptr : llvm::ConstantFP::get(b.getBFloatTy(), f);
  }
  return nullptr;
}

bool is_widening(llvm::Value* v) { return bf16_bits(v) != nullptr; }

}  // namespace

llvm::PreservedAnalyses NarrowBf16Compares::run(llvm::Function& f, llvm::FunctionAnalysisManager&) {
  bool changed = false;
  for (llvm::BasicBlock& bb : f)
    for (llvm::Instruction& inst : bb) {
      auto* cmp = llvm::dyn_cast<llvm::FCmpInst>(&inst);
      if (!cmp || !cmp->getOperand(0)->getType()->isFloatTy()) continue;
      // At least one side a widening (two constants fold anyway).
      if (!is_widening(cmp->getOperand(0)) && !is_widening(cmp->getOperand(1))) continue;
      llvm::IRBuilder<> b(cmp);
      llvm::Value* x = narrowed(cmp->getOperand(0), b);
      llvm::Value* y = x ? narrowed(cmp->getOperand(1), b) : nullptr;
      if (!x || !y) continue;
      cmp->setOperand(0, x);
      cmp->setOperand(1, y);
      changed = true;
    }
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

}  // namespace tri::codegen::nvptx
