// Loading libcuda.so.1, resolving the entry-point table, error text, device queries, the PTX ISA
// cap, contexts and the thin memory/stream/event/graph wrappers declared in driver.h.
#include "target/cuda/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace tri::cuda {
namespace {

// One entry of the table: the exported, explicitly versioned symbol, and the unsuffixed name plus
// the CUDA version whose ABI the slot expects, for cuGetProcAddress. dlsym of the versioned name
// comes first: it pins the exact signature on every driver since the symbol appeared.
// cuGetProcAddress is the fallback for a driver that resolves a name only through it.
struct Entry {
  const char* symbol;
  const char* base;
  int version;
  size_t offset;  // of the slot in Api
};

#define TRI_ENTRY(slot, symbol, version) {symbol, #slot, version, offsetof(Api, slot)}
// 11030: cuGetProcAddress exists from CUDA 11.3, and each ABI below was current then (cuCtxCreate_v3
// came in 11.4, so asking for "cuCtxCreate" at 11030 yields the _v2 signature the slot has).
const Entry kEntries[] = {
    TRI_ENTRY(cuInit, "cuInit", 11030),
    TRI_ENTRY(cuDriverGetVersion, "cuDriverGetVersion", 11030),
    TRI_ENTRY(cuGetErrorName, "cuGetErrorName", 11030),
    TRI_ENTRY(cuGetErrorString, "cuGetErrorString", 11030),
    TRI_ENTRY(cuDeviceGetCount, "cuDeviceGetCount", 11030),
    TRI_ENTRY(cuDeviceGet, "cuDeviceGet", 11030),
    TRI_ENTRY(cuDeviceGetName, "cuDeviceGetName", 11030),
    TRI_ENTRY(cuDeviceGetAttribute, "cuDeviceGetAttribute", 11030),
    TRI_ENTRY(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 11030),
    TRI_ENTRY(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 11030),
    TRI_ENTRY(cuCtxCreate, "cuCtxCreate_v2", 11030),
    TRI_ENTRY(cuCtxDestroy, "cuCtxDestroy_v2", 11030),
    TRI_ENTRY(cuCtxGetCurrent, "cuCtxGetCurrent", 11030),
    TRI_ENTRY(cuCtxSetCurrent, "cuCtxSetCurrent", 11030),
    TRI_ENTRY(cuCtxGetDevice, "cuCtxGetDevice", 11030),
    TRI_ENTRY(cuCtxSynchronize, "cuCtxSynchronize", 11030),
    TRI_ENTRY(cuModuleLoadDataEx, "cuModuleLoadDataEx", 11030),
    TRI_ENTRY(cuModuleUnload, "cuModuleUnload", 11030),
    TRI_ENTRY(cuModuleGetFunction, "cuModuleGetFunction", 11030),
    TRI_ENTRY(cuLinkCreate, "cuLinkCreate_v2", 11030),
    TRI_ENTRY(cuLinkAddData, "cuLinkAddData_v2", 11030),
    TRI_ENTRY(cuLinkComplete, "cuLinkComplete", 11030),
    TRI_ENTRY(cuLinkDestroy, "cuLinkDestroy", 11030),
    TRI_ENTRY(cuFuncGetAttribute, "cuFuncGetAttribute", 11030),
    TRI_ENTRY(cuFuncSetAttribute, "cuFuncSetAttribute", 11030),
    TRI_ENTRY(cuLaunchKernel, "cuLaunchKernel", 11030),
    TRI_ENTRY(cuMemAlloc, "cuMemAlloc_v2", 11030),
    TRI_ENTRY(cuMemFree, "cuMemFree_v2", 11030),
    TRI_ENTRY(cuMemcpyHtoD, "cuMemcpyHtoD_v2", 11030),
    TRI_ENTRY(cuMemcpyDtoH, "cuMemcpyDtoH_v2", 11030),
    TRI_ENTRY(cuMemsetD8, "cuMemsetD8_v2", 11030),
    TRI_ENTRY(cuMemsetD32, "cuMemsetD32_v2", 11030),
    TRI_ENTRY(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", 11030),
    TRI_ENTRY(cuMemsetD32Async, "cuMemsetD32Async", 11030),
    TRI_ENTRY(cuStreamCreate, "cuStreamCreate", 11030),
    TRI_ENTRY(cuStreamDestroy, "cuStreamDestroy_v2", 11030),
    TRI_ENTRY(cuStreamSynchronize, "cuStreamSynchronize", 11030),
    TRI_ENTRY(cuStreamGetCtx, "cuStreamGetCtx", 11030),
    TRI_ENTRY(cuEventCreate, "cuEventCreate", 11030),
    TRI_ENTRY(cuEventDestroy, "cuEventDestroy_v2", 11030),
    TRI_ENTRY(cuEventRecord, "cuEventRecord", 11030),
    TRI_ENTRY(cuEventSynchronize, "cuEventSynchronize", 11030),
    TRI_ENTRY(cuEventElapsedTime, "cuEventElapsedTime", 11030),
    TRI_ENTRY(cuStreamBeginCapture, "cuStreamBeginCapture_v2", 11030),
    TRI_ENTRY(cuStreamEndCapture, "cuStreamEndCapture", 11030),
    // cuGraphInstantiateWithFlags appeared in CUDA 11.4.
    TRI_ENTRY(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 11040),
    TRI_ENTRY(cuGraphLaunch, "cuGraphLaunch", 11030),
    TRI_ENTRY(cuGraphExecDestroy, "cuGraphExecDestroy", 11030),
    TRI_ENTRY(cuGraphDestroy, "cuGraphDestroy", 11030),
};
#undef TRI_ENTRY

// cuGetProcAddress_v2 (CUDA 12.0+) and the CUDA 11.3 form without the status out-parameter.
using GetProcV2 = CUresult (*)(const char*, void**, int, unsigned long long, int*);
using GetProcV1 = CUresult (*)(const char*, void**, int, unsigned long long);
constexpr unsigned long long kLegacyStream = 1;  // CU_GET_PROC_ADDRESS_LEGACY_STREAM

const char kNoDriverHint[] = "; the \"cuda\" target needs an NVIDIA driver; the \"cpu\" target works without one";

Library* g_library = nullptr;
std::once_flag g_library_once;

// Device info, filled once per device.
struct DeviceSlot {
  std::once_flag once;
  Status status;
  DeviceInfo info;
};
std::once_flag g_devices_once;
Status g_devices_status;
int g_device_count = 0;
std::unique_ptr<DeviceSlot[]> g_devices;

std::string error_text_with(const Api* api, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api && api->cuGetErrorName && api->cuGetErrorString) {
    if (api->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
    if (api->cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  }
  std::string s = name ? std::string(name) : "CUDA error " + std::to_string(r);
  if (text) s += std::string(" (") + text + ")";
  return s;
}

}  // namespace

std::string driver_library_name() {
  const char* env = std::getenv("TRI_LIBCUDA");
  return env && *env ? std::string(env) : std::string("libcuda.so.1");
}

void load_library(const std::string& path, Library* out) {
  out->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!out->handle) {
    const char* why = dlerror();
    out->status = Status(Code::Unsupported, "no CUDA driver: " + path + " could not be loaded (" +
                                                 (why ? why : "unknown reason") + ")" + kNoDriverHint);
    return;
  }
  GetProcV2 get_v2 = reinterpret_cast<GetProcV2>(dlsym(out->handle, "cuGetProcAddress_v2"));
  GetProcV1 get_v1 = get_v2 ? nullptr : reinterpret_cast<GetProcV1>(dlsym(out->handle, "cuGetProcAddress"));
  for (const Entry& e : kEntries) {
    void* fn = dlsym(out->handle, e.symbol);
    if (!fn && get_v2) {
      int found = 0;
      if (get_v2(e.base, &fn, e.version, kLegacyStream, &found) != CUDA_SUCCESS || found != 0) fn = nullptr;
    } else if (!fn && get_v1) {
      if (get_v1(e.base, &fn, e.version, kLegacyStream) != CUDA_SUCCESS) fn = nullptr;
    }
    if (!fn) {
      out->status = Status(Code::Unsupported, "no usable CUDA driver: " + path + " lacks " + e.symbol +
                                                  " (not a CUDA driver, or one older than CUDA 11.4: update the NVIDIA driver)" +
                                                  kNoDriverHint);
      return;
    }
    std::memcpy(reinterpret_cast<char*>(&out->api) + e.offset, &fn, sizeof fn);
  }
  out->init_result = out->api.cuInit(0);
  if (out->init_result != CUDA_SUCCESS && out->init_result != CUDA_ERROR_NO_DEVICE) {
    // The driver is there but unusable (a driver/kernel-module mismatch, a stub library): say so.
    out->status = Status(Code::Unsupported, "no usable CUDA driver: cuInit failed in " + path + ": " +
                                                error_text_with(&out->api, out->init_result) + kNoDriverHint);
  }
}

Status current_or_primary(const Api* a, CUcontext* out) {
  TRI_RETURN_IF_ERROR(check(a->cuCtxGetCurrent(out), "cuCtxGetCurrent"));
  if (*out) return Status::ok();
  CUdevice dev;
  TRI_RETURN_IF_ERROR(check(a->cuDeviceGet(&dev, 0), "cuDeviceGet"));
  TRI_RETURN_IF_ERROR(check(a->cuDevicePrimaryCtxRetain(out, dev), "cuDevicePrimaryCtxRetain"));
  return check(a->cuCtxSetCurrent(*out), "cuCtxSetCurrent");
}

Status current_device(const DeviceInfo** out) {
  const Api* a = nullptr;
  TRI_RETURN_IF_ERROR(driver(&a));
  CUcontext ctx;
  TRI_RETURN_IF_ERROR(current_or_primary(a, &ctx));
  CUdevice dev;
  TRI_RETURN_IF_ERROR(check(a->cuCtxGetDevice(&dev), "cuCtxGetDevice"));
  int count = 0;
  TRI_RETURN_IF_ERROR(device_count(&count));
  for (int i = 0; i < count; ++i) {
    const DeviceInfo* d = nullptr;
    if (device_info(i, &d).is_ok() && d->device == dev) {
      *out = d;
      return Status::ok();
    }
  }
  return Status(Code::NotFound, "the current CUDA context's device is not among the driver's devices");
}

Status driver(const Api** out) {
  std::call_once(g_library_once, [] {
    // Never freed: entry points must stay valid until the process exits (static destructors of
    // other objects may still call into the driver).
    g_library = new Library();
    load_library(driver_library_name(), g_library);
  });
  if (!g_library->status.is_ok()) return g_library->status;
  *out = &g_library->api;
  return Status::ok();
}

std::string error_text(CUresult r) {
  return error_text_with(g_library && g_library->handle ? &g_library->api : nullptr, r);
}

Status check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return Status::ok();
  Code code = Code::Runtime;
  switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY: code = Code::OutOfMemory; break;
    case CUDA_ERROR_INVALID_VALUE: code = Code::InvalidArgument; break;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: code = Code::Compile; break;
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE: code = Code::Unsupported; break;
    case CUDA_ERROR_NOT_FOUND: code = Code::NotFound; break;
    default: break;
  }
  return Status(code, std::string(what) + " failed: " + error_text(r));
}

Status check(CUresult r, const std::string& what) { return check(r, what.c_str()); }

// From the PTX ISA release notes: each CUDA release ships one PTX ISA version, and a driver JIT
// accepts PTX up to the version of its CUDA release. 12.6 kept PTX 8.5. CUDA 12.7 was never a
// public toolkit; its driver is treated like 12.6 (8.5) to stay conservative. Drivers newer than
// the last row are capped at the last row's version: PTX they would accept beyond that is unknown
// here, and a lower .version is always accepted.
PtxVersion max_ptx_for_driver(int v) {
  static const struct {
    int driver;
    int major, minor;
  } kTable[] = {
      {10000, 6, 3}, {10010, 6, 4}, {10020, 6, 5}, {11000, 7, 0}, {11010, 7, 1}, {11020, 7, 2},
      {11030, 7, 3}, {11040, 7, 4}, {11050, 7, 5}, {11060, 7, 6}, {11070, 7, 7}, {11080, 7, 8},
      {12000, 8, 0}, {12010, 8, 1}, {12020, 8, 2}, {12030, 8, 3}, {12040, 8, 4}, {12050, 8, 5},
      {12060, 8, 5}, {12070, 8, 5}, {12080, 8, 7}, {12090, 8, 8}, {13000, 9, 0},
  };
  PtxVersion best;
  for (const auto& row : kTable)
    if (v >= row.driver) best = PtxVersion{row.major, row.minor};
  return best;
}

Status driver_version(int* out) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  return check(api->cuDriverGetVersion(out), "cuDriverGetVersion");
}

Status device_count(int* out) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  std::call_once(g_devices_once, [api] {
    int n = 0;
    if (g_library->init_result == CUDA_SUCCESS) {
      CUresult r = api->cuDeviceGetCount(&n);
      if (r == CUDA_ERROR_NO_DEVICE) {
        n = 0;
      } else if (r != CUDA_SUCCESS) {
        g_devices_status = check(r, "cuDeviceGetCount");
        return;
      }
    }
    g_device_count = n;
    g_devices.reset(new DeviceSlot[n > 0 ? n : 1]);
  });
  if (!g_devices_status.is_ok()) return g_devices_status;
  *out = g_device_count;
  return Status::ok();
}

Status device_info(int ordinal, const DeviceInfo** out) {
  int n = 0;
  TRI_RETURN_IF_ERROR(device_count(&n));
  if (ordinal < 0 || ordinal >= n)
    return Status(Code::InvalidArgument, "CUDA device " + std::to_string(ordinal) + " does not exist (" +
                                             std::to_string(n) + " device" + (n == 1 ? "" : "s") + " present)");
  DeviceSlot& slot = g_devices[ordinal];
  std::call_once(slot.once, [&slot, ordinal] {
    const Api* api = &g_library->api;
    DeviceInfo& d = slot.info;
    d.ordinal = ordinal;
    Status st = check(api->cuDeviceGet(&d.device, ordinal), "cuDeviceGet");
    char name[256] = {0};
    if (st.is_ok()) st = check(api->cuDeviceGetName(name, sizeof name - 1, d.device), "cuDeviceGetName");
    d.name = name;
    const struct {
      int attr;
      int* dst;
      const char* what;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &d.cc_major, "compute capability major"},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &d.cc_minor, "compute capability minor"},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &d.sm_count, "multiprocessor count"},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &d.max_threads_per_block, "max threads per block"},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &d.warp_size, "warp size"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &d.shared_per_block, "shared memory per block"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &d.shared_per_block_optin,
         "opt-in shared memory per block"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &d.shared_per_sm, "shared memory per SM"},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &d.l2_bytes, "L2 cache size"},
    };
    for (const auto& a : attrs) {
      if (!st.is_ok()) break;
      st = check(api->cuDeviceGetAttribute(a.dst, a.attr, d.device),
                 std::string("cuDeviceGetAttribute (") + a.what + ") of device " + std::to_string(ordinal));
    }
    slot.status = st;
  });
  if (!slot.status.is_ok()) return slot.status;
  *out = &slot.info;
  return Status::ok();
}

// ---- Contexts -------------------------------------------------------------------------------

ContextGuard::ContextGuard(const Api* api, CUcontext ctx) : api_(api) {
  CUresult r = api_->cuCtxGetCurrent(&previous_);
  if (r != CUDA_SUCCESS) {
    status_ = check(r, "cuCtxGetCurrent");
    return;
  }
  if (previous_ == ctx) return;
  r = api_->cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) {
    status_ = check(r, "cuCtxSetCurrent");
    return;
  }
  restore_ = true;
}

ContextGuard::~ContextGuard() {
  // Restoring cannot fail for a context that was current a moment ago unless the caller destroyed
  // it meanwhile, and then there is nothing sensible to restore.
  if (restore_) api_->cuCtxSetCurrent(previous_);
}

Status current_context(CUcontext* out) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  return check(api->cuCtxGetCurrent(out), "cuCtxGetCurrent");
}

Status stream_context(CUstream stream, CUcontext* out) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  if (!stream) return check(api->cuCtxGetCurrent(out), "cuCtxGetCurrent");
  return check(api->cuStreamGetCtx(stream, out), "cuStreamGetCtx");
}

Devices::~Devices() {
  if (!g_library || !g_library->status.is_ok()) return;
  for (int i = 0; i < kMaxDevices; ++i) {
    if (primary_[i].load(std::memory_order_acquire)) {
      const DeviceInfo* d = nullptr;
      if (device_info(i, &d).is_ok()) g_library->api.cuDevicePrimaryCtxRelease(d->device);
    }
  }
}

Status Devices::primary(int ordinal, CUcontext* out) {
  if (ordinal >= 0 && ordinal < kMaxDevices) {
    CUcontext c = primary_[ordinal].load(std::memory_order_acquire);
    if (c) {
      *out = c;
      return Status::ok();
    }
  }
  const DeviceInfo* d = nullptr;
  TRI_RETURN_IF_ERROR(device_info(ordinal, &d));
  if (ordinal >= kMaxDevices)
    return Status(Code::Unsupported, "CUDA device " + std::to_string(ordinal) + ": Tri handles at most " +
                                         std::to_string(kMaxDevices) + " devices per process");
  std::lock_guard<std::mutex> lock(retain_mu_);
  CUcontext c = primary_[ordinal].load(std::memory_order_acquire);
  if (!c) {
    TRI_RETURN_IF_ERROR(check(g_library->api.cuDevicePrimaryCtxRetain(&c, d->device),
                              "cuDevicePrimaryCtxRetain of device " + std::to_string(ordinal)));
    primary_[ordinal].store(c, std::memory_order_release);
  }
  *out = c;
  return Status::ok();
}

Status Devices::launch_context(int ordinal, CUstream stream, CUcontext* out) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  CUcontext c = nullptr;
  if (stream) {
    TRI_RETURN_IF_ERROR(check(api->cuStreamGetCtx(stream, &c), "cuStreamGetCtx"));
  } else {
    TRI_RETURN_IF_ERROR(check(api->cuCtxGetCurrent(&c), "cuCtxGetCurrent"));
  }
  if (c) {
    *out = c;
    return Status::ok();
  }
  return primary(ordinal, out);
}

OwnedContext::~OwnedContext() {
  if (ctx_) g_library->api.cuCtxDestroy(ctx_);
}

Status OwnedContext::create(int ordinal, OwnedContext* out) {
  const DeviceInfo* d = nullptr;
  TRI_RETURN_IF_ERROR(device_info(ordinal, &d));
  const Api* api = &g_library->api;
  // cuCtxCreate pushes the new context on the calling thread; put the caller's back.
  CUcontext previous = nullptr;
  TRI_RETURN_IF_ERROR(check(api->cuCtxGetCurrent(&previous), "cuCtxGetCurrent"));
  CUcontext c = nullptr;
  TRI_RETURN_IF_ERROR(check(api->cuCtxCreate(&c, 0, d->device), "cuCtxCreate"));
  CUresult r = api->cuCtxSetCurrent(previous);
  if (out->ctx_) api->cuCtxDestroy(out->ctx_);
  out->ctx_ = c;
  return check(r, "cuCtxSetCurrent");
}

// ---- Memory, streams, events, graphs --------------------------------------------------------

namespace {
// Runs one driver call with `ctx` current.
template <typename F>
Status in_context(CUcontext ctx, const char* what, F&& call) {
  const Api* api = nullptr;
  TRI_RETURN_IF_ERROR(driver(&api));
  ContextGuard guard(api, ctx);
  TRI_RETURN_IF_ERROR(guard.status());
  return check(call(*api), what);
}
}  // namespace

Status mem_alloc(CUcontext ctx, size_t bytes, CUdeviceptr* out) {
  return in_context(ctx, "cuMemAlloc", [&](const Api& a) { return a.cuMemAlloc(out, bytes); });
}
Status mem_free(CUcontext ctx, CUdeviceptr ptr) {
  return in_context(ctx, "cuMemFree", [&](const Api& a) { return a.cuMemFree(ptr); });
}
Status copy_to_device(CUcontext ctx, CUdeviceptr dst, const void* src, size_t bytes) {
  return in_context(ctx, "cuMemcpyHtoD", [&](const Api& a) { return a.cuMemcpyHtoD(dst, src, bytes); });
}
Status copy_to_host(CUcontext ctx, void* dst, CUdeviceptr src, size_t bytes) {
  return in_context(ctx, "cuMemcpyDtoH", [&](const Api& a) { return a.cuMemcpyDtoH(dst, src, bytes); });
}
Status memset_d8(CUcontext ctx, CUdeviceptr dst, uint8_t value, size_t count) {
  return in_context(ctx, "cuMemsetD8", [&](const Api& a) { return a.cuMemsetD8(dst, value, count); });
}
Status memset_d32(CUcontext ctx, CUdeviceptr dst, uint32_t value, size_t count) {
  return in_context(ctx, "cuMemsetD32", [&](const Api& a) { return a.cuMemsetD32(dst, value, count); });
}
Status context_synchronize(CUcontext ctx) {
  return in_context(ctx, "cuCtxSynchronize", [&](const Api& a) { return a.cuCtxSynchronize(); });
}
Status stream_create(CUcontext ctx, unsigned flags, CUstream* out) {
  return in_context(ctx, "cuStreamCreate", [&](const Api& a) { return a.cuStreamCreate(out, flags); });
}
Status stream_destroy(CUcontext ctx, CUstream stream) {
  return in_context(ctx, "cuStreamDestroy", [&](const Api& a) { return a.cuStreamDestroy(stream); });
}
Status stream_synchronize(CUcontext ctx, CUstream stream) {
  return in_context(ctx, "cuStreamSynchronize", [&](const Api& a) { return a.cuStreamSynchronize(stream); });
}
Status event_create(CUcontext ctx, unsigned flags, CUevent* out) {
  return in_context(ctx, "cuEventCreate", [&](const Api& a) { return a.cuEventCreate(out, flags); });
}
Status event_destroy(CUcontext ctx, CUevent event) {
  return in_context(ctx, "cuEventDestroy", [&](const Api& a) { return a.cuEventDestroy(event); });
}
Status event_record(CUcontext ctx, CUevent event, CUstream stream) {
  return in_context(ctx, "cuEventRecord", [&](const Api& a) { return a.cuEventRecord(event, stream); });
}
Status event_synchronize(CUcontext ctx, CUevent event) {
  return in_context(ctx, "cuEventSynchronize", [&](const Api& a) { return a.cuEventSynchronize(event); });
}
Status event_elapsed_ms(CUcontext ctx, CUevent start, CUevent end, float* out) {
  return in_context(ctx, "cuEventElapsedTime", [&](const Api& a) { return a.cuEventElapsedTime(out, start, end); });
}
Status capture_begin(CUcontext ctx, CUstream stream, int mode) {
  return in_context(ctx, "cuStreamBeginCapture", [&](const Api& a) { return a.cuStreamBeginCapture(stream, mode); });
}
Status capture_end(CUcontext ctx, CUstream stream, CUgraph* out) {
  return in_context(ctx, "cuStreamEndCapture", [&](const Api& a) { return a.cuStreamEndCapture(stream, out); });
}
Status graph_instantiate(CUcontext ctx, CUgraph graph, CUgraphExec* out) {
  return in_context(ctx, "cuGraphInstantiateWithFlags",
                    [&](const Api& a) { return a.cuGraphInstantiateWithFlags(out, graph, 0); });
}
Status graph_launch(CUcontext ctx, CUgraphExec exec, CUstream stream) {
  return in_context(ctx, "cuGraphLaunch", [&](const Api& a) { return a.cuGraphLaunch(exec, stream); });
}
Status graph_exec_destroy(CUcontext ctx, CUgraphExec exec) {
  return in_context(ctx, "cuGraphExecDestroy", [&](const Api& a) { return a.cuGraphExecDestroy(exec); });
}
Status graph_destroy(CUcontext ctx, CUgraph graph) {
  return in_context(ctx, "cuGraphDestroy", [&](const Api& a) { return a.cuGraphDestroy(graph); });
}

}  // namespace tri::cuda
