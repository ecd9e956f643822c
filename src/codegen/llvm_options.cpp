#include "codegen/llvm_options.h"

#include <llvm/IR/PassInstrumentation.h>
#include <llvm/Support/CommandLine.h>

namespace tri::codegen {

std::mutex& codegen_pipeline_mutex() {
  static std::mutex m;
  return m;
}

bool set_llvm_bool_option(const char* name, bool value) {
  auto& opts = llvm::cl::getRegisteredOptions();
  auto it = opts.find(name);
  if (it == opts.end()) return false;
  auto* opt = static_cast<llvm::cl::opt<bool>*>(it->second);
  const bool old = opt->getValue();
  opt->setValue(value);
  return old;
}

void skip_passes_once_cancelled(llvm::PassInstrumentationCallbacks& pic, const CancelToken& cancel) {
  const CancelToken* c = &cancel;
  pic.registerShouldRunOptionalPassCallback([c](llvm::StringRef, llvm::Any) { return !c->requested(); });
}

}  // namespace tri::codegen
