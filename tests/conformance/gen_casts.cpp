// Casts: every cast op between every pair of element types the verifier accepts for it (trunc,
// zext, sext, fptrunc with both roundings, fpext, fptosi/fptoui (saturating, NaN gives 0),
// sitofp/uitofp, bitcast), from one input per source type. Float inputs include the limits of
// every integer and float type and the ties just past them. All casts are correctly rounded, so
// every comparison is exact.
#include "harness.h"

namespace conf {

using namespace tri_tool;

namespace {

struct CastOp {
  std::string text;
  int32_t dst;
};

std::vector<CastOp> casts_from(int32_t src) {
  std::vector<CastOp> out;
  const DtypeInfo& s = dtype_info(src);
  for (int32_t dst = 0; dst < kNumDtypes; ++dst) {
    const DtypeInfo& d = dtype_info(dst);
    if (!s.is_float && !d.is_float) {
      if (d.bits < s.bits) out.push_back({"trunc", dst});
      if (d.bits > s.bits) {
        out.push_back({"zext", dst});
        out.push_back({"sext", dst});
      }
    } else if (!s.is_float && d.is_float) {
      out.push_back({"sitofp", dst});
      out.push_back({"uitofp", dst});
    } else if (s.is_float && !d.is_float) {
      out.push_back({"fptosi", dst});
      out.push_back({"fptoui", dst});
    } else {
      if (d.bits < s.bits) {
        out.push_back({"fptrunc", dst});
        out.push_back({"fptrunc[rounding=rtz]", dst});
      }
      if (d.bits > s.bits) out.push_back({"fpext", dst});
    }
    if (dst != src && d.bits == s.bits && src != TRI_DTYPE_I1) out.push_back({"bitcast", dst});
  }
  return out;
}

Group make_casts(const std::string& title, uint64_t seed, const std::string& salt, const Tile& tile, int32_t src,
                 const std::vector<CastOp>& ops) {
  Builder b(title, seed, salt);
  b.g.grid[0] = tile.grid;
  size_t n = tile.count();
  HostBuffer in = gen_buffer(b.rng, src, n, dtype_is_float(src) ? Dist::Cast : Dist::General);
  if (tile.dims.size() == 1) {
    std::vector<uint64_t> e = edge_values(src, dtype_is_float(src) ? Dist::Cast : Dist::General);
    for (size_t i = 0; i < e.size() && i < n; ++i) in.set(i, e[i]);
  }
  std::string a = b.in_buf("a", std::move(in));
  std::vector<std::string> outs;
  for (size_t i = 0; i < ops.size(); ++i) outs.push_back(b.out_buf("o" + std::to_string(i), ops[i].dst, n));
  TileIR t = emit_tile(b, tile);
  std::string v = load_tile(b, t, a, src, src == TRI_DTYPE_I1 ? "true" : lit(src, 1));
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string r = b.op(ops[i].text + " " + v, blk(tile.dims, ops[i].dst));
    store_tile(b, t, outs[i], ops[i].dst, r);
    b.check(ops[i].text + " " + dtype_name(src) + " to " + dtype_name(ops[i].dst), outs[i], Cmp::Exact, {"a"});
  }
  return b.finish();
}

}  // namespace

void gen_casts(uint64_t seed, const GroupSink& sink) {
  std::vector<Tile> tiles = standard_tiles();
  for (int32_t src = 0; src < kNumDtypes; ++src) {
    for (size_t ti : {size_t(0), size_t(2)}) {
      const Tile& tile = tiles[ti];
      std::string title = std::string("casts from ") + dtype_name(src) + " " + tile.name();
      std::vector<CastOp> ops = casts_from(src);
      Group g = make_casts(title, seed, title, tile, src, ops);
      g.split = [=]() {
        std::vector<Group> parts;
        for (const CastOp& op : ops)
          parts.push_back(make_casts(title + " / " + op.text + " to " + dtype_name(op.dst), seed, title, tile, src, {op}));
        return parts;
      };
      sink(std::move(g));
    }
  }
}

}  // namespace conf
