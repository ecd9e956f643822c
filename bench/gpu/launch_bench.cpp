// Host cost of one launch on the GPU: a raw cuLaunchKernel of the kernel's own PTX (the floor),
// tri_launch, and a prepared launch (tri_launch_plan_launch), for a kernel of 4 arguments
// (examples/vector_add.tri) and one of 19. Each method enqueues batches of 1000 launches timed
// with a steady clock (the GPU drains between batches, untimed), the methods taking turns; the
// median over 41 rounds is reported per launch. Prints one JSON object (rows as PERF.md describes) on stdout.
//
// usage: tri-bench-launch   (TRI_SOURCE_DIR: the source tree; default the working directory)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "tri/tri.h"

namespace {

bench::CudaDriver cu;

void die(const char* what) {
  char msg[4096] = {0};
  tri_last_error_message(msg, sizeof msg);
  std::fprintf(stderr, "launch bench: %s failed: %s\n", what, msg);
  std::exit(1);
}

#define TRY(call) \
  if ((call) != 0) die(#call)

// The methods take turns: each round times one batch of each, so drift of the machine (clocks,
// neighbours on the VM) reaches every method alike; the median round is reported per method.
std::vector<double> per_launch_us(const std::vector<std::function<void()>>& methods) {
  for (const auto& launch : methods)
    for (int i = 0; i < 1000; ++i) launch();
  cu.CtxSynchronize();
  std::vector<std::vector<double>> t(methods.size());
  for (int round = 0; round < 41; ++round) {
    for (size_t m = 0; m < methods.size(); ++m) {
      const auto& launch = methods[m];
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 1000; ++i) launch();
      auto t1 = std::chrono::steady_clock::now();
      cu.CtxSynchronize();
      t[m].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 1000.0);
    }
  }
  std::vector<double> med;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2]);
  }
  return med;
}

std::string kernel19() {
  std::string s = "kernel @k19(%out: ptr<f32>";
  for (int i = 1; i < 19; ++i) s += ", %a" + std::to_string(i) + ": i32";
  s += ") {\n  %pid = program_id[axis=0] : i32\n  %v = sitofp %a1 : f32\n  %p = addptr %out, %pid : ptr<f32>\n"
       "  store %p, %v\n  return\n}\n";
  return s;
}

struct Case {
  tri_kernel* k;
  std::vector<tri_arg> args;
  std::vector<uint64_t> raw_bits;
};

}  // namespace

int main() {
  if (!bench::load_cuda(&cu)) {
    std::printf("skipped: no CUDA device\n");
    return 0;
  }
  TRY(bench::use_primary_context(cu));

  const char* root = std::getenv("TRI_SOURCE_DIR");
  std::string va = bench::read_file(std::string(root ? root : ".") + "/examples/vector_add.tri");
  std::string k19 = kernel19();
  tri_context* tctx = nullptr;
  TRY(tri_context_create(nullptr, TRI_VERSION_NUMBER, &tctx));
  tri_compile_options* o = nullptr;
  TRY(tri_compile_options_create(&o));
  TRY(tri_compile_options_set_target(o, "cuda"));
  TRY(tri_compile_options_set_constexpr_int(o, "BLOCK", 256));

  uint64_t buf = 0;
  TRY(cu.MemAlloc(&buf, 1 << 20));
  auto ptr_arg = [&](uint64_t p) {
    tri_arg a;
    std::memset(&a, 0, sizeof a);
    a.kind = TRI_TYPE_POINTER;
    a.dtype = TRI_DTYPE_F32;
    a.value.p = reinterpret_cast<const void*>(static_cast<uintptr_t>(p));
    return a;
  };
  auto i32_arg = [&](int64_t v) {
    tri_arg a;
    std::memset(&a, 0, sizeof a);
    a.kind = TRI_TYPE_SCALAR;
    a.dtype = TRI_DTYPE_I32;
    a.value.i = v;
    return a;
  };

  std::string rows;
  for (int which = 0; which < 2; ++which) {
    const std::string& text = which == 0 ? va : k19;
    const char* name = which == 0 ? "vector_add" : "k19";
    tri_module* m = nullptr;
    TRY(tri_module_create(tctx, text.data(), text.size(), name, &m));
    tri_kernel* k = nullptr;
    tri_compile_options* plain = nullptr;
    TRY(tri_compile_options_create(&plain));
    TRY(tri_compile_options_set_target(plain, "cuda"));
    TRY(tri_kernel_compile(m, name, which == 0 ? o : plain, &k));
    tri_compile_options_destroy(plain);
    std::vector<tri_arg> args;
    std::vector<uint64_t> bits;
    if (which == 0) {
      args = {ptr_arg(buf), ptr_arg(buf + 4096), ptr_arg(buf + 8192), i32_arg(256)};
      bits = {buf, buf + 4096, buf + 8192, 256};
    } else {
      args.push_back(ptr_arg(buf));
      bits.push_back(buf);
      for (int i = 1; i < 19; ++i) {
        args.push_back(i32_arg(i));
        bits.push_back(static_cast<uint64_t>(i));
      }
    }
    const uint32_t n = static_cast<uint32_t>(args.size());
    // The floor: the same PTX, loaded and launched by hand (the variant tri_launch picks is
    // specialized on these arguments; the raw launch uses the generic PTX, same instructions
    // count class for a one-program kernel).
    TRY(tri_launch(k, 1, 1, 1, nullptr, args.data(), n));
    tri_blob* ptx = nullptr;
    TRY(tri_kernel_code(k, "ptx", &ptx));
    std::string p(static_cast<const char*>(tri_blob_data(ptx)), tri_blob_size(ptx));
    void* mod = nullptr;
    void* fn = nullptr;
    TRY(cu.ModuleLoadData(&mod, p.c_str()));
    TRY(cu.ModuleGetFunction(&fn, mod, name));
    std::vector<void*> params;
    for (uint64_t& b : bits) params.push_back(&b);
    tri_launch_plan* plan = nullptr;
    TRY(tri_launch_plan_create(k, 1, 1, 1, nullptr, args.data(), n, &plan));
    std::vector<double> med = per_launch_us({
        [&] { cu.LaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, nullptr, params.data(), nullptr); },
        [&] { tri_launch(k, 1, 1, 1, nullptr, args.data(), n); },
        [&] { tri_launch_plan_launch(plan); },
    });
    const double raw = med[0], tri = med[1], prepared = med[2];
    tri_launch_plan_destroy(plan);
    char row[512];
    std::snprintf(row, sizeof row,
                  "%s{\"workload\": \"launch %u args\", \"unit\": \"us\", \"higher_is_better\": false, \"tri\": %.3f, "
                  "\"raw\": %.3f, \"target\": %.3f},\n {\"workload\": \"prepared launch %u args\", \"unit\": \"us\", "
                  "\"higher_is_better\": false, \"tri\": %.3f, \"raw\": %.3f, \"target\": %.3f}",
                  rows.empty() ? "" : ",\n ", n, tri, raw, raw * 1.1, n, prepared, raw, raw + 0.3);
    rows += row;
    std::fprintf(stderr, "%u args: raw %.3f us, tri_launch %.3f us (%.2fx), prepared %.3f us (raw + %.3f)\n", n, raw,
                 tri, tri / raw, prepared, prepared - raw);
    tri_blob_destroy(ptx);
    tri_kernel_destroy(k);
    tri_module_destroy(m);
  }
  std::printf("{\"rows\": [\n %s]}\n", rows.c_str());
  tri_compile_options_destroy(o);
  tri_context_destroy(tctx);
  return 0;
}
