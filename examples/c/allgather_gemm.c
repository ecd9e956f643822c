/* allgather_gemm: C = A @ B on every rank of a team of TRI_RANKS ranks, where rank r starts
 * with only rows [r*M/R, (r+1)*M/R) of A; the kernel gathers A while it multiplies
 * (examples/allgather_gemm.tri). On the host targets the ranks are threads of this process; on
 * "cuda" each rank is a process on its own GPU. Every rank's C is checked against a plain C
 * product, and every rank's signals against the tiles that must have arrived. */
#include "team.h"

static const int64_t BM = 16, BN = 32, BK = 16;
static int64_t M, N, K, MR;
static float *a_full, *b_host;
static double* want;

static void setup(uint32_t R) {
  /* M a multiple of R * BM: every tile of C takes its rows from one rank's shard. */
  const int64_t per = ex_small() ? 4 : 8; /* tile rows of C in all: at least `per` */
  M = BM * R * (R >= per ? 1 : per / R), N = ex_small() ? 64 : 96, K = ex_small() ? 48 : 160;
  MR = M / R;
  a_full = malloc(M * K * 4);
  b_host = malloc(K * N * 4);
  for (int64_t i = 0; i < M * K; ++i) a_full[i] = ex_rand(-1, 1);
  for (int64_t i = 0; i < K * N; ++i) b_host[i] = ex_rand(-1, 1);
  want = ex_matmul_ref(a_full, b_host, M, N, K);
}

static uint32_t grid(void) { return (uint32_t)(1 + ((M + BM - 1) / BM) * ((N + BN - 1) / BN)); }

static tri_kernel* compile(void) {
  ex_const consts[] = {{"BM", BM}, {"BN", BN}, {"BK", BK}};
  return ex_compile("allgather_gemm.tri", "allgather_gemm", consts, 3);
}

/* Rank r's C, and its signals: every other shard arrived whole (the signals count its put tiles). */
static int check_rank(uint32_t r, uint32_t R, const float* c, const int32_t* sig) {
  char what[32];
  snprintf(what, sizeof what, "rank %u C", r);
  if (!ex_close(what, c, want, M * N)) return 0;
  for (uint32_t s = 0; s < R; ++s)
    if (s != r && sig[s] != (int32_t)(((MR + BM - 1) / BM) * ((K + BK - 1) / BK))) {
      fprintf(stderr, "rank %u: signal of shard %u is %d\n", r, s, sig[s]);
      return 0;
    }
  return 1;
}

static void fill_args(tri_arg* ra, void* a, const void* b, void* c, void* sig, uint32_t R) {
  ra[0] = ex_ptr(a, (size_t)(M * K * 4), TRI_DTYPE_F32);
  ra[1] = ex_ptr(b, (size_t)(K * N * 4), TRI_DTYPE_F32);
  ra[2] = ex_ptr(c, (size_t)(M * N * 4), TRI_DTYPE_F32);
  ra[3] = ex_ptr(sig, R * 4, TRI_DTYPE_I32);
  ra[4] = ex_i32(M);
  ra[5] = ex_i32(N);
  ra[6] = ex_i32(K);
}

/* One GPU rank (a process of its own). */
static int gpu_rank(uint32_t r, uint32_t R, tri_team* team) {
  uint64_t a_off, sig_off;
  void *a, *sig;
  float* b = ex_malloc((size_t)(K * N * 4));
  float* c = ex_calloc((size_t)(M * N), 4);
  int32_t* sig_host = malloc(R * 4);
  tri_arg args[7];
  tri_kernel* k;
  int ok;
  double t0, t;
  EX_CHECK(tri_team_alloc(team, (uint64_t)(M * K * 4), &a_off));
  EX_CHECK(tri_team_alloc(team, R * 4, &sig_off));
  a = ex_team_ptr(team, r, a_off);
  sig = ex_team_ptr(team, r, sig_off);
  ex_to_device((float*)a + r * MR * K, a_full + r * MR * K, (size_t)(MR * K * 4));
  memcpy(b, b_host, (size_t)(K * N * 4));
  fill_args(args, a, b, c, sig, R);
  k = compile();
  EX_CHECK(tri_team_barrier(team)); /* every rank's shard is in place before any peer reads it */
  t0 = ex_now();
  EX_CHECK(tri_team_launch(k, team, grid(), 1, 1, args, 7));
  t = ex_now() - t0;
  ex_from_device(sig_host, sig, R * 4);
  ok = check_rank(r, R, c, sig_host);
  if (r == 0) {
    char name[40];
    snprintf(name, sizeof name, "allgather_gemm/%u", R);
    ex_report(name, ok, t, 0, 2.0 * M * N * K * R);
  }
  tri_kernel_destroy(k);
  ex_free(b), ex_free(c), free(sig_host);
  return ok;
}

int main(void) {
  const uint32_t R = ex_ranks();
  setup(R);
  if (ex_gpu()) {
    int bad = ex_gpu_ranks(R, (uint64_t)(M * K * 4 + 4096), gpu_rank);
    free(a_full), free(b_host), free(want);
    return bad;
  }
  tri_team* team = ex_team(R, (uint64_t)(M * K * 4 + 4096));
  uint64_t a_off, sig_off;
  EX_CHECK(tri_team_alloc(team, (uint64_t)(M * K * 4), &a_off));
  EX_CHECK(tri_team_alloc(team, R * 4, &sig_off));
  float** c = malloc(R * sizeof(float*));
  tri_arg* args = malloc(R * 7 * sizeof(tri_arg));
  for (uint32_t r = 0; r < R; ++r) {
    /* Rank r's copy of A holds its own shard only; the kernel brings the others. */
    float* a = ex_team_ptr(team, r, a_off);
    memcpy(a + r * MR * K, a_full + r * MR * K, (size_t)(MR * K * 4));
    c[r] = calloc((size_t)(M * N), 4);
    fill_args(args + r * 7, a, b_host, c[r], ex_team_ptr(team, r, sig_off), R);
  }
  tri_kernel* k = compile();
  double t0 = ex_now();
  EX_CHECK(tri_team_launch(k, team, grid(), 1, 1, args, 7));
  double t = ex_now() - t0;
  int ok = 1;
  for (uint32_t r = 0; r < R && ok; ++r) ok = check_rank(r, R, c[r], ex_team_ptr(team, r, sig_off));
  char name[40];
  snprintf(name, sizeof name, "allgather_gemm/%u", R);
  ex_report(name, ok, t, 0, 2.0 * M * N * K * R);
  tri_kernel_destroy(k);
  for (uint32_t r = 0; r < R; ++r) free(c[r]);
  free(c), free(args), free(a_full), free(b_host), free(want);
  tri_team_destroy(team);
  return ok ? 0 : 1;
}
