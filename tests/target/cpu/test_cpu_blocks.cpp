// Block ops of the CPU backend against C: shape ops (broadcast, expand_dims, reshape, permute,
// join, split, cat), reductions of every builtin kind on every axis of 1-D/2-D/3-D blocks (NaN
// in float max, first index in argmax), reductions and scans with combine regions (a tuple, and
// a non-commutative associative combine whose result depends on the order of elements), scans
// forward and reversed, and dot (f32 ieee/tf32, f16, bf16, f8, i8 -> i32, batched; bit for bit
// against c + a*b rounded twice and summed over k in order).
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "float_ref.h"
#include "ir_build.h"
#include "test_main.h"

using namespace tri_test;

namespace {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Row-major offsets of a block of shape s, built from arange / expand_dims / broadcast / mul.
ValueId offsets(Mod& md, Fn& f, const Shape& s) {
  TypeId i32 = md.s(Scalar::I32);
  TypeId full = md.blk(s, Scalar::I32);
  ValueId acc = tri::ir::kNoValue;
  int64_t stride = numel(s);
  for (size_t d = 0; d < s.size(); ++d) {
    stride /= s[d];
    ValueId r = f.arange(s[d]);
    if (stride != 1) r = f.bin(Opcode::Mul, r, f.splat(f.cint(i32, stride), md.blk({s[d]}, Scalar::I32)));
    // <s[d]> -> rank of s with ones elsewhere, then broadcast.
    Shape cur = {s[d]};
    for (size_t k = 0; k < s.size(); ++k) {
      if (k == d) continue;
      size_t axis = k < d ? k : k;
      Shape next = cur;
      next.insert(next.begin() + (k < d ? k : k), 1);
      (void)axis;
      r = f.op1(Opcode::ExpandDims, {r}, md.blk(next, Scalar::I32),
                attrs(Opcode::ExpandDims, {{"axis", Attr::of_int(int64_t(k))}}));
      cur = next;
    }
    if (s.size() > 1) r = f.op1(Opcode::Broadcast, {r}, full);
    acc = acc == tri::ir::kNoValue ? r : f.bin(Opcode::Add, acc, r);
  }
  return acc;
}

ValueId load_nd(Mod& md, Fn& f, ValueId base, Scalar e, const Shape& s) {
  ValueId off = offsets(md, f, s);
  return f.load(f.addptr(f.splat(base, md.blk(s, md.p(e))), off));
}

void store_nd(Mod& md, Fn& f, ValueId base, ValueId v, Scalar e, const Shape& s) {
  if (s.empty()) {
    f.store(base, v);
    return;
  }
  ValueId off = offsets(md, f, s);
  f.store(f.addptr(f.splat(base, md.blk(s, md.p(e))), off), v);
}

template <typename T>
std::vector<T> run1(Mod& md, const std::vector<T>& in, size_t nout, std::vector<tri::ArgValue> extra = {}) {
  auto k = compile_or_die(md.m, "k");
  if (!k) return {};
  std::vector<T> out(nout, T(-99));
  std::vector<tri::ArgValue> args = {ptr_arg(in.data()), ptr_arg(out.data())};
  args.insert(args.end(), extra.begin(), extra.end());
  tri::Status st = k->run(tri::Grid{}, args.data(), args.size(), nullptr, {});
  if (!st.is_ok()) std::fprintf(stderr, "%s\n", st.message().c_str());
  return out;
}

std::vector<int32_t> iota_vals(int64_t n, int32_t mul = 1, int32_t add = 0) {
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = int32_t(i) * mul + add;
  return v;
}

}  // namespace

static void broadcast_expand_permute(void** state) {
  // out = permute(broadcast(expand_dims(x)) + y, [2, 0, 1]) for x: <4 x 8>, y: <4 x 2 x 8>
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId in = f.param(md.p(Scalar::I32)), out = f.param(md.p(Scalar::I32));
  ValueId x = load_nd(md, f, in, Scalar::I32, {4, 8});
  ValueId y = load_nd(md, f, f.addptr(in, f.cint(md.s(Scalar::I32), 32)), Scalar::I32, {4, 2, 8});
  ValueId xe = f.op1(Opcode::ExpandDims, {x}, md.blk({4, 1, 8}, Scalar::I32),
                     attrs(Opcode::ExpandDims, {{"axis", Attr::of_int(1)}}));
  ValueId xb = f.op1(Opcode::Broadcast, {xe}, md.blk({4, 2, 8}, Scalar::I32));
  ValueId s = f.bin(Opcode::Add, xb, y);
  ValueId p = f.op1(Opcode::Permute, {s}, md.blk({8, 4, 2}, Scalar::I32),
                    attrs(Opcode::Permute, {{"order", Attr::of_ints({2, 0, 1})}}));
  store_nd(md, f, out, p, Scalar::I32, {8, 4, 2});
  f.ret();
  std::vector<int32_t> inv = iota_vals(32 + 64, 3, 1);
  auto o = run1(md, inv, 64);
  assert_int_equal(o.size(), 64);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 8; ++c) {
        int32_t want = inv[a * 8 + c] + inv[32 + a * 16 + b * 8 + c];
        assert_int_equal(o[c * 8 + a * 2 + b], want);  // result[c][a][b] = s[a][b][c]
      }
}

static void reshape_join_split_cat(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId in = f.param(md.p(Scalar::F32)), out = f.param(md.p(Scalar::F32));
  TypeId f32 = md.s(Scalar::F32), i32 = md.s(Scalar::I32);
  ValueId x = load_nd(md, f, in, Scalar::F32, {32});
  // reshape of a buffer, and of a lazy value (x * 2).
  ValueId r1 = f.op1(Opcode::Reshape, {x}, md.blk({4, 8}, f32));
  ValueId x2 = f.bin(Opcode::Mul, x, f.splat(f.cfloat(f32, 2.0), md.blk({32}, f32)));
  ValueId r2 = f.op1(Opcode::Reshape, {x2}, md.blk({2, 4, 4}, f32));
  ValueId r2b = f.op1(Opcode::Reshape, {r2}, md.blk({4, 8}, f32));
  ValueId j = f.op1(Opcode::Join, {r1, r2b}, md.blk({4, 8, 2}, f32));     // [.., 0] = r1, [.., 1] = 2 r1
  store_nd(md, f, out, j, Scalar::F32, {4, 8, 2});                           // out[0..64)
  OpId sp = f.op(Opcode::Split, {j}, {md.blk({4, 8}, f32), md.blk({4, 8}, f32)});
  ValueId d = f.bin(Opcode::Sub, f.res(sp, 1), f.res(sp, 0));              // = r1
  ValueId c = f.op1(Opcode::Cat, {d, r1}, md.blk({8, 8}, f32));
  store_nd(md, f, f.addptr(out, f.cint(i32, 64)), c, Scalar::F32, {8, 8}); // out[64..128)
  // split of <2 x f32> gives scalars; join of scalars gives <2 x f32>
  ValueId pair = f.op1(Opcode::Reshape, {f.op1(Opcode::Reshape, {x}, md.blk({16, 2}, f32))}, md.blk({16, 2}, f32));
  OpId sp2 = f.op(Opcode::Split, {pair}, {md.blk({16}, f32), md.blk({16}, f32)});
  store_nd(md, f, f.addptr(out, f.cint(i32, 128)), f.res(sp2, 1), Scalar::F32, {16});  // odd elements
  f.ret();
  std::vector<float> inv(32);
  for (int i = 0; i < 32; ++i) inv[i] = 0.5f * i - 3;
  auto o = run1(md, inv, 144);
  assert_int_equal(o.size(), 144);
  for (int i = 0; i < 32; ++i) {
    assert_true(o[2 * i] == inv[i]);
    assert_true(o[2 * i + 1] == 2 * inv[i]);
    assert_true(o[64 + i] == inv[i]);
    assert_true(o[96 + i] == inv[i]);
  }
  for (int i = 0; i < 16; ++i) assert_true(o[128 + i] == inv[2 * i + 1]);
}

// ---- reductions

namespace {

const char* const kIntKinds[] = {"sum", "prod", "max", "min", "umax", "umin", "and", "or", "xor", "argmax", "argmin"};

int64_t ref_int_reduce(const char* kind, const std::vector<int32_t>& v) {
  std::string k = kind;
  if (k == "argmax" || k == "argmin") {
    size_t best = 0;
    for (size_t i = 1; i < v.size(); ++i)
      if (k == "argmax" ? v[i] > v[best] : v[i] < v[best]) best = i;
    return int64_t(best);
  }
  uint32_t acc = uint32_t(v[0]);
  for (size_t i = 1; i < v.size(); ++i) {
    uint32_t x = uint32_t(v[i]);
    if (k == "sum") acc += x;
    else if (k == "prod") acc *= x;
    else if (k == "max") acc = uint32_t(std::max(int32_t(acc), int32_t(x)));
    else if (k == "min") acc = uint32_t(std::min(int32_t(acc), int32_t(x)));
    else if (k == "umax") acc = std::max(acc, x);
    else if (k == "umin") acc = std::min(acc, x);
    else if (k == "and") acc &= x;
    else if (k == "or") acc |= x;
    else acc ^= x;
  }
  return int32_t(acc);
}

// Elements of `in` (shape s) along `axis` at the position of `out_lin` in the reduced shape.
std::vector<int64_t> fiber(const Shape& s, size_t axis, int64_t out_lin) {
  Shape rs;
  for (size_t d = 0; d < s.size(); ++d) if (d != axis) rs.push_back(s[d]);
  std::vector<int64_t> idx(s.size());
  int64_t rem = out_lin;
  for (size_t d = rs.size(); d-- > 0;) {
    size_t sd = d < axis ? d : d + 1;
    idx[sd] = rem % rs[d];
    rem /= rs[d];
  }
  std::vector<int64_t> lins;
  for (int64_t k = 0; k < s[axis]; ++k) {
    idx[axis] = k;
    int64_t lin = 0;
    for (size_t d = 0; d < s.size(); ++d) lin = lin * s[d] + idx[d];
    lins.push_back(lin);
  }
  return lins;
}

void check_int_reduce(const Shape& s, size_t axis) {
  const int nk = sizeof(kIntKinds) / sizeof(kIntKinds[0]);
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId in = f.param(md.p(Scalar::I32)), out = f.param(md.p(Scalar::I32));
  ValueId x = load_nd(md, f, in, Scalar::I32, s);
  Shape rs;
  for (size_t d = 0; d < s.size(); ++d) if (d != axis) rs.push_back(s[d]);
  TypeId rt = rs.empty() ? md.s(Scalar::I32) : md.blk(rs, Scalar::I32);
  const int64_t nr = numel(rs);
  for (int k = 0; k < nk; ++k) {
    ValueId r = f.op1(Opcode::Reduce, {x}, rt,
                      attrs(Opcode::Reduce, {{"axis", Attr::of_int(int64_t(axis))},
                                             {"kind", enum_attr(Opcode::Reduce, "kind", kIntKinds[k])}}));
    store_nd(md, f, f.addptr(out, f.cint(md.s(Scalar::I32), k * nr)), r, Scalar::I32, rs);
  }
  f.ret();
  std::mt19937 rng(unsigned(numel(s) * 7 + axis));
  std::vector<int32_t> inv(numel(s));
  for (auto& v : inv) v = int32_t(uint32_t(int32_t(rng() % 41) - 20) + ((rng() % 16 == 0) ? 0x80000000u : 0u));
  for (size_t i = 0; i < inv.size(); i += 5) inv[i] = inv[(i * 7) % inv.size()];  // ties for argmax
  auto o = run1(md, inv, nk * nr);
  assert_false(o.empty());
  for (int k = 0; k < nk; ++k)
    for (int64_t j = 0; j < nr; ++j) {
      std::vector<int32_t> fv;
      for (int64_t lin : fiber(s, axis, j)) fv.push_back(inv[lin]);
      int64_t want = ref_int_reduce(kIntKinds[k], fv);
      if (o[k * nr + j] != want)
        fail_msg("reduce %s axis %zu of rank %zu at %lld: %d, want %lld", kIntKinds[k], axis, s.size(), (long long)j,
                 o[k * nr + j], (long long)want);
    }
}

}  // namespace

static void reduce_int_kinds_all_axes(void** state) {
  for (const Shape& s : {Shape{64}, Shape{8, 16}, Shape{4, 8, 16}, Shape{2, 4, 64}, Shape{1024}})
    for (size_t axis = 0; axis < s.size(); ++axis) check_int_reduce(s, axis);
}

// f32 sum (order unspecified: compared with a tolerance), max/min with NaN propagating, and
// argmax over floats; f16 max.
static void reduce_floats(void** state) {
  const Shape s = {16, 64};
  for (size_t axis = 0; axis < 2; ++axis) {
    Mod md;
    Fn f(&md.m, "k", true);
    ValueId in = f.param(md.p(Scalar::F32)), out = f.param(md.p(Scalar::F32)), oi = f.param(md.p(Scalar::I32));
    ValueId x = load_nd(md, f, in, Scalar::F32, s);
    Shape rs = {s[1 - axis]};
    TypeId rt = md.blk(rs, Scalar::F32);
    auto red = [&](const char* kind, TypeId t) {
      return f.op1(Opcode::Reduce, {x}, t,
                   attrs(Opcode::Reduce, {{"axis", Attr::of_int(int64_t(axis))}, {"kind", enum_attr(Opcode::Reduce, "kind", kind)}}));
    };
    TypeId i32 = md.s(Scalar::I32);
    store_nd(md, f, out, red("sum", rt), Scalar::F32, rs);
    store_nd(md, f, f.addptr(out, f.cint(i32, 64)), red("max", rt), Scalar::F32, rs);
    store_nd(md, f, f.addptr(out, f.cint(i32, 128)), red("min", rt), Scalar::F32, rs);
    store_nd(md, f, oi, red("argmax", md.blk(rs, Scalar::I32)), Scalar::I32, rs);
    f.ret();
    auto k = compile_or_die(md.m, "k");
    assert_non_null(k.get());
    std::vector<float> inv(numel(s));
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-10, 10);
    for (auto& v : inv) v = u(rng);
    inv[5 * 64 + 7] = NAN;  // one NaN: its fiber's max and min are NaN
    std::vector<float> o(192, -1);
    std::vector<int32_t> idx(64, -1);
    tri::ArgValue args[] = {ptr_arg(inv.data()), ptr_arg(o.data()), ptr_arg(idx.data())};
    assert_true(k->run(tri::Grid{}, args, 3, nullptr, {}).is_ok());
    for (int64_t j = 0; j < rs[0]; ++j) {
      double sum = 0;
      float mx = -INFINITY, mn = INFINITY;
      bool nan = false;
      int best = 0;
      std::vector<int64_t> lins = fiber(s, axis, j);
      for (size_t t = 0; t < lins.size(); ++t) {
        float v = inv[lins[t]];
        sum += v;
        nan |= std::isnan(v);
        mx = std::max(mx, v);
        mn = std::min(mn, v);
        if (v > inv[lins[best]]) best = int(t);
      }
      if (nan) {
        assert_true(std::isnan(o[j]) && std::isnan(o[64 + j]) && std::isnan(o[128 + j]));
        continue;  // argmax with NaN in the input is unspecified
      }
      assert_true(std::fabs(o[j] - sum) <= 1e-4 * 64 * 10);
      assert_true(o[64 + j] == mx);
      assert_true(o[128 + j] == mn);
      assert_int_equal(idx[j], best);
    }
  }
}

namespace {

// A region combining (m, c) pairs as affine maps x -> m*x + c applied left to right:
// associative but not commutative, so the result shows the order of elements.
void affine_region(Fn& f, Mod& md, tri::ir::OpId o) {
  TypeId i32 = md.s(Scalar::I32);
  tri::ir::Builder& b = f.builder();
  BlockId saved = b.insertion_block();
  BlockId r = b.add_region(o, {i32, i32, i32, i32});
  b.set_insertion_block(r);
  const auto& args = f.fn()->blocks[r].args;
  ValueId m = f.bin(Opcode::Mul, args[0], args[2]);
  ValueId c = f.bin(Opcode::Add, f.bin(Opcode::Mul, args[1], args[2]), args[3]);
  f.yield({m, c});
  b.set_insertion_block(saved);
}

struct Aff {
  uint32_t m, c;
};
Aff compose(Aff a, Aff b) { return {a.m * b.m, a.c * b.m + b.c}; }

}  // namespace

static void reduce_region_order_kept(void** state) {
  for (const Shape& s : {Shape{128}, Shape{4, 64}, Shape{64, 4}, Shape{2, 8, 16}})
    for (size_t axis = 0; axis < s.size(); ++axis) {
      Mod md;
      Fn f(&md.m, "k", true);
      ValueId in = f.param(md.p(Scalar::I32)), out = f.param(md.p(Scalar::I32));
      TypeId i32 = md.s(Scalar::I32);
      ValueId m = load_nd(md, f, in, Scalar::I32, s);
      ValueId c = load_nd(md, f, f.addptr(in, f.cint(i32, numel(s))), Scalar::I32, s);
      Shape rs;
      for (size_t d = 0; d < s.size(); ++d) if (d != axis) rs.push_back(s[d]);
      TypeId rt = rs.empty() ? i32 : md.blk(rs, Scalar::I32);
      OpId o = f.op(Opcode::Reduce, {m, c}, {rt, rt}, attrs(Opcode::Reduce, {{"axis", Attr::of_int(int64_t(axis))}}));
      affine_region(f, md, o);
      store_nd(md, f, out, f.res(o, 0), Scalar::I32, rs);
      store_nd(md, f, f.addptr(out, f.cint(i32, std::max<int64_t>(numel(rs), 1))), f.res(o, 1), Scalar::I32, rs);
      f.ret();
      std::mt19937 rng(5);
      std::vector<int32_t> inv(2 * numel(s));
      for (auto& v : inv) v = int32_t(rng() % 7) - 3;
      int64_t nr = std::max<int64_t>(numel(rs), 1);
      auto o2 = run1(md, inv, 2 * nr);
      assert_false(o2.empty());
      for (int64_t j = 0; j < nr; ++j) {
        std::vector<int64_t> lins = fiber(s, axis, j);
        Aff acc = {uint32_t(inv[lins[0]]), uint32_t(inv[numel(s) + lins[0]])};
        for (size_t t = 1; t < lins.size(); ++t) acc = compose(acc, {uint32_t(inv[lins[t]]), uint32_t(inv[numel(s) + lins[t]])});
        assert_int_equal(uint32_t(o2[j]), acc.m);
        assert_int_equal(uint32_t(o2[nr + j]), acc.c);
      }
    }
}

// A tuple region that picks the larger value and, on ties, the lower index (argmax by hand).
static void reduce_region_tuple_argmax(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId in = f.param(md.p(Scalar::F32)), out = f.param(md.p(Scalar::I32));
  TypeId f32 = md.s(Scalar::F32), i32 = md.s(Scalar::I32), i1 = md.s(Scalar::I1);
  ValueId x = load_nd(md, f, in, Scalar::F32, {256});
  ValueId idx = f.arange(256);
  OpId o = f.op(Opcode::Reduce, {x, idx}, {f32, i32}, attrs(Opcode::Reduce, {{"axis", Attr::of_int(0)}}));
  tri::ir::Builder& b = f.builder();
  BlockId saved = b.insertion_block();
  BlockId r = b.add_region(o, {f32, i32, f32, i32});
  b.set_insertion_block(r);
  auto args = f.fn()->blocks[r].args;
  ValueId gt = f.fcmp("ogt", args[2], args[0]);
  ValueId eq = f.fcmp("oeq", args[2], args[0]);
  ValueId lower = f.cmp("slt", args[3], args[1]);
  ValueId take = f.bin(Opcode::Or, gt, f.bin(Opcode::And, eq, lower));
  (void)i1;
  ValueId v = f.op1(Opcode::Select, {take, args[2], args[0]}, f32);
  ValueId i = f.op1(Opcode::Select, {take, args[3], args[1]}, i32);
  f.yield({v, i});
  b.set_insertion_block(saved);
  f.store(out, f.res(o, 1));
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  std::vector<float> inv(256);
  for (int i = 0; i < 256; ++i) inv[i] = float((i * 37) % 101);
  int32_t res = -1;
  tri::ArgValue args2[] = {ptr_arg(inv.data()), ptr_arg(&res)};
  assert_true(k->run(tri::Grid{}, args2, 2, nullptr, {}).is_ok());
  int best = 0;
  for (int i = 1; i < 256; ++i) if (inv[i] > inv[best]) best = i;
  assert_int_equal(res, best);
}

// ---- scans

static void scans(void** state) {
  for (const Shape& s : {Shape{100 > 64 ? 128 : 64}, Shape{8, 16}, Shape{4, 2, 8}})
    for (size_t axis = 0; axis < s.size(); ++axis)
      for (bool reverse : {false, true})
        for (const char* kind : {"sum", "max", "xor", "region"}) {
          Mod md;
          Fn f(&md.m, "k", true);
          ValueId in = f.param(md.p(Scalar::I32)), out = f.param(md.p(Scalar::I32));
          TypeId i32 = md.s(Scalar::I32);
          TypeId bt = md.blk(s, Scalar::I32);
          ValueId x = load_nd(md, f, in, Scalar::I32, s);
          std::string k = kind;
          if (k == "region") {
            ValueId c = load_nd(md, f, f.addptr(in, f.cint(i32, numel(s))), Scalar::I32, s);
            OpId o = f.op(Opcode::Scan, {x, c}, {bt, bt},
                          attrs(Opcode::Scan, {{"axis", Attr::of_int(int64_t(axis))}, {"reverse", Attr::of_bool(reverse)}}));
            affine_region(f, md, o);
            store_nd(md, f, out, f.res(o, 0), Scalar::I32, s);
            store_nd(md, f, f.addptr(out, f.cint(i32, numel(s))), f.res(o, 1), Scalar::I32, s);
          } else {
            ValueId r = f.op1(Opcode::Scan, {x}, bt,
                              attrs(Opcode::Scan, {{"axis", Attr::of_int(int64_t(axis))},
                                                   {"kind", enum_attr(Opcode::Scan, "kind", kind)},
                                                   {"reverse", Attr::of_bool(reverse)}}));
            store_nd(md, f, out, r, Scalar::I32, s);
          }
          f.ret();
          std::mt19937 rng(9);
          std::vector<int32_t> inv(2 * numel(s));
          for (auto& v : inv) v = int32_t(rng() % 9) - 4;
          auto o = run1(md, inv, 2 * numel(s));
          assert_false(o.empty());
          // Every fiber along the axis, scanned in C.
          Shape rs;
          for (size_t d = 0; d < s.size(); ++d) if (d != axis) rs.push_back(s[d]);
          for (int64_t j = 0; j < std::max<int64_t>(numel(rs), 1); ++j) {
            std::vector<int64_t> lins = fiber(s, axis, j);
            if (reverse) std::reverse(lins.begin(), lins.end());
            int32_t acc = 0;
            Aff aacc{1, 0};
            for (size_t t = 0; t < lins.size(); ++t) {
              int32_t v = inv[lins[t]];
              if (k == "region") {
                Aff cur{uint32_t(v), uint32_t(inv[numel(s) + lins[t]])};
                aacc = t == 0 ? cur : compose(aacc, cur);
                if (uint32_t(o[lins[t]]) != aacc.m || uint32_t(o[numel(s) + lins[t]]) != aacc.c)
                  fail_msg("scan region axis %zu reverse %d at %lld", axis, reverse, (long long)lins[t]);
                continue;
              }
              if (t == 0) acc = v;
              else if (k == "sum") acc += v;
              else if (k == "max") acc = std::max(acc, v);
              else acc ^= v;
              if (o[lins[t]] != acc)
                fail_msg("scan %s axis %zu reverse %d rank %zu at %lld: %d, want %d", kind, axis, reverse, s.size(),
                         (long long)lins[t], o[lins[t]], acc);
            }
          }
        }
}

// ---- dot

namespace {

struct DotCase {
  Scalar in;
  Scalar acc;
  bool tf32;
  Shape a, b;  // [B?] M x K, [B?] K x N
};

// Encodes a double into element type s (raw bits in a uint64).
uint64_t enc(Scalar s, double v) {
  switch (s) {
    case Scalar::F32: return bits_f32(float(v));
    case Scalar::F64: return bits_f64(v);
    case Scalar::I8: return uint64_t(int8_t(v)) & 0xff;
    case Scalar::I32: return uint64_t(uint32_t(int32_t(v)));
    default: return ref_encode(s, v);
  }
}
double dec(Scalar s, uint64_t b) {
  switch (s) {
    case Scalar::F32: return f32_bits(uint32_t(b));
    case Scalar::F64: return f64_bits(b);
    case Scalar::I8: return int8_t(b);
    case Scalar::I32: return int32_t(uint32_t(b));
    default: return double(ref_decode(s, uint32_t(b)));
  }
}
int esize(Scalar s) { return s == Scalar::I8 || s == Scalar::F8E4M3 || s == Scalar::F8E5M2 ? 1 : s == Scalar::F16 || s == Scalar::BF16 ? 2 : s == Scalar::F64 ? 8 : 4; }

float round_tf32(float x) {
  uint32_t u = bits_f32(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  u = (u + 0xfffu + ((u >> 13) & 1)) & ~0x1fffu;
  return f32_bits(u);
}

void run_dot(const DotCase& dc) {
  const size_t r = dc.a.size();
  const int64_t B = r == 3 ? dc.a[0] : 1, M = dc.a[r - 2], K = dc.a[r - 1], N = dc.b[r - 1];
  Shape cs = dc.a;
  cs[r - 1] = N;
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId pa = f.param(md.p(dc.in)), pb = f.param(md.p(dc.in)), pc = f.param(md.p(dc.acc)), po = f.param(md.p(dc.acc));
  ValueId a = load_nd(md, f, pa, dc.in, dc.a), b = load_nd(md, f, pb, dc.in, dc.b), c = load_nd(md, f, pc, dc.acc, cs);
  std::vector<Attr> at;
  if (dc.tf32) at = {enum_attr(Opcode::Dot, "precision", "tf32")};
  ValueId d = f.op1(Opcode::Dot, {a, b, c}, md.blk(cs, dc.acc), at);
  store_nd(md, f, po, d, dc.acc, cs);
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  std::mt19937 rng(unsigned(M * 131 + K * 7 + N));
  auto fill = [&](Scalar s, int64_t n, bool is_acc) {
    std::vector<uint8_t> v(n * esize(s));
    for (int64_t i = 0; i < n; ++i) {
      double x = tri::ir::is_int(s) ? double(int(rng() % 255) - 127) : (double(int(rng() % 2001) - 1000) / 250.0);
      if (is_acc && tri::ir::is_int(s)) x = double(int(rng() % 20001) - 10000);
      uint64_t bits = enc(s, x);
      std::memcpy(&v[i * esize(s)], &bits, esize(s));
    }
    return v;
  };
  std::vector<uint8_t> A = fill(dc.in, B * M * K, false), Bm = fill(dc.in, B * K * N, false), C = fill(dc.acc, B * M * N, true);
  std::vector<uint8_t> O(C.size());
  tri::ArgValue args[] = {ptr_arg(A.data()), ptr_arg(Bm.data()), ptr_arg(C.data()), ptr_arg(O.data())};
  assert_true(k->run(tri::Grid{}, args, 4, nullptr, {}).is_ok());
  auto get = [&](const std::vector<uint8_t>& v, Scalar s, int64_t i) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v[i * esize(s)], esize(s));
    return dec(s, bits);
  };
  for (int64_t bb = 0; bb < B; ++bb)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        // c + a*b in f32, each rounded, over k in order (what the interpreter does): exact.
        float want = float(get(C, dc.acc, (bb * M + m) * N + n));
        int64_t iwant = int64_t(get(C, dc.acc, (bb * M + m) * N + n));
        for (int64_t kk = 0; kk < K; ++kk) {
          double x = get(A, dc.in, (bb * M + m) * K + kk), y = get(Bm, dc.in, (bb * K + kk) * N + n);
          if (dc.tf32) {
            x = round_tf32(float(x));
            y = round_tf32(float(y));
          }
          volatile float p = float(x) * float(y);
          want = want + p;
          iwant += int64_t(x) * int64_t(y);
        }
        double got = get(O, dc.acc, (bb * M + m) * N + n);
        if (tri::ir::is_int(dc.acc)) {
          if (int32_t(got) != int32_t(uint32_t(uint64_t(iwant)))) fail_msg("i8 dot at (%lld, %lld)", (long long)m, (long long)n);
        } else if (float(got) != want) {
          fail_msg("dot %s%s at (%lld, %lld, %lld): %.9g, want %.9g", tri::ir::scalar_name(dc.in), dc.tf32 ? " tf32" : "",
                   (long long)bb, (long long)m, (long long)n, got, double(want));
        }
      }
}

}  // namespace

static void dot_types_and_batches(void** state) {
  run_dot({Scalar::F32, Scalar::F32, false, {16, 32}, {32, 8}});
  run_dot({Scalar::F32, Scalar::F32, true, {16, 32}, {32, 8}});
  run_dot({Scalar::F16, Scalar::F32, false, {32, 16}, {16, 64}});
  run_dot({Scalar::BF16, Scalar::F32, false, {16, 16}, {16, 16}});
  run_dot({Scalar::F8E4M3, Scalar::F32, false, {16, 32}, {32, 16}});
  run_dot({Scalar::F8E5M2, Scalar::F32, false, {16, 32}, {32, 16}});
  run_dot({Scalar::I8, Scalar::I32, false, {16, 64}, {64, 16}});
  run_dot({Scalar::F32, Scalar::F32, false, {4, 8, 16}, {4, 16, 2}});
  run_dot({Scalar::F16, Scalar::F32, false, {2, 16, 16}, {2, 16, 8}});
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(broadcast_expand_permute),   cmocka_unit_test(reshape_join_split_cat),
      cmocka_unit_test(reduce_int_kinds_all_axes),  cmocka_unit_test(reduce_floats),
      cmocka_unit_test(reduce_region_order_kept),   cmocka_unit_test(reduce_region_tuple_argmax),
      cmocka_unit_test(scans),                      cmocka_unit_test(dot_types_and_batches),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
