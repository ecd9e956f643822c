/* histogram: counts 2^22 i32 values (some out of range) into 256 bins with atomic adds from many
 * concurrent program instances, checked exactly against a C loop. */
#include "common.h"

int main(void) {
  const int64_t n = ex_small() ? 3000 : 1 << 22, block = 1024;
  enum { BINS = 256 };
  int32_t* values = ex_malloc(n * 4);
  int32_t* bins = ex_calloc(BINS, 4);
  int32_t ref[BINS];
  memset(ref, 0, sizeof ref);
  for (int64_t i = 0; i < n; ++i) {
    values[i] = (int32_t)(ex_rand(0, 1) * ex_rand(0, 1) * 300) - 20;  /* skewed, some < 0 or >= 256 */
    if (values[i] >= 0 && values[i] < BINS) ref[values[i]]++;
  }
  ex_const c[] = {{"BLOCK", block}, {"NUM_BINS", BINS}};
  tri_kernel* k = ex_compile("histogram.tri", "histogram", c, 2);
  tri_arg args[] = {ex_ptr(values, n * 4, TRI_DTYPE_I32), ex_ptr(bins, BINS * 4, TRI_DTYPE_I32), ex_i32(n)};
  uint32_t grid = (uint32_t)((n + block - 1) / block);
  EX_LAUNCH(k, grid, 1, 1, NULL, args, 3);
  int ok = memcmp(bins, ref, sizeof ref) == 0;
  double t = ex_time(k, grid, 1, args, 3, 9);  /* later launches accumulate; only the first was checked */
  ex_report("histogram", ok, t, (double)n * 4, 0);
  tri_kernel_destroy(k);
  ex_free(values);
  ex_free(bins);
  return ok ? 0 : 1;
}
