// The NVPTX lowering's internals, shared by its files: how an IR value exists in the generated
// code (Val), and the lowering object (GpuLowering). lower.cpp holds the core (values, layouts,
// conversions, elementwise and shape ops); lower_memory.cpp loads, stores and atomics;
// lower_reduce.cpp reduce, scan and dot; lower_control.cpp control flow, calls and debugging ops.
//
// A value is one of:
//  - Scalar: an LLVM value every thread of the program holds (IR scalars are uniform);
//  - Lazy: a function from coordinates to an element, for blocks that are cheap to compute
//    anywhere (arange, splat, index and pointer arithmetic): a consumer evaluates it in its own
//    layout, so `addptr(splat(p), offs)` never occupies registers or shared memory;
//  - Dist: registers in a distributed layout (layout.h): loads, reductions, math, loop-carried
//    blocks;
//  - Smem: a 16-bit [rows x cols] block in shared memory, in the swizzled tile of lower_mma.cpp:
//    a loop-carried operand of dots on tensor cores, written once per iteration and read by
//    ldmatrix (lower_control.cpp decides; anything else that reads one reads it element-wise).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "codegen/elem_emitter.h"
#include "codegen/nvptx/layout.h"
#include "codegen/nvptx/lower.h"
#include "ir/ir.h"

namespace tri::passes {
class AxisInfoAnalysis;
}

namespace tri::codegen::nvptx::detail {

using ir::BlockId;
using ir::Opcode;
using ir::OpId;
using ir::Scalar;
using ir::TypeId;
using ir::ValueId;
using Coord = std::vector<llvm::Value*>;  // i32, one per dimension
using Gen = std::function<llvm::Value*(const Coord&)>;

struct Val {
  enum class Kind : uint8_t { None, Scalar, Lazy, Dist, Smem };
  Kind kind = Kind::None;
  EType et;
  Shape shape;                    // empty for Scalar
  llvm::Value* s = nullptr;       // Scalar
  std::shared_ptr<const Gen> gen; // Lazy
  Layout lay;                     // Dist
  std::vector<llvm::Value*> regs; // Dist: one per register of lay
  llvm::Value* smem_base = nullptr; // Smem: byte offset (i32) of the tile in shared memory
  bool smem_col_major = false;      // Smem: the tile is column-major (SmemTile)
  // Smem: the layout its load would have given it in registers, which elementwise ops read it
  // in (lower_elementwise); none (rank 0) for the storage order.
  std::shared_ptr<const Layout> smem_read;
  // Dist values made by `broadcast` from registers: the source and its broadcast dimensions. A
  // conversion to another layout takes the source's registers when that layout's threads hold
  // the source's elements (a reduction's result broadcast back over an mma accumulator).
  std::shared_ptr<const Val> bcast_src;
  std::vector<bool> bcast_proj;
  // Dist values made by reduce from an operand in layout *slice_parent along slice_axis, and
  // what keeps their layout: expand_dims at that axis (then slice_parent's shape but for a 1
  // there) and elementwise ops in that layout. A broadcast back to the operand's shape takes the
  // operand's layout (Triton's broadcast of a slice to its parent): values computed from it meet
  // the operand's in registers even where a reshape came between, which drops bcast_src (the
  // compare-and-swap steps of Triton's bitonic sort).
  std::shared_ptr<const Layout> slice_parent;
  int slice_axis = -1;
  // Dist values made by a load: the same load in another layout, valid while no store of the
  // program came between (epoch). A conversion re-loads (from cache) instead of exchanging
  // registers through shared memory, and the first load goes away when nothing else uses it.
  std::shared_ptr<const std::function<std::vector<llvm::Value*>(const Layout&)>> remat;
  uint64_t epoch = 0;
};

class GpuElemEmitter final : public ElemEmitter {
 public:
  GpuElemEmitter(llvm::IRBuilder<>& b, int sm) : ElemEmitter(b), sm_(sm) {}
  llvm::Value* decode(llvm::Value* bits, Scalar s) override;
  llvm::Value* encode(llvm::Value* x, Scalar s, bool rtz) override;
  llvm::Value* math_fn(const std::string& name, const std::vector<llvm::Value*>& args) override;
  // f16 add/sub/mul in f16 (sm_80 and newer: every architecture Tri targets), bf16 on sm_90
  // (add.rn.bf16 and the like): one instruction instead of widen, compute, round.
  llvm::Value* half_arith(Opcode code, Scalar s, llvm::Value* a, llvm::Value* b) override;
  // atom.add.f32 and red.add.f32 flush subnormal inputs and results (PTX ISA, "atom"): one
  // instruction (REDG.E.ADD.F32.FTZ.RN where the old value is unused), not a CAS loop.
  bool atomic_fadd_f32_flushes() const override { return true; }
  std::string missing;  // the last math function math_fn could not provide

 private:
  int sm_;
};

// The fragment layouts of a dot on tensor cores (lower_mma.cpp): A (m, k), B (k, n) and the
// accumulator C (m, n), with wm x wn warps tiling M and N.
// A [rows x cols] block of `eb`-byte elements (1, 2 or 4) in shared memory at byte offset `base`
// (i32), row-major with its 16-byte chunks XOR-swizzled by row (lower_mma.cpp).
// A column-major tile (col_major) is stored as the row-major tile of its transpose: an operand
// whose threads hold runs along its rows (K^T loaded from K) is copied 16 bytes at a time too.
struct SmemTile {
  llvm::Value* base = nullptr;
  int64_t rows = 0, cols = 0;
  bool col_major = false;
  int eb = 2;
};

// A dot on mma.sync with its operands converted to the fragment layouts in registers (no shared
// memory staging, no ldmatrix): tf32, i8 and f8 operands, and batched (3-D) f16/bf16 dots
// (lower_mma.cpp, lower_dot_mma_regs). `elems` operand elements share one 32-bit register, and
// one instruction covers k = 8 * elems.
struct RegMma {
  Layout a, b, c;
  int wm = 1, wn = 1;
  int elems = 2;
  std::string ptx;  // the instruction, e.g. "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
  bool int_acc = false;
  int min_ptx_version = 0;  // the PTX ISA the instruction needs beyond the default (f8: 8.4)
};

struct MmaLayouts {
  Layout a, b, c;
  int wm = 1, wn = 1;
  // Hopper's wgmma (lower_dot_wgmma): warpgroups of 4 warps, wgm along M and wgn along N, each
  // computing an (M / wgm) x (N / wgn) block with m64nNk16 instructions from shared memory.
  bool wgmma = false;
  int wgm = 1, wgn = 1;
  // Operand element bytes: 2 (f16, bf16), 1 (f8e4m3, f8e5m2, i8) or 4 (f32 as tf32); the
  // shared-memory operands of the 1- and 4-byte types must be K-major (A row-major, B
  // column-major).
  int eb = 2;
  // k of one instruction: 32 bytes of each operand row.
  int64_t kstep() const { return 32 / eb; }
};

class GpuLowering {
 public:
  GpuLowering(const ir::Module& m, const ir::Function& kernel, const GpuOptions& opt, llvm::LLVMContext& c,
              llvm::Module* mod);
  ~GpuLowering();
  Status run(KernelInfo* info);

  // ---- values
  EType etype(TypeId t) const;
  Shape shape(TypeId t) const;
  int threads() const { return 32 * opt_.num_warps; }
  int sm() const { return opt_.sm; }
  // Shared memory a block may have on this architecture (227 KB on sm_90, 163 KB on sm_80, 99 KB
  // on sm_86/89).
  uint64_t smem_limit() const {
    const int s = opt_.sm;
    return s >= 90 ? 232448 : s == 80 || s == 87 ? 166912 : s >= 86 ? 101376 : 98304;
  }
  Val scalar(llvm::Value* v, EType e) const;
  Val lazy(EType e, Shape s, Gen g) const;
  Val dist(EType e, Layout l, std::vector<llvm::Value*> regs) const;
  const Val& val(ValueId v) const { return (*vals_)[v]; }
  void set(ValueId v, Val x) { (*vals_)[v] = std::move(x); }
  // The layout blocks of this shape and element type get when nothing else decides: blocked,
  // 16-byte vectors per thread where the shape has that many elements per thread, dimensions
  // in `order` fastest first (row-major when empty).
  Layout default_layout(const Shape& s, EType e, const std::vector<int>& order = {}) const;
  // The element size of the narrowest load of shape `s` in `regions` and the regions nested in
  // them; 0 when there is none (lower_control.cpp: layouts of loop-carried values).
  int narrowest_load_bytes(const std::vector<BlockId>& regions, const Shape& s) const;
  // The coordinates of register r of layout l in the calling thread.
  Coord coords(const Layout& l, int64_t r);
  // The elements of v in layout l, one per register (a conversion when v is in another layout).
  std::vector<llvm::Value*> regs_in(const Val& v, const Layout& l);
  // v as registers: its own layout when it has one, else the default layout.
  Val as_dist(const Val& v);
  // A conversion of a Dist value to layout `to`; `proj[d]` reads source coordinate 0 along d
  // (broadcast). In registers when the layouts allow, else through shared memory.
  std::vector<llvm::Value*> convert(const Val& v, const Layout& to, const std::vector<bool>& proj);
  // Whether regs_in(v, to) moves v through shared memory: not a register mapping, a
  // recomputation or a reload (a reduce that may keep its operands' layout asks).
  bool exchanges(const Val& v, const Layout& to);
  // Whether the calling thread holds an element of l that no other thread writes: only owners
  // store (replicated lanes and warps hold copies).
  llvm::Value* owner(const Layout& l);
  // ---- shared memory and threads
  llvm::Value* smem_ptr(llvm::Value* byte_offset);  // i8 pointer in addrspace(3)
  void need_smem(uint64_t bytes) { smem_bytes_ = std::max(smem_bytes_, bytes); }
  void barrier();
  // A call of inline PTX `text` with LLVM constraints `cons` on `args`, returning `ret` (void,
  // one register or a struct of them); with side effects unless `pure`.
  llvm::CallInst* inline_asm(const std::string& text, const std::string& cons, llvm::Type* ret,
                             const std::vector<llvm::Value*>& args = {}, bool pure = false);
  llvm::Value* tid() const { return tid_; }
  llvm::Value* lane() const { return lane_; }
  llvm::Value* warp() const { return warp_; }
  llvm::Value* shfl_xor(llvm::Value* v, int mask);
  llvm::Value* shfl_up(llvm::Value* v, int delta, int width);
  llvm::Value* shfl_down(llvm::Value* v, int delta, int width);
  llvm::Value* shfl_idx(llvm::Value* v, llvm::Value* lane);
  llvm::Value* linear(const Coord& c, const Shape& s);  // row-major index, i32
  llvm::Value* to_mem(llvm::Value* v, EType e);        // register value -> memory value
  llvm::Value* from_mem(llvm::Value* v, EType e);
  llvm::Type* mem_ty(EType e) const;
  llvm::Type* reg_ty(EType e) const { return em_.reg_ty(e); }
  // Emits `then` under `cond` (a branch around it).
  void emit_if(llvm::Value* cond, const std::function<void()>& then);

  // ---- ops
  Status lower_block(BlockId b, OpId* terminator);
  Status lower_op(OpId o);
  Status lower_op_at(OpId o, const ir::OpData& op);
  Status lower_elementwise(OpId o);
  // The f32 divisor of an `fdiv` whose divisor is the same for every element (a scalar, or a
  // splat of one), else null; divide_by_uniform divides registers by it (lower.cpp).
  llvm::Value* uniform_f32_divisor(OpId o);
  std::vector<llvm::Value*> divide_by_uniform(const std::vector<llvm::Value*>& a, llvm::Value* d);
  Status lower_shape(OpId o);
  // ptr_override: the addresses to use instead of the op's `ptr` operand (get and put: a peer's).
  Status lower_load(OpId o, const Val* ptr_override = nullptr);
  // res: the load's result (its vector may be capped by load_vec_cap), or kNoValue.
  Layout load_layout(ValueId pv, ValueId mv, const Val& ptr, int eb, int* vec, ValueId res = ir::kNoValue);
  // The coalesced layout's order and elements per thread for a block of `s` through pointer pv,
  // elements of eb bytes, before any cap: from the pointer's axis info alone (a mask narrows the
  // accesses, not the layout).
  int natural_load_vec(ValueId pv, const Shape& s, int eb, std::vector<int>* order) const;
  // Loads whose tiles meet in elementwise ops (through casts, selects and the values a loop
  // carries) load in one layout: at the smallest vector any of them takes, as long as each still
  // moves at least 4 bytes per access (lower_memory.cpp). A bf16 tile loaded 8 to a thread and an
  // f32 tile loaded 4 to a thread would otherwise meet in two layouts, and one of them would go
  // through shared memory (two barriers) at every use; 8-byte instead of 16-byte accesses cost
  // less. 0: no cap for this load.
  int load_vec_cap(ValueId res);
  const ir::Function* caps_fn_ = nullptr;
  std::map<ValueId, int> load_caps_;
  // When value v (a load's result, elements of eb bytes) only goes through expand_dims to a
  // broadcast over a tile, the layout of v whose registers the tile's blocked layout takes as
  // they are (lower_memory.cpp); false otherwise.
  bool broadcast_layout(ValueId v, int eb, Layout* out);
  std::map<const ir::Function*, std::vector<std::vector<OpId>>> users_;
  // Loads whose only use is as the initial value of a later `for` of the same block, with
  // nothing but pure ops between (pipeline_loads' prologue): lower_block leaves them to
  // lower_for, which copies those that become shared-memory ring tiles with cp.async straight
  // into their buffers (not through registers), and lowers the others there as usual.
  std::map<ValueId, OpId> deferred_loads_;
  bool defer_load(BlockId bid, size_t at);
  // The registers of a block load in layout l, `vec` elements per instruction.
  std::vector<llvm::Value*> emit_load(const ir::Function& fn, OpId o, const Val& ptr, const Val* mask, const Val* other,
                                      const Layout& l, int vec, EType e);
  Status lower_store(OpId o, const Val* ptr_override = nullptr);
  Status lower_atomic(OpId o);
  // Combines the lanes of a relaxed atomic whose result is unused in shared memory first
  // (lower_memory.cpp); false when the op does not qualify.
  bool combine_atomic(OpId o, const Layout& l);
  bool combine_atomic_direct(OpId o, const Layout& l, const std::string& kind, llvm::AtomicRMWInst::BinOp bop,
                             uint32_t ident);
  // Number of uses of a value of the function being lowered.
  int uses(ValueId v);
  std::map<const ir::Function*, std::vector<int>> uses_;
  Status lower_reduce(OpId o);
  Status lower_scan(OpId o);
  // Whether dot `o` of `fn` runs on mma.sync with register fragments (RegMma), and how.
  bool mma_reg_layouts(const ir::Function& fn, OpId o, RegMma* out, std::string* why = nullptr) const;
  int min_ptx_version_ = 0;  // KernelInfo::min_ptx_version
  bool trap_note_ = false;    // fail_with noted once that its reports are bare traps
  Status lower_dot_mma_regs(OpId o, const RegMma& l);
  // The whole block's combination a 1-D builtin scan computed, per function and scanned value:
  // a reduce of that value with the same kind in the same block takes it (lower_reduce.cpp).
  struct ScanTotal {
    std::string kind;
    ir::BlockId block;
    llvm::Value* total;
  };
  std::map<const ir::Function*, std::map<ValueId, ScanTotal>> scan_totals_;
  Status lower_dot(OpId o);
  // Whether dot `o` of `fn` runs on tensor cores, and in which layouts; else false with the
  // reason in `why` (lower_mma.cpp).
  bool mma_layouts(const ir::Function& fn, OpId o, MmaLayouts* out, std::string* why = nullptr) const;
  Status lower_dot_mma(OpId o, const MmaLayouts& l);
  // a_regs: A in registers (a wgmma accumulator's layout, f16/bf16), or empty (A in `ta`).
  Status lower_dot_wgmma(OpId o, const MmaLayouts& l, const SmemTile& ta, const SmemTile& tb,
                         std::vector<llvm::Value*> acc, const std::vector<llvm::Value*>& a_regs);
  // wgmma.wait_group `pending`, taking and giving back `regs` (the accumulators of the groups
  // it waits for), so that nothing reads them before it.
  std::vector<llvm::Value*> wgmma_wait(int pending, std::vector<llvm::Value*> regs);
  // wgmma's matrix descriptor for the 64 x 16 (A) or 16 x n (B) piece of `t` at (mn0, k0).
  llvm::Value* wgmma_desc(const SmemTile& t, bool is_a, llvm::Value* mn0, int64_t k0);
  llvm::Value* mma_smem_offset(const SmemTile& t, llvm::Value* row, llvm::Value* col);
  // The same offset for known coordinates (without the tile's base), computed directly: asking
  // the builder to fold mma_smem_offset on constants, for every thread and copy, added 120 ms to
  // compiling a matmul.
  static int64_t mma_smem_offset_of(const SmemTile& t, int64_t row, int64_t col);
  // Shared-memory addresses of a tile's elements that registers [r, r + run) of `l` hold, for
  // every r: the thread's address plus a constant where the swizzle allows (the register's
  // displacement moves every thread's element by the same amount), else computed in full.
  std::vector<llvm::Value*> mma_smem_addresses(const SmemTile& t, const Layout& l);
  void mma_store_operand(const Val& v, const SmemTile& t);
  // Whether a 16-bit operand is best stored column-major: its threads' runs go down the rows.
  static bool prefers_col_major(const Val& v);
  // How operand k (0: A, 1: B) of a dot with layouts `l` is stored: K-major where the
  // instruction requires it (l.eb != 2), else as prefers_col_major says.
  static bool operand_col_major(const MmaLayouts& l, int k, const Val& v);
  // Whether block argument `arg` of loop body `body` can live in shared memory between
  // iterations: a 2-D 16-bit block whose only uses are as operand A or B of dots on tensor cores
  // directly in the body (or through a transpose, permute[order=[1, 0]], whose only uses are
  // such operands: the transpose is a view of the same bytes), or by the body's yield (lower_control.cpp requires that position to
  // live in shared memory too). `shape` receives its shape.
  // `need_col_major` receives 1 or 0 where a use requires the tile's storage (a K-major operand,
  // MmaLayouts::eb), else -1.
  bool smem_carried(BlockId body, ValueId arg, Shape* shape, int* need_col_major = nullptr);
  // Shared memory that lives across ops (loop-carried tiles), above the scratch that ops take
  // from offset 0: alloc_persistent returns an offset within it, persistent_base() the i32
  // start of it (the scratch's final size, known when the kernel is done).
  uint64_t alloc_persistent(uint64_t bytes);
  llvm::Value* persistent_base();
  uint64_t persist_bytes_ = 0;
  // The most persist_bytes_ reached: a loop gives its tiles' memory back when it ends (lower_for),
  // so loops one after another (causal attention's two) use the same bytes.
  uint64_t persist_peak_ = 0;
  llvm::GlobalVariable* persist_base_gv_ = nullptr;
  // Loads whose tile goes straight into a loop's shared-memory buffer (cp.async), and that
  // buffer's byte offset (lower_for sets it for the body it lowers).
  std::map<OpId, SmemTile> async_dest_;
  // Dot operands defined outside the loop being lowered, written once into shared memory before
  // it (their byte offsets): lower_dot_mma reads them there instead of staging them each time.
  std::map<ValueId, llvm::Value*> smem_hoisted_;
  // A barrier once per loop iteration before its first write into a buffer whose tile it read.
  bool smem_war_done_ = false;
  void smem_war_barrier();
  // cp.async groups committed so far in the loop body being lowered (one per load that
  // lower_load_async takes): lower_for's wait at the top of the body counts in groups.
  int async_commits_ = 0;
  // Tries to lower load `o` as cp.async into async_dest_'s buffer; false when it does not qualify.
  bool lower_load_async(OpId o);
  // One line per dot for KernelInfo::notes: where it is and which path it took.
  void note(OpId o, const std::string& what);
  std::string notes_;
  Status lower_for(OpId o);
  // ---- distributed ops (lower_distributed.cpp)
  Status lower_distributed(OpId o);
  // The hidden team parameters start at argument `first` of the kernel.
  void setup_team_params(size_t first);
  // How far rank's copy of the symmetric heap is from this rank's, in bytes (0 outside a team):
  // bases[rank] - bases[me], or with NVSHMEM's device library nvshmem_ptr(bases[me], rank) -
  // bases[me]. Stops the kernel for a rank outside the team or one NVSHMEM cannot map.
  llvm::Value* symm_delta(OpId o, llvm::Value* rank);
  // The pointers of p moved by delta bytes, in p's own form.
  Val shift_ptrs(const Val& p, llvm::Value* delta);
  // Spins until the signal at ptr compares true with value; reports and stops at the timeout.
  void emit_spin(OpId o, llvm::Value* ptr, int bytes, llvm::Value* value, bool ge, bool acquire, int64_t scope);
  // A barrier (when release), then thread 0 sets or adds value at ptr.
  void emit_signal(llvm::Value* ptr, int bytes, llvm::Value* value, bool add, bool release, int64_t scope);
  // Prints "<loc>: <what>: <fmt % args>; program (x, y, z) of rank r (of n)" and stops the kernel.
  void fail_with(OpId o, const std::string& what, const std::string& fmt, std::vector<llvm::Value*> args);
  llvm::Value* team_rank_ = nullptr;     // i32
  llvm::Value* team_size_ = nullptr;     // i32
  llvm::Value* team_bases_ = nullptr;    // ptr addrspace(1) to num_ranks u64, or null
  llvm::Value* team_timeout_ = nullptr;  // i64 nanoseconds, 0: never
  Status lower_if(OpId o);
  Status lower_while(OpId o);
  Status lower_call(OpId o);
  Status lower_print(OpId o);
  Status lower_assert(OpId o);
  // Calls the driver's __assertfail with `message` (the kernel stops; the launch fails with
  // CUDA_ERROR_ASSERT and the message goes to stderr).
  void assert_fail(const std::string& message, int line);
  Status lower_inline_asm(OpId o);
  std::vector<llvm::Value*> combine_pair(OpId o, const std::string& kind, EType e, const std::vector<llvm::Value*>& a,
                                         const std::vector<llvm::Value*>& b, Status* st);
  // Lowers a combine region on scalar arguments and returns the yielded values.
  Status lower_combine(BlockId region, const std::vector<llvm::Value*>& args, std::vector<llvm::Value*>* out);
  // Vector width (elements) that axis info allows for a memory op's pointer along dimension d.
  int mem_vec(ValueId ptr, ValueId mask, int d, int eb) const;
  static int mem_vec(const passes::AxisInfoAnalysis* ax, ValueId ptr, ValueId mask, int d, int eb);
  uint64_t mem_epoch_ = 0;  // counts the ops that may write memory (stores, atomics, asm)
  Status error(OpId o, Code code, const std::string& what) const;

  const ir::Module& m_;
  const ir::Function& kernel_;
  GpuOptions opt_;
  llvm::LLVMContext& c_;
  llvm::Module* mod_;
  llvm::Function* lf_ = nullptr;
  llvm::IRBuilder<> b_;
  GpuElemEmitter em_;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::Value* tid_ = nullptr;
  llvm::Value* lane_ = nullptr;
  llvm::Value* warp_ = nullptr;
  llvm::GlobalVariable* smem_ = nullptr;
  uint64_t smem_bytes_ = 0;  // scratch (offset 0 up); persist_bytes_ more above it
  bool has_dot_ = false;  // a dot was lowered (no register bound: lower.cpp, run)
  // Some dot runs on wgmma, which reads shared memory through the async proxy: the operand
  // tiles that threads store (mma_store_operand) are followed by fence.proxy.async, so the next
  // barrier makes them visible to it. Tiles that cp.async writes need no fence (as in Triton's
  // and CUTLASS's cp.async pipelines): their wait and barrier suffice.
  bool wgmma_used_ = false;
  // wgmma dots of the loop being lowered whose group stays in flight while the next
  // iteration's group is issued: the accumulator only goes to the next iteration (to its dot,
  // or to ops before it, as attention rescales it), B comes from the ring, whose new tiles go to
  // a spare buffer, the one the previous iteration's group read, and A from the ring too or from
  // registers (lower_for). After committing its group, such a dot waits for the one before
  // (wgmma.wait_group 1), so the tensor cores always have the next group queued.
  std::set<OpId> async_wgmma_;
  // Loop-carried accumulators of such dots that other ops read before the dot (attention's
  // rescaling): the first op to read one waits for every group (wgmma.wait_group 0) before.
  std::set<ValueId> wgmma_pending_;
  // In the body of such a loop: whether the previous iteration's group may still be in flight
  // here (no dot of this iteration has waited for it yet). smem_war_barrier() waits for it before
  // its barrier, since the spare buffer it then lets the warps overwrite is what that group reads.
  bool wgmma_prev_in_flight_ = false;
  // Line info: the kernel's debug scope, or null when GpuOptions::line_info is off. Each op's
  // instructions carry its IR location (a device function's ops, inlined, carry their own).
  llvm::DISubprogram* scope_ = nullptr;
  void start_line_info();
  std::map<std::string, Coord> thread_coords_;  // per layout: the thread's part of its coordinates
  // The function being lowered (the kernel, or a device function being inlined) and its values.
  const ir::Function* f_ = nullptr;
  std::vector<Val>* vals_ = nullptr;
  std::vector<Val> ret_;  // `return` values of the function being inlined
  int depth_ = 0;
  // Axis info of each function lowered (device functions get conservative facts).
  std::map<const ir::Function*, std::unique_ptr<passes::AxisInfoAnalysis>> axis_;
  const passes::AxisInfoAnalysis* axis() const;
};

}  // namespace tri::codegen::nvptx::detail
