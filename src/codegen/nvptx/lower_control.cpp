// Control flow, calls and the debugging ops on the GPU. Structured control flow maps to LLVM
// blocks with one phi per register of each loop-carried value; IR scalars are uniform across a
// program's threads, so every branch is uniform and barriers inside loops are safe. Device
// functions are inlined at their call sites (the IR forbids recursion), which lets their blocks
// keep the caller's layouts.
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Support/Error.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "codegen/nvptx/lower_impl.h"
#include "codegen/scalar_ops.h"
#include "ir/op_info.h"

namespace tri::codegen::nvptx::detail {
namespace {

// How a loop-carried value or an if result is held: a scalar, or registers in a layout.
struct Slot {
  bool is_scalar = true;
  EType et;
  Layout lay;
  std::vector<llvm::PHINode*> phis;
  // A loop-carried tensor-core operand kept in shared memory (GpuLowering::smem_carried): the
  // phi holds the byte offset of the buffer the iteration reads. Buffers rotate: a tile passed
  // on by the yield keeps its buffer, and new data is written into a buffer whose tile this
  // iteration consumed (lower_for).
  bool smem = false;
  bool col_major = false;  // the tile's storage (SmemTile), from the init's layout
  Shape shape;
};

constexpr int kMaxInlineDepth = 256;

}  // namespace

// `load_bytes`: for a loop-carried value whose initial value has no layout of its own (a
// constant), the element size of the narrowest load of the same shape in the loop, so that an
// f32 accumulator fed by f16 loads holds 8 elements per thread and the loads stay 16 bytes wide
// (with the accumulator's default 4 they would be re-issued 8 bytes wide in its layout).
// `carried`: the region argument that holds the value inside the loop. A carried pointer tile
// whose init has no layout of its own takes the dimension order its loads would take: axis info
// of the argument (the fixpoint over iterations) names the dimension whose addresses run
// contiguously, and the tile's registers run along it. A K tile read transposed
// (`offs_k[:, None] * stride_d + offs_n[None, :] * stride_tok` with unit stride_d) runs down its
// columns; in the default row-major order every load through it moves one element.
static Slot slot_for(GpuLowering& g, const Val& init, int load_bytes = 0, ValueId carried = ir::kNoValue) {
  Slot s;
  s.et = init.et;
  s.is_scalar = init.kind == Val::Kind::Scalar;
  if (s.is_scalar) return s;
  if (init.kind == Val::Kind::Dist) {
    s.lay = init.lay;
  } else {
    EType e = init.et;
    if (load_bytes && load_bytes < elem_bytes(e)) e = EType{false, load_bytes == 1 ? Scalar::I8 : load_bytes == 2 ? Scalar::F16 : Scalar::F32};
    s.lay = g.default_layout(init.shape, e);
    if (init.et.ptr && carried != ir::kNoValue && init.shape.size() >= 2) {
      std::vector<int> order;
      g.natural_load_vec(carried, init.shape, elem_bytes(e), &order);
      if (order != row_major(static_cast<int>(init.shape.size()))) s.lay = g.default_layout(init.shape, e, order);
    }
  }
  return s;
}

int GpuLowering::narrowest_load_bytes(const std::vector<BlockId>& regions, const Shape& s) const {
  int best = 0;
  for (BlockId region : regions)
    for (OpId o : f_->block(region).ops) {
      const ir::OpData& op = f_->op(o);
      int b = op.code == Opcode::Load && !op.results.empty() && shape(f_->type_of(op.results[0])) == s
                  ? elem_bytes(etype(f_->type_of(op.results[0])))
                  : narrowest_load_bytes(op.regions, s);
      if (b) best = best ? std::min(best, b) : b;
    }
  return best;
}

static std::vector<llvm::Value*> slot_regs(GpuLowering& g, const Slot& s, const Val& v) {
  if (s.is_scalar) return {v.s};
  return g.regs_in(v, s.lay);
}

static Val slot_val(GpuLowering& g, llvm::IRBuilder<>& b, const Slot& s, std::vector<llvm::Value*> regs) {
  if (s.smem) {
    Val v;
    v.kind = Val::Kind::Smem;
    v.et = s.et;
    v.shape = s.shape;
    v.smem_base = regs[0];
    v.smem_col_major = s.col_major;
    if (s.lay.rank() == 2) v.smem_read = std::make_shared<const Layout>(s.lay);
    return v;
  }
  if (s.is_scalar) return g.scalar(regs[0], s.et);
  return g.dist(s.et, s.lay, std::move(regs));
}

namespace {

// Which carried values of a `for` live in shared memory, and where new tiles go.
struct SmemRing {
  std::vector<bool> slot;           // per carried value
  std::vector<int> col_major;       // per ring slot: the storage its dots require, or -1
  std::map<size_t, size_t> dest;    // yield position bringing new data -> consumed slot
  int async_depth = 0;              // iterations between a tile's load and its use
  bool any() const { return std::find(slot.begin(), slot.end(), true) != slot.end(); }
};

SmemRing smem_plan(GpuLowering& g, const ir::Function& f, OpId o, const std::vector<Slot>& slots) {
  const ir::OpData& op = f.op(o);
  const ir::BlockData& body = f.block(op.regions[0]);
  const ir::OpData& yield = f.op(body.ops.back());
  SmemRing ring;
  ring.slot.assign(slots.size(), false);
  ring.col_major.assign(slots.size(), -1);
  std::vector<Shape> shapes(slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    ring.slot[i] = !slots[i].is_scalar && g.smem_carried(op.regions[0], body.args[i + 1], &shapes[i], &ring.col_major[i]);
  // Shared memory for the tiles, within what the architecture gives a block (227 KB on sm_90,
  // 163 KB on sm_80, 99 KB on sm_86/89; 32 KB of that left for scratch): past it the tiles stay
  // in registers.
  // A tile only passed on (the next stage's) is stored as the slot it goes to must be; other
  // sizes than 16 bits are K-major wgmma operands only.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t p = 0; p < slots.size(); ++p)
      for (size_t i = 0; i < slots.size(); ++i)
        if (ring.slot[i] && ring.slot[p] && ring.col_major[i] < 0 && ring.col_major[p] >= 0 &&
            yield.operands[p] == body.args[i + 1]) {
          ring.col_major[i] = ring.col_major[p];
          changed = true;
        }
  }
  for (size_t i = 0; i < slots.size(); ++i)
    if (ring.slot[i] && elem_bytes(slots[i].et) != 2 && ring.col_major[i] < 0) ring.slot[i] = false;
  uint64_t ring_bytes = 0;
  for (size_t i = 0; i < slots.size(); ++i)
    if (ring.slot[i]) ring_bytes += static_cast<uint64_t>(shapes[i][0] * shapes[i][1] * elem_bytes(slots[i].et));
  if (g.persist_bytes_ + ring_bytes + 32768 > g.smem_limit()) ring.slot.assign(slots.size(), false);
  // A tile passed on by the yield stays in shared memory only if where it goes does.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t p = 0; p < slots.size(); ++p)
      for (size_t i = 0; i < slots.size(); ++i)
        if (ring.slot[i] && !ring.slot[p] && yield.operands[p] == body.args[i + 1]) {
          ring.slot[i] = false;
          changed = true;
        }
  }
  // A slot's yield either passes on another slot's tile (its argument) or brings new data; the
  // slots whose tiles nobody passes on are consumed, and their buffers take the new data.
  auto slot_of_arg = [&](ValueId v) -> int {
    for (size_t j = 0; j < slots.size(); ++j)
      if (ring.slot[j] && body.args[j + 1] == v) return static_cast<int>(j);
    return -1;
  };
  std::vector<bool> passed(slots.size(), false);
  for (size_t i = 0; i < slots.size(); ++i)
    if (ring.slot[i]) {
      const int j = slot_of_arg(yield.operands[i]);
      if (j >= 0) passed[j] = true;
    }
  std::vector<size_t> free_slots;
  for (size_t j = 0; j < slots.size(); ++j)
    if (ring.slot[j] && !passed[j]) free_slots.push_back(j);
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!ring.slot[i] || slot_of_arg(yield.operands[i]) >= 0) continue;
    auto col_major = [&](size_t j) { return ring.col_major[j] >= 0 ? ring.col_major[j] == 1 : slots[j].col_major; };
    auto it = std::find_if(free_slots.begin(), free_slots.end(), [&](size_t j) {
      return shapes[j] == shapes[i] && col_major(j) == col_major(i) && elem_bytes(slots[j].et) == elem_bytes(slots[i].et);
    });
    if (it == free_slots.end()) return SmemRing{std::vector<bool>(slots.size(), false), {}, {}, 0};
    ring.dest[i] = *it;
    free_slots.erase(it);
  }
  // cp.async depth: the shortest chain of slots from a consumed tile to the one new data enters
  // (a tile is loaded that many iterations before it is read).
  int depth = 0;
  for (const auto& dest : ring.dest) {
    int len = 1;
    for (size_t at = dest.second; slot_of_arg(yield.operands[at]) >= 0 && len <= static_cast<int>(slots.size());) {
      at = static_cast<size_t>(slot_of_arg(yield.operands[at]));
      ++len;
    }
    depth = depth ? std::min(depth, len) : len;
  }
  ring.async_depth = depth;
  return ring;
}

}  // namespace

void GpuLowering::smem_war_barrier() {
  if (smem_war_done_) return;
  if (wgmma_prev_in_flight_) {  // a write before this iteration's dot: its group must be done first
    wgmma_wait(0, {});
    wgmma_prev_in_flight_ = false;
  }
  barrier();
  smem_war_done_ = true;
}

// Whether ops of these regions may write global memory (or see it written by other ranks): a
// value loaded before a loop that contains one cannot be loaded again inside it (a load's
// `remat`), since an earlier iteration's write may come after the use in program order. Every
// op with effects counts, except loads and the ops that hold regions (their regions are looked
// into) or end them.
static bool writes_memory(const ir::Function& f, const std::vector<BlockId>& regions) {
  for (BlockId r : regions)
    for (OpId x : f.block(r).ops) {
      const ir::OpData& xo = f.op(x);
      if (!xo.regions.empty()) {
        if (writes_memory(f, xo.regions)) return true;
        continue;
      }
      const ir::OpInfo& info = ir::op_info(xo.code);
      if (info.is_pure() || info.is_terminator() || xo.code == Opcode::Load) continue;
      if (xo.code == Opcode::InlineAsm && (!f.attr(x, "pure").present() || f.attr(x, "pure").i)) continue;
      return true;
    }
  return false;
}

Status GpuLowering::lower_for(OpId o) {
  const uint64_t persist_mark = persist_bytes_;
  const ir::OpData& op = f_->op(o);
  if (writes_memory(*f_, op.regions)) ++mem_epoch_;
  llvm::Value* lo = val(op.operands[0]).s;
  llvm::Value* hi = val(op.operands[1]).s;
  llvm::Value* step = val(op.operands[2]).s;
  std::vector<ValueId> inits(op.operands.begin() + 3, op.operands.end());
  // Initial values from loads left to this loop (deferred_loads_): the layout each would take
  // stands in for them until the ring is planned, then they are lowered, in their order.
  std::vector<std::pair<OpId, size_t>> deferred;  // (load, init position)
  for (size_t i = 0; i < inits.size(); ++i) {
    auto it = deferred_loads_.find(inits[i]);
    if (it == deferred_loads_.end()) continue;
    deferred.push_back({it->second, i});
    deferred_loads_.erase(it);
    const ValueId pv = f_->operand(deferred.back().first, "ptr"), mv = f_->operand(deferred.back().first, "mask");
    const EType e = etype(f_->type_of(inits[i]));
    int vec = 1;
    set(inits[i], dist(e, load_layout(pv, mv, val(pv), elem_bytes(e), &vec, inits[i]), {}));
  }
  // In pipeline order: each stage's tiles (a carried tile that another passes on next iteration
  // is one stage later than that one) before the next stage's, then program order. The loop's
  // wait counts commit groups by whole iterations, so the prologue must commit stage by stage
  // (attention's prologue loads K for two stages, then V for two).
  if (!deferred.empty()) {
    const ir::OpData& yop = f_->op(f_->block(op.regions[0]).ops.back());
    const ir::BlockData& bb = f_->block(op.regions[0]);
    std::vector<int> stage(inits.size(), 0);
    for (size_t round = 0; round < inits.size(); ++round)
      for (size_t p = 0; p < inits.size(); ++p)
        for (size_t q = 0; q < inits.size(); ++q)
          if (yop.operands[p] == bb.args[q + 1]) stage[q] = std::max(stage[q], stage[p] + 1);
    std::sort(deferred.begin(), deferred.end(), [&](const std::pair<OpId, size_t>& a, const std::pair<OpId, size_t>& b) {
      return std::make_pair(stage[a.second], a.first) < std::make_pair(stage[b.second], b.first);
    });
  }
  std::vector<Slot> slots;
  std::vector<std::vector<llvm::Value*>> init_regs;
  const ir::BlockData& body_block = f_->block(op.regions[0]);
  const OpId yield = body_block.ops.empty() ? ir::kNoOp : body_block.ops.back();
  for (size_t i = 0; i < inits.size(); ++i) {
    const Val& init = val(inits[i]);
    slots.push_back(slot_for(*this, init, init.kind == Val::Kind::Scalar ? 0 : narrowest_load_bytes(op.regions, init.shape),
                             body_block.args[i + 1]));
    // Per-row values carried next to tensor-core dots of as many rows (attention's running max
    // and sum) are held the way the dots' accumulators hold their rows, so combining them with
    // the dots' results moves no data.
    if (yield != ir::kNoOp && !slots.back().is_scalar && slots.back().lay.rank() == 1) {
      for (OpId x : body_block.ops) {
        MmaLayouts ml;
        if (f_->op(x).code == Opcode::Dot && mma_layouts(*f_, x, &ml) && ml.c.shape[0] == slots.back().lay.shape[0]) {
          slots.back().lay = slice(ml.c, 1);
          break;
        }
      }
    }
    // A value whose next value a dot on tensor cores makes (an accumulator, updated directly
    // or rescaled first, as attention does) is held in the dot's layout.
    if (yield != ir::kNoOp && !slots.back().is_scalar) {
      const OpId def = f_->value(f_->op(yield).operands[i]).def_op;
      MmaLayouts ml;
      RegMma rl;
      if (def != ir::kNoOp && f_->op(def).code == Opcode::Dot && mma_layouts(*f_, def, &ml)) slots.back().lay = ml.c;
      else if (def != ir::kNoOp && f_->op(def).code == Opcode::Dot && mma_reg_layouts(*f_, def, &rl)) slots.back().lay = rl.c;
    }
    init_regs.push_back({});
  }
  // Operand tiles of such dots (pipeline_loads carries the next iterations' loads) live in shared
  // memory, one buffer each (smem_plan).
  SmemRing ring;
  // A tile is stored the way its init's threads hold it (column-major for runs down the rows);
  // a chain of tiles from one load shares it.
  for (size_t i = 0; i < inits.size(); ++i) slots[i].col_major = prefers_col_major(val(inits[i]));
  if (yield != ir::kNoOp) ring = smem_plan(*this, *f_, o, slots);
  else ring.slot.assign(slots.size(), false);
  // A K-major operand's tile is stored that way whatever its threads hold (cp.async then copies
  // it only if its runs go along the stored rows; lower_load_async).
  for (size_t i = 0; i < slots.size(); ++i)
    if (ring.slot[i] && ring.col_major[i] >= 0) slots[i].col_major = ring.col_major[i] == 1;
  // A ring slot's buffer, made when its first tile is written.
  std::map<size_t, llvm::Value*> bufs;
  auto ring_buffer = [&](size_t i) {
    const Shape sh = this->shape(f_->type_of(body_block.args[i + 1]));
    const uint64_t bytes = static_cast<uint64_t>(sh[0] * sh[1] * elem_bytes(slots[i].et));
    return b_.CreateAdd(persistent_base(), b_.getInt32(static_cast<uint32_t>(alloc_persistent(bytes))));
  };
  // The deferred loads, in the order above: ring tiles by cp.async into their buffers (one commit
  // group each; fresh buffers need no barrier before), the others as usual.
  std::set<size_t> by_copy;  // init positions whose tile cp.async wrote
  for (const auto& [load, i] : deferred) {
    if (!ring.slot[i]) {
      TRI_RETURN_IF_ERROR(lower_load(load));
      continue;
    }
    bufs[i] = ring_buffer(i);
    const Shape sh = this->shape(f_->type_of(body_block.args[i + 1]));
    const bool saved_war = smem_war_done_;
    const int saved_commits = async_commits_;
    smem_war_done_ = true;
    async_dest_[load] = SmemTile{bufs[i], sh[0], sh[1], slots[i].col_major, elem_bytes(slots[i].et)};
    TRI_RETURN_IF_ERROR(lower_load(load));
    async_dest_.erase(load);
    smem_war_done_ = saved_war;
    async_commits_ = saved_commits;
    if (val(inits[i]).kind == Val::Kind::Smem) by_copy.insert(i);
  }
  for (size_t i = 0; i < inits.size(); ++i) {
    Slot& s = slots[i];
    const Val& init = val(inits[i]);
    if (ring.slot[i]) {
      s.smem = true;
      this->shape(f_->type_of(body_block.args[i + 1])).swap(s.shape);
      if (!bufs.count(i)) bufs[i] = ring_buffer(i);
      // Stored tiles are read after the first barrier.
      if (!by_copy.count(i)) mma_store_operand(init, SmemTile{bufs[i], s.shape[0], s.shape[1], s.col_major, elem_bytes(s.et)});
      init_regs[i] = {bufs[i]};
    } else {
      init_regs[i] = slot_regs(*this, s, init);
    }
  }
  // A wgmma dot whose accumulator only feeds the next iteration's dot, with both operand tiles
  // in the ring, leaves its group in flight into the next iteration, which issues its own group
  // before waiting for it (wgmma.wait_group 1, lower_dot_wgmma): the tensor cores always have a
  // group queued, as in Triton's pipeline. The tile a group in flight reads must not be
  // overwritten: new tiles go to a spare buffer, the one the previous iteration consumed, after
  // a barrier that follows the wait (smem_war_barrier); the buffer consumed now is the next spare.
  const std::set<OpId> saved_async = async_wgmma_;
  const std::set<ValueId> saved_pending = wgmma_pending_;
  std::vector<size_t> async_pos;  // carried positions of their accumulators
  std::set<size_t> async_read;    // ring slots their groups read
  std::vector<ValueId> pending;   // carried accumulators read before their dot
  if (ring.any() && !ring.dest.empty()) {
    // The ring slot whose tile v is, directly or as its transpose (`k.T`, a view of the same
    // buffer: lower.cpp's permute of a shared-memory tile).
    auto ring_slot = [&](ValueId v) {
      const OpId d = f_->value(v).def_op;
      if (d != ir::kNoOp && f_->op(d).code == Opcode::Permute && f_->op(d).parent == op.regions[0]) v = f_->op(d).operands[0];
      for (size_t j = 0; j < slots.size(); ++j)
        if (ring.slot[j] && body_block.args[j + 1] == v) return static_cast<int>(j);
      return -1;
    };
    for (OpId x : body_block.ops) {
      const ir::OpData& d = f_->op(x);
      MmaLayouts ml;
      if (d.code != Opcode::Dot || d.parent != op.regions[0] || !mma_layouts(*f_, x, &ml) || !ml.wgmma) continue;
      // A from the ring, or from registers: a value made in the body with one use, which the dot
      // takes from registers when they hold it in the wgmma accumulator layout (attention's P;
      // lower_dot_mma checks, and completes the group at once otherwise).
      const ir::ValueData& av = f_->value(d.operands[0]);
      const bool a_made_here = av.def_op != ir::kNoOp && f_->op(av.def_op).parent == op.regions[0] &&
                               uses(d.operands[0]) == 1 && ml.wgn == 1;
      if ((ring_slot(d.operands[0]) < 0 && !a_made_here) || ring_slot(d.operands[1]) < 0) continue;
      // A from registers next to a transposed B (attention backward's dsT @ qT) stays in its
      // iteration: its held registers across the boundary spilled (attn_bwd_d128: 1724 -> 2568
      // bytes); with A from the ring too (a grouped GEMM's a @ b.T) the group stays in flight.
      const OpId bdef = f_->value(d.operands[1]).def_op;
      if (ring_slot(d.operands[0]) < 0 && bdef != ir::kNoOp && f_->op(bdef).code == Opcode::Permute) continue;
      for (size_t j = 0; j < slots.size(); ++j) {
        const ValueId arg = body_block.args[j + 1];
        if (f_->op(yield).operands[j] != d.results[0] || uses(d.results[0]) != 1 || uses(arg) != 1) continue;
        // The accumulator is the carried value itself, or made from it by ops before the dot.
        if (arg != d.operands[2] && uses(d.operands[2]) != 1) continue;
        async_wgmma_.insert(x);
        async_pos.push_back(j);
        if (arg != d.operands[2]) pending.push_back(arg);
        for (int k = 0; k < 2; ++k)
          if (ring_slot(d.operands[k]) >= 0) async_read.insert(static_cast<size_t>(ring_slot(d.operands[k])));
      }
    }
  }
  // Spare buffers for the new tiles of the slots an in-flight group reads; the other new tiles go
  // to their consumed buffers after the WAR barrier (their dots have completed by then).
  std::map<size_t, uint64_t> spare_init;  // yield position bringing new data -> spare buffer
  if (!async_pos.empty()) {
    uint64_t spare_bytes = 0;
    for (const auto& [pos, consumed] : ring.dest)
      if (async_read.count(consumed))
        spare_bytes +=
            (static_cast<uint64_t>(slots[consumed].shape[0] * slots[consumed].shape[1] * elem_bytes(slots[consumed].et)) + 1023) /
            1024 * 1024;
    // What stays for the scratch: the usual 32 KB, or the accumulator as f16, which an epilogue
    // converting it to another layout stages there.
    uint64_t reserve = 32768;
    for (size_t j : async_pos)
      reserve = std::max<uint64_t>(reserve, static_cast<uint64_t>(slots[j].lay.shape[0] * slots[j].lay.shape[1] * 2));
    if (persist_bytes_ + spare_bytes + reserve > smem_limit()) {  // no room: every group completes in its iteration
      async_pos.clear();
      pending.clear();
      async_wgmma_ = saved_async;
    } else {
      for (const auto& [pos, consumed] : ring.dest)
        if (async_read.count(consumed))
          spare_init[pos] = alloc_persistent(
              static_cast<uint64_t>(slots[consumed].shape[0] * slots[consumed].shape[1] * elem_bytes(slots[consumed].et)));
    }
  }
  // Operands of the body's tensor-core dots that do not change in the loop (attention's Q) go to
  // shared memory once, here, instead of once per iteration.
  const std::map<ValueId, llvm::Value*> saved_hoisted = smem_hoisted_;
  bool hoisted = false;
  for (OpId x : body_block.ops) {
    MmaLayouts ml;
    if (f_->op(x).code != Opcode::Dot || !mma_layouts(*f_, x, &ml)) continue;
    for (int k = 0; k < 2; ++k) {
      const ValueId v = f_->op(x).operands[k];
      const ir::ValueData& vd = f_->value(v);
      const bool inside = vd.def_op == ir::kNoOp ? vd.def_block == op.regions[0]
                                                 : f_->op(vd.def_op).parent == op.regions[0];
      const Val& vv = val(v);
      if (inside || smem_hoisted_.count(v) || vv.kind == Val::Kind::Smem || vv.kind == Val::Kind::Scalar) continue;
      // A K-major operand is stored for its position: not one that some dot also takes as the
      // other operand.
      bool both = false;
      if (ml.eb != 2)
        for (OpId y : body_block.ops) both = both || (f_->op(y).code == Opcode::Dot && f_->op(y).operands[1 - k] == v);
      if (both) continue;
      const Shape sh = this->shape(f_->type_of(v));
      const uint64_t bytes = static_cast<uint64_t>(sh[0] * sh[1] * ml.eb);
      if (persist_bytes_ + bytes + 32768 > smem_limit()) continue;
      llvm::Value* base = b_.CreateAdd(persistent_base(), b_.getInt32(static_cast<uint32_t>(alloc_persistent(bytes))));
      mma_store_operand(vv, SmemTile{base, sh[0], sh[1], operand_col_major(ml, k, vv), ml.eb});
      smem_hoisted_[v] = base;
      hoisted = true;
    }
  }
  if (hoisted) barrier();
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(c_, "for.head", lf_);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(c_, "for.body", lf_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c_, "for.end", lf_);
  // A step that is not positive runs no iteration (the interpreter's checked mode reports it).
  llvm::Value* runs = b_.CreateICmpSGT(step, llvm::ConstantInt::get(step->getType(), 0));
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(lo->getType(), 2);
  iv->addIncoming(lo, pre);
  for (size_t i = 0; i < slots.size(); ++i)
    for (llvm::Value* r : init_regs[i]) {
      llvm::PHINode* p = b_.CreatePHI(r->getType(), 2);
      p->addIncoming(r, pre);
      slots[i].phis.push_back(p);
    }
  std::map<size_t, llvm::PHINode*> spare;
  for (const auto& [pos, at] : spare_init) {
    spare[pos] = b_.CreatePHI(b_.getInt32Ty(), 2);
    b_.SetInsertPoint(pre->getTerminator());
    llvm::Value* init = b_.CreateAdd(persistent_base(), b_.getInt32(static_cast<uint32_t>(at)));
    b_.SetInsertPoint(header);
    spare[pos]->addIncoming(init, pre);
  }
  b_.CreateCondBr(b_.CreateAnd(runs, b_.CreateICmpSLT(iv, hi)), body, exit);
  b_.SetInsertPoint(body);
  const ir::BlockData& bd = f_->block(op.regions[0]);
  set(bd.args[0], scalar(iv, val(op.operands[0]).et));
  for (size_t i = 0; i < slots.size(); ++i)
    set(bd.args[i + 1], slot_val(*this, b_, slots[i], {slots[i].phis.begin(), slots[i].phis.end()}));
  const bool saved_in_flight = wgmma_prev_in_flight_;
  wgmma_prev_in_flight_ = !async_pos.empty();
  for (ValueId v : pending) wgmma_pending_.insert(v);
  // Where new tiles go: the buffer of a tile this iteration consumes (the loads that write them
  // with cp.async look themselves up here, lower_memory.cpp).
  std::map<OpId, SmemTile> saved_dest = async_dest_;
  std::map<size_t, llvm::Value*> dest;
  for (const auto& [pos, consumed] : ring.dest) {
    dest[pos] = spare.count(pos) ? static_cast<llvm::Value*>(spare[pos]) : slots[consumed].phis[0];
    const OpId def = f_->value(f_->op(yield).operands[pos]).def_op;
    if (def != ir::kNoOp && f_->op(def).code == Opcode::Load)
      async_dest_[def] = SmemTile{dest[pos], slots[consumed].shape[0], slots[consumed].shape[1],
                                  slots[consumed].col_major, elem_bytes(slots[consumed].et)};
  }
  bool saved_war = smem_war_done_;
  smem_war_done_ = false;
  const int saved_commits = async_commits_;
  async_commits_ = 0;
  llvm::CallInst* async_wait = nullptr;
  if (ring.any()) {
    // The tiles this iteration reads are complete: cp.async groups of earlier iterations (all but
    // those of the newest depth - 1 iterations, which carry later tiles; the count is set below,
    // once the body's loads have been lowered, each committing a group), and everyone's stores.
    if (ring.async_depth > 0)
      async_wait = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b_.getInt32(0)});
    barrier();
  }
  OpId term;
  TRI_RETURN_IF_ERROR(lower_block(op.regions[0], &term));
  if (async_wait) async_wait->setArgOperand(0, b_.getInt32(static_cast<uint32_t>(async_commits_ * (ring.async_depth - 1))));
  async_commits_ = saved_commits;
  std::vector<std::vector<llvm::Value*>> next;
  for (size_t i = 0; i < slots.size(); ++i) {
    const Val& y = val(f_->op(term).operands[i]);
    if (!slots[i].smem) {
      next.push_back(slot_regs(*this, slots[i], y));
      continue;
    }
    if (y.kind == Val::Kind::Smem) {  // passed on, or written by cp.async
      next.push_back({y.smem_base});
      continue;
    }
    // New data in registers: into the consumed tile's buffer, once every warp is done reading.
    smem_war_barrier();
    mma_store_operand(y, SmemTile{dest.at(i), slots[i].shape[0], slots[i].shape[1], slots[i].col_major, elem_bytes(slots[i].et)});
    next.push_back({dest.at(i)});
  }
  async_dest_ = saved_dest;
  smem_war_done_ = saved_war;
  wgmma_prev_in_flight_ = saved_in_flight;
  wgmma_pending_ = saved_pending;
  smem_hoisted_ = saved_hoisted;
  llvm::Value* iv1 = b_.CreateAdd(iv, step);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  iv->addIncoming(iv1, latch);
  for (size_t i = 0; i < slots.size(); ++i)
    for (size_t r = 0; r < next[i].size(); ++r) slots[i].phis[r]->addIncoming(next[i][r], latch);
  for (auto& [pos, phi] : spare) phi->addIncoming(slots[ring.dest.at(pos)].phis[0], latch);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  for (size_t i = 0; i < slots.size(); ++i)
    set(op.results[i], slot_val(*this, b_, slots[i], {slots[i].phis.begin(), slots[i].phis.end()}));
  // The last group in flight completes before its accumulator is read.
  for (size_t j : async_pos) {
    Val acc = val(op.results[j]);
    acc.regs = wgmma_wait(0, std::move(acc.regs));
    set(op.results[j], std::move(acc));
  }
  async_wgmma_ = saved_async;
  // The loop's shared memory (ring tiles, hoisted operands) is free for what follows once every
  // copy into it has landed and every warp is done reading it, unless a tile it carried is used
  // after the loop.
  bool release = persist_bytes_ > persist_mark;
  for (size_t i = 0; i < slots.size(); ++i)
    if (slots[i].smem && uses(op.results[i]) > 0) release = false;
  if (release) {
    if (ring.any()) b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b_.getInt32(0)});
    barrier();
    persist_bytes_ = persist_mark;
  }
  return Status::ok();
}

Status GpuLowering::lower_if(OpId o) {
  const ir::OpData& op = f_->op(o);
  llvm::Value* cond = val(op.operands[0]).s;
  llvm::BasicBlock* tb = llvm::BasicBlock::Create(c_, "if.then", lf_);
  llvm::BasicBlock* eb = llvm::BasicBlock::Create(c_, "if.else", lf_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(c_, "if.end", lf_);
  b_.CreateCondBr(cond, tb, eb);
  std::vector<Slot> slots;
  std::vector<std::vector<llvm::Value*>> from_then, from_else;
  llvm::BasicBlock *then_end, *else_end;
  b_.SetInsertPoint(tb);
  OpId term;
  TRI_RETURN_IF_ERROR(lower_block(op.regions[0], &term));
  for (size_t i = 0; i < op.results.size(); ++i) {
    const Val& y = val(f_->op(term).operands[i]);
    slots.push_back(slot_for(*this, y));
    from_then.push_back(slot_regs(*this, slots.back(), y));
  }
  then_end = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(eb);
  if (op.regions.size() > 1) {
    TRI_RETURN_IF_ERROR(lower_block(op.regions[1], &term));
    for (size_t i = 0; i < op.results.size(); ++i) from_else.push_back(slot_regs(*this, slots[i], val(f_->op(term).operands[i])));
  }
  else_end = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  for (size_t i = 0; i < op.results.size(); ++i) {
    std::vector<llvm::Value*> regs;
    for (size_t r = 0; r < from_then[i].size(); ++r) {
      llvm::PHINode* p = b_.CreatePHI(from_then[i][r]->getType(), 2);
      p->addIncoming(from_then[i][r], then_end);
      p->addIncoming(from_else[i][r], else_end);
      regs.push_back(p);
    }
    set(op.results[i], slot_val(*this, b_, slots[i], std::move(regs)));
  }
  return Status::ok();
}

Status GpuLowering::lower_while(OpId o) {
  const ir::OpData& op = f_->op(o);
  if (writes_memory(*f_, op.regions)) ++mem_epoch_;
  std::vector<Slot> slots;
  std::vector<std::vector<llvm::Value*>> init_regs;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Val& init = val(op.operands[i]);
    slots.push_back(slot_for(*this, init, init.kind == Val::Kind::Scalar ? 0 : narrowest_load_bytes(op.regions, init.shape),
                             f_->block(op.regions[0]).args[i]));
    init_regs.push_back(slot_regs(*this, slots.back(), init));
  }
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* before = llvm::BasicBlock::Create(c_, "while.cond", lf_);
  llvm::BasicBlock* after = llvm::BasicBlock::Create(c_, "while.body", lf_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c_, "while.end", lf_);
  b_.CreateBr(before);
  b_.SetInsertPoint(before);
  for (size_t i = 0; i < slots.size(); ++i)
    for (llvm::Value* r : init_regs[i]) {
      llvm::PHINode* p = b_.CreatePHI(r->getType(), 2);
      p->addIncoming(r, pre);
      slots[i].phis.push_back(p);
    }
  const ir::BlockData& b0 = f_->block(op.regions[0]);
  for (size_t i = 0; i < slots.size(); ++i)
    set(b0.args[i], slot_val(*this, b_, slots[i], {slots[i].phis.begin(), slots[i].phis.end()}));
  OpId term;
  TRI_RETURN_IF_ERROR(lower_block(op.regions[0], &term));
  const ir::OpData& cond_op = f_->op(term);
  llvm::Value* go = val(cond_op.operands[0]).s;
  // The condition's values reach both the body and the exit; holding them as registers here
  // keeps one definition for both.
  std::vector<Val> passed;
  for (size_t i = 1; i < cond_op.operands.size(); ++i) {
    const Val& v = val(cond_op.operands[i]);
    passed.push_back(v.kind == Val::Kind::Lazy ? as_dist(v) : v);
  }
  b_.CreateCondBr(go, after, exit);
  b_.SetInsertPoint(after);
  const ir::BlockData& b1 = f_->block(op.regions[1]);
  for (size_t i = 0; i < passed.size(); ++i) set(b1.args[i], passed[i]);
  TRI_RETURN_IF_ERROR(lower_block(op.regions[1], &term));
  std::vector<std::vector<llvm::Value*>> next;
  for (size_t i = 0; i < slots.size(); ++i) next.push_back(slot_regs(*this, slots[i], val(f_->op(term).operands[i])));
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  for (size_t i = 0; i < slots.size(); ++i)
    for (size_t r = 0; r < next[i].size(); ++r) slots[i].phis[r]->addIncoming(next[i][r], latch);
  b_.CreateBr(before);
  b_.SetInsertPoint(exit);
  for (size_t i = 0; i < passed.size(); ++i) set(op.results[i], passed[i]);
  return Status::ok();
}

Status GpuLowering::lower_call(OpId o) {
  const ir::OpData& op = f_->op(o);
  const ir::Function* callee = m_.find(f_->attr(o, "callee").s);
  if (!callee) return error(o, Code::Compile, "call of an unknown function");
  if (depth_ >= kMaxInlineDepth)
    return error(o, Code::LimitExceeded, "calls nest deeper than " + std::to_string(kMaxInlineDepth));
  std::vector<Val> frame(callee->values.size());
  const ir::BlockData& bd = callee->block(callee->body);
  for (size_t i = 0; i < bd.args.size(); ++i) frame[bd.args[i]] = val(op.operands[i]);
  const ir::Function* caller = f_;
  std::vector<Val>* caller_vals = vals_;
  f_ = callee;
  vals_ = &frame;
  ++depth_;
  OpId term;
  Status st = lower_block(callee->body, &term);
  std::vector<Val> rets;
  if (st.is_ok())
    for (ValueId v : callee->op(term).operands) rets.push_back(frame[v]);
  --depth_;
  f_ = caller;
  vals_ = caller_vals;
  TRI_RETURN_IF_ERROR(st);
  for (size_t i = 0; i < op.results.size(); ++i) set(op.results[i], rets[i]);
  return Status::ok();
}

namespace {
std::string escape_printf(const std::string& s) {
  std::string r;
  for (char c : s) r += c == '%' ? std::string("%%") : std::string(1, c);
  return r;
}
}  // namespace

Status GpuLowering::lower_print(OpId o) {
  // Each thread prints the elements it owns, one line each, through the driver's vprintf (the
  // output reaches the process's stdout when the launch is synchronized):
  //   <prefix>pid (x, y, z) idx (i, j): v0 v1 ...
  std::vector<ValueId> vs = f_->variadic(o);
  ValueId mv = f_->operand(o, "mask");
  std::string prefix = escape_printf(f_->attr(o, "prefix").present() ? f_->attr(o, "prefix").s : "");
  Shape s;
  const Val* anchor = nullptr;
  for (ValueId v : vs)
    if (val(v).kind != Val::Kind::Scalar) {
      s = val(v).shape;
      if (!anchor || val(v).kind == Val::Kind::Dist) anchor = &val(v);
    }
  Layout l;
  bool block = anchor != nullptr;
  if (block) l = anchor->kind == Val::Kind::Dist ? anchor->lay : default_layout(s, anchor->et);
  llvm::FunctionCallee vprintf = mod_->getOrInsertFunction(
      "vprintf", llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}, false));
  std::vector<std::vector<llvm::Value*>> regs;
  for (ValueId v : vs) regs.push_back(block ? regs_in(val(v), l) : std::vector<llvm::Value*>{val(v).s});
  std::vector<llvm::Value*> masks;
  if (mv != ir::kNoValue) masks = block ? regs_in(val(mv), l) : std::vector<llvm::Value*>{val(mv).s};
  std::string fmt = prefix + "pid (%u, %u, %u)";
  if (block) {
    fmt += " idx (";
    for (size_t d = 0; d < s.size(); ++d) fmt += (d ? ", %u" : "%u");
    fmt += ")";
  }
  fmt += ":";
  std::vector<EType> ets;
  for (ValueId v : vs) {
    EType e = val(v).et;
    ets.push_back(e);
    if (e.ptr) fmt += " %p";
    else if (ir::is_float(e.s)) fmt += " %g";
    else if (e.s == Scalar::I64) fmt += " %lld";
    else fmt += " %d";
  }
  fmt += "\n";
  llvm::Value* fmt_ptr = b_.CreateGlobalStringPtr(fmt, "tri.fmt", 0, mod_);
  llvm::Value* pid[3];
  static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  for (int i = 0; i < 3; ++i) pid[i] = b_.CreateIntrinsic(ids[i], {}, {});
  const int64_t n = block ? l.nregs() : 1;
  const uint64_t dup = block ? replicated_reg_mask(l) : 0;
  llvm::Value* own = block ? owner(l) : b_.CreateICmpEQ(tid_, b_.getInt32(0));
  for (int64_t r = 0; r < n; ++r) {
    if (r & dup) continue;
    llvm::Value* cond = own;
    if (!masks.empty()) cond = b_.CreateAnd(cond, masks[r]);
    emit_if(cond, [&] {
      std::vector<llvm::Value*> args = {pid[0], pid[1], pid[2]};
      if (block)
        for (llvm::Value* c : coords(l, r)) args.push_back(c);
      for (size_t i = 0; i < regs.size(); ++i) {
        llvm::Value* x = regs[i][r];
        EType e = ets[i];
        if (e.ptr) args.push_back(b_.CreatePtrToInt(x, b_.getInt64Ty()));
        else if (ir::is_float(e.s)) args.push_back(b_.CreateFPExt(em_.to_arith(x, e), b_.getDoubleTy()));
        else if (e.s == Scalar::I64) args.push_back(x);
        else if (e.s == Scalar::I1) args.push_back(b_.CreateZExt(x, b_.getInt32Ty()));
        else args.push_back(b_.CreateSExtOrTrunc(x, b_.getInt32Ty()));
      }
      std::vector<llvm::Type*> ts;
      for (llvm::Value* a : args) ts.push_back(a->getType());
      auto* st = llvm::StructType::get(c_, ts);
      llvm::IRBuilder<> eb(&*entry_->getFirstInsertionPt());
      llvm::Value* buf = eb.CreateAlloca(st);
      for (size_t i = 0; i < args.size(); ++i) b_.CreateStore(args[i], b_.CreateStructGEP(st, buf, i));
      b_.CreateCall(vprintf, {fmt_ptr, buf});
    });
  }
  return Status::ok();
}

Status GpuLowering::lower_assert(OpId o) {
  // A failed lane calls the driver's __assertfail, which stops the kernel: the launch's stream
  // reports CUDA_ERROR_ASSERT, and the message (with the IR location) goes to stderr.
  ValueId cv = f_->operand(o, "cond"), mv = f_->operand(o, "mask");
  const Val& c = val(cv);
  const ir::OpData& op = f_->op(o);
  std::string msg = f_->attr(o, "msg").present() ? f_->attr(o, "msg").s : "";
  std::string where = format_diag(m_.source_name, op.loc, "'assert' failed" + (msg.empty() ? "" : ": " + msg));
  Layout l;
  const bool block = c.kind != Val::Kind::Scalar;
  if (block) l = c.kind == Val::Kind::Dist ? c.lay : default_layout(c.shape, c.et);
  std::vector<llvm::Value*> conds = block ? regs_in(c, l) : std::vector<llvm::Value*>{c.s};
  std::vector<llvm::Value*> masks;
  if (mv != ir::kNoValue) masks = block ? regs_in(val(mv), l) : std::vector<llvm::Value*>{val(mv).s};
  llvm::Value* bad = b_.getFalse();
  for (size_t r = 0; r < conds.size(); ++r) {
    llvm::Value* x = b_.CreateNot(conds[r]);
    if (!masks.empty()) x = b_.CreateAnd(x, masks[r]);
    bad = b_.CreateOr(bad, x);
  }
  emit_if(bad, [&] { assert_fail(where, op.loc.line); });
  return Status::ok();
}

void GpuLowering::assert_fail(const std::string& message, int line) {
  llvm::FunctionCallee fail = mod_->getOrInsertFunction(
      "__assertfail",
      llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy(), b_.getInt32Ty(), b_.getPtrTy(), b_.getInt64Ty()},
                              false));
  llvm::Value* m = b_.CreateGlobalStringPtr(message, "tri.assert.msg", 0, mod_);
  llvm::Value* file = b_.CreateGlobalStringPtr(m_.source_name.empty() ? "<ir>" : m_.source_name, "tri.assert.file", 0, mod_);
  llvm::Value* fn = b_.CreateGlobalStringPtr(kernel_.name, "tri.assert.fn", 0, mod_);
  b_.CreateCall(fail, {m, file, b_.getInt32(line), fn, b_.getInt64(1)});
}

Status GpuLowering::lower_inline_asm(OpId o) {
  // Elementwise PTX: with pack = p the asm sees p consecutive elements of each block argument as
  // p operands, and gives p elements of each result. Float values meet integer constraints
  // (r, h, l) as their bits.
  const ir::OpData& op = f_->op(o);
  std::vector<ValueId> args = f_->variadic(o);
  const std::string text = f_->attr(o, "asm").s;
  const std::string cons = f_->attr(o, "constraints").s;
  const bool pure = !f_->attr(o, "pure").present() || f_->attr(o, "pure").i;
  if (!pure) ++mem_epoch_;
  const int64_t pack = f_->attr(o, "pack").present() ? f_->attr(o, "pack").i : 1;
  std::vector<std::string> parts;
  {
    std::stringstream ss(cons);
    std::string p;
    while (std::getline(ss, p, ',')) parts.push_back(p);
  }
  const Val* anchor = nullptr;
  for (ValueId v : args)
    if (val(v).kind != Val::Kind::Scalar && (!anchor || val(v).kind == Val::Kind::Dist)) anchor = &val(v);
  Layout l;
  const bool block = anchor != nullptr;
  if (block) l = anchor->kind == Val::Kind::Dist ? anchor->lay : default_layout(anchor->shape, anchor->et);
  const int64_t n = block ? l.nregs() : 1;
  const int64_t p = block ? pack : 1;
  if (block && (pack < 1 || n % pack)) return error(o, Code::Compile, "'inline_asm' pack does not divide the registers");
  const size_t nres = op.results.size();
  const size_t want = (nres + args.size()) * p;
  size_t outs_in_cons = 0;
  for (const std::string& c : parts)
    if (!c.empty() && c[0] == '=') ++outs_in_cons;
  if (parts.size() < want || outs_in_cons != nres * p)
    return error(o, Code::Compile, "'inline_asm' constraints \"" + cons + "\" do not match " + std::to_string(nres * p) +
                                       " outputs and " + std::to_string(args.size() * p) + " inputs");
  auto letter_type = [&](const std::string& c) -> llvm::Type* {
    char k = c.back();
    switch (k) {
      case 'h': return b_.getInt16Ty();
      case 'r': return b_.getInt32Ty();
      case 'l': return b_.getInt64Ty();
      case 'f': return b_.getFloatTy();
      case 'd': return b_.getDoubleTy();
      case 'b': return b_.getInt1Ty();
      default: return nullptr;
    }
  };
  auto fit = [&](llvm::Value* v, llvm::Type* t) -> llvm::Value* {
    if (!t || v->getType() == t) return v;
    if (v->getType()->getPrimitiveSizeInBits() == t->getPrimitiveSizeInBits()) return b_.CreateBitCast(v, t);
    if (t->isIntegerTy() && v->getType()->isIntegerTy()) return b_.CreateZExtOrTrunc(v, t);
    return nullptr;
  };
  std::vector<std::vector<llvm::Value*>> in;
  for (ValueId v : args) in.push_back(block ? regs_in(val(v), l) : std::vector<llvm::Value*>{val(v).s});
  std::vector<std::vector<llvm::Value*>> out(nres, std::vector<llvm::Value*>(n));
  for (int64_t r0 = 0; r0 < n; r0 += p) {
    std::vector<llvm::Type*> rts;
    for (size_t i = 0; i < nres * p; ++i) {
      llvm::Type* t = letter_type(parts[i]);
      if (!t) return error(o, Code::Compile, "'inline_asm' output constraint '" + parts[i] + "' is not supported");
      rts.push_back(t);
    }
    std::vector<llvm::Value*> ops;
    size_t ci = nres * p;
    for (size_t a = 0; a < in.size(); ++a)
      for (int64_t k = 0; k < p; ++k, ++ci) {
        llvm::Value* x = fit(in[a][block ? r0 + k : 0], letter_type(parts[ci]));
        if (!x) return error(o, Code::Compile, "'inline_asm' operand does not fit constraint '" + parts[ci] + "'");
        ops.push_back(x);
      }
    llvm::Type* ret = rts.empty() ? b_.getVoidTy()
                      : rts.size() == 1 ? rts[0]
                                        : static_cast<llvm::Type*>(llvm::StructType::get(c_, rts));
    std::vector<llvm::Type*> ats;
    for (llvm::Value* x : ops) ats.push_back(x->getType());
    auto* ft = llvm::FunctionType::get(ret, ats, false);
    if (llvm::Error err = llvm::InlineAsm::verify(ft, cons)) {
      llvm::consumeError(std::move(err));
      return error(o, Code::Compile, "'inline_asm' constraints \"" + cons + "\" do not fit its operands");
    }
    llvm::Value* call = inline_asm(text, cons, ret, ops, pure);
    for (size_t i = 0; i < nres; ++i)
      for (int64_t k = 0; k < p; ++k) {
        size_t idx = i * p + k;
        llvm::Value* x = rts.size() == 1 ? call : b_.CreateExtractValue(call, idx);
        EType e = etype(f_->type_of(op.results[i]));
        llvm::Value* y = fit(x, reg_ty(e));
        if (!y) return error(o, Code::Compile, "'inline_asm' result does not fit its type");
        out[i][block ? r0 + k : 0] = y;
      }
  }
  for (size_t i = 0; i < nres; ++i) {
    EType e = etype(f_->type_of(op.results[i]));
    if (block) set(op.results[i], dist(e, l, out[i]));
    else set(op.results[i], scalar(out[i][0], e));
  }
  return Status::ok();
}

}  // namespace tri::codegen::nvptx::detail
