// Benchmarks of the CPU backend against plain C on the same machine, in one process:
//  - vector add of 2^24 f32 (3 arrays counted) vs memcpy bandwidth (2 arrays counted), memcpy
//    measured both on one thread and split over the same thread pool the kernel runs on;
//  - a fused row softmax (one program per row) vs a naive unfused C loop (max, exp, sum and
//    divide as four passes over the matrix, the way separate kernels would run);
//  - compile time of a small kernel (lowering + O3 + machine code, median of several).
// Every result is checked against the C computation before it is timed. `--quick` runs small
// sizes (the CTest registration); without it, the full sizes print a table. `--threads N` sizes
// the pool (default: the hardware's threads).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ir_build.h"

using namespace tri_test;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename F>
double median_time(int reps, F&& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    double t0 = now_s();
    f();
    t.push_back(now_s() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void build_vadd(Mod& md, int64_t block) {
  Fn f(&md.m, "vadd", true);
  ValueId x = f.param(md.p(Scalar::F32), "x", 16);
  ValueId y = f.param(md.p(Scalar::F32), "y", 16);
  ValueId out = f.param(md.p(Scalar::F32), "out", 16);
  ValueId n = f.param(md.s(Scalar::I32), "n");
  auto [xp, mask] = f.block_ptr(x, block, n);
  auto yp = f.block_ptr(y, block, n).first;
  auto op = f.block_ptr(out, block, n).first;
  f.store(op, f.bin(Opcode::Add, f.load(xp, mask), f.load(yp, mask)), mask);
  f.ret();
}

// One program per row: y = exp(x - max(x)) / sum(exp(x - max(x))), BLOCK >= n_cols.
void build_softmax(Mod& md, int64_t block) {
  Fn f(&md.m, "softmax", true);
  ValueId in = f.param(md.p(Scalar::F32), "in", 16);
  ValueId out = f.param(md.p(Scalar::F32), "out", 16);
  ValueId ncols = f.param(md.s(Scalar::I32), "n_cols");
  ValueId stride = f.param(md.s(Scalar::I32), "stride");
  TypeId f32 = md.s(Scalar::F32);
  TypeId bf = md.blk({block}, Scalar::F32), bi = md.blk({block}, Scalar::I32);
  TypeId bp = md.blk({block}, md.p(Scalar::F32));
  ValueId row = f.bin(Opcode::Mul, f.pid(), stride);
  ValueId offs = f.arange(block);
  ValueId mask = f.cmp("slt", offs, f.splat(ncols, bi));
  ValueId ioffs = f.bin(Opcode::Add, f.splat(row, bi), offs);
  ValueId x = f.load(f.addptr(f.splat(in, bp), ioffs), mask, f.splat(f.cfloat(f32, -INFINITY), bf));
  ValueId m = f.op1(Opcode::Reduce, {x}, f32,
                    attrs(Opcode::Reduce, {{"axis", Attr::of_int(0)}, {"kind", enum_attr(Opcode::Reduce, "kind", "max")}}));
  ValueId e = f.un(Opcode::Exp, f.bin(Opcode::Sub, x, f.splat(m, bf)));
  ValueId s = f.op1(Opcode::Reduce, {e}, f32,
                    attrs(Opcode::Reduce, {{"axis", Attr::of_int(0)}, {"kind", enum_attr(Opcode::Reduce, "kind", "sum")}}));
  ValueId y = f.bin(Opcode::FDiv, e, f.splat(s, bf));
  f.store(f.addptr(f.splat(out, bp), ioffs), y, mask);
  f.ret();
}

// The unfused reference: four passes, as four separate kernels would make them.
void softmax_ref(const float* in, float* out, int rows, int cols, std::vector<float>& tmp) {
  tmp.resize(rows);
  for (int r = 0; r < rows; ++r) {
    float m = -INFINITY;
    for (int c = 0; c < cols; ++c) m = std::max(m, in[size_t(r) * cols + c]);
    tmp[r] = m;
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[size_t(r) * cols + c] = std::exp(in[size_t(r) * cols + c] - tmp[r]);
  for (int r = 0; r < rows; ++r) {
    float s = 0;
    for (int c = 0; c < cols; ++c) s += out[size_t(r) * cols + c];
    tmp[r] = s;
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[size_t(r) * cols + c] /= tmp[r];
}

int fails = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++fails;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  unsigned threads = 0;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--threads") == 0) threads = unsigned(std::atoi(argv[i + 1]));
  tri::ThreadPool pool(threads);
  std::printf("cpu bench: %u pool threads%s\n", pool.size(), quick ? " (quick)" : "");
  const int reps = quick ? 3 : 15;

  // ---- compile time of a small kernel
  {
    std::vector<double> ms;
    for (int i = 0; i < (quick ? 2 : 7); ++i) {
      Mod md;
      build_vadd(md, 1024);
      auto k = compile_or_die(md.m, "vadd");
      check(k != nullptr, "vadd compiles");
      if (!k) return 1;
      ms.push_back(k->compile_ms());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("compile vadd (BLOCK=1024): median %.1f ms (min %.1f, first %s)\n", ms[ms.size() / 2], ms[0],
                "included");
    Mod md;
    build_softmax(md, 1024);
    auto k = compile_or_die(md.m, "softmax");
    check(k != nullptr, "softmax compiles");
    if (k) std::printf("compile softmax (BLOCK=1024): %.1f ms\n", k->compile_ms());
  }

  // ---- vector add vs memcpy
  {
    const int64_t n = quick ? (1 << 18) : (1 << 24);
    std::vector<float> x(n), y(n), out(n), dst(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = float(i % 1000) * 0.25f;
      y[i] = float(i % 7) - 3.0f;
    }
    Mod md;
    build_vadd(md, 1024);
    auto k = compile_or_die(md.m, "vadd");
    if (!k) return 1;
    tri::ArgValue args[] = {ptr_arg(x.data()), ptr_arg(y.data()), ptr_arg(out.data()), int_arg(n)};
    tri::Grid g{uint32_t((n + 1023) / 1024), 1, 1};
    check(k->run(g, args, 4, &pool, {}).is_ok(), "vadd runs");
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) ok &= out[i] == x[i] + y[i];
    check(ok, "vadd result");
    double t_add = median_time(reps, [&] { k->run(g, args, 4, &pool, {}); });
    // No pool: the instances run on this thread alone (the kernel's frame is small).
    double t_add1 = median_time(reps, [&] { k->run(g, args, 4, nullptr, {}); });
    double t_cpy1 = median_time(reps, [&] { std::memcpy(dst.data(), x.data(), n * 4); });
    const uint64_t parts = pool.size() * 4;
    double t_cpyp = median_time(reps, [&] {
      pool.run(parts, [&](uint64_t p) {
        int64_t b = n * p / parts, e = n * (p + 1) / parts;
        std::memcpy(dst.data() + b, x.data() + b, (e - b) * 4);
      });
    });
    double gb_add = 3.0 * n * 4 / t_add / 1e9;
    double gb_cpy1 = 2.0 * n * 4 / t_cpy1 / 1e9;
    double gb_cpyp = 2.0 * n * 4 / t_cpyp / 1e9;
    std::printf("vector add f32 n=%lld: %.2f ms, %.1f GB/s (3 arrays)\n", (long long)n, t_add * 1e3, gb_add);
    std::printf("memcpy 1 thread:        %.2f ms, %.1f GB/s (2 arrays)\n", t_cpy1 * 1e3, gb_cpy1);
    std::printf("memcpy on the pool:     %.2f ms, %.1f GB/s (2 arrays)\n", t_cpyp * 1e3, gb_cpyp);
    double gb_add1 = 3.0 * n * 4 / t_add1 / 1e9;
    std::printf("vector add on 1 thread: %.2f ms, %.1f GB/s (3 arrays)\n", t_add1 * 1e3, gb_add1);
    std::printf("vector add / memcpy bandwidth: %.2fx on the pool, %.2fx on 1 thread\n", gb_add / gb_cpyp,
                gb_add1 / gb_cpy1);
  }

  // ---- softmax
  for (int cols : quick ? std::vector<int>{100} : std::vector<int>{256, 1000, 1024, 4096}) {
    const int rows = quick ? 64 : (1 << 24) / cols / 4 * 4;
    int64_t block = 1;
    while (block < cols) block *= 2;
    std::vector<float> in(size_t(rows) * cols), out(in.size()), ref(in.size()), tmp;
    std::mt19937 rng(42);
    std::normal_distribution<float> dist(0.0f, 3.0f);
    for (float& v : in) v = dist(rng);
    Mod md;
    build_softmax(md, block);
    auto k = compile_or_die(md.m, "softmax");
    if (!k) return 1;
    tri::ArgValue args[] = {ptr_arg(in.data()), ptr_arg(out.data()), int_arg(cols), int_arg(cols)};
    tri::Grid g{uint32_t(rows), 1, 1};
    check(k->run(g, args, 4, &pool, {}).is_ok(), "softmax runs");
    softmax_ref(in.data(), ref.data(), rows, cols, tmp);
    double worst = 0;
    for (size_t i = 0; i < in.size(); ++i) worst = std::max(worst, double(std::fabs(out[i] - ref[i]) / (ref[i] + 1e-30f)));
    check(worst < 1e-4, "softmax result");  // the order of the sum is free
    double t_k = median_time(reps, [&] { k->run(g, args, 4, &pool, {}); });
    double t_k1 = median_time(reps, [&] { k->run(g, args, 4, nullptr, {}); });
    double t_c = median_time(reps, [&] { softmax_ref(in.data(), ref.data(), rows, cols, tmp); });
    double gb = 2.0 * in.size() * 4 / t_k / 1e9;
    std::printf("softmax %d x %d: tri %.2f ms (%.1f GB/s) on the pool, %.2f ms on 1 thread; naive C %.2f ms (1 thread): "
                "%.2fx (1 thread vs 1 thread); max rel err %.1e\n",
                rows, cols, t_k * 1e3, gb, t_k1 * 1e3, t_c * 1e3, t_c / t_k1, worst);
  }
  return fails ? 1 : 0;
}
