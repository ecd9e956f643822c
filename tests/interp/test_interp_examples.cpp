// The kernels of examples/*.tri, parsed from text, verified and run by the interpreter in
// checked mode (every launch argument with its extent), against C references written here. They
// are real kernels (masked tails, loops over chunks, reductions with combine regions, atomics,
// tiled matmul, online-softmax attention), so they also show that checked mode stays quiet on
// correct code. Each is specialized by the real pipeline (passes/pipeline.h) with small constexpr
// values, so that loops and tails run several times.
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/text.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "kernel_builder.h"
#include "test_main.h"

using namespace tri_test;

namespace {

// examples/NAME.tri, verified, then its kernel @NAME specialized with these constexpr values
// ("64" an integer, "0.01" a float, "true"/"false" a boolean) and canonicalized.
std::unique_ptr<Module> load_example(const std::string& name, const std::map<std::string, std::string>& values) {
  const std::string path = source_path("examples/" + name + ".tri");
  std::string text = read_file(path);
  if (text.empty()) fail_msg("cannot read %s", path.c_str());
  std::unique_ptr<Module> m;
  Status st = tri::ir::parse_text(text, name + ".tri", &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  st = tri::ir::verify(*m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  std::vector<tri::passes::ConstexprBinding> bindings;
  for (const auto& [k, v] : values) {
    Attr a = v == "true" || v == "false" ? Attr::of_bool(v == "true")
             : v.find('.') != std::string::npos ? Attr::of_float(std::stod(v))
                                                 : Attr::of_int(std::stoll(v));
    bindings.push_back({k, a});
  }
  std::unique_ptr<Module> spec;
  st = tri::passes::prepare_kernel(*m, name, bindings, {}, {}, &spec);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return spec;
}

Status launch(const Module& m, const std::string& kernel, Grid g, const std::vector<ArgValue>& args) {
  tri::interp::Options o;
  o.checked = true;
  return tri::interp::run(m, *m.find(kernel), g, args.data(), args.size(), o);
}

void expect_ok(const Status& st) {
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
}

float h2f(uint16_t h) { return static_cast<float>(bits_f16(h)); }
uint16_t f2h(float f) { return f16_bits(static_cast<_Float16>(f)); }

void vector_add(void**) {
  auto m = load_example("vector_add", {{"BLOCK", "64"}});
  const int n = 1000;
  std::vector<float> x(n), y(n), out(n, -1);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.25f * i;
    y[i] = 3.0f - i;
  }
  Grid g;
  g.x = (n + 63) / 64;
  expect_ok(launch(*m, "vector_add", g, {arg_ptr(x.data(), 4 * n), arg_ptr(y.data(), 4 * n), arg_ptr(out.data(), 4 * n), arg_int(n)}));
  for (int i = 0; i < n; ++i) assert_true(out[i] == x[i] + y[i]);
}

void softmax(void**) {
  auto m = load_example("softmax", {{"BLOCK", "64"}});
  const int rows = 5, cols = 50, in_stride = 64, out_stride = 50;
  std::vector<float> in(rows * in_stride), out(rows * out_stride);
  std::mt19937 rng(1);
  for (float& v : in) v = static_cast<float>(rng() % 2000) / 100.0f - 10.0f;
  Grid g;
  g.x = rows;
  expect_ok(launch(*m, "softmax", g, {arg_ptr(out.data(), 4 * out.size()), arg_ptr(in.data(), 4 * in.size()), arg_int(in_stride),
                                      arg_int(out_stride), arg_int(cols)}));
  for (int r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c) mx = std::max(mx, static_cast<double>(in[r * in_stride + c]));
    for (int c = 0; c < cols; ++c) sum += std::exp(in[r * in_stride + c] - mx);
    for (int c = 0; c < cols; ++c) {
      double want = std::exp(in[r * in_stride + c] - mx) / sum;
      assert_true(std::fabs(out[r * out_stride + c] - want) <= 1e-6 + 1e-5 * want);
    }
  }
}

void argmax(void**) {
  auto m = load_example("argmax", {{"BLOCK", "64"}});
  const int rows = 4, cols = 50, stride = 64;
  std::vector<float> in(rows * stride, 0);
  std::mt19937 rng(2);
  for (float& v : in) v = static_cast<float>(rng() % 100);
  in[0 * stride + 7] = 500;
  in[0 * stride + 30] = 500;                                        // a tie: the first wins
  in[1 * stride + 12] = std::numeric_limits<float>::quiet_NaN();    // NaN beats numbers
  in[1 * stride + 40] = std::numeric_limits<float>::quiet_NaN();
  in[2 * stride + 55] = 1e9;                                        // past n_cols: ignored
  std::vector<int32_t> out(rows, -1);
  Grid g;
  g.x = rows;
  expect_ok(launch(*m, "argmax", g, {arg_ptr(in.data(), 4 * in.size()), arg_ptr(out.data(), 4 * rows), arg_int(stride), arg_int(cols)}));
  for (int r = 0; r < rows; ++r) {
    int best = 0;
    for (int c = 1; c < cols; ++c) {
      float a = in[r * stride + c], b = in[r * stride + best];
      if (std::isnan(b)) break;
      if (std::isnan(a) || a > b) best = c;
    }
    assert_int_equal(out[r], best);
  }
  assert_int_equal(out[0], 7);
  assert_int_equal(out[1], 12);
}

void cumsum(void**) {
  auto m = load_example("cumsum", {{"BLOCK", "16"}});
  const int rows = 3, cols = 50, stride = 53;
  std::vector<float> in(rows * stride), out(rows * stride, -1);
  std::mt19937 rng(3);
  for (float& v : in) v = static_cast<float>(static_cast<int>(rng() % 21) - 10);  // small integers: exact sums
  Grid g;
  g.x = rows;
  expect_ok(launch(*m, "cumsum", g, {arg_ptr(out.data(), 4 * out.size()), arg_ptr(in.data(), 4 * in.size()), arg_int(stride),
                                     arg_int(stride), arg_int(cols)}));
  for (int r = 0; r < rows; ++r) {
    float s = 0;
    for (int c = 0; c < cols; ++c) {
      s += in[r * stride + c];
      assert_true(out[r * stride + c] == s);
    }
    assert_true(out[r * stride + cols] == -1);
  }
}

void gelu(void**) {
  auto m = load_example("gelu", {{"BLOCK", "128"}});
  const int n = 300;
  std::vector<float> x(n), out(n);
  for (int i = 0; i < n; ++i) x[i] = (i - 150) / 25.0f;
  Grid g;
  g.x = 3;
  expect_ok(launch(*m, "gelu", g, {arg_ptr(x.data(), 4 * n), arg_ptr(out.data(), 4 * n), arg_int(n)}));
  for (int i = 0; i < n; ++i) {
    double v = x[i];
    double want = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    assert_true(std::fabs(out[i] - want) <= 1e-6 + 1e-5 * std::fabs(want));
  }
}

void histogram(void**) {
  auto m = load_example("histogram", {{"BLOCK", "64"}, {"NUM_BINS", "37"}});
  const int n = 1000, bins = 37;
  std::vector<int32_t> vals(n), out(bins, 0), want(bins, 0);
  std::mt19937 rng(4);
  for (int32_t& v : vals) {
    v = static_cast<int32_t>(rng() % 50) - 5;
    if (v >= 0 && v < bins) ++want[v];
  }
  Grid g;
  g.x = (n + 63) / 64;
  expect_ok(launch(*m, "histogram", g, {arg_ptr(vals.data(), 4 * n), arg_ptr(out.data(), 4 * bins), arg_int(n)}));
  assert_true(out == want);
}

void layernorm(void**) {
  auto m = load_example("layernorm", {{"BLOCK", "32"}});
  const int rows = 4, n = 100, stride = 104;
  std::vector<uint16_t> x(rows * stride), y(rows * stride, 0), w(n), b(n);
  std::vector<float> mean(rows), rstd(rows);
  std::mt19937 rng(5);
  for (auto& v : x) v = f2h(static_cast<float>(rng() % 400) / 50.0f - 3.0f);
  for (int i = 0; i < n; ++i) {
    w[i] = f2h(0.5f + i / 100.0f);
    b[i] = f2h(i / 50.0f - 1.0f);
  }
  const float eps = 1e-5f;
  Grid g;
  g.x = rows;
  expect_ok(launch(*m, "layernorm", g, {arg_ptr(x.data(), 2 * x.size()), arg_ptr(y.data(), 2 * y.size()), arg_ptr(w.data(), 2 * n),
                                        arg_ptr(b.data(), 2 * n), arg_ptr(mean.data(), 4 * rows), arg_ptr(rstd.data(), 4 * rows),
                                        arg_int(stride), arg_int(n), arg_f32(eps)}));
  for (int r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (int i = 0; i < n; ++i) mu += h2f(x[r * stride + i]);
    mu /= n;
    for (int i = 0; i < n; ++i) var += (h2f(x[r * stride + i]) - mu) * (h2f(x[r * stride + i]) - mu);
    var /= n;
    double rs = 1 / std::sqrt(var + eps);
    assert_true(std::fabs(mean[r] - mu) <= 1e-5);
    assert_true(std::fabs(rstd[r] - rs) <= 1e-5 * rs);
    for (int i = 0; i < n; ++i) {
      double want = (h2f(x[r * stride + i]) - mu) * rs * h2f(w[i]) + h2f(b[i]);
      float got = h2f(y[r * stride + i]);
      if (std::fabs(got - want) > 2e-3 * (1 + std::fabs(want))) fail_msg("layernorm [%d, %d] = %g, want %g", r, i, got, want);
    }
  }
}

void matmul_leaky_relu(void**) {
  auto m = load_example("matmul_leaky_relu", {{"BM", "32"}, {"BN", "32"}, {"BK", "16"}, {"GROUP_M", "2"}, {"ALPHA", "0.01"}});
  const int M = 70, N = 50, K = 40;
  // A row-major, B column-major (transposed through its strides), C row-major.
  std::vector<uint16_t> a(M * K), b(K * N), c(M * N, 0);
  std::mt19937 rng(6);
  for (auto& v : a) v = f2h(static_cast<float>(static_cast<int>(rng() % 17) - 8) / 8.0f);
  for (auto& v : b) v = f2h(static_cast<float>(static_cast<int>(rng() % 17) - 8) / 8.0f);
  Grid g;
  g.x = ((M + 31) / 32) * ((N + 31) / 32);
  expect_ok(launch(*m, "matmul_leaky_relu", g,
                   {arg_ptr(a.data(), 2 * a.size()), arg_ptr(b.data(), 2 * b.size()), arg_ptr(c.data(), 2 * c.size()), arg_int(M),
                    arg_int(N), arg_int(K), arg_int(K), arg_int(1), arg_int(1), arg_int(K), arg_int(N), arg_int(1)}));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += static_cast<double>(h2f(a[i * K + k])) * h2f(b[j * K + k]);  // b[k, j] at j*K + k
      double want = s >= 0 ? s : 0.01 * s;
      float got = h2f(c[i * N + j]);
      // Products of eighths sum exactly in f32; only the final f16 rounding (and 0.01's) remains.
      if (std::fabs(got - want) > 1e-3 * (1 + std::fabs(want))) fail_msg("c[%d, %d] = %g, want %g", i, j, got, want);
    }
}

void flash_attention(void**) {
  for (const char* causal : {"false", "true"}) {
    auto m = load_example("flash_attention",
                          {{"BLOCK_M", "16"}, {"BLOCK_N", "16"}, {"HEAD_DIM", "16"}, {"CAUSAL", causal}});
    const int Z = 1, H = 2, S = 40, D = 16;
    const int sd = 1, ss = D, sh = S * D, sz = H * S * D;
    std::vector<uint16_t> q(Z * sz), k(Z * sz), v(Z * sz), o(Z * sz, 0);
    std::mt19937 rng(7);
    for (auto* t : {&q, &k, &v})
      for (auto& x : *t) x = f2h(static_cast<float>(static_cast<int>(rng() % 33) - 16) / 16.0f);
    const float scale = 0.25f;
    Grid g;
    g.x = (S + 15) / 16;
    g.y = Z * H;
    expect_ok(launch(*m, "flash_attention", g,
                     {arg_ptr(q.data(), 2 * q.size()), arg_ptr(k.data(), 2 * k.size()), arg_ptr(v.data(), 2 * v.size()),
                      arg_ptr(o.data(), 2 * o.size()), arg_f32(scale), arg_int(sz), arg_int(sh), arg_int(ss), arg_int(sd),
                      arg_int(H), arg_int(S)}));
    const bool is_causal = std::string(causal) == "true";
    for (int h = 0; h < H; ++h)
      for (int s = 0; s < S; ++s) {
        const int end = is_causal ? s + 1 : S;
        std::vector<double> p(end);
        double mx = -INFINITY, sum = 0;
        for (int t = 0; t < end; ++t) {
          double dotp = 0;
          for (int d = 0; d < D; ++d) dotp += static_cast<double>(h2f(q[h * sh + s * ss + d])) * h2f(k[h * sh + t * ss + d]);
          p[t] = dotp * scale;
          mx = std::max(mx, p[t]);
        }
        for (int t = 0; t < end; ++t) sum += (p[t] = std::exp(p[t] - mx));
        for (int d = 0; d < D; ++d) {
          double want = 0;
          for (int t = 0; t < end; ++t) want += p[t] / sum * h2f(v[h * sh + t * ss + d]);
          float got = h2f(o[h * sh + s * ss + d]);
          // p is rounded to f16 before the second dot, so allow f16-sized errors.
          if (std::fabs(got - want) > 4e-3) fail_msg("causal=%s o[%d, %d, %d] = %g, want %g", causal, h, s, d, got, want);
        }
      }
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(vector_add),
      cmocka_unit_test(softmax),
      cmocka_unit_test(argmax),
      cmocka_unit_test(cumsum),
      cmocka_unit_test(gelu),
      cmocka_unit_test(histogram),
      cmocka_unit_test(layernorm),
      cmocka_unit_test(matmul_leaky_relu),
      cmocka_unit_test(flash_attention),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
