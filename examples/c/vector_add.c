/* vector_add: out = x + y for 2^24 f32, checked exactly against a C loop. */
#include "common.h"

int main(void) {
  const int64_t n = ex_small() ? 5000 : 1 << 24, block = ex_small() ? 256 : 4096;
  float* x = ex_malloc(n * 4);
  float* y = ex_malloc(n * 4);
  float* out = ex_calloc(n, 4);
  for (int64_t i = 0; i < n; ++i) x[i] = ex_rand(-1, 1), y[i] = ex_rand(-1, 1);
  ex_const c[] = {{"BLOCK", block}};
  tri_kernel* k = ex_compile("vector_add.tri", "vector_add", c, 1);
  tri_arg args[] = {ex_ptr(x, n * 4, TRI_DTYPE_F32), ex_ptr(y, n * 4, TRI_DTYPE_F32), ex_ptr(out, n * 4, TRI_DTYPE_F32),
                    ex_i32(n)};
  uint32_t grid = (uint32_t)((n + block - 1) / block);
  EX_LAUNCH(k, grid, 1, 1, NULL, args, 4);
  int ok = 1;
  for (int64_t i = 0; i < n; ++i) ok &= out[i] == x[i] + y[i];
  double t = ex_time(k, grid, 1, args, 4, 9);
  ex_report("vector_add", ok, t, 3.0 * n * 4, 0);
  tri_kernel_destroy(k);
  ex_free(x), ex_free(y), ex_free(out);
  return ok ? 0 : 1;
}
