// Axis info: per dimension, what is known about the lanes of each integer and pointer value of a
// kernel, so the GPU backend can move runs of consecutive elements with one wide (up to 16-byte)
// instruction. It is Triton's AxisInfo analysis, with its definitions written down:
//
//   contiguity[d] = c   along d the lanes come in runs of c (starting at indices that are
//                       multiples of c) whose values increase by exactly 1 from one lane to the
//                       next (pointers: by one element of the pointee);
//   divisibility[d] = D the value (pointers: the address in bytes) of every lane that starts such
//                       a run along d is a multiple of D; with contiguity 1 that is every lane;
//   constancy[d] = k    along d the lanes come in runs of k equal values (aligned as above).
//
// All three are powers of two; a scalar has one entry of each. Facts come from the kernel's
// parameters (`align`, `divisible` and the specialization's argument facts), constants,
// `arange`, `program_id`, the hint ops `multiple_of` and `max_contiguous`, and flow through
// splat, broadcast, expand_dims, permute, add, sub, mul, comparisons, and/or, select, casts,
// addptr and structured control flow (loop-carried values iterate to a fixed point). Everything
// else (loads, reductions, calls, ...) is unknown: contiguity 1, divisibility 1, constancy 1.
// The analysis must never claim more than is true: a wrong fact becomes a misaligned vector
// access on the GPU. tests/passes/test_axis_info.cpp checks every claim against the lanes the
// interpreter computes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "ir/ir.h"

namespace tri::passes {

constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

struct AxisInfo {
  std::vector<int64_t> contiguity;
  std::vector<int64_t> divisibility;
  std::vector<int64_t> constancy;
  std::optional<int64_t> value;  // every lane holds this integer (constants, splats of them)
};

class AxisInfoAnalysis {
 public:
  // Analyses kernel `f` of `m` (verified and specialized: every shape concrete) and the regions
  // in it. Values of device functions it calls are not analysed (call results are unknown).
  AxisInfoAnalysis(const ir::Module& m, const ir::Function& f);
  const AxisInfo& get(ir::ValueId v) const { return info_[v]; }

 private:
  void block(ir::BlockId b);
  void op(ir::OpId o);
  AxisInfo unknown(ir::ValueId v) const;
  AxisInfo join(const AxisInfo& a, const AxisInfo& b) const;
  bool set(ir::ValueId v, AxisInfo i);
  std::vector<int64_t> shape(ir::ValueId v) const;

  const ir::Module& m_;
  const ir::Function& f_;
  std::vector<AxisInfo> info_;
};

}  // namespace tri::passes
