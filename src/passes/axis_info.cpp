// Axis info (axis_info.h gives the definitions every rule here keeps).
#include "passes/axis_info.h"

#include <algorithm>

namespace tri::passes {
namespace {

using ir::Opcode;

int64_t pow2_factor(int64_t v) {
  if (v == 0) return kMaxDivisibility;
  uint64_t u = v < 0 ? uint64_t(-(v + 1)) + 1 : uint64_t(v);
  int64_t p = 1;
  while (!(u & 1) && p < kMaxDivisibility) {
    u >>= 1;
    p <<= 1;
  }
  return p;
}

int64_t floor_pow2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v && p < kMaxDivisibility) p *= 2;
  return p;
}

// The divisibility of x at indices along d that are multiples of c (c and x's contiguity are
// powers of two, so one divides the other): run starts of x when c is a multiple of its
// contiguity, else a run start plus a multiple of c.
int64_t div_at(const AxisInfo& x, size_t d, int64_t c) {
  return x.contiguity[d] <= c ? x.divisibility[d] : std::min(x.divisibility[d], c);
}

// A divisibility that holds for every lane: one of a dimension whose contiguity is 1.
int64_t every_lane_div(const AxisInfo& x) {
  int64_t best = 1;
  for (size_t d = 0; d < x.contiguity.size(); ++d)
    if (x.contiguity[d] == 1) best = std::max(best, x.divisibility[d]);
  return best;
}

}  // namespace

AxisInfoAnalysis::AxisInfoAnalysis(const ir::Module& m, const ir::Function& f) : m_(m), f_(f) {
  info_.resize(f.values.size());
  for (size_t v = 0; v < f.values.size(); ++v) info_[v] = unknown(static_cast<ir::ValueId>(v));
  const ir::BlockData& body = f.block(f.body);
  for (size_t i = 0; i < f.params.size() && i < body.args.size(); ++i) {
    const ir::Param& p = f.params[i];
    AxisInfo a = unknown(body.args[i]);
    if (m.types.is_ptr(p.type) && p.align) a.divisibility[0] = floor_pow2(p.align);
    if (!m.types.is_ptr(p.type) && p.divisible) a.divisibility[0] = pow2_factor(p.divisible);
    info_[body.args[i]] = a;
  }
  block(f.body);
}

std::vector<int64_t> AxisInfoAnalysis::shape(ir::ValueId v) const {
  ir::TypeId t = f_.type_of(v);
  std::vector<int64_t> s;
  if (!m_.types.is_block(t)) return {1};
  for (const ir::Dim& d : m_.types.get(t).dims) s.push_back(d.value);
  return s;
}

AxisInfo AxisInfoAnalysis::unknown(ir::ValueId v) const {
  size_t r = shape(v).size();
  return AxisInfo{std::vector<int64_t>(r, 1), std::vector<int64_t>(r, 1), std::vector<int64_t>(r, 1), std::nullopt};
}

AxisInfo AxisInfoAnalysis::join(const AxisInfo& a, const AxisInfo& b) const {
  AxisInfo r = a;
  for (size_t d = 0; d < r.contiguity.size() && d < b.contiguity.size(); ++d) {
    r.contiguity[d] = std::min(a.contiguity[d], b.contiguity[d]);
    r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
    // Run starts of the join are run starts of both (the smaller contiguity divides the larger).
    r.divisibility[d] = std::min(div_at(a, d, r.contiguity[d]), div_at(b, d, r.contiguity[d]));
  }
  if (a.value != b.value) r.value.reset();
  return r;
}

bool AxisInfoAnalysis::set(ir::ValueId v, AxisInfo i) {
  AxisInfo& old = info_[v];
  bool changed = old.contiguity != i.contiguity || old.divisibility != i.divisibility ||
                 old.constancy != i.constancy || old.value != i.value;
  old = std::move(i);
  return changed;
}

void AxisInfoAnalysis::block(ir::BlockId b) {
  for (ir::OpId o : f_.block(b).ops) op(o);
}

void AxisInfoAnalysis::op(ir::OpId o) {
  const ir::OpData& od = f_.op(o);
  auto in = [&](int i) -> const AxisInfo& { return info_[od.operands[i]]; };
  const ir::ValueId res = od.results.empty() ? ir::kNoValue : od.results[0];
  const size_t rank = res != ir::kNoValue ? shape(res).size() : 1;
  const std::vector<int64_t> rs = res != ir::kNoValue ? shape(res) : std::vector<int64_t>{1};
  const bool is_block = res != ir::kNoValue && m_.types.is_block(f_.type_of(res));
  AxisInfo r = res != ir::kNoValue ? unknown(res) : AxisInfo{};

  auto elementwise_same_rank = [&]() {
    for (ir::ValueId v : od.operands)
      if (v != ir::kNoValue && info_[v].contiguity.size() != rank) return false;
    return true;
  };

  switch (od.code) {
    case Opcode::Const: {
      const ir::Attr& a = f_.attr(o, "value");
      if (a.kind == ir::Attr::Kind::Int || a.kind == ir::Attr::Kind::Bool) {
        for (size_t d = 0; d < rank; ++d) {
          r.divisibility[d] = pow2_factor(a.i);
          r.constancy[d] = is_block ? rs[d] : 1;
        }
        r.value = a.i;
      } else if (is_block) {
        for (size_t d = 0; d < rank; ++d) r.constancy[d] = rs[d];
      }
      break;
    }
    case Opcode::Arange: {
      int64_t start = f_.attr(o, "start").i, end = f_.attr(o, "end").i;
      r.contiguity[0] = floor_pow2(end - start);
      r.divisibility[0] = pow2_factor(start);
      break;
    }
    case Opcode::Splat: {
      const AxisInfo& s = in(0);
      for (size_t d = 0; d < rank; ++d) {
        r.divisibility[d] = s.divisibility[0];
        r.constancy[d] = rs[d];
      }
      r.value = s.value;
      break;
    }
    case Opcode::Broadcast: {
      const AxisInfo& s = in(0);
      std::vector<int64_t> ss = shape(od.operands[0]);
      for (size_t d = 0; d < rank; ++d) {
        if (ss[d] == rs[d]) {
          r.contiguity[d] = s.contiguity[d];
          r.divisibility[d] = s.divisibility[d];
          r.constancy[d] = s.constancy[d];
        } else {
          r.constancy[d] = rs[d];
          r.divisibility[d] = every_lane_div(s);
        }
      }
      r.value = s.value;
      break;
    }
    case Opcode::ExpandDims: {
      const AxisInfo& s = in(0);
      size_t axis = static_cast<size_t>(f_.attr(o, "axis").i);
      const bool scalar_src = !m_.types.is_block(f_.type_of(od.operands[0]));
      size_t j = 0;
      for (size_t d = 0; d < rank; ++d) {
        if (d == axis) {
          r.divisibility[d] = every_lane_div(s);
          continue;
        }
        if (scalar_src) break;
        r.contiguity[d] = s.contiguity[j];
        r.divisibility[d] = s.divisibility[j];
        r.constancy[d] = s.constancy[j];
        ++j;
      }
      r.value = s.value;
      break;
    }
    case Opcode::Permute: {
      const AxisInfo& s = in(0);
      const std::vector<int64_t>& order = f_.attr(o, "order").ints;
      for (size_t d = 0; d < rank && d < order.size(); ++d) {
        r.contiguity[d] = s.contiguity[order[d]];
        r.divisibility[d] = s.divisibility[order[d]];
        r.constancy[d] = s.constancy[order[d]];
      }
      r.value = s.value;
      break;
    }
    case Opcode::MultipleOf:
    case Opcode::MaxContiguous: {
      r = in(0);
      const std::vector<int64_t>& vals = f_.attr(o, "values").ints;
      for (size_t d = 0; d < rank && d < vals.size(); ++d) {
        if (od.code == Opcode::MultipleOf) r.divisibility[d] = std::max(r.divisibility[d], pow2_factor(vals[d]));
        else r.contiguity[d] = std::max(r.contiguity[d], floor_pow2(vals[d]));
      }
      break;
    }
    case Opcode::Add:
    case Opcode::Sub:
    case Opcode::AddPtr: {
      if (!elementwise_same_rank()) break;
      const AxisInfo& a = in(0);
      const AxisInfo& b = in(1);
      int64_t scale = 1;
      if (od.code == Opcode::AddPtr) {
        ir::TypeId pt = f_.type_of(od.operands[0]);
        ir::TypeId et = m_.types.is_block(pt) ? m_.types.get(pt).elem : pt;
        ir::Scalar s = m_.types.get(m_.types.get(et).pointee).scalar;
        scale = std::max(1, ir::scalar_bits(s) / 8);
      } else if (ir::is_float(m_.types.get(is_block ? m_.types.get(f_.type_of(res)).elem : f_.type_of(res)).scalar)) {
        break;
      }
      for (size_t d = 0; d < rank; ++d) {
        int64_t c = std::max(std::min(a.contiguity[d], b.constancy[d]),
                             od.code == Opcode::Sub ? int64_t(1) : std::min(a.constancy[d], b.contiguity[d]));
        r.contiguity[d] = c;
        int64_t bd = div_at(b, d, c);
        r.divisibility[d] = std::min(div_at(a, d, c), std::min(kMaxDivisibility, bd * scale));
        r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
      }
      if (a.value && b.value && od.code != Opcode::AddPtr)
        r.value = od.code == Opcode::Add ? *a.value + *b.value : *a.value - *b.value;
      break;
    }
    case Opcode::Mul: {
      if (!elementwise_same_rank()) break;
      const AxisInfo& a = in(0);
      const AxisInfo& b = in(1);
      if (ir::is_float(m_.types.get(is_block ? m_.types.get(f_.type_of(res)).elem : f_.type_of(res)).scalar)) break;
      if (b.value && *b.value == 1) {
        r = a;
        break;
      }
      if (a.value && *a.value == 1) {
        r = b;
        break;
      }
      for (size_t d = 0; d < rank; ++d) {
        r.divisibility[d] = std::min(kMaxDivisibility, div_at(a, d, 1) * div_at(b, d, 1));
        r.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
      }
      if (a.value && b.value) r.value = *a.value * *b.value;
      break;
    }
    case Opcode::Cmp: {
      if (!elementwise_same_rank()) break;
      const AxisInfo& a = in(0);
      const AxisInfo& b = in(1);
      // A contiguous side against a side constant over its runs flips at most once per run;
      // for a < b (and its complement) the flip lands on a multiple of the common divisibility.
      const std::string pred = ir::op_info(od.code).attrs[0].enum_values[f_.attr(o, "pred").i];
      const bool lhs_runs = pred == "slt" || pred == "ult" || pred == "sge" || pred == "uge";
      const bool rhs_runs = pred == "sgt" || pred == "ugt" || pred == "sle" || pred == "ule";
      for (size_t d = 0; d < rank; ++d) {
        int64_t k = std::min(a.constancy[d], b.constancy[d]);
        const AxisInfo* run = lhs_runs ? &a : rhs_runs ? &b : nullptr;
        const AxisInfo* flat = lhs_runs ? &b : &a;
        if (run && run->contiguity[d] > 1) {
          int64_t c = run->contiguity[d];
          int64_t g = std::min({c, run->divisibility[d], flat->constancy[d], div_at(*flat, d, 1)});
          k = std::max(k, g);
        }
        r.constancy[d] = k;
      }
      break;
    }
    case Opcode::And:
    case Opcode::Or: {
      if (!elementwise_same_rank()) break;
      for (size_t d = 0; d < rank; ++d) r.constancy[d] = std::min(in(0).constancy[d], in(1).constancy[d]);
      break;
    }
    case Opcode::Select: {
      if (!elementwise_same_rank()) break;
      const AxisInfo& c = in(0);
      const AxisInfo& a = in(1);
      const AxisInfo& b = in(2);
      for (size_t d = 0; d < rank; ++d) {
        int64_t k = std::min({c.constancy[d], a.contiguity[d], b.contiguity[d]});
        r.contiguity[d] = k;
        r.divisibility[d] = std::min(div_at(a, d, k), div_at(b, d, k));
        r.constancy[d] = std::min({c.constancy[d], a.constancy[d], b.constancy[d]});
      }
      break;
    }
    case Opcode::ZExt:
    case Opcode::SExt:
      r = in(0);
      break;
    case Opcode::Trunc:
    case Opcode::PtrToInt:
    case Opcode::IntToPtr:
    case Opcode::Bitcast:
      for (size_t d = 0; d < rank; ++d) r.constancy[d] = in(0).constancy[d];
      break;
    case Opcode::For: {
      // lo, hi, step, inits...; region args: iv, iters...
      const ir::BlockData& bd = f_.block(od.regions[0]);
      AxisInfo iv = unknown(bd.args[0]);
      iv.divisibility[0] = std::min(in(0).divisibility[0], in(2).divisibility[0]);
      set(bd.args[0], iv);
      for (size_t i = 3; i < od.operands.size(); ++i) set(bd.args[i - 2], in(static_cast<int>(i)));
      for (int it = 0; it < 8; ++it) {
        block(od.regions[0]);
        const ir::OpData& y = f_.op(f_.block(od.regions[0]).ops.back());
        bool changed = false;
        for (size_t i = 0; i + 3 < od.operands.size(); ++i)
          changed |= set(bd.args[i + 1], join(info_[bd.args[i + 1]], info_[y.operands[i]]));
        if (!changed) break;
        if (it == 7)
          for (size_t i = 0; i + 3 < od.operands.size(); ++i) set(bd.args[i + 1], unknown(bd.args[i + 1]));
      }
      block(od.regions[0]);
      for (size_t i = 0; i < od.results.size(); ++i) set(od.results[i], info_[bd.args[i + 1]]);
      return;
    }
    case Opcode::If: {
      std::vector<const ir::OpData*> ys;
      for (ir::BlockId rb : od.regions) {
        block(rb);
        ys.push_back(&f_.op(f_.block(rb).ops.back()));
      }
      for (size_t i = 0; i < od.results.size(); ++i) {
        if (ys.size() < 2) {
          set(od.results[i], unknown(od.results[i]));
          continue;
        }
        set(od.results[i], join(info_[ys[0]->operands[i]], info_[ys[1]->operands[i]]));
      }
      return;
    }
    case Opcode::While: {
      const ir::BlockData& before = f_.block(od.regions[0]);
      const ir::BlockData& after = f_.block(od.regions[1]);
      for (size_t i = 0; i < od.operands.size(); ++i) set(before.args[i], in(static_cast<int>(i)));
      for (int it = 0; it < 8; ++it) {
        block(od.regions[0]);
        const ir::OpData& c = f_.op(before.ops.back());
        for (size_t i = 0; i < after.args.size(); ++i) set(after.args[i], info_[c.operands[i + 1]]);
        block(od.regions[1]);
        const ir::OpData& y = f_.op(after.ops.back());
        bool changed = false;
        for (size_t i = 0; i < od.operands.size(); ++i)
          changed |= set(before.args[i], join(info_[before.args[i]], info_[y.operands[i]]));
        if (!changed) break;
        if (it == 7)
          for (size_t i = 0; i < od.operands.size(); ++i) set(before.args[i], unknown(before.args[i]));
      }
      block(od.regions[0]);
      const ir::OpData& c = f_.op(before.ops.back());
      for (size_t i = 0; i < after.args.size(); ++i) set(after.args[i], info_[c.operands[i + 1]]);
      block(od.regions[1]);
      for (size_t i = 0; i < od.results.size(); ++i) set(od.results[i], info_[c.operands[i + 1]]);
      return;
    }
    default:
      // Ops with regions (reduce, scan) still get their regions visited so values inside have
      // entries; their results stay unknown.
      for (ir::BlockId rb : od.regions) block(rb);
      break;
  }
  if (res != ir::kNoValue) {
    for (size_t d = 0; d < r.contiguity.size(); ++d) {
      // A run cannot be longer than its dimension.
      r.contiguity[d] = std::min(r.contiguity[d], rs[d]);
      r.constancy[d] = std::min(r.constancy[d], rs[d]);
    }
    set(res, std::move(r));
  }
}

}  // namespace tri::passes
