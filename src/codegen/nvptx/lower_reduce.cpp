// Reductions, scans and dot on the GPU.
//  - reduce: in the operand's own layout, over the register and lane bits along the axis from
//    the lowest coordinate bit up (in-thread combines and butterfly shuffles, the lower-indexed
//    side first), then shared memory over the warps along it; the result lives in the slice
//    layout (replicated over the threads that took part), so broadcasting it back costs nothing.
//    A combine region need only be associative, and that order respects it whenever the warps
//    hold the axis's highest bits (every blocked and tensor-core layout here). Register bits
//    above the warps (repetitions of the lane and warp pattern) are reduced apart: the lanes
//    halve them between each other, and all their warp partials go through shared memory at
//    once, combined in axis order. Otherwise, or where that would keep too many partials live
//    and the operands can be reloaded, they first move to a layout where each thread holds a
//    contiguous run along the axis.
//  - scan: that same ordered layout; an in-thread scan, a Kogge-Stone scan of the thread totals
//    over the lanes, the warps' totals through shared memory, then each element takes the
//    prefixes before it.
//  - dot: the CUDA-core fallback (tensor cores are the next step): both operands staged in
//    shared memory in the compute type, each thread accumulating its registers of the result
//    over k in order (c + a*b, two roundings: the interpreter's arithmetic).
#include <algorithm>
#include <cstdint>

#include "codegen/nvptx/lower_impl.h"
#include "codegen/scalar_ops.h"
#include "passes/combine_info.h"

namespace tri::codegen::nvptx::detail {
namespace {

using Tuple = std::vector<llvm::Value*>;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Positions of the register bits of l whose basis points into `axis` (in), and the others.
void split_bits(const std::vector<Basis>& bs, int axis, std::vector<int>* in, std::vector<int>* out) {
  for (size_t i = 0; i < bs.size(); ++i) (bs[i][axis] ? in : out)->push_back(static_cast<int>(i));
}

int64_t deposit(int64_t v, const std::vector<int>& positions) {
  int64_t r = 0;
  for (size_t j = 0; j < positions.size(); ++j)
    if (v >> j & 1) r |= int64_t(1) << positions[j];
  return r;
}

}  // namespace

// A layout of `s` in which each thread holds a contiguous run along `axis`, and lanes then
// warps continue it in order (no register bits above them along the axis).
static Layout ordered_layout(const Shape& s, int axis, int num_warps) {
  std::vector<int> order = {axis};
  for (int d : row_major(static_cast<int>(s.size())))
    if (d != axis) order.push_back(d);
  int64_t vec = std::max<int64_t>(1, s[axis] / (32 * num_warps));
  return blocked(s, order, static_cast<int>(vec), num_warps);
}

// Whether a reduce along `axis` in layout l can combine in order along the axis without moving
// the data first: its steps go up the coordinate bits (registers and lanes in any mix), and the
// warps along the axis, combined last through shared memory in warp order, hold the highest
// coordinate bits in increasing order.
static bool reduce_in_order(const Layout& l, int axis) {
  int64_t low = 0;  // the highest coordinate bit a register or lane holds along the axis
  for (const Basis& b : l.reg) low = std::max(low, b[axis]);
  for (const Basis& b : l.lane) low = std::max(low, b[axis]);
  int64_t prev = low;
  for (const Basis& b : l.warp) {
    if (!b[axis]) continue;
    if (b[axis] < prev) return false;
    prev = b[axis];
  }
  return true;
}

// Whether l is in order along `axis` (reduce_in_order) but for register bits above every lane
// and warp bit along it: repetitions of the lane and warp pattern (a blocked layout of a block
// longer than its threads cover). Those bits go to *reps, lowest coordinate first.
static bool in_order_but_repetitions(const Layout& l, int axis, std::vector<int>* reps) {
  int64_t top = 0;  // the highest coordinate bit a lane or warp holds along the axis
  for (const Basis& b : l.lane) top = std::max(top, b[axis]);
  for (const Basis& b : l.warp) top = std::max(top, b[axis]);
  Layout rest = l;
  rest.reg.clear();
  reps->clear();
  for (size_t i = 0; i < l.reg.size(); ++i) {
    if (l.reg[i][axis] > top) reps->push_back(static_cast<int>(i));
    else rest.reg.push_back(l.reg[i]);
  }
  std::sort(reps->begin(), reps->end(), [&](int x, int y) { return l.reg[x][axis] < l.reg[y][axis]; });
  return !reps->empty() && reduce_in_order(rest, axis);
}

Status GpuLowering::lower_combine(BlockId region, const std::vector<llvm::Value*>& args, std::vector<llvm::Value*>* out) {
  const ir::BlockData& bd = f_->block(region);
  for (size_t i = 0; i < bd.args.size(); ++i) set(bd.args[i], scalar(args[i], etype(f_->type_of(bd.args[i]))));
  OpId term;
  TRI_RETURN_IF_ERROR(lower_block(region, &term));
  out->clear();
  for (ValueId v : f_->op(term).operands) out->push_back(val(v).s);
  return Status::ok();
}

// One combination of reduce or scan: the op's combine region on (a..., b...), or its builtin
// kind on the first values. Errors go to *st (the first one is kept) and return a unchanged.
std::vector<llvm::Value*> GpuLowering::combine_pair(OpId o, const std::string& kind, EType e,
                                                   const std::vector<llvm::Value*>& a,
                                                   const std::vector<llvm::Value*>& b, Status* st) {
  const ir::OpData& op = f_->op(o);
  if (!op.regions.empty()) {
    std::vector<llvm::Value*> args = a, r;
    args.insert(args.end(), b.begin(), b.end());
    Status s2 = lower_combine(op.regions[0], args, &r);
    if (!s2.is_ok()) {
      if (st->is_ok()) *st = s2;
      return a;
    }
    return r;
  }
  llvm::Value* r = em_.builtin_combine(kind, e, a[0], b[0]);
  if (!r) {
    if (st->is_ok())
      *st = error(o, Code::Compile, "'" + std::string(ir::op_info(op.code).name) + "' kind '" + kind +
                                        "' does not apply to " + ir::scalar_name(e.s));
    return a;
  }
  return {r};
}

Status GpuLowering::lower_reduce(OpId o) {
  const ir::OpData& op = f_->op(o);
  std::vector<ValueId> srcs = f_->variadic(o);
  const int a = static_cast<int>(f_->attr(o, "axis").i);
  const std::string kind = enum_name(*f_, o, "kind");
  const bool region = !op.regions.empty();
  const bool arg = kind == "argmax" || kind == "argmin";
  const Shape s = val(srcs[0]).shape;
  if (!region && !arg && srcs.size() == 1 && s.size() == 1) {
    auto fit = scan_totals_.find(f_);
    if (fit != scan_totals_.end()) {
      auto it = fit->second.find(srcs[0]);
      if (it != fit->second.end() && it->second.kind == kind && it->second.block == op.parent) {
        set(op.results[0], scalar(it->second.total, val(srcs[0]).et));
        return Status::ok();
      }
    }
  }
  // Operands in one layout: the first src's own. Any order of combination suits a builtin kind
  // or a commutative region; a region that is only associative combines in order along the
  // axis, which its layout allows or the ordered one does.
  //
  // A layout in order but for repetitions above the warps (in_order_but_repetitions) keeps its
  // layout: each repetition is reduced in the thread, the lanes halve the repetitions between
  // them as they combine, all the warp partials go through shared memory at once, and those are
  // combined in their order along the axis (repetition by repetition, warps in order within
  // each). Its price is a partial per repetition and operand live through the thread's part:
  // with more than 8 of those it is kept only where the ordered layout would exchange an
  // operand through shared memory, not where it reloads or recomputes them.
  const bool any_order = !region || passes::combine_is_commutative(*f_, op.regions[0]);
  Layout l;
  std::vector<int> rep_bits;
  {
    const Val& v0 = val(srcs[0]);
    l = v0.kind == Val::Kind::Dist ? v0.lay : default_layout(s, v0.et);
    if (!any_order && !reduce_in_order(l, a)) {
      const Layout ord = ordered_layout(s, a, opt_.num_warps);
      bool keep = in_order_but_repetitions(l, a, &rep_bits);
      if (keep && (int64_t(1) << rep_bits.size()) * static_cast<int64_t>(srcs.size()) > 8) {
        keep = false;
        for (ValueId v : srcs) keep = keep || exchanges(val(v), ord);
      }
      if (!keep) {
        rep_bits.clear();
        l = ord;
      }
    }
  }
  const int64_t nrep = int64_t(1) << rep_bits.size();
  std::vector<EType> ets;
  std::vector<std::vector<llvm::Value*>> in;
  for (ValueId v : srcs) {
    ets.push_back(val(v).et);
    in.push_back(regs_in(val(v), l));
  }
  if (arg) {
    ets.push_back(EType{false, Scalar::I32});
    std::vector<llvm::Value*> idx;
    for (int64_t r = 0; r < l.nregs(); ++r) idx.push_back(coords(l, r)[a]);
    in.push_back(idx);
  }
  const size_t nt = in.size();
  Status st;
  auto combine = [&](const Tuple& x, const Tuple& y) -> Tuple {
    if (arg) {
      EType e = ets[0];
      llvm::Value* va = em_.to_arith(x[0], e);
      llvm::Value* vb = em_.to_arith(y[0], e);
      const bool mx = kind == "argmax";
      llvm::Value *better, *equal;
      if (ir::is_float(e.s)) {
        better = mx ? b_.CreateFCmpOGT(vb, va) : b_.CreateFCmpOLT(vb, va);
        equal = b_.CreateFCmpOEQ(vb, va);
      } else {
        better = mx ? b_.CreateICmpSGT(vb, va) : b_.CreateICmpSLT(vb, va);
        equal = b_.CreateICmpEQ(vb, va);
      }
      // Ties go to the lower index (the first extreme element).
      llvm::Value* take = b_.CreateOr(better, b_.CreateAnd(equal, b_.CreateICmpSLT(y[1], x[1])));
      return {b_.CreateSelect(take, y[0], x[0]), b_.CreateSelect(take, y[1], x[1])};
    }
    return combine_pair(o, kind, ets[0], x, y, &st);
  };
  // A lane step: this lane's `mine` and its partner's `other` combined lower lane first (the
  // partner is lower where this lane is `upper`).
  auto lane_pair = [&](llvm::Value* upper, const Tuple& mine, const Tuple& other) {
    Tuple lo, hi;
    for (size_t j = 0; j < nt; ++j) {
      lo.push_back(b_.CreateSelect(upper, other[j], mine[j]));
      hi.push_back(b_.CreateSelect(upper, mine[j], other[j]));
    }
    return combine(lo, hi);
  };
  auto tuple_at = [&](int64_t r) {
    Tuple t;
    for (auto& v : in) t.push_back(v[r]);
    return t;
  };
  Layout res = slice(l, a);
  std::vector<int> axis_bits, keep_bits;
  split_bits(l.reg, a, &axis_bits, &keep_bits);
  // Registers and lanes along the axis, one bit at a time: a register bit halves the thread's
  // partials, a lane bit is a butterfly over the lanes; each step combines the lower side first.
  // In any order, the registers go first (the fewest shuffles); otherwise the steps go from the
  // lowest coordinate bit up, so each combines neighbouring runs and an associative region sees
  // the elements in order (reduce_in_order checked that the warps come last).
  std::vector<std::pair<int64_t, int>> steps;  // (sort key, reg bit or ~lane bit)
  for (int i : axis_bits)
    if (std::find(rep_bits.begin(), rep_bits.end(), i) == rep_bits.end())
      steps.push_back({any_order ? 0 : l.reg[i][a], i});
  for (size_t i = 0; i < l.lane.size(); ++i)
    if (l.lane[i][a]) steps.push_back({any_order ? 1 : l.lane[i][a], ~static_cast<int>(i)});
  std::stable_sort(steps.begin(), steps.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<Tuple> part(static_cast<size_t>(l.nregs()));
  for (int64_t r = 0; r < l.nregs(); ++r) part[r] = tuple_at(r);
  int64_t done = 0;  // register bits already combined away
  // Repetitions (rep_bits) are not combined over the lanes one by one: the first lane steps
  // halve them instead (recursive halving: step s splits repetition bit s between the two
  // lanes, which is lane bit halving_lanes[s] of the repetition a lane keeps), so the lanes
  // combine nrep - 1 times for all repetitions together, not nrep times per step.
  int halved = 0;
  std::vector<int> halving_lanes;
  for (const auto& step : steps) {
    const int bit = step.second;
    if (bit >= 0) {
      for (int64_t r = 0; r < l.nregs(); ++r)
        if (!(r & (done | int64_t(1) << bit))) part[r] = combine(part[r], part[r | int64_t(1) << bit]);
      done |= int64_t(1) << bit;
      continue;
    }
    const int i = ~bit;
    llvm::Value* upper = b_.CreateICmpNE(b_.CreateAnd(lane_, 1u << i), b_.getInt32(0));
    if (halved < static_cast<int>(rep_bits.size())) {
      // Halving: of each pair of repetitions (the lowest repetition bit left) the lower lane
      // keeps the first and the upper lane the second, each receiving its partner's part of it.
      const int64_t rb = int64_t(1) << rep_bits[static_cast<size_t>(halved)];
      for (int64_t r = 0; r < l.nregs(); ++r) {
        if (r & (done | rb)) continue;
        Tuple mine, other;
        for (size_t j = 0; j < nt; ++j) {
          mine.push_back(b_.CreateSelect(upper, part[r | rb][j], part[r][j]));
          other.push_back(shfl_xor(b_.CreateSelect(upper, part[r][j], part[r | rb][j]), 1 << i));
        }
        part[r] = lane_pair(upper, mine, other);
      }
      done |= rb;
      halving_lanes.push_back(i);
      ++halved;
      continue;
    }
    for (int64_t r = 0; r < l.nregs(); ++r) {
      if (r & done) continue;
      Tuple& t = part[r];
      Tuple other;
      for (llvm::Value* x : t) other.push_back(shfl_xor(x, 1 << i));
      t = lane_pair(upper, t, other);
    }
  }
  // part[] now holds, per result register and repetition the lane kept, the combination of that
  // repetition's elements in this thread and its lanes: accq[rr][t] is repetition
  // q = t << halved | h, h the lane's bits halving_lanes (bit s of h is lane bit
  // halving_lanes[s]).
  const int64_t nheld = nrep >> halved;
  llvm::Value* h = b_.getInt32(0);
  uint32_t hmask = 0;
  for (int j = 0; j < halved; ++j) {
    h = b_.CreateOr(h, b_.CreateShl(b_.CreateAnd(b_.CreateLShr(lane_, halving_lanes[j]), 1), j));
    hmask |= 1u << halving_lanes[j];
  }
  std::vector<std::vector<Tuple>> accq(res.nregs());
  for (int64_t rr = 0; rr < res.nregs(); ++rr)
    for (int64_t t = 0; t < nheld; ++t)
      accq[rr].push_back(part[deposit(rr, keep_bits) | deposit(t << halved, rep_bits)]);
  std::vector<Tuple> acc(res.nregs());
  for (int64_t rr = 0; rr < res.nregs(); ++rr) acc[rr] = accq[rr][0];
  // Over the warps along the axis: every warp's partials (of every repetition) through shared
  // memory in one exchange, at position q * W + w of the result's P = nrep * W, which is their
  // order along the axis; then combined in that order.
  std::vector<int> waxis, wkeep;
  split_bits(l.warp, a, &waxis, &wkeep);
  if (!waxis.empty()) {
    const int64_t W = int64_t(1) << waxis.size();
    const int64_t P = nrep * W;
    const int64_t nres = numel(res.shape);
    std::vector<uint64_t> off(nt);
    uint64_t total = 0;
    for (size_t j = 0; j < nt; ++j) {
      off[j] = total;
      total += static_cast<uint64_t>(nres * P * elem_bytes(ets[j]) + 15) / 16 * 16;
    }
    need_smem(total);
    llvm::Value* wa = b_.getInt32(0);
    for (size_t j = 0; j < waxis.size(); ++j)
      wa = b_.CreateOr(wa, b_.CreateShl(b_.CreateAnd(b_.CreateLShr(warp_, waxis[j]), 1), j));
    uint32_t rep_lanes = replicated_lane_mask(res);
    uint32_t rep_warps = replicated_warp_mask(res);
    for (int w : waxis) rep_warps &= ~(1u << w);
    llvm::Value* writer = b_.CreateAnd(b_.CreateICmpEQ(b_.CreateAnd(lane_, rep_lanes & ~hmask), b_.getInt32(0)),
                                       b_.CreateICmpEQ(b_.CreateAnd(warp_, rep_warps), b_.getInt32(0)));
    const uint64_t dup = replicated_reg_mask(res);
    auto slot = [&](int64_t rr, llvm::Value* p, size_t j) {
      llvm::Value* lin = res.rank() ? linear(coords(res, rr), res.shape) : b_.getInt32(0);
      llvm::Value* idx = b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(static_cast<uint32_t>(P))), p);
      return smem_ptr(b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(off[j])),
                                   b_.CreateMul(idx, b_.getInt32(elem_bytes(ets[j])))));
    };
    auto read = [&](int64_t rr, llvm::Value* p) {
      Tuple x;
      for (size_t j = 0; j < nt; ++j)
        x.push_back(from_mem(b_.CreateAlignedLoad(mem_ty(ets[j]), slot(rr, p, j), llvm::Align(elem_bytes(ets[j]))),
                             ets[j]));
      return x;
    };
    barrier();
    emit_if(writer, [&] {
      for (int64_t rr = 0; rr < res.nregs(); ++rr) {
        if (rr & dup) continue;
        for (int64_t t = 0; t < nheld; ++t) {
          const int64_t q = t << halved;
          llvm::Value* p = b_.CreateAdd(b_.CreateMul(b_.CreateOr(h, b_.getInt32(static_cast<uint32_t>(q))),
                                                     b_.getInt32(static_cast<uint32_t>(W))),
                                        wa);
          for (size_t j = 0; j < nt; ++j)
            b_.CreateAlignedStore(to_mem(accq[rr][t][j], ets[j]), slot(rr, p, j), llvm::Align(elem_bytes(ets[j])));
        }
      }
    });
    barrier();
    // The lanes that hold the same results (the result's replicated lane bits, lowest first)
    // share the P partials: the g-th of G of them combines the run of k = P / G from g * k, then
    // the runs combine over those lane bits from the lowest up, the lower side first (P < G:
    // the lanes above P repeat the work of the ones below). Without such lanes, or with fewer than
    // 64 values to read (P per operand and result register: the loads go out together, so a
    // thread holds them all at once), every thread combines all P itself: no shuffles.
    std::vector<int> glanes;
    for (int i = 0; i < 5; ++i)
      if (rep_lanes >> i & 1) glanes.push_back(i);
    int nb = 0;
    while (nb < static_cast<int>(glanes.size()) && (int64_t(2) << nb) <= P) ++nb;
    if (P * static_cast<int64_t>(nt) * res.nregs() < 64) nb = 0;
    const int64_t k = P >> nb;
    llvm::Value* g = b_.getInt32(0);
    for (int i = 0; i < nb; ++i)
      g = b_.CreateOr(g, b_.CreateShl(b_.CreateAnd(b_.CreateLShr(lane_, glanes[i]), 1), i));
    llvm::Value* first = b_.CreateMul(g, b_.getInt32(static_cast<uint32_t>(k)));
    for (int64_t rr = 0; rr < res.nregs(); ++rr) {
      Tuple t;
      for (int64_t p = 0; p < k; ++p) {
        Tuple x = read(rr, b_.CreateAdd(first, b_.getInt32(static_cast<uint32_t>(p))));
        t = p == 0 ? x : combine(t, x);
      }
      for (int i = 0; i < nb; ++i) {
        llvm::Value* upper = b_.CreateICmpNE(b_.CreateAnd(lane_, 1u << glanes[i]), b_.getInt32(0));
        Tuple other;
        for (llvm::Value* x : t) other.push_back(shfl_xor(x, 1 << glanes[i]));
        t = lane_pair(upper, t, other);
      }
      acc[rr] = t;
    }
  }
  TRI_RETURN_IF_ERROR(st);
  // Results: one per src (argmax/argmin: the index).
  for (size_t i = 0; i < op.results.size(); ++i) {
    const size_t j = arg ? 1 : i;
    EType e = arg ? EType{false, Scalar::I32} : ets[j];
    if (res.rank() == 0) {
      set(op.results[i], scalar(acc[0][j], e));
    } else {
      std::vector<llvm::Value*> regs;
      for (const Tuple& t : acc) regs.push_back(t[j]);
      Val r = dist(e, res, std::move(regs));
      r.slice_parent = std::make_shared<const Layout>(l);
      r.slice_axis = a;
      set(op.results[i], std::move(r));
    }
  }
  return Status::ok();
}

// Whether a scan along `a` can work in layout l as it is: along the axis, the thread's registers
// hold a contiguous run, lanes then warps continue it, and further registers repeat the whole
// pattern (the blocked layouts of loads along their contiguous dimension are such). Then the
// scan needs no conversion (which would re-load a block, or go through shared memory).
static bool scan_ready(const Layout& l, int a) {
  auto along = [&](const Basis& b) { return b[a] != 0; };
  auto pure = [&](const Basis& b) {
    for (size_t d = 0; d < b.size(); ++d)
      if (static_cast<int>(d) != a && b[d] != 0) return false;
    return true;
  };
  // The lanes along the axis: one run of consecutive lane bits from `lo` (a tile whose columns
  // take the low lane bits and whose rows the next ones, scanned down its rows, has lo > 0).
  size_t lo = 0, lb = 0, wb = 0;
  while (lo < l.lane.size() && !along(l.lane[lo])) ++lo;
  while (lo + lb < l.lane.size() && along(l.lane[lo + lb])) ++lb;
  while (wb < l.warp.size() && along(l.warp[wb])) ++wb;
  for (size_t i = lo + lb; i < l.lane.size(); ++i)
    if (along(l.lane[i])) return false;
  for (size_t i = wb; i < l.warp.size(); ++i)
    if (along(l.warp[i])) return false;
  const int64_t first_thread = lb ? l.lane[lo][a] : wb ? l.warp[0][a] : INT64_MAX;
  std::vector<Basis> seq, reps;
  for (const Basis& b : l.reg)
    if (along(b)) (b[a] < first_thread ? seq : reps).push_back(b);
  seq.insert(seq.end(), l.lane.begin() + static_cast<long>(lo), l.lane.begin() + static_cast<long>(lo + lb));
  seq.insert(seq.end(), l.warp.begin(), l.warp.begin() + static_cast<long>(wb));
  seq.insert(seq.end(), reps.begin(), reps.end());
  for (size_t j = 0; j < seq.size(); ++j)
    if (!pure(seq[j]) || seq[j][a] != int64_t(1) << j) return false;
  return int64_t(1) << seq.size() == l.shape[a];
}

// Inclusive scan along `a`, in the source's layout when scan_ready says it fits, else in the
// ordered one. Each repetition of the thread/lane/warp pattern along the axis (registers above
// the warps) is scanned like a block of its own: the thread's run in order, then lanes by
// shuffles, then warps through shared memory (every repetition's warp totals in one exchange);
// then each repetition takes the combination of the ones before it.
Status GpuLowering::lower_scan(OpId o) {
  const ir::OpData& op = f_->op(o);
  std::vector<ValueId> srcs = f_->variadic(o);
  const int a = static_cast<int>(f_->attr(o, "axis").i);
  const std::string kind = enum_name(*f_, o, "kind");
  const bool rev = f_->attr(o, "reverse").present() && f_->attr(o, "reverse").i;
  const Shape s = val(srcs[0]).shape;
  const Val& v0 = val(srcs[0]);
  Layout l = v0.kind == Val::Kind::Dist && scan_ready(v0.lay, a) ? v0.lay : ordered_layout(s, a, opt_.num_warps);
  std::vector<EType> ets;
  std::vector<std::vector<llvm::Value*>> in;
  for (ValueId v : srcs) {
    ets.push_back(val(v).et);
    in.push_back(regs_in(val(v), l));
  }
  const size_t nt = in.size();
  Status st;
  // combine(earlier, later) in the scan's direction.
  auto combine = [&](const Tuple& x, const Tuple& y) -> Tuple {
    return rev ? combine_pair(o, kind, ets[0], y, x, &st) : combine_pair(o, kind, ets[0], x, y, &st);
  };
  auto select = [&](llvm::Value* c, const Tuple& x, const Tuple& y) {
    Tuple r;
    for (size_t j = 0; j < nt; ++j) r.push_back(b_.CreateSelect(c, x[j], y[j]));
    return r;
  };
  // Lanes and warps along the axis: `lb` lane bits from bit `lo` (scan_ready: one run of them;
  // the ordered layout has lo = 0) and the low `wb` warp bits.
  int lo = 0, lb = 0, wb = 0;
  while (lo < static_cast<int>(l.lane.size()) && !l.lane[lo][a]) ++lo;
  if (lo == static_cast<int>(l.lane.size())) lo = 0;
  while (lo + lb < static_cast<int>(l.lane.size()) && l.lane[lo + lb][a]) ++lb;
  while (wb < static_cast<int>(l.warp.size()) && l.warp[wb][a]) ++wb;
  const int width = 1 << lb, nw = 1 << wb;
  // Register bits: along the axis below the lanes (the thread's run) or above the warps
  // (repetitions), and the others (rows, kept).
  std::vector<int> axis_bits, keep_bits, run_bits, rep_bits;
  split_bits(l.reg, a, &axis_bits, &keep_bits);
  const int64_t first_thread = lb ? l.lane[lo][a] : wb ? l.warp[0][a] : INT64_MAX;
  for (int i : axis_bits) (l.reg[i][a] < first_thread ? run_bits : rep_bits).push_back(i);
  const int64_t nrun = int64_t(1) << run_bits.size(), nrep = int64_t(1) << rep_bits.size();
  const int64_t nkeep = int64_t(1) << keep_bits.size();
  // Entry t * nrep + q: row t, repetition q (q counts along the axis; its position in the
  // scan's direction is rpos(q)).
  auto rpos = [&](int64_t q) { return rev ? nrep - 1 - q : q; };
  auto entry_base = [&](int64_t e) { return deposit(e / nrep, keep_bits) | deposit(e % nrep, rep_bits); };
  const int64_t ne = nkeep * nrep;
  std::vector<Tuple> out(l.nregs());
  std::vector<Tuple> totals(ne);
  for (int64_t e = 0; e < ne; ++e) {
    const int64_t base = entry_base(e);
    Tuple run;
    for (int64_t kk = 0; kk < nrun; ++kk) {
      int64_t k = rev ? nrun - 1 - kk : kk;
      int64_t r = base | deposit(k, run_bits);
      Tuple x;
      for (auto& v : in) x.push_back(v[r]);
      run = kk == 0 ? x : combine(run, x);
      out[r] = run;
    }
    totals[e] = run;
  }
  // The thread's position along the axis among the lanes: lane bits lo.. lo + lb - 1. With lo
  // = 0 the shuffles stay within segments of `width` lanes; otherwise they go across the whole
  // warp by multiples of 2^lo, and a lane takes a value only from a position before its own
  // (pos >= d), which has the same lane bits below lo and above the run.
  llvm::Value* pos = b_.CreateAnd(lo ? b_.CreateLShr(lane_, lo) : lane_, width - 1);
  if (rev) pos = b_.CreateSub(b_.getInt32(width - 1), pos);
  const int seg = lo ? 32 : width;
  std::vector<Tuple> excl(ne);
  llvm::Value* has_excl = b_.CreateICmpUGE(pos, b_.getInt32(1));
  for (int64_t e = 0; e < ne; ++e) {
    Tuple sc = totals[e];
    for (int d = 1; d < width; d *= 2) {
      Tuple y;
      for (llvm::Value* x : sc) y.push_back(rev ? shfl_down(x, d << lo, seg) : shfl_up(x, d << lo, seg));
      sc = select(b_.CreateICmpUGE(pos, b_.getInt32(d)), combine(y, sc), sc);
    }
    totals[e] = sc;  // inclusive over the lanes before and at this one
    Tuple ex;
    for (llvm::Value* x : sc)
      ex.push_back(width > 1 ? (rev ? shfl_down(x, 1 << lo, seg) : shfl_up(x, 1 << lo, seg)) : x);
    excl[e] = ex;
  }
  // A 1-D scan with a builtin kind also leaves the whole block's combination, which a reduce of
  // the same block with the same kind in the same region takes instead of reducing again (a
  // cumsum with a carry: the scan and the chunk's sum). Reductions combine in an unspecified
  // order (docs/ir.md), so the scan's order is one of them.
  const bool keep_grand = op.regions.empty() && nt == 1 && s.size() == 1 && nkeep == 1;
  const bool need_rep_totals = nrep > 1 || keep_grand;
  std::vector<Tuple> wpre(ne), rep_total(ne);
  llvm::Value* has_wpre = b_.getFalse();
  if (nw > 1) {
    llvm::Value* wpos = b_.CreateAnd(warp_, nw - 1);
    if (rev) wpos = b_.CreateSub(b_.getInt32(nw - 1), wpos);
    has_wpre = b_.CreateICmpUGE(wpos, b_.getInt32(1));
    const int64_t n = numel(s);
    std::vector<uint64_t> off(nt);
    uint64_t total = 0;
    for (size_t j = 0; j < nt; ++j) {
      off[j] = total;
      total += static_cast<uint64_t>(n * elem_bytes(ets[j]) + 15) / 16 * 16;
    }
    need_smem(total);
    // The slot of warp position w of entry e: the entry's row with axis coordinate q * nw + w
    // (below the axis extent: each repetition spans at least nw elements).
    auto slot = [&](int64_t e, llvm::Value* w, size_t j) {
      Coord c = coords(l, entry_base(e));
      c[a] = b_.CreateAdd(b_.getInt32(static_cast<uint32_t>((e % nrep) * nw)), w);
      return smem_ptr(b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(off[j])),
                                   b_.CreateMul(linear(c, s), b_.getInt32(elem_bytes(ets[j])))));
    };
    auto read = [&](int64_t e, int w) {
      Tuple x;
      for (size_t j = 0; j < nt; ++j)
        x.push_back(from_mem(b_.CreateAlignedLoad(mem_ty(ets[j]), slot(e, b_.getInt32(static_cast<uint32_t>(w)), j),
                                                  llvm::Align(elem_bytes(ets[j]))),
                             ets[j]));
      return x;
    };
    uint32_t rep_lanes = replicated_lane_mask(l), rep_warps = replicated_warp_mask(l);
    llvm::Value* writer = b_.CreateAnd(
        b_.CreateICmpEQ(pos, b_.getInt32(width - 1)),
        b_.CreateAnd(b_.CreateICmpEQ(b_.CreateAnd(lane_, rep_lanes), b_.getInt32(0)),
                     b_.CreateICmpEQ(b_.CreateAnd(warp_, rep_warps), b_.getInt32(0))));
    barrier();
    emit_if(writer, [&] {
      for (int64_t e = 0; e < ne; ++e)
        for (size_t j = 0; j < nt; ++j)
          b_.CreateAlignedStore(to_mem(totals[e][j], ets[j]), slot(e, wpos, j), llvm::Align(elem_bytes(ets[j])));
    });
    barrier();
    for (int64_t e = 0; e < ne; ++e) {
      Tuple acc;
      for (int w = 0; w + 1 < nw; ++w) {
        Tuple x = read(e, w);
        // Positions before this warp only: later ones are combined but not selected.
        Tuple withx = w == 0 ? x : combine(acc, x);
        acc = w == 0 ? x : select(b_.CreateICmpUGT(wpos, b_.getInt32(w)), withx, acc);
      }
      wpre[e] = acc;
      if (need_rep_totals) {
        Tuple t = read(e, 0);
        for (int w = 1; w < nw; ++w) t = combine(t, read(e, w));
        rep_total[e] = t;
      }
    }
    // With reverse, slots were written at reversed positions (wpos counts from the top).
  } else if (need_rep_totals) {
    // From the lane at the last position in this thread's group of `width` lanes (lane bits
    // lo.. lo + lb - 1 all set, or all clear in reverse).
    const uint32_t group = static_cast<uint32_t>(width - 1) << lo;
    llvm::Value* last = b_.CreateOr(b_.CreateAnd(lane_, b_.getInt32(~group)), b_.getInt32(rev ? 0u : group));
    for (int64_t e = 0; e < ne; ++e) {
      Tuple t;
      for (llvm::Value* x : totals[e]) t.push_back(width > 1 ? shfl_idx(x, last) : x);
      rep_total[e] = t;
    }
  }
  // Each repetition's carry: the combination of the repetitions before it, in scan order.
  std::vector<Tuple> carry(ne);
  for (int64_t t = 0; t < nkeep && need_rep_totals; ++t) {
    Tuple acc;
    for (int64_t p = 0; p < nrep; ++p) {
      const int64_t e = t * nrep + (rev ? nrep - 1 - p : p);
      carry[e] = acc;
      acc = p == 0 ? rep_total[e] : combine(acc, rep_total[e]);
    }
    if (keep_grand) scan_totals_[f_][srcs[0]] = ScanTotal{kind, op.parent, acc[0]};
  }
  for (int64_t e = 0; e < ne; ++e) {
    const int64_t base = entry_base(e);
    for (int64_t k = 0; k < nrun; ++k) {
      int64_t r = base | deposit(k, run_bits);
      Tuple v = out[r];
      if (width > 1) v = select(has_excl, combine(excl[e], v), v);
      if (nw > 1) v = select(has_wpre, combine(wpre[e], v), v);
      if (rpos(e % nrep) > 0) v = combine(carry[e], v);
      out[r] = v;
    }
  }
  TRI_RETURN_IF_ERROR(st);
  for (size_t i = 0; i < op.results.size(); ++i) {
    std::vector<llvm::Value*> regs;
    for (const Tuple& t : out) regs.push_back(t[i]);
    set(op.results[i], dist(ets[i], l, std::move(regs)));
  }
  return Status::ok();
}

void GpuLowering::note(OpId o, const std::string& what) {
  const Loc& loc = f_->op(o).loc;
  if (!notes_.empty()) notes_ += "; ";
  notes_ += "dot at " + (loc.known() ? std::to_string(loc.line) + ":" + std::to_string(loc.col) : std::string("?")) +
            " of @" + f_->name + " " + what;
}

Status GpuLowering::lower_dot(OpId o) {
  has_dot_ = true;
  MmaLayouts ml;
  std::string why;
  if (mma_layouts(*f_, o, &ml, &why)) {
    const std::string k = std::to_string(ml.kstep());
    note(o, ml.wgmma ? "on tensor cores (wgmma m64nNk" + k + ", " + std::to_string(ml.wgm) + "x" + std::to_string(ml.wgn) +
                           " warpgroups)"
                     : "on tensor cores (mma.sync m16n8k" + k + " from shared memory, " + std::to_string(ml.wm) + "x" +
                           std::to_string(ml.wn) + " warps)");
    return lower_dot_mma(o, ml);
  }
  RegMma rl;
  std::string why_regs;
  if (mma_reg_layouts(*f_, o, &rl, &why_regs)) {
    note(o, "on tensor cores (" + rl.ptx.substr(16, rl.ptx.find(".row") - 16) + " from registers, " +
                std::to_string(rl.wm) + "x" + std::to_string(rl.wn) + " warps)");
    return lower_dot_mma_regs(o, rl);
  }
  note(o, "on CUDA cores: " + why);
  const ir::OpData& op = f_->op(o);
  const Val& av = val(op.operands[0]);
  const Val& bv = val(op.operands[1]);
  const Val& cv = val(op.operands[2]);
  EType ec = etype(f_->type_of(op.results[0]));
  const Shape sa = av.shape, sb = bv.shape, sc = shape(f_->type_of(op.results[0]));
  const int rank = static_cast<int>(sc.size());
  const int64_t K = sa[rank - 1];
  const bool tf32 = enum_attr(*f_, o, "precision") == 1;
  const bool integer = ir::is_int(ec.s);
  llvm::Type* ct = integer ? b_.getInt32Ty() : b_.getFloatTy();
  auto conv = [&](llvm::Value* v, EType e) -> llvm::Value* {
    if (ir::is_int(e.s)) return b_.CreateSExtOrTrunc(v, ct);
    llvm::Value* x = em_.to_arith(v, e);
    if (tf32 && x->getType()->isFloatTy()) x = emit_round_tf32(b_, x);
    if (x->getType() != ct) x = b_.CreateFPTrunc(x, ct);
    return x;
  };
  // Stage both operands in shared memory, row-major, in the compute type.
  const uint64_t bytes_a = static_cast<uint64_t>(numel(sa)) * 4, bytes_b = static_cast<uint64_t>(numel(sb)) * 4;
  need_smem(bytes_a + bytes_b);
  barrier();
  for (int which = 0; which < 2; ++which) {
    const Val& x = which == 0 ? av : bv;
    Val d = as_dist(x);
    const uint64_t base = which == 0 ? 0 : bytes_a;
    const uint64_t dup = replicated_reg_mask(d.lay);
    emit_if(owner(d.lay), [&] {
      for (int64_t r = 0; r < d.lay.nregs(); ++r) {
        if (r & dup) continue;
        llvm::Value* off = b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(base)),
                                        b_.CreateMul(linear(coords(d.lay, r), d.lay.shape), b_.getInt32(4)));
        b_.CreateAlignedStore(conv(d.regs[r], d.et), smem_ptr(off), llvm::Align(4));
      }
    });
  }
  barrier();
  Layout l = cv.kind == Val::Kind::Dist ? cv.lay : default_layout(sc, ec);
  std::vector<llvm::Value*> init = regs_in(cv, l);
  std::vector<Coord> cs;
  for (int64_t r = 0; r < l.nregs(); ++r) cs.push_back(coords(l, r));
  // for k in [0, K): acc[r] = acc[r] + a[.., m, k] * b[.., k, n]
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c_, "dot.k", lf_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "dot.end", lf_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* k = b_.CreatePHI(b_.getInt32Ty(), 2);
  k->addIncoming(b_.getInt32(0), pre);
  std::vector<llvm::PHINode*> phis;
  std::vector<llvm::Value*> next;
  for (int64_t r = 0; r < l.nregs(); ++r) {
    llvm::PHINode* p = b_.CreatePHI(ct, 2);
    p->addIncoming(integer ? init[r] : em_.to_arith(init[r], ec), pre);
    phis.push_back(p);
  }
  for (int64_t r = 0; r < l.nregs(); ++r) {
    const Coord& c = cs[r];
    Coord ca(c.begin(), c.end() - 1), cb(c.begin(), c.end());
    ca.push_back(k);                 // (.., m, k)
    cb[rank - 2] = k;                // (.., k, n)
    llvm::Value* x = b_.CreateAlignedLoad(ct, smem_ptr(b_.CreateMul(linear(ca, sa), b_.getInt32(4))), llvm::Align(4));
    llvm::Value* y = b_.CreateAlignedLoad(
        ct, smem_ptr(b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(bytes_a)), b_.CreateMul(linear(cb, sb), b_.getInt32(4)))),
        llvm::Align(4));
    next.push_back(integer ? b_.CreateAdd(phis[r], b_.CreateMul(x, y)) : b_.CreateFAdd(phis[r], b_.CreateFMul(x, y)));
  }
  llvm::Value* k1 = b_.CreateAdd(k, b_.getInt32(1));
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  k->addIncoming(k1, latch);
  for (int64_t r = 0; r < l.nregs(); ++r) phis[r]->addIncoming(next[r], latch);
  b_.CreateCondBr(b_.CreateICmpSLT(k1, b_.getInt32(static_cast<uint32_t>(K))), loop, done);
  b_.SetInsertPoint(done);
  std::vector<llvm::Value*> out;
  for (int64_t r = 0; r < l.nregs(); ++r) out.push_back(integer ? next[r] : em_.from_arith(next[r], ec));
  set(op.results[0], dist(ec, l, std::move(out)));
  return Status::ok();
}

}  // namespace tri::codegen::nvptx::detail
