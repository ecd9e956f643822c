/* dist_bench: Tri's AllGather+GEMM (bench/dist/ag_gemm.tri) and GEMM+ReduceScatter
 * (bench/dist/gemm_rs.tri) on TRI_RANKS GPUs, one process per GPU (examples/c/team.h), timed
 * with CUDA events and checked on sampled entries of C.
 *
 *   TRI_TARGET=cuda TRI_RANKS=4 dist_bench M NL K [copiers] [iters]      (AllGather+GEMM)
 *   TRI_TARGET=cuda TRI_RANKS=4 dist_bench rs M N K [iters]              (GEMM+ReduceScatter)
 *
 * Each rank prints "ag+gemm rank R: median X ms, gemm alone Y ms, max error E" or "gemm+rs rank
 * R: median X ms, max error E" (the runner, bench/dist/run.py, takes the slowest rank). "gemm
 * alone" is the same kernel with no copier programs and every wait already satisfied: the GEMM's
 * own time on local data. */
#include "../../examples/c/team.h"

static int64_t M, NL, K;
static int COPIERS = 16, ITERS = 20;
static struct {
  int (*alloc)(uint64_t*, size_t);
  int (*event_create)(void**, unsigned);
  int (*record)(void*, void*);
  int (*event_sync)(void*);
  int (*elapsed)(float*, void*, void*);
} cu;

/* Deterministic inputs in [-1, 1), the same on every rank: A(i, k) and B(k, j) by hashing. */
static float val(uint64_t x) {
  x ^= x >> 33, x *= 0xff51afd7ed558ccdull, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull, x ^= x >> 33;
  return ex_half_to_float(ex_float_to_half((float)((double)(x >> 40) / (double)(1ull << 24) * 2.0 - 1.0)));
}
static float a_at(int64_t i, int64_t k) { return val((uint64_t)(i * K + k) * 2 + 1); }
static float b_at(int64_t k, int64_t j) { return val((uint64_t)(k * NL + j) * 2 + 2); }

static int cmp_float(const void* x, const void* y) {
  float a = *(const float*)x, b = *(const float*)y;
  return a < b ? -1 : a > b;
}

static tri_kernel* compile(int copiers) {
  ex_const consts[] = {{"COPIERS", copiers}};
  /* ex_compile reads files under TRI_EXAMPLES_DIR; the bench's kernel lives in bench/dist. */
  return ex_compile("../bench/dist/ag_gemm.tri", "ag_gemm", consts, 1);
}

static double run(tri_kernel* k, tri_team* team, tri_arg* args, uint32_t grid, int* epoch, int iters) {
  float* t = malloc(sizeof(float) * (size_t)iters);
  void *e0, *e1;
  double med;
  cu.event_create(&e0, 0), cu.event_create(&e1, 0);
  for (int i = -3; i < iters; ++i) {
    if (epoch) args[7] = ex_i32(++*epoch);
    EX_CHECK(tri_team_barrier(team));
    cu.record(e0, NULL);
    EX_CHECK(tri_team_launch_async(k, team, grid, 1, 1, args, 8, NULL));
    cu.record(e1, NULL);
    cu.event_sync(e1);
    if (i >= 0) cu.elapsed(&t[i], e0, e1);
  }
  qsort(t, (size_t)iters, sizeof(float), cmp_float);
  med = t[iters / 2];
  free(t);
  return med;
}

static void load_cuda(void) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  *(void**)&cu.alloc = dlsym(h, "cuMemAlloc_v2");
  *(void**)&cu.event_create = dlsym(h, "cuEventCreate");
  *(void**)&cu.record = dlsym(h, "cuEventRecord");
  *(void**)&cu.event_sync = dlsym(h, "cuEventSynchronize");
  *(void**)&cu.elapsed = dlsym(h, "cuEventElapsedTime");
  ex_cuda_init();
}

/* GEMM+ReduceScatter: rank r holds A[:, r*KL .. (r+1)*KL) and B[r*KL .. (r+1)*KL, :] (NL is N
 * here, K the full K), and ends with rows [r*MR, (r+1)*MR) of A @ B. */
enum { RS_BM = 128, RS_BN = 256 };

static int rs_rank_main(uint32_t r, uint32_t R, tri_team* team) {
  const int64_t MR = M / R, KL = K / R, N = NL;
  uint64_t part_off, sig_off, a_dev, b_dev, c_dev;
  uint16_t* ah = malloc((size_t)(M * KL * 2));
  uint16_t* bh = malloc((size_t)(KL * N * 2));
  tri_arg args[9], sargs[6];
  int epoch = 0;
  double worst = 0;
  float t[64];
  void *e0, *e1;
  load_cuda();
  EX_CHECK(tri_team_alloc(team, (uint64_t)(M * N * 2), &part_off));
  EX_CHECK(tri_team_alloc(team, (uint64_t)((MR / RS_BM) * (N / RS_BN) * 4 + 64), &sig_off));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < KL; ++k) ah[i * KL + k] = ex_float_to_half(a_at(i, r * KL + k));
  for (int64_t k = 0; k < KL; ++k)
    for (int64_t j = 0; j < N; ++j) bh[k * N + j] = ex_float_to_half(b_at(r * KL + k, j));
  if (cu.alloc(&a_dev, (size_t)(M * KL * 2)) || cu.alloc(&b_dev, (size_t)(KL * N * 2)) ||
      cu.alloc(&c_dev, (size_t)(MR * N * 2)))
    return 0;
  ex_to_device((void*)(uintptr_t)a_dev, ah, (size_t)(M * KL * 2));
  ex_to_device((void*)(uintptr_t)b_dev, bh, (size_t)(KL * N * 2));
  args[0] = ex_ptr((void*)(uintptr_t)a_dev, (size_t)(M * KL * 2), TRI_DTYPE_F16);
  args[1] = ex_ptr((void*)(uintptr_t)b_dev, (size_t)(KL * N * 2), TRI_DTYPE_F16);
  args[2] = ex_ptr((void*)(uintptr_t)c_dev, (size_t)(MR * N * 2), TRI_DTYPE_F16);
  args[3] = ex_ptr(ex_team_ptr(team, r, part_off), (size_t)(M * N * 2), TRI_DTYPE_F16);
  args[4] = ex_ptr(ex_team_ptr(team, r, sig_off), (size_t)((MR / RS_BM) * (N / RS_BN) * 4), TRI_DTYPE_I32);
  args[5] = ex_i32(M), args[6] = ex_i32(N), args[7] = ex_i32(KL);
  sargs[0] = args[2], sargs[1] = args[3], sargs[2] = args[4], sargs[3] = ex_i32(M), sargs[4] = ex_i32(N);
  ex_const consts[] = {{"BM", RS_BM}, {"BN", RS_BN}};
  tri_kernel* k = ex_compile("../bench/dist/gemm_rs.tri", "gemm_rs", consts, 2);
  tri_kernel* ks = ex_compile("../bench/dist/gemm_rs.tri", "rs_sum", consts, 2);
  const uint32_t tiles = (uint32_t)((M / RS_BM) * (N / RS_BN)), own = tiles / R;
  /* one timed region: the GEMM with its puts, then the sums of this rank's tiles */
  if (ITERS > 64) ITERS = 64;
  cu.event_create(&e0, 0), cu.event_create(&e1, 0);
  for (int i = -3; i < ITERS; ++i) {
    args[8] = sargs[5] = ex_i32(++epoch);
    EX_CHECK(tri_team_barrier(team));
    cu.record(e0, NULL);
    EX_CHECK(tri_team_launch_async(k, team, tiles, 1, 1, args, 9, NULL));
    EX_CHECK(tri_team_launch_async(ks, team, own, 1, 1, sargs, 6, NULL));
    cu.record(e1, NULL);
    cu.event_sync(e1);
    if (i >= 0) cu.elapsed(&t[i], e0, e1);
  }
  qsort(t, (size_t)ITERS, sizeof(float), cmp_float);
  double ms = t[ITERS / 2];
  /* this rank's rows of C after the last launch, on sampled entries */
  for (int s = 0; s < 64; ++s) {
    int64_t i = (int64_t)(val((uint64_t)s * 7 + 11) * 0.5f * (float)MR + (float)MR / 2) % MR;
    int64_t j = (int64_t)(val((uint64_t)s * 13 + 5) * 0.5f * (float)N + (float)N / 2) % N;
    double ref = 0, err;
    uint16_t got;
    for (int64_t q = 0; q < K; ++q) ref += (double)a_at(r * MR + i, q) * b_at(q, j);
    ex_from_device(&got, (char*)(uintptr_t)c_dev + (i * N + j) * 2, 2);
    err = fabs(ex_half_to_float(got) - ref) / (1.0 + fabs(ref));
    if (err > worst) worst = err;
  }
  printf("gemm+rs rank %u: median %.4f ms, max error %.2e\n", r, ms, worst);
  fflush(stdout);
  tri_kernel_destroy(k), tri_kernel_destroy(ks);
  free(ah), free(bh);
  return worst < 2e-2;
}

static int rank_main(uint32_t r, uint32_t R, tri_team* team) {
  const int64_t MR = M / R;
  uint64_t a_off, sig_off, b_dev, c_dev;
  uint16_t* shard = malloc((size_t)(MR * K * 2));
  uint16_t* bh = malloc((size_t)(K * NL * 2));
  tri_arg args[8];
  int epoch = 0;
  double worst = 0;
  load_cuda();
  EX_CHECK(tri_team_alloc(team, (uint64_t)(M * K * 2), &a_off));
  EX_CHECK(tri_team_alloc(team, (uint64_t)(M / 128 * 4 + 64), &sig_off));
  for (int64_t i = 0; i < MR; ++i)
    for (int64_t k = 0; k < K; ++k) shard[i * K + k] = ex_float_to_half(a_at(r * MR + i, k));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < NL; ++j) bh[k * NL + j] = ex_float_to_half(b_at(k, j));
  if (cu.alloc(&b_dev, (size_t)(K * NL * 2)) || cu.alloc(&c_dev, (size_t)(M * NL * 2))) return 0;
  void* a = ex_team_ptr(team, r, a_off);
  ex_to_device((char*)a + r * MR * K * 2, shard, (size_t)(MR * K * 2));
  ex_to_device((void*)(uintptr_t)b_dev, bh, (size_t)(K * NL * 2));
  args[0] = ex_ptr(a, (size_t)(M * K * 2), TRI_DTYPE_F16);
  args[1] = ex_ptr((void*)(uintptr_t)b_dev, (size_t)(K * NL * 2), TRI_DTYPE_F16);
  args[2] = ex_ptr((void*)(uintptr_t)c_dev, (size_t)(M * NL * 2), TRI_DTYPE_F16);
  args[3] = ex_ptr(ex_team_ptr(team, r, sig_off), (size_t)(M / 128 * 4), TRI_DTYPE_I32);
  args[4] = ex_i32(M), args[5] = ex_i32(NL), args[6] = ex_i32(K);
  tri_kernel* k = compile(COPIERS);
  tri_kernel* k0 = compile(0);
  const uint32_t tiles = (uint32_t)((M / 128) * (NL / 256));
  double ms = run(k, team, args, (uint32_t)COPIERS + tiles, &epoch, ITERS);
  /* C of the last launch, on sampled entries */
  uint16_t row[1];
  for (int s = 0; s < 64; ++s) {
    int64_t i = (int64_t)(val((uint64_t)s * 7 + 11) * 0.5f * (float)M + (float)M / 2) % M;
    int64_t j = (int64_t)(val((uint64_t)s * 13 + 5) * 0.5f * (float)NL + (float)NL / 2) % NL;
    double ref = 0, err;
    for (int64_t q = 0; q < K; ++q) ref += (double)a_at(i, q) * b_at(q, j);
    ex_from_device(row, (char*)(uintptr_t)c_dev + (i * NL + j) * 2, 2);
    err = fabs(ex_half_to_float(row[0]) - ref) / (1.0 + fabs(ref));
    if (err > worst) worst = err;
  }
  args[7] = ex_i32(0);
  double gemm = run(k0, team, args, tiles, NULL, ITERS);
  printf("ag+gemm rank %u: median %.4f ms, gemm alone %.4f ms, max error %.2e\n", r, ms, gemm, worst);
  fflush(stdout);
  tri_kernel_destroy(k), tri_kernel_destroy(k0);
  free(shard), free(bh);
  return worst < 2e-2;
}

int main(int argc, char** argv) {
  if (argc >= 5 && strcmp(argv[1], "rs") == 0) {
    M = atoll(argv[2]), NL = atoll(argv[3]), K = atoll(argv[4]);
    if (argc > 5) ITERS = atoi(argv[5]);
    const uint32_t R = ex_ranks();
    if (!ex_gpu() || M % (R * RS_BM) || NL % RS_BN || K % (R * 64)) {
      fprintf(stderr, "dist_bench rs runs on TRI_TARGET=cuda with M a multiple of %d * ranks, N of %d, K of 64 * ranks\n",
              RS_BM, RS_BN);
      return 2;
    }
    return ex_gpu_ranks(R, (uint64_t)(M * NL * 2 + (M / RS_BM) * (NL / RS_BN) * 4 + 4096), rs_rank_main);
  }
  if (argc < 4) {
    fprintf(stderr, "usage: TRI_TARGET=cuda TRI_RANKS=R dist_bench M NL K [copiers] [iters]\n");
    return 2;
  }
  M = atoll(argv[1]), NL = atoll(argv[2]), K = atoll(argv[3]);
  if (argc > 4) COPIERS = atoi(argv[4]);
  if (argc > 5) ITERS = atoi(argv[5]);
  const uint32_t R = ex_ranks();
  if (!ex_gpu() || M % (R * 128) || NL % 256 || K % 64) {
    fprintf(stderr, "dist_bench runs on TRI_TARGET=cuda with M a multiple of 128 * ranks, NL of 256, K of 64\n");
    return 2;
  }
  return ex_gpu_ranks(R, (uint64_t)(M * K * 2 + M / 128 * 4 + 4096), rank_main);
}
