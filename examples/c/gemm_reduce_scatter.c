/* gemm_reduce_scatter: C = A @ B over a team of TRI_RANKS host ranks where rank r holds the r-th
 * slice of K (A's columns and B's rows), and rank o receives rows [o*M/R, (o+1)*M/R) of C summed
 * over the ranks; the kernel scatters and reduces while it multiplies
 * (examples/gemm_reduce_scatter.tri). Every rank's rows are checked against a plain C product. */
#include "team.h"

int main(void) {
  const uint32_t R = ex_ranks();
  const int64_t BM = 8, BN = 32, BK = 16;
  const int64_t M = BM * R * (ex_small() ? 2 : 4), N = ex_small() ? 64 : 96, KR = ex_small() ? 16 : 48;
  const int64_t K = KR * R, MR = M / R;
  tri_team* team = ex_team(R, (uint64_t)(R * MR * N * 4 + 4096));
  uint64_t recv_off, sig_off;
  EX_CHECK(tri_team_alloc(team, (uint64_t)(R * MR * N * 4), &recv_off));
  EX_CHECK(tri_team_alloc(team, R * 4, &sig_off));
  float* a = malloc(M * K * 4);
  float* b = malloc(K * N * 4);
  for (int64_t i = 0; i < M * K; ++i) a[i] = ex_rand(-1, 1);
  for (int64_t i = 0; i < K * N; ++i) b[i] = ex_rand(-1, 1);
  double* want = malloc(M * N * sizeof(double));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += (double)a[i * K + k] * b[k * N + j];
      want[i * N + j] = s;
    }
  float** ar = malloc(R * sizeof(float*));
  float** br = malloc(R * sizeof(float*));
  float** out = malloc(R * sizeof(float*));
  tri_arg* args = malloc(R * 8 * sizeof(tri_arg));
  for (uint32_t r = 0; r < R; ++r) {
    /* Rank r's slices: A[:, r*KR:(r+1)*KR] and B[r*KR:(r+1)*KR, :]. */
    ar[r] = malloc(M * KR * 4);
    for (int64_t i = 0; i < M; ++i) memcpy(ar[r] + i * KR, a + i * K + r * KR, (size_t)(KR * 4));
    br[r] = malloc(KR * N * 4);
    memcpy(br[r], b + r * KR * N, (size_t)(KR * N * 4));
    out[r] = calloc((size_t)(MR * N), 4);
    tri_arg* ra = args + r * 8;
    ra[0] = ex_ptr(ar[r], (size_t)(M * KR * 4), TRI_DTYPE_F32);
    ra[1] = ex_ptr(br[r], (size_t)(KR * N * 4), TRI_DTYPE_F32);
    ra[2] = ex_ptr(ex_team_ptr(team, r, recv_off), (size_t)(R * MR * N * 4), TRI_DTYPE_F32);
    ra[3] = ex_ptr(ex_team_ptr(team, r, sig_off), R * 4, TRI_DTYPE_I32);
    ra[4] = ex_ptr(out[r], (size_t)(MR * N * 4), TRI_DTYPE_F32);
    ra[5] = ex_i32(M);
    ra[6] = ex_i32(N);
    ra[7] = ex_i32(KR);
  }
  ex_const consts[] = {{"BM", BM}, {"BN", BN}, {"BK", BK}};
  tri_kernel* k = ex_compile("gemm_reduce_scatter.tri", "gemm_reduce_scatter", consts, 3);
  const uint32_t grid = (uint32_t)((M / BM) * (N / BN) + (MR / BM) * (N / BN));
  double t0 = ex_now();
  EX_CHECK(tri_team_launch(k, team, grid, 1, 1, args, 8));
  double t = ex_now() - t0;
  int ok = 1;
  for (uint32_t r = 0; r < R && ok; ++r) {
    char what[32];
    snprintf(what, sizeof what, "rank %u rows", r);
    ok = ex_close(what, out[r], want + r * MR * N, MR * N);
  }
  char name[48];
  snprintf(name, sizeof name, "gemm_reduce_scatter/%u", R);
  ex_report(name, ok, t, 0, 2.0 * M * N * K);
  tri_kernel_destroy(k);
  for (uint32_t r = 0; r < R; ++r) free(ar[r]), free(br[r]), free(out[r]);
  free(ar), free(br), free(out), free(args), free(a), free(b), free(want);
  tri_team_destroy(team);
  return ok ? 0 : 1;
}
