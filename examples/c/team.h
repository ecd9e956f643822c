/* Helpers for the distributed examples (allgather_gemm.c, gemm_reduce_scatter.c): the number of
 * ranks, a team of host ranks, GPU ranks as processes, and a tolerance check. On the host
 * targets ("cpu", "interp") each rank is a group of threads of this process and each rank's
 * symmetric heap is host memory; on "cuda" each rank is a child process on its own GPU, and the
 * team is NVSHMEM's (docs/distributed.md). */
#ifndef TRI_EXAMPLES_TEAM_H_
#define TRI_EXAMPLES_TEAM_H_

#include "common.h"

#include <sys/wait.h>
#include <unistd.h>

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
    fprintf(stderr, "ex_team makes host teams; GPU ranks run through ex_gpu_ranks\n");
    exit(1);
  }
  EX_CHECK(tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx));
  EX_CHECK(tri_team_create(ctx, ranks, heap_bytes, &team));
  tri_context_destroy(ctx); /* the team keeps it alive */
  /* A wait that never completes fails the launch instead of hanging. */
  EX_CHECK(tri_team_set_wait_timeout(team, 20000));
  return team;
}

/* Runs rank(r, R, team) in R child processes, rank r on GPU r % (number of GPUs), in a GPU team
 * with heaps of heap_bytes; rank 0 makes the team's id and sends it to the others through pipes.
 * Returns 0 when every rank returned 1. */
static inline int ex_gpu_ranks(uint32_t ranks, uint64_t heap_bytes, int (*rank_fn)(uint32_t, uint32_t, tri_team*)) {
  int pipes[64][2];
  pid_t pids[64];
  int bad = 0;
  {
    /* Skipped (not failed) where the machine cannot run the team: no GPU, fewer GPUs than ranks
     * (NVSHMEM runs one rank per GPU), no NVSHMEM. Asked in a child, so that this process
     * touches no GPU before it forks. */
    pid_t p = fork();
    int st = 0;
    if (p == 0) {
      tri_context* ctx;
      uint32_t gpus = 0;
      unsigned char id[TRI_TEAM_ID_BYTES];
      if (tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx) != TRI_OK) _exit(1);
      if (tri_device_count(ctx, &gpus) != TRI_OK || gpus == 0) {
        printf("skipped: no CUDA device\n");
        fflush(stdout);
        _exit(3);
      }
      if (gpus < ranks) {
        printf("skipped: %u ranks need %u CUDA devices, this machine has %u\n", ranks, ranks, gpus);
        fflush(stdout);
        _exit(3);
      }
      if (tri_team_make_id(ctx, id, sizeof id) != TRI_OK) {
        char why[512];
        tri_last_error_message(why, sizeof why);
        printf("skipped: %s\n", why);
        fflush(stdout);
        _exit(3);
      }
      _exit(0);
    }
    fflush(stdout);
    if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st)) return 1;
    if (WEXITSTATUS(st) == 3) exit(0);
    if (WEXITSTATUS(st) != 0) return 1;
  }
  for (uint32_t r = 0; r < ranks; ++r)
    if (pipe(pipes[r])) {
      perror("pipe");
      return 1;
    }
  fflush(stdout);
  for (uint32_t r = 0; r < ranks; ++r) {
    pids[r] = fork();
    if (pids[r] < 0) {
      perror("fork");
      return 1;
    }
    if (pids[r] == 0) {
      tri_context* ctx;
      tri_team* team;
      unsigned char id[TRI_TEAM_ID_BYTES];
      uint32_t gpus = 0;
      int ok;
      EX_CHECK(tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx));
      EX_CHECK(tri_device_count(ctx, &gpus));
      if (gpus == 0) {
        fprintf(stderr, "rank %u: no CUDA device\n", r);
        _exit(1);
      }
      if (r == 0) {
        EX_CHECK(tri_team_make_id(ctx, id, sizeof id));
        for (uint32_t q = 1; q < ranks; ++q)
          if (write(pipes[q][1], id, sizeof id) != (ssize_t)sizeof id) _exit(1);
      } else if (read(pipes[r][0], id, sizeof id) != (ssize_t)sizeof id) {
        _exit(1);
      }
      EX_CHECK(tri_team_join(ctx, id, sizeof id, r, ranks, r % gpus, heap_bytes, &team));
      tri_context_destroy(ctx); /* the team keeps it alive */
      EX_CHECK(tri_team_set_wait_timeout(team, 20000));
      ex_cu.device = (int)(r % gpus);
      ok = rank_fn(r, ranks, team);
      EX_CHECK(tri_team_barrier(team));
      tri_team_destroy(team);
      fflush(stdout);
      _exit(ok ? 0 : 1);
    }
  }
  for (uint32_t r = 0; r < ranks; ++r) {
    int st = 0;
    if (waitpid(pids[r], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "rank %u failed\n", r);
      bad = 1;
    }
  }
  return bad;
}

/* Copies between the host and a GPU rank's heap (device memory). */
static inline void ex_to_device(void* dst, const void* src, size_t bytes) {
  ex_cuda_init();
  if (ex_cu.htod((uint64_t)(uintptr_t)dst, src, bytes)) {
    fprintf(stderr, "cuMemcpyHtoD failed\n");
    exit(1);
  }
}
static inline void ex_from_device(void* dst, const void* src, size_t bytes) {
  ex_cuda_init();
  if (ex_cu.dtoh(dst, (uint64_t)(uintptr_t)src, bytes)) {
    fprintf(stderr, "cuMemcpyDtoH failed\n");
    exit(1);
  }
}

static inline void* ex_team_ptr(tri_team* team, uint32_t rank, uint64_t offset) {
  void* p;
  EX_CHECK(tri_team_ptr(team, rank, offset, &p));
  return p;
}

/* |got - want| <= 1e-4 * (1 + |want|) everywhere; prints the first miss. */
/* The reference product A (M x K) @ B (K x N) of row-major floats, in double; the caller frees it. */
static inline double* ex_matmul_ref(const float* a, const float* b, int64_t M, int64_t N, int64_t K) {
  double* c = malloc((size_t)(M * N) * sizeof(double));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += (double)a[i * K + k] * b[k * N + j];
      c[i * N + j] = s;
    }
  return c;
}

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
