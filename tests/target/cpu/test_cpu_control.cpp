// Control flow and calls on the CPU backend: for loops with scalar, block and pointer-increment
// carried values (including zero-trip loops and carried values that swap), nested loops, if
// with and without results, while loops, device functions with scalar and block arguments and
// results (nested, and reading program_id), and a tiled matmul kernel that combines them.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "ir_build.h"
#include "test_main.h"

using namespace tri_test;

// out[0] = sum over i = lo, lo+step, ... < hi of i*i (i64 accumulator), out[1] = trip count
static void for_scalar_carries(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId out = f.param(md.p(Scalar::I64));
  ValueId lo = f.param(md.s(Scalar::I32)), hi = f.param(md.s(Scalar::I32)), step = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), i64 = md.s(Scalar::I64);
  ValueId z = f.cint(i64, 0);
  OpId loop = f.op(Opcode::For, {lo, hi, step, z, z}, {i64, i64});
  BlockId body = f.begin_region(loop, {i32, i64, i64});
  ValueId iv = f.cast(Opcode::SExt, f.arg(body, 0), Scalar::I64);
  f.yield({f.bin(Opcode::Add, f.arg(body, 1), f.bin(Opcode::Mul, iv, iv)),
           f.bin(Opcode::Add, f.arg(body, 2), f.cint(i64, 1))});
  f.end_region();
  f.store(out, f.res(loop, 0));
  f.store(f.addptr(out, f.cint(i32, 1)), f.res(loop, 1));
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  struct C { int lo, hi, step; } cases[] = {{0, 10, 1}, {-5, 7, 3}, {4, 4, 1}, {9, 2, 1}, {-100, 100, 7}, {0, 1, 100}};
  for (const C& c : cases) {
    int64_t o[2] = {-1, -1};
    tri::ArgValue args[] = {ptr_arg(o), int_arg(c.lo), int_arg(c.hi), int_arg(c.step)};
    assert_true(k->run(tri::Grid{}, args, 4, nullptr, {}).is_ok());
    int64_t sum = 0, n = 0;
    for (int i = c.lo; i < c.hi; i += c.step) sum += int64_t(i) * i, ++n;
    assert_true(o[0] == sum && o[1] == n);
  }
}

// Carried blocks: a slot (acc += x[i]), a pointer increment (p = addptr(p, 16)), an integer
// offset increment (o = o + 16), and two blocks that swap every iteration.
static void for_block_carries(void** state) {
  const int64_t B = 16;
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId x = f.param(md.p(Scalar::F32)), out = f.param(md.p(Scalar::F32)), n = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), f32 = md.s(Scalar::F32);
  TypeId bf = md.blk({B}, Scalar::F32), bi = md.blk({B}, Scalar::I32), bp = md.blk({B}, md.p(Scalar::F32));
  ValueId offs = f.arange(B);
  ValueId p0 = f.addptr(f.splat(x, bp), offs);
  ValueId acc0 = f.splat(f.cfloat(f32, 0.0), bf);
  ValueId a0 = f.splat(f.cfloat(f32, 1.0), bf);
  ValueId b0 = f.splat(f.cfloat(f32, 2.0), bf);
  OpId loop = f.op(Opcode::For, {f.cint(i32, 0), n, f.cint(i32, 1), acc0, p0, offs, a0, b0}, {bf, bp, bi, bf, bf});
  BlockId body = f.begin_region(loop, {i32, bf, bp, bi, bf, bf});
  ValueId acc = f.arg(body, 1), p = f.arg(body, 2), o = f.arg(body, 3), a = f.arg(body, 4), b = f.arg(body, 5);
  ValueId xv = f.load(p);                                           // x[i*B + lane] via the pointer
  ValueId xo = f.load(f.addptr(f.splat(x, bp), o));                 // the same via the offset
  ValueId acc2 = f.bin(Opcode::Add, acc, f.bin(Opcode::Add, xv, xo));
  ValueId sixteen = f.splat(f.cint(i32, B), bi);
  f.yield({acc2, f.addptr(p, sixteen), f.bin(Opcode::Add, o, sixteen), b, a});
  f.end_region();
  TypeId bpo = bp;
  ValueId op = f.addptr(f.splat(out, bpo), offs);
  f.store(op, f.res(loop, 0));
  f.store(f.addptr(op, f.splat(f.cint(i32, B), bi)), f.res(loop, 3));
  f.store(f.addptr(op, f.splat(f.cint(i32, 2 * B), bi)), f.res(loop, 4));
  // The final pointer: load through it (one block past the last one read).
  f.store(f.addptr(op, f.splat(f.cint(i32, 3 * B), bi)), f.load(f.res(loop, 1)));
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  for (int iters : {0, 1, 5, 6}) {
    std::vector<float> xs((iters + 1) * B);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = float(i) * 0.5f;
    std::vector<float> o(4 * B, -1);
    tri::ArgValue args[] = {ptr_arg(xs.data()), ptr_arg(o.data()), int_arg(iters)};
    assert_true(k->run(tri::Grid{}, args, 3, nullptr, {}).is_ok());
    for (int l = 0; l < B; ++l) {
      float sum = 0;
      for (int i = 0; i < iters; ++i) sum += 2 * xs[i * B + l];
      assert_true(o[l] == sum);
      assert_true(o[B + l] == (iters % 2 ? 2.0f : 1.0f));
      assert_true(o[2 * B + l] == (iters % 2 ? 1.0f : 2.0f));
      assert_true(o[3 * B + l] == xs[iters * B + l]);
    }
  }
}

// Nested loops: out[i][j] accumulated by an inner loop, the outer carrying a block that the
// inner loop's result updates; and an `if` with block and scalar results inside the loop.
static void nested_loops_and_if(void** state) {
  const int64_t B = 8;
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId out = f.param(md.p(Scalar::I32)), n = f.param(md.s(Scalar::I32)), m = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), i1 = md.s(Scalar::I1), bi = md.blk({B}, Scalar::I32);
  ValueId lanes = f.arange(B);
  ValueId zero = f.splat(f.cint(i32, 0), bi);
  OpId outer = f.op(Opcode::For, {f.cint(i32, 0), n, f.cint(i32, 1), zero, f.cint(i32, 0)}, {bi, i32});
  BlockId ob = f.begin_region(outer, {i32, bi, i32});
  ValueId i = f.arg(ob, 0);
  OpId inner = f.op(Opcode::For, {f.cint(i32, 0), m, f.cint(i32, 1), f.arg(ob, 1)}, {bi});
  BlockId ib = f.begin_region(inner, {i32, bi});
  ValueId j = f.arg(ib, 0);
  ValueId t = f.splat(f.bin(Opcode::Add, f.bin(Opcode::Mul, i, f.cint(i32, 10)), j), bi);
  f.yield({f.bin(Opcode::Add, f.arg(ib, 1), f.bin(Opcode::Mul, t, lanes))});
  f.end_region();
  // if (i is odd) { acc + lanes, count + 1 } else { acc, count }
  ValueId odd = f.cmp("eq", f.bin(Opcode::And, i, f.cint(i32, 1)), f.cint(i32, 1));
  (void)i1;
  OpId br = f.op(Opcode::If, {odd}, {bi, i32});
  f.begin_region(br, {});
  f.yield({f.bin(Opcode::Add, f.res(inner, 0), lanes), f.bin(Opcode::Add, f.arg(ob, 2), f.cint(i32, 1))});
  f.end_region();
  f.begin_region(br, {});
  f.yield({f.res(inner, 0), f.arg(ob, 2)});
  f.end_region();
  f.yield({f.res(br, 0), f.res(br, 1)});
  f.end_region();
  f.store(f.addptr(f.splat(out, md.blk({B}, md.p(Scalar::I32))), lanes), f.res(outer, 0));
  // an if without results or else region, storing when n > 3
  OpId side = f.op(Opcode::If, {f.cmp("sgt", n, f.cint(i32, 3))}, {});
  f.begin_region(side, {});
  f.store(f.addptr(out, f.cint(i32, B)), f.res(outer, 1));
  f.yield();
  f.end_region();
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  for (auto [nn, mm] : {std::pair{5, 3}, std::pair{0, 4}, std::pair{4, 0}, std::pair{3, 2}}) {
    std::vector<int32_t> o(B + 1, -7);
    tri::ArgValue args[] = {ptr_arg(o.data()), int_arg(nn), int_arg(mm)};
    assert_true(k->run(tri::Grid{}, args, 3, nullptr, {}).is_ok());
    int count = 0;
    for (int l = 0; l < B; ++l) {
      int32_t acc = 0;
      count = 0;
      for (int ii = 0; ii < nn; ++ii) {
        for (int jj = 0; jj < mm; ++jj) acc += (ii * 10 + jj) * l;
        if (ii & 1) acc += l, ++count;
      }
      assert_int_equal(o[l], acc);
    }
    assert_int_equal(o[B], nn > 3 ? count : -7);
  }
}

// while: the Collatz step count of each argument (scalar carries), and a block halved until its
// maximum drops below a bound (block carries, values passed through `condition`).
static void while_loops(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId out = f.param(md.p(Scalar::I32)), fo = f.param(md.p(Scalar::F32)), x0 = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), f32 = md.s(Scalar::F32), bf = md.blk({8}, Scalar::F32);
  OpId w = f.op(Opcode::While, {x0, f.cint(i32, 0)}, {i32, i32});
  BlockId before = f.begin_region(w, {i32, i32});
  ValueId go = f.cmp("ne", f.arg(before, 0), f.cint(i32, 1));
  f.op(Opcode::Condition, {go, f.arg(before, 0), f.arg(before, 1)}, {});
  f.end_region();
  BlockId after = f.begin_region(w, {i32, i32});
  ValueId x = f.arg(after, 0);
  ValueId even = f.cmp("eq", f.bin(Opcode::And, x, f.cint(i32, 1)), f.cint(i32, 0));
  ValueId half = f.bin(Opcode::SDiv, x, f.cint(i32, 2));
  ValueId trip = f.bin(Opcode::Add, f.bin(Opcode::Mul, x, f.cint(i32, 3)), f.cint(i32, 1));
  f.yield({f.op1(Opcode::Select, {even, half, trip}, i32), f.bin(Opcode::Add, f.arg(after, 1), f.cint(i32, 1))});
  f.end_region();
  f.store(out, f.res(w, 1));
  // block while
  ValueId lanes = f.cast(Opcode::SIToFP, f.arange(8, 1), Scalar::F32);  // 1..8
  ValueId start = f.bin(Opcode::Mul, lanes, f.splat(f.cfloat(f32, 100.0), bf));
  OpId w2 = f.op(Opcode::While, {start}, {bf});
  BlockId b2 = f.begin_region(w2, {bf});
  ValueId mx = f.op1(Opcode::Reduce, {f.arg(b2, 0)}, f32,
                     attrs(Opcode::Reduce, {{"axis", Attr::of_int(0)}, {"kind", enum_attr(Opcode::Reduce, "kind", "max")}}));
  f.op(Opcode::Condition, {f.fcmp("oge", mx, f.cfloat(f32, 3.0)), f.arg(b2, 0)}, {});
  f.end_region();
  BlockId a2 = f.begin_region(w2, {bf});
  f.yield({f.bin(Opcode::Mul, f.arg(a2, 0), f.splat(f.cfloat(f32, 0.5), bf))});
  f.end_region();
  f.store(f.addptr(f.splat(fo, md.blk({8}, md.p(Scalar::F32))), f.arange(8)), f.res(w2, 0));
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  for (int x : {1, 6, 27, 97}) {
    int32_t o = -1;
    std::vector<float> fv(8);
    tri::ArgValue args[] = {ptr_arg(&o), ptr_arg(fv.data()), int_arg(x)};
    assert_true(k->run(tri::Grid{}, args, 3, nullptr, {}).is_ok());
    int steps = 0;
    for (int64_t y = x; y != 1; ++steps) y = (y % 2 == 0) ? y / 2 : 3 * y + 1;
    assert_int_equal(o, steps);
    float v[8];
    for (int l = 0; l < 8; ++l) v[l] = 100.0f * (l + 1);
    while (*std::max_element(v, v + 8) >= 3.0f)
      for (float& e : v) e *= 0.5f;
    for (int l = 0; l < 8; ++l) assert_true(fv[l] == v[l]);
  }
}

// Device functions: @axpy(a, x, y) -> a*x + y on blocks, @stats(x) -> (sum, max) with scalar
// results, @twice calls @axpy (nested), and @where returns program_id.
static void device_functions(void** state) {
  const int64_t B = 32;
  Mod md;
  TypeId f32 = md.s(Scalar::F32), i32 = md.s(Scalar::I32), bf = md.blk({B}, Scalar::F32);
  {
    Fn g(&md.m, "axpy", false);
    ValueId a = g.param(f32), x = g.param(bf), y = g.param(bf);
    g.fn()->results = {bf};
    g.ret({g.bin(Opcode::Add, g.bin(Opcode::Mul, g.splat(a, bf), x), y)});
  }
  {
    Fn g(&md.m, "stats", false);
    ValueId x = g.param(bf);
    g.fn()->results = {f32, f32};
    auto red = [&](const char* kind) {
      return g.op1(Opcode::Reduce, {x}, f32,
                   attrs(Opcode::Reduce, {{"axis", Attr::of_int(0)}, {"kind", enum_attr(Opcode::Reduce, "kind", kind)}}));
    };
    g.ret({red("sum"), red("max")});
  }
  {
    Fn g(&md.m, "twice", false);
    ValueId x = g.param(bf);
    g.fn()->results = {bf};
    ValueId once = g.op1(Opcode::Call, {g.cfloat(f32, 2.0), x, x}, bf, attrs(Opcode::Call, {{"callee", Attr::of_func("axpy")}}));
    g.ret({once});
  }
  {
    Fn g(&md.m, "where", false);
    g.fn()->results = {i32};
    g.ret({g.pid(0)});
  }
  Fn f(&md.m, "k", true);
  ValueId x = f.param(md.p(Scalar::F32)), out = f.param(md.p(Scalar::F32)), io = f.param(md.p(Scalar::I32));
  TypeId bp = md.blk({B}, md.p(Scalar::F32)), bi = md.blk({B}, Scalar::I32);
  ValueId base = f.bin(Opcode::Mul, f.pid(), f.cint(i32, B));
  ValueId offs = f.bin(Opcode::Add, f.splat(base, bi), f.arange(B));
  ValueId xv = f.load(f.addptr(f.splat(x, bp), offs));
  ValueId t = f.op1(Opcode::Call, {xv}, bf, attrs(Opcode::Call, {{"callee", Attr::of_func("twice")}}));  // 3x
  ValueId u = f.op1(Opcode::Call, {f.cfloat(f32, -1.0), xv, t}, bf, attrs(Opcode::Call, {{"callee", Attr::of_func("axpy")}}));  // 2x
  OpId st = f.op(Opcode::Call, {u}, {f32, f32}, attrs(Opcode::Call, {{"callee", Attr::of_func("stats")}}));
  f.store(f.addptr(f.splat(out, bp), offs), u);
  ValueId pid = f.op1(Opcode::Call, {}, i32, attrs(Opcode::Call, {{"callee", Attr::of_func("where")}}));
  ValueId slot = f.bin(Opcode::Mul, f.pid(), f.cint(i32, 3));
  f.store(f.addptr(io, slot), pid);
  f.store(f.addptr(io, f.bin(Opcode::Add, slot, f.cint(i32, 1))), f.cast(Opcode::FPToSI, f.res(st, 0), Scalar::I32));
  f.store(f.addptr(io, f.bin(Opcode::Add, slot, f.cint(i32, 2))), f.cast(Opcode::FPToSI, f.res(st, 1), Scalar::I32));
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  const int P = 7;
  std::vector<float> xs(P * B), o(P * B);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = float(i % 50);
  std::vector<int32_t> io3(P * 3, -1);
  tri::ArgValue args[] = {ptr_arg(xs.data()), ptr_arg(o.data()), ptr_arg(io3.data())};
  tri::ThreadPool pool(2);
  assert_true(k->run(tri::Grid{P, 1, 1}, args, 3, &pool, {}).is_ok());
  for (int p = 0; p < P; ++p) {
    float sum = 0, mx = -1;
    for (int l = 0; l < B; ++l) {
      float want = 2 * xs[p * B + l];
      assert_true(o[p * B + l] == want);
      sum += want;
      mx = std::max(mx, want);
    }
    assert_int_equal(io3[p * 3], p);
    assert_int_equal(io3[p * 3 + 1], int(sum));
    assert_int_equal(io3[p * 3 + 2], int(mx));
  }
}

// C[M x N] = A[M x K] @ B[K x N] in tiles: a grid of (M/BM, N/BN) programs, each looping over K
// with pointer increments and an accumulator, the shape of Triton's matmul tutorial.
static void tiled_matmul(void** state) {
  const int64_t BM = 16, BN = 16, BK = 8;
  Mod md;
  Fn f(&md.m, "mm", true);
  ValueId pa = f.param(md.p(Scalar::F32), "a", 16), pb = f.param(md.p(Scalar::F32), "b", 16);
  ValueId pc = f.param(md.p(Scalar::F32), "c", 16);
  ValueId M = f.param(md.s(Scalar::I32)), N = f.param(md.s(Scalar::I32)), K = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), f32 = md.s(Scalar::F32);
  auto expand = [&](ValueId v, int64_t n, int axis) {
    std::vector<int64_t> shp = axis == 1 ? std::vector<int64_t>{n, 1} : std::vector<int64_t>{1, n};
    return f.op1(Opcode::ExpandDims, {v}, md.blk(shp, Scalar::I32), attrs(Opcode::ExpandDims, {{"axis", Attr::of_int(axis)}}));
  };
  auto bcast = [&](ValueId v, int64_t r, int64_t c) { return f.op1(Opcode::Broadcast, {v}, md.blk({r, c}, Scalar::I32)); };
  ValueId rm = f.bin(Opcode::Add, f.splat(f.bin(Opcode::Mul, f.pid(0), f.cint(i32, BM)), md.blk({BM}, Scalar::I32)), f.arange(BM));
  ValueId rn = f.bin(Opcode::Add, f.splat(f.bin(Opcode::Mul, f.pid(1), f.cint(i32, BN)), md.blk({BN}, Scalar::I32)), f.arange(BN));
  ValueId rk = f.arange(BK);
  // a_ptrs = a + rm[:, None] * K + rk[None, :]; b_ptrs = b + rk[:, None] * N + rn[None, :]
  ValueId a_off = f.bin(Opcode::Add, bcast(f.bin(Opcode::Mul, expand(rm, BM, 1), f.splat(K, md.blk({BM, 1}, Scalar::I32))), BM, BK),
                        bcast(expand(rk, BK, 0), BM, BK));
  ValueId b_off = f.bin(Opcode::Add, bcast(f.bin(Opcode::Mul, expand(rk, BK, 1), f.splat(N, md.blk({BK, 1}, Scalar::I32))), BK, BN),
                        bcast(expand(rn, BN, 0), BK, BN));
  TypeId pa_t = md.blk({BM, BK}, md.p(Scalar::F32)), pb_t = md.blk({BK, BN}, md.p(Scalar::F32));
  ValueId a_ptrs = f.addptr(f.splat(pa, pa_t), a_off), b_ptrs = f.addptr(f.splat(pb, pb_t), b_off);
  TypeId acc_t = md.blk({BM, BN}, Scalar::F32);
  ValueId acc0 = f.splat(f.cfloat(f32, 0.0), acc_t);
  OpId loop = f.op(Opcode::For, {f.cint(i32, 0), K, f.cint(i32, BK), acc0, a_ptrs, b_ptrs}, {acc_t, pa_t, pb_t});
  BlockId body = f.begin_region(loop, {i32, acc_t, pa_t, pb_t});
  ValueId av = f.load(f.arg(body, 2)), bv = f.load(f.arg(body, 3));
  ValueId acc = f.op1(Opcode::Dot, {av, bv, f.arg(body, 1)}, acc_t);
  ValueId a_next = f.addptr(f.arg(body, 2), f.splat(f.cint(i32, BK), md.blk({BM, BK}, Scalar::I32)));
  ValueId b_next = f.addptr(f.arg(body, 3), f.splat(f.bin(Opcode::Mul, N, f.cint(i32, BK)), md.blk({BK, BN}, Scalar::I32)));
  f.yield({acc, a_next, b_next});
  f.end_region();
  ValueId c_off = f.bin(Opcode::Add, bcast(f.bin(Opcode::Mul, expand(rm, BM, 1), f.splat(N, md.blk({BM, 1}, Scalar::I32))), BM, BN),
                        bcast(expand(rn, BN, 0), BM, BN));
  ValueId mask = f.bin(Opcode::And, f.cmp("slt", bcast(expand(rm, BM, 1), BM, BN), f.splat(M, md.blk({BM, BN}, Scalar::I32))),
                       f.cmp("slt", bcast(expand(rn, BN, 0), BM, BN), f.splat(N, md.blk({BM, BN}, Scalar::I32))));
  f.store(f.addptr(f.splat(pc, md.blk({BM, BN}, md.p(Scalar::F32))), c_off), f.res(loop, 0), mask);
  f.ret();
  auto k = compile_or_die(md.m, "mm");
  assert_non_null(k.get());
  // M and N multiples of 16 (the loads are unmasked), K a multiple of 8.
  const int m = 48, n = 32, kk = 40;
  std::vector<float> A(m * kk), Bm(kk * n), C(m * n, -1);
  std::mt19937 rng(1);
  for (auto& v : A) v = float(int(rng() % 17) - 8) * 0.25f;
  for (auto& v : Bm) v = float(int(rng() % 13) - 6) * 0.5f;
  tri::ArgValue args[] = {ptr_arg(A.data()), ptr_arg(Bm.data()), ptr_arg(C.data()), int_arg(m), int_arg(n), int_arg(kk)};
  tri::ThreadPool pool(2);
  assert_true(k->run(tri::Grid{m / 16, n / 16, 1}, args, 6, &pool, {}).is_ok());
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float want = 0;
      for (int t = 0; t < kk; ++t) want += A[i * kk + t] * Bm[t * n + j];  // exact: small multiples of 1/8
      assert_true(C[i * n + j] == want);
    }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(for_scalar_carries), cmocka_unit_test(for_block_carries), cmocka_unit_test(nested_loops_and_if),
      cmocka_unit_test(while_loops),        cmocka_unit_test(device_functions),  cmocka_unit_test(tiled_matmul),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
