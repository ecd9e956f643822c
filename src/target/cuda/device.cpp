// The cuda target's answers about its devices (tri_device_*, the architecture a compile for "the
// current device" means, the context another thread acts for) and tri_tune's Bench on a stream:
// device copies of the written buffers restored in stream order, and CUDA events around each run
// after a 256 MB memset that evicts L2, so that no trial finds its inputs in the cache.
#include "target/cuda/driver.h"
#include "target/cuda/target.h"

namespace tri::cuda {
namespace {

void to_target(const DeviceInfo& d, target::DeviceInfo* out) {
  out->name = d.name;
  out->cc_major = d.cc_major;
  out->cc_minor = d.cc_minor;
  out->sm_count = d.sm_count;
  out->max_threads_per_block = d.max_threads_per_block;
  out->warp_size = d.warp_size;
  out->shared_per_block = d.shared_per_block;
  out->shared_per_block_optin = d.shared_per_block_optin;
  out->shared_per_sm = d.shared_per_sm;
  out->l2_bytes = d.l2_bytes;
}

class CudaBench final : public target::Bench {
 public:
  static constexpr size_t kFlushBytes = size_t(256) << 20;

  CudaBench(const Api* api, CUstream stream) : api_(api), stream_(stream) {}
  ~CudaBench() override {
    for (const Saved& s : saved_)
      if (s.dev) api_->cuMemFree(s.dev);
    if (ev0_) api_->cuEventDestroy(ev0_);
    if (ev1_) api_->cuEventDestroy(ev1_);
    if (flush_) api_->cuMemFree(flush_);
  }
  Status start() {
    TRI_RETURN_IF_ERROR(check(api_->cuEventCreate(&ev0_, 0), "cuEventCreate"));
    TRI_RETURN_IF_ERROR(check(api_->cuEventCreate(&ev1_, 0), "cuEventCreate"));
    if (api_->cuMemAlloc(&flush_, kFlushBytes) != CUDA_SUCCESS) flush_ = 0;  // no flush when memory is short
    return Status::ok();
  }
  // A device copy restored by a stream-ordered device copy; a host copy when memory is short.
  Status save(void* ptr, uint64_t bytes) override {
    Saved sv{reinterpret_cast<CUdeviceptr>(ptr), bytes, 0, std::string()};
    Status st;
    if (api_->cuMemAlloc(&sv.dev, bytes) == CUDA_SUCCESS) {
      st = check(api_->cuMemcpyDtoDAsync(sv.dev, sv.at, bytes, stream_), "cuMemcpyDtoDAsync");
    } else {
      sv.dev = 0;
      sv.host.resize(bytes);
      st = check(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
      if (st.is_ok()) st = check(api_->cuMemcpyDtoH(sv.host.data(), sv.at, bytes), "cuMemcpyDtoH");
    }
    saved_.push_back(std::move(sv));
    return st;
  }
  void restore() override {
    for (const Saved& s : saved_) {
      if (s.dev) {
        api_->cuMemcpyDtoDAsync(s.at, s.dev, s.bytes, stream_);
      } else {
        api_->cuStreamSynchronize(stream_);
        api_->cuMemcpyHtoD(s.at, s.host.data(), s.host.size());
      }
    }
  }
  Status time(uint32_t repetition, const std::function<Status()>& run, double* ns) override {
    if (flush_) api_->cuMemsetD32Async(flush_, repetition, kFlushBytes / 4, stream_);
    api_->cuEventRecord(ev0_, stream_);
    Status st = run();
    api_->cuEventRecord(ev1_, stream_);
    float ms = 0;
    if (st.is_ok()) {
      st = check(api_->cuEventSynchronize(ev1_), "cuEventSynchronize");
      if (st.is_ok()) st = check(api_->cuEventElapsedTime(&ms, ev0_, ev1_), "cuEventElapsedTime");
    }
    *ns = double(ms) * 1e6;
    return st;
  }
  void finish() override { api_->cuStreamSynchronize(stream_); }

 private:
  struct Saved {
    CUdeviceptr at;
    uint64_t bytes;
    CUdeviceptr dev;   // the device copy, or 0
    std::string host;  // the host copy when there is no device copy
  };
  const Api* api_;
  CUstream stream_;
  std::vector<Saved> saved_;
  CUevent ev0_ = nullptr, ev1_ = nullptr;
  CUdeviceptr flush_ = 0;
};

}  // namespace

Status current_arch(std::string* arch) {
  const Api* a = nullptr;
  Status loaded = driver(&a);
  if (!loaded.is_ok())
    return Status(loaded.code(), loaded.message() + "; to compile without a GPU, name the architecture "
                                                    "(tri_compile_options_set_arch, e.g. \"sm_90\")");
  CUcontext ctx;
  TRI_RETURN_IF_ERROR(current_or_primary(a, &ctx));
  CUdevice dev;
  TRI_RETURN_IF_ERROR(check(a->cuCtxGetDevice(&dev), "cuCtxGetDevice"));
  int major = 0, minor = 0;
  TRI_RETURN_IF_ERROR(check(a->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                            "cuDeviceGetAttribute"));
  TRI_RETURN_IF_ERROR(check(a->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                            "cuDeviceGetAttribute"));
  *arch = "sm_" + std::to_string(major) + std::to_string(minor) + (major == 9 ? "a" : "");
  return Status::ok();
}

Status CudaRuntime::device_count(int* out) const { return cuda::device_count(out); }

Status CudaRuntime::device_info(int ordinal, target::DeviceInfo* out) const {
  const DeviceInfo* d = nullptr;
  TRI_RETURN_IF_ERROR(cuda::device_info(ordinal, &d));
  to_target(*d, out);
  return Status::ok();
}

Status CudaRuntime::driver_version(int* version, int* max_ptx) const {
  TRI_RETURN_IF_ERROR(cuda::driver_version(version));
  *max_ptx = max_ptx_for_driver(*version).number();
  return Status::ok();
}

Status CudaRuntime::current_device(target::DeviceInfo* out) const {
  const DeviceInfo* d = nullptr;
  TRI_RETURN_IF_ERROR(cuda::current_device(&d));
  to_target(*d, out);
  return Status::ok();
}

void* CudaRuntime::current_place() const {
  const Api* a = nullptr;
  CUcontext ctx = nullptr;
  if (driver(&a).is_ok()) a->cuCtxGetCurrent(&ctx);
  return ctx;
}

Status CudaRuntime::make_bench(void* stream, std::unique_ptr<target::Bench>* out) const {
  const Api* a = nullptr;
  TRI_RETURN_IF_ERROR(driver(&a));
  auto b = std::make_unique<CudaBench>(a, static_cast<CUstream>(stream));
  TRI_RETURN_IF_ERROR(b->start());
  *out = std::move(b);
  return Status::ok();
}

}  // namespace tri::cuda
