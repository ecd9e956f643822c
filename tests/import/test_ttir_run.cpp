// Triton kernels, imported from their TTIR (tests/import/ttir, written by python3 -m tri.triton
// from kernels.py), run through the public C API on the interpreter (checked mode) and the CPU
// backend, and compared with references computed here in C on sizes that are not multiples of
// the block (so every kernel's masked tail runs). Output buffers carry guard elements past the
// end that no kernel may touch. Also: checked-mode and assert reports name kernels.py's lines.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tri/tri.h"
#include "ttir_run_util.h"

namespace {

// ---------------------------------------------------------------- the kernels

void test_vadd(void**) {
  const int n = 1000;  // 16 programs of 64; the last has 40 lanes
  std::vector<float> x = random_floats(n, -10, 10, 1), y = random_floats(n, -10, 10, 2);
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32), by = buffer(y, TRI_DTYPE_F32);
    Buffer out = buffer(std::vector<float>(n + kGuard, kSentinel), TRI_DTYPE_F32);
    if (!launch("vadd", "add_kernel", t, (n + 63) / 64, 1, {ptr_arg(bx), ptr_arg(by), ptr_arg(out), i32_arg(n)})) continue;
    std::vector<double> want(n);
    for (int i = 0; i < n; ++i) want[i] = static_cast<double>(x[i] + y[i]);
    expect_close("vadd out", t, out.as<float>(), want.data(), n, 0, 0);
    expect_guard("vadd out", t, out.as<float>(), n, kSentinel);
  }
}

void test_softmax(void**) {
  const int rows = 7, cols = 100, in_stride = 100, out_stride = 104;  // BLOCK 128
  std::vector<float> in = random_floats(rows * in_stride, -4, 4, 3);
  std::vector<double> want(rows * out_stride, kSentinel);
  for (int r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c) mx = std::fmax(mx, in[r * in_stride + c]);
    for (int c = 0; c < cols; ++c) sum += std::exp(in[r * in_stride + c] - mx);
    for (int c = 0; c < cols; ++c) want[r * out_stride + c] = std::exp(in[r * in_stride + c] - mx) / sum;
  }
  for (const char* t : kTargets) {
    Buffer bin = buffer(in, TRI_DTYPE_F32);
    Buffer out = buffer(std::vector<float>(rows * out_stride + kGuard, kSentinel), TRI_DTYPE_F32);
    // 3 programs for 7 rows: the persistent loop runs 3, 2 and 2 times.
    if (!launch("softmax", "softmax_kernel", t, 3, 1,
                {ptr_arg(out), ptr_arg(bin), i32_arg(in_stride), i32_arg(out_stride), i32_arg(rows), i32_arg(cols)}))
      continue;
    expect_close("softmax out", t, out.as<float>(), want.data(), want.size(), 1e-7, 2e-5);
    expect_guard("softmax out", t, out.as<float>(), rows * out_stride, kSentinel);
  }
}

void test_layer_norm(void**) {
  const int rows = 5, n = 77, stride = 80;  // BLOCK 32: three column blocks, the last masked
  const float eps = 1e-5f;
  std::vector<float> x = random_floats(rows * stride, -3, 3, 4), w = random_floats(n, 0.5, 1.5, 5),
                     b = random_floats(n, -1, 1, 6);
  std::vector<double> want_y(rows * stride, kSentinel), want_mean(rows), want_rstd(rows);
  for (int r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < n; ++c) mean += x[r * stride + c];
    mean /= n;
    for (int c = 0; c < n; ++c) var += (x[r * stride + c] - mean) * (x[r * stride + c] - mean);
    var /= n;
    double rstd = 1 / std::sqrt(var + eps);
    want_mean[r] = mean;
    want_rstd[r] = rstd;
    for (int c = 0; c < n; ++c) want_y[r * stride + c] = (x[r * stride + c] - mean) * rstd * w[c] + b[c];
  }
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32), bw = buffer(w, TRI_DTYPE_F32), bb = buffer(b, TRI_DTYPE_F32);
    Buffer y = buffer(std::vector<float>(rows * stride + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer mean = buffer(std::vector<float>(rows + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer rstd = buffer(std::vector<float>(rows + kGuard, kSentinel), TRI_DTYPE_F32);
    if (!launch("layer_norm_fwd", "layer_norm_fwd_kernel", t, rows, 1,
                {ptr_arg(bx), ptr_arg(y), ptr_arg(bw), ptr_arg(bb), ptr_arg(mean), ptr_arg(rstd), i32_arg(stride),
                 i32_arg(n), f32_arg(eps)}))
      continue;
    expect_close("layer_norm Y", t, y.as<float>(), want_y.data(), want_y.size(), 1e-5, 1e-5);
    expect_close("layer_norm Mean", t, mean.as<float>(), want_mean.data(), rows, 1e-6, 1e-5);
    expect_close("layer_norm Rstd", t, rstd.as<float>(), want_rstd.data(), rows, 1e-6, 1e-5);
    expect_guard("layer_norm Y", t, y.as<float>(), rows * stride, kSentinel);
    expect_guard("layer_norm Mean", t, mean.as<float>(), rows, kSentinel);
  }
}

void test_matmul(void**) {
  // 37 x 40 @ 40 x 45, blocks of 16 (3 x 3 tiles in groups of 2 rows), leaky_relu, f16 out.
  const int M = 37, N = 45, K = 40;
  std::vector<float> af = random_floats(M * K, -1, 1, 7), bf = random_floats(K * N, -1, 1, 8);
  std::vector<uint16_t> a(M * K), b(K * N);
  for (int i = 0; i < M * K; ++i) a[i] = to_half(af[i]);
  for (int i = 0; i < K * N; ++i) b[i] = to_half(bf[i]);
  std::vector<double> want(M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += static_cast<double>(from_half(a[i * K + k])) * from_half(b[k * N + j]);
      if (s < 0) s *= 0.01f;
      want[i * N + j] = s;
    }
  const uint16_t sentinel = to_half(kSentinel);
  for (const char* t : kTargets) {
    Buffer ba = buffer(a, TRI_DTYPE_F16), bb = buffer(b, TRI_DTYPE_F16);
    Buffer c = buffer(std::vector<uint16_t>(M * N + kGuard, sentinel), TRI_DTYPE_F16);
    uint32_t grid = ((M + 15) / 16) * ((N + 15) / 16);
    if (!launch("matmul", "matmul_kernel", t, grid, 1,
                {ptr_arg(ba), ptr_arg(bb), ptr_arg(c), i32_arg(M), i32_arg(N), i32_arg(K), i32_arg(K), i32_arg(1),
                 i32_arg(N), i32_arg(1), i32_arg(N), i32_arg(1)}))
      continue;
    std::vector<float> got(M * N);
    for (int i = 0; i < M * N; ++i) got[i] = from_half(c.as<uint16_t>()[i]);
    // f32 accumulation, then one f16 rounding: within an f16 ulp and the accumulation error.
    expect_close("matmul C", t, got.data(), want.data(), want.size(), 1e-4, 1.5e-3);
    expect_guard("matmul C", t, c.as<uint16_t>(), M * N, sentinel);
  }
}

void test_matmul_tf32(void**) {
  // f32 inputs: Triton's default input precision is tf32, which the import keeps
  // (dot[precision=tf32]); no epilogue. Checked against exact products within tf32's bound.
  const int M = 33, N = 20, K = 50;
  std::vector<float> a = random_floats(M * K, -1, 1, 21), b = random_floats(K * N, -1, 1, 22);
  std::vector<double> want(M * N), bound(M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0, mag = 0;
      for (int k = 0; k < K; ++k) {
        s += static_cast<double>(a[i * K + k]) * b[k * N + j];
        mag += std::fabs(static_cast<double>(a[i * K + k]) * b[k * N + j]);
      }
      want[i * N + j] = s;
      bound[i * N + j] = std::ldexp(mag, -9);  // tf32 rounding of both inputs
    }
  const uint16_t sentinel = to_half(kSentinel);
  for (const char* t : kTargets) {
    Buffer ba = buffer(a, TRI_DTYPE_F32), bb = buffer(b, TRI_DTYPE_F32);
    Buffer c = buffer(std::vector<uint16_t>(M * N + kGuard, sentinel), TRI_DTYPE_F16);
    uint32_t grid = ((M + 15) / 16) * ((N + 15) / 16);
    if (!launch("matmul_tf32", "matmul_kernel", t, grid, 1,
                {ptr_arg(ba), ptr_arg(bb), ptr_arg(c), i32_arg(M), i32_arg(N), i32_arg(K), i32_arg(K), i32_arg(1),
                 i32_arg(N), i32_arg(1), i32_arg(N), i32_arg(1)}))
      continue;
    for (int i = 0; i < M * N; ++i) {
      double got = from_half(c.as<uint16_t>()[i]);
      double tol = bound[i] + std::ldexp(std::fabs(want[i]), -10) + 1e-6;  // + the f16 rounding of C
      if (!(std::fabs(got - want[i]) <= tol))
        fail_msg("matmul tf32 [%s]: element %d is %.6g, expected %.6g within %.3g", t, i, got, want[i], tol);
    }
    expect_guard("matmul tf32 C", t, c.as<uint16_t>(), M * N, sentinel);
  }
}

void test_gelu(void**) {
  const int n = 200;  // 4 programs of 64
  std::vector<float> x = random_floats(n, -5, 5, 9);
  std::vector<double> want(n), want_tanh(n);
  for (int i = 0; i < n; ++i) {
    double v = x[i];
    want[i] = 0.5 * v * (1 + std::erf(v * 0.7071067811865476));
    want_tanh[i] = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  }
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32);
    Buffer y = buffer(std::vector<float>(n + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer yt = buffer(std::vector<float>(n + kGuard, kSentinel), TRI_DTYPE_F32);
    if (!launch("gelu", "gelu_kernel", t, (n + 63) / 64, 1, {ptr_arg(bx), ptr_arg(y), ptr_arg(yt), i32_arg(n)})) continue;
    expect_close("gelu (erf)", t, y.as<float>(), want.data(), n, 1e-6, 1e-5);
    expect_close("gelu (libdevice tanh)", t, yt.as<float>(), want_tanh.data(), n, 1e-6, 1e-5);
    expect_guard("gelu", t, y.as<float>(), n, kSentinel);
    expect_guard("gelu tanh", t, yt.as<float>(), n, kSentinel);
  }
}

void test_reduce_scan(void**) {
  const int rows = 6, cols = 50, stride = 50;  // BLOCK 64
  std::vector<float> x = random_floats(rows * stride, 0.5, 1.5, 10);
  x[2 * stride + 7] = x[2 * stride + 30] = 2.0f;  // a tie: the first index wins
  std::vector<double> sum(rows), mx(rows), cumsum(rows * stride), cumprod(rows * stride);
  std::vector<int32_t> argmax(rows), icum(rows * stride);
  for (int r = 0; r < rows; ++r) {
    double s = 0, p = 1, m = -INFINITY;
    int am = 0;
    for (int c = 0; c < cols; ++c) {
      double v = x[r * stride + c];
      s += v;
      p *= v;
      cumsum[r * stride + c] = s;
      cumprod[r * stride + c] = p;
      if (v > m) {
        m = v;
        am = c;
      }
      icum[r * stride + c] = cols - c;
    }
    sum[r] = s;
    mx[r] = m;
    argmax[r] = am;
  }
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32);
    Buffer bs = buffer(std::vector<float>(rows + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer bm = buffer(std::vector<float>(rows + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer ba = buffer(std::vector<int32_t>(rows + kGuard, -1), TRI_DTYPE_I32);
    Buffer bcs = buffer(std::vector<float>(rows * stride + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer bcp = buffer(std::vector<float>(rows * stride + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer bic = buffer(std::vector<int32_t>(rows * stride + kGuard, -1), TRI_DTYPE_I32);
    if (!launch("reduce_scan", "reduce_scan_kernel", t, rows, 1,
                {ptr_arg(bx), ptr_arg(bs), ptr_arg(bm), ptr_arg(ba), ptr_arg(bcs), ptr_arg(bcp), ptr_arg(bic),
                 i32_arg(cols), i32_arg(stride)}))
      continue;
    expect_close("tl.sum", t, bs.as<float>(), sum.data(), rows, 0, 1e-5);
    expect_close("tl.max", t, bm.as<float>(), mx.data(), rows, 0, 0);
    for (int r = 0; r < rows; ++r)
      if (ba.as<int32_t>()[r] != argmax[r])
        fail_msg("argmax (custom combine) [%s]: row %d is %d, expected %d", t, r, ba.as<int32_t>()[r], argmax[r]);
    expect_close("tl.cumsum", t, bcs.as<float>(), cumsum.data(), cumsum.size(), 0, 1e-5);
    expect_close("tl.associative_scan (product)", t, bcp.as<float>(), cumprod.data(), cumprod.size(), 0, 1e-5);
    for (int i = 0; i < rows * stride; ++i)
      if (bic.as<int32_t>()[i] != icum[i])
        fail_msg("reverse integer cumsum [%s]: element %d is %d, expected %d", t, i, bic.as<int32_t>()[i], icum[i]);
    expect_guard("tl.sum", t, bs.as<float>(), rows, kSentinel);
    expect_guard("cumsum", t, bcs.as<float>(), rows * stride, kSentinel);
    expect_guard("icum", t, bic.as<int32_t>(), rows * stride, -1);
  }
}

void test_atomics(void**) {
  const int n = 100, bins = 8;  // 4 programs of 32
  std::mt19937 rng(11);
  std::vector<int32_t> x(n);
  for (int32_t& v : x) v = static_cast<int32_t>(rng() % bins);
  std::vector<int32_t> hist(bins, 0);
  int32_t mx = -1;
  for (int32_t v : x) {
    ++hist[v];
    mx = std::max(mx, v);
  }
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_I32);
    Buffer bb = buffer(std::vector<int32_t>(bins + kGuard, 0), TRI_DTYPE_I32);
    Buffer bm = buffer(std::vector<int32_t>(1 + kGuard, -5), TRI_DTYPE_I32);
    Buffer bf = buffer(std::vector<int32_t>(1 + kGuard, 0), TRI_DTYPE_I32);
    if (!launch("atomics", "atomics_kernel", t, (n + 31) / 32, 1, {ptr_arg(bx), ptr_arg(bb), ptr_arg(bm), ptr_arg(bf), i32_arg(n)}))
      continue;
    for (int i = 0; i < bins; ++i)
      if (bb.as<int32_t>()[i] != hist[i])
        fail_msg("histogram [%s]: bin %d is %d, expected %d", t, i, bb.as<int32_t>()[i], hist[i]);
    if (bm.as<int32_t>()[0] != mx) fail_msg("atomic_max [%s]: %d, expected %d", t, bm.as<int32_t>()[0], mx);
    int32_t flag = bf.as<int32_t>()[0];
    if (flag < 1 || flag > 4) fail_msg("atomic_cas [%s]: flag %d, expected a program id + 1 in 1..4", t, flag);
    expect_guard("histogram", t, bb.as<int32_t>(), bins, 0);
    expect_guard("atomic_max", t, bm.as<int32_t>(), 1, -5);
    expect_guard("atomic_cas", t, bf.as<int32_t>(), 1, 0);
  }
}

void test_attn_fwd(void**) {
  // Two heads of 40 positions (3 blocks of 16, the last masked), head dimension 16.
  const int heads = 2, S = 40, D = 16;
  const float sm_scale = 0.25f;
  std::vector<float> qf = random_floats(heads * S * D, -1, 1, 12), kf = random_floats(heads * S * D, -1, 1, 13),
                     vf = random_floats(heads * S * D, -1, 1, 14);
  std::vector<uint16_t> q(qf.size()), k(kf.size()), v(vf.size());
  for (size_t i = 0; i < qf.size(); ++i) {
    q[i] = to_half(qf[i]);
    k[i] = to_half(kf[i]);
    v[i] = to_half(vf[i]);
  }
  std::vector<double> want(heads * S * D);
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < S; ++i) {
      std::vector<double> s(S);
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < S; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += static_cast<double>(from_half(q[(h * S + i) * D + d])) * from_half(k[(h * S + j) * D + d]);
        s[j] = dot * sm_scale;
        mx = std::fmax(mx, s[j]);
      }
      for (int j = 0; j < S; ++j) sum += s[j] = std::exp(s[j] - mx);
      for (int d = 0; d < D; ++d) {
        double o = 0;
        for (int j = 0; j < S; ++j) o += s[j] / sum * from_half(v[(h * S + j) * D + d]);
        want[(h * S + i) * D + d] = o;
      }
    }
  const uint16_t sentinel = to_half(kSentinel);
  for (const char* t : kTargets) {
    Buffer bq = buffer(q, TRI_DTYPE_F16), bk = buffer(k, TRI_DTYPE_F16), bv = buffer(v, TRI_DTYPE_F16);
    Buffer out = buffer(std::vector<uint16_t>(heads * S * D + kGuard, sentinel), TRI_DTYPE_F16);
    if (!launch("attn_fwd", "attn_fwd_kernel", t, (S + 15) / 16, heads,
                {ptr_arg(bq), ptr_arg(bk), ptr_arg(bv), ptr_arg(out), f32_arg(sm_scale), i32_arg(S)}))
      continue;
    std::vector<float> got(want.size());
    for (size_t i = 0; i < got.size(); ++i) got[i] = from_half(out.as<uint16_t>()[i]);
    // p is rounded to f16 before the second dot, and the output to f16.
    expect_close("attention out", t, got.data(), want.data(), want.size(), 2e-3, 5e-3);
    expect_guard("attention out", t, out.as<uint16_t>(), heads * S * D, sentinel);
  }
}

void test_control(void**) {
  const int n = 40, B = 16, programs = 3;
  std::vector<float> x = random_floats(n, -2, 2, 15);
  std::vector<double> want(n);
  std::vector<int32_t> steps(programs);
  for (int p = 0; p < programs; ++p) {
    float a = p % 2 == 0 ? static_cast<float>(p) * 2.0f + 1.0f : static_cast<float>(p) * -1.0f + 0.5f;
    std::vector<float> y(B, 0.0f);
    for (int l = 0; l < B; ++l) {
      int i = p * B + l;
      y[l] = (i < n ? x[i] : 0.0f) * a;
    }
    for (int l = 0; l < B; ++l) {
      int i = p * B + l;
      if (i < n) want[i] = y[l ^ 1];  // pairs swapped by split / join
    }
    double v = 0;
    for (float e : y) v += e;
    int k = 0;
    while (v < 1000.0 && k < 64) {
      v = v * 2 + 1;
      ++k;
    }
    steps[p] = k;
  }
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32);
    Buffer out = buffer(std::vector<float>(n + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer bs = buffer(std::vector<int32_t>(programs + kGuard, -1), TRI_DTYPE_I32);
    if (!launch("control", "control_kernel", t, programs, 1, {ptr_arg(bx), ptr_arg(out), ptr_arg(bs), i32_arg(n)})) continue;
    expect_close("control out", t, out.as<float>(), want.data(), n, 0, 0);
    for (int p = 0; p < programs; ++p)
      if (bs.as<int32_t>()[p] != steps[p])
        fail_msg("while loop [%s]: program %d ran %d steps, expected %d", t, p, bs.as<int32_t>()[p], steps[p]);
    expect_guard("control out", t, out.as<float>(), n, kSentinel);
  }
}

void test_layer_norm_bwd(void**) {
  // The tutorial's two-stage backward pass: 10 rows of 100 columns (BLOCK_SIZE_N 128), dw/db
  // partial sums in 4 groups under a spin lock, then summed by 4 programs of 32 columns.
  const int M = 10, N = 100, stride = 100, G = 4;
  std::vector<float> x = random_floats(M * stride, -2, 2, 18), dy = random_floats(M * stride, -1, 1, 19),
                     w = random_floats(N, 0.5, 1.5, 20);
  std::vector<float> mean(M), rstd(M);
  std::vector<double> want_dx(M * stride), want_dw(N, 0.0), want_db(N, 0.0);
  for (int r = 0; r < M; ++r) {
    double mu = 0, var = 0;
    for (int c = 0; c < N; ++c) mu += x[r * stride + c];
    mu /= N;
    for (int c = 0; c < N; ++c) var += (x[r * stride + c] - mu) * (x[r * stride + c] - mu);
    mean[r] = static_cast<float>(mu);
    rstd[r] = static_cast<float>(1 / std::sqrt(var / N + 1e-5));
    double c1 = 0, c2 = 0;
    std::vector<double> xhat(N), wdy(N);
    for (int c = 0; c < N; ++c) {
      xhat[c] = (x[r * stride + c] - static_cast<double>(mean[r])) * rstd[r];
      wdy[c] = static_cast<double>(w[c]) * dy[r * stride + c];
      c1 += xhat[c] * wdy[c];
      c2 += wdy[c];
    }
    c1 /= N;
    c2 /= N;
    for (int c = 0; c < N; ++c) {
      want_dx[r * stride + c] = (wdy[c] - (xhat[c] * c1 + c2)) * rstd[r];
      want_dw[c] += dy[r * stride + c] * xhat[c];
      want_db[c] += dy[r * stride + c];
    }
  }
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32), bdy = buffer(dy, TRI_DTYPE_F32), bw = buffer(w, TRI_DTYPE_F32);
    Buffer bmean = buffer(mean, TRI_DTYPE_F32), brstd = buffer(rstd, TRI_DTYPE_F32);
    Buffer dx = buffer(std::vector<float>(M * stride + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer pdw = buffer(std::vector<float>(G * N, 0.0f), TRI_DTYPE_F32), pdb = buffer(std::vector<float>(G * N, 0.0f), TRI_DTYPE_F32);
    Buffer lock = buffer(std::vector<int32_t>(2 * G, 0), TRI_DTYPE_I32);
    if (!launch("layer_norm_bwd_dx", "layer_norm_bwd_dx_kernel", t, M, 1,
                {ptr_arg(dx), ptr_arg(bdy), ptr_arg(pdw), ptr_arg(pdb), ptr_arg(bx), ptr_arg(bw), ptr_arg(bmean),
                 ptr_arg(brstd), ptr_arg(lock), i32_arg(stride), i32_arg(N)}))
      continue;
    expect_close("layer_norm_bwd DX", t, dx.as<float>(), want_dx.data(), M * stride, 1e-5, 1e-4);
    expect_guard("layer_norm_bwd DX", t, dx.as<float>(), M * stride, kSentinel);
    for (int g = 0; g < G; ++g) {
      if (lock.as<int32_t>()[g] != 0) fail_msg("layer_norm_bwd [%s]: lock %d left taken", t, g);
      if (lock.as<int32_t>()[G + g] != 1) fail_msg("layer_norm_bwd [%s]: count %d is %d, expected 1", t, g, lock.as<int32_t>()[G + g]);
    }
    Buffer fdw = buffer(std::vector<float>(N + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer fdb = buffer(std::vector<float>(N + kGuard, kSentinel), TRI_DTYPE_F32);
    if (!launch("layer_norm_bwd_dwdb", "layer_norm_bwd_dwdb_kernel", t, (N + 31) / 32, 1,
                {ptr_arg(pdw), ptr_arg(pdb), ptr_arg(fdw), ptr_arg(fdb), i32_arg(G), i32_arg(N)}))
      continue;
    expect_close("layer_norm_bwd DW", t, fdw.as<float>(), want_dw.data(), N, 1e-4, 1e-4);
    expect_close("layer_norm_bwd DB", t, fdb.as<float>(), want_db.data(), N, 1e-5, 1e-4);
    expect_guard("layer_norm_bwd DW", t, fdw.as<float>(), N, kSentinel);
    expect_guard("layer_norm_bwd DB", t, fdb.as<float>(), N, kSentinel);
  }
}

// Triton's Philox (triton/language/random.py, 10 rounds, 32-bit counters): the first output for
// counter (offset, 0, 0, 0) and key (seed lo, seed hi), then uint_to_uniform_float.
float philox_uniform(uint32_t offset, uint64_t seed) {
  uint32_t c0 = offset, c1 = 0, c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  const uint32_t A = 0xD2511F53u, B = 0xCD9E8D57u;
  for (int r = 0; r < 10; ++r) {
    uint32_t p0 = c0, p2 = c2;
    c0 = static_cast<uint32_t>((static_cast<uint64_t>(B) * p2) >> 32) ^ c1 ^ k0;
    c2 = static_cast<uint32_t>((static_cast<uint64_t>(A) * p0) >> 32) ^ c3 ^ k1;
    c1 = B * p2;
    c3 = A * p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  int32_t x;
  std::memcpy(&x, &c0, 4);
  if (x < 0) x = ~x;
  return static_cast<float>(x) * 4.6566127342e-10f;
}

void test_dropout(void**) {
  const int n = 300;  // 5 programs of 64
  const float p = 0.3f;
  const int seed = 1234;
  std::vector<float> x = random_floats(n, -1, 1, 17);
  std::vector<double> want(n);
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    bool keep = philox_uniform(static_cast<uint32_t>(i), static_cast<uint64_t>(seed)) > p;
    kept += keep;
    want[i] = keep ? static_cast<double>(x[i] / (1.0f - p)) : 0.0;
  }
  // The mask is random, not degenerate: about 70% kept.
  if (kept < n / 2 || kept > n * 9 / 10) fail_msg("the reference kept %d of %d", kept, n);
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32);
    Buffer out = buffer(std::vector<float>(n + kGuard, kSentinel), TRI_DTYPE_F32);
    if (!launch("dropout", "seeded_dropout_kernel", t, (n + 63) / 64, 1,
                {ptr_arg(bx), ptr_arg(out), i32_arg(n), f32_arg(p), i32_arg(seed)}))
      continue;
    expect_close("dropout", t, out.as<float>(), want.data(), n, 0, 0);
    expect_guard("dropout", t, out.as<float>(), n, kSentinel);
  }
}

// ---------------------------------------------------------------- snippets of other Triton versions

void test_descriptor_36(void**) {
  // Triton 3.6's spelling of descriptors (tests/import/snippets/descriptor_36.ttir): a
  // TensorDescriptor argument and one made on the device, blocks of 4 x 8 at (4 pid, -2).
  const int M = 10, N = 6, stride = 8;
  std::vector<float> x = random_floats(M * stride, -4, 4, 30);
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32);
    Buffer y = buffer(std::vector<float>(M * stride + kGuard, kSentinel), TRI_DTYPE_F32);
    if (!launch_text(snippet("descriptor_36"), "descriptor_36.ttir", "k", t, 3, 1,
                     {ptr_arg(bx), i32_arg(M), i32_arg(N), i64_arg(stride), i64_arg(1), ptr_arg(y)}))
      continue;
    std::vector<double> want(M * stride, kSentinel);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) want[r * stride + c] = static_cast<double>(x[r * stride + c] + 1.0f);
    expect_close("descriptor_36 y", t, y.as<float>(), want.data(), M * stride, 0, 0);
    expect_guard("descriptor_36 y", t, y.as<float>(), M * stride, kSentinel);
  }
}

void test_atomics_39(void**) {
  // Triton 3.9's atomic_load / atomic_store / atomic_poll, approx_divf and grid-dependency ops.
  const int n = 4;
  std::vector<float> x = random_floats(n, 0, 3, 31);
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32);
    Buffer y = buffer(std::vector<float>(n + kGuard, kSentinel), TRI_DTYPE_F32);
    Buffer flags = buffer(std::vector<int32_t>(n, 3), TRI_DTYPE_I32);
    Buffer counts = buffer(std::vector<int32_t>{10, 20, 30, 40}, TRI_DTYPE_I32);
    if (!launch_text(snippet("atomics_39"), "atomics_39.ttir", "k", t, n, 1,
                     {ptr_arg(bx), ptr_arg(y), ptr_arg(flags), ptr_arg(counts)}))
      continue;
    for (int i = 0; i < n; ++i)
      if (counts.as<int32_t>()[i] != 10 * (i + 1) + 2) fail_msg("atomics_39 [%s]: count %d is %d", t, i, counts.as<int32_t>()[i]);
    std::vector<double> want(n);
    for (int i = 0; i < n; ++i) want[i] = static_cast<double>(x[i] / (x[i] + 1.0f));
    expect_close("atomics_39 y", t, y.as<float>(), want.data(), n, 0, 0);
    expect_guard("atomics_39 y", t, y.as<float>(), n, kSentinel);
  }
}

void test_libdevice_64(void**) {
  // libdevice's 64-bit integer functions (tests/import/snippets/libdevice_64.ttir), against C.
  std::vector<int64_t> x = {0, -1, 1, INT64_MIN, INT64_MAX, 0x0123456789abcdefLL, -0x1000000000LL, 96};
  std::vector<double> d = {0.5, 1.5, 2.5, -2.5, -0.5, 1e18, -3.7, 4503599627370497.0};
  const int n = static_cast<int>(x.size());
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_I64), bd = buffer(d, TRI_DTYPE_F64);
    Buffer out = buffer(std::vector<int64_t>(4 * n + kGuard, -777), TRI_DTYPE_I64);
    Buffer cnt = buffer(std::vector<int32_t>(3 * n + kGuard, -777), TRI_DTYPE_I32);
    if (!launch_text(snippet("libdevice_64"), "libdevice_64.ttir", "k", t, n, 1,
                     {ptr_arg(bx), ptr_arg(bd), ptr_arg(out), ptr_arg(cnt)}))
      continue;
    for (int i = 0; i < n; ++i) {
      uint64_t u = static_cast<uint64_t>(x[i]), v = u * 7, rev = 0;
      for (int b = 0; b < 64; ++b) rev |= ((u >> b) & 1) << (63 - b);
      __int128 s = static_cast<__int128>(x[i]) * static_cast<int64_t>(v);
      unsigned __int128 p = static_cast<unsigned __int128>(u) * v;
      int64_t want[4] = {static_cast<int64_t>(rev), static_cast<int64_t>(s >> 64), static_cast<int64_t>(p >> 64),
                         static_cast<int64_t>(std::nearbyint(d[i]))};
      int32_t pop = __builtin_popcountll(u), clz = u ? __builtin_clzll(u) : 64, ffs = __builtin_ffsll(x[i]);
      int32_t want_c[3] = {pop, clz, ffs};
      for (int k = 0; k < 4; ++k)
        if (out.as<int64_t>()[4 * i + k] != want[k])
          fail_msg("libdevice_64 [%s]: x[%d] result %d is %lld, expected %lld", t, i, k,
                   static_cast<long long>(out.as<int64_t>()[4 * i + k]), static_cast<long long>(want[k]));
      for (int k = 0; k < 3; ++k)
        if (cnt.as<int32_t>()[3 * i + k] != want_c[k])
          fail_msg("libdevice_64 [%s]: x[%d] count %d is %d, expected %d", t, i, k, cnt.as<int32_t>()[3 * i + k], want_c[k]);
    }
    expect_guard("libdevice_64 out", t, out.as<int64_t>(), 4 * n, int64_t{-777});
    expect_guard("libdevice_64 cnt", t, cnt.as<int32_t>(), 3 * n, int32_t{-777});
  }
}

// ---------------------------------------------------------------- locations in reports

void test_checked_sqrt(void**) {
  const int n = 70;  // 3 programs of 32
  std::vector<float> x = random_floats(n, 0, 9, 16);
  for (const char* t : kTargets) {
    Buffer bx = buffer(x, TRI_DTYPE_F32);
    Buffer out = buffer(std::vector<float>(n + kGuard, kSentinel), TRI_DTYPE_F32);
    if (!launch("checked_sqrt", "checked_sqrt_kernel", t, 3, 1, {ptr_arg(bx), ptr_arg(out), i32_arg(n)})) continue;
    std::vector<double> want(n);
    for (int i = 0; i < n; ++i) want[i] = std::sqrt(x[i]);
    expect_close("sqrt", t, out.as<float>(), want.data(), n, 0, 0);
    expect_guard("sqrt", t, out.as<float>(), n, kSentinel);
  }
  // A negative input fails the device_assert; the report names the Python line of the assert.
  std::string line = "tests/import/kernels.py:242:";
  for (const char* t : kTargets) {
    std::vector<float> bad = x;
    bad[45] = -1.0f;
    Buffer bx = buffer(bad, TRI_DTYPE_F32);
    Buffer out = buffer(std::vector<float>(n + kGuard, kSentinel), TRI_DTYPE_F32);
    std::string msg;
    if (!launch("checked_sqrt", "checked_sqrt_kernel", t, 3, 1, {ptr_arg(bx), ptr_arg(out), i32_arg(n)},
                TRI_ERROR_RUNTIME, &msg))
      continue;
    if (msg.find(line) == std::string::npos || msg.find("negative input") == std::string::npos)
      fail_msg("assert [%s]: the message does not name %s and the assert's text: %s", t, line.c_str(), msg.c_str());
  }
}

void test_checked_mode_location(void**) {
  // x is 10 elements shorter than n says: checked mode reports the load at kernels.py:16:9.
  const int n = 100;
  std::vector<float> x(n - 10, 1.0f), y(n, 2.0f);
  Buffer bx = buffer(x, TRI_DTYPE_F32), by = buffer(y, TRI_DTYPE_F32);
  Buffer out = buffer(std::vector<float>(n, 0.0f), TRI_DTYPE_F32);
  std::string msg;
  launch("vadd", "add_kernel", "interp", 2, 1, {ptr_arg(bx), ptr_arg(by), ptr_arg(out), i32_arg(n)}, TRI_ERROR_RUNTIME,
         &msg);
  if (msg.find("tests/import/kernels.py:16:9: error: 'load'") == std::string::npos ||
      msg.find("out of bounds") == std::string::npos || msg.find("%x_ptr") == std::string::npos)
    fail_msg("checked mode's report does not name kernels.py:16:9 and %%x_ptr: %s", msg.c_str());
}

void test_reflection(void**) {
  // tt.divisibility = 16 on pointers became align=16; the kernel's parameters keep their names.
  tri_module* m = load_fixture("vadd");
  uint32_t idx, align, div;
  int32_t noalias;
  const char* name;
  assert_int_equal(tri_module_find_function(m, "add_kernel", &idx), TRI_OK);
  assert_int_equal(tri_module_param_name(m, idx, 0, &name), TRI_OK);
  assert_string_equal(name, "x_ptr");
  assert_int_equal(tri_module_param_facts(m, idx, 0, &align, &div, &noalias), TRI_OK);
  assert_int_equal(align, 16);
  assert_int_equal(tri_module_param_facts(m, idx, 3, &align, &div, &noalias), TRI_OK);
  assert_int_equal(align, 0);
  tri_module_destroy(m);
  // Device functions stay functions (noinline=True in Triton): control has a kernel and two.
  m = load_fixture("control");
  uint32_t count;
  assert_int_equal(tri_module_function_count(m, &count), TRI_OK);
  assert_int_equal(count, 3);
  int kernels = 0;
  for (uint32_t i = 0; i < count; ++i) {
    int32_t kind;
    assert_int_equal(tri_module_function_kind(m, i, &kind), TRI_OK);
    kernels += kind == TRI_FUNCTION_KERNEL;
  }
  assert_int_equal(kernels, 1);
  tri_module_destroy(m);
}

}  // namespace

int main(void) {
  if (tri_context_create(nullptr, TRI_VERSION_NUMBER, &g_ctx) != TRI_OK) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vadd),       cmocka_unit_test(test_softmax),
      cmocka_unit_test(test_layer_norm), cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_matmul_tf32),
      cmocka_unit_test(test_gelu),       cmocka_unit_test(test_reduce_scan),
      cmocka_unit_test(test_atomics),    cmocka_unit_test(test_attn_fwd),
      cmocka_unit_test(test_control),    cmocka_unit_test(test_dropout),
      cmocka_unit_test(test_layer_norm_bwd),
      cmocka_unit_test(test_checked_sqrt),
      cmocka_unit_test(test_checked_mode_location), cmocka_unit_test(test_reflection),
      cmocka_unit_test(test_descriptor_36),         cmocka_unit_test(test_atomics_39),
      cmocka_unit_test(test_libdevice_64),
  };
  int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  tri_context_destroy(g_ctx);
  return rc;
}
