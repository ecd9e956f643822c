// The few CUDA driver entry points the GPU benchmarks call, loaded at run time like libtri loads
// libcuda (so the benchmarks build without CUDA), and device 0's primary context made current.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>

namespace bench {

struct CudaDriver {
  int (*Init)(unsigned) = nullptr;
  int (*DeviceGet)(int*, int) = nullptr;
  int (*DevicePrimaryCtxRetain)(void**, int) = nullptr;
  int (*CtxSetCurrent)(void*) = nullptr;
  int (*MemAlloc)(uint64_t*, size_t) = nullptr;
  int (*CtxSynchronize)() = nullptr;
  int (*ModuleLoadData)(void**, const void*) = nullptr;
  int (*ModuleGetFunction)(void**, void*, const char*) = nullptr;
  int (*LaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                      void**) = nullptr;
};

// Loads libcuda.so.1 into `cu`: false when there is no driver (the caller prints "skipped: no
// CUDA device").
inline bool load_cuda(CudaDriver* cu) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return false;
  auto sym = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name)); };
  sym(cu->Init, "cuInit");
  sym(cu->DeviceGet, "cuDeviceGet");
  sym(cu->DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(cu->CtxSetCurrent, "cuCtxSetCurrent");
  sym(cu->MemAlloc, "cuMemAlloc_v2");
  sym(cu->CtxSynchronize, "cuCtxSynchronize");
  sym(cu->ModuleLoadData, "cuModuleLoadData");
  sym(cu->ModuleGetFunction, "cuModuleGetFunction");
  sym(cu->LaunchKernel, "cuLaunchKernel");
  return true;
}

// cuInit, then device 0's primary context made current on the calling thread; the first
// failing driver result, or 0.
inline int use_primary_context(const CudaDriver& cu) {
  int dev = 0;
  void* ctx = nullptr;
  if (int r = cu.Init(0)) return r;
  if (int r = cu.DeviceGet(&dev, 0)) return r;
  if (int r = cu.DevicePrimaryCtxRetain(&ctx, dev)) return r;
  return cu.CtxSetCurrent(ctx);
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace bench
