// Pruning before compiling (src/tune/prune.cpp): lower bounds read off specialized IR, checked
// on the matmul example with an H100's limits (227 KB of shared memory, 1024 threads, 65536
// registers per program, 255 per thread).
#include "tune/prune.h"

#include "ir/text.h"
#include "passes/specialize.h"

#include <array>
#include <cstring>

#include "test_main.h"

using namespace tri;

namespace {

const tune::Limits kH100{1024, 232448, 65536, 255, true};

struct Spec {
  std::unique_ptr<ir::Module> m;
  const ir::Function& f() const { return *m->functions[0]; }
};

Spec matmul(int bm, int bn, int bk) {
  std::unique_ptr<ir::Module> src;
  Status st = ir::parse_text(tri_test::read_file(tri_test::source_path("examples/matmul_leaky_relu.tri")),
                             "matmul_leaky_relu.tri", &src);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  std::vector<passes::ConstexprBinding> v = {
      {"BM", ir::Attr::of_int(bm)}, {"BN", ir::Attr::of_int(bn)}, {"BK", ir::Attr::of_int(bk)}};
  Spec s;
  st = passes::specialize(*src, "matmul_leaky_relu", v, {}, &s.m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return s;
}

}  // namespace

static void test_fitting_configs_are_kept(void** state) {
  (void)state;
  // Triton's tutorial configs for H100 all fit.
  for (auto [bm, bn, bk, warps] : std::vector<std::array<int, 4>>{{128, 256, 64, 8}, {128, 128, 64, 4},
                                                                   {64, 256, 32, 4}, {128, 128, 32, 4}}) {
    Spec s = matmul(bm, bn, bk);
    tune::Needs n = tune::estimate(*s.m, s.f(), warps, kH100);
    assert_string_equal(tune::prune_reason(n, kH100, warps).c_str(), "");
    // The accumulator (BM x BN f32, carried by the K loop) spread over the program's threads.
    assert_int_equal(n.registers, int64_t(bm) * bn / (warps * 32));
    assert_int_equal(n.shared_bytes, (int64_t(bm) * bk + int64_t(bk) * bn) * 2);
  }
}

static void test_registers_prune(void** state) {
  (void)state;
  // 256 x 256 f32 at 4 warps: 512 accumulator registers per thread; at 8 warps 256 > 255; at 16
  // warps 128 fits.
  Spec s = matmul(256, 256, 32);
  std::string why = tune::prune_reason(tune::estimate(*s.m, s.f(), 4, kH100), kH100, 4);
  assert_non_null(strstr(why.c_str(), "needs at least 512 registers per thread"));
  assert_non_null(strstr(why.c_str(), "<256 x 256 x f32>"));
  assert_non_null(strstr(why.c_str(), "255 a thread can have at 4 warps"));
  assert_string_not_equal(tune::prune_reason(tune::estimate(*s.m, s.f(), 8, kH100), kH100, 8).c_str(), "");
  assert_string_equal(tune::prune_reason(tune::estimate(*s.m, s.f(), 16, kH100), kH100, 16).c_str(), "");
  // At 32 warps (1024 threads) a thread has 64 registers: 64 accumulator values still fit.
  assert_string_equal(tune::prune_reason(tune::estimate(*s.m, s.f(), 32, kH100), kH100, 32).c_str(), "");
}

static void test_shared_memory_prunes(void** state) {
  (void)state;
  // 256 x 256 tiles with BK 256: (256*256 + 256*256) * 2 bytes = 256 KB of operand tiles.
  Spec s = matmul(256, 256, 256);
  tune::Needs n = tune::estimate(*s.m, s.f(), 32, kH100);
  assert_int_equal(n.shared_bytes, 262144);
  std::string why = tune::prune_reason(n, kH100, 32);
  assert_non_null(strstr(why.c_str(), "262144 bytes of shared memory"));
  assert_non_null(strstr(why.c_str(), "232448"));
  // Without tensor cores (sm_75 and older, or a host) the tiles are not counted.
  tune::Limits old = kH100;
  old.tensor_cores = false;
  assert_int_equal(tune::estimate(*s.m, s.f(), 32, old).shared_bytes, 0);
  // No limits (a host target): nothing is pruned.
  assert_string_equal(tune::prune_reason(n, tune::Limits(), 32).c_str(), "");
}

static void test_threads_prune(void** state) {
  (void)state;
  Spec s = matmul(64, 64, 32);
  tune::Limits small = kH100;
  small.max_threads = 512;
  std::string why = tune::prune_reason(tune::estimate(*s.m, s.f(), 32, small), small, 32);
  assert_string_equal(why.c_str(), "32 warps are 1024 threads, more than the 512 a program can have");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fitting_configs_are_kept),
      cmocka_unit_test(test_registers_prune),
      cmocka_unit_test(test_shared_memory_prunes),
      cmocka_unit_test(test_threads_prune),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
