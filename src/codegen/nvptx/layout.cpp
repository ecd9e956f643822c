// Distributed layouts (layout.h says what they are and why they look this way).
#include "codegen/nvptx/layout.h"

#include <algorithm>
#include <cassert>

namespace tri::codegen::nvptx {
namespace {

Basis unit(int rank, int d, int64_t v) {
  Basis b(rank, 0);
  b[d] = v;
  return b;
}

bool is_zero(const Basis& b) {
  return std::all_of(b.begin(), b.end(), [](int64_t v) { return v == 0; });
}

int log2i(int64_t v) {
  int k = 0;
  while ((int64_t(1) << k) < v) ++k;
  return k;
}

}  // namespace

Basis Layout::reg_coord(int64_t r) const {
  Basis c(shape.size(), 0);
  for (size_t i = 0; i < reg.size(); ++i)
    if (r >> i & 1)
      for (size_t d = 0; d < c.size(); ++d) c[d] ^= reg[i][d];
  return c;
}

Basis Layout::thread_coord(int64_t lane, int64_t warp) const {
  Basis c(shape.size(), 0);
  for (size_t i = 0; i < this->lane.size(); ++i)
    if (lane >> i & 1)
      for (size_t d = 0; d < c.size(); ++d) c[d] ^= this->lane[i][d];
  for (size_t i = 0; i < this->warp.size(); ++i)
    if (warp >> i & 1)
      for (size_t d = 0; d < c.size(); ++d) c[d] ^= this->warp[i][d];
  return c;
}

std::string Layout::str() const {
  auto vec = [](const Basis& b) {
    std::string s = "[";
    for (size_t i = 0; i < b.size(); ++i) s += (i ? "," : "") + std::to_string(b[i]);
    return s + "]";
  };
  auto list = [&](const char* name, const std::vector<Basis>& bs) {
    std::string s = std::string(name) + "=";
    for (const Basis& b : bs) s += vec(b);
    return s;
  };
  return "layout" + vec(shape) + "{" + list("reg", reg) + " " + list("lane", lane) + " " + list("warp", warp) + "}";
}

std::vector<int> row_major(int rank) {
  std::vector<int> o;
  for (int d = rank - 1; d >= 0; --d) o.push_back(d);
  return o;
}

Layout blocked(const Shape& shape, const std::vector<int>& order, int vec, int num_warps) {
  const int rank = static_cast<int>(shape.size());
  Layout l;
  l.shape = shape;
  Shape covered(rank, 1);
  auto next_dim = [&]() -> int {
    for (int d : order)
      if (covered[d] < shape[d]) return d;
    return -1;
  };
  auto take = [&](std::vector<Basis>* into) {
    int d = next_dim();
    if (d < 0) {
      into->push_back(Basis(rank, 0));
      return;
    }
    into->push_back(unit(rank, d, covered[d]));
    covered[d] *= 2;
  };
  if (rank > 0) {
    const int o0 = order[0];
    while (covered[o0] * 2 <= std::min<int64_t>(vec, shape[o0])) take(&l.reg);
  }
  for (int i = 0; i < 5; ++i) take(&l.lane);
  for (int i = 0; i < log2i(num_warps); ++i) take(&l.warp);
  while (next_dim() >= 0) take(&l.reg);
  return l;
}

Layout slice(const Layout& l, int axis) {
  Layout r;
  r.shape = l.shape;
  r.shape.erase(r.shape.begin() + axis);
  auto drop = [axis](Basis b) {
    b.erase(b.begin() + axis);
    return b;
  };
  for (const Basis& b : l.reg)
    if (b[axis] == 0) r.reg.push_back(drop(b));
  for (const Basis& b : l.lane) r.lane.push_back(b[axis] ? Basis(r.shape.size(), 0) : drop(b));
  for (const Basis& b : l.warp) r.warp.push_back(b[axis] ? Basis(r.shape.size(), 0) : drop(b));
  return r;
}

Layout unbroadcast(const Layout& l, const std::vector<bool>& proj) {
  Layout r;
  r.shape = l.shape;
  auto P = [&](Basis b) {
    for (size_t d = 0; d < b.size(); ++d)
      if (proj[d]) b[d] = 0;
    return b;
  };
  for (size_t d = 0; d < r.shape.size(); ++d)
    if (proj[d]) r.shape[d] = 1;
  for (const Basis& b : l.reg)
    if (!is_zero(P(b))) r.reg.push_back(P(b));
  for (const Basis& b : l.lane) r.lane.push_back(P(b));
  for (const Basis& b : l.warp) r.warp.push_back(P(b));
  return r;
}

Layout expand(const Layout& l, int axis) {
  Layout r = l;
  r.shape.insert(r.shape.begin() + axis, 1);
  for (auto* bs : {&r.reg, &r.lane, &r.warp})
    for (Basis& b : *bs) b.insert(b.begin() + axis, 0);
  return r;
}

Layout permute(const Layout& l, const std::vector<int64_t>& order) {
  Layout r = l;
  for (size_t i = 0; i < order.size(); ++i) r.shape[i] = l.shape[order[i]];
  for (auto* bs : {&r.reg, &r.lane, &r.warp})
    for (Basis& b : *bs) {
      Basis old = b;
      for (size_t i = 0; i < order.size(); ++i) b[i] = old[order[i]];
    }
  return r;
}

Layout reshape(const Layout& l, const Shape& shape) {
  // Row-major strides of both shapes; a single-bit basis is one power of two of the linear index.
  auto strides = [](const Shape& s) {
    Shape st(s.size(), 1);
    for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
    return st;
  };
  const Shape from = strides(l.shape), to = strides(shape);
  auto map = [&](const Basis& b) {
    int64_t lin = 0;
    for (size_t d = 0; d < b.size(); ++d) lin += b[d] * from[d];
    Basis r(shape.size(), 0);
    for (size_t d = 0; d < shape.size(); ++d) {
      r[d] = lin / to[d];
      lin %= to[d];
    }
    return r;
  };
  Layout r;
  r.shape = shape;
  for (const Basis& b : l.reg) r.reg.push_back(map(b));
  for (const Basis& b : l.lane) r.lane.push_back(map(b));
  for (const Basis& b : l.warp) r.warp.push_back(map(b));
  return r;
}

Layout add_reg_bit(const Layout& l, const Shape& shape, const Basis& b) {
  Layout r = l;
  r.shape = shape;
  r.reg.push_back(b);
  return r;
}

bool register_map(const Layout& src, const Layout& dst, const std::vector<bool>& proj, std::vector<int64_t>* map) {
  if (src.rank() != dst.rank() || src.lane.size() != dst.lane.size() || src.warp.size() != dst.warp.size())
    return false;
  auto P = [&](Basis b) {
    for (size_t d = 0; d < b.size(); ++d)
      if (proj[d]) b[d] = 0;
    return b;
  };
  for (size_t i = 0; i < dst.lane.size(); ++i)
    if (P(dst.lane[i]) != src.lane[i]) return false;
  for (size_t i = 0; i < dst.warp.size(); ++i)
    if (P(dst.warp[i]) != src.warp[i]) return false;
  map->assign(dst.nregs(), 0);
  for (int64_t r = 0; r < dst.nregs(); ++r) {
    Basis want = P(dst.reg_coord(r));
    int64_t idx = 0;
    for (size_t i = 0; i < src.reg.size(); ++i) {
      const Basis& b = src.reg[i];
      if (is_zero(b)) continue;
      bool hit = true;
      for (size_t d = 0; d < b.size(); ++d)
        if (b[d] && !(want[d] & b[d])) hit = false;
      if (hit) {
        idx |= int64_t(1) << i;
        for (size_t d = 0; d < b.size(); ++d) want[d] ^= b[d];
      }
    }
    if (!is_zero(want)) return false;
    (*map)[r] = idx;
  }
  return true;
}

uint32_t replicated_lane_mask(const Layout& l) {
  uint32_t m = 0;
  for (size_t i = 0; i < l.lane.size(); ++i)
    if (is_zero(l.lane[i])) m |= 1u << i;
  return m;
}

uint32_t replicated_warp_mask(const Layout& l) {
  uint32_t m = 0;
  for (size_t i = 0; i < l.warp.size(); ++i)
    if (is_zero(l.warp[i])) m |= 1u << i;
  return m;
}

uint64_t replicated_reg_mask(const Layout& l) {
  uint64_t m = 0;
  for (size_t i = 0; i < l.reg.size(); ++i)
    if (is_zero(l.reg[i])) m |= uint64_t(1) << i;
  return m;
}

}  // namespace tri::codegen::nvptx
