/* matmul_leaky_relu: C = leaky_relu(A @ B) for f16 A (M x K), B (K x N), with sizes that are not
 * multiples of the tile, checked against a C loop in double precision. */
#include "common.h"

int main(void) {
  const int M = ex_small() ? 70 : 300, N = ex_small() ? 40 : 260, K = ex_small() ? 50 : 200;
  const double alpha = 0.01;
  uint16_t* a = ex_malloc((size_t)M * K * 2);
  uint16_t* b = ex_malloc((size_t)K * N * 2);
  uint16_t* c = ex_calloc((size_t)M * N, 2);
  for (size_t i = 0; i < (size_t)M * K; ++i) a[i] = ex_float_to_half(ex_rand(-1, 1));
  for (size_t i = 0; i < (size_t)K * N; ++i) b[i] = ex_float_to_half(ex_rand(-1, 1));
  ex_const cs[] = {{"BM", 64}, {"BN", 64}, {"BK", 32}};
  tri_kernel* k = ex_compile("matmul_leaky_relu.tri", "matmul_leaky_relu", cs, 3);
  tri_arg args[] = {ex_ptr(a, (size_t)M * K * 2, TRI_DTYPE_F16), ex_ptr(b, (size_t)K * N * 2, TRI_DTYPE_F16),
                    ex_ptr(c, (size_t)M * N * 2, TRI_DTYPE_F16), ex_i32(M), ex_i32(N), ex_i32(K),
                    ex_i32(K), ex_i32(1), ex_i32(N), ex_i32(1), ex_i32(N), ex_i32(1)};
  uint32_t grid = (uint32_t)(((M + 63) / 64) * ((N + 63) / 64));
  EX_LAUNCH(k, grid, 1, 1, NULL, args, 12);
  int ok = 1;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int q = 0; q < K; ++q) s += (double)ex_half_to_float(a[(size_t)i * K + q]) * ex_half_to_float(b[(size_t)q * N + j]);
      double ref = s >= 0 ? s : alpha * s;
      ok &= fabs(ex_half_to_float(c[(size_t)i * N + j]) - ref) <= 1e-2 * (1 + fabs(ref));
    }
  double t = ex_time(k, grid, 1, args, 12, 5);
  ex_report("matmul_leaky_relu", ok, t, 0, 2.0 * M * N * K);
  tri_kernel_destroy(k);
  ex_free(a), ex_free(b), ex_free(c);
  return ok ? 0 : 1;
}
