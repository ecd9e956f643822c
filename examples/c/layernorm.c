/* layernorm: layer norm forward of a 2048 x 1536 f16 matrix with f32 statistics, checked against
 * a C loop in double precision (outputs within f16 rounding). */
#include "common.h"

int main(void) {
  const int rows = ex_small() ? 4 : 2048, n = 1536;
  const double eps = 1e-5;
  size_t count = (size_t)rows * n;
  uint16_t* x = ex_malloc(count * 2);
  uint16_t* y = ex_calloc(count, 2);
  uint16_t* w = ex_malloc(n * 2);
  uint16_t* b = ex_malloc(n * 2);
  float* mean = ex_calloc(rows, 4);
  float* rstd = ex_calloc(rows, 4);
  for (size_t i = 0; i < count; ++i) x[i] = ex_float_to_half(ex_rand(-3, 5));
  for (int i = 0; i < n; ++i) w[i] = ex_float_to_half(ex_rand(0.5f, 1.5f)), b[i] = ex_float_to_half(ex_rand(-1, 1));
  ex_const c[] = {{"BLOCK", 512}};
  tri_kernel* k = ex_compile("layernorm.tri", "layernorm", c, 1);
  tri_arg args[] = {ex_ptr(x, count * 2, TRI_DTYPE_F16), ex_ptr(y, count * 2, TRI_DTYPE_F16),
                    ex_ptr(w, n * 2, TRI_DTYPE_F16),     ex_ptr(b, n * 2, TRI_DTYPE_F16),
                    ex_ptr(mean, rows * 4, TRI_DTYPE_F32), ex_ptr(rstd, rows * 4, TRI_DTYPE_F32),
                    ex_i32(n),                           ex_i32(n),
                    ex_f32(eps)};
  EX_LAUNCH(k, rows, 1, 1, NULL, args, 9);
  int ok = 1;
  for (int r = 0; r < rows && ok; ++r) {
    double m = 0, v = 0;
    for (int j = 0; j < n; ++j) m += ex_half_to_float(x[(size_t)r * n + j]);
    m /= n;
    for (int j = 0; j < n; ++j) {
      double d = ex_half_to_float(x[(size_t)r * n + j]) - m;
      v += d * d;
    }
    v /= n;
    double rs = 1 / sqrt(v + eps);
    ok &= fabs(mean[r] - m) <= 1e-4 && fabs(rstd[r] - rs) <= 1e-4 * rs;
    for (int j = 0; j < n; ++j) {
      double ref = (ex_half_to_float(x[(size_t)r * n + j]) - m) * rs * ex_half_to_float(w[j]) + ex_half_to_float(b[j]);
      ok &= fabs(ex_half_to_float(y[(size_t)r * n + j]) - ref) <= 2e-3 * (1 + fabs(ref));
    }
  }
  double t = ex_time(k, rows, 1, args, 9, 9);
  ex_report("layernorm", ok, t, 2.0 * count * 2, 0);
  tri_kernel_destroy(k);
  ex_free(x), ex_free(y), ex_free(w), ex_free(b), ex_free(mean), ex_free(rstd);
  return ok ? 0 : 1;
}
