// Memory, masks and checked mode: loads and stores of every element size (i1 as a byte), masks
// with `other`, addptr scaling, every atomic kind and atomic_cas (returning the old value), and
// the exact diagnostics of checked mode: out of bounds at either end, misalignment, undefined
// lanes of masked loads used as values, addresses, masks, conditions and loop bounds (also across
// a call), launch-argument facts, assert, assume, print's format, inline_asm and unspecialized IR.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "test_main.h"

using namespace tri_test;

namespace {

// offs = pid * B + arange(0, B), and mask = offs < n.
struct Lanes {
  ValueId offs, mask;
};
Lanes lanes(KB& kb, int64_t block, ValueId n) {
  ValueId start = kb.bin(Opcode::Mul, kb.pid(), kb.i32(block));
  ValueId offs = kb.bin(Opcode::Add, kb.splat(start, {block}), kb.arange(0, block));
  return {offs, kb.cmp("slt", offs, kb.splat(n, {block}))};
}

void vadd_with_masked_tail(void**) {
  // The kernel of docs/ir.md: out[i] = x[i] + y[i] for i < n, n not a multiple of the block.
  KB kb("vadd");
  ValueId x = kb.param("x", kb.ptr(Scalar::F32), 16);
  ValueId y = kb.param("y", kb.ptr(Scalar::F32), 16);
  ValueId out = kb.param("out", kb.ptr(Scalar::F32), 16);
  ValueId n = kb.param("n", kb.t(Scalar::I32));
  Lanes l = lanes(kb, 128, n);
  ValueId xv = kb.load(kb.lanes_of(x, l.offs), l.mask);
  ValueId yv = kb.load(kb.lanes_of(y, l.offs), l.mask);
  kb.store(kb.lanes_of(out, l.offs), kb.bin(Opcode::Add, xv, yv), l.mask);
  kb.ret();
  const int N = 1000;
  alignas(16) static float xs[1024], ys[1024], os[1024];
  for (int i = 0; i < 1024; ++i) {
    xs[i] = 0.5f * i;
    ys[i] = 1000.0f - i;
    os[i] = -7.0f;
  }
  for (bool checked : {false, true}) {
    Grid g;
    g.x = 8;
    Status st = kb.run(g, {arg_ptr(xs, N * 4), arg_ptr(ys, N * 4), arg_ptr(os, N * 4), arg_int(N)}, checked);
    assert_true(st.is_ok());
    for (int i = 0; i < N; ++i) assert_true(os[i] == xs[i] + ys[i]);
    for (int i = N; i < 1024; ++i) assert_true(os[i] == -7.0f);  // masked-off lanes never touch memory
  }
}

void other_fills_masked_lanes(void**) {
  KB kb;
  ValueId x = kb.param("x", kb.ptr(Scalar::I16));
  ValueId out = kb.param("out", kb.ptr(Scalar::I16));
  ValueId n = kb.param("n", kb.t(Scalar::I32));
  Lanes l = lanes(kb, 8, n);
  ValueId v = kb.load(kb.lanes_of(x, l.offs), l.mask, kb.c(kb.blk({8}, Scalar::I16), -3));
  kb.store(kb.lanes_of(out, l.offs), v);
  kb.ret();
  int16_t xs[8] = {1, 2, 3, 4, 5, 6, 7, 8}, os[8] = {};
  assert_true(kb.run(Grid{}, {arg_ptr(xs, 16), arg_ptr(os, 16), arg_int(5)}, true).is_ok());
  const int16_t want[8] = {1, 2, 3, 4, 5, -3, -3, -3};
  assert_memory_equal(os, want, sizeof want);
}

void element_sizes_and_addptr_scaling(void**) {
  // out[i] = in[3 - i] for i in 0..3 over every scalar type: addptr scales by the element size,
  // offsets are signed (base in+3, offsets 0, -1, -2, -3) and an i1 is a byte.
  for (int si = 0; si < tri::ir::kNumScalars; ++si) {
    Scalar s = static_cast<Scalar>(si);
    KB kb;
    ValueId in = kb.param("in", kb.ptr(s));
    ValueId out = kb.param("out", kb.ptr(s));
    ValueId base = kb.addptr(in, kb.c(kb.t(Scalar::I64), 3));
    ValueId neg = kb.un(Opcode::Neg, kb.arange(0, 4));
    ValueId v = kb.load(kb.addptr(kb.splat(base, {4}), neg));
    kb.store(kb.lanes_of(out, kb.arange(0, 4)), v);
    kb.ret();
    const int b = elem_bytes(s);
    std::vector<uint8_t> ib(4 * b), ob(4 * b, 0xee);
    for (size_t k = 0; k < ib.size(); ++k) ib[k] = static_cast<uint8_t>(k * 7 + 1);
    if (s == Scalar::I1) ib = {0, 1, 2, 0};  // nonzero bytes read as true
    Status st = kb.run(Grid{}, {arg_ptr(ib.data(), ib.size()), arg_ptr(ob.data(), ob.size())}, true);
    if (!st.is_ok()) fail_msg("%s: %s", tri::ir::scalar_name(s), st.message().c_str());
    for (int i = 0; i < 4; ++i) {
      if (s == Scalar::I1) {
        assert_int_equal(ob[i], ib[3 - i] != 0);  // stores write 0 or 1
      } else {
        assert_memory_equal(&ob[i * b], &ib[(3 - i) * b], b);
      }
    }
  }
}

void scalar_load_store(void**) {
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::F64));
  ValueId v = kb.load(p);
  kb.store(kb.addptr(p, kb.i32(1)), kb.bin(Opcode::Mul, v, kb.cf(kb.t(Scalar::F64), 3.0)));
  kb.ret();
  double d[2] = {1.25, 0};
  assert_true(kb.run(Grid{}, {arg_ptr(d, 16)}, true).is_ok());
  assert_true(d[1] == 3.75);
}

// ---- atomics

// Runs `old = atomic[kind](p + idx, v)` over 8 lanes of i32 and returns the memory after and
// the old values.
void run_atomic(const std::string& kind, Scalar s, const std::vector<int64_t>& idx, const std::vector<uint64_t>& vals,
                std::vector<uint8_t>* mem, std::vector<uint64_t>* olds, const std::vector<int>* mask = nullptr) {
  KB kb;
  ValueId p = kb.param("p", kb.ptr(s));
  ValueId ib = kb.param("idx", kb.ptr(Scalar::I32));
  ValueId vb = kb.param("v", kb.ptr(s));
  ValueId ob = kb.param("old", kb.ptr(s));
  ValueId mb = kb.param("m", kb.ptr(Scalar::I1));
  ValueId r = kb.arange(0, 8);
  ValueId idxv = kb.load(kb.lanes_of(ib, r));
  ValueId vv = kb.load(kb.lanes_of(vb, r));
  ValueId m = mask ? kb.load(kb.lanes_of(mb, r)) : kNoValue;
  ValueId old = kb.atomic(kind, kb.addptr(kb.splat(p, {8}), idxv), vv, m);
  kb.store(kb.lanes_of(ob, r), old, m);
  kb.ret();
  std::vector<int32_t> is(idx.begin(), idx.end());
  std::vector<uint8_t> vs = pack(vals, s), os(8 * elem_bytes(s) + 8, 0);
  std::vector<uint8_t> ms(8, 1);
  if (mask)
    for (int i = 0; i < 8; ++i) ms[i] = static_cast<uint8_t>((*mask)[i]);
  Status st = kb.run(Grid{}, {arg_ptr(mem->data(), mem->size()), arg_ptr(is.data(), 32), arg_ptr(vs.data(), vs.size()),
                              arg_ptr(os.data(), os.size()), arg_ptr(ms.data(), 8)},
                     true);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  *olds = unpack(os, 8, s);
}

void atomics_every_kind(void**) {
  struct Case {
    const char* kind;
    uint32_t (*f)(uint32_t, uint32_t);
  };
  const Case cases[] = {
      {"add", [](uint32_t a, uint32_t b) { return a + b; }},
      {"min", [](uint32_t a, uint32_t b) { return static_cast<uint32_t>(std::min<int32_t>(a, b)); }},
      {"max", [](uint32_t a, uint32_t b) { return static_cast<uint32_t>(std::max<int32_t>(a, b)); }},
      {"umin", [](uint32_t a, uint32_t b) { return std::min(a, b); }},
      {"umax", [](uint32_t a, uint32_t b) { return std::max(a, b); }},
      {"and", [](uint32_t a, uint32_t b) { return a & b; }},
      {"or", [](uint32_t a, uint32_t b) { return a | b; }},
      {"xor", [](uint32_t a, uint32_t b) { return a ^ b; }},
      {"xchg", [](uint32_t, uint32_t b) { return b; }},
  };
  // Lanes 0..7 hit addresses 0, 1, 0, 2, 0, 1, 3, 3: repeated addresses see each other's updates
  // (the interpreter performs lanes in order).
  const std::vector<int64_t> idx = {0, 1, 0, 2, 0, 1, 3, 3};
  const std::vector<uint64_t> vals = {5, 0xfffffff0, 0x80000000, 7, 3, 12, 0x7fffffff, 1};
  const uint32_t init[4] = {10, 0xffffffff, 0x0f0f0f0f, 0};
  for (const Case& c : cases) {
    std::vector<uint8_t> mem(16);
    std::memcpy(mem.data(), init, 16);
    std::vector<uint64_t> olds;
    run_atomic(c.kind, Scalar::I32, idx, vals, &mem, &olds);
    uint32_t want[4];
    std::memcpy(want, init, 16);
    for (int i = 0; i < 8; ++i) {
      assert_int_equal(olds[i], want[idx[i]]);
      want[idx[i]] = c.f(want[idx[i]], static_cast<uint32_t>(vals[i]));
    }
    if (std::memcmp(mem.data(), want, 16) != 0) fail_msg("atomic %s", c.kind);
  }
  // Masked-off lanes have no effect.
  std::vector<uint8_t> mem(16, 0);
  std::vector<uint64_t> olds;
  std::vector<int> mask = {1, 0, 1, 0, 0, 0, 0, 1};
  run_atomic("add", Scalar::I32, idx, vals, &mem, &olds, &mask);
  uint32_t got[4];
  std::memcpy(got, mem.data(), 16);
  assert_int_equal(got[0], 5u + 0x80000000u);
  assert_int_equal(got[1], 0);
  assert_int_equal(got[3], 1);
}

void float_atomics(void**) {
  const std::vector<int64_t> idx = {0, 0, 1, 1, 2, 2, 3, 3};
  const float nan = std::nanf("");
  std::vector<float> fv = {1.5f, 2.25f, -1.0f, 3.0f, nan, 1.0f, -0.0f, 0.0f};
  std::vector<uint64_t> vals;
  for (float f : fv) vals.push_back(f32_bits(f));
  float init[4] = {1.0f, 0.0f, 5.0f, 0.0f};
  std::vector<uint8_t> mem(16);
  std::memcpy(mem.data(), init, 16);
  std::vector<uint64_t> olds;
  run_atomic("add", Scalar::F32, idx, vals, &mem, &olds);
  float got[4];
  std::memcpy(got, mem.data(), 16);
  assert_true(got[0] == 1.0f + 1.5f + 2.25f);
  assert_true(got[1] == 2.0f);
  assert_true(std::isnan(got[2]));
  assert_true(got[3] == 0.0f);
  assert_true(bits_f32(static_cast<uint32_t>(olds[1])) == 2.5f);
  std::memcpy(mem.data(), init, 16);
  run_atomic("max", Scalar::F32, idx, vals, &mem, &olds);
  std::memcpy(got, mem.data(), 16);
  assert_true(got[0] == 2.25f);
  assert_true(got[1] == 3.0f);
  assert_true(std::isnan(got[2]));  // NaN propagates
  assert_true(got[3] == 0.0f && !std::signbit(got[3]));
  std::memcpy(mem.data(), init, 16);
  run_atomic("min", Scalar::F32, idx, vals, &mem, &olds);
  std::memcpy(got, mem.data(), 16);
  assert_true(got[0] == 1.0f);
  assert_true(got[1] == -1.0f);
  assert_true(got[3] == 0.0f && std::signbit(got[3]));
  // f16 add: computed in f32, rounded to f16.
  std::vector<uint8_t> hm(8, 0);
  uint16_t h0 = f16_bits(static_cast<_Float16>(2048.0f));
  std::memcpy(hm.data(), &h0, 2);
  std::vector<uint64_t> hv(8, f16_bits(static_cast<_Float16>(1.0f)));
  run_atomic("add", Scalar::F16, {0, 0, 0, 1, 1, 1, 1, 1}, hv, &hm, &olds);
  uint16_t r0, r1;
  std::memcpy(&r0, hm.data(), 2);
  std::memcpy(&r1, hm.data() + 2, 2);
  assert_int_equal(r0, f16_bits(static_cast<_Float16>(2048.0f)));  // 2048 + 1 rounds back to 2048
  assert_int_equal(r1, f16_bits(static_cast<_Float16>(5.0f)));
}

void atomics_every_width(void**) {
  // add and max on i8, i16, i64 (wrapping, signed compare), xchg on f64 and add on bf16.
  const std::vector<int64_t> idx = {0, 0, 1, 1, 0, 1, 0, 1};
  for (Scalar s : {Scalar::I8, Scalar::I16, Scalar::I64}) {
    const int w = tri::ir::scalar_bits(s);
    const uint64_t mask = w == 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
    const std::vector<uint64_t> vals = {100 & mask, 100 & mask, mask, 1, 50, mask - 5, 1, 2};
    for (const char* kind : {"add", "max", "umin"}) {
      std::vector<uint8_t> mem(16, 0);
      std::vector<uint64_t> olds;
      run_atomic(kind, s, idx, vals, &mem, &olds);
      std::vector<uint64_t> want = {0, 0};
      for (int i = 0; i < 8; ++i) {
        uint64_t& cell = want[idx[i]];
        assert_int_equal(olds[i], cell);
        int64_t a = static_cast<int64_t>(cell << (64 - w)) >> (64 - w), b = static_cast<int64_t>(vals[i] << (64 - w)) >> (64 - w);
        std::string k = kind;
        cell = k == "add" ? (cell + vals[i]) & mask : k == "max" ? (a > b ? cell : vals[i]) : std::min(cell, vals[i]);
      }
      assert_true(unpack(mem, 2, s) == want);
    }
  }
  std::vector<uint8_t> mem(16, 0);
  std::vector<uint64_t> olds;
  run_atomic("xchg", Scalar::F64, idx, {f64_bits(1.5), f64_bits(2.5), f64_bits(-1), f64_bits(4), f64_bits(5), f64_bits(6),
                                         f64_bits(7), f64_bits(8)}, &mem, &olds);
  assert_true(unpack(mem, 2, Scalar::F64) == std::vector<uint64_t>({f64_bits(7), f64_bits(8)}));
  assert_int_equal(olds[6], f64_bits(5));
  std::memset(mem.data(), 0, mem.size());
  run_atomic("add", Scalar::BF16, idx, std::vector<uint64_t>(8, 0x3f80), &mem, &olds);  // += 1.0 four times each
  assert_true(unpack(mem, 2, Scalar::BF16) == std::vector<uint64_t>({0x4080, 0x4080}));
}

void atomic_cas_lanes(void**) {
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::I64));
  ValueId ob = kb.param("old", kb.ptr(Scalar::I64));
  ValueId r = kb.arange(0, 4);
  ValueId idx = kb.bin(Opcode::And, r, kb.splat(kb.i32(1), {4}));  // addresses 0, 1, 0, 1
  ValueId cmpv = kb.cast(Opcode::SExt, r, Scalar::I64);            // expect 0, 1, 2, 3
  ValueId nv = kb.bin(Opcode::Add, cmpv, kb.splat(kb.c(kb.t(Scalar::I64), 100), {4}));
  ValueId old = kb.cas(kb.addptr(kb.splat(p, {4}), idx), cmpv, nv);
  kb.store(kb.lanes_of(ob, r), old);
  kb.ret();
  int64_t mem[2] = {0, 5}, olds[4] = {};
  assert_true(kb.run(Grid{}, {arg_ptr(mem, 16), arg_ptr(olds, 32)}, true).is_ok());
  // lane 0: mem[0] == 0 -> 100; lane 1: mem[1] == 5 != 1 -> keep; lane 2: mem[0] == 100 != 2; lane 3: 5 != 3.
  assert_int_equal(mem[0], 100);
  assert_int_equal(mem[1], 5);
  const int64_t want[4] = {0, 5, 100, 5};
  assert_memory_equal(olds, want, sizeof want);
}

void atomic_cas_compares_bits(void**) {
  // A float CAS compares bit patterns: -0.0 does not match +0.0, and a NaN matches itself.
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::F32));
  ValueId ptrs = kb.lanes_of(p, kb.arange(0, 2));
  ValueId cmpv = kb.load(ptrs);
  ValueId zero = kb.cf(kb.blk({2}, Scalar::F32), -0.0);
  ValueId nz = kb.cf(kb.blk({2}, Scalar::F32), 9.0);
  kb.cas(ptrs, zero, nz);
  kb.cas(ptrs, cmpv, kb.cf(kb.blk({2}, Scalar::F32), 3.0));
  kb.ret();
  float mem[2] = {0.0f, std::nanf("")};
  assert_true(kb.run(Grid{}, {arg_ptr(mem, 8)}, true).is_ok());
  assert_true(mem[0] == 3.0f);  // not 9 (+0 vs -0 differ), then 3 (bits equal)
  assert_true(mem[1] == 3.0f);  // NaN == NaN bitwise
}

void atomics_across_programs(void**) {
  // Every program instance adds its id + 1 to one counter.
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::I32));
  kb.atomic("add", p, kb.bin(Opcode::Add, kb.pid(), kb.i32(1)));
  kb.ret();
  int32_t c = 0;
  Grid g;
  g.x = 10;
  g.y = 3;
  assert_true(kb.run(g, {arg_ptr(&c, 4)}).is_ok());
  assert_int_equal(c, 3 * 55);
}

// ---- checked mode: bounds and alignment

// A kernel that copies in[off + i] to out[off + i] for lanes i < 128 with mask offs < n.
struct CopyKernel {
  KB kb{"copy"};
  CopyKernel(int64_t shift) {
    ValueId in = kb.param("in", kb.ptr(Scalar::F32));
    ValueId out = kb.param("out", kb.ptr(Scalar::F32));
    ValueId n = kb.param("n", kb.t(Scalar::I32));
    Lanes l = lanes(kb, 128, n);
    ValueId offs = kb.bin(Opcode::Add, l.offs, kb.splat(kb.i32(shift), {128}));
    ValueId ip = kb.lanes_of(in, offs);
    kb.next_loc = Loc{7, 9};
    ValueId v = kb.load(ip, l.mask);
    ValueId op = kb.lanes_of(out, offs);
    kb.next_loc = Loc{8, 3};
    kb.store(op, v, l.mask);
    kb.ret();
  }
};

void out_of_bounds_past_the_end(void**) {
  CopyKernel k(0);
  static float in[1024], out[1024];
  Grid g;
  g.x = 8;
  // n = 1001 over buffers whose extent is 1000 floats: lane 1000 = program 7, lane [104].
  Status st = k.kb.run(g, {arg_ptr(in, 4000), arg_ptr(out, 4000), arg_int(1001)}, true);
  assert_int_equal(st.code(), Code::Runtime);
  std::string want = "t.tri:7:9: error: 'load' lane [104] of <128 x ptr<f32>> reads 4 bytes at " + hexaddr(in + 1000) +
                     ", out of bounds: byte offset 4000 of argument %in (extent 4000 bytes); program (7, 0, 0)";
  assert_string_equal(st.message().c_str(), want.c_str());
  // The same launch unchecked runs (the buffers are really 1024 floats long).
  assert_true(k.kb.run(g, {arg_ptr(in, 4000), arg_ptr(out, 4000), arg_int(1001)}, false).is_ok());
  // With the load in bounds but the store's extent short by one element.
  st = k.kb.run(g, {arg_ptr(in, 4096), arg_ptr(out, 3996), arg_int(1000)}, true);
  want = "t.tri:8:3: error: 'store' lane [103] of <128 x ptr<f32>> writes 4 bytes at " + hexaddr(out + 999) +
         ", out of bounds: byte offset 3996 of argument %out (extent 3996 bytes); program (7, 0, 0)";
  assert_string_equal(st.message().c_str(), want.c_str());
  // An extent of 0 means unknown: not checked.
  assert_true(k.kb.run(g, {arg_ptr(in, 0), arg_ptr(out, 0), arg_int(1001)}, true).is_ok());
}

void out_of_bounds_before_the_start(void**) {
  CopyKernel k(-1);
  static float in[1024], out[1024];
  Status st = k.kb.run(Grid{}, {arg_ptr(in + 1, 4000), arg_ptr(out + 1, 4000), arg_int(128)}, true);
  std::string want = "t.tri:7:9: error: 'load' lane [0] of <128 x ptr<f32>> reads 4 bytes at " + hexaddr(in) +
                     ", out of bounds: byte offset -4 of argument %in (extent 4000 bytes); program (0, 0, 0)";
  assert_string_equal(st.message().c_str(), want.c_str());
}

void misaligned_and_inttoptr(void**) {
  // A ptr<i8> moved by one byte and bitcast to ptr<i32>: a misaligned 4-byte load. Provenance
  // survives bitcast; inttoptr drops it, so the same address through inttoptr is only checked
  // for alignment, not bounds.
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::I8));
  ValueId out = kb.param("out", kb.ptr(Scalar::I32));
  ValueId sel = kb.param("sel", kb.t(Scalar::I32));
  ValueId shift = kb.param("shift", kb.t(Scalar::I64));
  ValueId q = kb.addptr(p, shift);
  ValueId qi = kb.op(Opcode::Bitcast, {q}, kb.ptr(Scalar::I32));
  ValueId viaint = kb.op(Opcode::IntToPtr, {kb.op(Opcode::PtrToInt, {qi}, kb.t(Scalar::I64))}, kb.ptr(Scalar::I32));
  ValueId use_int = kb.cmp("ne", sel, kb.i32(0));
  ValueId ptr = kb.select(use_int, viaint, qi);
  ValueId ptrs = kb.addptr(kb.splat(ptr, {4}), kb.arange(0, 4));
  kb.next_loc = Loc{4, 5};
  ValueId v = kb.load(ptrs);
  kb.store(kb.lanes_of(out, kb.arange(0, 4)), v);
  kb.ret();
  alignas(16) static uint8_t buf[64];
  static int32_t o[4];
  Status st = kb.run(Grid{}, {arg_ptr(buf, 64), arg_ptr(o, 16), arg_int(0), arg_int(1)}, true);
  std::string want = "t.tri:4:5: error: 'load' lane [0] of <4 x ptr<i32>> reads 4 bytes at " + hexaddr(buf + 1) +
                     ", which is not 4-byte aligned; program (0, 0, 0)";
  assert_string_equal(st.message().c_str(), want.c_str());
  // Aligned but past the extent: caught with provenance, not through inttoptr.
  st = kb.run(Grid{}, {arg_ptr(buf, 16), arg_ptr(o, 16), arg_int(0), arg_int(4)}, true);
  want = "t.tri:4:5: error: 'load' lane [3] of <4 x ptr<i32>> reads 4 bytes at " + hexaddr(buf + 16) +
         ", out of bounds: byte offset 16 of argument %p (extent 16 bytes); program (0, 0, 0)";
  assert_string_equal(st.message().c_str(), want.c_str());
  assert_true(kb.run(Grid{}, {arg_ptr(buf, 16), arg_ptr(o, 16), arg_int(1), arg_int(4)}, true).is_ok());
}

void atomic_out_of_bounds(void**) {
  KB kb;
  ValueId p = kb.param("counts", kb.ptr(Scalar::I32));
  ValueId ptrs = kb.addptr(kb.splat(p, {4}), kb.arange(0, 4));
  ValueId ones = kb.splat(kb.i32(1), {4});
  kb.next_loc = Loc{3, 4};
  kb.atomic("add", ptrs, ones);
  kb.ret();
  static int32_t c[4];
  Status st = kb.run(Grid{}, {arg_ptr(c, 12)}, true);
  std::string want = "t.tri:3:4: error: 'atomic' lane [3] of <4 x ptr<i32>> updates 4 bytes at " + hexaddr(c + 3) +
                     ", out of bounds: byte offset 12 of argument %counts (extent 12 bytes); program (0, 0, 0)";
  assert_string_equal(st.message().c_str(), want.c_str());
}

// ---- checked mode: undefined lanes of masked loads

// load x[i] for i < n without `other` (at t.tri:5:11); the caller decides how it is used.
struct PoisonKernel {
  KB kb;
  ValueId x, out, n, offs, mask, v;
  PoisonKernel() {
    x = kb.param("x", kb.ptr(Scalar::F32));
    out = kb.param("out", kb.ptr(Scalar::F32));
    n = kb.param("n", kb.t(Scalar::I32));
    Lanes l = lanes(kb, 8, n);
    offs = l.offs;
    mask = l.mask;
    ValueId xp = kb.lanes_of(x, offs);
    kb.next_loc = Loc{5, 11};
    v = kb.load(xp, mask);
  }
  Status run(bool checked = true) {
    return kb.run(Grid{}, {arg_ptr(xs, sizeof xs), arg_ptr(os, sizeof os), arg_int(5)}, checked);
  }
  float xs[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float os[8] = {};
};

const char* kFromLoad = "it comes from a masked-off lane of the 'load' at t.tri:5:11, which has no 'other'";

void undefined_value_stored(void**) {
  {
    // Stored under the same mask: fine.
    PoisonKernel k;
    k.kb.store(k.kb.lanes_of(k.out, k.offs), k.kb.bin(Opcode::Mul, k.v, k.v), k.mask);
    k.kb.ret();
    assert_true(k.run().is_ok());
    assert_true(k.os[4] == 25 && k.os[5] == 0);
  }
  {
    // Stored without a mask, after an add: lane 5 is the first undefined one.
    PoisonKernel k;
    ValueId w = k.kb.bin(Opcode::Add, k.v, k.kb.splat(k.kb.cf(k.kb.t(Scalar::F32), 1.0), {8}));
    ValueId op = k.kb.lanes_of(k.out, k.offs);
    k.kb.next_loc = Loc{9, 3};
    k.kb.store(op, w);
    k.kb.ret();
    Status st = k.run();
    assert_int_equal(st.code(), Code::Runtime);
    std::string want = std::string("t.tri:9:3: error: 'store' operand 'value' lane [5] of <8 x f32> is undefined: ") +
                       kFromLoad + "; program (0, 0, 0)";
    assert_string_equal(st.message().c_str(), want.c_str());
    // Unchecked: no report, and the masked-off lanes held 0.
    assert_true(k.run(false).is_ok());
    assert_true(k.os[5] == 1.0f && k.os[4] == 6.0f);
  }
  {
    // select(mask, v, 0) launders it: the undefined operand is not the one chosen.
    PoisonKernel k;
    ValueId w = k.kb.select(k.mask, k.v, k.kb.splat(k.kb.cf(k.kb.t(Scalar::F32), 0.0), {8}));
    k.kb.store(k.kb.lanes_of(k.out, k.offs), w);
    k.kb.ret();
    assert_true(k.run().is_ok());
  }
  {
    // A sum over the block is undefined as a whole; storing it through a scalar pointer.
    PoisonKernel k;
    ValueId s = k.kb.op(Opcode::Reduce, {k.v}, k.kb.t(Scalar::F32),
                        attrs_of(Opcode::Reduce, {{"axis", Attr::of_int(0)}, {"kind", enum_attr(Opcode::Reduce, "kind", "sum")}}));
    k.kb.next_loc = Loc{10, 1};
    k.kb.store(k.out, s);
    k.kb.ret();
    Status st = k.run();
    std::string want = std::string("t.tri:10:1: error: 'store' operand 'value' is undefined: ") + kFromLoad + "; program (0, 0, 0)";
    assert_string_equal(st.message().c_str(), want.c_str());
  }
}

void undefined_address_mask_condition(void**) {
  {
    // Undefined offsets make undefined addresses.
    PoisonKernel k;
    ValueId idx = k.kb.cast(Opcode::FPToSI, k.v, Scalar::I32);
    ValueId ptrs = k.kb.addptr(k.kb.splat(k.x, {8}), idx);
    k.kb.next_loc = Loc{12, 2};
    ValueId w = k.kb.load(ptrs);
    k.kb.store(k.kb.lanes_of(k.out, k.offs), w, k.mask);
    k.kb.ret();
    Status st = k.run();
    std::string want = std::string("t.tri:12:2: error: 'load' operand 'ptr' lane [5] of <8 x ptr<f32>> is undefined: ") +
                       kFromLoad + "; program (0, 0, 0)";
    assert_string_equal(st.message().c_str(), want.c_str());
  }
  {
    // An undefined mask.
    PoisonKernel k;
    ValueId m = k.kb.fcmp("ogt", k.v, k.kb.splat(k.kb.cf(k.kb.t(Scalar::F32), 2.0), {8}));
    ValueId op = k.kb.lanes_of(k.out, k.offs);
    k.kb.next_loc = Loc{13, 2};
    k.kb.store(op, k.v, m);
    k.kb.ret();
    Status st = k.run();
    std::string want = std::string("t.tri:13:2: error: 'store' operand 'mask' lane [5] of <8 x i1> is undefined: ") +
                       kFromLoad + "; program (0, 0, 0)";
    assert_string_equal(st.message().c_str(), want.c_str());
  }
  {
    // An undefined `if` condition (a max over the block, compared).
    PoisonKernel k;
    ValueId mx = k.kb.op(Opcode::Reduce, {k.v}, k.kb.t(Scalar::F32),
                         attrs_of(Opcode::Reduce, {{"axis", Attr::of_int(0)}, {"kind", enum_attr(Opcode::Reduce, "kind", "max")}}));
    ValueId c = k.kb.fcmp("ogt", mx, k.kb.cf(k.kb.t(Scalar::F32), 4.0));
    k.kb.next_loc = Loc{14, 2};
    OpId iff = k.kb.make(Opcode::If, {c}, {});
    k.kb.region(iff, {});
    k.kb.store(k.out, mx);
    k.kb.yield({});
    k.kb.end_region();
    k.kb.ret();
    Status st = k.run();
    std::string want = std::string("t.tri:14:2: error: 'if' operand 'cond' is undefined: ") + kFromLoad + "; program (0, 0, 0)";
    assert_string_equal(st.message().c_str(), want.c_str());
  }
  {
    // An undefined `for` bound.
    PoisonKernel k;
    ValueId idx = k.kb.cast(Opcode::FPToSI, k.v, Scalar::I32);
    ValueId hi = k.kb.op(Opcode::Reduce, {idx}, k.kb.t(Scalar::I32),
                         attrs_of(Opcode::Reduce, {{"axis", Attr::of_int(0)}, {"kind", enum_attr(Opcode::Reduce, "kind", "sum")}}));
    ValueId lo = k.kb.i32(0), one = k.kb.i32(1);
    k.kb.next_loc = Loc{15, 2};
    OpId loop = k.kb.make(Opcode::For, {lo, hi, one}, {});
    k.kb.region(loop, {k.kb.t(Scalar::I32)});
    k.kb.yield({});
    k.kb.end_region();
    k.kb.ret();
    Status st = k.run();
    std::string want = std::string("t.tri:15:2: error: 'for' operand 'hi' is undefined: ") + kFromLoad + "; program (0, 0, 0)";
    assert_string_equal(st.message().c_str(), want.c_str());
  }
}

void undefined_value_through_a_call(void**) {
  // @keep(%p, %v) stores %v unmasked: the use is reported in the callee, at its store.
  PoisonKernel k;
  KB& kb = k.kb;
  TypeId vt = kb.type(k.v), pt = kb.blk({8}, kb.ptr(Scalar::F32));
  ValueId ptrs = kb.lanes_of(k.out, k.offs);
  kb.make(Opcode::Call, {ptrs, k.v}, {}, {Attr::of_func("keep")});
  kb.ret();
  Function* callee = kb.func("keep", false);
  ValueId cp = kb.param("p", pt);
  ValueId cv = kb.param("v", vt);
  kb.next_loc = Loc{30, 5};
  kb.store(cp, cv);
  kb.ret();
  (void)callee;
  kb.use(kb.kernel);
  Status st = k.run();
  std::string want = std::string("t.tri:30:5: error: 'store' operand 'value' lane [5] of <8 x f32> is undefined: ") +
                     kFromLoad + "; program (0, 0, 0)";
  assert_string_equal(st.message().c_str(), want.c_str());
}

void undefined_from_masked_atomic(void**) {
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::I32));
  ValueId r = kb.arange(0, 4);
  ValueId m = kb.cmp("slt", r, kb.splat(kb.i32(2), {4}));
  ValueId ptrs = kb.addptr(kb.splat(p, {4}), r);
  ValueId ones = kb.splat(kb.i32(1), {4});
  kb.next_loc = Loc{2, 8};
  ValueId old = kb.atomic("add", ptrs, ones, m);
  ValueId dst = kb.addptr(kb.splat(p, {4}), kb.bin(Opcode::Add, r, kb.splat(kb.i32(4), {4})));
  kb.next_loc = Loc{3, 8};
  kb.store(dst, old);
  kb.ret();
  int32_t mem[8] = {};
  Status st = kb.run(Grid{}, {arg_ptr(mem, 32)}, true);
  assert_string_equal(st.message().c_str(),
                      "t.tri:3:8: error: 'store' operand 'value' lane [2] of <4 x i32> is undefined: it comes from a "
                      "masked-off lane of the 'atomic' at t.tri:2:8; program (0, 0, 0)");
}

// ---- launch arguments

void launch_argument_count_and_facts(void**) {
  KB kb("scale");
  ValueId p = kb.param("p", kb.ptr(Scalar::F32), 16);
  ValueId n = kb.param("n", kb.t(Scalar::I32), 0, 16);
  kb.param("s", kb.t(Scalar::F32));
  kb.store(p, kb.cast(Opcode::SIToFP, n, Scalar::F32));
  kb.ret();
  alignas(16) static float buf[8];
  Status st = kb.run(Grid{}, {arg_ptr(buf, 32), arg_int(16)});
  assert_int_equal(st.code(), Code::LaunchArgs);
  assert_string_equal(st.message().c_str(), "kernel @scale takes 3 arguments, got 2");
  // Facts are checked in checked mode only.
  st = kb.run(Grid{}, {arg_ptr(buf + 1, 28), arg_int(16), arg_f32(1)}, true);
  std::string want = "t.tri:1:10: error: argument %p is " + hexaddr(buf + 1) +
                     ", which is not aligned to 16 bytes as its {align=16} fact says";
  assert_string_equal(st.message().c_str(), want.c_str());
  st = kb.run(Grid{}, {arg_ptr(buf, 32), arg_int(-8), arg_f32(1)}, true);
  assert_string_equal(st.message().c_str(),
                      "t.tri:1:20: error: argument %n is -8, which is not divisible by 16 as its {divisible=16} fact says");
  assert_true(kb.run(Grid{}, {arg_ptr(buf, 32), arg_int(-32), arg_f32(1)}, true).is_ok());
  assert_true(buf[0] == -32.0f);
  assert_true(kb.run(Grid{}, {arg_ptr(buf + 1, 28), arg_int(7), arg_f32(1)}, false).is_ok());
  // Scalar arguments are the low bits of their type: an i32 of 0x1_0000_0005 is 5.
  assert_true(kb.run(Grid{}, {arg_ptr(buf, 32), arg_int(0x100000005ll), arg_f32(1)}, false).is_ok());
  assert_true(buf[0] == 5.0f);
}

// ---- print, assert, assume

void print_format(void**) {
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::F16));
  ValueId r = kb.arange(0, 4);
  ValueId m = kb.cmp("slt", r, kb.splat(kb.i32(3), {4}));
  ValueId h = kb.load(kb.lanes_of(p, r));
  ValueId sh = kb.cmp("sgt", r, kb.splat(kb.i32(0), {4}));
  kb.make(Opcode::Print, {r, h, sh, m}, {}, attrs_of(Opcode::Print, {{"prefix", Attr::of_str("v: ")}}));
  ValueId s = kb.bin(Opcode::Add, kb.pid(1), kb.i32(-1));
  kb.make(Opcode::Print, {s, kb.cf(kb.t(Scalar::F64), 0.1), kNoValue}, {});
  kb.make(Opcode::Print, {kNoValue}, {}, attrs_of(Opcode::Print, {{"prefix", Attr::of_str("here ")}}));
  // A 2-D block prints its 2-D index; a pointer prints in hex.
  ValueId two = kb.op(Opcode::Reshape, {r}, kb.blk({2, 2}, Scalar::I32));
  ValueId pp = kb.splat(p, {2, 2});
  kb.make(Opcode::Print, {two, pp, kNoValue}, {});
  kb.ret();
  uint16_t hs[4] = {f16_bits(static_cast<_Float16>(1.5f)), f16_bits(static_cast<_Float16>(-0.0f)),
                    f16_bits(static_cast<_Float16>(0.1f)), 0x7c00};
  std::string out;
  Grid g;
  g.y = 2;
  assert_true(kb.run(g, {arg_ptr(hs, 8)}, false, &out).is_ok());
  std::string ph = hexaddr(hs);
  std::string want;
  for (int y = 0; y < 2; ++y) {
    std::string pid = "pid (0, " + std::to_string(y) + ", 0)";
    want += "v: " + pid + " idx (0): 0, 1.5, 0\n";
    want += "v: " + pid + " idx (1): 1, -0, 1\n";
    want += "v: " + pid + " idx (2): 2, 0.099975586, 1\n";
    want += pid + ": " + std::to_string(y - 1) + ", 0.1\n";
    want += "here " + pid + "\n";
    want += pid + " idx (0, 0): 0, " + ph + "\n" + pid + " idx (0, 1): 1, " + ph + "\n" + pid + " idx (1, 0): 2, " + ph +
            "\n" + pid + " idx (1, 1): 3, " + ph + "\n";
  }
  assert_string_equal(out.c_str(), want.c_str());
}

void print_undefined_lanes(void**) {
  PoisonKernel k;
  k.kb.make(Opcode::Print, {k.v, kNoValue}, {});
  k.kb.ret();
  std::string out;
  assert_true(k.kb.run(Grid{}, {arg_ptr(k.xs, 32), arg_ptr(k.os, 32), arg_int(7)}, true, &out).is_ok());
  assert_string_equal(out.c_str(),
                      "pid (0, 0, 0) idx (0): 1\npid (0, 0, 0) idx (1): 2\npid (0, 0, 0) idx (2): 3\n"
                      "pid (0, 0, 0) idx (3): 4\npid (0, 0, 0) idx (4): 5\npid (0, 0, 0) idx (5): 6\n"
                      "pid (0, 0, 0) idx (6): 7\npid (0, 0, 0) idx (7): undef\n");
}

void assert_fails_on_active_lane(void**) {
  // assert(x[i] > 0) for lanes i < n: program 1's lane 2 holds -1; lane 3 (masked off) holds -5.
  KB kb;
  ValueId x = kb.param("x", kb.ptr(Scalar::I32));
  ValueId n = kb.param("n", kb.t(Scalar::I32));
  Lanes l = lanes(kb, 4, n);
  ValueId v = kb.load(kb.lanes_of(x, l.offs), l.mask, kb.splat(kb.i32(1), {4}));
  ValueId c = kb.cmp("sgt", v, kb.splat(kb.i32(0), {4}));
  kb.next_loc = Loc{6, 3};
  kb.make(Opcode::Assert, {c, l.mask}, {}, attrs_of(Opcode::Assert, {{"msg", Attr::of_str("x must be positive")}}));
  kb.ret();
  int32_t xs[8] = {1, 2, 3, 4, 5, 6, -1, -5};
  Grid g;
  g.x = 2;
  assert_true(kb.run(g, {arg_ptr(xs, 32), arg_int(6)}).is_ok());  // the -1 is at index 6: masked off
  Status st = kb.run(g, {arg_ptr(xs, 32), arg_int(7)});
  assert_int_equal(st.code(), Code::Runtime);
  assert_string_equal(st.message().c_str(), "t.tri:6:3: error: 'assert' lane [2] of <4 x i1> failed: x must be positive; program (1, 0, 0)");
}

void assume_checked_only(void**) {
  KB kb;
  ValueId n = kb.param("n", kb.t(Scalar::I32));
  ValueId c = kb.cmp("sge", n, kb.i32(0));
  kb.next_loc = Loc{2, 2};
  kb.make(Opcode::Assume, {c}, {});
  kb.ret();
  assert_true(kb.run(Grid{}, {arg_int(-1)}, false).is_ok());
  assert_true(kb.run(Grid{}, {arg_int(3)}, true).is_ok());
  Status st = kb.run(Grid{}, {arg_int(-1)}, true);
  assert_string_equal(st.message().c_str(), "t.tri:2:2: error: 'assume' is false; program (0, 0, 0)");
}

void inline_asm_and_unspecialized(void**) {
  {
    KB kb;
    ValueId p = kb.param("p", kb.ptr(Scalar::I32));
    kb.store(p, kb.i32(1));
    kb.next_loc = Loc{3, 9};
    kb.make(Opcode::InlineAsm, {}, {}, {Attr::of_str("trap;"), Attr::of_str("")});
    kb.ret();
    int32_t v = 0;
    Status st = kb.run(Grid{}, {arg_ptr(&v, 4)});
    assert_int_equal(st.code(), Code::Unsupported);
    assert_string_equal(st.message().c_str(), "t.tri:3:9: error: inline_asm runs only on the GPU backend");
    assert_int_equal(v, 0);  // nothing ran
  }
  {
    // Verified but not specialized: BLOCK is still a name.
    KB kb;
    tri::ir::Constexpr ce;
    ce.name = "BLOCK";
    ce.type = Scalar::I32;
    kb.kernel->constexprs.push_back(ce);
    tri::ir::SymId b = kb.m->intern("BLOCK");
    TypeId sym = kb.m->types.block({Dim::name(b)}, kb.t(Scalar::I32));
    kb.next_loc = Loc{2, 4};
    kb.op(Opcode::Arange, {}, sym, {Attr::of_int(0), Attr::of_sym("BLOCK")});
    kb.ret();
    Status st = kb.run(Grid{}, {});
    assert_int_equal(st.code(), Code::InvalidArgument);
    assert_string_equal(st.message().c_str(), "t.tri:2:4: error: @k is not specialized: type <BLOCK x i32> names a constexpr");
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(vadd_with_masked_tail),
      cmocka_unit_test(other_fills_masked_lanes),
      cmocka_unit_test(element_sizes_and_addptr_scaling),
      cmocka_unit_test(scalar_load_store),
      cmocka_unit_test(atomics_every_kind),
      cmocka_unit_test(float_atomics),
      cmocka_unit_test(atomics_every_width),
      cmocka_unit_test(atomic_cas_lanes),
      cmocka_unit_test(atomic_cas_compares_bits),
      cmocka_unit_test(atomics_across_programs),
      cmocka_unit_test(out_of_bounds_past_the_end),
      cmocka_unit_test(out_of_bounds_before_the_start),
      cmocka_unit_test(misaligned_and_inttoptr),
      cmocka_unit_test(atomic_out_of_bounds),
      cmocka_unit_test(undefined_value_stored),
      cmocka_unit_test(undefined_address_mask_condition),
      cmocka_unit_test(undefined_value_through_a_call),
      cmocka_unit_test(undefined_from_masked_atomic),
      cmocka_unit_test(launch_argument_count_and_facts),
      cmocka_unit_test(print_format),
      cmocka_unit_test(print_undefined_lanes),
      cmocka_unit_test(assert_fails_on_active_lane),
      cmocka_unit_test(assume_checked_only),
      cmocka_unit_test(inline_asm_and_unspecialized),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
