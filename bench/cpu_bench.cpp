// CPU benchmarks: Tri's CPU backend against memcpy and plain C on the same machine, same run.
//
//  vector add, 2^24 f32 (3 arrays counted)     vs memcpy of 2^24 f32 (2 arrays counted)
//  row softmax, 4096 x 1024 f32, fused in Tri  vs an unfused C reference (one pass per step,
//                                                 intermediates in memory, as eager frameworks do)
//                                                 and a fused single-threaded C loop
//  matmul f32 512^3                            reported in GFLOP/s (bench/run_cpu.sh adds the
//                                                 machine's peak estimate)
// Every Tri result is checked against the C reference before it is timed.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tri/tri.h"

namespace {

[[noreturn]] void die(const char* what, tri_result r) {
  char msg[4096];
  tri_last_error_message(msg, sizeof msg);
  std::fprintf(stderr, "%s: %s: %s\n", what, tri_result_name(r), msg);
  std::exit(1);
}

void check(tri_result r, const char* what) {
  if (r != TRI_OK) die(what, r);
}

tri_context* context() {
  static tri_context* ctx = [] {
    tri_context* c = nullptr;
    check(tri_context_create(nullptr, TRI_VERSION_NUMBER, &c), "tri_context_create");
    return c;
  }();
  return ctx;
}

// Loads a kernel file from the source tree and compiles `kernel` for the CPU with constexprs.
tri_kernel* compile(const char* rel_path, const char* kernel, std::vector<std::pair<const char*, int64_t>> consts) {
  std::string path = std::string(TRI_SOURCE_DIR) + "/" + rel_path;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.empty()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  tri_module* m = nullptr;
  check(tri_module_create(context(), text.data(), text.size(), rel_path, &m), "tri_module_create");
  tri_compile_options* o = nullptr;
  check(tri_compile_options_create(&o), "tri_compile_options_create");
  check(tri_compile_options_set_target(o, "cpu"), "set_target");
  for (auto& [name, v] : consts) check(tri_compile_options_set_constexpr_int(o, name, v), "set_constexpr");
  tri_kernel* k = nullptr;
  check(tri_kernel_compile(m, kernel, o, &k), "tri_kernel_compile");
  tri_compile_options_destroy(o);
  tri_module_destroy(m);  // the kernel keeps it alive
  return k;
}

tri_arg ptr(const void* p, size_t bytes, int32_t dtype) {
  tri_arg a{};
  a.value.p = p;
  a.extent = bytes;
  a.kind = TRI_TYPE_POINTER;
  a.dtype = dtype;
  return a;
}

tri_arg i32(int64_t v) {
  tri_arg a{};
  a.value.i = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  return a;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// ---- vector add

constexpr size_t kVecN = size_t(1) << 24;

void BM_memcpy(benchmark::State& state) {
  std::vector<float> src = random_floats(kVecN, 1), dst(kVecN);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kVecN * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 2 * kVecN * sizeof(float));
}

void BM_vector_add_c(benchmark::State& state) {
  std::vector<float> x = random_floats(kVecN, 1), y = random_floats(kVecN, 2), out(kVecN);
  for (auto _ : state) {
    for (size_t i = 0; i < kVecN; ++i) out[i] = x[i] + y[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 3 * kVecN * sizeof(float));
}

void BM_vector_add_tri(benchmark::State& state) {
  const int64_t block = state.range(0);
  tri_kernel* k = compile("examples/vector_add.tri", "vector_add", {{"BLOCK", block}});
  std::vector<float> x = random_floats(kVecN, 1), y = random_floats(kVecN, 2), out(kVecN);
  tri_arg args[] = {ptr(x.data(), kVecN * 4, TRI_DTYPE_F32), ptr(y.data(), kVecN * 4, TRI_DTYPE_F32),
                    ptr(out.data(), kVecN * 4, TRI_DTYPE_F32), i32(kVecN)};
  uint32_t grid = static_cast<uint32_t>((kVecN + block - 1) / block);
  check(tri_launch(k, grid, 1, 1, nullptr, args, 4), "tri_launch");
  for (size_t i = 0; i < kVecN; ++i)
    if (out[i] != x[i] + y[i]) {
      std::fprintf(stderr, "vector_add: wrong result at %zu\n", i);
      std::exit(1);
    }
  for (auto _ : state) check(tri_launch(k, grid, 1, 1, nullptr, args, 4), "tri_launch");
  state.SetBytesProcessed(int64_t(state.iterations()) * 3 * kVecN * sizeof(float));
  tri_kernel_destroy(k);
}

// ---- softmax

constexpr int kRows = 4096, kCols = 1024;

void softmax_unfused(const float* x, float* out, float* tmp, float* rowv, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {  // row max
    float m = -INFINITY;
    for (int c = 0; c < cols; ++c) m = std::fmax(m, x[size_t(r) * cols + c]);
    rowv[r] = m;
  }
  for (int r = 0; r < rows; ++r)  // x - max, written out
    for (int c = 0; c < cols; ++c) tmp[size_t(r) * cols + c] = x[size_t(r) * cols + c] - rowv[r];
  for (size_t i = 0; i < size_t(rows) * cols; ++i) tmp[i] = std::exp(tmp[i]);  // exp, written out
  for (int r = 0; r < rows; ++r) {  // row sum
    float s = 0;
    for (int c = 0; c < cols; ++c) s += tmp[size_t(r) * cols + c];
    rowv[r] = s;
  }
  for (int r = 0; r < rows; ++r)  // divide
    for (int c = 0; c < cols; ++c) out[size_t(r) * cols + c] = tmp[size_t(r) * cols + c] / rowv[r];
}

void softmax_fused_c(const float* x, float* out, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * cols;
    float* o = out + size_t(r) * cols;
    float m = -INFINITY;
    for (int c = 0; c < cols; ++c) m = std::fmax(m, xr[c]);
    float s = 0;
    for (int c = 0; c < cols; ++c) s += (o[c] = std::exp(xr[c] - m));
    for (int c = 0; c < cols; ++c) o[c] /= s;
  }
}

void BM_softmax_c_unfused(benchmark::State& state) {
  std::vector<float> x = random_floats(size_t(kRows) * kCols, 3), out(x.size()), tmp(x.size()), rowv(kRows);
  for (auto _ : state) {
    softmax_unfused(x.data(), out.data(), tmp.data(), rowv.data(), kRows, kCols);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 2 * x.size() * sizeof(float));
}

void BM_softmax_c_fused(benchmark::State& state) {
  std::vector<float> x = random_floats(size_t(kRows) * kCols, 3), out(x.size());
  for (auto _ : state) {
    softmax_fused_c(x.data(), out.data(), kRows, kCols);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 2 * x.size() * sizeof(float));
}

void BM_softmax_tri(benchmark::State& state) {
  tri_kernel* k = compile("examples/softmax.tri", "softmax", {{"BLOCK", kCols}});
  std::vector<float> x = random_floats(size_t(kRows) * kCols, 3), out(x.size()), ref(x.size());
  size_t bytes = x.size() * 4;
  tri_arg args[] = {ptr(out.data(), bytes, TRI_DTYPE_F32), ptr(x.data(), bytes, TRI_DTYPE_F32), i32(kCols), i32(kCols),
                    i32(kCols)};
  check(tri_launch(k, kRows, 1, 1, nullptr, args, 5), "tri_launch");
  softmax_fused_c(x.data(), ref.data(), kRows, kCols);
  for (size_t i = 0; i < x.size(); ++i)
    if (std::fabs(out[i] - ref[i]) > 1e-6f + 1e-4f * std::fabs(ref[i])) {
      std::fprintf(stderr, "softmax: wrong result at %zu: %g vs %g\n", i, out[i], ref[i]);
      std::exit(1);
    }
  for (auto _ : state) check(tri_launch(k, kRows, 1, 1, nullptr, args, 5), "tri_launch");
  state.SetBytesProcessed(int64_t(state.iterations()) * 2 * bytes);
  tri_kernel_destroy(k);
}

// ---- matmul

constexpr int kMM = 512;

void BM_matmul_f32_tri(benchmark::State& state) {
  const int64_t bm = state.range(0), bn = state.range(1), bk = state.range(2);
  tri_kernel* k = compile("bench/kernels/matmul_f32.tri", "matmul_f32", {{"BM", bm}, {"BN", bn}, {"BK", bk}});
  const int n = kMM;
  std::vector<float> a = random_floats(size_t(n) * n, 4), b = random_floats(size_t(n) * n, 5), c(size_t(n) * n);
  size_t bytes = a.size() * 4;
  tri_arg args[] = {ptr(a.data(), bytes, TRI_DTYPE_F32), ptr(b.data(), bytes, TRI_DTYPE_F32),
                    ptr(c.data(), bytes, TRI_DTYPE_F32), i32(n), i32(n), i32(n), i32(n), i32(1), i32(n), i32(1),
                    i32(n), i32(1)};
  uint32_t grid = static_cast<uint32_t>(((n + bm - 1) / bm) * ((n + bn - 1) / bn));
  check(tri_launch(k, grid, 1, 1, nullptr, args, 12), "tri_launch");
  for (int t = 0; t < 64; ++t) {  // spot checks against a double-precision dot product
    int i = (t * 37) % n, j = (t * 101) % n;
    double s = 0;
    for (int q = 0; q < n; ++q) s += double(a[size_t(i) * n + q]) * b[size_t(q) * n + j];
    if (std::fabs(c[size_t(i) * n + j] - s) > 1e-3 * (1 + std::fabs(s))) {
      std::fprintf(stderr, "matmul: wrong result at (%d, %d): %g vs %g\n", i, j, c[size_t(i) * n + j], s);
      std::exit(1);
    }
  }
  for (auto _ : state) check(tri_launch(k, grid, 1, 1, nullptr, args, 12), "tri_launch");
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  tri_kernel_destroy(k);
}

}  // namespace

BENCHMARK(BM_memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_vector_add_c)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_vector_add_tri)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_softmax_c_unfused)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_softmax_c_fused)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_softmax_tri)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_matmul_f32_tri)->Args({32, 32, 32})->Args({64, 64, 32})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
