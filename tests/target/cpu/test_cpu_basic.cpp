// End-to-end basics of the CPU backend: a vector add over a non-power-of-two length (masks), a
// grid on three axes, scalar arguments of every width, launch errors, and several kernels alive
// at once.
#include <cmath>
#include <cstdio>
#include <vector>

#include "ir_build.h"
#include "test_main.h"

using namespace tri_test;

// out[i] = x[i] + y[i] for i < n, BLOCK lanes per program.
static void build_vadd(Mod& md, const char* name, int64_t block) {
  Fn f(&md.m, name, true);
  ValueId x = f.param(md.p(Scalar::F32), "x", 16);
  ValueId y = f.param(md.p(Scalar::F32), "y", 16);
  ValueId out = f.param(md.p(Scalar::F32), "out", 16);
  ValueId n = f.param(md.s(Scalar::I32), "n");
  auto [xp, mask] = f.block_ptr(x, block, n);
  auto yp = f.block_ptr(y, block, n).first;
  auto op = f.block_ptr(out, block, n).first;
  ValueId xv = f.load(xp, mask);
  ValueId yv = f.load(yp, mask);
  f.store(op, f.bin(Opcode::Add, xv, yv), mask);
  f.ret();
}

static void vadd_masks_tail(void** state) {
  Mod md;
  build_vadd(md, "vadd", 128);
  auto k = compile_or_die(md.m, "vadd");
  assert_non_null(k.get());
  tri::ThreadPool pool(2);
  for (int n : {1, 127, 128, 129, 1000, 4097}) {
    std::vector<float> x(n), y(n), out(n + 64, -7.0f);
    for (int i = 0; i < n; ++i) {
      x[i] = 0.5f * i;
      y[i] = 1.0f / (i + 1);
    }
    tri::ArgValue args[] = {ptr_arg(x.data()), ptr_arg(y.data()), ptr_arg(out.data()), int_arg(n)};
    tri::Grid g;
    g.x = (n + 127) / 128;
    tri::Status st = k->run(g, args, 4, &pool, {});
    assert_true(st.is_ok());
    for (int i = 0; i < n; ++i) assert_true(out[i] == x[i] + y[i]);
    // Lanes past n were masked off: the guard elements after the end are untouched.
    for (int i = n; i < n + 64; ++i) assert_true(out[i] == -7.0f);
  }
}

static void launch_arg_count_is_checked(void** state) {
  Mod md;
  build_vadd(md, "vadd", 16);
  auto k = compile_or_die(md.m, "vadd");
  assert_non_null(k.get());
  tri::ArgValue args[3] = {};
  tri::Status st = k->run(tri::Grid{}, args, 3, nullptr, {});
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::LaunchArgs));
  assert_non_null(std::strstr(st.message().c_str(), "takes 4 arguments, got 3"));
}

// out[z][y][x] = x + 10 * y + 100 * z + bias, one scalar per program; the grid has all 3 axes.
static void grid_three_axes(void** state) {
  Mod md;
  Fn f(&md.m, "grid", true);
  ValueId out = f.param(md.p(Scalar::I64), "out");
  ValueId bias = f.param(md.s(Scalar::I64), "bias");
  TypeId i32 = md.s(Scalar::I32), i64 = md.s(Scalar::I64);
  ValueId x = f.pid(0), y = f.pid(1), z = f.pid(2);
  ValueId nx = f.nprog(0), ny = f.nprog(1);
  ValueId v = f.bin(Opcode::Add, f.bin(Opcode::Add, x, f.bin(Opcode::Mul, y, f.cint(i32, 10))),
                    f.bin(Opcode::Mul, z, f.cint(i32, 100)));
  ValueId lin = f.bin(Opcode::Add, x, f.bin(Opcode::Mul, nx, f.bin(Opcode::Add, y, f.bin(Opcode::Mul, ny, z))));
  ValueId v64 = f.bin(Opcode::Add, f.cast(Opcode::SExt, v, Scalar::I64), bias);
  (void)i64;
  f.store(f.addptr(out, lin), v64);
  f.ret();
  auto k = compile_or_die(md.m, "grid");
  assert_non_null(k.get());
  tri::Grid g{5, 3, 4};
  std::vector<int64_t> buf(60, 0);
  tri::ArgValue args[] = {ptr_arg(buf.data()), int_arg(int64_t(1) << 40)};
  tri::ThreadPool pool(3);
  assert_true(k->run(g, args, 2, &pool, {}).is_ok());
  for (int zz = 0; zz < 4; ++zz)
    for (int yy = 0; yy < 3; ++yy)
      for (int xx = 0; xx < 5; ++xx)
        assert_true(buf[xx + 5 * (yy + 3 * zz)] == xx + 10 * yy + 100 * zz + (int64_t(1) << 40));
}

// Scalars of every type pass through the argument convention (low bits, f32 as its pattern).
static void scalar_args_roundtrip(void** state) {
  const Scalar types[] = {Scalar::I1, Scalar::I8, Scalar::I16, Scalar::I32, Scalar::I64, Scalar::F16,
                          Scalar::BF16, Scalar::F32, Scalar::F64, Scalar::F8E4M3, Scalar::F8E5M2};
  Mod md;
  Fn f(&md.m, "args", true);
  std::vector<ValueId> ptrs, vals;
  for (Scalar s : types) ptrs.push_back(f.param(md.p(s)));
  for (Scalar s : types) vals.push_back(f.param(md.s(s)));
  for (size_t i = 0; i < ptrs.size(); ++i) f.store(ptrs[i], vals[i]);
  f.ret();
  auto k = compile_or_die(md.m, "args");
  assert_non_null(k.get());
  uint8_t b1 = 9, b8 = 0, f8a = 0, f8b = 0;
  uint16_t b16 = 0, h = 0, bf = 0;
  uint32_t b32 = 0, f32 = 0;
  uint64_t b64 = 0, f64 = 0;
  void* outs[] = {&b1, &b8, &b16, &b32, &b64, &h, &bf, &f32, &f64, &f8a, &f8b};
  std::vector<tri::ArgValue> args;
  for (void* p : outs) args.push_back(ptr_arg(p));
  // High garbage bits beyond each width must be ignored.
  uint64_t vals_in[] = {0xffffffffffffff01ull, 0xaaaaaaaaaaaaaa85ull, 0x1234567890ab8001ull, 0xdeadbeef80000001ull,
                        0x8000000000000001ull, 0xffffffffffff3c00ull, 0xffffffffffff3f80ull,
                        0xffffffff00000000ull | f2u(-2.5f), d2u(1e300), 0xffffffffffffff7eull, 0xffffffffffffff7bull};
  for (uint64_t v : vals_in) args.push_back(tri::ArgValue{v, 0});
  assert_true(k->run(tri::Grid{}, args.data(), args.size(), nullptr, {}).is_ok());
  assert_int_equal(b1, 1);
  assert_int_equal(b8, 0x85);
  assert_int_equal(b16, 0x8001);
  assert_int_equal(b32, 0x80000001u);
  assert_true(b64 == 0x8000000000000001ull);
  assert_int_equal(h, 0x3c00);
  assert_int_equal(bf, 0x3f80);
  assert_true(u2f(f32) == -2.5f);
  assert_true(u2d(f64) == 1e300);
  assert_int_equal(f8a, 0x7e);
  assert_int_equal(f8b, 0x7b);
}

// Kernels own their JIT sessions: several live at once, destroyed in any order.
static void kernels_coexist(void** state) {
  Mod md;
  build_vadd(md, "a", 32);
  build_vadd(md, "b", 64);
  auto ka = compile_or_die(md.m, "a");
  auto kb = compile_or_die(md.m, "b");
  auto kc = compile_or_die(md.m, "a");
  assert_true(ka && kb && kc);
  tri::ThreadPool pool(2);
  std::vector<float> x(300, 1.0f), y(300, 2.0f), out(300, 0.0f);
  tri::ArgValue args[] = {ptr_arg(x.data()), ptr_arg(y.data()), ptr_arg(out.data()), int_arg(300)};
  ka.reset();
  assert_true(kb->run(tri::Grid{5, 1, 1}, args, 4, &pool, {}).is_ok());
  for (float v : out) assert_true(v == 3.0f);
  std::fill(out.begin(), out.end(), 0.0f);
  assert_true(kc->run(tri::Grid{10, 1, 1}, args, 4, &pool, {}).is_ok());
  for (float v : out) assert_true(v == 3.0f);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(vadd_masks_tail),       cmocka_unit_test(launch_arg_count_is_checked),
      cmocka_unit_test(grid_three_axes),       cmocka_unit_test(scalar_args_roundtrip),
      cmocka_unit_test(kernels_coexist),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
