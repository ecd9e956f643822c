// The list of this build's targets: the one place that names them (target/target.h). libtri has
// every target with its compiler; libtri_rt (built with TRI_RUNTIME_ONLY) has the runtime halves
// of the targets that load packages, "cpu" and "cuda".
#include <vector>

#include "target/target.h"
#ifdef TRI_RUNTIME_ONLY
#include "target/cpu/target.h"
#include "target/cuda/target.h"
#endif

#ifndef TRI_RUNTIME_ONLY
namespace tri {
namespace interp {
const target::Target* interp_target();
}
#ifdef TRI_HAVE_LLVM_LAYER
namespace cpu {
const target::Target* cpu_target();
}
namespace cuda {
const target::Target* cuda_target();
}
#endif
}  // namespace tri
#endif

namespace tri::target {
namespace {

const std::vector<const Target*>& all() {
#ifdef TRI_RUNTIME_ONLY
  static const cpu::CpuRuntime cpu_runtime;
  static const cuda::CudaRuntime cuda_runtime;
  static const std::vector<const Target*> list = {&cpu_runtime, &cuda_runtime};
#else
  static const std::vector<const Target*> list = {
      interp::interp_target(),
#ifdef TRI_HAVE_LLVM_LAYER
      cpu::cpu_target(),
      cuda::cuda_target(),
#endif
  };
#endif
  return list;
}

}  // namespace

const Target* find(std::string_view name) {
  for (const Target* t : all())
    if (t->name() == name) return t;
  return nullptr;
}

std::string names() {
  std::string s;
  for (const Target* t : all()) s += (s.empty() ? "\"" : ", \"") + std::string(t->name()) + "\"";
  return s;
}

const Target* device_target() {
  for (const Target* t : all())
    if (t->uses_stream()) return t;
  return nullptr;
}

}  // namespace tri::target
