// Axis info: what the GPU backend may assume about the lanes of integer and pointer blocks when
// it picks the vector width of loads and stores (Triton's AxisInfo, written for Tri's IR). A wrong
// fact here becomes a misaligned vector access on the GPU, so every rule below is sound first and
// precise second; the soundness test (tests/passes/test_axis_info.cpp) checks each claimed fact
// against the lanes the reference interpreter computes.
//
// Definitions. A value of shape (n_0, ..., n_{r-1}) has per-dimension facts; a scalar is treated
// as shape (1). Along dimension d, the lanes of each fiber (all indices fixed but the d-th) are
// cut into *aligned runs* of length L: positions [jL, (j+1)L). Every fact below is a power of two
// no larger than n_d (divisibility excepted), so runs tile the fiber exactly.
//  - contiguity[d] = c: within each aligned run of c lanes, each lane is the previous one plus 1
//    (integers: modulo 2^width; pointers: plus one element of the pointee, in bytes its size).
//  - divisibility[d] = D: the first lane of each aligned run of contiguity[d] lanes is divisible by
//    D (pointers: the address in bytes). For integers "divisible" reads the bit pattern: the low
//    min(log2 D, width) bits are zero, so sext/zext/trunc keep it. When contiguity[d] is 1 this is
//    a fact about every lane. Capped at kMaxDivisibility (a constant 0 gets the cap).
//  - constancy[d] = k: within each aligned run of k lanes, all lanes are equal.
//  - constant: every lane equals this integer (sign-extended from the width; i1 is 0 or 1).
//  - nonneg: every lane, read as signed, is >= 0 (lets sdiv/srem/ashr use the unsigned rules).
// Whenever a rule lowers contiguity from c to c' < c, it lowers divisibility to min(D, c') (the
// new run starts are the old ones plus multiples of c'), unless an every-lane fact says more.
//
// Seeds. Kernel pointer parameters: divisibility = Param::align (its largest power-of-two
// divisor; 1 when none is said: no natural alignment is assumed). Integer parameters:
// Param::divisible likewise. Device-function parameters: conservative (1, 1, 1); their bodies are
// analysed once, for any caller. program_id / num_programs: divisibility 1, nonneg (grids stay
// below 2^31). const: divisibility = largest power of two dividing the value, constancy = the
// whole block. arange[start, end]: contiguity = end - start, divisibility = that of start.
//
// Rules, per dimension (l, r the operands; "lane div" = the best every-lane divisibility):
//  - splat / broadcast: constancy = n_d along the dimensions made by them; expand_dims inserts a
//    (1, lane div, 1) dimension; permute permutes the vectors; split drops the last dimension;
//    join and cat join both operands (join below); a reshape that only inserts or drops
//    dimensions of size 1 maps the facts of the others; any other reshape is conservative (lane
//    div only).
//  - add: contiguity from one side where the other is constant on those runs
//    (max(min(c_l, k_r), min(k_l, c_r))); sub: min(c_l, k_r) only; divisibility = min of both
//    sides' at the result's runs; constancy = min(k_l, k_r).
//  - mul: by the constant 1 keeps the other side; otherwise contiguity 1, divisibility = product
//    of the lane divs, constancy = min. neg / abs: lane div, constancy kept.
//  - udiv / urem by a constant q (and sdiv / srem when q > 0): with
//    g = min(c_l, D_l, largest power of two dividing q), the quotient is constant on runs of g and
//    the remainder is contiguous on runs of g with divisibility min(D_l at g, pow2(q)). urem /
//    srem by a value n that is the same in every lane, with divisibility 2^p: the remainder is
//    contiguous on runs of min(c_l, D_l, 2^p) (Triton's `offs % N`), nonneg.
//  - shl by a constant s: lane div * 2^s. lshr / ashr by s (floor division by 2^s): constant on
//    runs of min(c_l, D_l, 2^s), divisibility D_l / 2^s. and with 2^p - 1 is urem by 2^p; and
//    with any constant M is constant on runs of min(c_l, D_l, pow2(M)); and keeps the larger lane
//    div of its operands, or / xor / min / max the smaller.
//  - cmp (integers): constancy = min(k_l, k_r), raised to g = min(c_v, D_v, k_b, B) when one side
//    v is contiguous and the other b is constant on those runs, where for v < b and v >= b
//    (slt ult sge uge, operands swapped as needed) B is b's lane div, and for v <= b and v > b B is
//    the divisibility of b + 1 (known only when b is a known constant). eq / ne: min only.
//  - select: on runs where the condition is constant, the join of both sides.
//  - addptr: contiguity = max(min(c_p, k_o), min(k_p, c_o)); divisibility = min(D_p,
//    D_o * element bytes) at the result's runs; constancy = min. The one assumption of the
//    analysis (Triton makes it too): an offset run does not wrap around the range of the offset's
//    integer type (an index past 2^31 elements in i32). Even when a program breaks it, a vector
//    access of v lanes with v <= divisibility / element bytes stays correct: its first offset is a
//    multiple of v, so its v offsets cannot wrap.
//  - casts: trunc keeps everything; zext / sext keep divisibility and constancy and keep
//    contiguity only on runs of min(c, D) (those cannot cross the wrap-around point); bitcast,
//    ptrtoint and inttoptr keep contiguity only when the element step stays the same.
//  - other pure elementwise ops (floats, fcmp, umulhi, ...): constancy = min of the operands'.
//  - load, atomics, reduce, scan, dot, call results, inline_asm: conservative.
//  - for / while: loop-carried values iterate to a fixpoint from the inits (join = min
//    contiguity, min divisibility at the joined runs, min constancy); the induction variable of a
//    for gets the divisibility min(D_lo, D_step); a for's results are the join of its inits and
//    yielded values (not of its block arguments, which assume facts may have raised); after 64
//    rounds without settling, the carried values become conservative. if results: the join of
//    both branches.
// The second assumption (Triton's analysis makes it too: its rules for divsi and remsi ignore
// signs): the dividend of sdiv and srem is not negative, so they follow udiv and urem. Index
// arithmetic is where these facts matter, and there a negative dividend means a negative index
// (Triton's tutorial `(pid_n * BN + arange) % N`, whose pid_n comes out of signed divisions
// whose sign no local rule can prove). Where a program breaks it, its vector accesses read the
// lanes that Triton's own code reads for the same kernel. The soundness test checks every fact
// except those that depend on a signed division whose dividend was negative in the run.
// Hints. multiple_of[values] raises divisibility along d to pow2(values[d]) where the run starts
// are positions the hint speaks of (contiguity a multiple of values[d], the whole dimension, or
// constant runs that are); max_contiguous[values] raises contiguity to values[d] (pow2, or the
// dimension when larger), and a multiple_of right under it is re-applied at the new runs.
// assume, handled patterns (with `and` of conditions split): `x % q == 0` / `x urem q == 0` /
// `x & (2^p - 1) == 0` with a constant q (either side of eq; scalar, splat or block constant 0)
// raise every lane of x to pow2(q); `x >= c` (c >= 0) / `x > c` (c >= -1), signed, in either
// operand order, make x nonneg. A fact applies only when the assume is in the same region as x's
// definition (so it ran whenever x was computed). Other assumes are ignored.
// Not handled (conservative): pointer comparisons' constancy beyond min, ranges, sdiv of values
// of unknown sign, anything about float values but constancy.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "ir/ir.h"

namespace tri::passes {

constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

// Per-dimension facts about the lanes of a value (see the top of this file). For a scalar (or a
// pointer scalar), vectors of size 1.
struct AxisInfo {
  std::vector<int64_t> contiguity;
  std::vector<int64_t> divisibility;
  std::vector<int64_t> constancy;
  std::optional<int64_t> constant;
  bool nonneg = false;

  int rank() const { return static_cast<int>(contiguity.size()); }
  // (1, 1, 1) along each of `rank` dimensions.
  static AxisInfo conservative(int rank);
  // The largest divisibility known to hold for every lane (1 when none is).
  int64_t lane_divisibility() const;
  bool operator==(const AxisInfo& o) const {
    return contiguity == o.contiguity && divisibility == o.divisibility && constancy == o.constancy &&
           constant == o.constant && nonneg == o.nonneg;
  }
  bool operator!=(const AxisInfo& o) const { return !(*this == o); }
};

class AxisInfoAnalysis {
 public:
  // Analyses kernel `f` of module `m` (verified and specialized: every shape concrete), every
  // region in it and every device function it calls. Never fails.
  AxisInfoAnalysis(const ir::Module& m, const ir::Function& f);
  // Facts about value `v` of the kernel.
  const AxisInfo& get(ir::ValueId v) const;
  // Facts about value `v` of the kernel or of a device function it calls (conservative (1, 1, 1)
  // for a function that was not analysed).
  const AxisInfo& get(const ir::Function& g, ir::ValueId v) const;

 private:
  const ir::Function* kernel_;
  std::map<const ir::Function*, std::vector<AxisInfo>> infos_;
  AxisInfo unknown_ = AxisInfo::conservative(1);
};

}  // namespace tri::passes
