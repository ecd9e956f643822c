// Whole-block ops against loops written in C in the test: the shape ops (splat, broadcast,
// expand_dims, reshape, permute, join, split, cat), reductions and scans over every axis of 1-D,
// 2-D and 3-D blocks with every builtin kind and with combine regions over tuples, and dot on
// every input type (f16, bf16, f8, f32 ieee/tf32, i8), 2-D and batched.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "test_main.h"

using namespace tri_test;

namespace {

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct In {
  std::vector<int64_t> shape;  // {} for a scalar
  Scalar type;
  std::vector<uint64_t> data;  // row-major lanes
};

// Loads each input as a block of its shape from a flat buffer, lets `build` compute results,
// and stores every result flat; returns the results' lanes (and the status through *st).
std::vector<std::vector<uint64_t>> run_blocks(const std::vector<In>& ins,
                                              const std::function<std::vector<ValueId>(KB&, const std::vector<ValueId>&)>& build,
                                              bool checked = true, Status* st_out = nullptr) {
  KB kb;
  std::vector<ValueId> ptrs, vals;
  for (size_t k = 0; k < ins.size(); ++k) ptrs.push_back(kb.param("in" + std::to_string(k), kb.ptr(ins[k].type)));
  // Results are stored to out0, out1, ...: their types are known only after build(), so the
  // parameters are added up front for at most 4 results.
  std::vector<ValueId> outs;
  for (int k = 0; k < 4; ++k) outs.push_back(kb.param("out" + std::to_string(k), kb.ptr(Scalar::I8)));
  for (size_t k = 0; k < ins.size(); ++k) {
    if (ins[k].shape.empty()) {
      vals.push_back(kb.load(ptrs[k]));
      continue;
    }
    ValueId offs = kb.arange(0, numel(ins[k].shape));
    if (ins[k].shape.size() > 1) offs = kb.op(Opcode::Reshape, {offs}, kb.blk(ins[k].shape, Scalar::I32));
    vals.push_back(kb.load(kb.addptr(kb.splat(ptrs[k], ins[k].shape), offs)));
  }
  std::vector<ValueId> res = build(kb, vals);
  std::vector<Scalar> rtypes;
  for (size_t j = 0; j < res.size(); ++j) {
    TypeId rt = kb.type(res[j]);
    TypeId et = kb.m->types.elem_of(rt);
    Scalar s = kb.m->types.get(et).scalar;
    rtypes.push_back(s);
    // Reinterpret out_j as a pointer to the result's element type.
    ValueId p = kb.op(Opcode::Bitcast, {outs[j]}, kb.ptr(s));
    if (!kb.m->types.is_block(rt)) {
      kb.store(p, res[j]);
      continue;
    }
    std::vector<int64_t> shape;
    for (const Dim& d : kb.m->types.get(rt).dims) shape.push_back(d.value);
    ValueId offs = kb.arange(0, numel(shape));
    if (shape.size() > 1) offs = kb.op(Opcode::Reshape, {offs}, kb.blk(shape, Scalar::I32));
    kb.store(kb.addptr(kb.splat(p, shape), offs), res[j]);
  }
  kb.ret();
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<ArgValue> args;
  for (const In& in : ins) {
    bufs.push_back(pack(in.data, in.type));
    args.push_back(arg_ptr(bufs.back().data(), in.data.size() * elem_bytes(in.type)));
  }
  std::vector<std::vector<uint8_t>> obufs(4, std::vector<uint8_t>(1 << 16, 0));
  for (auto& b : obufs) args.push_back(arg_ptr(b.data(), b.size()));
  Status st = kb.run(Grid{}, args, checked);
  if (st_out) *st_out = st;
  if (!st.is_ok()) {
    if (!st_out) fail_msg("%s", st.message().c_str());
    return {};
  }
  std::vector<std::vector<uint64_t>> out;
  for (size_t j = 0; j < res.size(); ++j) {
    TypeId rt = kb.type(res[j]);
    out.push_back(unpack(obufs[j], kb.m->types.num_elements(rt), rtypes[j]));
  }
  return out;
}

std::vector<uint64_t> iota(int64_t n, int64_t start = 0) {
  std::vector<uint64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<uint64_t>(start + i));
  return v;
}

// ---- shape ops

void splat_broadcast_expand(void**) {
  auto r = run_blocks({{{}, Scalar::I32, {42}}, {{1, 8}, Scalar::I32, iota(8)}, {{4, 1}, Scalar::I32, iota(4, 100)},
                       {{2, 1, 4}, Scalar::I32, iota(8, 200)}},
                      [](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
                        return {kb.splat(v[0], {4, 8}), kb.op(Opcode::Broadcast, {v[1]}, kb.blk({4, 8}, Scalar::I32)),
                                kb.op(Opcode::Broadcast, {v[2]}, kb.blk({4, 8}, Scalar::I32)),
                                kb.op(Opcode::Broadcast, {v[3]}, kb.blk({2, 4, 4}, Scalar::I32))};
                      });
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) {
      assert_int_equal(r[0][i * 8 + j], 42);
      assert_int_equal(r[1][i * 8 + j], j);
      assert_int_equal(r[2][i * 8 + j], 100 + i);
    }
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 4; ++c) assert_int_equal(r[3][(a * 4 + b) * 4 + c], 200 + a * 4 + c);
  // The Triton idiom for 2-D offsets: expand_dims both ranges and broadcast the sum.
  auto t = run_blocks({}, [](KB& kb, const std::vector<ValueId>&) -> std::vector<ValueId> {
    ValueId rows = kb.op(Opcode::ExpandDims, {kb.arange(0, 4)}, kb.blk({4, 1}, Scalar::I32), {Attr::of_int(1)});
    ValueId cols = kb.op(Opcode::ExpandDims, {kb.arange(0, 8)}, kb.blk({1, 8}, Scalar::I32), {Attr::of_int(0)});
    ValueId r2 = kb.bin(Opcode::Mul, kb.op(Opcode::Broadcast, {rows}, kb.blk({4, 8}, Scalar::I32)),
                        kb.splat(kb.i32(10), {4, 8}));
    ValueId c2 = kb.op(Opcode::Broadcast, {cols}, kb.blk({4, 8}, Scalar::I32));
    ValueId e3 = kb.op(Opcode::ExpandDims, {c2}, kb.blk({4, 8, 1}, Scalar::I32), {Attr::of_int(2)});
    return {kb.bin(Opcode::Add, r2, c2), e3};
  });
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) {
      assert_int_equal(t[0][i * 8 + j], i * 10 + j);
      assert_int_equal(t[1][i * 8 + j], j);
    }
}

void reshape_permute(void**) {
  auto r = run_blocks({{{2, 4, 8}, Scalar::I16, iota(64)}}, [](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
    return {kb.op(Opcode::Reshape, {v[0]}, kb.blk({8, 8}, Scalar::I16)),
            kb.op(Opcode::Permute, {v[0]}, kb.blk({8, 2, 4}, Scalar::I16), {Attr::of_ints({2, 0, 1})}),
            kb.op(Opcode::Permute, {v[0]}, kb.blk({4, 2, 8}, Scalar::I16), {Attr::of_ints({1, 0, 2})}),
            kb.op(Opcode::Permute, {kb.op(Opcode::Reshape, {v[0]}, kb.blk({8, 8}, Scalar::I16))}, kb.blk({8, 8}, Scalar::I16),
                  {Attr::of_ints({1, 0})})};
  });
  for (int i = 0; i < 64; ++i) assert_int_equal(r[0][i], i);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 4; ++k) assert_int_equal(r[1][(i * 2 + j) * 4 + k], (j * 4 + k) * 8 + i);  // src[j][k][i]
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 8; ++k) assert_int_equal(r[2][(i * 2 + j) * 8 + k], (j * 4 + i) * 8 + k);  // src[j][i][k]
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) assert_int_equal(r[3][i * 8 + j], j * 8 + i);  // transpose
}

void join_split_cat(void**) {
  auto r = run_blocks({{{4, 2}, Scalar::F32, iota(8, 10)}, {{4, 2}, Scalar::F32, iota(8, 50)}},
                      [](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
                        ValueId j = kb.op(Opcode::Join, {v[0], v[1]}, kb.blk({4, 2, 2}, Scalar::F32));
                        OpId s = kb.make(Opcode::Split, {j}, {kb.blk({4, 2}, Scalar::F32), kb.blk({4, 2}, Scalar::F32)});
                        ValueId s0 = kb.f->ops[s].results[0], s1 = kb.f->ops[s].results[1];
                        ValueId c = kb.op(Opcode::Cat, {v[0], v[1]}, kb.blk({8, 2}, Scalar::F32));
                        return {j, s0, s1, c};
                      });
  for (int i = 0; i < 8; ++i) {
    assert_int_equal(r[0][2 * i], 10 + i);  // lhs at minor index 0
    assert_int_equal(r[0][2 * i + 1], 50 + i);
    assert_int_equal(r[1][i], 10 + i);
    assert_int_equal(r[2][i], 50 + i);
    assert_int_equal(r[3][i], 10 + i);
    assert_int_equal(r[3][8 + i], 50 + i);
  }
  // Joining scalars gives <2 x T>; splitting <2 x T> gives scalars.
  auto s = run_blocks({{{}, Scalar::I64, {7}}, {{}, Scalar::I64, {9}}}, [](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
    ValueId j = kb.op(Opcode::Join, {v[0], v[1]}, kb.blk({2}, Scalar::I64));
    OpId sp = kb.make(Opcode::Split, {j}, {kb.t(Scalar::I64), kb.t(Scalar::I64)});
    return {j, kb.f->ops[sp].results[1]};
  });
  assert_true(s[0] == std::vector<uint64_t>({7, 9}));
  assert_int_equal(s[1][0], 9);
}

// ---- reductions and scans

const char* kKinds[] = {"sum", "prod", "max", "min", "umax", "umin", "and", "or", "xor"};

uint32_t ref_combine(const std::string& k, uint32_t a, uint32_t b) {
  if (k == "sum") return a + b;
  if (k == "prod") return a * b;
  if (k == "max") return static_cast<int32_t>(a) > static_cast<int32_t>(b) ? a : b;
  if (k == "min") return static_cast<int32_t>(a) < static_cast<int32_t>(b) ? a : b;
  if (k == "umax") return a > b ? a : b;
  if (k == "umin") return a < b ? a : b;
  if (k == "and") return a & b;
  if (k == "or") return a | b;
  return a ^ b;
}

std::vector<int64_t> without(const std::vector<int64_t>& s, size_t axis) {
  std::vector<int64_t> r;
  for (size_t d = 0; d < s.size(); ++d)
    if (d != axis) r.push_back(s[d]);
  return r;
}

// Expected reduction (or scan) of `data` of `shape` along `axis`, by walking every index.
std::vector<uint64_t> ref_reduce(const std::vector<int64_t>& shape, size_t axis, const std::vector<uint64_t>& data,
                                 const std::function<uint64_t(uint64_t, uint64_t)>& f, bool scan, bool reverse) {
  int64_t outer = 1, inner = 1, n = shape[axis];
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<uint64_t> out(scan ? data.size() : outer * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
      int64_t k0 = reverse ? n - 1 : 0;
      uint64_t acc = data[at(k0)];
      if (scan) out[at(k0)] = acc;
      for (int64_t c = 1; c < n; ++c) {
        int64_t k = reverse ? n - 1 - c : c;
        acc = f(acc, data[at(k)]);
        if (scan) out[at(k)] = acc;
      }
      if (!scan) out[o * inner + i] = acc;
    }
  return out;
}

std::vector<uint64_t> random_i32(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> v;
  for (size_t i = 0; i < n; ++i) v.push_back(static_cast<uint32_t>(rng() % 7 == 0 ? rng() : (rng() % 19) - 9));
  return v;
}

void reduce_and_scan_builtin_every_axis(void**) {
  const std::vector<std::vector<int64_t>> shapes = {{16}, {4, 8}, {2, 4, 8}, {2, 2, 2, 4}};
  for (const auto& shape : shapes) {
    std::vector<uint64_t> data = random_i32(numel(shape), shape.size());
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      for (const char* kind : kKinds) {
        for (int mode = 0; mode < 3; ++mode) {  // reduce, scan, scan reverse
          const bool scan = mode > 0, reverse = mode == 2;
          auto r = run_blocks({{shape, Scalar::I32, data}}, [&](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
            std::vector<int64_t> rs = scan ? shape : without(shape, axis);
            TypeId rt = rs.empty() ? kb.t(Scalar::I32) : kb.blk(rs, Scalar::I32);
            if (!scan)
              return {kb.op(Opcode::Reduce, {v[0]}, rt,
                            attrs_of(Opcode::Reduce, {{"axis", Attr::of_int(axis)}, {"kind", enum_attr(Opcode::Reduce, "kind", kind)}}))};
            return {kb.op(Opcode::Scan, {v[0]}, rt,
                          attrs_of(Opcode::Scan, {{"axis", Attr::of_int(axis)}, {"kind", enum_attr(Opcode::Scan, "kind", kind)},
                                                  {"reverse", Attr::of_bool(reverse)}}))};
          });
          std::string k = kind;
          std::vector<uint64_t> want = ref_reduce(shape, axis, data,
                                                  [&](uint64_t a, uint64_t b) -> uint64_t {
                                                    return ref_combine(k, static_cast<uint32_t>(a), static_cast<uint32_t>(b));
                                                  },
                                                  scan, reverse);
          if (r[0] != want) fail_msg("%s over axis %zu of rank %zu (mode %d)", kind, axis, shape.size(), mode);
        }
      }
      // argmax/argmin: the first index of the extreme, as i32.
      for (const char* kind : {"argmax", "argmin"}) {
        auto r = run_blocks({{shape, Scalar::I32, data}}, [&](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
          std::vector<int64_t> rs = without(shape, axis);
          TypeId rt = rs.empty() ? kb.t(Scalar::I32) : kb.blk(rs, Scalar::I32);
          return {kb.op(Opcode::Reduce, {v[0]}, rt,
                        attrs_of(Opcode::Reduce, {{"axis", Attr::of_int(axis)}, {"kind", enum_attr(Opcode::Reduce, "kind", kind)}}))};
        });
        // Reduce (value, index) pairs in C: keep the earlier index unless strictly better.
        std::vector<uint64_t> pairs;
        for (size_t i = 0; i < data.size(); ++i) pairs.push_back(i);
        int64_t inner = 1;
        for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
        const bool mx = std::string(kind) == "argmax";
        std::vector<uint64_t> want = ref_reduce(shape, axis, pairs,
                                                [&](uint64_t a, uint64_t b) -> uint64_t {
                                                  int32_t va = static_cast<int32_t>(data[a]), vb = static_cast<int32_t>(data[b]);
                                                  return (mx ? vb > va : vb < va) ? b : a;
                                                },
                                                false, false);
        for (size_t i = 0; i < want.size(); ++i) {
          // Convert the winning flat index into its index along `axis`.
          int64_t along = (static_cast<int64_t>(want[i]) / inner) % shape[axis];
          if (static_cast<int64_t>(r[0][i]) != along) fail_msg("%s axis %zu lane %zu", kind, axis, i);
        }
      }
    }
  }
}

void float_reductions(void**) {
  // A sum in index order (checked against the same order in C), NaN-propagating max, f16 sums
  // that round at every step, prod of f64, and argmax of floats with ties (first index wins).
  std::vector<float> xs = {1e8f, 1.0f, -1e8f, 1.0f, 0.5f, 3.0f, 3.0f, -2.0f};
  std::vector<uint64_t> d;
  for (float x : xs) d.push_back(f32_bits(x));
  std::vector<uint64_t> with_nan = d;
  with_nan[3] = f32_bits(std::nanf(""));
  std::vector<uint64_t> h;
  for (int i = 0; i < 8; ++i) h.push_back(f16_bits(static_cast<_Float16>(i == 0 ? 2048.0f : 1.0f)));
  std::vector<uint64_t> f64s = {f64_bits(1.5), f64_bits(-2.0), f64_bits(0.25), f64_bits(3.0), f64_bits(1.0), f64_bits(1.0),
                                f64_bits(2.0), f64_bits(0.5)};
  auto red = [](KB& kb, ValueId v, Scalar s, const char* kind) {
    TypeId rt = kind[0] == 'a' ? kb.t(Scalar::I32) : kb.t(s);
    return kb.op(Opcode::Reduce, {v}, rt, attrs_of(Opcode::Reduce, {{"axis", Attr::of_int(0)}, {"kind", enum_attr(Opcode::Reduce, "kind", kind)}}));
  };
  auto r = run_blocks({{{8}, Scalar::F32, d}, {{8}, Scalar::F32, with_nan}, {{8}, Scalar::F16, h}, {{8}, Scalar::F64, f64s}},
                      [&](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
                        return {red(kb, v[0], Scalar::F32, "sum"), red(kb, v[1], Scalar::F32, "max"),
                                red(kb, v[2], Scalar::F16, "sum"), red(kb, v[3], Scalar::F64, "prod")};
                      });
  float s = 0;
  for (int i = 0; i < 8; ++i) s = i == 0 ? xs[0] : s + xs[i];
  assert_int_equal(r[0][0], f32_bits(s));
  assert_true(std::isnan(bits_f32(static_cast<uint32_t>(r[1][0]))));
  assert_int_equal(r[2][0], f16_bits(static_cast<_Float16>(2048.0f)));  // 2048 + 1 + 1 ... each step rounds back
  assert_true(bits_f64(r[3][0]) == 1.5 * -2.0 * 0.25 * 3.0 * 1.0 * 1.0 * 2.0 * 0.5);
  auto a = run_blocks({{{8}, Scalar::F32, d}}, [&](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
    return {red(kb, v[0], Scalar::F32, "argmax"), red(kb, v[0], Scalar::F32, "argmin")};
  });
  assert_int_equal(a[0][0], 0);  // 1e8 at 0
  assert_int_equal(a[1][0], 2);  // -1e8 at 2
  std::vector<uint64_t> ties = {f32_bits(1.0f), f32_bits(3.0f), f32_bits(-1.0f), f32_bits(3.0f)};
  a = run_blocks({{{4}, Scalar::F32, ties}}, [&](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
    return {red(kb, v[0], Scalar::F32, "argmax")};
  });
  assert_int_equal(a[0][0], 1);
}

// A combine region over the tuple (value, index) that keeps the larger value and, on ties, the
// smaller index: argmax written by hand, reduced along axis 1 of <4 x 8>.
void reduce_with_combine_region(void**) {
  std::vector<uint64_t> vals = random_i32(32, 11);
  const int32_t row0[8] = {5, -3, 7, 1000, 2, 9, 1000, -100};  // a tie for the maximum in row 0
  for (int j = 0; j < 8; ++j) vals[j] = static_cast<uint32_t>(row0[j]);
  std::vector<uint64_t> idx;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) idx.push_back(j);
  auto r = run_blocks({{{4, 8}, Scalar::I32, vals}, {{4, 8}, Scalar::I32, idx}}, [](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
    TypeId i32 = kb.t(Scalar::I32), rt = kb.blk({4}, Scalar::I32);
    OpId red = kb.make(Opcode::Reduce, {v[0], v[1]}, {rt, rt}, attrs_of(Opcode::Reduce, {{"axis", Attr::of_int(1)}}));
    std::vector<ValueId> a = kb.region(red, {i32, i32, i32, i32});
    ValueId gt = kb.cmp("sgt", a[2], a[0]);
    ValueId eq = kb.cmp("eq", a[2], a[0]);
    ValueId lt_idx = kb.cmp("slt", a[3], a[1]);
    ValueId take_b = kb.bin(Opcode::Or, gt, kb.bin(Opcode::And, eq, lt_idx));
    kb.yield({kb.select(take_b, a[2], a[0]), kb.select(take_b, a[3], a[1])});
    kb.end_region();
    return {kb.f->ops[red].results[0], kb.f->ops[red].results[1]};
  });
  for (int i = 0; i < 4; ++i) {
    int best = 0;
    for (int j = 1; j < 8; ++j)
      if (static_cast<int32_t>(vals[i * 8 + j]) > static_cast<int32_t>(vals[i * 8 + best])) best = j;
    assert_int_equal(r[0][i], vals[i * 8 + best]);
    assert_int_equal(r[1][i], best);
  }
  assert_int_equal(r[1][0], 3);
}

// Scans with a combine region that is associative but not commutative: composition of affine
// maps x -> a*x + b, as (a, b) pairs: (a1, b1) then (a2, b2) is (a1*a2, b1*a2 + b2). Forward and
// reverse, along axis 0 of <8 x 2>.
void scan_with_combine_region(void**) {
  std::vector<uint64_t> as = random_i32(16, 21), bs = random_i32(16, 22);
  for (bool reverse : {false, true}) {
    auto r = run_blocks({{{8, 2}, Scalar::I32, as}, {{8, 2}, Scalar::I32, bs}}, [&](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
      TypeId i32 = kb.t(Scalar::I32), rt = kb.blk({8, 2}, Scalar::I32);
      OpId sc = kb.make(Opcode::Scan, {v[0], v[1]}, {rt, rt},
                        attrs_of(Opcode::Scan, {{"axis", Attr::of_int(0)}, {"reverse", Attr::of_bool(reverse)}}));
      std::vector<ValueId> a = kb.region(sc, {i32, i32, i32, i32});
      kb.yield({kb.bin(Opcode::Mul, a[0], a[2]), kb.bin(Opcode::Add, kb.bin(Opcode::Mul, a[1], a[2]), a[3])});
      kb.end_region();
      return {kb.f->ops[sc].results[0], kb.f->ops[sc].results[1]};
    });
    for (int col = 0; col < 2; ++col) {
      uint32_t a = 0, b = 0;
      for (int c = 0; c < 8; ++c) {
        int row = reverse ? 7 - c : c;
        uint32_t a2 = static_cast<uint32_t>(as[row * 2 + col]), b2 = static_cast<uint32_t>(bs[row * 2 + col]);
        if (c == 0) {
          a = a2;
          b = b2;
        } else {
          b = b * a2 + b2;
          a = a * a2;
        }
        assert_int_equal(r[0][row * 2 + col], a);
        assert_int_equal(r[1][row * 2 + col], b);
      }
    }
  }
}

// ---- dot

float tf32_ref(float x) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7f800000) == 0x7f800000) return x;
  u = (u + 0xfff + ((u >> 13) & 1)) & ~0x1fffu;
  return bits_f32(u);
}

// Lanes of a random M x K (or B x M x K) block of type s with small, exactly representable values.
std::vector<uint64_t> random_floats(size_t n, Scalar s, uint64_t seed, std::vector<float>* vals) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out;
  vals->clear();
  for (size_t i = 0; i < n; ++i) {
    float v = static_cast<float>(static_cast<int>(rng() % 33) - 16) / 8.0f;  // multiples of 1/8 in [-2, 2]
    if (s == Scalar::F32) v += static_cast<float>(rng() % 1000) * 1e-7f;     // bits below tf32's precision
    vals->push_back(v);
    switch (s) {
      case Scalar::F16: out.push_back(f16_bits(static_cast<_Float16>(v))); break;
      case Scalar::BF16: out.push_back(f32_bits(v) >> 16); break;
      case Scalar::F8E4M3:
      case Scalar::F8E5M2: {
        // Encode the few values by hand: sign, exponent and the 3 (or 2) mantissa bits.
        float a = std::fabs(v);
        uint64_t code = 0;
        if (a != 0) {
          int e;
          float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
          int mb = s == Scalar::F8E4M3 ? 3 : 2, bias = s == Scalar::F8E4M3 ? 7 : 15;
          int frac = static_cast<int>((m * 2 - 1) * (1 << mb));
          if ((m * 2 - 1) * (1 << mb) != frac) {  // not representable with fewer mantissa bits: drop it
            (*vals)[i] = v = 0;
          } else {
            code = (static_cast<uint64_t>(e - 1 + bias) << mb) | frac;
          }
        }
        if (v < 0) code |= 0x80;
        out.push_back(code);
        break;
      }
      default: out.push_back(f32_bits(v)); break;
    }
  }
  return out;
}

void check_dot(Scalar in, bool tf32, bool batched) {
  const int64_t B = batched ? 2 : 1, M = 4, K = 16, N = 8;
  std::vector<float> av, bv, cv;
  std::vector<uint64_t> a = random_floats(B * M * K, in, 31 + static_cast<int>(in), &av);
  std::vector<uint64_t> b = random_floats(B * K * N, in, 41 + static_cast<int>(in), &bv);
  const Scalar acc = Scalar::F32;
  std::vector<uint64_t> c = random_floats(B * M * N, acc, 51, &cv);
  std::vector<int64_t> sa = {M, K}, sb = {K, N}, sc = {M, N};
  if (batched) {
    sa.insert(sa.begin(), B);
    sb.insert(sb.begin(), B);
    sc.insert(sc.begin(), B);
  }
  auto r = run_blocks({{sa, in, a}, {sb, in, b}, {sc, acc, c}}, [&](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
    std::vector<Attr> attrs;
    if (tf32) attrs = {enum_attr(Opcode::Dot, "precision", "tf32")};
    return {kb.op(Opcode::Dot, {v[0], v[1], v[2]}, kb.type(v[2]), attrs)};
  });
  for (int64_t bt = 0; bt < B; ++bt)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        const int64_t ci = (bt * M + m) * N + n;
        float s = cv[ci];
        for (int64_t k = 0; k < K; ++k) {
          float x = av[(bt * M + m) * K + k], y = bv[(bt * K + k) * N + n];
          if (tf32) {
            x = tf32_ref(x);
            y = tf32_ref(y);
          }
          float p = x * y;
          s = s + p;
        }
        if (static_cast<uint32_t>(r[0][ci]) != f32_bits(s))
          fail_msg("dot %s%s [%ld, %ld, %ld] = %a, want %a", tri::ir::scalar_name(in), tf32 ? " tf32" : "", (long)bt, (long)m,
                   (long)n, bits_f32(static_cast<uint32_t>(r[0][ci])), s);
      }
}

void dot_float_inputs(void**) {
  for (Scalar s : {Scalar::F16, Scalar::BF16, Scalar::F8E4M3, Scalar::F8E5M2, Scalar::F32})
    for (bool batched : {false, true}) check_dot(s, false, batched);
  check_dot(Scalar::F32, true, false);
  check_dot(Scalar::F32, true, true);
  // tf32 really rounds: 1 + 2^-12 is 1 in tf32, so (1 + 2^-12)^2 contributes exactly 1.
  std::vector<uint64_t> one = {f32_bits(1.0f + std::ldexp(1.0f, -12))};
  auto r = run_blocks({{{1, 1}, Scalar::F32, one}, {{1, 1}, Scalar::F32, one}, {{1, 1}, Scalar::F32, {f32_bits(0)}}},
                      [](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
                        return {kb.op(Opcode::Dot, {v[0], v[1], v[2]}, kb.type(v[2]), {enum_attr(Opcode::Dot, "precision", "tf32")}),
                                kb.op(Opcode::Dot, {v[0], v[1], v[2]}, kb.type(v[2]))};
                      });
  assert_true(bits_f32(static_cast<uint32_t>(r[0][0])) == 1.0f);
  assert_true(bits_f32(static_cast<uint32_t>(r[1][0])) == (1.0f + std::ldexp(1.0f, -12)) * (1.0f + std::ldexp(1.0f, -12)));
}

void dot_i8(void**) {
  std::mt19937_64 rng(61);
  const int M = 8, K = 32, N = 4;
  std::vector<uint64_t> a, b, c;
  for (int i = 0; i < M * K; ++i) a.push_back(static_cast<uint8_t>(rng()));
  for (int i = 0; i < K * N; ++i) b.push_back(static_cast<uint8_t>(rng()));
  for (int i = 0; i < M * N; ++i) c.push_back(i == 0 ? 0x7fffff00u : static_cast<uint32_t>(rng()));  // lane 0 wraps
  auto r = run_blocks({{{M, K}, Scalar::I8, a}, {{K, N}, Scalar::I8, b}, {{M, N}, Scalar::I32, c}},
                      [](KB& kb, const std::vector<ValueId>& v) -> std::vector<ValueId> {
                        return {kb.op(Opcode::Dot, {v[0], v[1], v[2]}, kb.type(v[2]))};
                      });
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      int64_t s = static_cast<int32_t>(c[m * N + n]);
      for (int k = 0; k < K; ++k) s += static_cast<int8_t>(a[m * K + k]) * static_cast<int8_t>(b[k * N + n]);
      assert_int_equal(r[0][m * N + n], static_cast<uint32_t>(s));
    }
}

void dot_propagates_undefined_rows(void**) {
  // Row 1 of `a` comes from a masked-off load without `other`: row 1 of a @ b is undefined, and
  // only it. A store masked like the load is fine; an unmasked one is reported at lane [1, 0].
  for (bool masked_store : {true, false}) {
    KB kb;
    ValueId pa = kb.param("a", kb.ptr(Scalar::F16));
    ValueId po = kb.param("o", kb.ptr(Scalar::F32));
    ValueId offs = kb.op(Opcode::Reshape, {kb.arange(0, 16)}, kb.blk({4, 4}, Scalar::I32));
    ValueId rows = kb.bin(Opcode::SDiv, offs, kb.splat(kb.i32(4), {4, 4}));
    ValueId m = kb.cmp("ne", rows, kb.splat(kb.i32(1), {4, 4}));
    ValueId aptrs = kb.addptr(kb.splat(pa, {4, 4}), offs);
    kb.next_loc = Loc{6, 3};
    ValueId a = kb.load(aptrs, m);
    ValueId b = kb.load(aptrs);
    ValueId acc = kb.cf(kb.blk({4, 4}, Scalar::F32), 0.5);
    ValueId d = kb.op(Opcode::Dot, {a, b, acc}, kb.blk({4, 4}, Scalar::F32));
    ValueId optrs = kb.addptr(kb.splat(po, {4, 4}), offs);
    kb.next_loc = Loc{9, 9};
    kb.store(optrs, d, masked_store ? m : kNoValue);
    kb.ret();
    uint16_t as[16];
    for (int i = 0; i < 16; ++i) as[i] = f16_bits(static_cast<_Float16>(i));
    float os[16] = {};
    Status st = kb.run(Grid{}, {arg_ptr(as, 32), arg_ptr(os, 64)}, true);
    if (masked_store) {
      assert_true(st.is_ok());
      for (int i : {0, 2, 3})
        for (int j = 0; j < 4; ++j) {
          float want = 0.5f;
          for (int k = 0; k < 4; ++k) want += static_cast<float>(i * 4 + k) * static_cast<float>(k * 4 + j);
          assert_true(os[i * 4 + j] == want);
        }
      continue;
    }
    assert_string_equal(st.message().c_str(),
                        "t.tri:9:9: error: 'store' operand 'value' lane [1, 0] of <4 x 4 x f32> is undefined: it comes from a "
                        "masked-off lane of the 'load' at t.tri:6:3, which has no 'other'; program (0, 0, 0)");
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(splat_broadcast_expand),
      cmocka_unit_test(reshape_permute),
      cmocka_unit_test(join_split_cat),
      cmocka_unit_test(reduce_and_scan_builtin_every_axis),
      cmocka_unit_test(float_reductions),
      cmocka_unit_test(reduce_with_combine_region),
      cmocka_unit_test(scan_with_combine_region),
      cmocka_unit_test(dot_float_inputs),
      cmocka_unit_test(dot_i8),
      cmocka_unit_test(dot_propagates_undefined_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
