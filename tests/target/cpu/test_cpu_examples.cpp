// The kernels of examples/*.tri through the whole path (parse, verify, specialize with
// passes::prepare_kernel), run on the CPU backend and on the reference interpreter with the same
// inputs, and compared: integers bit for bit, floats within the rounding that a different order
// of a sum (or another exp/tanh within 4 ulp) allows. Sizes are chosen so that every kernel runs
// several programs and masked tails.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "float_ref.h"
#include "interp/interpreter.h"
#include "ir_build.h"
#include "ir/text.h"
#include "passes/pipeline.h"
#include "test_main.h"

using namespace tri_test;

namespace {

struct Buf {
  Scalar s;
  std::vector<uint8_t> bytes;
};

// A launch argument: a buffer (by index) or a scalar's bits.
struct Arg {
  int buf = -1;
  uint64_t bits = 0;
};
Arg buf(int i) { return Arg{i, 0}; }
Arg i32(int64_t v) { return Arg{-1, uint64_t(uint32_t(int32_t(v)))}; }
Arg f32(float v) { return Arg{-1, bits_f32(v)}; }

int esize(Scalar s) { return tri::ir::scalar_bits(s) / 8; }

Buf random_buf(Scalar s, size_t n, std::mt19937& rng, double lo, double hi) {
  Buf b{s, std::vector<uint8_t>(n * esize(s))};
  std::uniform_real_distribution<double> u(lo, hi);
  for (size_t i = 0; i < n; ++i) {
    double x = u(rng);
    uint64_t bits;
    if (s == Scalar::F32) bits = bits_f32(float(x));
    else if (s == Scalar::F16) bits = ref_encode(Scalar::F16, x);
    else bits = uint64_t(uint32_t(int32_t(std::floor(x))));
    std::memcpy(&b.bytes[i * esize(s)], &bits, esize(s));
  }
  return b;
}

Buf zeros(Scalar s, size_t n) { return Buf{s, std::vector<uint8_t>(n * esize(s), 0)}; }

double value(const Buf& b, size_t i) {
  uint64_t bits = 0;
  std::memcpy(&bits, &b.bytes[i * esize(b.s)], esize(b.s));
  if (b.s == Scalar::F32) return f32_bits(uint32_t(bits));
  if (b.s == Scalar::F16) return double(ref_decode(Scalar::F16, uint32_t(bits)));
  return double(int32_t(uint32_t(bits)));
}

void run_both(const char* example, const char* kernel, std::vector<std::pair<std::string, Attr>> constexprs,
              tri::Grid grid, std::vector<Buf> bufs, const std::vector<Arg>& args, double ftol) {
  std::string text = read_file(source_path(std::string("examples/") + example + ".tri"));
  if (text.empty()) fail_msg("cannot read examples/%s.tri", example);
  std::unique_ptr<tri::ir::Module> m;
  tri::Status st = tri::ir::parse_text(text, std::string(example) + ".tri", &m);
  if (st.is_ok()) st = tri::ir::verify(*m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  std::vector<tri::passes::ConstexprBinding> bind;
  for (auto& [k, v] : constexprs) bind.push_back({k, v});
  std::unique_ptr<tri::ir::Module> spec;
  st = tri::passes::prepare_kernel(*m, kernel, bind, {}, tri::passes::PipelineOptions{}, &spec);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  const tri::ir::Function& kf = *spec->find(kernel);

  auto launch_args = [&](std::vector<Buf>& bs) {
    std::vector<tri::ArgValue> av;
    for (const Arg& a : args)
      av.push_back(a.buf >= 0 ? tri::ArgValue{reinterpret_cast<uint64_t>(bs[a.buf].bytes.data()), bs[a.buf].bytes.size()}
                              : tri::ArgValue{a.bits, 0});
    return av;
  };
  std::vector<Buf> ref = bufs, got = bufs;
  std::vector<tri::ArgValue> ra = launch_args(ref), ga = launch_args(got);
  tri::interp::Options io;
  st = tri::interp::run(*spec, kf, grid, ra.data(), ra.size(), io);
  if (!st.is_ok()) fail_msg("interpreter: %s", st.message().c_str());
  std::unique_ptr<tri::cpu::CpuKernel> k;
  st = tri::cpu::compile_cpu(*spec, kf, tri::cpu::CpuCompileOptions{}, &k);
  if (!st.is_ok()) fail_msg("cpu compile: %s", st.message().c_str());
  tri::ThreadPool pool(3);
  st = k->run(grid, ga.data(), ga.size(), &pool, {});
  if (!st.is_ok()) fail_msg("cpu run: %s", st.message().c_str());
  int bad = 0;
  for (size_t bi = 0; bi < bufs.size(); ++bi) {
    const Buf& r = ref[bi];
    const Buf& g = got[bi];
    size_t n = r.bytes.size() / esize(r.s);
    for (size_t i = 0; i < n; ++i) {
      double x = value(r, i), y = value(g, i);
      bool ok;
      if (tri::ir::is_int(r.s)) ok = x == y;
      else if (std::isnan(x) || std::isnan(y)) ok = std::isnan(x) && std::isnan(y);
      else ok = std::fabs(x - y) <= ftol * std::max(1.0, std::max(std::fabs(x), std::fabs(y)));
      if (!ok && bad++ < 8)
        std::fprintf(stderr, "%s: buffer %zu element %zu: cpu %.9g, interpreter %.9g\n", example, bi, i, y, x);
    }
  }
  if (bad) fail_msg("%s: %d elements differ", example, bad);
}

}  // namespace

static void vector_add(void** state) {
  std::mt19937 rng(1);
  const int n = 5000;
  run_both("vector_add", "vector_add", {{"BLOCK", Attr::of_int(256)}}, tri::Grid{(n + 255) / 256, 1, 1},
           {random_buf(Scalar::F32, n, rng, -10, 10), random_buf(Scalar::F32, n, rng, -10, 10), zeros(Scalar::F32, n)},
           {buf(0), buf(1), buf(2), i32(n)}, 0.0);
}

static void softmax_and_cumsum(void** state) {
  std::mt19937 rng(2);
  const int rows = 37, cols = 300, stride = 301;
  for (const char* ex : {"softmax", "cumsum"}) {
    run_both(ex, ex, {{"BLOCK", Attr::of_int(512)}}, tri::Grid{rows, 1, 1},
             {zeros(Scalar::F32, rows * stride), random_buf(Scalar::F32, rows * stride, rng, -8, 8)},
             {buf(0), buf(1), i32(stride), i32(stride), i32(cols)}, 1e-5);
  }
}

static void argmax_and_gelu(void** state) {
  std::mt19937 rng(3);
  const int rows = 20, cols = 700, stride = 703;
  Buf in = random_buf(Scalar::F32, rows * stride, rng, -100, 100);
  std::memcpy(&in.bytes[4 * 5], &in.bytes[4 * 90], 4);  // a tie in row 0
  run_both("argmax", "argmax", {{"BLOCK", Attr::of_int(256)}}, tri::Grid{rows, 1, 1}, {in, zeros(Scalar::I32, rows)},
           {buf(0), buf(1), i32(stride), i32(cols)}, 0.0);
  const int n = 3000;
  run_both("gelu", "gelu", {{"BLOCK", Attr::of_int(512)}}, tri::Grid{(n + 511) / 512, 1, 1},
           {random_buf(Scalar::F32, n, rng, -6, 6), zeros(Scalar::F32, n)}, {buf(0), buf(1), i32(n)}, 1e-6);
}

static void histogram(void** state) {
  std::mt19937 rng(4);
  const int n = 20000;
  run_both("histogram", "histogram", {{"BLOCK", Attr::of_int(512)}, {"NUM_BINS", Attr::of_int(100)}},
           tri::Grid{(n + 511) / 512, 1, 1}, {random_buf(Scalar::I32, n, rng, -10, 120), zeros(Scalar::I32, 100)},
           {buf(0), buf(1), i32(n)}, 0.0);
}

static void layernorm(void** state) {
  std::mt19937 rng(5);
  const int rows = 9, n = 333, stride = 340;
  run_both("layernorm", "layernorm", {{"BLOCK", Attr::of_int(128)}}, tri::Grid{rows, 1, 1},
           {random_buf(Scalar::F16, rows * stride, rng, -3, 3), zeros(Scalar::F16, rows * stride),
            random_buf(Scalar::F16, n, rng, 0.5, 1.5), random_buf(Scalar::F16, n, rng, -1, 1), zeros(Scalar::F32, rows),
            zeros(Scalar::F32, rows)},
           {buf(0), buf(1), buf(2), buf(3), buf(4), buf(5), i32(stride), i32(n), f32(1e-5f)}, 4e-3);
}

static void matmul_leaky_relu(void** state) {
  std::mt19937 rng(6);
  const int M = 100, N = 72, K = 56;
  run_both("matmul_leaky_relu", "matmul_leaky_relu",
           {{"BM", Attr::of_int(32)}, {"BN", Attr::of_int(32)}, {"BK", Attr::of_int(16)}, {"GROUP_M", Attr::of_int(2)},
            {"ALPHA", Attr::of_float(0.01)}},
           tri::Grid{((M + 31) / 32) * ((N + 31) / 32), 1, 1},
           {random_buf(Scalar::F16, M * K, rng, -2, 2), random_buf(Scalar::F16, K * N, rng, -2, 2), zeros(Scalar::F16, M * N)},
           {buf(0), buf(1), buf(2), i32(M), i32(N), i32(K), i32(K), i32(1), i32(N), i32(1), i32(N), i32(1)}, 0.0);
}

static void flash_attention(void** state) {
  std::mt19937 rng(7);
  const int Z = 2, H = 2, S = 70, D = 32;
  for (bool causal : {false, true}) {
    size_t n = size_t(Z) * H * S * D;
    run_both("flash_attention", "flash_attention",
             {{"BLOCK_M", Attr::of_int(32)}, {"BLOCK_N", Attr::of_int(16)}, {"HEAD_DIM", Attr::of_int(D)},
              {"CAUSAL", Attr::of_bool(causal)}},
             tri::Grid{(S + 31) / 32, Z * H, 1},
             {random_buf(Scalar::F16, n, rng, -1, 1), random_buf(Scalar::F16, n, rng, -1, 1),
              random_buf(Scalar::F16, n, rng, -1, 1), zeros(Scalar::F16, n)},
             {buf(0), buf(1), buf(2), buf(3), f32(1.0f / std::sqrt(float(D))), i32(H * S * D), i32(S * D), i32(D), i32(1),
              i32(H), i32(S)},
             4e-3);
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(vector_add), cmocka_unit_test(softmax_and_cumsum), cmocka_unit_test(argmax_and_gelu),
      cmocka_unit_test(histogram),  cmocka_unit_test(layernorm),          cmocka_unit_test(matmul_leaky_relu),
      cmocka_unit_test(flash_attention),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
