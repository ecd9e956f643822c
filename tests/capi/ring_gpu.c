/* The signal/wait ordering test on a GPU team (docs/distributed.md): the ring of
 * tests/capi/ring.tri on TRI_RANKS GPUs (default 2), one process per GPU (examples/c/team.h).
 * MODE 0 (put with its signal) and MODE 1 (put, then notify) must hand over every tile intact:
 * a consumer that read a lane before its signal counts it. MODE 2 notifies before the data, and
 * the same count must catch nearly every lane, so the check is not vacuous. Run it under
 * compute-sanitizer (--target-processes all --tool racecheck) too. Prints "skipped: ..." where
 * the machine has fewer GPUs than ranks or no NVSHMEM. */
#include "../../examples/c/team.h"

enum { kIters = 300, kStaleIters = 10 };

static int run_mode(uint32_t r, uint32_t R, tri_team* team, int mode) {
  const int iters = mode == 2 ? kStaleIters : kIters;
  uint64_t buf, dsig, ack;
  /* Fresh, zeroed signals for each mode (tri_team_alloc is collective and zeroes). */
  EX_CHECK(tri_team_alloc(team, 64 * 4, &buf));
  EX_CHECK(tri_team_alloc(team, 4, &dsig));
  EX_CHECK(tri_team_alloc(team, 4, &ack));
  int32_t* errors = ex_malloc(4);
  *errors = -1;
  tri_arg args[5] = {ex_ptr(ex_team_ptr(team, r, buf), 64 * 4, TRI_DTYPE_I32),
                     ex_ptr(ex_team_ptr(team, r, dsig), 4, TRI_DTYPE_I32),
                     ex_ptr(ex_team_ptr(team, r, ack), 4, TRI_DTYPE_I32), ex_ptr(errors, 4, TRI_DTYPE_I32),
                     ex_i32(iters)};
  ex_const mode_const[] = {{"MODE", mode}};
  tri_kernel* k = ex_compile("../tests/capi/ring.tri", "ring", mode_const, 1);
  EX_CHECK(tri_team_launch(k, team, 2, 1, 1, args, 5));
  const long bad = *errors;
  int ok;
  if (mode < 2) {
    ok = bad == 0;
    printf("ring MODE %d rank %u of %u: %d handoffs, %ld lanes read before their data%s\n", mode, r, R, iters, bad,
           ok ? "" : " (FAILED)");
  } else {
    /* Iteration 0 reads zeros (lane 0 of rank 0's tile matches); the others read tile i-1. */
    ok = bad >= (long)(iters - 1) * 64;
    printf("ring MODE 2 rank %u of %u: %ld stale lanes caught of at least %d%s\n", r, R, bad, (iters - 1) * 64,
           ok ? "" : " (FAILED)");
  }
  fflush(stdout);
  tri_kernel_destroy(k);
  ex_free(errors);
  EX_CHECK(tri_team_free(team, ack));
  EX_CHECK(tri_team_free(team, dsig));
  EX_CHECK(tri_team_free(team, buf));
  return ok;
}

static int rank_main(uint32_t r, uint32_t R, tri_team* team) {
  int ok = 1;
  /* A timeout too large to count in nanoseconds means "forever" (issue 29): this one, just past
   * UINT64_MAX / 10^6 ms, wrapped to 0.45 ms on the GPU before, so every wait timed out. */
  EX_CHECK(tri_team_set_wait_timeout(team, 18446744073710ull));
  for (int mode = 0; mode < 3; ++mode) ok = run_mode(r, R, team, mode) && ok;
  return ok;
}

int main(void) {
  if (!ex_gpu()) {
    printf("skipped: the GPU ring runs on TRI_TARGET=cuda (tests/capi/test_team.c runs it on the host targets)\n");
    return 0;
  }
  const uint32_t R = ex_ranks();
  return ex_gpu_ranks(R, 1 << 20, rank_main);
}
