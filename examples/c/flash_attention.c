/* flash_attention: attention forward for f16 Q, K, V of shape [1, 2, 200, 64], with and without
 * the causal mask (a constexpr, so two specializations of one kernel), checked against a C
 * softmax(Q K^T * scale) V in double precision. */
#include "common.h"

enum { Z = 1, H = 2, S = 200, D = 64 };

static int check(const uint16_t* q, const uint16_t* k, const uint16_t* v, const uint16_t* o, double scale, int causal) {
  static double p[S];
  int ok = 1;
  for (int zh = 0; zh < Z * H; ++zh)
    for (int i = 0; i < S; ++i) {
      size_t base = (size_t)zh * S * D;
      double m = -INFINITY, sum = 0;
      for (int j = 0; j < S; ++j) {
        double s = 0;
        for (int d = 0; d < D; ++d) s += (double)ex_half_to_float(q[base + (size_t)i * D + d]) * ex_half_to_float(k[base + (size_t)j * D + d]);
        p[j] = (causal && j > i) ? -INFINITY : s * scale;
        if (p[j] > m) m = p[j];
      }
      for (int j = 0; j < S; ++j) sum += p[j] = exp(p[j] - m);
      for (int d = 0; d < D; ++d) {
        double ref = 0;
        for (int j = 0; j < S; ++j) ref += p[j] / sum * ex_half_to_float(v[base + (size_t)j * D + d]);
        ok &= fabs(ex_half_to_float(o[base + (size_t)i * D + d]) - ref) <= 2e-3 + 1e-2 * fabs(ref);
      }
    }
  return ok;
}

int main(void) {
  size_t count = (size_t)Z * H * S * D, bytes = count * 2;
  uint16_t *q = ex_malloc(bytes), *k = ex_malloc(bytes), *v = ex_malloc(bytes), *o = ex_calloc(count, 2);
  for (size_t i = 0; i < count; ++i) {
    q[i] = ex_float_to_half(ex_rand(-1, 1));
    k[i] = ex_float_to_half(ex_rand(-1, 1));
    v[i] = ex_float_to_half(ex_rand(-1, 1));
  }
  const double scale = 1.0 / sqrt((double)D);
  int all_ok = 1;
  for (int causal = 0; causal <= 1; ++causal) {
    ex_const c[] = {{"BLOCK_M", 64}, {"BLOCK_N", 32}, {"HEAD_DIM", D}, {"CAUSAL", causal}};
    tri_kernel* kern = ex_compile("flash_attention.tri", "flash_attention", c, 4);
    tri_arg args[] = {ex_ptr(q, bytes, TRI_DTYPE_F16), ex_ptr(k, bytes, TRI_DTYPE_F16), ex_ptr(v, bytes, TRI_DTYPE_F16),
                      ex_ptr(o, bytes, TRI_DTYPE_F16), ex_f32(scale), ex_i32((int64_t)H * S * D), ex_i32((int64_t)S * D),
                      ex_i32(D), ex_i32(1), ex_i32(H), ex_i32(S)};
    uint32_t gx = (S + 63) / 64, gy = Z * H;
    memset(o, 0, bytes);
    EX_LAUNCH(kern, gx, gy, 1, NULL, args, 11);
    int ok = check(q, k, v, o, scale, causal);
    all_ok &= ok;
    double t = ex_time(kern, gx, gy, args, 11, 5);
    double flops = 4.0 * Z * H * S * S * D * (causal ? 0.5 : 1.0);
    ex_report(causal ? "flash_attn causal" : "flash_attention", ok, t, 0, flops);
    tri_kernel_destroy(kern);
  }
  ex_free(q), ex_free(k), ex_free(v), ex_free(o);
  return all_ok ? 0 : 1;
}
