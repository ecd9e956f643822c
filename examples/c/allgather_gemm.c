/* allgather_gemm: C = A @ B on every rank of a team of TRI_RANKS host ranks, where rank r starts
 * with only rows [r*M/R, (r+1)*M/R) of A; the kernel gathers A while it multiplies
 * (examples/allgather_gemm.tri). Every rank's C is checked against a plain C product. */
#include "team.h"

int main(void) {
  const uint32_t R = ex_ranks();
  const int64_t BM = 16, BN = 32, BK = 16;
  /* M a multiple of R * BM: every tile of C takes its rows from one rank's shard. */
  const int64_t per = ex_small() ? 4 : 8; /* tile rows of C in all: at least `per` */
  const int64_t M = BM * R * (R >= per ? 1 : per / R), N = ex_small() ? 64 : 96, K = ex_small() ? 48 : 160;
  const int64_t MR = M / R;
  tri_team* team = ex_team(R, (uint64_t)(M * K * 4 + 4096));
  uint64_t a_off, sig_off;
  EX_CHECK(tri_team_alloc(team, (uint64_t)(M * K * 4), &a_off));
  EX_CHECK(tri_team_alloc(team, R * 4, &sig_off));
  float* a_full = malloc(M * K * 4); /* the reference's A */
  float* b = malloc(K * N * 4);
  for (int64_t i = 0; i < M * K; ++i) a_full[i] = ex_rand(-1, 1);
  for (int64_t i = 0; i < K * N; ++i) b[i] = ex_rand(-1, 1);
  double* want = malloc(M * N * sizeof(double));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += (double)a_full[i * K + k] * b[k * N + j];
      want[i * N + j] = s;
    }
  float** c = malloc(R * sizeof(float*));
  tri_arg* args = malloc(R * 7 * sizeof(tri_arg));
  for (uint32_t r = 0; r < R; ++r) {
    /* Rank r's copy of A holds its own shard only; the kernel brings the others. */
    float* a = ex_team_ptr(team, r, a_off);
    memcpy(a + r * MR * K, a_full + r * MR * K, (size_t)(MR * K * 4));
    c[r] = calloc((size_t)(M * N), 4);
    tri_arg* ra = args + r * 7;
    ra[0] = ex_ptr(a, (size_t)(M * K * 4), TRI_DTYPE_F32);
    ra[1] = ex_ptr(b, (size_t)(K * N * 4), TRI_DTYPE_F32);
    ra[2] = ex_ptr(c[r], (size_t)(M * N * 4), TRI_DTYPE_F32);
    ra[3] = ex_ptr(ex_team_ptr(team, r, sig_off), R * 4, TRI_DTYPE_I32);
    ra[4] = ex_i32(M);
    ra[5] = ex_i32(N);
    ra[6] = ex_i32(K);
  }
  ex_const consts[] = {{"BM", BM}, {"BN", BN}, {"BK", BK}};
  tri_kernel* k = ex_compile("allgather_gemm.tri", "allgather_gemm", consts, 3);
  const uint32_t grid = (uint32_t)(1 + ((M + BM - 1) / BM) * ((N + BN - 1) / BN));
  double t0 = ex_now();
  EX_CHECK(tri_team_launch(k, team, grid, 1, 1, args, 7));
  double t = ex_now() - t0;
  int ok = 1;
  for (uint32_t r = 0; r < R && ok; ++r) {
    char what[32];
    snprintf(what, sizeof what, "rank %u C", r);
    ok = ex_close(what, c[r], want, M * N);
    /* Every shard arrived whole: the signals count the put tiles of each. */
    const int32_t* sig = ex_team_ptr(team, r, sig_off);
    for (uint32_t s = 0; s < R && ok; ++s)
      if (s != r && sig[s] != (int32_t)(((MR + BM - 1) / BM) * ((K + BK - 1) / BK))) {
        fprintf(stderr, "rank %u: signal of shard %u is %d\n", r, s, sig[s]);
        ok = 0;
      }
  }
  char name[40];
  snprintf(name, sizeof name, "allgather_gemm/%u", R);
  ex_report(name, ok, t, 0, 2.0 * M * N * K * R);
  tri_kernel_destroy(k);
  for (uint32_t r = 0; r < R; ++r) free(c[r]);
  free(c), free(args), free(a_full), free(b), free(want);
  tri_team_destroy(team);
  return ok ? 0 : 1;
}
