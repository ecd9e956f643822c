// Device buffers through the CUDA driver (device_memory.h).
#include "device_memory.h"

#include <dlfcn.h>

#include <mutex>

namespace tri_tool {
namespace {

struct Api {
  int (*cuInit)(unsigned);
  int (*cuDeviceGet)(int*, int);
  int (*cuDevicePrimaryCtxRetain)(void**, int);
  int (*cuCtxSetCurrent)(void*);
  int (*cuMemAlloc)(uint64_t*, size_t);
  int (*cuMemFree)(uint64_t);
  int (*cuMemcpyHtoD)(uint64_t, const void*, size_t);
  int (*cuMemcpyDtoH)(void*, uint64_t, size_t);
  int (*cuCtxSynchronize)();
  int (*cuGetErrorName)(int, const char**);
  void* ctx = nullptr;
};

Api* api() {
  static Api a;
  static bool ok = [] {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    bool all = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      all = all && fn;
    };
    sym(a.cuInit, "cuInit");
    sym(a.cuDeviceGet, "cuDeviceGet");
    sym(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(a.cuCtxSetCurrent, "cuCtxSetCurrent");
    sym(a.cuMemAlloc, "cuMemAlloc_v2");
    sym(a.cuMemFree, "cuMemFree_v2");
    sym(a.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    sym(a.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    sym(a.cuCtxSynchronize, "cuCtxSynchronize");
    sym(a.cuGetErrorName, "cuGetErrorName");
    int dev = 0;
    return all && a.cuInit(0) == 0 && a.cuDeviceGet(&dev, 0) == 0 && a.cuDevicePrimaryCtxRetain(&a.ctx, dev) == 0;
  }();
  return ok ? &a : nullptr;
}

}  // namespace

bool device_init(std::string* why) {
  Api* a = api();
  if (!a) {
    *why = "no CUDA driver or device";
    return false;
  }
  return a->cuCtxSetCurrent(a->ctx) == 0;
}

uint64_t device_upload(const void* host, size_t bytes) {
  Api* a = api();
  uint64_t d = 0;
  if (!a || a->cuMemAlloc(&d, bytes ? bytes : 1) != 0) return 0;
  if (bytes && a->cuMemcpyHtoD(d, host, bytes) != 0) {
    a->cuMemFree(d);
    return 0;
  }
  return d;
}

bool device_download_free(uint64_t dev, void* host, size_t bytes) {
  Api* a = api();
  bool ok = a && (!bytes || a->cuMemcpyDtoH(host, dev, bytes) == 0);
  if (a) a->cuMemFree(dev);
  return ok;
}

bool device_sync(std::string* error) {
  Api* a = api();
  int r = a ? a->cuCtxSynchronize() : -1;
  if (r == 0) return true;
  const char* name = nullptr;
  if (a) a->cuGetErrorName(r, &name);
  *error = std::string("the device failed: ") + (name ? name : "no driver");
  return false;
}

}  // namespace tri_tool
