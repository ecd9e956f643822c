/* gelu: the tanh form of GeLU over 2^24 f32, checked against a C loop in double precision. */
#include "common.h"

int main(void) {
  const int64_t n = ex_small() ? 5000 : 1 << 24, block = ex_small() ? 256 : 4096;
  float* x = ex_malloc(n * 4);
  float* out = ex_calloc(n, 4);
  for (int64_t i = 0; i < n; ++i) x[i] = ex_rand(-6, 6);
  ex_const c[] = {{"BLOCK", block}};
  tri_kernel* k = ex_compile("gelu.tri", "gelu", c, 1);
  tri_arg args[] = {ex_ptr(x, n * 4, TRI_DTYPE_F32), ex_ptr(out, n * 4, TRI_DTYPE_F32), ex_i32(n)};
  uint32_t grid = (uint32_t)((n + block - 1) / block);
  EX_LAUNCH(k, grid, 1, 1, NULL, args, 3);
  int ok = 1;
  double max_err = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i];
    double ref = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    double err = fabs(out[i] - ref);
    if (err > max_err) max_err = err;
    ok &= err <= 1e-5 * (1 + fabs(ref));
  }
  if (!ok) fprintf(stderr, "gelu: max abs error %g\n", max_err);
  double t = ex_time(k, grid, 1, args, 3, 9);
  ex_report("gelu", ok, t, 2.0 * n * 4, 0);
  tri_kernel_destroy(k);
  ex_free(x), ex_free(out);
  return ok ? 0 : 1;
}
