// Reductions and scans: every builtin kind, user combine regions (a plain sum, a (value, index)
// tuple that picks the first maximum, and on long blocks a composition of affine maps, which is
// associative and not commutative), reverse scans, on each axis of 1-D, 2-D and
// 3-D tiles with partial extents (masked-off lanes load the kind's identity). Integer results are
// exact. Float sums and products may combine in any order (docs/ir.md), so they are compared
// within n * eps * sum|x| (products: relative to the product of |x|); max/min are exact, with
// -0.0 and 0.0 taken as equal. The interpreter's i32 and f32 sums are also checked against C.
#include <cmath>

#include "harness.h"

namespace conf {

using namespace tri_tool;

namespace {


// Dense row-major geometry of the tile's valid elements.
struct Geometry {
  std::vector<int64_t> ext;
  int axis;
  size_t count() const {
    size_t n = 1;
    for (int64_t e : ext) n *= static_cast<size_t>(e);
    return n;
  }
  std::vector<int64_t> unflatten(size_t i) const {
    std::vector<int64_t> idx(ext.size());
    for (size_t a = ext.size(); a-- > 0;) {
      idx[a] = static_cast<int64_t>(i % ext[a]);
      i /= ext[a];
    }
    return idx;
  }
  size_t flatten(const std::vector<int64_t>& idx) const {
    size_t i = 0;
    for (size_t a = 0; a < ext.size(); ++a) i = i * ext[a] + idx[a];
    return i;
  }
  std::vector<int64_t> reduced_ext() const {
    std::vector<int64_t> r = ext;
    r.erase(r.begin() + axis);
    return r;
  }
  // The input elements combined into reduced output element o (dense over reduced_ext()).
  std::vector<size_t> reduce_members(size_t o) const {
    std::vector<int64_t> rext = reduced_ext();
    std::vector<int64_t> ridx(rext.size());
    for (size_t a = rext.size(); a-- > 0;) {
      ridx[a] = static_cast<int64_t>(o % rext[a]);
      o /= rext[a];
    }
    std::vector<size_t> out;
    for (int64_t k = 0; k < ext[axis]; ++k) {
      std::vector<int64_t> idx = ridx;
      idx.insert(idx.begin() + axis, k);
      out.push_back(flatten(idx));
    }
    return out;
  }
  // The input elements combined into scan output element i.
  std::vector<size_t> scan_members(size_t i, bool reverse) const {
    std::vector<int64_t> idx = unflatten(i);
    std::vector<size_t> out;
    int64_t from = reverse ? idx[axis] : 0, to = reverse ? ext[axis] : idx[axis] + 1;
    for (int64_t k = from; k < to; ++k) {
      idx[axis] = k;
      out.push_back(flatten(idx));
    }
    return out;
  }
  size_t reduced_count() const {
    size_t n = 1;
    for (int64_t e : reduced_ext()) n *= static_cast<size_t>(e);
    return n;
  }
};

bool is_float_dt(int32_t dt) { return dtype_is_float(dt); }

struct RedOp {
  std::string label;
  bool scan = false;
  std::string kind;      // builtin kind, or "" for a region
  std::string region;    // "sum", "tuple" or "affine"
  bool reverse = false;
  std::string input;     // "x", "m", "q", "g"
  // 1-D scans only: a reduce with the same kind of the same loaded block follows the scan (the
  // GPU backend takes the scan's total for it), its result checked too.
  bool also_reduce = false;
};

// Scans whose block is also reduced, on 1-D tiles.
std::vector<RedOp> scan_reduce_ops(int32_t dt) {
  std::vector<RedOp> ops = {
      {"scan[kind=sum] and reduce[kind=sum] of one block", true, "sum", "", false, "x", true},
      {"scan[kind=max, reverse] and reduce[kind=max] of one block", true, "max", "", true, "m", true},
  };
  if (!is_float_dt(dt)) ops.push_back({"scan[kind=xor] and reduce[kind=xor] of one block", true, "xor", "", false, "m", true});
  return ops;
}

// The identity of a kind, as IR literal text.
std::string identity(const std::string& kind, int32_t dt) {
  bool f = is_float_dt(dt);
  int w = dtype_info(dt).bits;
  uint64_t min = uint64_t(1) << (w - 1);
  if (kind == "sum" || kind == "or" || kind == "xor" || kind == "umax" || kind == "region_sum") return lit(dt, 0);
  if (kind == "prod") return lit(dt, 1);
  if (kind == "and" || kind == "umin") return "-1";
  if (kind == "max" || kind == "argmax" || kind == "tuple")
    return f ? "-inf" : lit_bits(dt, min);
  if (kind == "min" || kind == "argmin") return f ? "inf" : lit_bits(dt, (min - 1) & bits_mask(dt));
  return lit(dt, 0);
}

// Every kind, on the shapes that get the full set; a core of them elsewhere (each op costs a
// compile on the CPU backend, and the suite must stay fast).
std::vector<RedOp> core_red_ops(int32_t dt) {
  bool f = is_float_dt(dt);
  std::vector<RedOp> ops = {
      {"reduce[kind=sum]", false, "sum", "", false, "x"},
      {"reduce[kind=max]", false, "max", "", false, "m"},
      {"reduce[kind=argmin]", false, "argmin", "", false, "g"},
      {"reduce with a (value, index) region", false, "", "tuple", false, "g"},
      {"scan[kind=sum]", true, "sum", "", false, "x"},
      {"scan[kind=max, reverse]", true, "max", "", true, "m"},
      {"scan with a (value, index) region, reverse", true, "", "tuple", true, "g"},
  };
  if (!f) ops.push_back({"reduce[kind=xor]", false, "xor", "", false, "m"});
  return ops;
}

std::vector<RedOp> red_ops(int32_t dt) {
  std::vector<RedOp> ops;
  bool f = is_float_dt(dt);
  std::vector<std::string> kinds = {"sum", "prod", "max", "min", "argmax", "argmin"};
  if (!f) kinds.insert(kinds.end(), {"umax", "umin", "and", "or", "xor"});
  for (const std::string& k : kinds) {
    std::string in = k == "sum" ? "x" : k == "prod" ? "q" : (k == "argmax" || k == "argmin") ? "g" : "m";
    ops.push_back({"reduce[kind=" + k + "]", false, k, "", false, in});
  }
  ops.push_back({"reduce with a sum region", false, "", "sum", false, "x"});
  ops.push_back({"reduce with a (value, index) region", false, "", "tuple", false, "g"});
  std::vector<std::string> skinds = {"sum", "prod", "max", "min"};
  if (!f) skinds.insert(skinds.end(), {"umax", "umin", "and", "or", "xor"});
  for (const std::string& k : skinds) {
    std::string in = k == "sum" ? "x" : k == "prod" ? "q" : "m";
    ops.push_back({"scan[kind=" + k + "]", true, k, "", false, in});
  }
  ops.push_back({"scan[kind=sum, reverse]", true, "sum", "", true, "x"});
  ops.push_back({"scan[kind=max, reverse]", true, "max", "", true, "m"});
  ops.push_back({"scan with a sum region", true, "", "sum", false, "x"});
  ops.push_back({"scan with a (value, index) region, reverse", true, "", "tuple", true, "g"});
  return ops;
}

// Emits a combine region's block; returns nothing (the caller opened and closes the op).
void emit_region(Builder& b, const std::string& region, int32_t dt) {
  std::string T = dtype_name(dt);
  bool f = is_float_dt(dt);
  if (region == "sum") {
    std::string a = b.fresh("a"), c = b.fresh("b");
    b.stmt("^(" + a + ": " + T + ", " + c + ": " + T + "):");
    b.stmt("yield " + b.op("add " + a + ", " + c, T));
    return;
  }
  if (region == "affine") {
    // (a, ab) then (c, cb) as maps x -> a*x + ab: their composition, c*(a*x + ab) + cb.
    std::string a = b.fresh("a"), ab = b.fresh("ab"), c = b.fresh("b"), cb = b.fresh("bb");
    b.stmt("^(" + a + ": " + T + ", " + ab + ": " + T + ", " + c + ": " + T + ", " + cb + ": " + T + "):");
    std::string p = b.op("mul " + a + ", " + c, T);
    std::string q = b.op("add " + b.op("mul " + ab + ", " + c, T) + ", " + cb, T);
    b.stmt("yield " + p + ", " + q);
    return;
  }
  std::string a = b.fresh("a"), ai = b.fresh("ai"), c = b.fresh("b"), ci = b.fresh("bi");
  b.stmt("^(" + a + ": " + T + ", " + ai + ": i32, " + c + ": " + T + ", " + ci + ": i32):");
  std::string gt = b.op((f ? "fcmp[pred=ogt] " : "cmp[pred=sgt] ") + a + ", " + c, "i1");
  std::string eq = b.op((f ? "fcmp[pred=oeq] " : "cmp[pred=eq] ") + a + ", " + c, "i1");
  std::string lt = b.op("cmp[pred=slt] " + ai + ", " + ci, "i1");
  std::string w = b.op("or " + gt + ", " + b.op("and " + eq + ", " + lt, "i1"), "i1");
  std::string v = b.op("select " + w + ", " + a + ", " + c, T);
  std::string i = b.op("select " + w + ", " + ai + ", " + ci, "i32");
  b.stmt("yield " + v + ", " + i);
}

// Inputs: x for sums (small magnitudes), m for max/min and bit ops (anything, NaN included),
// q for products (near 1 for floats), g for argmax-like ops (no NaN; zeros all +0.0, since the
// order of -0.0 and 0.0 is not a tie rule docs/ir.md states).
HostBuffer make_input(Rng& rng, const std::string& name, int32_t dt, size_t n) {
  bool f = is_float_dt(dt);
  Dist d = name == "x" ? (f ? Dist::Unit : Dist::General)
           : name == "q" ? (f ? Dist::Near1 : Dist::General)
           : name == "g" ? Dist::NoNaN
                         : Dist::General;
  HostBuffer b = gen_buffer(rng, dt, n, d);
  if (name == "g" && f) {
    for (size_t i = 0; i < n; ++i)
      if (float_bits_is_zero(dt, b.get(i))) b.set(i, double_to_float_bits(dt, 0.0));
    // Ties: repeat some values so that the first index must win.
    for (size_t i = 1; i < n; i += 5) b.set(i, b.get(i - 1));
  }
  if (name == "g" && !f)
    for (size_t i = 1; i < n; i += 5) b.set(i, b.get(i - 1));
  return b;
}

struct ReduceCase {
  Tile tile;
  int axis;
};

Group make_reduce(const std::string& title, uint64_t seed, const std::string& salt, int32_t dt, const ReduceCase& rc,
                  const std::vector<RedOp>& ops) {
  Builder b(title, seed, salt);
  const Tile& tile = rc.tile;
  Geometry geo{tile.ext, rc.axis};
  size_t n = tile.count();
  const char* names[] = {"x", "m", "q", "g"};
  std::vector<std::string> in_params;
  for (const char* nm : names) in_params.push_back(b.in_buf(nm, make_input(b.rng, nm, dt, n)));
  auto in_index = [&](const std::string& nm) {
    for (int i = 0; i < 4; ++i)
      if (nm == names[i]) return i;
    return 0;
  };
  std::vector<int64_t> rdims = tile.dims;
  rdims.erase(rdims.begin() + rc.axis);
  const bool to_scalar = rdims.empty();
  // Outputs: one per op (tuple ops: value and index).
  struct Out {
    std::string v, i, t;  // parameters: values, indices (tuple ops), the total (also_reduce)
  };
  std::vector<Out> outs;
  for (size_t k = 0; k < ops.size(); ++k) {
    const RedOp& op = ops[k];
    size_t cnt = op.scan ? n : geo.reduced_count();
    bool idx_out = op.kind == "argmax" || op.kind == "argmin";
    Out o;
    o.v = b.out_buf("o" + std::to_string(k), idx_out ? TRI_DTYPE_I32 : dt, cnt);
    if (op.region == "tuple") o.i = b.out_buf("o" + std::to_string(k) + "_index", TRI_DTYPE_I32, cnt);
    if (op.region == "affine") o.i = b.out_buf("o" + std::to_string(k) + "_index", dt, cnt);
    if (op.also_reduce) o.t = b.out_buf("o" + std::to_string(k) + "_total", dt, 1);
    outs.push_back(o);
  }
  TileIR t = emit_tile(b, tile);
  TileIR rt;
  if (!to_scalar) {
    Tile r{rdims, geo.reduced_ext(), 1};
    rt = emit_tile(b, r, "r");
  }
  const std::string T = dtype_name(dt);
  for (size_t k = 0; k < ops.size(); ++k) {
    const RedOp& op = ops[k];
    std::string pad_kind =
        op.region == "sum" || op.region == "affine" ? "region_sum" : op.region == "tuple" ? "tuple" : op.kind;
    std::string v = load_tile(b, t, in_params[in_index(op.input)], dt, identity(pad_kind, dt));
    bool idx_out = op.kind == "argmax" || op.kind == "argmin";
    std::vector<int64_t> odims = op.scan ? tile.dims : rdims;
    std::string vt = odims.empty() ? T : blk(odims, dt);
    std::string it = odims.empty() ? "i32" : blk(odims, "i32");
    std::string head = std::string(op.scan ? "scan" : "reduce") + "[axis=" + std::to_string(rc.axis);
    if (!op.kind.empty()) head += ", kind=" + op.kind;
    if (op.reverse) head += ", reverse=true";
    head += "]";
    std::string rv, ri;
    if (!op.kind.empty()) {
      rv = b.op(head + " " + v, idx_out ? it : vt);
    } else if (op.region == "sum") {
      rv = b.fresh("r");
      b.open(rv + " = " + head + " " + v + " {");
      emit_region(b, "sum", dt);
      b.close("} : " + vt);
    } else if (op.region == "affine") {
      // Odd multipliers (v | 1; masked-off elements: 1 and 0, the identity map), so that the
      // composition of thousands of maps does not wrap to 0: every element's place counts.
      std::string one = b.op("splat " + b.op("const[value=1]", T), blk(tile.dims, dt));
      std::string odd = b.op("or " + v + ", " + one, blk(tile.dims, dt));
      rv = b.fresh("r");
      ri = b.fresh("ri");
      b.open(rv + ", " + ri + " = " + head + " " + odd + ", " + v + " {");
      emit_region(b, "affine", dt);
      b.close("} : " + vt + ", " + vt);
    } else {
      rv = b.fresh("r");
      ri = b.fresh("ri");
      b.open(rv + ", " + ri + " = " + head + " " + v + ", " + t.idx[rc.axis] + " {");
      emit_region(b, "tuple", dt);
      b.close("} : " + vt + ", " + it);
    }
    auto store = [&](const std::string& param, const std::string& val, int32_t vdt) {
      if (op.scan) {
        store_tile(b, t, param, vdt, val);
      } else if (to_scalar) {
        b.stmt("store " + param + ", " + val);
      } else {
        store_tile(b, rt, param, vdt, val);
      }
    };
    store(outs[k].v, rv, idx_out ? TRI_DTYPE_I32 : dt);
    if (!ri.empty()) store(outs[k].i, ri, op.region == "affine" ? dt : TRI_DTYPE_I32);

    // Checks, with tolerances for float sums and products.
    const HostBuffer& src = b.g.bufs[b.buf_index(op.input)];
    size_t cnt = op.scan ? n : geo.reduced_count();
    auto members = [geo, op](size_t lane) {
      return op.scan ? geo.scan_members(lane, op.reverse) : geo.reduce_members(lane);
    };
    std::string oname = "o" + std::to_string(k);
    Check& c = b.check(op.label + " axis " + std::to_string(rc.axis), oname);
    std::string input_name = op.input;
    int32_t sdt = dt;
    HostBuffer srcc = src;
    c.describe = [members, srcc, sdt, input_name](size_t lane) {
      std::vector<size_t> m = members(lane);
      std::string s = input_name + "={";
      for (size_t i = 0; i < m.size() && i < 16; ++i) s += (i ? ", " : "") + format_bits(sdt, srcc.get(m[i]));
      return s + (m.size() > 16 ? ", ...}" : "}");
    };
    bool fl = is_float_dt(dt);
    bool sumlike = op.kind == "sum" || op.region == "sum";
    if (fl && (op.kind == "max" || op.kind == "min")) c.cmp = Cmp::ExactAnyZero;
    if (fl && (sumlike || op.kind == "prod")) {
      c.cmp = Cmp::Tol;
      c.tol.assign(cnt + 8, 0.0);
      double eps = float_epsilon(dt);
      for (size_t lane = 0; lane < cnt; ++lane) {
        std::vector<size_t> m = members(lane);
        double acc = sumlike ? 0.0 : 1.0;
        for (size_t i : m) {
          double x = std::fabs(float_bits_to_double(dt, src.get(i)));
          acc = sumlike ? acc + x : acc * x;
        }
        c.tol[lane] = 2.0 * double(m.size()) * eps * acc;
      }
    }
    // b.check() below may grow the list `c` points into: from here on use this copy.
    const Check done = c;
    if (!ri.empty()) {
      Check& ci = b.check(op.label + " axis " + std::to_string(rc.axis) + " (index)", oname + "_index");
      ci.describe = done.describe;
    }
    if (op.also_reduce) {
      std::string tv = b.op("reduce[axis=" + std::to_string(rc.axis) + ", kind=" + op.kind + "] " + v, T);
      b.stmt("store " + outs[k].t + ", " + tv);
      Check& ct = b.check(op.label + " axis " + std::to_string(rc.axis) + " (the reduce)", oname + "_total");
      ct.describe = done.describe;
      if (fl && op.kind == "max") ct.cmp = Cmp::ExactAnyZero;
      if (fl && op.kind == "sum") {
        ct.cmp = Cmp::Tol;
        double acc = 0;
        for (size_t i = 0; i < n; ++i) acc += std::fabs(float_bits_to_double(dt, src.get(i)));
        ct.tol.assign(8, 2.0 * double(n) * float_epsilon(dt) * acc);
      }
    }
    // The oracle's sums against C: exact for i32 (wrapping), within the bound for f32.
    if (op.kind == "sum" && !op.scan && (dt == TRI_DTYPE_I32 || dt == TRI_DTYPE_F32)) {
      RefCheck r;
      r.check = done;
      r.check.what = op.label + " axis " + std::to_string(rc.axis) + " vs C";
      HostBuffer want = b.g.bufs[b.buf_index(oname)];
      for (size_t lane = 0; lane < cnt; ++lane) {
        std::vector<size_t> m = members(lane);
        if (dt == TRI_DTYPE_I32) {
          uint32_t s = 0;
          for (size_t i : m) s += static_cast<uint32_t>(src.get(i));
          want.set(lane, s);
        } else {
          double s = 0;
          for (size_t i : m) s += float_bits_to_double(dt, src.get(i));
          want.set(lane, double_to_float_bits(dt, s));
        }
      }
      r.expected = std::move(want);
      b.g.refs.push_back(std::move(r));
    }
  }
  return b.finish();
}

// All of `ops` in one group, which splits into one group per op (TRI_CONF_SPLIT).
Group reduce_group(const std::string& title, uint64_t seed, int32_t dt, const ReduceCase& rc,
                   const std::vector<RedOp>& ops) {
  Group g = make_reduce(title, seed, title, dt, rc, ops);
  g.split = [=]() {
    std::vector<Group> parts;
    for (const RedOp& op : ops) parts.push_back(make_reduce(title + " / " + op.label, seed, title, dt, rc, {op}));
    return parts;
  };
  return g;
}

}  // namespace

void gen_reduce(uint64_t seed, const GroupSink& sink) {
  std::vector<ReduceCase> all = {
      {Tile{{32}, {27}, 1}, 0},
      {Tile{{4, 16}, {3, 11}, 1}, 0},
      {Tile{{4, 16}, {3, 11}, 1}, 1},
      {Tile{{2, 4, 8}, {2, 3, 6}, 1}, 0},
      {Tile{{2, 4, 8}, {2, 3, 6}, 1}, 1},
      {Tile{{2, 4, 8}, {2, 3, 6}, 1}, 2},
  };
  for (int32_t dt : {TRI_DTYPE_I32, TRI_DTYPE_I64, TRI_DTYPE_F32, TRI_DTYPE_F16, TRI_DTYPE_I8, TRI_DTYPE_BF16,
                     TRI_DTYPE_F64}) {
    // Every kind on every axis of every shape for i32, f32, i64 and f16; for i8, bf16 and f64,
    // every kind on the 1-D shape and a core of kinds on the others.
    bool all_kinds = dt == TRI_DTYPE_I32 || dt == TRI_DTYPE_F32 || dt == TRI_DTYPE_I64 || dt == TRI_DTYPE_F16;
    for (size_t ci = 0; ci < all.size(); ++ci) {
      const ReduceCase& rc = all[ci];
      std::string title = std::string("reduce/scan ") + dtype_name(dt) + " " + rc.tile.name() + " axis " +
                          std::to_string(rc.axis);
      std::vector<RedOp> ops = all_kinds || ci == 0 ? red_ops(dt) : core_red_ops(dt);
      if (rc.tile.dims.size() == 1)
        for (const RedOp& op : scan_reduce_ops(dt)) ops.push_back(op);
      sink(reduce_group(title, seed, dt, rc, ops));
    }
  }
  // Reductions whose region is associative but not commutative, on blocks longer than the
  // threads cover (a GPU layout repeats its lanes and warps along the axis: each repetition is
  // reduced over the lanes and warps, then the repetitions in order): the first maximum with its
  // index, and the composition of affine maps x -> a*x + b in wrapping integers, where every
  // element's place changes the result.
  for (int32_t dt : {TRI_DTYPE_I32, TRI_DTYPE_I64, TRI_DTYPE_F32}) {
    std::vector<RedOp> ops = {{"reduce with a (value, index) region", false, "", "tuple", false, "g"}};
    if (!is_float_dt(dt)) ops.push_back({"reduce with an affine-map composition region", false, "", "affine", false, "m"});
    for (const ReduceCase& rc : {ReduceCase{Tile{{2048}, {2000}, 1}, 0}, ReduceCase{Tile{{4, 1024}, {3, 1000}, 1}, 1}}) {
      std::string title = std::string("ordered reduce ") + dtype_name(dt) + " " + rc.tile.name() + " axis " +
                          std::to_string(rc.axis);
      sink(reduce_group(title, seed, dt, rc, ops));
    }
  }
  // A 1-D block long enough to span every warp (1024 elements, the last 24 masked off), for the
  // scans whose total a reduce reuses: across warps through shared memory, not just lanes.
  for (int32_t dt : {TRI_DTYPE_I32, TRI_DTYPE_F32, TRI_DTYPE_F16}) {
    const ReduceCase rc{Tile{{1024}, {1000}, 1}, 0};
    std::string title = std::string("reduce/scan ") + dtype_name(dt) + " " + rc.tile.name() + " axis 0";
    sink(reduce_group(title, seed, dt, rc, scan_reduce_ops(dt)));
  }
}

}  // namespace conf
