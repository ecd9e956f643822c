// The CUDA driver, loaded at run time: libcuda.so.1 is opened with dlopen once per process (never
// unloaded) and its entry points kept in a table, so libtri builds and runs where no CUDA is
// installed and the "cuda" target fails with Code::Unsupported and a clear message there. This
// header also carries what sits directly on the table: error text, devices and their limits,
// the driver's PTX ISA cap, primary/caller contexts with a scoped guard that restores the caller's
// current context, and the memory/stream/event/graph calls that tests and benchmarks need.
//
// cuda.h is deliberately not included (the build must not need the toolkit): the types and enum
// values below are the driver API's ABI values, copied from the documented header.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace tri::cuda {

// ---- Driver API ABI types (same layout and values as cuda.h) --------------------------------
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
struct CUlinkState_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUgraph = CUgraph_st*;
using CUgraphExec = CUgraphExec_st*;
using CUlinkState = CUlinkState_st*;

// CUresult values this code tests for (cudaError_enum).
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221;
constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;

// CUdevice_attribute values.
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute values.
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// CUjit_option values.
constexpr int CU_JIT_WALL_TIME = 2;
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_LOG_VERBOSE = 12;

// CUjitInputType values.
constexpr int CU_JIT_INPUT_CUBIN = 0;
constexpr int CU_JIT_INPUT_PTX = 1;

// Flags.
constexpr unsigned CU_STREAM_DEFAULT = 0x0;
constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DEFAULT = 0x0;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
constexpr int CU_STREAM_CAPTURE_MODE_GLOBAL = 0;
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr int CU_STREAM_CAPTURE_MODE_RELAXED = 2;

// ---- The entry-point table ------------------------------------------------------------------
// Each pointer has the signature of the ABI version named in the comment; driver.cpp resolves
// exactly that version, so a newer driver whose unsuffixed name means a different signature
// (cuCtxCreate is _v4 in CUDA 13) cannot be picked up by accident.
struct Api {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuGetErrorName)(CUresult error, const char** str);
  CUresult (*cuGetErrorString)(CUresult error, const char** str);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* dev, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice dev);
  CUresult (*cuDeviceGetAttribute)(int* value, int attrib, CUdevice dev);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* ctx, CUdevice dev);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev);                      // _v2
  CUresult (*cuCtxCreate)(CUcontext* ctx, unsigned flags, CUdevice dev);    // _v2
  CUresult (*cuCtxDestroy)(CUcontext ctx);                                  // _v2
  CUresult (*cuCtxGetCurrent)(CUcontext* ctx);
  CUresult (*cuCtxSetCurrent)(CUcontext ctx);
  CUresult (*cuCtxGetDevice)(CUdevice* dev);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule* mod, const void* image, unsigned num_options, int* options,
                                 void** values);
  CUresult (*cuModuleUnload)(CUmodule mod);
  CUresult (*cuModuleGetFunction)(CUfunction* fn, CUmodule mod, const char* name);
  CUresult (*cuLinkCreate)(unsigned num_options, int* options, void** values, CUlinkState* state);  // _v2
  CUresult (*cuLinkAddData)(CUlinkState state, int type, void* data, size_t size, const char* name,
                            unsigned num_options, int* options, void** values);                   // _v2
  CUresult (*cuLinkComplete)(CUlinkState state, void** cubin, size_t* size);
  CUresult (*cuLinkDestroy)(CUlinkState state);
  CUresult (*cuFuncGetAttribute)(int* value, int attrib, CUfunction fn);
  CUresult (*cuFuncSetAttribute)(CUfunction fn, int attrib, int value);
  CUresult (*cuLaunchKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shared_bytes, CUstream stream, void** params, void** extra);
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, size_t bytes);                                   // _v2
  CUresult (*cuMemFree)(CUdeviceptr ptr);                                                   // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes);                 // _v2
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes);                       // _v2
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t count);               // _v2
  CUresult (*cuMemsetD32)(CUdeviceptr dst, unsigned value, size_t count);                   // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);  // _v2
  CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned value, size_t count, CUstream stream);
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);                                             // _v2
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuStreamGetCtx)(CUstream stream, CUcontext* ctx);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);                                                // _v2
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end);                    // v1
  CUresult (*cuStreamBeginCapture)(CUstream stream, int mode);                              // _v2
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph* graph);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec* exec, CUgraph graph, unsigned long long flags);
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec);
  CUresult (*cuGraphDestroy)(CUgraph graph);
};

// A loaded driver library. `api` is complete when `status` is ok.
struct Library {
  void* handle = nullptr;
  Api api{};
  Status status;
  // cuInit's result: CUDA_ERROR_NO_DEVICE means a driver without devices (count 0), not a failure.
  CUresult init_result = CUDA_SUCCESS;
};

// The library name the process-wide driver is loaded from: $TRI_LIBCUDA when set and non-empty,
// else "libcuda.so.1".
std::string driver_library_name();

// Loads a driver library from `path`, resolves the table and calls cuInit(0). Independent of the
// process-wide driver (tests use it with a bad path); the handle is never closed. Failure:
// Code::Unsupported "no CUDA driver: <path> could not be loaded (<dlerror>); ...".
void load_library(const std::string& path, Library* out);

// The process-wide driver, loaded on first use (std::call_once). Failure is Code::Unsupported with
// the message above, every time it is asked. On success *out points at the table for the rest of
// the process.
Status driver(const Api** out);

// "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)"; "CUDA error <n>" if the driver has no
// name for it.
std::string error_text(CUresult r);
// The Status for a failed call: "<what> failed: <error_text>". The code follows the error:
// OutOfMemory, Compile (bad PTX/image, no binary for the GPU), InvalidArgument (invalid value),
// NotFound (a symbol), Unsupported (no/invalid device), else Runtime.
Status check(CUresult r, const char* what);
Status check(CUresult r, const std::string& what);

// ---- Devices --------------------------------------------------------------------------------
struct PtxVersion {
  int major = 0, minor = 0;
  int number() const { return major * 10 + minor; }  // 8.5 -> 85
  bool known() const { return major != 0; }
};

// The highest PTX ISA version a driver of `driver_version` (cuDriverGetVersion's 1000*major +
// 10*minor) accepts; unknown (0.0) for drivers older than CUDA 10.0.
PtxVersion max_ptx_for_driver(int driver_version);

struct DeviceInfo {
  int ordinal = 0;
  CUdevice device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;  // compute capability: sm_<major><minor>
  int sm_count = 0;
  int max_threads_per_block = 0;
  int warp_size = 0;
  int shared_per_block = 0;        // without opt-in (48 KB)
  int shared_per_block_optin = 0;  // with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int shared_per_sm = 0;
  int l2_bytes = 0;
  int arch() const { return cc_major * 10 + cc_minor; }  // 90 for sm_90
};

// Number of devices: 0 when the driver is there but has no device; Code::Unsupported without a
// driver.
Status device_count(int* out);
// Queries one device's name and limits (cached after the first query; thread-safe).
// Code::InvalidArgument for an ordinal out of range.
Status device_info(int ordinal, const DeviceInfo** out);
// cuDriverGetVersion.
Status driver_version(int* out);
// The caller's current context; without one, device 0's primary context, retained and made
// current (what launches use).
Status current_or_primary(const Api* api, CUcontext* out);
// The device of current_or_primary's context.
Status current_device(const DeviceInfo** out);

// ---- Contexts -------------------------------------------------------------------------------
// Makes `ctx` current on the calling thread for the guard's lifetime and then restores the
// context that was current before (which may be none). Cheap when `ctx` is already current: one
// cuCtxGetCurrent and nothing to restore. Every call below that needs a context goes through one.
class ContextGuard {
 public:
  ContextGuard(const Api* api, CUcontext ctx);
  ~ContextGuard();
  ContextGuard(const ContextGuard&) = delete;
  ContextGuard& operator=(const ContextGuard&) = delete;
  // Failure to read or set the current context.
  const Status& status() const { return status_; }

 private:
  const Api* api_;
  CUcontext previous_ = nullptr;
  bool restore_ = false;
  Status status_;
};

// The caller's current context, or NULL when it has none.
Status current_context(CUcontext* out);
// The context a stream belongs to (cuStreamGetCtx); for stream NULL, the current context.
Status stream_context(CUstream stream, CUcontext* out);

// Owns retained primary contexts: each device's is retained once, on first use, and released when
// the Devices object is destroyed. One per tri_context (the owning object). Thread-safe; the warm
// path (primary() of an already retained device) is one atomic load.
class Devices {
 public:
  Devices() = default;
  ~Devices();
  Devices(const Devices&) = delete;
  Devices& operator=(const Devices&) = delete;

  // The primary context of device `ordinal`, retained on first use.
  Status primary(int ordinal, CUcontext* out);
  // The context a launch on `stream` uses: the stream's own context when stream is not NULL, else
  // the caller's current context when there is one, else the primary context of `ordinal`.
  Status launch_context(int ordinal, CUstream stream, CUcontext* out);

 private:
  static constexpr int kMaxDevices = 64;
  std::mutex retain_mu_;
  std::atomic<CUcontext> primary_[kMaxDevices] = {};
};

// A context of its own (cuCtxCreate), destroyed with the object; for tests that need two contexts
// on one GPU. Creating it does not change the caller's current context.
class OwnedContext {
 public:
  OwnedContext() = default;
  ~OwnedContext();
  OwnedContext(const OwnedContext&) = delete;
  OwnedContext& operator=(const OwnedContext&) = delete;
  static Status create(int ordinal, OwnedContext* out);
  CUcontext get() const { return ctx_; }

 private:
  CUcontext ctx_ = nullptr;
};

// ---- Memory, streams, events, graphs (each in context `ctx`) --------------------------------
Status mem_alloc(CUcontext ctx, size_t bytes, CUdeviceptr* out);
Status mem_free(CUcontext ctx, CUdeviceptr ptr);
Status copy_to_device(CUcontext ctx, CUdeviceptr dst, const void* src, size_t bytes);
Status copy_to_host(CUcontext ctx, void* dst, CUdeviceptr src, size_t bytes);
Status memset_d8(CUcontext ctx, CUdeviceptr dst, uint8_t value, size_t count);
Status memset_d32(CUcontext ctx, CUdeviceptr dst, uint32_t value, size_t count);
Status context_synchronize(CUcontext ctx);

Status stream_create(CUcontext ctx, unsigned flags, CUstream* out);
Status stream_destroy(CUcontext ctx, CUstream stream);
Status stream_synchronize(CUcontext ctx, CUstream stream);

Status event_create(CUcontext ctx, unsigned flags, CUevent* out);
Status event_destroy(CUcontext ctx, CUevent event);
Status event_record(CUcontext ctx, CUevent event, CUstream stream);
Status event_synchronize(CUcontext ctx, CUevent event);
Status event_elapsed_ms(CUcontext ctx, CUevent start, CUevent end, float* out);

Status capture_begin(CUcontext ctx, CUstream stream, int mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
Status capture_end(CUcontext ctx, CUstream stream, CUgraph* out);
Status graph_instantiate(CUcontext ctx, CUgraph graph, CUgraphExec* out);
Status graph_launch(CUcontext ctx, CUgraphExec exec, CUstream stream);
Status graph_exec_destroy(CUcontext ctx, CUgraphExec exec);
Status graph_destroy(CUcontext ctx, CUgraph graph);

}  // namespace tri::cuda
