// Elementwise ops: integer and float arithmetic, math, math_call, cmp/fcmp and select, for each
// element type they accept, on 1-D (several programs, masked tail), 2-D and 3-D (partial
// extents) tiles. Each group loads its inputs once and stores one output per op, so one compile
// covers many ops; a group that fails to compile is rerun op by op. On the 1-D tile the first
// lanes hold every pair of edge values (0, -1, INT_MIN, NaN, ±inf, -0.0, denormals, ...).
#include <cmath>
#include <cstring>


#include "harness.h"

namespace conf {

using namespace tri_tool;

namespace {

struct InputSpec {
  std::string name;
  int32_t dtype;
  Dist dist;
};

struct EwOp {
  std::string text;               // as written in IR: "cmp[pred=slt]"
  std::vector<std::string> ins;   // input buffer names
  int32_t out = -1;               // result element type; -1: the inputs'
  Cmp cmp = Cmp::Exact;
  uint64_t ulps = 0;
};

// Lanes [0, K) of the inputs walk through edge values: the first input changes slowest, so the
// first two inputs see every pair of their edges; other inputs cycle.
void seed_edges(std::vector<HostBuffer>* bufs, const std::vector<InputSpec>& ins) {
  if (bufs->empty()) return;
  size_t n = (*bufs)[0].count();
  std::vector<std::vector<uint64_t>> e;
  for (const InputSpec& s : ins) e.push_back(edge_values(s.dtype, s.dist));
  size_t nb = ins.size() > 1 ? e[1].size() : 1;
  size_t lanes = std::min(n, e[0].size() * nb);
  for (size_t k = 0; k < lanes; ++k) {
    for (size_t j = 0; j < ins.size(); ++j) {
      size_t pick = j == 0 ? (k / nb) % e[0].size() : k % e[j].size();
      (*bufs)[j].set(k, e[j][pick]);
    }
  }
}

using RefFn = std::function<void(Builder&, const Tile&)>;

Group make_ew(const std::string& title, uint64_t seed, const std::string& salt, const Tile& tile,
              const std::vector<InputSpec>& ins, const std::vector<EwOp>& ops, const RefFn& refs) {
  Builder b(title, seed, salt);
  b.g.grid[0] = tile.grid;
  size_t n = tile.count();
  std::vector<HostBuffer> data;
  for (const InputSpec& s : ins) data.push_back(gen_buffer(b.rng, s.dtype, n, s.dist));
  if (tile.dims.size() == 1) seed_edges(&data, ins);
  std::vector<std::string> ptrs;
  for (size_t i = 0; i < ins.size(); ++i) ptrs.push_back(b.in_buf(ins[i].name, std::move(data[i])));
  std::vector<std::string> outs;
  for (size_t i = 0; i < ops.size(); ++i) {
    int32_t out = ops[i].out >= 0 ? ops[i].out : -1;
    if (out < 0) {
      for (const InputSpec& s : ins)
        if (s.name == ops[i].ins.back()) out = s.dtype;
    }
    outs.push_back(b.out_buf("o" + std::to_string(i), out, n));
  }
  TileIR t = emit_tile(b, tile);
  std::vector<std::string> vals;
  for (size_t i = 0; i < ins.size(); ++i)
    vals.push_back(load_tile(b, t, ptrs[i], ins[i].dtype, ins[i].dtype == TRI_DTYPE_I1 ? "true" : lit(ins[i].dtype, 1)));
  for (size_t i = 0; i < ops.size(); ++i) {
    const EwOp& op = ops[i];
    std::string rhs = op.text;
    int32_t out = -1;
    for (size_t k = 0; k < op.ins.size(); ++k) {
      for (size_t j = 0; j < ins.size(); ++j) {
        if (ins[j].name == op.ins[k]) {
          rhs += (k ? ", " : " ") + vals[j];
          out = ins[j].dtype;
        }
      }
    }
    if (op.out >= 0) out = op.out;
    std::string r = b.op(rhs, blk(tile.dims, out));
    store_tile(b, t, outs[i], out, r);
    Check& c = b.check(op.text + "(" + [&] {
      std::string s;
      for (size_t k = 0; k < op.ins.size(); ++k) s += (k ? ", " : "") + op.ins[k];
      return s;
    }() + ")", outs[i], op.cmp, op.ins);
    c.ulps = op.ulps;
    if (op.text == "math_call[name=\"lgamma\"]" && (out == TRI_DTYPE_F64 || out == TRI_DTYPE_F32)) {
      // docs/ir.md: lgamma is accurate in absolute terms near its zeros below -2 (2^-50 in f64,
      // 2^-22 in f32; CUDA's lgammaf has no ulp bound on [-10.001, -2.264] either).
      c.abs_input_below = -2.0;
      c.abs_tol = out == TRI_DTYPE_F64 ? 0x1p-50 : 0x1p-22;
    }
  }
  if (refs) refs(b, tile);
  return b.finish();
}

// Batches `ops` into one group, with a split into one group per op.
Group batch(const std::string& title, uint64_t seed, const Tile& tile, const std::vector<InputSpec>& ins,
            const std::vector<EwOp>& ops, const RefFn& refs = nullptr) {
  Group g = make_ew(title, seed, title, tile, ins, ops, refs);
  g.split = [=]() {
    std::vector<Group> parts;
    for (const EwOp& op : ops) parts.push_back(make_ew(title + " / " + op.text, seed, title, tile, ins, {op}, nullptr));
    return parts;
  };
  return g;
}

EwOp ew(const std::string& text, std::vector<std::string> ins, Cmp cmp = Cmp::Exact, uint64_t ulps = 0,
        int32_t out = -1) {
  EwOp o;
  o.text = text;
  o.ins = std::move(ins);
  o.cmp = cmp;
  o.ulps = ulps;
  o.out = out;
  return o;
}

const char* const kIntPreds[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
const char* const kFloatPreds[] = {"oeq", "one", "olt", "ole", "ogt", "oge", "ord",
                                   "ueq", "une", "ult", "ule", "ugt", "uge", "uno"};

std::vector<EwOp> int_ops(int32_t dt) {
  std::vector<EwOp> ops;
  for (const char* o : {"add", "sub", "mul", "and", "or", "xor", "smin", "smax", "umin", "umax", "umulhi"})
    ops.push_back(ew(o, {"a", "b"}));
  for (const char* o : {"sdiv", "udiv", "srem", "urem", "cdiv"}) ops.push_back(ew(o, {"a", "d"}));
  for (const char* o : {"shl", "lshr", "ashr"}) ops.push_back(ew(o, {"a", "s"}));
  ops.push_back(ew("neg", {"a"}));
  ops.push_back(ew("abs", {"a"}));
  for (const char* p : kIntPreds) ops.push_back(ew(std::string("cmp[pred=") + p + "]", {"a", "b"}, Cmp::Exact, 0, TRI_DTYPE_I1));
  ops.push_back(ew("select", {"c", "a", "b"}));
  (void)dt;
  return ops;
}

// Reads a lane of an output or input buffer of the group being built.
uint64_t lane(const Builder& b, const std::string& name, size_t i) {
  return b.g.bufs[b.buf_index(name)].get(i);
}

// C references for the oracle: integer add and mul wrap; f32 add, mul and fdiv are correctly
// rounded by the host's IEEE arithmetic; exp is within 4 ulp of the double-precision result.
void int32_refs(Builder& b, const Tile& tile) {
  size_t n = tile.count();
  for (int which = 0; which < 2; ++which) {
    const char* name = which ? "mul" : "add";
    HostBuffer want = b.g.bufs[b.buf_index(which ? "o2" : "o0")];
    for (size_t i = 0; i < n; ++i) {
      uint32_t x = static_cast<uint32_t>(lane(b, "a", i)), y = static_cast<uint32_t>(lane(b, "b", i));
      want.set(i, which ? uint32_t(x * y) : uint32_t(x + y));
    }
    RefCheck r;
    r.check.what = std::string(name) + "(a, b) vs C";
    r.check.buf = b.buf_index(which ? "o2" : "o0");
    r.check.inputs = {b.buf_index("a"), b.buf_index("b")};
    r.expected = std::move(want);
    b.g.refs.push_back(std::move(r));
  }
}

void f32_refs(Builder& b, const Tile& tile, const std::vector<EwOp>& ops) {
  size_t n = tile.count();
  for (size_t k = 0; k < ops.size(); ++k) {
    const std::string& t = ops[k].text;
    if (t != "add" && t != "mul" && t != "fdiv" && t != "exp") continue;
    if (t == "exp" && ops[k].ins[0] != "a") continue;
    std::string out = "o" + std::to_string(k);
    HostBuffer want = b.g.bufs[b.buf_index(out)];
    for (size_t i = 0; i < n; ++i) {
      float x, y;
      uint32_t xb = static_cast<uint32_t>(lane(b, "a", i)), yb = static_cast<uint32_t>(lane(b, "b", i));
      std::memcpy(&x, &xb, 4);
      std::memcpy(&y, &yb, 4);
      float r = t == "add" ? x + y : t == "mul" ? x * y : t == "fdiv" ? x / y : static_cast<float>(std::exp(double(x)));
      uint32_t rb;
      std::memcpy(&rb, &r, 4);
      want.set(i, rb);
    }
    RefCheck r;
    r.check.what = t + (t == "exp" ? "(a)" : "(a, b)") + " vs C";
    r.check.buf = b.buf_index(out);
    r.check.cmp = t == "exp" ? Cmp::Ulp : Cmp::Exact;
    r.check.ulps = 4;
    r.check.inputs = {b.buf_index("a"), b.buf_index("b")};
    r.expected = std::move(want);
    b.g.refs.push_back(std::move(r));
  }
}

std::vector<EwOp> float_ops() {
  std::vector<EwOp> ops;
  for (const char* o : {"add", "sub", "mul", "fdiv", "frem", "fmin", "fmax"}) ops.push_back(ew(o, {"a", "b"}));
  ops.push_back(ew("fmin[nan=ignore]", {"a", "b"}, Cmp::ExactAnyZero));
  ops.push_back(ew("fmax[nan=ignore]", {"a", "b"}, Cmp::ExactAnyZero));
  ops.push_back(ew("fma", {"a", "b", "c"}));
  for (const char* o : {"neg", "abs", "sqrt", "floor", "ceil"}) ops.push_back(ew(o, {"a"}));
  for (const char* o : {"exp", "exp2", "log", "log2", "rsqrt", "sin", "cos", "tanh", "erf"})
    ops.push_back(ew(o, {"a"}, Cmp::Ulp, 4));
  for (const char* o : {"log", "log2", "rsqrt"}) ops.push_back(ew(o, {"p"}, Cmp::Ulp, 4));
  ops.push_back(ew("exp2[subnormal=flush]", {"a"}, Cmp::Ulp, 4));
  ops.push_back(ew("sqrt", {"p"}));
  ops.push_back(ew("pow", {"a", "b"}, Cmp::Ulp, 4));
  ops.push_back(ew("pow", {"p", "b"}, Cmp::Ulp, 4));
  for (const char* p : kFloatPreds)
    ops.push_back(ew(std::string("fcmp[pred=") + p + "]", {"a", "b"}, Cmp::Exact, 0, TRI_DTYPE_I1));
  ops.push_back(ew("select", {"c1", "a", "b"}));
  return ops;
}

std::vector<EwOp> math_call_ops() {
  std::vector<EwOp> ops;
  for (const char* f : {"expm1", "log1p", "log10", "exp10", "cbrt", "sinh", "cosh", "tan", "asin", "acos", "atan",
                        "asinh", "acosh", "atanh", "erfc", "lgamma", "tgamma", "round", "trunc"})
    ops.push_back(ew(std::string("math_call[name=\"") + f + "\"]", {"a"}, Cmp::Ulp, 4));
  for (const char* f : {"log1p", "log10", "acosh", "lgamma", "tgamma"})
    ops.push_back(ew(std::string("math_call[name=\"") + f + "\"]", {"p"}, Cmp::Ulp, 4));
  for (const char* f : {"atan2", "hypot", "fmod", "copysign"})
    ops.push_back(ew(std::string("math_call[name=\"") + f + "\"]", {"a", "b"}, Cmp::Ulp, 4));
  return ops;
}

// f32 fdiv by one divisor for the whole program (a scalar argument, splat): the GPU divides by
// it with one reciprocal and falls back to div.rn for threads whose operands leave the range
// where that is exact (src/codegen/nvptx/lower.cpp, divide_by_uniform). The dividends walk
// through the edge values and random bit patterns; each divisor (edges, and ordinary values
// whose quotients need the correction step) is one output.
Group make_uniform_div(uint64_t seed, const Tile& tile) {
  Builder b("fdiv f32 by a uniform divisor " + tile.name(), seed, "uniform fdiv");
  b.g.grid[0] = tile.grid;
  const size_t n = tile.count();
  std::vector<HostBuffer> data = {gen_buffer(b.rng, TRI_DTYPE_F32, n, Dist::General)};
  if (tile.dims.size() == 1) seed_edges(&data, {{"a", TRI_DTYPE_F32, Dist::General}});
  const std::string pa = b.in_buf("a", std::move(data[0]));
  std::vector<uint64_t> divisors = edge_values(TRI_DTYPE_F32);
  for (float v : {3.0f, 7.0f, 10.0f, 0.1f, -1.5f, 16384.0f, 1e-30f, 1e30f, 0x1p-100f, 0x1p100f, 0x1p-101f, 6.5e-38f}) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    divisors.push_back(bits);
  }
  for (int i = 0; i < 4; ++i) divisors.push_back(gen_value(b.rng, TRI_DTYPE_F32, Dist::Unit));
  std::vector<std::string> ds, outs;
  for (size_t k = 0; k < divisors.size(); ++k) {
    ds.push_back(b.scalar("d" + std::to_string(k), TRI_DTYPE_F32, divisors[k]));
    outs.push_back(b.out_buf("o" + std::to_string(k), TRI_DTYPE_F32, n));
  }
  TileIR t = emit_tile(b, tile);
  const std::string av = load_tile(b, t, pa, TRI_DTYPE_F32, lit(TRI_DTYPE_F32, 1));
  for (size_t k = 0; k < divisors.size(); ++k) {
    const std::string dv = b.op("splat " + ds[k], blk(tile.dims, TRI_DTYPE_F32));
    store_tile(b, t, outs[k], TRI_DTYPE_F32, b.op("fdiv " + av + ", " + dv, blk(tile.dims, TRI_DTYPE_F32)));
    b.check("fdiv(a, d" + std::to_string(k) + ")", outs[k], Cmp::Exact, {"a"});
  }
  return b.finish();
}

}  // namespace

void gen_elementwise(uint64_t seed, const GroupSink& sink) {
  std::vector<Tile> tiles = standard_tiles();
  // Floats have ~22 edge values: a longer 1-D tile holds all their pairs.
  std::vector<Tile> ftiles = tiles;
  ftiles[0] = Tile{{16}, {700}, 44};

  for (int32_t dt : {TRI_DTYPE_I8, TRI_DTYPE_I16, TRI_DTYPE_I32, TRI_DTYPE_I64}) {
    for (size_t ti = 0; ti < tiles.size(); ++ti) {
      const Tile& tile = tiles[ti];
      std::vector<InputSpec> ins = {{"a", dt, Dist::General}, {"b", dt, Dist::General}, {"d", dt, Dist::NonZero},
                                    {"s", dt, Dist::Shift},   {"c", TRI_DTYPE_I1, Dist::General}};
      RefFn refs = dt == TRI_DTYPE_I32 && ti == 0 ? RefFn(int32_refs) : RefFn();
      sink(batch(std::string("elementwise ") + dtype_name(dt) + " " + tile.name(), seed, tile, ins, int_ops(dt), refs));
    }
  }
  // i1: logic, arithmetic (which wraps in one bit), comparisons read as signed (true is -1) or
  // unsigned, select; inputs are bytes where any nonzero byte is true.
  for (size_t ti : {size_t(0), size_t(2)}) {
    const Tile& tile = tiles[ti];
    std::vector<InputSpec> ins = {{"a", TRI_DTYPE_I1, Dist::General}, {"b", TRI_DTYPE_I1, Dist::General},
                                  {"c", TRI_DTYPE_I1, Dist::General}};
    std::vector<EwOp> ops;
    for (const char* o : {"and", "or", "xor", "add", "sub", "mul", "smin", "smax", "umin", "umax"})
      ops.push_back(ew(o, {"a", "b"}));
    for (const char* p : kIntPreds) ops.push_back(ew(std::string("cmp[pred=") + p + "]", {"a", "b"}));
    ops.push_back(ew("select", {"c", "a", "b"}));
    sink(batch("elementwise i1 " + tile.name(), seed, tile, ins, ops));
  }
  for (int32_t dt : {TRI_DTYPE_F16, TRI_DTYPE_BF16, TRI_DTYPE_F32, TRI_DTYPE_F64}) {
    for (size_t ti = 0; ti < ftiles.size(); ++ti) {
      const Tile& tile = ftiles[ti];
      std::vector<InputSpec> ins = {{"a", dt, Dist::General},  {"b", dt, Dist::General},
                                    {"c", dt, Dist::General},  {"p", dt, Dist::Positive},
                                    {"c1", TRI_DTYPE_I1, Dist::General}};
      std::vector<EwOp> ops = float_ops();
      RefFn refs;
      if (dt == TRI_DTYPE_F32 && ti == 0) refs = [ops](Builder& b, const Tile& t) { f32_refs(b, t, ops); };
      sink(batch(std::string("elementwise ") + dtype_name(dt) + " " + tile.name(), seed, tile, ins, ops, refs));
    }
    if (dt == TRI_DTYPE_F32)
      for (size_t ti : {size_t(0), size_t(1)}) sink(make_uniform_div(seed, ftiles[ti]));
    for (size_t ti : {size_t(0), size_t(1)}) {
      const Tile& tile = ftiles[ti];
      std::vector<InputSpec> ins = {{"a", dt, Dist::General}, {"b", dt, Dist::General}, {"p", dt, Dist::Positive}};
      sink(batch(std::string("math_call ") + dtype_name(dt) + " " + tile.name(), seed, tile, ins, math_call_ops()));
    }
  }
  // f8: arithmetic happens in f32 and is rounded to the format after each op.
  for (int32_t dt : {TRI_DTYPE_F8E4M3, TRI_DTYPE_F8E5M2}) {
    for (size_t ti : {size_t(0), size_t(2)}) {
      const Tile& tile = ftiles[ti];
      std::vector<InputSpec> ins = {{"a", dt, Dist::General}, {"b", dt, Dist::General}, {"c", dt, Dist::General},
                                    {"c1", TRI_DTYPE_I1, Dist::General}};
      std::vector<EwOp> ops;
      for (const char* o : {"add", "sub", "mul", "fdiv", "fmin", "fmax"}) ops.push_back(ew(o, {"a", "b"}));
      ops.push_back(ew("fma", {"a", "b", "c"}));
      for (const char* o : {"neg", "abs", "sqrt", "floor", "ceil"}) ops.push_back(ew(o, {"a"}));
      ops.push_back(ew("exp", {"a"}, Cmp::Ulp, 4));
      for (const char* p : {"olt", "oeq", "une", "uno"})
        ops.push_back(ew(std::string("fcmp[pred=") + p + "]", {"a", "b"}, Cmp::Exact, 0, TRI_DTYPE_I1));
      ops.push_back(ew("select", {"c1", "a", "b"}));
      sink(batch(std::string("elementwise ") + dtype_name(dt) + " " + tile.name(), seed, tile, ins, ops));
    }
  }
}

}  // namespace conf
