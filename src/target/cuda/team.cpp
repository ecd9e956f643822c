// GPU teams (docs/distributed.md): one rank per process, each on its own GPU, bootstrapped by
// NVSHMEM from a unique id the host passes to every rank (tri_team_make_id, tri_team_join). The
// symmetric heap is one nvshmem_malloc block per rank; NVSHMEM maps every peer's block into this
// process (nvshmem_ptr), and the table of those addresses, copied to this GPU, is what the
// kernels' symm_at, put, get and notify read (their hidden parameter). Allocations inside the
// block are tri_team_alloc's first-fit offsets (capi/team.cpp), the same on every rank when every
// rank makes the same calls in the same order, as NVSHMEM's own allocator requires of
// nvshmem_malloc.
#include "target/cuda/driver.h"
#include "target/cuda/nvshmem.h"
#include "target/cuda/target.h"

namespace tri::cuda {
namespace {

// Makes the team's context current on this thread for the scope, and restores the caller's.
class TeamContext {
 public:
  TeamContext(const Api* a, CUcontext ctx) : a_(a) {
    a_->cuCtxGetCurrent(&saved_);
    ok_ = a_->cuCtxSetCurrent(ctx) == CUDA_SUCCESS;
  }
  ~TeamContext() { a_->cuCtxSetCurrent(saved_); }
  bool ok() const { return ok_; }

 private:
  const Api* a_;
  CUcontext saved_ = nullptr;
  bool ok_ = false;
};

class CudaTeam final : public target::DeviceTeam {
 public:
  // Made once NVSHMEM has joined: the destructor leaves it.
  CudaTeam(const Api* a, const NvshmemApi* n, CUcontext ctx, uint32_t rank) : a_(a), n_(n), ctx_(ctx), rank_(rank) {}
  ~CudaTeam() override {
    TeamContext scope(a_, ctx_);
    a_->cuCtxSynchronize();
    if (device_bases_) a_->cuMemFree(device_bases_);
    if (memory_) n_->free(memory_);
    nvshmem_leave();
  }

  // The heap block, every rank's address of it, and their table on this GPU.
  Status make_heap(uint32_t num_ranks, uint64_t heap_bytes) {
    memory_ = n_->malloc(heap_bytes);
    if (!memory_)
      return Status(Code::OutOfMemory, "NVSHMEM could not allocate a heap of " + std::to_string(heap_bytes) +
                                           " bytes (NVSHMEM_SYMMETRIC_SIZE sets its limit, 1 GiB by default)");
    if (reinterpret_cast<uint64_t>(memory_) % kSymmetricHeapAlign)
      return Status(Code::Internal, "NVSHMEM's heap is not aligned to " + std::to_string(kSymmetricHeapAlign) + " bytes");
    for (uint32_t r = 0; r < num_ranks; ++r) {
      void* p = n_->ptr(memory_, static_cast<int>(r));
      if (!p)
        return Status(Code::Unsupported, "rank " + std::to_string(r) + "'s GPU cannot be reached with loads and stores "
                                         "from rank " + std::to_string(rank_) + "'s (no NVLink or PCIe peer access): "
                                         "Tri's GPU teams need every GPU of the team in one node, connected");
      bases_.push_back(reinterpret_cast<uint64_t>(p));
    }
    TRI_RETURN_IF_ERROR(check(a_->cuMemAlloc(&device_bases_, 8 * num_ranks), "cuMemAlloc"));
    TRI_RETURN_IF_ERROR(check(a_->cuMemcpyHtoD(device_bases_, bases_.data(), 8 * num_ranks), "cuMemcpyHtoD"));
    return zero(0, heap_bytes);
  }

  const std::vector<uint64_t>& bases() const override { return bases_; }

  Status zero(uint64_t offset, uint64_t bytes) override {
    TeamContext scope(a_, ctx_);
    TRI_RETURN_IF_ERROR(check(a_->cuMemsetD8(bases_[rank_] + offset, 0, bytes), "cuMemsetD8"));
    TRI_RETURN_IF_ERROR(check(a_->cuCtxSynchronize(), "cuCtxSynchronize"));
    // No peer writes into the new buffer before its owner has zeroed it.
    n_->barrier_all();
    return Status::ok();
  }

  Status barrier() override {
    TeamContext scope(a_, ctx_);
    TRI_RETURN_IF_ERROR(check(a_->cuCtxSynchronize(), "tri_team_barrier: cuCtxSynchronize"));
    n_->barrier_all();
    return Status::ok();
  }

  Status launch(const target::Executable& exe, const Grid& grid, const ArgValue* args, size_t nargs, void* stream,
                TeamLaunch* team, bool sync, const std::string& what) override {
    TeamContext scope(a_, ctx_);
    if (!scope.ok()) return Status(Code::Runtime, "cannot make the team's CUDA context current for " + what);
    team->device_bases = device_bases_;
    target::LaunchEnv env;
    env.stream = stream;
    env.team = team;
    TRI_RETURN_IF_ERROR(exe.launch(grid, args, nargs, env));
    if (!sync) return Status::ok();
    return check(stream ? a_->cuStreamSynchronize(static_cast<CUstream>(stream)) : a_->cuCtxSynchronize(), what);
  }

 private:
  const Api* a_;
  const NvshmemApi* n_;
  CUcontext ctx_;
  uint32_t rank_;
  void* memory_ = nullptr;
  std::vector<uint64_t> bases_;
  CUdeviceptr device_bases_ = 0;
};

}  // namespace

Status CudaRuntime::team_make_id(void* out, size_t bytes) const { return nvshmem_make_id(out); }

Status CudaRuntime::team_join(const void* id, size_t, uint32_t rank, uint32_t num_ranks, uint32_t device,
                              uint64_t heap_bytes, std::unique_ptr<target::DeviceTeam>* out) const {
  const Api* a = nullptr;
  TRI_RETURN_IF_ERROR(driver(&a));
  int count = 0;
  TRI_RETURN_IF_ERROR(cuda::device_count(&count));
  if (device >= static_cast<uint32_t>(count))
    return Status(Code::InvalidArgument, "device " + std::to_string(device) + " does not exist (" +
                                             std::to_string(count) + " CUDA devices)");
  // The rank's GPU: its primary context, current on this thread from now on (NVSHMEM binds the
  // rank to the device current at its start, and launches use the current context).
  CUdevice dev;
  CUcontext ctx;
  TRI_RETURN_IF_ERROR(check(a->cuDeviceGet(&dev, static_cast<int>(device)), "cuDeviceGet"));
  TRI_RETURN_IF_ERROR(check(a->cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain"));
  TRI_RETURN_IF_ERROR(check(a->cuCtxSetCurrent(ctx), "cuCtxSetCurrent"));
  TRI_RETURN_IF_ERROR(nvshmem_join(id, rank, num_ranks));
  const NvshmemApi* n = nullptr;
  TRI_RETURN_IF_ERROR(nvshmem(&n));
  auto team = std::make_unique<CudaTeam>(a, n, ctx, rank);
  TRI_RETURN_IF_ERROR(team->make_heap(num_ranks, heap_bytes));  // a failure leaves through the destructor
  *out = std::move(team);
  return Status::ok();
}

}  // namespace tri::cuda
