// NVSHMEM's host library, loaded at run time like the driver (docs/distributed.md): GPU teams
// use it for what it is good at — bootstrapping ranks from a unique id the host passes around,
// the symmetric heap and the mapping of every peer's heap into this process (nvshmem_ptr, over
// NVLink), and barriers. The kernels themselves reach peers by plain loads, stores and atomics
// through those mappings (codegen/nvptx/lower_distributed.cpp). When NVSHMEM's device library
// (the wheel's libnvshmem_device.bc) is found, kernels with distributed ops link it and take
// the peers' addresses from NVSHMEM's device state, which nvshmem_module_init fills in each
// loaded module; without it they read Tri's own table. Only the host library,
// libnvshmem_host.so.3, is needed at run time; nothing of NVSHMEM is needed to build. The declarations below are the ABI of NVSHMEM 3.x's public header
// (nvshmemx.h: the unique id, the init attributes and the host functions), which the loader
// checks by the sizes NVSHMEM itself asserts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "target/cuda/driver.h"

namespace tri::cuda {

// nvshmemx_uniqueid_t: 128 bytes, the first int its version.
constexpr size_t kNvshmemIdBytes = 128;

struct NvshmemApi {
  int (*get_uniqueid)(void* id);
  int (*set_attr_uniqueid_args)(int rank, int nranks, const void* id, void* attr);
  int (*hostlib_init_attr)(unsigned flags, void* attr);
  void (*hostlib_finalize)();
  int (*my_pe)();
  int (*n_pes)();
  void* (*malloc)(size_t bytes);
  void (*free)(void* p);
  void* (*ptr)(const void* p, int pe);
  void (*barrier_all)();
  int (*cumodule_init)(void* module);  // null when the library has none (then no device library)
};

// The library name: $TRI_NVSHMEM_LIB when set, else "libnvshmem_host.so.3" (found through
// LD_LIBRARY_PATH). Loaded once per process; failure is Code::Unsupported naming the library,
// dlerror's reason and how to point Tri at the pip wheel's copy.
Status nvshmem(const NvshmemApi** out);

// A unique id for a new team (nvshmemx_get_uniqueid), to be passed to every rank.
Status nvshmem_make_id(void* id);

// Joins the team of `id` as `rank` of `num_ranks` on the current CUDA context's device (host
// library initialization with the unique-id bootstrap). One team per process at a time.
Status nvshmem_join(const void* id, uint32_t rank, uint32_t num_ranks);
void nvshmem_leave();

// NVSHMEM's device library for kernels with distributed ops: $TRI_NVSHMEM_BC when set ("off"
// or "0": none), else libnvshmem_device.bc beside the host library when NVSHMEM loads and has
// nvshmemx_cumodule_init. `path` is empty when there is none (kernels then use Tri's table).
void nvshmem_device_library(std::string* path);

// Fills the device state of a module that links the device library (nvshmemx_cumodule_init),
// in this process's team; the module's context must be current.
Status nvshmem_module_init(void* module);

}  // namespace tri::cuda
