// The pipeline: everything that happens to a kernel between the module and a backend, in order,
// in one function (pipeline.cpp reads top to bottom).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/launch.h"
#include "base/status.h"
#include "ir/ir.h"
#include "passes/specialize.h"

namespace tri::passes {

struct PassTiming {
  std::string pass;
  double ms = 0;
  bool changed = false;
};

struct PipelineOptions {
  // Verify after every pass, not only after specialization and at the end. On in debug builds.
#ifdef NDEBUG
  bool verify_each = false;
#else
  bool verify_each = true;
#endif
  // Called with the module's text after each pass that changed it (for `tri` debugging flags
  // and bug reports); not called when empty.
  std::function<void(const std::string& pass, const ir::Module& m)> dump;
  // 2: loads of dot-feeding loops run one iteration ahead (pipeline_loads.h); 1: off.
  int num_stages = 1;
  // Checked before each pass: once requested, prepare_kernel returns Code::Cancelled.
  CancelToken cancel;
};

// Specializes kernel `kernel` of a verified module and canonicalizes it for the backends:
//   specialize -> verify -> fold -> cse -> dce -> compact -> verify
// The result holds the kernel (first) and the device functions it calls, every type concrete.
// Errors: those of specialize(), and Code::Verify when the specialized IR breaks a rule that
// could not be checked while dimensions were symbolic (the message names the constexpr values).
Status prepare_kernel(const ir::Module& m, std::string_view kernel, const std::vector<ConstexprBinding>& values,
                      const std::vector<ArgFacts>& facts, const PipelineOptions& options,
                      std::unique_ptr<ir::Module>* out, std::vector<PassTiming>* timings = nullptr);

}  // namespace tri::passes
