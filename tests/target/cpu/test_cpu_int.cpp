// Integer semantics of the CPU backend against C references written from docs/ir.md: wrapping
// arithmetic, division by zero (never traps; value unspecified), INT_MIN / -1, shifts by the
// width or more, unsigned readings, umulhi, min/max and every cmp predicate, for i8 i16 i32 i64
// and i1, on blocks (vectorized loops) and on scalars.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "ir_build.h"
#include "test_main.h"

using namespace tri_test;

namespace {

const Opcode kBinOps[] = {Opcode::Add,  Opcode::Sub,  Opcode::Mul,  Opcode::SDiv, Opcode::UDiv, Opcode::SRem,
                          Opcode::URem, Opcode::CDiv, Opcode::UMulHi, Opcode::And, Opcode::Or,   Opcode::Xor,
                          Opcode::Shl,  Opcode::LShr, Opcode::AShr, Opcode::SMin, Opcode::SMax, Opcode::UMin,
                          Opcode::UMax};
const Opcode kUnOps[] = {Opcode::Neg, Opcode::Abs};
const char* const kPreds[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};

int bits_of(Scalar s) { return s == Scalar::I8 ? 8 : s == Scalar::I16 ? 16 : s == Scalar::I32 ? 32 : 64; }

// Values as int64 sign-extended from `w` bits.
int64_t sx(uint64_t v, int w) {
  if (w == 64) return static_cast<int64_t>(v);
  uint64_t m = (uint64_t(1) << w) - 1;
  v &= m;
  if (v >> (w - 1)) v |= ~m;
  return static_cast<int64_t>(v);
}
uint64_t zx(int64_t v, int w) { return w == 64 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << w) - 1); }

// Reference; returns false when the result is unspecified (division by zero).
bool ref_bin(Opcode op, int64_t a, int64_t b, int w, int64_t* out) {
  const int64_t mn = w == 64 ? INT64_MIN : -(int64_t(1) << (w - 1));
  uint64_t ua = zx(a, w), ub = zx(b, w);
  uint64_t r = 0;
  auto sdiv = [&](int64_t x, int64_t y) -> int64_t {
    if (x == mn && y == -1) return mn;
    return x / y;
  };
  switch (op) {
    case Opcode::Add: r = ua + ub; break;
    case Opcode::Sub: r = ua - ub; break;
    case Opcode::Mul: r = ua * ub; break;
    case Opcode::SDiv: if (b == 0) return false; r = uint64_t(sdiv(a, b)); break;
    case Opcode::UDiv: if (ub == 0) return false; r = ua / ub; break;
    case Opcode::SRem: if (b == 0) return false; r = (a == mn && b == -1) ? 0 : uint64_t(a % b); break;
    case Opcode::URem: if (ub == 0) return false; r = ua % ub; break;
    case Opcode::CDiv: {
      if (b == 0) return false;
      int64_t n = sx(ua + ub - 1, w);
      r = uint64_t(sdiv(n, b));
      break;
    }
    case Opcode::UMulHi: r = uint64_t((static_cast<unsigned __int128>(ua) * ub) >> w); break;
    case Opcode::And: r = ua & ub; break;
    case Opcode::Or: r = ua | ub; break;
    case Opcode::Xor: r = ua ^ ub; break;
    case Opcode::Shl: r = ub >= uint64_t(w) ? 0 : ua << ub; break;
    case Opcode::LShr: r = ub >= uint64_t(w) ? 0 : ua >> ub; break;
    case Opcode::AShr: r = ub >= uint64_t(w) ? uint64_t(a < 0 ? -1 : 0) : uint64_t(a >> ub); break;
    case Opcode::SMin: r = uint64_t(a < b ? a : b); break;
    case Opcode::SMax: r = uint64_t(a > b ? a : b); break;
    case Opcode::UMin: r = ua < ub ? ua : ub; break;
    case Opcode::UMax: r = ua > ub ? ua : ub; break;
    default: return false;
  }
  *out = sx(r, w);
  return true;
}

int64_t ref_un(Opcode op, int64_t a, int w) {
  uint64_t ua = zx(a, w);
  if (op == Opcode::Neg) return sx(0 - ua, w);
  return a < 0 ? sx(0 - ua, w) : a;
}

bool ref_cmp(int p, int64_t a, int64_t b, int w) {
  uint64_t ua = zx(a, w), ub = zx(b, w);
  switch (p) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a < b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return a >= b;
    case 6: return ua < ub;
    case 7: return ua <= ub;
    case 8: return ua > ub;
    default: return ua >= ub;
  }
}

// Pairs of edge values and random values, N of them.
void make_inputs(int w, int n, std::vector<int64_t>* a, std::vector<int64_t>* b) {
  const int64_t mn = w == 64 ? INT64_MIN : -(int64_t(1) << (w - 1));
  const int64_t mx = w == 64 ? INT64_MAX : (int64_t(1) << (w - 1)) - 1;
  std::vector<int64_t> edge = {0, 1, -1, 2, -2, 3, -3, 7, mn, mx, mn + 1, mx - 1, w - 1, w, w + 1, 100, -100, 13};
  for (int64_t x : edge)
    for (int64_t y : edge) {
      a->push_back(sx(zx(x, w), w));
      b->push_back(sx(zx(y, w), w));
    }
  std::mt19937_64 rng(w);
  while (static_cast<int>(a->size()) < n) {
    a->push_back(sx(rng(), w));
    int64_t y = sx(rng(), w);
    if (rng() % 3 == 0) y = sx(rng() % (2 * w), w);  // shift amounts near the width
    b->push_back(y);
  }
  a->resize(n);
  b->resize(n);
}

template <typename T>
void run_type(Scalar s) {
  const int w = bits_of(s);
  const int N = 512;
  const int nb = sizeof(kBinOps) / sizeof(kBinOps[0]), nu = 2, np = 10;
  Mod md;
  Fn f(&md.m, "ints", true);
  ValueId a = f.param(md.p(s), "a"), b = f.param(md.p(s), "b");
  ValueId out = f.param(md.p(s), "out"), cout = f.param(md.p(Scalar::I1), "cmp");
  TypeId bi = md.blk({N}, Scalar::I32);
  TypeId bp = md.blk({N}, md.p(s)), bc = md.blk({N}, md.p(Scalar::I1));
  ValueId offs = f.arange(N);
  ValueId av = f.load(f.addptr(f.splat(a, bp), offs));
  ValueId bv = f.load(f.addptr(f.splat(b, bp), offs));
  TypeId i32 = md.s(Scalar::I32);
  auto slot = [&](ValueId base, TypeId pt, int k) {
    ValueId o = f.bin(Opcode::Add, offs, f.splat(f.cint(i32, int64_t(k) * N), bi));
    return f.addptr(f.splat(base, pt), o);
  };
  int k = 0;
  for (Opcode op : kBinOps) f.store(slot(out, bp, k++), f.bin(op, av, bv));
  for (Opcode op : kUnOps) f.store(slot(out, bp, k++), f.un(op, av));
  for (int p = 0; p < np; ++p) f.store(slot(cout, bc, p), f.cmp(kPreds[p], av, bv));
  f.ret();
  auto kern = compile_or_die(md.m, "ints");
  assert_non_null(kern.get());

  std::vector<int64_t> ai, bi64;
  make_inputs(w, N, &ai, &bi64);
  std::vector<T> A(N), B(N), O((nb + nu) * N);
  std::vector<uint8_t> C(np * N, 7);
  for (int i = 0; i < N; ++i) {
    A[i] = static_cast<T>(ai[i]);
    B[i] = static_cast<T>(bi64[i]);
  }
  tri::ArgValue args[] = {ptr_arg(A.data()), ptr_arg(B.data()), ptr_arg(O.data()), ptr_arg(C.data())};
  assert_true(kern->run(tri::Grid{}, args, 4, nullptr, {}).is_ok());
  int bad = 0;
  for (int j = 0; j < nb; ++j)
    for (int i = 0; i < N; ++i) {
      int64_t want;
      if (!ref_bin(kBinOps[j], ai[i], bi64[i], w, &want)) continue;
      int64_t got = sx(uint64_t(O[j * N + i]), w);
      if (got != want && bad++ < 10)
        std::fprintf(stderr, "i%d %s(%lld, %lld) = %lld, want %lld\n", w, tri::ir::op_info(kBinOps[j]).name.c_str(),
                     (long long)ai[i], (long long)bi64[i], (long long)got, (long long)want);
    }
  for (int j = 0; j < nu; ++j)
    for (int i = 0; i < N; ++i) {
      int64_t want = ref_un(kUnOps[j], ai[i], w);
      int64_t got = sx(uint64_t(O[(nb + j) * N + i]), w);
      if (got != want && bad++ < 10)
        std::fprintf(stderr, "i%d %s(%lld) = %lld, want %lld\n", w, tri::ir::op_info(kUnOps[j]).name.c_str(),
                     (long long)ai[i], (long long)got, (long long)want);
    }
  for (int p = 0; p < np; ++p)
    for (int i = 0; i < N; ++i) {
      uint8_t want = ref_cmp(p, ai[i], bi64[i], w);
      if (C[p * N + i] != want && bad++ < 10)
        std::fprintf(stderr, "i%d cmp %s(%lld, %lld) = %d\n", w, kPreds[p], (long long)ai[i], (long long)bi64[i],
                     C[p * N + i]);
    }
  assert_int_equal(bad, 0);
}

}  // namespace

static void ints_i8(void** state) { run_type<int8_t>(Scalar::I8); }
static void ints_i16(void** state) { run_type<int16_t>(Scalar::I16); }
static void ints_i32(void** state) { run_type<int32_t>(Scalar::I32); }
static void ints_i64(void** state) { run_type<int64_t>(Scalar::I64); }

// The same semantics on scalars (not blocks), where the values are runtime arguments: division
// by zero and INT_MIN / -1 must not trap (x86 idiv would), shifts by >= width are defined.
static void scalar_edges_i32(void** state) {
  Mod md;
  Fn f(&md.m, "s", true);
  ValueId out = f.param(md.p(Scalar::I32), "out");
  ValueId a = f.param(md.s(Scalar::I32), "a"), b = f.param(md.s(Scalar::I32), "b");
  const Opcode ops[] = {Opcode::SDiv, Opcode::SRem, Opcode::UDiv, Opcode::URem, Opcode::CDiv,
                        Opcode::Shl,  Opcode::LShr, Opcode::AShr};
  TypeId i32 = md.s(Scalar::I32);
  for (int k = 0; k < 8; ++k) f.store(f.addptr(out, f.cint(i32, k)), f.bin(ops[k], a, b));
  f.ret();
  auto kern = compile_or_die(md.m, "s");
  assert_non_null(kern.get());
  struct Case { int32_t a, b; } cases[] = {{INT32_MIN, -1}, {7, 0}, {-7, 0}, {INT32_MIN, 0}, {-8, 33},
                                           {-8, 32},        {-8, -1}, {5, 31}, {INT32_MIN, 1}};
  for (const Case& c : cases) {
    int32_t o[8];
    tri::ArgValue args[] = {ptr_arg(o), int_arg(c.a), int_arg(c.b)};
    assert_true(kern->run(tri::Grid{}, args, 3, nullptr, {}).is_ok());
    for (int k = 0; k < 8; ++k) {
      int64_t want;
      if (!ref_bin(ops[k], c.a, c.b, 32, &want)) continue;
      if (o[k] != want)
        fail_msg("%s(%d, %d) = %d, want %lld", tri::ir::op_info(ops[k]).name.c_str(), c.a, c.b, o[k], (long long)want);
    }
  }
}

// i1 is a 1-bit integer: add is xor, true is -1 when read as signed, stored as one byte 0/1.
static void i1_ops(void** state) {
  Mod md;
  Fn f(&md.m, "b", true);
  ValueId a = f.param(md.p(Scalar::I1)), b = f.param(md.p(Scalar::I1)), out = f.param(md.p(Scalar::I1));
  ValueId o8 = f.param(md.p(Scalar::I8));
  TypeId bp = md.blk({4}, md.p(Scalar::I1)), bp8 = md.blk({4}, md.p(Scalar::I8)), bi = md.blk({4}, Scalar::I32);
  TypeId i32 = md.s(Scalar::I32);
  ValueId offs = f.arange(4);
  ValueId av = f.load(f.addptr(f.splat(a, bp), offs)), bv = f.load(f.addptr(f.splat(b, bp), offs));
  const Opcode ops[] = {Opcode::Add, Opcode::Mul, Opcode::And, Opcode::Or, Opcode::Xor, Opcode::Sub};
  for (int k = 0; k < 6; ++k) {
    ValueId o = f.bin(Opcode::Add, offs, f.splat(f.cint(i32, 4 * k), bi));
    f.store(f.addptr(f.splat(out, bp), o), f.bin(ops[k], av, bv));
  }
  f.store(f.addptr(f.splat(o8, bp8), offs), f.cast(Opcode::SExt, av, Scalar::I8));
  ValueId o2 = f.bin(Opcode::Add, offs, f.splat(f.cint(i32, 4), bi));
  f.store(f.addptr(f.splat(o8, bp8), o2), f.cast(Opcode::ZExt, av, Scalar::I8));
  f.ret();
  auto kern = compile_or_die(md.m, "b");
  assert_non_null(kern.get());
  uint8_t A[4] = {0, 0, 1, 2}, B[4] = {0, 1, 0, 255}, O[24], O8[8];  // 2 and 255 read as true
  tri::ArgValue args[] = {ptr_arg(A), ptr_arg(B), ptr_arg(O), ptr_arg(O8)};
  assert_true(kern->run(tri::Grid{}, args, 4, nullptr, {}).is_ok());
  for (int i = 0; i < 4; ++i) {
    bool x = A[i] != 0, y = B[i] != 0;
    bool want[6] = {bool(x ^ y), bool(x & y), bool(x & y), bool(x | y), bool(x ^ y), bool(x ^ y)};
    for (int k = 0; k < 6; ++k) assert_int_equal(O[4 * k + i], want[k] ? 1 : 0);
    assert_int_equal(int8_t(O8[i]), x ? -1 : 0);
    assert_int_equal(O8[4 + i], x ? 1 : 0);
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ints_i8),  cmocka_unit_test(ints_i16),         cmocka_unit_test(ints_i32),
      cmocka_unit_test(ints_i64), cmocka_unit_test(scalar_edges_i32), cmocka_unit_test(i1_ops),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
