// Program instances and structured control flow: the grid's order (x fastest, then y, then z),
// program_id/num_programs, `for` with block-valued carried values (zero trips, non-dividing and
// huge bounds that must not wrap, i64 induction, bad steps), `if` with and without else, `while`
// (a Collatz count), device calls (several results, nesting, inside loops, pointer provenance
// into the callee, runaway recursion) and the pass-through hint ops.
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "test_main.h"

using namespace tri_test;

namespace {

void grid_order_and_ids(void**) {
  // Each instance takes a ticket from an atomic counter and records its linear id at that slot,
  // and writes (pid, num_programs) for each axis at its own slot.
  KB kb;
  ValueId order = kb.param("order", kb.ptr(Scalar::I32));
  ValueId ids = kb.param("ids", kb.ptr(Scalar::I32));
  ValueId counter = kb.param("counter", kb.ptr(Scalar::I32));
  ValueId x = kb.pid(0), y = kb.pid(1), z = kb.pid(2);
  ValueId nx = kb.nprog(0), ny = kb.nprog(1), nz = kb.nprog(2);
  ValueId lin = kb.bin(Opcode::Add, x, kb.bin(Opcode::Mul, nx, kb.bin(Opcode::Add, y, kb.bin(Opcode::Mul, ny, z))));
  ValueId ticket = kb.atomic("add", counter, kb.i32(1));
  kb.store(kb.addptr(order, ticket), lin);
  ValueId base = kb.addptr(ids, kb.bin(Opcode::Mul, lin, kb.i32(6)));
  std::vector<ValueId> vals = {x, y, z, nx, ny, nz};
  for (int k = 0; k < 6; ++k) kb.store(kb.addptr(base, kb.i32(k)), vals[k]);
  kb.ret();
  int32_t ord[12], id[72], cnt = 0;
  Grid g;
  g.x = 3;
  g.y = 2;
  g.z = 2;
  assert_true(kb.run(g, {arg_ptr(ord, sizeof ord), arg_ptr(id, sizeof id), arg_ptr(&cnt, 4)}, true).is_ok());
  for (int i = 0; i < 12; ++i) assert_int_equal(ord[i], i);
  for (int zz = 0; zz < 2; ++zz)
    for (int yy = 0; yy < 2; ++yy)
      for (int xx = 0; xx < 3; ++xx) {
        const int32_t* r = id + 6 * (xx + 3 * (yy + 2 * zz));
        const int32_t want[6] = {xx, yy, zz, 3, 2, 2};
        assert_memory_equal(r, want, sizeof want);
      }
}

// for iv in [lo, hi) step s: acc += splat(iv) * arange(4); n += 1. Stores acc (4 lanes) and n.
struct LoopKernel {
  KB kb;
  LoopKernel(Scalar ivs) {
    ValueId lo = kb.param("lo", kb.t(ivs));
    ValueId hi = kb.param("hi", kb.t(ivs));
    ValueId st = kb.param("step", kb.t(ivs));
    ValueId out = kb.param("out", kb.ptr(Scalar::I64));
    ValueId acc0 = kb.c(kb.blk({4}, Scalar::I64), 0);
    ValueId n0 = kb.c(kb.t(Scalar::I32), 0);
    kb.next_loc = Loc{5, 3};
    OpId loop = kb.make(Opcode::For, {lo, hi, st, acc0, n0}, {kb.type(acc0), kb.type(n0)});
    std::vector<ValueId> a = kb.region(loop, {kb.t(ivs), kb.type(acc0), kb.type(n0)});
    ValueId iv64 = ivs == Scalar::I64 ? a[0] : kb.cast(Opcode::SExt, a[0], Scalar::I64);
    ValueId r = kb.cast(Opcode::SExt, kb.arange(0, 4), Scalar::I64);
    ValueId acc = kb.bin(Opcode::Add, a[1], kb.bin(Opcode::Mul, kb.splat(iv64, {4}), r));
    ValueId n = kb.bin(Opcode::Add, a[2], kb.i32(1));
    kb.yield({acc, n});
    kb.end_region();
    ValueId accf = kb.f->ops[loop].results[0], nf = kb.f->ops[loop].results[1];
    kb.store(kb.lanes_of(out, kb.arange(0, 4)), accf);
    kb.store(kb.addptr(out, kb.i32(4)), kb.cast(Opcode::SExt, nf, Scalar::I64));
    kb.ret();
  }
  Status run(int64_t lo, int64_t hi, int64_t step, bool checked = true) {
    return kb.run(Grid{}, {arg_int(lo), arg_int(hi), arg_int(step), arg_ptr(out, sizeof out)}, checked);
  }
  int64_t out[5] = {};
};

void for_loops(void**) {
  struct Case {
    Scalar s;
    int64_t lo, hi, step;
  };
  const Case cases[] = {
      {Scalar::I32, 0, 10, 1},          {Scalar::I32, 3, 17, 5},  {Scalar::I32, 5, 5, 1},
      {Scalar::I32, 9, -3, 2},          {Scalar::I32, -7, 4, 3},  {Scalar::I32, INT_MAX - 5, INT_MAX, 4},
      {Scalar::I32, INT_MIN, INT_MIN + 3, 1},
      {Scalar::I64, (int64_t(1) << 40), (int64_t(1) << 40) + 7, 2},
      {Scalar::I64, INT64_MAX - 10, INT64_MAX, 7},
      {Scalar::I16, -300, 300, 97},
  };
  for (const Case& c : cases) {
    LoopKernel k(c.s);
    Status st = k.run(c.lo, c.hi, c.step);
    if (!st.is_ok()) fail_msg("%s", st.message().c_str());
    int64_t acc[4] = {}, n = 0;
    for (__int128 iv = c.lo; iv < c.hi; iv += c.step) {
      for (int j = 0; j < 4; ++j) acc[j] = static_cast<int64_t>(static_cast<uint64_t>(acc[j]) + static_cast<uint64_t>(iv) * j);
      ++n;
    }
    assert_memory_equal(k.out, acc, sizeof acc);
    assert_int_equal(k.out[4], n);
  }
}

void for_step_must_be_positive(void**) {
  LoopKernel k(Scalar::I32);
  Status st = k.run(0, 10, 0);
  assert_int_equal(st.code(), Code::Runtime);
  assert_string_equal(st.message().c_str(), "t.tri:5:3: error: 'for' step is 0, but it must be positive; program (0, 0, 0)");
  // A loop that would never end is an error in any mode; one that runs no trips only in checked mode.
  st = k.run(0, 10, -2, false);
  assert_string_equal(st.message().c_str(), "t.tri:5:3: error: 'for' step is -2, but it must be positive; program (0, 0, 0)");
  assert_true(k.run(10, 0, -2, false).is_ok());
  assert_int_equal(k.out[4], 0);
  st = k.run(10, 0, -2, true);
  assert_string_equal(st.message().c_str(), "t.tri:5:3: error: 'for' step is -2, but it must be positive; program (0, 0, 0)");
}

void if_with_and_without_else(void**) {
  // r = x > 0 ? (x > 100 ? 2 : 1) : -1, as nested ifs with results; then, without else,
  // out[1] = 7 only when x is even.
  KB kb;
  ValueId x = kb.param("x", kb.t(Scalar::I32));
  ValueId out = kb.param("out", kb.ptr(Scalar::I32));
  TypeId i32 = kb.t(Scalar::I32);
  OpId outer = kb.make(Opcode::If, {kb.cmp("sgt", x, kb.i32(0))}, {i32});
  kb.region(outer, {});
  OpId inner = kb.make(Opcode::If, {kb.cmp("sgt", x, kb.i32(100))}, {i32});
  kb.region(inner, {});
  kb.yield({kb.i32(2)});
  kb.end_region();
  kb.region(inner, {});
  kb.yield({kb.i32(1)});
  kb.end_region();
  kb.yield({kb.f->ops[inner].results[0]});
  kb.end_region();
  kb.region(outer, {});
  kb.yield({kb.i32(-1)});
  kb.end_region();
  kb.store(out, kb.f->ops[outer].results[0]);
  ValueId even = kb.cmp("eq", kb.bin(Opcode::And, x, kb.i32(1)), kb.i32(0));
  OpId side = kb.make(Opcode::If, {even}, {});
  kb.region(side, {});
  kb.store(kb.addptr(out, kb.i32(1)), kb.i32(7));
  kb.yield({});
  kb.end_region();
  kb.ret();
  for (int32_t v : {-5, 0, 1, 50, 101, 1000}) {
    int32_t o[2] = {0, 0};
    assert_true(kb.run(Grid{}, {arg_int(v), arg_ptr(o, 8)}, true).is_ok());
    assert_int_equal(o[0], v > 0 ? (v > 100 ? 2 : 1) : -1);
    assert_int_equal(o[1], v % 2 == 0 ? 7 : 0);
  }
}

void while_collatz(void**) {
  // while (n != 1) { n = n odd ? 3n + 1 : n / 2; steps++ }: the condition region tests n and
  // passes (n, steps) on; the body computes the next pair.
  KB kb;
  ValueId n0 = kb.param("n", kb.t(Scalar::I64));
  ValueId out = kb.param("out", kb.ptr(Scalar::I64));
  TypeId i64 = kb.t(Scalar::I64);
  ValueId zero = kb.c(i64, 0);
  OpId w = kb.make(Opcode::While, {n0, zero}, {i64, i64});
  std::vector<ValueId> a = kb.region(w, {i64, i64});
  ValueId go = kb.cmp("ne", a[0], kb.c(i64, 1));
  kb.make(Opcode::Condition, {go, a[0], a[1]}, {});
  kb.end_region();
  std::vector<ValueId> b = kb.region(w, {i64, i64});
  ValueId odd = kb.cmp("ne", kb.bin(Opcode::And, b[0], kb.c(i64, 1)), kb.c(i64, 0));
  ValueId up = kb.bin(Opcode::Add, kb.bin(Opcode::Mul, b[0], kb.c(i64, 3)), kb.c(i64, 1));
  ValueId down = kb.bin(Opcode::SDiv, b[0], kb.c(i64, 2));
  kb.yield({kb.select(odd, up, down), kb.bin(Opcode::Add, b[1], kb.c(i64, 1))});
  kb.end_region();
  kb.store(out, kb.f->ops[w].results[1]);
  kb.ret();
  for (int64_t v : {1, 2, 7, 27, 97}) {
    int64_t steps = 0;
    assert_true(kb.run(Grid{}, {arg_int(v), arg_ptr(&steps, 8)}, true).is_ok());
    int64_t n = v, want = 0;
    while (n != 1) {
      n = n % 2 ? 3 * n + 1 : n / 2;
      ++want;
    }
    assert_int_equal(steps, want);
  }
}

void device_calls(void**) {
  // @fma2(a, b, c) -> (a*b + c, a - b) on <4 x f32>; @twice(x) calls @fma2(x, 2, 0) and returns
  // its first result. The kernel calls @twice in a loop three times: x * 8.
  KB kb;
  TypeId v4 = kb.blk({4}, Scalar::F32);
  ValueId p = kb.param("p", kb.ptr(Scalar::F32));
  ValueId ptrs = kb.lanes_of(p, kb.arange(0, 4));
  ValueId x = kb.load(ptrs);
  OpId loop = kb.make(Opcode::For, {kb.i32(0), kb.i32(3), kb.i32(1), x}, {v4});
  std::vector<ValueId> a = kb.region(loop, {kb.t(Scalar::I32), v4});
  ValueId t = kb.f->ops[kb.make(Opcode::Call, {a[1]}, {v4}, {Attr::of_func("twice")})].results[0];
  kb.yield({t});
  kb.end_region();
  ValueId y = kb.f->ops[loop].results[0];
  OpId both = kb.make(Opcode::Call, {y, x, x}, {v4, v4}, {Attr::of_func("fma2")});
  kb.store(kb.addptr(ptrs, kb.splat(kb.i32(4), {4})), kb.f->ops[both].results[0]);
  kb.store(kb.addptr(ptrs, kb.splat(kb.i32(8), {4})), kb.f->ops[both].results[1]);
  kb.ret();

  kb.func("fma2", false, {v4, v4});
  ValueId fa = kb.param("a", v4), fb = kb.param("b", v4), fc = kb.param("c", v4);
  kb.ret({kb.bin(Opcode::Add, kb.bin(Opcode::Mul, fa, fb), fc), kb.bin(Opcode::Sub, fa, fb)});

  kb.func("twice", false, {v4});
  ValueId tx = kb.param("x", v4);
  OpId inner = kb.make(Opcode::Call, {tx, kb.cf(v4, 2.0), kb.cf(v4, 0.0)}, {v4, v4}, {Attr::of_func("fma2")});
  kb.ret({kb.f->ops[inner].results[0]});
  kb.use(kb.kernel);

  float buf[12] = {1, -2, 0.5f, 3};
  assert_true(kb.run(Grid{}, {arg_ptr(buf, sizeof buf)}, true).is_ok());
  for (int i = 0; i < 4; ++i) {
    float xi = buf[i], yi = xi * 8;
    assert_true(buf[4 + i] == yi * xi + xi);
    assert_true(buf[8 + i] == yi - xi);
  }
}

void call_keeps_pointer_provenance(void**) {
  // @put(q, i) stores 1 at q + i; the kernel passes its argument %dst, so checked mode bounds
  // the callee's store by %dst's extent and names it.
  KB kb;
  ValueId dst = kb.param("dst", kb.ptr(Scalar::I32));
  ValueId i = kb.param("i", kb.t(Scalar::I32));
  kb.make(Opcode::Call, {dst, i}, {}, {Attr::of_func("put")});
  kb.ret();
  kb.func("put", false);
  ValueId q = kb.param("q", kb.ptr(Scalar::I32));
  ValueId j = kb.param("j", kb.t(Scalar::I32));
  ValueId at = kb.addptr(q, j);
  ValueId one = kb.i32(1);
  kb.next_loc = Loc{40, 2};
  kb.store(at, one);
  kb.ret();
  kb.use(kb.kernel);
  int32_t buf[4] = {};
  assert_true(kb.run(Grid{}, {arg_ptr(buf, 16), arg_int(3)}, true).is_ok());
  assert_int_equal(buf[3], 1);
  Status st = kb.run(Grid{}, {arg_ptr(buf, 16), arg_int(4)}, true);
  std::string want = "t.tri:40:2: error: 'store' writes 4 bytes at " + hexaddr(buf + 4) +
                     ", out of bounds: byte offset 16 of argument %dst (extent 16 bytes); program (0, 0, 0)";
  assert_string_equal(st.message().c_str(), want.c_str());
}

void runaway_recursion(void**) {
  KB kb;
  kb.make(Opcode::Call, {}, {}, {Attr::of_func("r")});
  kb.ret();
  kb.func("r", false);
  kb.next_loc = Loc{50, 1};
  kb.make(Opcode::Call, {}, {}, {Attr::of_func("r")});
  kb.ret();
  kb.use(kb.kernel);
  // The verifier rejects recursion; the interpreter still refuses to overflow its stack on IR
  // that skipped it.
  kb.verify_first = false;
  Status st = kb.run(Grid{}, {});
  assert_int_equal(st.code(), Code::Runtime);
  assert_string_equal(st.message().c_str(), "t.tri:50:1: error: 'call' of @r nests deeper than 256 calls; program (0, 0, 0)");
  // A device function is not a kernel; an unknown callee is refused before anything runs.
  st = tri::interp::run(*kb.m, *kb.m->find("r"), Grid{}, nullptr, 0, tri::interp::Options{});
  assert_int_equal(st.code(), Code::InvalidArgument);
  assert_string_equal(st.message().c_str(), "@r is a device function, not a kernel");
  KB bad;
  bad.verify_first = false;
  bad.next_loc = Loc{2, 2};
  bad.make(Opcode::Call, {}, {}, {Attr::of_func("nowhere")});
  bad.ret();
  st = bad.run(Grid{}, {});
  assert_string_equal(st.message().c_str(), "t.tri:2:2: error: call to unknown device function @nowhere");
}

void hints_pass_through(void**) {
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::I32));
  ValueId r = kb.arange(0, 8);
  ValueId m = kb.op(Opcode::MultipleOf, {r}, kb.type(r), {Attr::of_ints({8})});
  ValueId c = kb.op(Opcode::MaxContiguous, {m}, kb.type(r), {Attr::of_ints({8})});
  kb.make(Opcode::DebugBarrier, {}, {});
  kb.store(kb.lanes_of(p, c), kb.bin(Opcode::Mul, c, c));
  kb.ret();
  int32_t buf[8];
  assert_true(kb.run(Grid{}, {arg_ptr(buf, 32)}, true).is_ok());
  for (int i = 0; i < 8; ++i) assert_int_equal(buf[i], i * i);
}

// Checked mode holds multiple_of and max_contiguous to their words in docs/ir.md.
void hints_checked(void**) {
  // offs[i, j] = shift + i * stride + j * step over <4 x 16>, with the facts
  // multiple_of[1, 16] (each row starts at a multiple of 16) and max_contiguous[1, 8]
  // (runs of 8 consecutive values along each row); then multiple_of[1, 128] (bytes) and
  // max_contiguous[1, 16] for the pointers p + offs.
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::F32), 16);
  ValueId shift = kb.param("shift", kb.t(Scalar::I32));
  ValueId stride = kb.param("stride", kb.t(Scalar::I32));
  ValueId step = kb.param("step", kb.t(Scalar::I32));
  TypeId b2 = kb.blk({4, 16}, Scalar::I32);
  ValueId rows = kb.op(Opcode::Broadcast, {kb.op(Opcode::ExpandDims, {kb.arange(0, 4)}, kb.blk({4, 1}, Scalar::I32), {Attr::of_int(1)})}, b2);
  ValueId cols = kb.op(Opcode::Broadcast, {kb.op(Opcode::ExpandDims, {kb.arange(0, 16)}, kb.blk({1, 16}, Scalar::I32), {Attr::of_int(0)})}, b2);
  ValueId offs = kb.bin(Opcode::Add, kb.splat(shift, {4, 16}),
                        kb.bin(Opcode::Add, kb.bin(Opcode::Mul, rows, kb.splat(stride, {4, 16})),
                               kb.bin(Opcode::Mul, cols, kb.splat(step, {4, 16}))));
  kb.next_loc = Loc{3, 1};
  ValueId m = kb.op(Opcode::MultipleOf, {offs}, b2, {Attr::of_ints({1, 16})});
  kb.next_loc = Loc{4, 1};
  ValueId c = kb.op(Opcode::MaxContiguous, {m}, b2, {Attr::of_ints({1, 8})});
  ValueId ptrs = kb.addptr(kb.splat(p, {4, 16}), c);
  kb.next_loc = Loc{5, 1};
  ValueId pm = kb.op(Opcode::MultipleOf, {ptrs}, kb.type(ptrs), {Attr::of_ints({1, 128})});
  kb.next_loc = Loc{6, 1};
  kb.op(Opcode::MaxContiguous, {pm}, kb.type(ptrs), {Attr::of_ints({1, 16})});
  kb.ret();
  alignas(128) static float buf[256];
  auto run = [&](int shift_v, int stride_v, int step_v, bool checked = true) {
    return kb.run(Grid{}, {arg_ptr(buf, sizeof buf), arg_int(shift_v), arg_int(stride_v), arg_int(step_v)}, checked);
  };
  assert_true(run(0, 32, 1).is_ok());
  assert_true(run(-32, 64, 1).is_ok());
  Status st = run(0, 24, 1);
  assert_string_equal(st.message().c_str(),
                      "t.tri:3:1: error: 'multiple_of' lane [1, 0] of <4 x 16 x i32> is 24, which is not a multiple of 16 "
                      "as the first of a run of 16 along dimension 1; program (0, 0, 0)");
  assert_true(run(0, 24, 1, false).is_ok());  // facts are checked in checked mode only
  st = run(0, 32, 2);
  assert_string_equal(st.message().c_str(),
                      "t.tri:4:1: error: 'max_contiguous' lane [0, 1] of <4 x 16 x i32> is 2 but the lane before it is 0, "
                      "which breaks a run of 8 consecutive values along dimension 1; program (0, 0, 0)");
  // The offsets' facts hold but the pointers' do not: row 0 starts at byte 64, not a multiple of 128.
  st = run(16, 16, 1);
  std::string want = "t.tri:5:1: error: 'multiple_of' lane [0, 0] of <4 x 16 x ptr<f32>> is " + hexaddr(buf + 16) +
                     ", which is not a multiple of 128 as the first of a run of 128 along dimension 1; program (0, 0, 0)";
  assert_string_equal(st.message().c_str(), want.c_str());
  // checked=false (the TTIR importer's hints): not verified even in checked mode.
  KB kb2;
  ValueId q = kb2.param("q", kb2.t(Scalar::I32));
  ValueId qs = kb2.bin(Opcode::Add, kb2.splat(q, {16}), kb2.arange(0, 16));
  kb2.op(Opcode::MaxContiguous, {kb2.op(Opcode::MultipleOf, {qs}, kb2.blk({16}, Scalar::I32),
                                        {Attr::of_ints({16}), Attr::of_bool(false)})},
         kb2.blk({16}, Scalar::I32), {Attr::of_ints({16}), Attr::of_bool(false)});
  kb2.ret();
  assert_true(kb2.run(Grid{}, {arg_int(3)}, true).is_ok());
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(grid_order_and_ids),
      cmocka_unit_test(for_loops),
      cmocka_unit_test(for_step_must_be_positive),
      cmocka_unit_test(if_with_and_without_else),
      cmocka_unit_test(while_collatz),
      cmocka_unit_test(device_calls),
      cmocka_unit_test(call_keeps_pointer_provenance),
      cmocka_unit_test(runaway_recursion),
      cmocka_unit_test(hints_pass_through),
      cmocka_unit_test(hints_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
