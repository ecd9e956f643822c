// Linking the embedded math library into a kernel's module (mathlib.h).
#include "codegen/mathlib/mathlib.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <set>

#include "codegen/mathlib/tri_mathlib.h"

namespace tri::codegen::mathlib {

namespace {

// The functions of tri_mathlib.h (its X-macro lists).
const std::set<std::string>& names() {
#define TRI_NAME(f) #f,
  static const std::set<std::string> n = {TRI_MATHLIB_UNARY(TRI_NAME) TRI_MATHLIB_BINARY(TRI_NAME)};
#undef TRI_NAME
  return n;
}

constexpr const char kPrefix[] = "__tri_";

}  // namespace

std::string function_name(const std::string& name, bool f32) {
  if (!names().count(name)) return std::string();
  return kPrefix + name + (f32 ? "f" : "");
}

Status link_into(llvm::Module& m) {
  bool needed = false;
  for (const llvm::Function& f : m.functions())
    if (f.isDeclaration() && f.getName().starts_with(kPrefix)) needed = true;
  if (!needed) return Status::ok();
  llvm::MemoryBufferRef buf(llvm::StringRef(reinterpret_cast<const char*>(kBitcode), kBitcodeSize), "tri_mathlib");
  // Lazily: the linker materializes only the function bodies the module needs.
  llvm::Expected<std::unique_ptr<llvm::Module>> lib = llvm::getLazyBitcodeModule(buf, m.getContext());
  if (!lib)
    return Status(Code::Internal, "the embedded math library's bitcode cannot be read (rebuild libtri): " +
                                      llvm::toString(lib.takeError()));
  (*lib)->setDataLayout(m.getDataLayout());
  (*lib)->setTargetTriple(m.getTargetTriple());
  for (llvm::Function& f : **lib) {
    // clang's per-function target attributes (its default PTX version) would keep the inliner
    // from inlining these into the kernel; the kernel's target decides.
    for (const char* a : {"target-cpu", "target-features", "frame-pointer", "no-builtins",
                          "stack-protector-buffer-size"})
      f.removeFnAttr(a);
  }
  std::set<std::string> before;
  for (const llvm::Function& f : m.functions())
    if (!f.isDeclaration()) before.insert(f.getName().str());
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::LinkOnlyNeeded))
    return Status(Code::Internal, "linking the math library into kernel module '" + m.getName().str() + "' failed");
  for (llvm::Function& f : m.functions())
    if (!f.isDeclaration() && !before.count(f.getName().str())) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  return Status::ok();
}

}  // namespace tri::codegen::mathlib
