/* Helpers for the distributed examples (allgather_gemm.c, gemm_reduce_scatter.c): the number of
 * ranks, a team of host ranks, and a tolerance check. A team runs on the host targets only
 * ("cpu", "interp"): each rank is a group of threads of this process and each rank's symmetric
 * heap is host memory (docs/distributed.md). */
#ifndef TRI_EXAMPLES_TEAM_H_
#define TRI_EXAMPLES_TEAM_H_

#include "common.h"

/* TRI_RANKS (default 4): how many ranks the team has. */
static inline uint32_t ex_ranks(void) {
  const char* s = getenv("TRI_RANKS");
  int n = s && *s ? atoi(s) : 4;
  if (n < 1 || n > 64) {
    fprintf(stderr, "TRI_RANKS must be 1 to 64, not %s\n", s);
    exit(1);
  }
  return (uint32_t)n;
}

static inline tri_team* ex_team(uint32_t ranks, uint64_t heap_bytes) {
  tri_context* ctx;
  tri_team* team;
  if (ex_gpu()) {
    fprintf(stderr, "the distributed examples run on the host targets (cpu, interp): the cuda target needs NVSHMEM\n");
    exit(1);
  }
  EX_CHECK(tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx));
  EX_CHECK(tri_team_create(ctx, ranks, heap_bytes, &team));
  tri_context_destroy(ctx); /* the team keeps it alive */
  /* A wait that never completes fails the launch instead of hanging. */
  EX_CHECK(tri_team_set_wait_timeout(team, 20000));
  return team;
}

static inline void* ex_team_ptr(tri_team* team, uint32_t rank, uint64_t offset) {
  void* p;
  EX_CHECK(tri_team_ptr(team, rank, offset, &p));
  return p;
}

/* |got - want| <= 1e-4 * (1 + |want|) everywhere; prints the first miss. */
static inline int ex_close(const char* what, const float* got, const double* want, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double d = got[i] - want[i];
    if (d < 0) d = -d;
    if (!(d <= 1e-4 * (1.0 + (want[i] < 0 ? -want[i] : want[i])))) {
      fprintf(stderr, "%s[%lld] = %.7g, expected %.7g\n", what, (long long)i, got[i], want[i]);
      return 0;
    }
  }
  return 1;
}

#endif
