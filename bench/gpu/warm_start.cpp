// Start-up of a new process that runs one kernel on the GPU: the host program initializes CUDA
// (its own business, timed apart), then Tri does library init, the compile (a disk-cache hit
// when the cache directory holds the kernel), the module load and the first launch, which is
// waited for. Run it twice on the same cache directory: the first run compiles and stores, the
// second is the warm start. Prints one JSON object: the times in ms and the cache counters.
//
// usage: tri-bench-warm CACHE_DIR [KERNEL.tri]   (default examples/vector_add.tri under
//        TRI_SOURCE_DIR or the working directory; the kernel must be vector_add's signature)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cuda_driver.h"
#include "tri/tri.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

#define TRY(x)                                                                 \
  do {                                                                         \
    long long r_ = static_cast<long long>(x);                                  \
    if (r_ != 0) {                                                             \
      char m_[512];                                                            \
      tri_last_error_message(m_, sizeof m_);                                   \
      std::fprintf(stderr, "%s failed (%lld): %s\n", #x, r_, m_);              \
      return 1;                                                                \
    }                                                                          \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const Clock::time_point t_start = Clock::now();
  if (argc < 2) {
    std::fprintf(stderr, "usage: tri-bench-warm CACHE_DIR [KERNEL.tri]\n");
    return 2;
  }
  bench::CudaDriver cu;
  if (!bench::load_cuda(&cu)) {
    std::printf("skipped: no CUDA device\n");
    return 0;
  }
  TRY(bench::use_primary_context(cu));
  const int n = 1 << 20;
  uint64_t x = 0, y = 0, out = 0;
  TRY(cu.MemAlloc(&x, n * 4));
  TRY(cu.MemAlloc(&y, n * 4));
  TRY(cu.MemAlloc(&out, n * 4));
  const Clock::time_point t_cuda = Clock::now();

  const char* root = std::getenv("TRI_SOURCE_DIR");
  std::string path = argc > 2 ? argv[2] : std::string(root ? root : ".") + "/examples/vector_add.tri";
  const std::string text = bench::read_file(path);
  if (text.empty()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }

  const Clock::time_point t0 = Clock::now();
  tri_context_options* co = nullptr;
  tri_context* ctx = nullptr;
  TRY(tri_context_options_create(&co));
  TRY(tri_context_options_set_cache_dir(co, argv[1]));
  TRY(tri_context_create(co, TRI_VERSION_NUMBER, &ctx));
  tri_context_options_destroy(co);
  const Clock::time_point t_init = Clock::now();
  tri_module* m = nullptr;
  TRY(tri_module_create(ctx, text.data(), text.size(), "vector_add.tri", &m));
  tri_compile_options* o = nullptr;
  TRY(tri_compile_options_create(&o));
  TRY(tri_compile_options_set_target(o, "cuda"));
  // The variant a launch on these (aligned) buffers needs is compiled up front, so the launch
  // finds it: facts declared instead of classed at launch.
  TRY(tri_compile_options_set_launch_specialization(o, 0, 0));
  for (uint32_t p = 0; p < 3; ++p) TRY(tri_compile_options_set_arg_align(o, p, 16));
  tri_kernel* k = nullptr;
  TRY(tri_kernel_compile(m, "vector_add", o, &k));
  const Clock::time_point t_compile = Clock::now();
  tri_arg args[4];
  std::memset(args, 0, sizeof args);
  uint64_t bufs[3] = {x, y, out};
  for (int i = 0; i < 3; ++i) {
    args[i].kind = TRI_TYPE_POINTER;
    args[i].dtype = TRI_DTYPE_F32;
    args[i].value.p = reinterpret_cast<const void*>(static_cast<uintptr_t>(bufs[i]));
  }
  args[3].kind = TRI_TYPE_SCALAR;
  args[3].dtype = TRI_DTYPE_I32;
  args[3].value.i = n;
  TRY(tri_launch(k, (n + 1023) / 1024, 1, 1, nullptr, args, 4));
  TRY(cu.CtxSynchronize());
  const Clock::time_point t_done = Clock::now();

  uint64_t hits = 0, misses = 0, stores = 0, bytes = 0;
  tri_cache_stat(ctx, TRI_CACHE_STAT_HITS, &hits);
  tri_cache_stat(ctx, TRI_CACHE_STAT_MISSES, &misses);
  tri_cache_stat(ctx, TRI_CACHE_STAT_STORES, &stores);
  tri_cache_stat(ctx, TRI_CACHE_STAT_BYTES, &bytes);
  std::printf(
      "{\"cuda_init_ms\": %.3f, \"tri_init_ms\": %.3f, \"compile_ms\": %.3f, \"load_and_first_launch_ms\": %.3f, "
      "\"tri_total_ms\": %.3f, \"process_ms\": %.3f, \"hits\": %lld, \"misses\": %lld, \"stores\": %lld, "
      "\"cache_bytes\": %lld}\n",
      ms(t_start, t_cuda), ms(t0, t_init), ms(t_init, t_compile), ms(t_compile, t_done), ms(t0, t_done),
      ms(t_start, t_done), static_cast<long long>(hits), static_cast<long long>(misses),
      static_cast<long long>(stores), static_cast<long long>(bytes));
  tri_kernel_destroy(k);
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  tri_context_destroy(ctx);
  return 0;
}
