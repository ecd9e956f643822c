// GPU teams (docs/distributed.md): one rank per process, each on its own GPU, bootstrapped by
// NVSHMEM from a unique id the host passes to every rank (tri_team_make_id, tri_team_join). The
// symmetric heap is one nvshmem_malloc block per rank; NVSHMEM maps every peer's block into this
// process (nvshmem_ptr), and the table of those addresses, copied to this GPU, is what the
// kernels' symm_at, put, get and notify read (their hidden parameter). Allocations inside the
// block are tri_team_alloc's first-fit offsets, the same on every rank when every rank makes the
// same calls in the same order, as NVSHMEM's own allocator requires of nvshmem_malloc.
#include <cstring>

#include "capi/handles.h"
#include "capi/team.h"
#include "cuda/driver.h"
#include "cuda/nvshmem.h"
#include "target/target.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

namespace tri::capi {
namespace {

// Makes the team's context current on this thread for the scope, and restores the caller's.
class TeamContext {
 public:
  TeamContext(const cuda::Api* a, tri_team* t) : a_(a) {
    a_->cuCtxGetCurrent(&saved_);
    ok_ = a_->cuCtxSetCurrent(static_cast<cuda::CUcontext>(t->cuda_ctx)) == cuda::CUDA_SUCCESS;
  }
  ~TeamContext() { a_->cuCtxSetCurrent(saved_); }
  bool ok() const { return ok_; }

 private:
  const cuda::Api* a_;
  cuda::CUcontext saved_ = nullptr;
  bool ok_ = false;
};

}  // namespace

Status gpu_team_zero(tri_team* team, uint64_t offset, uint64_t bytes) {
  const cuda::Api* a = nullptr;
  TRI_RETURN_IF_ERROR(cuda::driver(&a));
  const cuda::NvshmemApi* n = nullptr;
  TRI_RETURN_IF_ERROR(cuda::nvshmem(&n));
  TeamContext scope(a, team);
  TRI_RETURN_IF_ERROR(cuda::check(a->cuMemsetD8(team->bases[team->rank] + offset, 0, bytes), "cuMemsetD8"));
  TRI_RETURN_IF_ERROR(cuda::check(a->cuCtxSynchronize(), "cuCtxSynchronize"));
  // No peer writes into the new buffer before its owner has zeroed it.
  n->barrier_all();
  return Status::ok();
}

void gpu_team_destroy(tri_team* team) {
  const cuda::Api* a = nullptr;
  const cuda::NvshmemApi* n = nullptr;
  if (!cuda::driver(&a).is_ok() || !cuda::nvshmem(&n).is_ok()) return;
  TeamContext scope(a, team);
  a->cuCtxSynchronize();
  if (team->device_bases) a->cuMemFree(team->device_bases);
  if (team->memory) n->free(team->memory);
  cuda::nvshmem_leave();
}

Status gpu_team_launch(const tri_kernel* kernel, tri_team* team, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                       const tri_arg* args, uint32_t num_args, void* stream, bool sync) {
  const capi::Compiled& c = *kernel->compiled;
  const std::string name = sync ? "tri_team_launch" : "tri_team_launch_async";
  if (!c.target->uses_stream())
    return Status(Code::InvalidArgument, name + ": kernel @" + c.kernel().name + " is compiled for the \"" +
                                             std::string(c.target->name()) +
                                             "\" target, and this team's ranks are GPUs (tri_team_join): compile it "
                                             "for \"cuda\"");
  if (grid_x > kMaxGridX || grid_y > kMaxGridYZ || grid_z > kMaxGridYZ)
    return Status(Code::InvalidArgument, name + ": the grid is too large: x may be at most " +
                                             std::to_string(kMaxGridX) + " and y and z at most " +
                                             std::to_string(kMaxGridYZ));
  if (num_args != c.params.size())
    return Status(Code::LaunchArgs, name + ": kernel @" + c.kernel().name + " takes " +
                                        std::to_string(c.params.size()) + " arguments, got " +
                                        std::to_string(num_args) + " (a GPU team's process passes its own rank's)");
  if (num_args && !args) return Status(Code::InvalidArgument, name + ": args is NULL");
  ArgValue av[256];
  if (num_args > 256) return Status(Code::LaunchArgs, name + ": more than 256 arguments");
  uint64_t key = 0;
  if (!c.encode_and_classify(args, num_args, av, &key)) TRI_RETURN_IF_ERROR(capi::encode_args(c, args, num_args, av));
  tri_context* ctx = kernel->module->context;
  const capi::Compiled* v = c.find_variant(key);
  if (!v) v = c.variant(key, [ctx](const std::string& m) { ctx->log(TRI_LOG_INFO, m); });
  if (grid_x == 0 || grid_y == 0 || grid_z == 0) return Status::ok();
  const cuda::Api* a = nullptr;
  TRI_RETURN_IF_ERROR(cuda::driver(&a));
  TeamContext scope(a, team);
  if (!scope.ok()) return Status(Code::Runtime, name + ": cannot make the team's CUDA context current");
  TeamLaunch tl;
  tl.rank = team->rank;
  tl.num_ranks = team->num_ranks;
  tl.heap_bases = team->bases.data();
  tl.heap_bytes = team->heap_bytes;
  tl.wait_timeout_ms = team->wait_timeout_ms.load();
  tl.device_bases = team->device_bases;
  target::LaunchEnv env;
  env.stream = stream;
  env.team = &tl;
  TRI_RETURN_IF_ERROR(v->exe->launch(Grid{grid_x, grid_y, grid_z}, av, num_args, env));
  if (sync) {
    Status st = cuda::check(stream ? a->cuStreamSynchronize(static_cast<cuda::CUstream>(stream)) : a->cuCtxSynchronize(),
                            "rank " + std::to_string(team->rank) + ": kernel @" + c.kernel().name);
    TRI_RETURN_IF_ERROR(st);
  }
  return Status::ok();
}

}  // namespace tri::capi

extern "C" {

TRI_API tri_result tri_team_make_id(tri_context* context, void* out_id, size_t id_bytes) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(out_id);
  return guard([&] {
    if (id_bytes < TRI_TEAM_ID_BYTES)
      return set_error(Code::InvalidArgument, "tri_team_make_id: the id takes " + std::to_string(TRI_TEAM_ID_BYTES) +
                                                  " bytes, the buffer has " + std::to_string(id_bytes));
    return set_error(cuda::nvshmem_make_id(out_id));
  });
}

TRI_API tri_result tri_team_join(tri_context* context, const void* id, size_t id_bytes, uint32_t rank,
                                 uint32_t num_ranks, uint32_t device, uint64_t heap_bytes_per_rank, tri_team** out_team) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(id);
  TRI_CHECK_ARG(out_team);
  return guard([&] {
    if (id_bytes != TRI_TEAM_ID_BYTES)
      return set_error(Code::InvalidArgument, "tri_team_join: an id is " + std::to_string(TRI_TEAM_ID_BYTES) +
                                                  " bytes (tri_team_make_id), got " + std::to_string(id_bytes));
    if (num_ranks == 0 || rank >= num_ranks)
      return set_error(Code::InvalidArgument, "tri_team_join: rank " + std::to_string(rank) + " of a team of " +
                                                  std::to_string(num_ranks) + " ranks");
    if (heap_bytes_per_rank == 0)
      return set_error(Code::InvalidArgument, "tri_team_join: heap_bytes_per_rank is 0; give each rank's heap a size");
    const cuda::Api* a = nullptr;
    Status st = cuda::driver(&a);
    if (!st.is_ok()) return set_error(st);
    int count = 0;
    if (!(st = cuda::device_count(&count)).is_ok()) return set_error(st);
    if (device >= static_cast<uint32_t>(count))
      return set_error(Code::InvalidArgument, "tri_team_join: device " + std::to_string(device) + " does not exist (" +
                                                  std::to_string(count) + " CUDA devices)");
    // The rank's GPU: its primary context, current on this thread from now on (NVSHMEM binds
    // the rank to the device current at its start, and launches use the current context).
    cuda::CUdevice dev;
    cuda::CUcontext cctx;
    if (!(st = cuda::check(a->cuDeviceGet(&dev, static_cast<int>(device)), "cuDeviceGet")).is_ok() ||
        !(st = cuda::check(a->cuDevicePrimaryCtxRetain(&cctx, dev), "cuDevicePrimaryCtxRetain")).is_ok() ||
        !(st = cuda::check(a->cuCtxSetCurrent(cctx), "cuCtxSetCurrent")).is_ok())
      return set_error(st);
    if (!(st = cuda::nvshmem_join(id, rank, num_ranks)).is_ok()) return set_error(st);
    const cuda::NvshmemApi* n = nullptr;
    cuda::nvshmem(&n);
    auto team = std::make_unique<tri_team>();
    team->context = context;
    team->gpu = true;
    team->rank = rank;
    team->num_ranks = num_ranks;
    team->cuda_ctx = cctx;
    team->heap_bytes = (heap_bytes_per_rank + kSymmetricHeapAlign - 1) / kSymmetricHeapAlign * kSymmetricHeapAlign;
    auto fail = [&](Code code, const std::string& m) {
      capi::gpu_team_destroy(team.get());
      return set_error(code, "tri_team_join: " + m);
    };
    team->memory = n->malloc(team->heap_bytes);
    if (!team->memory)
      return fail(Code::OutOfMemory, "NVSHMEM could not allocate a heap of " + std::to_string(team->heap_bytes) +
                                         " bytes (NVSHMEM_SYMMETRIC_SIZE sets its limit, 1 GiB by default)");
    if (reinterpret_cast<uint64_t>(team->memory) % kSymmetricHeapAlign)
      return fail(Code::Internal, "NVSHMEM's heap is not aligned to " + std::to_string(kSymmetricHeapAlign) + " bytes");
    for (uint32_t r = 0; r < num_ranks; ++r) {
      void* p = n->ptr(team->memory, static_cast<int>(r));
      if (!p)
        return fail(Code::Unsupported, "rank " + std::to_string(r) + "'s GPU cannot be reached with loads and stores "
                                         "from rank " + std::to_string(rank) + "'s (no NVLink or PCIe peer access): "
                                         "Tri's GPU teams need every GPU of the team in one node, connected");
      team->bases.push_back(reinterpret_cast<uint64_t>(p));
    }
    if (!(st = cuda::check(a->cuMemAlloc(&team->device_bases, 8 * num_ranks), "cuMemAlloc")).is_ok() ||
        !(st = cuda::check(a->cuMemcpyHtoD(team->device_bases, team->bases.data(), 8 * num_ranks), "cuMemcpyHtoD"))
             .is_ok())
      return fail(st.code(), st.message());
    if (!(st = capi::gpu_team_zero(team.get(), 0, team->heap_bytes)).is_ok()) return fail(st.code(), st.message());
    capi::context_retain(context);
    *out_team = team.release();
    return TRI_OK;
  });
}

TRI_API tri_result tri_team_rank(const tri_team* team, uint32_t* out_rank, uint32_t* out_num_ranks) {
  TRI_CHECK_ARG(team);
  if (out_rank) *out_rank = team->rank;
  if (out_num_ranks) *out_num_ranks = team->num_ranks;
  return TRI_OK;
}

TRI_API tri_result tri_team_barrier(tri_team* team) {
  TRI_CHECK_ARG(team);
  return guard([&] {
    if (!team->gpu) return TRI_OK;  // a host team's ranks are this process's threads: nothing to wait for
    const cuda::Api* a = nullptr;
    const cuda::NvshmemApi* n = nullptr;
    Status st = cuda::driver(&a);
    if (st.is_ok()) st = cuda::nvshmem(&n);
    if (!st.is_ok()) return set_error(st);
    capi::TeamContext scope(a, team);
    if (!(st = cuda::check(a->cuCtxSynchronize(), "tri_team_barrier: cuCtxSynchronize")).is_ok()) return set_error(st);
    n->barrier_all();
    return TRI_OK;
  });
}

TRI_API tri_result tri_team_launch_async(const tri_kernel* kernel, tri_team* team, uint32_t grid_x, uint32_t grid_y,
                                         uint32_t grid_z, const tri_arg* args, uint32_t num_args, void* stream) {
  TRI_CHECK_ARG(kernel);
  TRI_CHECK_ARG(team);
  return guard([&] {
    if (!team->gpu)
      return set_error(Code::InvalidArgument,
                       "tri_team_launch_async: this team runs on the host (tri_team_create); use tri_team_launch");
    return set_error(capi::gpu_team_launch(kernel, team, grid_x, grid_y, grid_z, args, num_args, stream, false));
  });
}

}  // extern "C"
