// LLVM's command-line options are process-wide, and a code generation pipeline reads some of
// them when it is built (TargetMachine::addPassesToEmitFile). Tri sets a few for one target
// only; every pipeline is built under one lock, so a CPU and a GPU compile on two threads never
// see each other's settings.
#pragma once

#include <mutex>

#include "base/launch.h"

namespace llvm {
class PassInstrumentationCallbacks;
}

namespace tri::codegen {

// Held while a code generation pipeline is built.
std::mutex& codegen_pipeline_mutex();

// Sets LLVM's boolean option `name` and returns its previous value (false when LLVM has no such
// option, which then stays absent). Call with codegen_pipeline_mutex() held.
bool set_llvm_bool_option(const char* name, bool value);

// Makes an optimization pipeline built with `pic` skip every optional pass once `cancel` is
// requested (tri_context_cancel), so the pipeline ends after the pass that is running; the
// caller then returns Code::Cancelled. `cancel` must outlive the pipeline's run.
void skip_passes_once_cancelled(llvm::PassInstrumentationCallbacks& pic, const CancelToken& cancel);

}  // namespace tri::codegen
