// Memory and shape ops: loads and stores of every element type (with and without mask and
// `other`, with cache/eviction/volatile attributes, through scalar pointers), gathers and
// scatters through index buffers, negative offsets, ptrtoint/inttoptr/pointer bitcasts, the
// hint ops, and the shape ops (splat, broadcast, expand_dims, reshape, permute, join, split, cat)
// for several element types. Everything here moves bits, so comparisons are exact, and output
// buffers have guard elements that no target may change.
#include <algorithm>
#include <numeric>

#include "harness.h"

namespace conf {

using namespace tri_tool;

namespace {

int64_t prod(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Row-major offsets of a full block: <dims x i32>.
std::string dense_offsets(Builder& b, const std::vector<int64_t>& dims) {
  const int rank = static_cast<int>(dims.size());
  std::string offs;
  int64_t stride = 1;
  std::vector<int64_t> strides(rank);
  for (int a = rank - 1; a >= 0; --a) {
    strides[a] = stride;
    stride *= dims[a];
  }
  for (int a = 0; a < rank; ++a) {
    std::vector<int64_t> cur = {dims[a]};
    std::string v = b.op("arange[start=0, end=" + std::to_string(dims[a]) + "]", blk(cur, "i32"));
    for (int o = 0; o < rank; ++o) {
      if (o == a) continue;
      cur.insert(cur.begin() + o, 1);
      v = b.op("expand_dims[axis=" + std::to_string(o) + "] " + v, blk(cur, "i32"));
    }
    if (rank > 1) v = b.op("broadcast " + v, blk(dims, "i32"));
    if (strides[a] != 1) {
      std::string s = b.op("const[value=" + std::to_string(strides[a]) + "]", blk(dims, "i32"));
      v = b.op("mul " + v + ", " + s, blk(dims, "i32"));
    }
    offs = offs.empty() ? v : b.op("add " + offs + ", " + v, blk(dims, "i32"));
  }
  return offs;
}

std::string ptr_t(int32_t dt) { return std::string("ptr<") + dtype_name(dt) + ">"; }

std::string ptrs_of(Builder& b, const std::string& base, int32_t dt, const std::vector<int64_t>& dims,
                    const std::string& offs) {
  std::string s = b.op("splat " + base, blk(dims, ptr_t(dt)));
  return b.op("addptr " + s + ", " + offs, blk(dims, ptr_t(dt)));
}

std::string load_full(Builder& b, const std::string& base, int32_t dt, const std::vector<int64_t>& dims) {
  std::string p = ptrs_of(b, base, dt, dims, dense_offsets(b, dims));
  return b.op("load " + p, blk(dims, dt));
}

void store_full(Builder& b, const std::string& base, int32_t dt, const std::vector<int64_t>& dims,
                const std::string& v) {
  std::string p = ptrs_of(b, base, dt, dims, dense_offsets(b, dims));
  b.stmt("store " + p + ", " + v);
}

// ---- shape ops

struct ShapeVals {
  std::string x, y, z;  // <4 x 8>, <4 x 8>, <2 x 4 x 8>
  std::string xp;       // the pointer parameter of x
  int32_t dt;
};

struct Shaped {
  std::string v;
  std::vector<int64_t> dims;
};

struct ShapeCase {
  std::string name;
  std::function<std::vector<Shaped>(Builder&, const ShapeVals&)> emit;
};

std::vector<ShapeCase> shape_cases() {
  std::vector<ShapeCase> cs;
  cs.push_back({"splat", [](Builder& b, const ShapeVals& s) {
                  std::string three = b.op("const[value=3]", "i32");
                  std::string p = b.op("addptr " + s.xp + ", " + three, ptr_t(s.dt));
                  std::string v = b.op("load " + p, dtype_name(s.dt));
                  return std::vector<Shaped>{{b.op("splat " + v, blk({4, 8}, s.dt)), {4, 8}}};
                }});
  cs.push_back({"broadcast <1 x 8>", [](Builder& b, const ShapeVals& s) {
                  std::string ar = b.op("arange[start=0, end=8]", blk({8}, "i32"));
                  std::string o = b.op("expand_dims[axis=0] " + ar, blk({1, 8}, "i32"));
                  std::string row = b.op("load " + ptrs_of(b, s.xp, s.dt, {1, 8}, o), blk({1, 8}, s.dt));
                  return std::vector<Shaped>{{b.op("broadcast " + row, blk({4, 8}, s.dt)), {4, 8}}};
                }});
  cs.push_back({"broadcast <4 x 1>", [](Builder& b, const ShapeVals& s) {
                  std::string ar = b.op("arange[start=0, end=4]", blk({4}, "i32"));
                  std::string eight = b.op("const[value=8]", blk({4}, "i32"));
                  std::string r = b.op("mul " + ar + ", " + eight, blk({4}, "i32"));
                  std::string o = b.op("expand_dims[axis=1] " + r, blk({4, 1}, "i32"));
                  std::string col = b.op("load " + ptrs_of(b, s.xp, s.dt, {4, 1}, o), blk({4, 1}, s.dt));
                  return std::vector<Shaped>{{b.op("broadcast " + col, blk({4, 8}, s.dt)), {4, 8}}};
                }});
  cs.push_back({"expand_dims[axis=1] + broadcast", [](Builder& b, const ShapeVals& s) {
                  std::string e = b.op("expand_dims[axis=1] " + s.x, blk({4, 1, 8}, s.dt));
                  return std::vector<Shaped>{{b.op("broadcast " + e, blk({4, 2, 8}, s.dt)), {4, 2, 8}}};
                }});
  cs.push_back({"expand_dims[axis=2] + broadcast", [](Builder& b, const ShapeVals& s) {
                  std::string e = b.op("expand_dims[axis=2] " + s.x, blk({4, 8, 1}, s.dt));
                  return std::vector<Shaped>{{b.op("broadcast " + e, blk({4, 8, 2}, s.dt)), {4, 8, 2}}};
                }});
  for (std::vector<int64_t> d : std::vector<std::vector<int64_t>>{{32}, {2, 16}, {8, 4}, {2, 2, 8}, {32, 1}}) {
    std::string n = "reshape to " + blk(d, "T");
    cs.push_back({n, [d](Builder& b, const ShapeVals& s) {
                    return std::vector<Shaped>{{b.op("reshape " + s.x, blk(d, s.dt)), d}};
                  }});
  }
  cs.push_back({"reshape 3-D to 2-D", [](Builder& b, const ShapeVals& s) {
                  return std::vector<Shaped>{{b.op("reshape " + s.z, blk({8, 8}, s.dt)), {8, 8}}};
                }});
  cs.push_back({"permute[order=[1, 0]]", [](Builder& b, const ShapeVals& s) {
                  return std::vector<Shaped>{{b.op("permute[order=[1, 0]] " + s.x, blk({8, 4}, s.dt)), {8, 4}}};
                }});
  for (std::vector<int64_t> order : std::vector<std::vector<int64_t>>{{2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {2, 1, 0}}) {
    const int64_t zd[3] = {2, 4, 8};
    std::vector<int64_t> d = {zd[order[0]], zd[order[1]], zd[order[2]]};
    std::string o = "[" + std::to_string(order[0]) + ", " + std::to_string(order[1]) + ", " + std::to_string(order[2]) + "]";
    cs.push_back({"permute[order=" + o + "]", [d, o](Builder& b, const ShapeVals& s) {
                    return std::vector<Shaped>{{b.op("permute[order=" + o + "] " + s.z, blk(d, s.dt)), d}};
                  }});
  }
  cs.push_back({"join", [](Builder& b, const ShapeVals& s) {
                  return std::vector<Shaped>{{b.op("join " + s.x + ", " + s.y, blk({4, 8, 2}, s.dt)), {4, 8, 2}}};
                }});
  cs.push_back({"split", [](Builder& b, const ShapeVals& s) {
                  std::string r = b.op("reshape " + s.x, blk({4, 4, 2}, s.dt));
                  std::vector<std::string> v = b.ops("split " + r, {blk({4, 4}, s.dt), blk({4, 4}, s.dt)});
                  return std::vector<Shaped>{{v[0], {4, 4}}, {v[1], {4, 4}}};
                }});
  cs.push_back({"split of join", [](Builder& b, const ShapeVals& s) {
                  std::string j = b.op("join " + s.y + ", " + s.x, blk({4, 8, 2}, s.dt));
                  std::vector<std::string> v = b.ops("split " + j, {blk({4, 8}, s.dt), blk({4, 8}, s.dt)});
                  return std::vector<Shaped>{{v[0], {4, 8}}, {v[1], {4, 8}}};
                }});
  cs.push_back({"cat 2-D", [](Builder& b, const ShapeVals& s) {
                  return std::vector<Shaped>{{b.op("cat " + s.x + ", " + s.y, blk({8, 8}, s.dt)), {8, 8}}};
                }});
  cs.push_back({"cat 1-D", [](Builder& b, const ShapeVals& s) {
                  std::string a = b.op("reshape " + s.x, blk({32}, s.dt));
                  std::string c = b.op("reshape " + s.y, blk({32}, s.dt));
                  return std::vector<Shaped>{{b.op("cat " + a + ", " + c, blk({64}, s.dt)), {64}}};
                }});
  cs.push_back({"cat 3-D", [](Builder& b, const ShapeVals& s) {
                  std::string x3 = b.op("reshape " + s.x, blk({2, 4, 4}, s.dt));
                  std::string z3 = b.op("reshape " + s.z, blk({4, 4, 4}, s.dt));
                  std::string c = b.op("cat " + x3 + ", " + x3, blk({4, 4, 4}, s.dt));
                  return std::vector<Shaped>{{b.op("cat " + z3 + ", " + c, blk({8, 4, 4}, s.dt)), {8, 4, 4}}};
                }});
  return cs;
}

Group make_shape(const std::string& title, uint64_t seed, const std::string& salt, int32_t dt,
                 const std::vector<ShapeCase>& cases) {
  Builder b(title, seed, salt);
  const Dist dist = Dist::General;  // for i1: bytes such as 2 and 0xff, which load as true
  ShapeVals s;
  s.dt = dt;
  s.xp = b.in_buf("x", gen_buffer(b.rng, dt, 32, dist));
  std::string yp = b.in_buf("y", gen_buffer(b.rng, dt, 32, dist));
  std::string zp = b.in_buf("z", gen_buffer(b.rng, dt, 64, dist));
  struct Out {
    std::string name, param;
    std::vector<int64_t> dims;
  };
  // Emit first (to learn each result's shape), then declare outputs in order: the builder's
  // parameters are declared as they are added, so the body is written after all of them.
  Builder probe("probe", 0);
  ShapeVals ps = s;
  ps.x = ps.y = ps.z = "%v";
  std::vector<std::vector<int64_t>> shapes;
  std::vector<size_t> per_case;
  for (const ShapeCase& c : cases) {
    std::vector<Shaped> r = c.emit(probe, ps);
    per_case.push_back(r.size());
    for (const Shaped& x : r) shapes.push_back(x.dims);
  }
  std::vector<Out> outs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string name = "o" + std::to_string(i);
    outs.push_back({name, b.out_buf(name, dt, static_cast<size_t>(prod(shapes[i]))), shapes[i]});
  }
  s.x = load_full(b, s.xp, dt, {4, 8});
  s.y = load_full(b, yp, dt, {4, 8});
  s.z = load_full(b, zp, dt, {2, 4, 8});
  size_t k = 0;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    std::vector<Shaped> r = cases[ci].emit(b, s);
    for (size_t j = 0; j < r.size(); ++j, ++k) {
      store_full(b, outs[k].param, dt, r[j].dims, r[j].v);
      b.check(cases[ci].name + (r.size() > 1 ? " result " + std::to_string(j) : ""), outs[k].name);
    }
  }
  return b.finish();
}

// ---- loads and stores

Group copy_all_dtypes(uint64_t seed) {
  Tile tile{{64}, {250}, 4};
  Builder b("load/store every element type " + tile.name(), seed);
  b.g.grid[0] = tile.grid;
  std::vector<std::string> ins, outs;
  for (int32_t dt = 0; dt < kNumDtypes; ++dt)
    ins.push_back(b.in_buf(std::string("x_") + dtype_name(dt), gen_buffer(b.rng, dt, tile.count(), Dist::General)));
  for (int32_t dt = 0; dt < kNumDtypes; ++dt)
    outs.push_back(b.out_buf(std::string("o_") + dtype_name(dt), dt, tile.count()));
  TileIR t = emit_tile(b, tile);
  // Each type uses a different combination of the cache, eviction and volatile attributes: they
  // are hints that must never change a value.
  const char* load_attrs[] = {"", "[cache=ca]", "[cache=cg]", "[cache=cs]", "[cache=cv]", "[evict=first]",
                              "[evict=last]", "[volatile]", "[cache=cg, evict=last]", "", "[volatile]"};
  const char* store_attrs[] = {"", "[cache=wb]", "[cache=cg]", "[cache=cs]", "[cache=wt]", "[evict=first]",
                               "[evict=last]", "", "[cache=cs, evict=first]", "[cache=wt]", ""};
  for (int32_t dt = 0; dt < kNumDtypes; ++dt) {
    std::string pt = blk(t.dims, ptr_t(dt));
    std::string p = b.op("addptr " + b.op("splat " + ins[dt], pt) + ", " + t.offs, pt);
    std::string o = const_tile(b, t, dt, dt == TRI_DTYPE_I1 ? "false" : lit(dt, 0));
    std::string v = b.op(std::string("load") + load_attrs[dt] + " " + p + ", mask=" + t.mask + ", other=" + o,
                         blk(t.dims, dt));
    std::string q = b.op("addptr " + b.op("splat " + outs[dt], pt) + ", " + t.offs, pt);
    b.stmt(std::string("store") + store_attrs[dt] + " " + q + ", " + v + ", mask=" + t.mask);
    b.check(std::string("load") + load_attrs[dt] + "/store" + store_attrs[dt] + " " + dtype_name(dt),
            std::string("o_") + dtype_name(dt), Cmp::Exact, {std::string("x_") + dtype_name(dt)});
  }
  return b.finish();
}

// Masked-off lanes of a load without `other` are only stored under the same mask, so every
// stored value is defined.
Group load_without_other(uint64_t seed) {
  Tile tile{{8, 16}, {5, 13}, 1};
  Builder b("load without other, masked store " + tile.name(), seed);
  std::string x = b.in_buf("x", gen_buffer(b.rng, TRI_DTYPE_F32, tile.count(), Dist::General));
  std::string o = b.out_buf("o", TRI_DTYPE_F32, tile.count());
  TileIR t = emit_tile(b, tile);
  std::string pt = blk(t.dims, ptr_t(TRI_DTYPE_F32));
  std::string p = b.op("addptr " + b.op("splat " + x, pt) + ", " + t.offs, pt);
  std::string v = b.op("load " + p + ", mask=" + t.mask, blk(t.dims, TRI_DTYPE_F32));
  std::string two = const_tile(b, t, TRI_DTYPE_F32, "2.0");
  std::string w = b.op("mul " + v + ", " + two, blk(t.dims, TRI_DTYPE_F32));
  store_tile(b, t, o, TRI_DTYPE_F32, w);
  b.check("load without other", "o", Cmp::Exact, {"x"});
  return b.finish();
}

// out[i] = x[perm[i]] and out2[perm[i]] = x[i] with i32 and i64 offsets; a window reached
// through a scalar addptr and negative offsets; a scalar load and store.
Group gather_scatter(uint64_t seed) {
  Tile tile{{64}, {250}, 4};
  Builder b("gather, scatter, negative offsets, scalar pointers " + tile.name(), seed);
  b.g.grid[0] = tile.grid;
  size_t n = tile.count();
  HostBuffer perm(TRI_DTYPE_I32, {static_cast<int64_t>(n)}), perm64(TRI_DTYPE_I64, {static_cast<int64_t>(n)});
  std::vector<uint32_t> p(n);
  std::iota(p.begin(), p.end(), 0u);
  for (size_t i = n; i > 1; --i) std::swap(p[i - 1], p[b.rng.below(i)]);
  for (size_t i = 0; i < n; ++i) {
    perm.set(i, p[i]);
    perm64.set(i, p[(i + 7) % n]);
  }
  std::string x = b.in_buf("x", gen_buffer(b.rng, TRI_DTYPE_F32, n + 128, Dist::General));
  std::string pi = b.in_buf("perm", std::move(perm));
  std::string pl = b.in_buf("perm64", std::move(perm64));
  std::string g32 = b.out_buf("gather_i32", TRI_DTYPE_F32, n);
  std::string g64 = b.out_buf("gather_i64", TRI_DTYPE_F32, n);
  std::string sc = b.out_buf("scatter", TRI_DTYPE_F32, n);
  std::string win = b.out_buf("window", TRI_DTYPE_F32, n);
  std::string sca = b.out_buf("scalar", TRI_DTYPE_F32, 4);
  TileIR t = emit_tile(b, tile);
  const std::string f = "f32", pf = blk(t.dims, ptr_t(TRI_DTYPE_F32));
  std::string idx = load_tile(b, t, pi, TRI_DTYPE_I32, "0");
  std::string idx64 = load_tile(b, t, pl, TRI_DTYPE_I64, "0");
  std::string xs = b.op("splat " + x, pf);
  std::string zero = const_tile(b, t, TRI_DTYPE_F32, "0.0");
  std::string gv = b.op("load " + b.op("addptr " + xs + ", " + idx, pf) + ", mask=" + t.mask + ", other=" + zero,
                        blk(t.dims, TRI_DTYPE_F32));
  store_tile(b, t, g32, TRI_DTYPE_F32, gv);
  std::string gv64 = b.op("load " + b.op("addptr " + xs + ", " + idx64, pf) + ", mask=" + t.mask + ", other=" + zero,
                          blk(t.dims, TRI_DTYPE_F32));
  store_tile(b, t, g64, TRI_DTYPE_F32, gv64);
  std::string xv = load_tile(b, t, x, TRI_DTYPE_F32, "0.0");
  std::string sp = b.op("addptr " + b.op("splat " + sc, pf) + ", " + idx, pf);
  b.stmt("store " + sp + ", " + xv + ", mask=" + t.mask);
  // window[i] = x[i + 100 - 60]: a scalar addptr forward, then negative block offsets.
  std::string hundred = b.op("const[value=100]", "i64");
  std::string xw = b.op("addptr " + x + ", " + hundred, ptr_t(TRI_DTYPE_F32));
  std::string sixty = const_tile(b, t, TRI_DTYPE_I32, "-60");
  std::string off = b.op("add " + t.offs + ", " + sixty, blk(t.dims, "i32"));
  std::string wv = b.op("load " + b.op("addptr " + b.op("splat " + xw, pf) + ", " + off, pf) + ", mask=" + t.mask +
                            ", other=" + zero,
                        blk(t.dims, TRI_DTYPE_F32));
  store_tile(b, t, win, TRI_DTYPE_F32, wv);
  // Program 0 copies x[5] to scalar[1] through scalar pointers (unmasked and masked).
  std::string pid = b.op("program_id[axis=0]", "i32");
  std::string z = b.op("const[value=0]", "i32");
  std::string first = b.op("cmp[pred=eq] " + pid + ", " + z, "i1");
  std::string five = b.op("const[value=5]", "i32");
  std::string one = b.op("const[value=1]", "i32");
  std::string s5 = b.op("load " + b.op("addptr " + x + ", " + five, ptr_t(TRI_DTYPE_F32)), f);
  std::string o1 = b.op("addptr " + sca + ", " + one, ptr_t(TRI_DTYPE_F32));
  b.stmt("store " + o1 + ", " + s5 + ", mask=" + first);
  std::string minus = b.op("const[value=-1.5]", f);
  std::string s6 = b.op("load " + b.op("addptr " + x + ", " + one, ptr_t(TRI_DTYPE_F32)) + ", mask=" + first +
                            ", other=" + minus,
                        f);
  std::string two = b.op("const[value=2]", "i32");
  b.stmt("store " + b.op("addptr " + sca + ", " + two, ptr_t(TRI_DTYPE_F32)) + ", " + s6 + ", mask=" + first);
  b.check("gather with i32 offsets", "gather_i32");
  b.check("gather with i64 offsets", "gather_i64");
  b.check("scatter", "scatter");
  b.check("scalar addptr, negative offsets", "window");
  b.check("scalar load and store", "scalar");
  return b.finish();
}

// ptrtoint/inttoptr round trips, pointer bitcasts, pointer comparisons and the hint ops.
Group pointer_casts_and_hints(uint64_t seed) {
  Tile tile{{64}, {250}, 4};
  Builder b("ptrtoint, inttoptr, pointer bitcast and cmp, hints " + tile.name(), seed);
  b.g.grid[0] = tile.grid;
  size_t n = tile.count();
  std::string x = b.in_buf("x", gen_buffer(b.rng, TRI_DTYPE_F32, n, Dist::General), "align=16");
  std::string d = b.out_buf("byte_offsets", TRI_DTYPE_I64, n);
  std::string rt = b.out_buf("round_trip", TRI_DTYPE_F32, n);
  std::string bc = b.out_buf("as_i32", TRI_DTYPE_I32, n);
  std::string lt = b.out_buf("ptr_ult", TRI_DTYPE_I1, n);
  std::string hv = b.out_buf("hinted", TRI_DTYPE_F32, n);
  TileIR t = emit_tile(b, tile);
  const std::string pf = blk(t.dims, ptr_t(TRI_DTYPE_F32)), i64b = blk(t.dims, "i64");
  std::string p = b.op("addptr " + b.op("splat " + x, pf) + ", " + t.offs, pf);
  std::string pi = b.op("ptrtoint " + p, i64b);
  std::string base = b.op("ptrtoint " + x, "i64");
  std::string diff = b.op("sub " + pi + ", " + b.op("splat " + base, i64b), i64b);
  store_tile(b, t, d, TRI_DTYPE_I64, diff);
  std::string q = b.op("inttoptr " + pi, pf);
  std::string zero = const_tile(b, t, TRI_DTYPE_F32, "0.0");
  std::string v = b.op("load " + q + ", mask=" + t.mask + ", other=" + zero, blk(t.dims, TRI_DTYPE_F32));
  store_tile(b, t, rt, TRI_DTYPE_F32, v);
  std::string pb = b.op("bitcast " + p, blk(t.dims, ptr_t(TRI_DTYPE_I32)));
  std::string zi = const_tile(b, t, TRI_DTYPE_I32, "0");
  std::string iv = b.op("load " + pb + ", mask=" + t.mask + ", other=" + zi, blk(t.dims, TRI_DTYPE_I32));
  store_tile(b, t, bc, TRI_DTYPE_I32, iv);
  std::string c100 = b.op("const[value=100]", "i32");
  std::string lim = b.op("splat " + b.op("addptr " + x + ", " + c100, ptr_t(TRI_DTYPE_F32)), pf);
  std::string c = b.op("cmp[pred=ult] " + p + ", " + lim, blk(t.dims, "i1"));
  store_tile(b, t, lt, TRI_DTYPE_I1, c);
  // Hints with true facts: program starts are multiples of 64, lanes are contiguous.
  std::string offs2 = b.op("max_contiguous[values=[64]] " + t.offs, blk(t.dims, "i32"));
  std::string offs3 = b.op("multiple_of[values=[1]] " + offs2, blk(t.dims, "i32"));
  std::string pid = b.op("program_id[axis=0]", "i32");
  std::string c64 = b.op("const[value=64]", "i32");
  std::string start = b.op("multiple_of[values=[64]] " + b.op("mul " + pid + ", " + c64, "i32"), "i32");
  std::string zero_i = b.op("const[value=0]", "i32");
  b.stmt("assume " + b.op("cmp[pred=sge] " + start + ", " + zero_i, "i1"));
  std::string hp = b.op("addptr " + b.op("splat " + x, pf) + ", " + offs3, pf);
  std::string hl = b.op("load " + hp + ", mask=" + t.mask + ", other=" + zero, blk(t.dims, TRI_DTYPE_F32));
  b.stmt("debug_barrier");
  store_tile(b, t, hv, TRI_DTYPE_F32, hl);
  b.check("ptrtoint differences", "byte_offsets");
  b.check("inttoptr(ptrtoint(p)) load", "round_trip");
  b.check("bitcast ptr<f32> to ptr<i32> load", "as_i32");
  b.check("cmp[pred=ult] on pointers", "ptr_ult");
  b.check("max_contiguous, multiple_of, assume, debug_barrier", "hinted");
  return b.finish();
}

}  // namespace

void gen_memory(uint64_t seed, const GroupSink& sink) {
  sink(copy_all_dtypes(seed));
  sink(load_without_other(seed));
  sink(gather_scatter(seed));
  sink(pointer_casts_and_hints(seed));
  std::vector<ShapeCase> cases = shape_cases();
  for (int32_t dt : {TRI_DTYPE_I1, TRI_DTYPE_I8, TRI_DTYPE_I32, TRI_DTYPE_I64, TRI_DTYPE_F16, TRI_DTYPE_F64}) {
    std::string title = std::string("shape ops ") + dtype_name(dt);
    Group g = make_shape(title, seed, title, dt, cases);
    g.split = [=]() {
      std::vector<Group> parts;
      for (const ShapeCase& c : cases) parts.push_back(make_shape(title + " / " + c.name, seed, title, dt, {c}));
      return parts;
    };
    sink(std::move(g));
  }
}

}  // namespace conf
