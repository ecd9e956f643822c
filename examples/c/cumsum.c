/* cumsum: inclusive prefix sums of the rows of a 512 x 5000 f32 matrix (rows longer than the
 * block, so the kernel carries totals across chunks), checked against a C loop in double. */
#include "common.h"

int main(void) {
  const int rows = ex_small() ? 4 : 512, cols = 5000;
  size_t count = (size_t)rows * cols;
  float* in = ex_malloc(count * 4);
  float* out = ex_calloc(count, 4);
  for (size_t i = 0; i < count; ++i) in[i] = ex_rand(-1, 1);
  ex_const c[] = {{"BLOCK", 1024}};
  tri_kernel* k = ex_compile("cumsum.tri", "cumsum", c, 1);
  tri_arg args[] = {ex_ptr(out, count * 4, TRI_DTYPE_F32), ex_ptr(in, count * 4, TRI_DTYPE_F32), ex_i32(cols),
                    ex_i32(cols), ex_i32(cols)};
  EX_LAUNCH(k, rows, 1, 1, NULL, args, 5);
  int ok = 1;
  for (int r = 0; r < rows; ++r) {
    double s = 0;
    for (int j = 0; j < cols; ++j) {
      s += in[(size_t)r * cols + j];
      ok &= fabs(out[(size_t)r * cols + j] - s) <= 1e-3;
    }
  }
  double t = ex_time(k, rows, 1, args, 5, 9);
  ex_report("cumsum", ok, t, 2.0 * count * 4, 0);
  tri_kernel_destroy(k);
  ex_free(in), ex_free(out);
  return ok ? 0 : 1;
}
