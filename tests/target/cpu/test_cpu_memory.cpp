// Memory on the CPU backend: masked loads and stores over 2-D tiles with non-power-of-two
// extents, with the data placed right before an inaccessible guard page so that a masked-off
// lane touching memory crashes the test; `other` for masked-off lanes; scalar masks; atomics of
// every kind under many concurrent program instances (a histogram, float sums, CAS claims),
// with masks, and on f16 (a compare-and-swap loop).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "float_ref.h"
#include "ir_build.h"
#include "test_main.h"

using namespace tri_test;

namespace {

// `bytes` of memory that end exactly where an unreadable page begins.
struct Guarded {
  uint8_t* base = nullptr;
  size_t map = 0;
  uint8_t* data = nullptr;
  explicit Guarded(size_t bytes) {
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    size_t pages = (bytes + page - 1) / page + 1;
    map = pages * page;
    base = static_cast<uint8_t*>(mmap(nullptr, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(base + (pages - 1) * page, page, PROT_NONE);
    data = base + (pages - 1) * page - bytes;
  }
  ~Guarded() { munmap(base, map); }
  template <typename T>
  T* as() { return reinterpret_cast<T*>(data); }
};

// A [R x C] tile at (pid(0)*R, pid(1)*C) of a rows x cols matrix with row stride `cols`.
struct Tile {
  ValueId ptrs, mask;
};
Tile tile(Mod& md, Fn& f, ValueId base, Scalar e, int64_t R, int64_t C, ValueId rows, ValueId cols) {
  TypeId i32 = md.s(Scalar::I32);
  auto expand = [&](ValueId v, int64_t n, int axis) {
    std::vector<int64_t> shp = axis == 1 ? std::vector<int64_t>{n, 1} : std::vector<int64_t>{1, n};
    return f.op1(Opcode::ExpandDims, {v}, md.blk(shp, Scalar::I32), attrs(Opcode::ExpandDims, {{"axis", Attr::of_int(axis)}}));
  };
  auto bc = [&](ValueId v) { return f.op1(Opcode::Broadcast, {v}, md.blk({R, C}, Scalar::I32)); };
  ValueId r = f.bin(Opcode::Add, f.splat(f.bin(Opcode::Mul, f.pid(0), f.cint(i32, R)), md.blk({R}, Scalar::I32)), f.arange(R));
  ValueId c = f.bin(Opcode::Add, f.splat(f.bin(Opcode::Mul, f.pid(1), f.cint(i32, C)), md.blk({C}, Scalar::I32)), f.arange(C));
  ValueId r2 = bc(expand(r, R, 1)), c2 = bc(expand(c, C, 0));
  TypeId bi = md.blk({R, C}, Scalar::I32);
  ValueId off = f.bin(Opcode::Add, f.bin(Opcode::Mul, r2, f.splat(cols, bi)), c2);
  ValueId mask = f.bin(Opcode::And, f.cmp("slt", r2, f.splat(rows, bi)), f.cmp("slt", c2, f.splat(cols, bi)));
  return {f.addptr(f.splat(base, md.blk({R, C}, md.p(e))), off), mask};
}

}  // namespace

// out = in * 2 + 1 over a 13 x 37 matrix in 8 x 16 tiles; both matrices end at a guard page.
// Masked-off lanes read `other` (-5), which a second output records.
static void masked_tiles_never_touch_memory(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId in = f.param(md.p(Scalar::F32)), out = f.param(md.p(Scalar::F32)), seen = f.param(md.p(Scalar::F32));
  ValueId rows = f.param(md.s(Scalar::I32)), cols = f.param(md.s(Scalar::I32));
  TypeId f32 = md.s(Scalar::F32), bf = md.blk({8, 16}, Scalar::F32);
  Tile ti = tile(md, f, in, Scalar::F32, 8, 16, rows, cols);
  Tile to = tile(md, f, out, Scalar::F32, 8, 16, rows, cols);
  ValueId x = f.load(ti.ptrs, ti.mask, f.splat(f.cfloat(f32, -5.0), bf));
  ValueId y = f.bin(Opcode::Add, f.bin(Opcode::Mul, x, f.splat(f.cfloat(f32, 2.0), bf)), f.splat(f.cfloat(f32, 1.0), bf));
  f.store(to.ptrs, y, to.mask);
  // seen[pid] = sum of x over the tile, masked lanes included (each contributes -5)
  ValueId s = f.op1(Opcode::Reduce, {f.op1(Opcode::Reshape, {x}, md.blk({128}, Scalar::F32))}, f32,
                    attrs(Opcode::Reduce, {{"axis", Attr::of_int(0)}, {"kind", enum_attr(Opcode::Reduce, "kind", "sum")}}));
  ValueId pidlin = f.bin(Opcode::Add, f.bin(Opcode::Mul, f.pid(0), f.nprog(1)), f.pid(1));
  f.store(f.addptr(seen, pidlin), s);
  // a load with a mask and no `other`: only the active lanes are defined; store them back masked
  ValueId x2 = f.load(ti.ptrs, ti.mask);
  f.store(to.ptrs, f.bin(Opcode::Add, y, f.bin(Opcode::Sub, x2, x)), to.mask);
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  const int R = 13, C = 37;
  Guarded gin(R * C * 4), gout(R * C * 4);
  for (int i = 0; i < R * C; ++i) gin.as<float>()[i] = float(i % 97);
  const int gr = (R + 7) / 8, gc = (C + 15) / 16;
  std::vector<float> sums(gr * gc, 0);
  tri::ArgValue args[] = {ptr_arg(gin.data), ptr_arg(gout.data), ptr_arg(sums.data()), int_arg(R), int_arg(C)};
  tri::ThreadPool pool(2);
  assert_true(k->run(tri::Grid{uint32_t(gr), uint32_t(gc), 1}, args, 5, &pool, {}).is_ok());
  for (int i = 0; i < R * C; ++i) assert_true(gout.as<float>()[i] == gin.as<float>()[i] * 2 + 1);
  for (int a = 0; a < gr; ++a)
    for (int b = 0; b < gc; ++b) {
      float want = 0;
      for (int r = a * 8; r < a * 8 + 8; ++r)
        for (int c = b * 16; c < b * 16 + 16; ++c) want += (r < R && c < C) ? gin.as<float>()[r * C + c] : -5.0f;
      assert_true(sums[a * gc + b] == want);
    }
}

// Scalar loads and stores behind a false scalar mask touch nothing (the pointer is unreadable).
static void scalar_masks(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId p = f.param(md.p(Scalar::I64)), out = f.param(md.p(Scalar::I64)), on = f.param(md.s(Scalar::I1));
  ValueId v = f.load(p, on, f.cint(md.s(Scalar::I64), 42));
  f.store(out, v);
  f.store(p, f.cint(md.s(Scalar::I64), 7), on);
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  Guarded g(8);
  int64_t* bad = g.as<int64_t>() + 1;  // the guard page
  int64_t o = 0;
  tri::ArgValue args[] = {ptr_arg(bad), ptr_arg(&o), int_arg(0)};
  assert_true(k->run(tri::Grid{}, args, 3, nullptr, {}).is_ok());
  assert_true(o == 42);
  int64_t cell = 5;
  tri::ArgValue args2[] = {ptr_arg(&cell), ptr_arg(&o), int_arg(1)};
  assert_true(k->run(tri::Grid{}, args2, 3, nullptr, {}).is_ok());
  assert_true(o == 5 && cell == 7);
}

// 512 programs of 256 lanes add 1 to bins[x % 61] (atomic add i32), and x % 4 to one f32 cell
// (atomic fadd; exact, as every partial sum stays below 2^24); the lanes past n are masked off
// and point at a guard page.
static void histogram_and_sums(void** state) {
  const int64_t B = 256;
  Mod md;
  Fn f(&md.m, "hist", true);
  ValueId x = f.param(md.p(Scalar::I32)), bins = f.param(md.p(Scalar::I32)), total = f.param(md.p(Scalar::F32));
  ValueId n = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), bi = md.blk({B}, Scalar::I32);
  auto [xp, mask] = f.block_ptr(x, B, n);
  ValueId xv = f.load(xp, mask, f.splat(f.cint(i32, 0), bi));
  ValueId bin = f.bin(Opcode::URem, xv, f.splat(f.cint(i32, 61), bi));
  ValueId bp = f.addptr(f.splat(bins, md.blk({B}, md.p(Scalar::I32))), bin);
  f.op1(Opcode::Atomic, {bp, f.splat(f.cint(i32, 1), bi), mask}, bi,
        attrs(Opcode::Atomic, {{"kind", enum_attr(Opcode::Atomic, "kind", "add")}, {"order", enum_attr(Opcode::Atomic, "order", "relaxed")}}));
  ValueId tp = f.splat(total, md.blk({B}, md.p(Scalar::F32)));
  ValueId small = f.bin(Opcode::URem, xv, f.splat(f.cint(i32, 4), bi));
  f.op1(Opcode::Atomic, {tp, f.cast(Opcode::SIToFP, small, Scalar::F32), mask}, md.blk({B}, Scalar::F32),
        attrs(Opcode::Atomic, {{"kind", enum_attr(Opcode::Atomic, "kind", "add")}}));
  f.ret();
  auto k = compile_or_die(md.m, "hist");
  assert_non_null(k.get());
  const int n_ = 512 * 256 - 77;
  Guarded gx(n_ * 4);
  for (int i = 0; i < n_; ++i) gx.as<int32_t>()[i] = (i * 7919) % 1000;
  std::vector<int32_t> bins_v(61, 0);
  float total_v = 0;
  tri::ArgValue args[] = {ptr_arg(gx.data), ptr_arg(bins_v.data()), ptr_arg(&total_v), int_arg(n_)};
  tri::ThreadPool pool(4);
  for (int rep = 0; rep < 3; ++rep) {
    std::fill(bins_v.begin(), bins_v.end(), 0);
    total_v = 0;
    assert_true(k->run(tri::Grid{512, 1, 1}, args, 4, &pool, {}).is_ok());
    std::vector<int32_t> want(61, 0);
    double sum = 0;
    for (int i = 0; i < n_; ++i) {
      ++want[gx.as<int32_t>()[i] % 61];
      sum += gx.as<int32_t>()[i] % 4;
    }
    for (int b = 0; b < 61; ++b) assert_int_equal(bins_v[b], want[b]);
    assert_true(double(total_v) == sum);
  }
}

// Every kind on one cell per kind (i32 and i64), from 64 programs x 16 lanes; the returned old
// values of xchg are a permutation-consistent set; CAS claims each slot exactly once.
static void atomic_kinds(void** state) {
  static const char* const kinds[] = {"add", "min", "max", "umin", "umax", "and", "or", "xor", "xchg"};
  for (Scalar s : {Scalar::I32, Scalar::I64}) {
    const int64_t B = 16;
    Mod md;
    Fn f(&md.m, "k", true);
    ValueId cells = f.param(md.p(s)), olds = f.param(md.p(s));
    TypeId t = md.s(s), i32 = md.s(Scalar::I32), bt = md.blk({B}, s), bi = md.blk({B}, Scalar::I32);
    ValueId id = f.bin(Opcode::Add, f.splat(f.bin(Opcode::Mul, f.pid(), f.cint(i32, B)), bi), f.arange(B));  // 0..1023
    ValueId v = f.bin(Opcode::Sub, f.bin(Opcode::Mul, id, f.splat(f.cint(i32, 37), bi)), f.splat(f.cint(i32, 500), bi));
    if (s == Scalar::I64) v = f.cast(Opcode::SExt, v, s);
    for (int k = 0; k < 9; ++k) {
      ValueId p = f.splat(f.addptr(cells, f.cint(i32, k)), md.blk({B}, md.p(s)));
      ValueId old = f.op1(Opcode::Atomic, {p, v, tri::ir::kNoValue}, bt,
                          attrs(Opcode::Atomic, {{"kind", enum_attr(Opcode::Atomic, "kind", kinds[k])}}));
      if (k == 8) f.store(f.addptr(f.splat(olds, md.blk({B}, md.p(s))), id), old);
    }
    (void)t;
    f.ret();
    auto kern = compile_or_die(md.m, "k");
    assert_non_null(kern.get());
    std::vector<int64_t> init = {5, 0, 0, -1, 0, -1, 0, 0, 123};
    std::vector<uint8_t> cells_v(9 * tri::ir::scalar_bits(s) / 8), olds_v(1024 * tri::ir::scalar_bits(s) / 8);
    auto put = [&](std::vector<uint8_t>& b, int i, int64_t x) { std::memcpy(&b[i * (tri::ir::scalar_bits(s) / 8)], &x, tri::ir::scalar_bits(s) / 8); };
    auto get = [&](std::vector<uint8_t>& b, int i) {
      int64_t x = 0;
      std::memcpy(&x, &b[i * (tri::ir::scalar_bits(s) / 8)], tri::ir::scalar_bits(s) / 8);
      if (s == Scalar::I32) x = int32_t(x);
      return x;
    };
    for (int k = 0; k < 9; ++k) put(cells_v, k, init[k]);
    tri::ArgValue args[] = {ptr_arg(cells_v.data()), ptr_arg(olds_v.data())};
    tri::ThreadPool pool(4);
    assert_true(kern->run(tri::Grid{64, 1, 1}, args, 2, &pool, {}).is_ok());
    std::vector<int64_t> vals;
    for (int i = 0; i < 1024; ++i) vals.push_back(int64_t(i) * 37 - 500);
    auto trunc = [&](int64_t x) { return s == Scalar::I32 ? int64_t(int32_t(x)) : x; };
    int64_t add = init[0], mn = init[1], mx = init[2], an = init[5], o = init[6], xo = init[7];
    uint64_t umn = uint64_t(trunc(init[3])), umx = uint64_t(init[4]);
    auto U = [&](int64_t x) { return s == Scalar::I32 ? uint64_t(uint32_t(x)) : uint64_t(x); };
    umn = U(init[3]);
    for (int64_t x : vals) {
      add += x; mn = std::min(mn, x); mx = std::max(mx, x); an &= x; o |= x; xo ^= x;
      umn = std::min(umn, U(x)); umx = std::max(umx, U(x));
    }
    assert_true(get(cells_v, 0) == trunc(add));
    assert_true(get(cells_v, 1) == mn);
    assert_true(get(cells_v, 2) == mx);
    assert_true(U(get(cells_v, 3)) == umn);
    assert_true(U(get(cells_v, 4)) == umx);
    assert_true(get(cells_v, 5) == an && get(cells_v, 6) == o && get(cells_v, 7) == xo);
    // xchg: the olds and the final value are exactly {123} + vals.
    std::vector<int64_t> seen = {get(cells_v, 8)};
    for (int i = 0; i < 1024; ++i) seen.push_back(get(olds_v, i));
    std::vector<int64_t> want = vals;
    want.push_back(123);
    std::sort(seen.begin(), seen.end());
    std::sort(want.begin(), want.end());
    assert_true(seen == want);
  }
}

// CAS claims: each of 1024 lanes (64 programs) tries to claim slot (id % 100) by swapping 0 for
// id + 1; exactly one lane wins each slot, and the winners' ids are consistent with the slots.
static void cas_claims(void** state) {
  const int64_t B = 16;
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId slots = f.param(md.p(Scalar::I32)), won = f.param(md.p(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), bi = md.blk({B}, Scalar::I32), bp = md.blk({B}, md.p(Scalar::I32));
  ValueId id = f.bin(Opcode::Add, f.splat(f.bin(Opcode::Mul, f.pid(), f.cint(i32, B)), bi), f.arange(B));
  ValueId slot = f.bin(Opcode::SRem, id, f.splat(f.cint(i32, 100), bi));
  ValueId me = f.bin(Opcode::Add, id, f.splat(f.cint(i32, 1), bi));
  ValueId old = f.op1(Opcode::AtomicCas, {f.addptr(f.splat(slots, bp), slot), f.splat(f.cint(i32, 0), bi), me, tri::ir::kNoValue}, bi,
                      {enum_attr(Opcode::AtomicCas, "order", "acq_rel")});
  ValueId mine = f.cast(Opcode::ZExt, f.cmp("eq", old, f.splat(f.cint(i32, 0), bi)), Scalar::I32);
  f.store(f.addptr(f.splat(won, bp), id), mine);
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  std::vector<int32_t> s(100, 0), w(1024, -1);
  tri::ArgValue args[] = {ptr_arg(s.data()), ptr_arg(w.data())};
  tri::ThreadPool pool(4);
  assert_true(k->run(tri::Grid{64, 1, 1}, args, 2, &pool, {}).is_ok());
  int wins = 0;
  for (int i = 0; i < 1024; ++i) {
    if (w[i] == 1) {
      ++wins;
      assert_int_equal(s[i % 100], i + 1);
    } else {
      assert_int_equal(w[i], 0);
    }
  }
  assert_int_equal(wins, 100);
}

// Float max (a CAS loop with IEEE maximum) and f16 add (a CAS loop that rounds to f16 after each
// add) from many programs; masked-off lanes point at the guard page and must not be touched.
static void float_atomics(void** state) {
  const int64_t B = 32;
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId x = f.param(md.p(Scalar::F32)), mxp = f.param(md.p(Scalar::F32)), hp = f.param(md.p(Scalar::F16));
  ValueId n = f.param(md.s(Scalar::I32));
  auto [xpp, mask] = f.block_ptr(x, B, n);
  ValueId xv = f.load(xpp, mask, f.splat(f.cfloat(md.s(Scalar::F32), 0.0), md.blk({B}, Scalar::F32)));
  f.op1(Opcode::Atomic, {f.splat(mxp, md.blk({B}, md.p(Scalar::F32))), xv, mask}, md.blk({B}, Scalar::F32),
        attrs(Opcode::Atomic, {{"kind", enum_attr(Opcode::Atomic, "kind", "max")}}));
  ValueId one = f.splat(f.cfloat(md.s(Scalar::F16), 1.0), md.blk({B}, Scalar::F16));
  f.op1(Opcode::Atomic, {f.splat(hp, md.blk({B}, md.p(Scalar::F16))), one, mask}, md.blk({B}, Scalar::F16),
        attrs(Opcode::Atomic, {{"kind", enum_attr(Opcode::Atomic, "kind", "add")}, {"order", enum_attr(Opcode::Atomic, "order", "release")}}));
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  const int n_ = 40 * 32 - 5;
  Guarded g(n_ * 4);
  for (int i = 0; i < n_; ++i) g.as<float>()[i] = float((i * 131) % 1000) - 500.0f;
  float mx = -INFINITY;
  uint16_t h = 0;  // f16 0.0
  tri::ArgValue args[] = {ptr_arg(g.data), ptr_arg(&mx), ptr_arg(&h), int_arg(n_)};
  tri::ThreadPool pool(4);
  assert_true(k->run(tri::Grid{40, 1, 1}, args, 4, &pool, {}).is_ok());
  float want = -INFINITY;
  for (int i = 0; i < n_; ++i) want = std::max(want, g.as<float>()[i]);
  assert_true(mx == want);
  // Counting in f16 by ones is exact up to 2048: n_ = 1275 increments.
  assert_true(ref_decode(Scalar::F16, h) == n_);
}

// A load consumed only by a store is read while the store writes; when the two overlap, the
// block semantics (every lane loaded before any is stored) must still hold: x[i + s] = x[i] * 2
// for a shift s (overlapping, so the loads go through a buffer), in place through the same
// pointer value (s = 0, lane by lane), and into a separate array.
static void deferred_loads_respect_overlap(void** state) {
  const int64_t B = 64;
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId src = f.param(md.p(Scalar::I32)), dst = f.param(md.p(Scalar::I32)), n = f.param(md.s(Scalar::I32));
  ValueId same = f.param(md.s(Scalar::I1));
  TypeId i32 = md.s(Scalar::I32), bi = md.blk({B}, Scalar::I32), bp = md.blk({B}, md.p(Scalar::I32));
  ValueId offs = f.arange(B);
  ValueId mask = f.cmp("slt", offs, f.splat(n, bi));
  ValueId sp = f.addptr(f.splat(src, bp), offs);
  ValueId x = f.load(sp, mask);
  ValueId y = f.bin(Opcode::Mul, x, f.splat(f.cint(i32, 2), bi));
  OpId br = f.op(Opcode::If, {same}, {});
  f.begin_region(br, {});
  f.store(sp, y, mask);  // the load's own pointer value: in place
  f.yield();
  f.end_region();
  f.begin_region(br, {});
  f.yield();
  f.end_region();
  ValueId x2 = f.load(sp, mask);
  f.store(f.addptr(f.splat(dst, bp), offs), f.bin(Opcode::Add, x2, f.splat(f.cint(i32, 1), bi)), mask);
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  for (int shift : {0, 1, 3, -2, 64, 100}) {
    std::vector<int32_t> buf(300);
    for (int i = 0; i < 300; ++i) buf[i] = i;
    int32_t* s = buf.data() + 100;
    int32_t* d = s + shift;
    tri::ArgValue args[] = {ptr_arg(s), ptr_arg(d), int_arg(50), int_arg(0)};
    assert_true(k->run(tri::Grid{}, args, 4, nullptr, {}).is_ok());
    std::vector<int32_t> want(300);
    for (int i = 0; i < 300; ++i) want[i] = i;
    std::vector<int32_t> loaded(want.begin() + 100, want.begin() + 150);
    for (int i = 0; i < 50; ++i) want[100 + shift + i] = loaded[i] + 1;
    assert_true(buf == want);
  }
  // In place: every lane doubled, then copied (+1) to dst.
  std::vector<int32_t> a(64), d(64, -1);
  for (int i = 0; i < 64; ++i) a[i] = i;
  tri::ArgValue args[] = {ptr_arg(a.data()), ptr_arg(d.data()), int_arg(61), int_arg(1)};
  assert_true(k->run(tri::Grid{}, args, 4, nullptr, {}).is_ok());
  for (int i = 0; i < 64; ++i) {
    assert_int_equal(a[i], i < 61 ? 2 * i : i);
    assert_int_equal(d[i], i < 61 ? 2 * i + 1 : -1);
  }
}

// Masks are tested for "every lane on" from their affine form; lanes whose i32 offsets wrap
// must not pass that test: offs = start + lane with start = INT32_MAX - 5 wraps from lane 6 on,
// so `offs > INT32_MAX - 100` holds for lanes 0..5 only (the wrapped ones are negative).
static void masks_with_wrapping_offsets(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId out = f.param(md.p(Scalar::I32)), start = f.param(md.s(Scalar::I32)), n = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), bi = md.blk({16}, Scalar::I32);
  ValueId lanes = f.arange(16);
  ValueId offs = f.bin(Opcode::Add, f.splat(start, bi), lanes);
  ValueId mask = f.cmp("sgt", offs, f.splat(n, bi));
  f.store(f.addptr(f.splat(out, md.blk({16}, md.p(Scalar::I32))), lanes), f.splat(f.cint(i32, 1), bi), mask);
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  std::vector<int32_t> o(16, 0);
  tri::ArgValue args[] = {ptr_arg(o.data()), int_arg(INT32_MAX - 5), int_arg(INT32_MAX - 100)};
  assert_true(k->run(tri::Grid{}, args, 3, nullptr, {}).is_ok());
  for (int i = 0; i < 16; ++i) assert_int_equal(o[i], i < 6 ? 1 : 0);
  // Without wrapping every lane is on.
  std::fill(o.begin(), o.end(), 0);
  tri::ArgValue args2[] = {ptr_arg(o.data()), int_arg(1000), int_arg(999)};
  assert_true(k->run(tri::Grid{}, args2, 3, nullptr, {}).is_ok());
  for (int i = 0; i < 16; ++i) assert_int_equal(o[i], 1);
}

// Masks made of compares of affine lanes walk only their box of lanes: windows (lo <= i < hi),
// reversed indices (n - 1 - i > k), every signed and unsigned predicate, over 2-D tiles with
// broadcast rows and columns; checked lane by lane against C.
static void box_masks(void** state) {
  const char* preds[] = {"slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
  for (const char* pred : preds) {
    Mod md;
    Fn f(&md.m, "k", true);
    ValueId out = f.param(md.p(Scalar::I32)), a = f.param(md.s(Scalar::I32)), b = f.param(md.s(Scalar::I32));
    ValueId c = f.param(md.s(Scalar::I32)), seen = f.param(md.p(Scalar::I32));
    TypeId i32 = md.s(Scalar::I32);
    TypeId b8 = md.blk({8}, Scalar::I32), b16 = md.blk({16}, Scalar::I32), t = md.blk({8, 16}, Scalar::I32);
    ValueId rows = f.arange(8), cols = f.arange(16);
    // rows: pred(i, a) and (7 - i) >= b ; cols: c <= j
    ValueId rmask = f.bin(Opcode::And, f.cmp(pred, rows, f.splat(a, b8)),
                          f.cmp("sge", f.bin(Opcode::Sub, f.splat(f.cint(i32, 7), b8), rows), f.splat(b, b8)));
    ValueId cmask = f.cmp("sle", f.splat(c, b16), cols);
    auto expand = [&](ValueId v, int64_t n, int axis) {
      std::vector<int64_t> shp = axis == 1 ? std::vector<int64_t>{n, 1} : std::vector<int64_t>{1, n};
      return f.op1(Opcode::ExpandDims, {v}, md.blk(shp, Scalar::I1), attrs(Opcode::ExpandDims, {{"axis", Attr::of_int(axis)}}));
    };
    ValueId mask = f.bin(Opcode::And, f.op1(Opcode::Broadcast, {expand(rmask, 8, 1)}, md.blk({8, 16}, Scalar::I1)),
                         f.op1(Opcode::Broadcast, {expand(cmask, 16, 0)}, md.blk({8, 16}, Scalar::I1)));
    auto bc = [&](ValueId v, int64_t n, int axis) {
      std::vector<int64_t> shp = axis == 1 ? std::vector<int64_t>{n, 1} : std::vector<int64_t>{1, n};
      ValueId e = f.op1(Opcode::ExpandDims, {v}, md.blk(shp, Scalar::I32), attrs(Opcode::ExpandDims, {{"axis", Attr::of_int(axis)}}));
      return f.op1(Opcode::Broadcast, {e}, t);
    };
    ValueId off = f.bin(Opcode::Add, f.bin(Opcode::Mul, bc(rows, 8, 1), f.splat(f.cint(i32, 16), t)), bc(cols, 16, 0));
    TypeId tp = md.blk({8, 16}, md.p(Scalar::I32));
    // In place through one pointer value: the load is read inside the store's walk of the box.
    ValueId ptrs = f.addptr(f.splat(out, tp), off);
    f.store(ptrs, f.bin(Opcode::Add, f.load(ptrs, mask), f.splat(f.cint(i32, 100), t)), mask);
    // A load with two uses goes through a buffer: lanes outside the box read `other`.
    ValueId src = f.load(ptrs, mask, f.splat(f.cint(i32, -1), t));
    f.store(f.addptr(f.splat(seen, tp), off), src);
    f.store(f.addptr(f.splat(seen, tp), f.bin(Opcode::Add, off, f.splat(f.cint(i32, 128), t))), f.bin(Opcode::Mul, src, src));
    f.ret();
    auto k = compile_or_die(md.m, "k");
    assert_non_null(k.get());
    for (int av : {-1, 0, 3, 8, 9}) {
      for (int bv : {-2, 0, 5, 9}) {
        for (int cv : {-1, 0, 7, 16, 20}) {
          std::vector<int32_t> o(128), sn(256, 7);
          for (int i = 0; i < 128; ++i) o[i] = i;
          tri::ArgValue args[] = {ptr_arg(o.data()), int_arg(av), int_arg(bv), int_arg(cv), ptr_arg(sn.data())};
          assert_true(k->run(tri::Grid{}, args, 5, nullptr, {}).is_ok());
          for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 16; ++j) {
              std::string p = pred;
              uint32_t ui = uint32_t(i), ua = uint32_t(av);
              bool r = p == "slt" ? i < av : p == "sle" ? i <= av : p == "sgt" ? i > av : p == "sge" ? i >= av
                     : p == "ult" ? ui < ua : p == "ule" ? ui <= ua : p == "ugt" ? ui > ua : ui >= ua;
              bool on = r && (7 - i) >= bv && cv <= j;
              int want = on ? i * 16 + j + 100 : i * 16 + j;
              if (o[i * 16 + j] != want)
                fail_msg("%s a=%d b=%d c=%d at (%d, %d): %d, want %d", pred, av, bv, cv, i, j, o[i * 16 + j], want);
              int seen_want = on ? want : -1;
              if (sn[i * 16 + j] != seen_want || sn[128 + i * 16 + j] != seen_want * seen_want)
                fail_msg("%s a=%d b=%d c=%d: loaded %d at (%d, %d), want %d", pred, av, bv, cv, sn[i * 16 + j], i, j, seen_want);
            }
        }
      }
    }
  }
}

// Masks read from memory have no box form: all lanes on takes the unmasked walk, anything else
// the lane-by-lane one; both must give the same results (all on, all off, mixed patterns).
static void data_masks(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId flags = f.param(md.p(Scalar::I8)), x = f.param(md.p(Scalar::F32)), out = f.param(md.p(Scalar::F32));
  TypeId i8 = md.s(Scalar::I8), b8 = md.blk({64}, Scalar::I8);
  ValueId lanes = f.arange(64);
  ValueId fl = f.load(f.addptr(f.splat(flags, md.blk({64}, md.p(Scalar::I8))), lanes));
  ValueId mask = f.cmp("ne", fl, f.splat(f.cint(i8, 0), b8));
  ValueId xv = f.load(f.addptr(f.splat(x, md.blk({64}, md.p(Scalar::F32))), lanes), mask,
                      f.splat(f.cfloat(md.s(Scalar::F32), -1.0), md.blk({64}, Scalar::F32)));
  ValueId op = f.addptr(f.splat(out, md.blk({64}, md.p(Scalar::F32))), lanes);
  f.store(op, f.bin(Opcode::Add, xv, xv), mask);
  f.store(f.addptr(op, f.splat(f.cint(md.s(Scalar::I32), 64), md.blk({64}, Scalar::I32))), xv);
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  for (int pattern = 0; pattern < 4; ++pattern) {
    std::vector<uint8_t> fv(64);
    for (int i = 0; i < 64; ++i) fv[i] = pattern == 0 ? 1 : pattern == 1 ? 0 : pattern == 2 ? (i % 3 == 0) : (i != 17);
    std::vector<float> xs(64), o(128, 7.0f);
    for (int i = 0; i < 64; ++i) xs[i] = float(i) + 0.5f;
    tri::ArgValue args[] = {ptr_arg(fv.data()), ptr_arg(xs.data()), ptr_arg(o.data())};
    assert_true(k->run(tri::Grid{}, args, 3, nullptr, {}).is_ok());
    for (int i = 0; i < 64; ++i) {
      assert_true(o[i] == (fv[i] ? 2 * xs[i] : 7.0f));
      assert_true(o[64 + i] == (fv[i] ? xs[i] : -1.0f));
    }
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(masked_tiles_never_touch_memory), cmocka_unit_test(scalar_masks),
      cmocka_unit_test(histogram_and_sums),              cmocka_unit_test(atomic_kinds),
      cmocka_unit_test(cas_claims),                      cmocka_unit_test(float_atomics),
      cmocka_unit_test(deferred_loads_respect_overlap),  cmocka_unit_test(masks_with_wrapping_offsets),
      cmocka_unit_test(box_masks),                       cmocka_unit_test(data_masks),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
