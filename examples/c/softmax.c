/* softmax: fused row softmax of a 4096 x 1000 f32 matrix (rows padded to a block of 1024),
 * checked against a C loop in double precision. */
#include "common.h"

int main(void) {
  const int rows = ex_small() ? 8 : 4096, cols = 1000, stride = 1000;
  float* in = ex_malloc((size_t)rows * stride * 4);
  float* out = ex_calloc((size_t)rows * stride, 4);
  for (size_t i = 0; i < (size_t)rows * stride; ++i) in[i] = ex_rand(-8, 8);
  ex_const c[] = {{"BLOCK", 1024}};
  tri_kernel* k = ex_compile("softmax.tri", "softmax", c, 1);
  size_t bytes = (size_t)rows * stride * 4;
  tri_arg args[] = {ex_ptr(out, bytes, TRI_DTYPE_F32), ex_ptr(in, bytes, TRI_DTYPE_F32), ex_i32(stride), ex_i32(stride),
                    ex_i32(cols)};
  EX_LAUNCH(k, rows, 1, 1, NULL, args, 5);
  int ok = 1;
  for (int r = 0; r < rows; ++r) {
    const float* x = in + (size_t)r * stride;
    double m = -INFINITY, s = 0;
    for (int j = 0; j < cols; ++j) m = x[j] > m ? x[j] : m;
    for (int j = 0; j < cols; ++j) s += exp(x[j] - m);
    for (int j = 0; j < cols; ++j) {
      double ref = exp(x[j] - m) / s;
      ok &= fabs(out[(size_t)r * stride + j] - ref) <= 1e-6 + 1e-5 * ref;
    }
  }
  double t = ex_time(k, rows, 1, args, 5, 9);
  ex_report("softmax", ok, t, 2.0 * rows * cols * 4, 0);
  tri_kernel_destroy(k);
  ex_free(in), ex_free(out);
  return ok ? 0 : 1;
}
