/* argmax: the index of the largest element of each row of a 4096 x 777 f32 matrix, with planted
 * ties (the first index must win), checked exactly against a C loop. */
#include "common.h"

int main(void) {
  const int rows = ex_small() ? 16 : 4096, cols = 777;
  size_t count = (size_t)rows * cols;
  float* in = ex_malloc(count * 4);
  int32_t* out = ex_calloc(rows, 4);
  for (size_t i = 0; i < count; ++i) in[i] = (float)(int)ex_rand(-50, 50);  /* many ties */
  ex_const c[] = {{"BLOCK", 1024}};
  tri_kernel* k = ex_compile("argmax.tri", "argmax", c, 1);
  tri_arg args[] = {ex_ptr(in, count * 4, TRI_DTYPE_F32), ex_ptr(out, rows * 4, TRI_DTYPE_I32), ex_i32(cols), ex_i32(cols)};
  EX_LAUNCH(k, rows, 1, 1, NULL, args, 4);
  int ok = 1;
  for (int r = 0; r < rows; ++r) {
    int best = 0;
    for (int j = 1; j < cols; ++j)
      if (in[(size_t)r * cols + j] > in[(size_t)r * cols + best]) best = j;
    ok &= out[r] == best;
  }
  double t = ex_time(k, rows, 1, args, 4, 9);
  ex_report("argmax", ok, t, (double)count * 4, 0);
  tri_kernel_destroy(k);
  ex_free(in), ex_free(out);
  return ok ? 0 : 1;
}
