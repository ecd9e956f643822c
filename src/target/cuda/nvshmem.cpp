// NVSHMEM's host library by dlopen (nvshmem.h).
#include "target/cuda/nvshmem.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace tri::cuda {
namespace {

// nvshmemx_init_attr_t of NVSHMEM 3.x (144 bytes): a version, the MPI communicator (unused
// here) and the init args with the unique-id arguments, which nvshmemx_set_attr_uniqueid_args
// fills. The versions are (1 << 16) + sizeof, as NVSHMEM's initializer macros write them.
struct UidArgs {
  int version;
  void* id;
  int myrank;
  int nranks;
};
struct InitArgs {
  int version;
  UidArgs uid_args;
  char content[96];
};
struct InitAttr {
  int version;
  void* mpi_comm;
  InitArgs args;
};
static_assert(sizeof(UidArgs) == 24 && sizeof(InitArgs) == 128 && sizeof(InitAttr) == 144,
              "NVSHMEM 3.x's init attributes");
constexpr unsigned kInitWithUniqueId = 1u << 3;  // NVSHMEMX_INIT_WITH_UNIQUEID

std::once_flag g_once;
NvshmemApi g_api;
Status g_status;
std::mutex g_mu;
bool g_joined = false;

std::string library_name() {
  const char* e = std::getenv("TRI_NVSHMEM_LIB");
  return e && *e ? e : "libnvshmem_host.so.3";
}

void load() {
  const std::string name = library_name();
  void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char* why = dlerror();
    g_status = Status(Code::Unsupported,
                      "no NVSHMEM: " + name + " could not be loaded (" + (why ? why : "unknown reason") +
                          "); GPU teams need NVSHMEM's host library: pip install nvidia-nvshmem-cu13 (or -cu12) and "
                          "set TRI_NVSHMEM_LIB to its lib/libnvshmem_host.so.3");
    return;
  }
  struct Sym {
    const char* name;
    void** slot;
  } syms[] = {
      {"nvshmemx_get_uniqueid", reinterpret_cast<void**>(&g_api.get_uniqueid)},
      {"nvshmemx_set_attr_uniqueid_args", reinterpret_cast<void**>(&g_api.set_attr_uniqueid_args)},
      {"nvshmemx_hostlib_init_attr", reinterpret_cast<void**>(&g_api.hostlib_init_attr)},
      {"nvshmemx_hostlib_finalize", reinterpret_cast<void**>(&g_api.hostlib_finalize)},
      {"nvshmem_my_pe", reinterpret_cast<void**>(&g_api.my_pe)},
      {"nvshmem_n_pes", reinterpret_cast<void**>(&g_api.n_pes)},
      {"nvshmem_malloc", reinterpret_cast<void**>(&g_api.malloc)},
      {"nvshmem_free", reinterpret_cast<void**>(&g_api.free)},
      {"nvshmem_ptr", reinterpret_cast<void**>(&g_api.ptr)},
      {"nvshmem_barrier_all", reinterpret_cast<void**>(&g_api.barrier_all)},
  };
  // Optional: without it, kernels do not link the device library (nvshmem_device_library).
  *reinterpret_cast<void**>(&g_api.cumodule_init) = dlsym(h, "nvshmemx_cumodule_init");
  for (const Sym& s : syms) {
    *s.slot = dlsym(h, s.name);
    if (!*s.slot) {
      g_status = Status(Code::Unsupported, "no usable NVSHMEM: " + name + " has no " + s.name +
                                               " (Tri needs NVSHMEM 3.x's host library)");
      return;
    }
  }
}

}  // namespace

Status nvshmem(const NvshmemApi** out) {
  std::call_once(g_once, load);
  if (!g_status.is_ok()) return g_status;
  *out = &g_api;
  return Status::ok();
}

Status nvshmem_make_id(void* id) {
  const NvshmemApi* n = nullptr;
  TRI_RETURN_IF_ERROR(nvshmem(&n));
  std::memset(id, 0, kNvshmemIdBytes);
  const int version = (1 << 16) + static_cast<int>(kNvshmemIdBytes);
  std::memcpy(id, &version, sizeof version);
  if (int rc = n->get_uniqueid(id))
    return Status(Code::Runtime, "nvshmemx_get_uniqueid failed (" + std::to_string(rc) + ")");
  return Status::ok();
}

Status nvshmem_join(const void* id, uint32_t rank, uint32_t num_ranks) {
  const NvshmemApi* n = nullptr;
  TRI_RETURN_IF_ERROR(nvshmem(&n));
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_joined)
    return Status(Code::Unsupported, "this process is in a GPU team already; destroy it (tri_team_destroy) first: "
                                     "NVSHMEM runs one team per process");
  alignas(8) unsigned char uid[kNvshmemIdBytes];
  std::memcpy(uid, id, sizeof uid);
  InitAttr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.version = (1 << 16) + static_cast<int>(sizeof(InitAttr));
  attr.args.version = (1 << 16) + static_cast<int>(sizeof(InitArgs));
  attr.args.uid_args.version = (1 << 16) + static_cast<int>(sizeof(UidArgs));
  if (int rc = n->set_attr_uniqueid_args(static_cast<int>(rank), static_cast<int>(num_ranks), uid, &attr))
    return Status(Code::InvalidArgument, "nvshmemx_set_attr_uniqueid_args failed (" + std::to_string(rc) + ")");
  if (int rc = n->hostlib_init_attr(kInitWithUniqueId, &attr))
    return Status(Code::Runtime, "NVSHMEM could not start rank " + std::to_string(rank) + " of " +
                                     std::to_string(num_ranks) + " (nvshmemx_hostlib_init_attr: " + std::to_string(rc) +
                                     "); every rank must join with the same id, and rank 0's process must be running");
  if (n->my_pe() != static_cast<int>(rank) || n->n_pes() != static_cast<int>(num_ranks)) {
    const std::string got = std::to_string(n->my_pe()) + " of " + std::to_string(n->n_pes());
    n->hostlib_finalize();
    return Status(Code::Runtime, "NVSHMEM made this process rank " + got + ", not " + std::to_string(rank) + " of " +
                                     std::to_string(num_ranks));
  }
  g_joined = true;
  return Status::ok();
}

void nvshmem_leave() {
  const NvshmemApi* n = nullptr;
  if (!nvshmem(&n).is_ok()) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_joined) return;
  n->hostlib_finalize();
  g_joined = false;
}

void nvshmem_device_library(std::string* path) {
  path->clear();
  const char* e = std::getenv("TRI_NVSHMEM_BC");
  std::string file;
  if (e && *e) {
    if (std::strcmp(e, "off") == 0 || std::strcmp(e, "0") == 0) return;
    file = e;
  } else {
    const NvshmemApi* n = nullptr;
    Dl_info info;
    if (!nvshmem(&n).is_ok() || !n->cumodule_init || !dladdr(reinterpret_cast<void*>(n->my_pe), &info) ||
        !info.dli_fname)
      return;
    std::error_code ec;
    std::filesystem::path bc = std::filesystem::path(info.dli_fname).parent_path() / "libnvshmem_device.bc";
    if (!std::filesystem::exists(bc, ec)) return;
    file = bc.string();
  }
  *path = file;
}

Status nvshmem_module_init(void* module) {
  const NvshmemApi* n = nullptr;
  TRI_RETURN_IF_ERROR(nvshmem(&n));
  if (!n->cumodule_init)
    return Status(Code::Unsupported, "NVSHMEM's host library " + library_name() +
                                         " has no nvshmemx_cumodule_init; the kernel links NVSHMEM's device library "
                                         "(set TRI_NVSHMEM_BC=off to compile it without)");
  if (int rc = n->cumodule_init(module))
    return Status(Code::Runtime, "nvshmemx_cumodule_init failed (" + std::to_string(rc) +
                                     "): the kernel's NVSHMEM device library does not match the host library " +
                                     library_name() + " (set TRI_NVSHMEM_BC to the device library of the same wheel, "
                                     "or to \"off\")");
  return Status::ok();
}

}  // namespace tri::cuda
