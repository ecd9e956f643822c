// Distributed layouts: which thread of a program holds which elements of a block, in which of
// its registers.
//
// A program runs as 32 * num_warps threads. A block value of shape S (every dimension a power of
// two) is spread over them: thread (lane, warp) holds registers 0..nregs()-1, and register r
// holds the element at coordinate
//
//     coord(r, lane, warp) = XOR over the set bits i of r of reg[i]
//                          ^ XOR over the set bits i of lane of lane[i]
//                          ^ XOR over the set bits i of warp of warp[i]
//
// Each basis (reg[i], lane[i], warp[i]) is a coordinate vector with at most one nonzero entry,
// a power of two, and no two nonzero bases share a bit, so XOR is also the sum. A zero basis
// means replication: the threads (or registers) that differ in that bit hold the same element.
// This is the subset of Triton's linear layouts that its blocked and slice layouts occupy, and
// it keeps every question the lowering asks a question about bits, answered at compile time:
//  - elementwise ops need nothing (operands share a layout);
//  - reduce along an axis combines registers, then lanes (shuffles), then warps (shared memory)
//    whose bases point into that axis, and the result is the slice layout: those bases dropped
//    or zeroed (so the result is replicated over the threads that took part);
//  - expand_dims, permute and reshape relabel coordinate bits: no data moves;
//  - a conversion (broadcast of a slice back to a full shape, a different vector width) stays in
//    registers when the lane and warp bases agree, and goes through shared memory otherwise.
// Tensor-core layouts (mma accumulators and operands: fixed lane patterns, several registers
// per thread in a fixed order) are bases of this same form, so they join as more constructors,
// not as a new representation; swizzled shared memory is a separate map (docs/codegen.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tri::codegen::nvptx {

using Shape = std::vector<int64_t>;
using Basis = std::vector<int64_t>;  // one coordinate per dimension

struct Layout {
  Shape shape;
  std::vector<Basis> reg, lane, warp;

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t nregs() const { return int64_t(1) << reg.size(); }
  // The coordinate contributed by the register index alone.
  Basis reg_coord(int64_t r) const;
  // The coordinate contributed by the thread (lane and warp indices) alone.
  Basis thread_coord(int64_t lane, int64_t warp) const;
  bool operator==(const Layout& o) const {
    return shape == o.shape && reg == o.reg && lane == o.lane && warp == o.warp;
  }
  bool operator!=(const Layout& o) const { return !(*this == o); }
  std::string str() const;
};

// The blocked layout of `shape` over `num_warps` warps: each thread holds `vec` consecutive
// elements along dimension order[0] (the fastest), lanes then warps tile the dimensions in
// `order`, and what remains of the shape repeats in registers. Dimensions smaller than the
// threads that tile them are replicated. vec is capped at the fastest dimension's size.
Layout blocked(const Shape& shape, const std::vector<int>& order, int vec, int num_warps);
// The row-major order (last dimension fastest) of a rank.
std::vector<int> row_major(int rank);

// The layout of reduce's result along `axis`: registers along the axis dropped, lanes and warps
// along it replicated, the axis removed.
Layout slice(const Layout& l, int axis);
// The layout a broadcast's source (size 1 along the dimensions where proj[d]) would need for a
// broadcast into l to take its registers as they are: l's bases with those dimensions zeroed,
// the registers that then hold nothing new dropped.
Layout unbroadcast(const Layout& l, const std::vector<bool>& proj);
// expand_dims: a dimension of size 1 inserted at `axis`.
Layout expand(const Layout& l, int axis);
// permute: result dimension i is source dimension order[i].
Layout permute(const Layout& l, const std::vector<int64_t>& order);
// reshape to `shape` (same element count, row-major order kept).
Layout reshape(const Layout& l, const Shape& shape);
// A new top register bit whose basis is `b` (join, cat): registers [0, n) keep their elements,
// registers [n, 2n) hold the elements at coordinate + b. `shape` is the result's shape.
Layout add_reg_bit(const Layout& l, const Shape& shape, const Basis& b);

// Whether `dst` can be filled from `src` without moving data between threads, reading source
// register map[r] for destination register r. `proj` is applied to destination coordinates
// first: dimensions where proj[d] is true read source coordinate 0 (broadcast from size 1).
bool register_map(const Layout& src, const Layout& dst, const std::vector<bool>& proj, std::vector<int64_t>* map);

// Lane (and warp) bits whose basis is zero: threads differing only there hold the same elements,
// so only the one with those bits clear writes memory. Returned as masks.
uint32_t replicated_lane_mask(const Layout& l);
uint32_t replicated_warp_mask(const Layout& l);
// Registers that duplicate another (a zero register basis): mask of such register bits.
uint64_t replicated_reg_mask(const Layout& l);

}  // namespace tri::codegen::nvptx
