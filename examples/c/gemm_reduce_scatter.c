/* gemm_reduce_scatter: C = A @ B over a team of TRI_RANKS ranks where rank r holds the r-th
 * slice of K (A's columns and B's rows), and rank o receives rows [o*M/R, (o+1)*M/R) of C summed
 * over the ranks; the kernel scatters and reduces while it multiplies
 * (examples/gemm_reduce_scatter.tri). On the host targets the ranks are threads of this process;
 * on "cuda" each rank is a process on its own GPU. Every rank's rows are checked against a plain
 * C product. */
#include "team.h"

static const int64_t BM = 8, BN = 32, BK = 16;
static int64_t M, N, K, KR, MR;
static float *a_host, *b_host;
static double* want;

static void setup(uint32_t R) {
  M = BM * R * (ex_small() ? 2 : 4), N = ex_small() ? 64 : 96, KR = ex_small() ? 16 : 48;
  K = KR * R, MR = M / R;
  a_host = malloc(M * K * 4);
  b_host = malloc(K * N * 4);
  for (int64_t i = 0; i < M * K; ++i) a_host[i] = ex_rand(-1, 1);
  for (int64_t i = 0; i < K * N; ++i) b_host[i] = ex_rand(-1, 1);
  want = ex_matmul_ref(a_host, b_host, M, N, K);
}

/* Rank r's slices, A[:, r*KR:(r+1)*KR] and B[r*KR:(r+1)*KR, :], into ar and br. */
static void slices(uint32_t r, float* ar, float* br) {
  for (int64_t i = 0; i < M; ++i) memcpy(ar + i * KR, a_host + i * K + r * KR, (size_t)(KR * 4));
  memcpy(br, b_host + r * KR * N, (size_t)(KR * N * 4));
}

static void fill_args(tri_arg* ra, const void* ar, const void* br, void* recv, void* sig, void* out, uint32_t R) {
  ra[0] = ex_ptr(ar, (size_t)(M * KR * 4), TRI_DTYPE_F32);
  ra[1] = ex_ptr(br, (size_t)(KR * N * 4), TRI_DTYPE_F32);
  ra[2] = ex_ptr(recv, (size_t)(R * MR * N * 4), TRI_DTYPE_F32);
  ra[3] = ex_ptr(sig, R * 4, TRI_DTYPE_I32);
  ra[4] = ex_ptr(out, (size_t)(MR * N * 4), TRI_DTYPE_F32);
  ra[5] = ex_i32(M);
  ra[6] = ex_i32(N);
  ra[7] = ex_i32(KR);
}

static uint32_t grid(void) { return (uint32_t)((M / BM) * (N / BN) + (MR / BM) * (N / BN)); }

static tri_kernel* compile(void) {
  ex_const consts[] = {{"BM", BM}, {"BN", BN}, {"BK", BK}};
  return ex_compile("gemm_reduce_scatter.tri", "gemm_reduce_scatter", consts, 3);
}

static int check_rank(uint32_t r, const float* out) {
  char what[32];
  snprintf(what, sizeof what, "rank %u rows", r);
  return ex_close(what, out, want + r * MR * N, MR * N);
}

/* One GPU rank (a process of its own). */
static int gpu_rank(uint32_t r, uint32_t R, tri_team* team) {
  uint64_t recv_off, sig_off;
  float* ar = ex_malloc((size_t)(M * KR * 4));
  float* br = ex_malloc((size_t)(KR * N * 4));
  float* out = ex_calloc((size_t)(MR * N), 4);
  tri_arg args[8];
  tri_kernel* k;
  int ok;
  double t0, t;
  EX_CHECK(tri_team_alloc(team, (uint64_t)(R * MR * N * 4), &recv_off));
  EX_CHECK(tri_team_alloc(team, R * 4, &sig_off));
  slices(r, ar, br);
  fill_args(args, ar, br, ex_team_ptr(team, r, recv_off), ex_team_ptr(team, r, sig_off), out, R);
  k = compile();
  t0 = ex_now();
  EX_CHECK(tri_team_launch(k, team, grid(), 1, 1, args, 8));
  t = ex_now() - t0;
  ok = check_rank(r, out);
  if (r == 0) {
    char name[48];
    snprintf(name, sizeof name, "gemm_reduce_scatter/%u", R);
    ex_report(name, ok, t, 0, 2.0 * M * N * K);
  }
  tri_kernel_destroy(k);
  ex_free(ar), ex_free(br), ex_free(out);
  return ok;
}

int main(void) {
  const uint32_t R = ex_ranks();
  setup(R);
  if (ex_gpu()) {
    int bad = ex_gpu_ranks(R, (uint64_t)(R * MR * N * 4 + 4096), gpu_rank);
    free(a_host), free(b_host), free(want);
    return bad;
  }
  tri_team* team = ex_team(R, (uint64_t)(R * MR * N * 4 + 4096));
  uint64_t recv_off, sig_off;
  EX_CHECK(tri_team_alloc(team, (uint64_t)(R * MR * N * 4), &recv_off));
  EX_CHECK(tri_team_alloc(team, R * 4, &sig_off));
  float** ar = malloc(R * sizeof(float*));
  float** br = malloc(R * sizeof(float*));
  float** out = malloc(R * sizeof(float*));
  tri_arg* args = malloc(R * 8 * sizeof(tri_arg));
  for (uint32_t r = 0; r < R; ++r) {
    ar[r] = malloc(M * KR * 4);
    br[r] = malloc(KR * N * 4);
    slices(r, ar[r], br[r]);
    out[r] = calloc((size_t)(MR * N), 4);
    fill_args(args + r * 8, ar[r], br[r], ex_team_ptr(team, r, recv_off), ex_team_ptr(team, r, sig_off), out[r], R);
  }
  tri_kernel* k = compile();
  double t0 = ex_now();
  EX_CHECK(tri_team_launch(k, team, grid(), 1, 1, args, 8));
  double t = ex_now() - t0;
  int ok = 1;
  for (uint32_t r = 0; r < R && ok; ++r) ok = check_rank(r, out[r]);
  char name[48];
  snprintf(name, sizeof name, "gemm_reduce_scatter/%u", R);
  ex_report(name, ok, t, 0, 2.0 * M * N * K);
  tri_kernel_destroy(k);
  for (uint32_t r = 0; r < R; ++r) free(ar[r]), free(br[r]), free(out[r]);
  free(ar), free(br), free(out), free(args), free(a_host), free(b_host), free(want);
  tri_team_destroy(team);
  return ok ? 0 : 1;
}
