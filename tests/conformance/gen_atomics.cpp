// Atomics: every `atomic` kind for integer and float elements and `atomic_cas`, with masks and
// each memory order and scope. Results are compared only where they do not depend on the order
// lanes and programs run in: with distinct addresses both the returned old values and memory are
// deterministic; under contention (many programs hitting a few addresses) only the final memory
// is, and float adds there use small integers so every order sums exactly.
#include "harness.h"

namespace conf {

using namespace tri_tool;

namespace {

const char* const kAttrs[] = {"", "[order=relaxed]", "[order=acquire, scope=cta]", "[order=release, scope=sys]",
                              "[order=acq_rel, scope=gpu]"};

std::string with_attrs(const std::string& kind, int i) {
  std::string a = kAttrs[i % 5];
  if (a.empty()) return "atomic[kind=" + kind + "]";
  return "atomic[kind=" + kind + ", " + a.substr(1);
}

std::string ptr_t(int32_t dt) { return std::string("ptr<") + dtype_name(dt) + ">"; }

std::vector<std::string> kinds_for(int32_t dt) {
  if (dtype_is_float(dt)) return {"add", "min", "max", "xchg"};
  return {"add", "min", "max", "umin", "umax", "and", "or", "xor", "xchg"};
}

// Float min/max atomics say nothing about -0.0 against 0.0 or NaN: keep both out.
uint64_t atomic_value(Rng& rng, int32_t dt) {
  if (!dtype_is_float(dt)) return gen_value(rng, dt, Dist::General);
  uint64_t v = gen_value(rng, dt, Dist::Unit);
  if (float_bits_is_zero(dt, v)) v = double_to_float_bits(dt, 0.25);
  return v;
}

Group distinct_addresses(uint64_t seed, int32_t dt) {
  Tile tile{{64}, {50}, 1};
  Builder b(std::string("atomic, distinct addresses ") + dtype_name(dt) + " " + tile.name(), seed);
  size_t n = tile.count();
  std::vector<std::string> kinds = kinds_for(dt);
  HostBuffer vals(dt, {static_cast<int64_t>(n)});
  for (size_t i = 0; i < n; ++i) vals.set(i, atomic_value(b.rng, dt));
  std::string v = b.in_buf("v", std::move(vals));
  std::vector<std::string> mem, old;
  for (const std::string& k : kinds) {
    // As long as the whole block plus a guard: masked-off lanes must leave their elements alone.
    HostBuffer m(dt, {64 + 8});
    for (size_t i = 0; i < 64 + 8; ++i) m.set(i, atomic_value(b.rng, dt));
    mem.push_back(b.in_buf("mem_" + k, std::move(m)));
  }
  for (const std::string& k : kinds) old.push_back(b.out_buf("old_" + k, dt, n));
  // atomic_cas: half of the lanes compare equal to memory.
  std::string cas_mem, cas_cmp, cas_old;
  if (!dtype_is_float(dt)) {
    HostBuffer m(dt, {64 + 8}), c(dt, {static_cast<int64_t>(n)});
    for (size_t i = 0; i < 64 + 8; ++i) m.set(i, gen_value(b.rng, dt, Dist::General));
    for (size_t i = 0; i < n; ++i) c.set(i, b.rng.chance(0.5) ? m.get(i) : gen_value(b.rng, dt, Dist::General));
    cas_mem = b.in_buf("mem_cas", std::move(m));
    cas_cmp = b.in_buf("cmp", std::move(c));
    cas_old = b.out_buf("old_cas", dt, n);
  }
  TileIR t = emit_tile(b, tile);
  std::string vv = load_tile(b, t, v, dt, lit(dt, 0));
  const std::string pt = blk(t.dims, ptr_t(dt)), vt = blk(t.dims, dt);
  for (size_t i = 0; i < kinds.size(); ++i) {
    std::string p = b.op("addptr " + b.op("splat " + mem[i], pt) + ", " + t.offs, pt);
    std::string r = b.op(with_attrs(kinds[i], static_cast<int>(i)) + " " + p + ", " + vv + ", mask=" + t.mask, vt);
    store_tile(b, t, old[i], dt, r);
    b.check("atomic[kind=" + kinds[i] + "] returned", "old_" + kinds[i], Cmp::Exact, {"mem_" + kinds[i], "v"});
    b.check("atomic[kind=" + kinds[i] + "] memory", "mem_" + kinds[i], Cmp::Exact, {"v"});
  }
  if (!cas_mem.empty()) {
    std::string cv = load_tile(b, t, cas_cmp, dt, lit(dt, 0));
    std::string p = b.op("addptr " + b.op("splat " + cas_mem, pt) + ", " + t.offs, pt);
    std::string r = b.op("atomic_cas[order=relaxed] " + p + ", " + cv + ", " + vv + ", mask=" + t.mask, vt);
    store_tile(b, t, cas_old, dt, r);
    b.check("atomic_cas returned", "old_cas", Cmp::Exact, {"cmp", "v"});
    b.check("atomic_cas memory", "mem_cas", Cmp::Exact, {"cmp", "v"});
  }
  return b.finish();
}

// f32 add with subnormal operands and results, at distinct addresses: every target flushes them
// to zero of the same sign (docs/ir.md, "Atomics"), so the returned old values and memory agree
// bit for bit. Pairs (memory, value): both subnormal; a normal memory and a subnormal value (the
// value counts as zero); two normals whose sum is subnormal (flushed); the smallest normal plus
// zero; negative zero plus a subnormal; and ordinary values between them.
Group f32_add_subnormals(uint64_t seed) {
  const int32_t dt = TRI_DTYPE_F32;
  Tile tile{{64}, {64}, 1};
  Builder b("atomic, f32 add with subnormal operands and results <64>", seed);
  const double tiny = 0x1p-149, min_normal = 0x1p-126;
  const double pairs[][2] = {{tiny, tiny},           {3 * tiny, -tiny},         {min_normal, -tiny},
                             {0x1.8p-126, -0x1p-126}, {-0x1.8p-126, 0x1p-126},   {min_normal, 0.0},
                             {-0.0, tiny},           {-0.0, -3 * tiny},         {0x1p-125, -0x1.fp-126},
                             {1.0, tiny},            {0.5, 0.25},               {-2.0, 0x1.ffffcp-127}};
  const size_t np = sizeof(pairs) / sizeof(pairs[0]);
  HostBuffer vals(dt, {64}), m(dt, {64 + 8});
  for (size_t i = 0; i < 64; ++i) {
    const double* p = pairs[i % np];
    const double sign = (i / np) % 2 ? -1.0 : 1.0;
    m.set(i, double_to_float_bits(dt, sign * p[0]));
    vals.set(i, double_to_float_bits(dt, sign * p[1]));
  }
  for (size_t i = 64; i < 72; ++i) m.set(i, double_to_float_bits(dt, 1.0));
  std::string v = b.in_buf("v", std::move(vals));
  std::string mem = b.in_buf("mem", std::move(m));
  std::string old = b.out_buf("old", dt, 64);
  TileIR t = emit_tile(b, tile);
  std::string vv = load_tile(b, t, v, dt, lit(dt, 0));
  const std::string pt = blk(t.dims, ptr_t(dt)), vt = blk(t.dims, dt);
  std::string p = b.op("addptr " + b.op("splat " + mem, pt) + ", " + t.offs, pt);
  std::string r = b.op("atomic[kind=add] " + p + ", " + vv + ", mask=" + t.mask, vt);
  store_tile(b, t, old, dt, r);
  b.check("atomic[kind=add] returned", "old", Cmp::Exact, {"mem", "v"});
  b.check("atomic[kind=add] memory", "mem", Cmp::Exact, {"v"});
  return b.finish();
}

// 8 programs x 64 lanes combine into 4 addresses (lane % 4), plus one scalar counter that
// every program increments.
Group contention(uint64_t seed, int32_t dt) {
  const uint32_t grid = 8;
  Builder b(std::string("atomic, contention ") + dtype_name(dt) + " <64> grid=8 into 4 addresses", seed);
  b.g.grid[0] = grid;
  std::vector<std::string> kinds = kinds_for(dt);
  kinds.pop_back();  // xchg: the last writer wins, which depends on the order
  size_t n = 64 * grid;
  HostBuffer vals(dt, {static_cast<int64_t>(n)});
  for (size_t i = 0; i < n; ++i)
    vals.set(i, dtype_is_float(dt) ? double_to_float_bits(dt, double(b.rng.range(-8, 8))) : gen_value(b.rng, dt, Dist::General));
  std::string v = b.in_buf("v", std::move(vals));
  std::vector<std::string> mem;
  for (const std::string& k : kinds) {
    HostBuffer m(dt, {4 + 4});
    for (size_t i = 0; i < 8; ++i)
      m.set(i, dtype_is_float(dt) ? double_to_float_bits(dt, double(b.rng.range(-8, 8))) : gen_value(b.rng, dt, Dist::General));
    mem.push_back(b.in_buf("acc_" + k, std::move(m)));
  }
  HostBuffer counter(TRI_DTYPE_I32, {2});
  std::string cnt = b.in_buf("counter", std::move(counter));
  const std::string i32b = blk({64}, "i32"), pt = blk({64}, ptr_t(dt)), vt = blk({64}, dt);
  std::string pid = b.op("program_id[axis=0]", "i32");
  std::string c64 = b.op("const[value=64]", "i32");
  std::string start = b.op("mul " + pid + ", " + c64, "i32");
  std::string ar = b.op("arange[start=0, end=64]", i32b);
  std::string offs = b.op("add " + b.op("splat " + start, i32b) + ", " + ar, i32b);
  std::string vv = b.op("load " + b.op("addptr " + b.op("splat " + v, pt) + ", " + offs, pt), vt);
  std::string three = b.op("const[value=3]", i32b);
  std::string slot = b.op("and " + ar + ", " + three, i32b);
  for (size_t i = 0; i < kinds.size(); ++i) {
    std::string p = b.op("addptr " + b.op("splat " + mem[i], pt) + ", " + slot, pt);
    b.op(with_attrs(kinds[i], static_cast<int>(i)) + " " + p + ", " + vv, vt);
    b.check("atomic[kind=" + kinds[i] + "] under contention", "acc_" + kinds[i]);
  }
  std::string one = b.op("const[value=1]", "i32");
  b.op("atomic[kind=add, order=relaxed] " + cnt + ", " + one, "i32");
  b.check("scalar atomic add from every program", "counter");
  return b.finish();
}

// A histogram-like update: 4 programs x 1024 lanes (the last 24 of each masked off) combine
// relaxed i32 atomics with unused results into a few hundred addresses, base + offset with
// offsets from -16 to 599, mostly small. On the GPU such an update is combined inside the
// program first (per-warp tables for offsets 0..255, global atomics for the others); memory
// must end as if every lane had updated it alone.
Group combined(uint64_t seed) {
  const uint32_t grid = 4;
  const int32_t dt = TRI_DTYPE_I32;
  Builder b("atomic, combined in the program i32 <1024> grid=4 into 616 addresses", seed);
  b.g.grid[0] = grid;
  std::vector<std::string> kinds = kinds_for(dt);
  kinds.pop_back();  // xchg
  const size_t n = 1024 * grid;
  HostBuffer vals(dt, {static_cast<int64_t>(n)}), offsets(dt, {static_cast<int64_t>(n)});
  for (size_t i = 0; i < n; ++i) {
    vals.set(i, gen_value(b.rng, dt, Dist::General));
    const int64_t o = b.rng.chance(0.8) ? b.rng.range(0, 63) : b.rng.range(-16, 599);
    offsets.set(i, static_cast<uint64_t>(o) & 0xffffffffu);
  }
  std::string v = b.in_buf("v", std::move(vals));
  std::string off = b.in_buf("off", std::move(offsets));
  std::vector<std::string> mem;
  for (const std::string& k : kinds) {
    HostBuffer m(dt, {616});
    for (size_t i = 0; i < 616; ++i) m.set(i, gen_value(b.rng, dt, Dist::General));
    mem.push_back(b.in_buf("acc_" + k, std::move(m)));
  }
  const std::string i32b = blk({1024}, "i32"), pt = blk({1024}, ptr_t(dt)), i1b = blk({1024}, "i1");
  std::string pid = b.op("program_id[axis=0]", "i32");
  std::string start = b.op("mul " + pid + ", " + b.op("const[value=1024]", "i32"), "i32");
  std::string ar = b.op("arange[start=0, end=1024]", i32b);
  std::string idx = b.op("add " + b.op("splat " + start, i32b) + ", " + ar, i32b);
  std::string mask = b.op("cmp[pred=slt] " + ar + ", " + b.op("const[value=1000]", i32b), i1b);
  std::string vv = b.op("load " + b.op("addptr " + b.op("splat " + v, pt) + ", " + idx, pt), i32b);
  std::string oo = b.op("load " + b.op("addptr " + b.op("splat " + off, pt) + ", " + idx, pt), i32b);
  std::string sixteen = b.op("const[value=16]", "i32");
  for (size_t i = 0; i < kinds.size(); ++i) {
    std::string base = b.op("addptr " + mem[i] + ", " + sixteen, ptr_t(dt));
    std::string p = b.op("addptr " + b.op("splat " + base, pt) + ", " + oo, pt);
    b.op("atomic[kind=" + kinds[i] + ", order=relaxed] " + p + ", " + vv + ", mask=" + mask, i32b);
    b.check("atomic[kind=" + kinds[i] + "] combined in the program", "acc_" + kinds[i]);
  }
  return b.finish();
}

}  // namespace

void gen_atomics(uint64_t seed, const GroupSink& sink) {
  sink(combined(seed));
  for (int32_t dt : {TRI_DTYPE_I32, TRI_DTYPE_I64, TRI_DTYPE_F32, TRI_DTYPE_F64}) {
    sink(distinct_addresses(seed, dt));
    sink(contention(seed, dt));
  }
  sink(f32_add_subnormals(seed));
}

}  // namespace conf
