// NVSHMEM's device library linked into a kernel's module (docs/distributed.md). The library is
// the bitcode NVIDIA ships in its pip wheel (nvidia-nvshmem-cu13: lib/libnvshmem_device.bc);
// Tri never needs it to build, and reads it at run time from the path the cuda target gives
// (GpuOptions::nvshmem_device_library). Linked before optimization, its functions inline into
// the kernel like Tri's own code; the module then holds NVSHMEM's device state, which the host
// library fills once the module is loaded (nvshmemx_cumodule_init, target/cuda/nvshmem.h).
#pragma once

#include <string>

#include "base/status.h"

namespace llvm {
class Module;
}

namespace tri::codegen::nvptx {

// The globals nvshmemx_cumodule_init looks up in a loaded module; they stay visible in the PTX.
inline constexpr const char* kNvshmemStateGlobal = "nvshmemi_device_state_d";
inline constexpr const char* kNvshmemVersionGlobal = "nvshmemi_device_lib_version_d";

// Links what `mod` calls of the device library at `path` (only those functions, lazily read),
// and the two state globals. Every linked symbol but the kernel `kernel` and the state globals
// becomes internal, so O3 inlines and drops them; the library's target attributes (it is built
// for sm_90) are dropped so that its functions inline into a kernel for any architecture. The
// file is read once per process. Errors: Code::Unsupported naming the file and what is wrong
// (unreadable, not bitcode this LLVM reads, not an NVSHMEM 3 device library).
Status link_nvshmem_device(llvm::Module& mod, const std::string& path, const std::string& kernel);

// What a cache key says of the library at `path`: "nvshmem device <xxh64 of its bytes>", from
// the bytes the link reads (once per process), or "nvshmem device unreadable" (the link then
// says why).
std::string nvshmem_device_identity(const std::string& path);

}  // namespace tri::codegen::nvptx
