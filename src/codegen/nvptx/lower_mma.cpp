// dot on tensor cores: mma.sync.aligned.m16n8k16 (sm_80+) for f16 and bf16 operands into an f32
// accumulator.
//
// The three operands get the layouts of the instruction's fragments (PTX ISA, "Matrix Fragments
// for mma.m16n8k16"), written as the bases of layout.h: with g = lane / 4 and t = lane % 4, a
// warp's 16x8 accumulator tile gives thread (g, t) the elements (g, 2t), (g, 2t+1), (g+8, 2t),
// (g+8, 2t+1) in its registers 0..3, so register bit 0 is column 1, bit 1 is row 8, lane bits
// 0-1 are columns 2 and 4, lane bits 2-4 rows 1, 2 and 4. The A (16x16) and B (16x8) fragments
// are the same kind of map. Warps tile M (wm warps) and N (wn warps); what remains of the block
// repeats in registers (more register bits). A is replicated over the warps along N and B over
// those along M (zero bases), which the layouts say and the conversions honour.
//
// The operands go through shared memory: each thread writes its part of A and B (16 bytes at a
// time where its layout holds 8 consecutive elements) into row-major tiles whose 16-byte chunks
// are XOR-swizzled by row, and each warp reads its fragments back with ldmatrix (A) and
// ldmatrix.trans (B, stored k-major), which the swizzle keeps free of bank conflicts. The
// accumulator stays in registers in the C layout; a loop-carried accumulator keeps it across
// iterations (lower_control.cpp asks mma_layouts for it).
//
// On sm_90a a dot whose block fits warpgroups runs on wgmma instead (lower_dot_wgmma, at the end
// of this file). tf32, i8 and f8 operands and batched (3-D) dots run on mma.sync with their
// fragments converted in registers (lower_dot_mma_regs, at the end). Not yet: TMA, wgmma with A
// in registers. Shapes below one instruction tile, and the types no instruction takes, use the
// CUDA-core path (lower_reduce.cpp); KernelInfo::notes says which path each dot took.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen/nvptx/lower_impl.h"
#include "codegen/scalar_ops.h"

namespace tri::codegen::nvptx::detail {
namespace {

int log2i(int64_t v) {
  int k = 0;
  while ((int64_t(1) << k) < v) ++k;
  return k;
}

Basis at(int64_t row, int64_t col) { return Basis{row, col}; }

// The accumulator of an M x N dot on wgmma with wgm x wgn warpgroups (mma_layouts): mma.sync's
// 16 x 8 fragments, N / wgn / 8 of them along the columns in registers, the 64-row slices of a
// warpgroup repeating in more registers; warps 16 rows apart, warpgroups 64 rows, then N / wgn
// columns, apart.
Layout wgmma_c_layout(int64_t M, int64_t N, int wgm, int wgn) {
  const int64_t nw = N / wgn, mrep = M / (64 * wgm);
  Layout c;
  c.shape = {M, N};
  c.reg = {at(0, 1), at(8, 0)};
  for (int i = 0; i < log2i(nw / 8); ++i) c.reg.push_back(at(0, 8 * (int64_t(1) << i)));
  for (int i = 0; i < log2i(mrep); ++i) c.reg.push_back(at(64 * wgm * (int64_t(1) << i), 0));
  c.lane = {at(0, 2), at(0, 4), at(1, 0), at(2, 0), at(4, 0)};
  c.warp = {at(16, 0), at(32, 0)};
  for (int i = 0; i < log2i(wgm); ++i) c.warp.push_back(at(64 * (int64_t(1) << i), 0));
  for (int i = 0; i < log2i(wgn); ++i) c.warp.push_back(at(0, nw * (int64_t(1) << i)));
  return c;
}

// Warps over an M x N accumulator of 16 x 8 tiles: along the larger remaining extent (in tiles)
// first, or along M first when `m_first`; warps left over hold copies.
void split_warps(int64_t M, int64_t N, int num_warps, bool m_first, int* wm, int* wn) {
  *wm = *wn = 1;
  while (*wm * *wn < num_warps) {
    const bool m_ok = M / (16 * *wm) >= 2, n_ok = N / (8 * *wn) >= 2;
    if (m_ok && (m_first || !n_ok || M / (16 * *wm) >= N / (8 * *wn))) *wm *= 2;
    else if (n_ok) *wn *= 2;
    else break;
  }
}

// The fragment layouts of mma.sync m16n8k(8 elems) for an M x K by K x N dot (with a leading
// batch dimension of nb when `batched`), `elems` operand elements packed per 32-bit register,
// wm x wn warps (split_warps) of num_warps. With g = lane / 4 and t = lane % 4 (PTX ISA,
// "Matrix Fragments for mma.m16n8k8 / k16 / k32"): A register q (0..3) holds row g + 8 (q & 1),
// columns (q >> 1) k/2 + elems t .. + elems-1; B register q (0..1) rows q k/2 + elems t .. of
// column g; the accumulator's register bit 0 is column 1, bit 1 row 8, lane bits 0-1 columns 2
// and 4, lane bits 2-4 rows 1, 2 and 4. What remains of the block repeats in more register bits
// (M and N, then K, then the batch); A is replicated over the warps along N and B over those
// along M (zero bases).
void mma_sync_layouts(bool batched, int64_t nb, int64_t M, int64_t N, int64_t K, int elems, int wm, int wn,
                      int num_warps, Layout* a, Layout* b, Layout* c) {
  const int64_t KI = 8 * elems, mr = M / (16 * wm), nr = N / (8 * wn), kr = K / KI;
  auto at = [&](int64_t bt, int64_t r, int64_t col) { return batched ? Basis{bt, r, col} : Basis{r, col}; };
  auto shaped = [&](int64_t r, int64_t col) { return batched ? Shape{nb, r, col} : Shape{r, col}; };
  *a = Layout();
  *b = Layout();
  *c = Layout();
  c->shape = shaped(M, N);
  a->shape = shaped(M, K);
  b->shape = shaped(K, N);
  c->reg = {at(0, 0, 1), at(0, 8, 0)};
  for (int i = 0; i < log2i(nr); ++i) c->reg.push_back(at(0, 0, 8 * wn * (int64_t(1) << i)));
  for (int i = 0; i < log2i(mr); ++i) c->reg.push_back(at(0, 16 * wm * (int64_t(1) << i), 0));
  c->lane = {at(0, 0, 2), at(0, 0, 4), at(0, 1, 0), at(0, 2, 0), at(0, 4, 0)};
  for (int i = 0; i < log2i(elems); ++i) a->reg.push_back(at(0, 0, int64_t(1) << i));
  a->reg.push_back(at(0, 8, 0));
  a->reg.push_back(at(0, 0, KI / 2));
  for (int i = 0; i < log2i(mr); ++i) a->reg.push_back(at(0, 16 * wm * (int64_t(1) << i), 0));
  for (int i = 0; i < log2i(kr); ++i) a->reg.push_back(at(0, 0, KI * (int64_t(1) << i)));
  a->lane = {at(0, 0, elems), at(0, 0, 2 * elems), at(0, 1, 0), at(0, 2, 0), at(0, 4, 0)};
  for (int i = 0; i < log2i(elems); ++i) b->reg.push_back(at(0, int64_t(1) << i, 0));
  b->reg.push_back(at(0, KI / 2, 0));
  for (int i = 0; i < log2i(nr); ++i) b->reg.push_back(at(0, 0, 8 * wn * (int64_t(1) << i)));
  for (int i = 0; i < log2i(kr); ++i) b->reg.push_back(at(0, KI * (int64_t(1) << i), 0));
  b->lane = {at(0, elems, 0), at(0, 2 * elems, 0), at(0, 0, 1), at(0, 0, 2), at(0, 0, 4)};
  for (Layout* x : {c, a, b})
    for (int i = 0; i < log2i(nb); ++i) x->reg.push_back(at(int64_t(1) << i, 0, 0));
  const int wbits = log2i(num_warps), wmb = log2i(wm), wnb = log2i(wn);
  for (int i = 0; i < wbits; ++i) {
    if (i < wmb) {
      const int64_t m = 16 * (int64_t(1) << i);
      c->warp.push_back(at(0, m, 0));
      a->warp.push_back(at(0, m, 0));
      b->warp.push_back(at(0, 0, 0));
    } else if (i < wmb + wnb) {
      const int64_t n = 8 * (int64_t(1) << (i - wmb));
      c->warp.push_back(at(0, 0, n));
      a->warp.push_back(at(0, 0, 0));
      b->warp.push_back(at(0, 0, n));
    } else {
      for (Layout* x : {c, a, b}) x->warp.push_back(at(0, 0, 0));
    }
  }
}

}  // namespace

bool GpuLowering::mma_layouts(const ir::Function& fn, OpId o, MmaLayouts* out, std::string* why) const {
  const ir::OpData& op = fn.op(o);
  if (op.code != Opcode::Dot) return false;
  auto dtype = [&](ValueId v) { return m_.types.get(m_.types.get(fn.type_of(v)).elem).scalar; };
  auto dims = [&](ValueId v) { return shape(fn.type_of(v)); };
  const Scalar ta = dtype(op.operands[0]), tb = dtype(op.operands[1]), tc = dtype(op.results[0]);
  const Shape sa = dims(op.operands[0]), sb = dims(op.operands[1]);
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (opt_.sm < 80) return no("tensor cores need sm_80 or newer");
  if (sa.size() != 2) return no("batched (3-D) dot is not on tensor cores yet");
  // 8- and 32-bit operands (f8, i8, f32 as tf32) take their tiles from shared memory too, read
  // K-major (MmaLayouts::eb). f8 runs on wgmma only with precision=fast: sm_90's f8 wgmma keeps
  // about 14 significant bits in its accumulator (docs/ir.md), which an ieee dot does not allow;
  // mma.sync's f8 sum is exact enough for it.
  const int64_t prec = enum_attr(fn, o, "precision");
  const bool f8 = ta == Scalar::F8E4M3 || ta == Scalar::F8E5M2;
  const bool tf32 = ta == Scalar::F32 && prec == 1;
  const bool i8 = ta == Scalar::I8 && tc == Scalar::I32;
  const int eb = f8 || i8 ? 1 : tf32 ? 4 : 2;
  const bool float_in = ta == Scalar::F16 || ta == Scalar::BF16 || f8 || tf32;
  if (ta != tb || !((float_in && tc == Scalar::F32) || i8))
    return no("operands " + std::string(ir::scalar_name(ta)) + "/" + ir::scalar_name(tb) + " into " +
              ir::scalar_name(tc) + (ta == Scalar::F32 ? " without precision=tf32" : "") + " are not on tensor cores");
  const int64_t M = sa[0], K = sa[1], N = sb[1];
  const int64_t kstep = 32 / eb;  // k of one instruction: 32 bytes of each row
  if (M < 16 || N < 8 || K < kstep) return no("the block is smaller than one m16n8k" + std::to_string(kstep) + " tile");
  if (K % kstep != 0) return no("K is not a multiple of one instruction's k (" + std::to_string(kstep) + ")");
  // Warps: split the larger remaining extent (in instruction tiles) first; but a dot that shares
  // its block with another dot (attention's two) puts all warps along M first, so that every
  // dot of the block gives a row to the same warp and the row statistics between them (max,
  // sum, rescaling) stay inside warps, as Triton does for chained dots.
  bool chained = false;
  for (OpId x : fn.block(op.parent).ops)
    if (x != o && fn.op(x).code == Opcode::Dot) chained = true;
  MmaLayouts l;
  split_warps(M, N, opt_.num_warps, chained, &l.wm, &l.wn);
  mma_sync_layouts(false, 1, M, N, K, 4 / eb, l.wm, l.wn, opt_.num_warps, &l.a, &l.b, &l.c);
  // Hopper: warpgroups of 4 consecutive warps, each warp 16 rows of its warpgroup's 64-row
  // slices; warpgroups along M first (every one keeps at least 64 rows), then along N, where
  // each takes a contiguous range of columns (a multiple of 64, so that it starts on a slab of
  // a row-major B tile: mma_smem_offset). The accumulator of m64nNk16 gives each warp the same
  // 16 x 8 fragments as mma.sync's, one per 8 columns, so the layout below is the mma layout
  // with the warps placed that way.
  const int nwg = opt_.num_warps / 4;
  if (opt_.wgmma && opt_.sm >= 90 && opt_.sm_a && opt_.num_warps % 4 == 0 && M % 64 == 0 && N % 8 == 0 &&
      (!f8 || prec == 2) && !i8) {
    int wgm = 1;
    while (wgm * 2 <= nwg && M / (64 * wgm * 2) >= 1) wgm *= 2;
    const int wgn = nwg / wgm;
    const int64_t nw = N / wgn;
    if (N % wgn == 0 && nw % 8 == 0 && (wgn == 1 || nw % 64 == 0)) {
      const int64_t mrep = M / (64 * wgm);
      l.wgmma = true;
      l.wgm = wgm;
      l.wgn = wgn;
      l.wm = 4 * wgm;
      l.wn = wgn;
      (void)mrep;
      l.c = wgmma_c_layout(M, N, wgm, wgn);
    }
  }
  if (f8 && !l.wgmma && (opt_.sm < 89 || opt_.ptx_version_max < 84))
    return no("f8 on tensor cores needs sm_89 and PTX ISA 8.4 (the driver accepts " +
              std::to_string(opt_.ptx_version_max / 10) + "." + std::to_string(opt_.ptx_version_max % 10) + ")");
  l.eb = eb;
  *out = std::move(l);
  return true;
}

bool GpuLowering::operand_col_major(const MmaLayouts& l, int k, const Val& v) {
  if (l.eb != 2) return k == 1;  // K-major: A's rows, B's columns run along k
  return prefers_col_major(v);
}

// The swizzle: chunk c of row r is stored at chunk c ^ ((r / rows_per_128B) % min(chunks_per_row,
// 8)), so that ldmatrix's eight row reads of one 8x8 matrix hit eight different bank groups.
// Rows longer than 128 bytes are cut into slabs of 128 bytes (64 16-bit columns, 128 8-bit, 32
// 32-bit), each stored whole (all its rows of 128 bytes) before the next: these are the layouts
// of wgmma's shared-memory operands with 32-, 64- and 128-byte swizzles (a tile's base is
// 1024-aligned), and ldmatrix reads them as well.
llvm::Value* GpuLowering::mma_smem_offset(const SmemTile& tile, llvm::Value* row, llvm::Value* col) {
  SmemTile t = tile;
  if (t.col_major) {  // the row-major tile of the transpose
    std::swap(row, col);
    std::swap(t.rows, t.cols);
  }
  const int64_t slab_cols = 128 / t.eb, chunk_elems = 16 / t.eb;
  llvm::Value* slab_base = t.base;
  if (t.cols > slab_cols) {
    llvm::Value* slab = b_.CreateLShr(col, log2i(slab_cols));
    slab_base = b_.CreateAdd(t.base, b_.CreateMul(slab, b_.getInt32(static_cast<uint32_t>(t.rows * 128))));
    col = b_.CreateAnd(col, b_.getInt32(static_cast<uint32_t>(slab_cols - 1)));
    t.cols = slab_cols;
  }
  const int64_t row_bytes = t.cols * t.eb, chunks = row_bytes / 16;
  const int64_t rows_per_line = std::max<int64_t>(1, 128 / row_bytes);
  const int64_t phases = std::min<int64_t>(chunks, 8);
  const int cb = log2i(chunk_elems);
  llvm::Value* chunk = b_.CreateLShr(col, cb);
  llvm::Value* x = b_.CreateURem(b_.CreateUDiv(row, b_.getInt32(static_cast<uint32_t>(rows_per_line))),
                                 b_.getInt32(static_cast<uint32_t>(phases)));
  llvm::Value* phys =
      b_.CreateOr(b_.CreateShl(b_.CreateXor(chunk, x), cb), b_.CreateAnd(col, b_.getInt32(static_cast<uint32_t>(chunk_elems - 1))));
  llvm::Value* elem = b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(t.cols))), phys);
  return b_.CreateAdd(slab_base, b_.CreateShl(elem, log2i(t.eb)));
}

int64_t GpuLowering::mma_smem_offset_of(const SmemTile& tile, int64_t row, int64_t col) {
  SmemTile t = tile;
  if (t.col_major) {
    std::swap(row, col);
    std::swap(t.rows, t.cols);
  }
  const int64_t slab_cols = 128 / t.eb, chunk_elems = 16 / t.eb;
  int64_t slab_base = 0;
  if (t.cols > slab_cols) {
    slab_base = (col / slab_cols) * t.rows * 128;
    col %= slab_cols;
    t.cols = slab_cols;
  }
  const int64_t row_bytes = t.cols * t.eb, chunks = row_bytes / 16;
  const int64_t rows_per_line = std::max<int64_t>(1, 128 / row_bytes);
  const int64_t phases = std::min<int64_t>(chunks, 8);
  const int64_t phys = (((col / chunk_elems) ^ ((row / rows_per_line) % phases)) * chunk_elems) | (col % chunk_elems);
  return slab_base + (row * t.cols + phys) * t.eb;
}

std::vector<llvm::Value*> GpuLowering::mma_smem_addresses(const SmemTile& t, const Layout& l) {
  const Coord tc = coords(l, 0);
  llvm::Value* thread_off = nullptr;
  std::vector<llvm::Value*> out(static_cast<size_t>(l.nregs()), nullptr);
  const int64_t nthreads = int64_t(32) << l.warp.size();
  for (int64_t r = 0; r < l.nregs(); ++r) {
    const Basis d = l.reg_coord(r);
    int64_t k = 0;
    bool constant = true;
    for (int64_t th = 0; th < nthreads && constant; ++th) {
      const Basis c = l.thread_coord(th & 31, th >> 5);
      const int64_t delta = mma_smem_offset_of(t, c[0] ^ d[0], c[1] ^ d[1]) - mma_smem_offset_of(t, c[0], c[1]);
      if (th == 0) k = delta;
      constant = delta == k;
    }
    if (!constant) {
      Coord c = coords(l, r);
      out[static_cast<size_t>(r)] = smem_ptr(mma_smem_offset(t, c[0], c[1]));
      continue;
    }
    if (!thread_off) thread_off = mma_smem_offset(t, tc[0], tc[1]);
    out[static_cast<size_t>(r)] = smem_ptr(k ? b_.CreateAdd(thread_off, b_.getInt32(static_cast<uint32_t>(k))) : thread_off);
  }
  return out;
}

// Writes a 16-bit operand into its swizzled tile, each thread's run of consecutive elements
// along the columns (up to 8: 16 bytes) as one store.
bool GpuLowering::prefers_col_major(const Val& v) {
  if (v.kind == Val::Kind::Smem) return v.smem_col_major;
  return v.kind == Val::Kind::Dist && v.lay.rank() == 2 && !v.lay.reg.empty() && v.lay.reg[0] == Basis{1, 0};
}

void GpuLowering::mma_store_operand(const Val& v, const SmemTile& t) {
  Val d = as_dist(v);
  const Layout& l = d.lay;
  int vec = 1;
  for (size_t i = 0; i < l.reg.size() && vec < 16 / t.eb; ++i) {
    const Basis unit = t.col_major ? Basis{int64_t(1) << i, 0} : Basis{0, int64_t(1) << i};
    if (l.reg[i] != unit) break;
    vec *= 2;
  }
  const uint64_t dup = replicated_reg_mask(l);
  llvm::Type* it = b_.getIntNTy(static_cast<unsigned>(8 * t.eb));
  llvm::Type* vt = llvm::FixedVectorType::get(it, static_cast<unsigned>(vec));
  emit_if(owner(l), [&] {
    for (int64_t r = 0; r < l.nregs(); r += vec) {
      if (r & dup) continue;
      Coord c = coords(l, r);
      llvm::Value* x = llvm::PoisonValue::get(vt);
      for (int i = 0; i < vec; ++i) x = b_.CreateInsertElement(x, b_.CreateBitCast(to_mem(d.regs[r + i], d.et), it), i);
      b_.CreateAlignedStore(vec == 1 ? b_.CreateExtractElement(x, uint64_t(0)) : x, smem_ptr(mma_smem_offset(t, c[0], c[1])),
                            llvm::Align(static_cast<uint64_t>(t.eb * vec)));
    }
  });
  // These generic-proxy writes become visible to wgmma (the async proxy) after this fence and
  // the barrier that precedes every dot's reads. A fence before every barrier instead would sit
  // in each pipelined loop iteration, where it costs a MEMBAR.ALL.CTA that waits for the
  // iteration's cp.async copies still in flight.
  if (wgmma_used_) inline_asm("fence.proxy.async.shared::cta;", "~{memory}", b_.getVoidTy(), {});
}

bool GpuLowering::smem_carried(BlockId body, ValueId arg, Shape* shape, int* need_col_major) {
  int uses_here = 0;
  MmaLayouts ml;
  const std::vector<OpId>& ops = f_->block(body).ops;
  // The storage K-major operands ask for (-1: any), and whether two uses disagree.
  int need = -1;
  bool conflict = false;
  auto require = [&](bool col_major) {
    if (need >= 0 && need != int(col_major)) conflict = true;
    need = col_major;
  };
  bool yielded = false, read_elementwise = false;
  // An op lower_elementwise lowers.
  auto elementwise = [&](OpId o) {
    const ir::OpRule r = ir::op_info(f_->op(o).code).rule;
    return r == ir::OpRule::EwNum || r == ir::OpRule::EwInt || r == ir::OpRule::EwFloat || r == ir::OpRule::Cast;
  };
  // A dot operand here, directly or through a transpose (Triton's `k.T`) whose every use is one.
  auto dot_operand = [&](OpId o, size_t k) { return f_->op(o).code == Opcode::Dot && k <= 1 && mma_layouts(*f_, o, &ml); };
  auto transposed_for_dots = [&](OpId o) {
    const ir::OpData& op = f_->op(o);
    if (op.code != Opcode::Permute || f_->attr(o, "order").ints != std::vector<int64_t>{1, 0}) return false;
    const ValueId t = op.results[0];
    int seen = 0;
    for (OpId u : ops) {
      const ir::OpData& uop = f_->op(u);
      for (size_t k = 0; k < uop.operands.size(); ++k) {
        if (uop.operands[k] != t) continue;
        if (!dot_operand(u, k)) return false;
        if (ml.eb != 2) require(k == 0);  // the transpose reads the tile the other way round
        ++seen;
      }
    }
    return seen > 0 && seen == uses(t);
  };
  for (OpId o : ops) {
    const ir::OpData& op = f_->op(o);
    for (size_t k = 0; k < op.operands.size(); ++k) {
      if (op.operands[k] != arg) continue;
      const bool passed_on = o == ops.back();  // the yield: lower_control.cpp checks where to
      if (passed_on) {
        yielded = true;
      } else if (dot_operand(o, k)) {
        if (ml.eb != 2) require(k == 1);
      } else if (elementwise(o)) {
        // Read into registers where it is used (lower_elementwise), as Triton's pipeliner keeps
        // a prefetched tile in shared memory until its use: not held in registers across the
        // iteration (fla's chunk kernels scale their q tile before the dot).
        read_elementwise = true;
      } else if (!transposed_for_dots(o)) {
        return false;
      }
      ++uses_here;
    }
  }
  // Every use is one of those (none in nested regions).
  if (uses_here == 0 || uses_here != uses(arg) || conflict) return false;
  // A tile read by elementwise ops is brought into registers there (lower_elementwise), so it
  // must not be passed on too; 16-bit tiles only (other sizes are K-major dot operands).
  if (read_elementwise && (yielded || elem_bytes(etype(f_->type_of(arg))) != 2)) return false;
  const EType e = etype(f_->type_of(arg));
  if (e.ptr || e.s == Scalar::I1 || elem_bytes(e) > 4 || this->shape(f_->type_of(arg)).size() != 2) return false;
  *shape = this->shape(f_->type_of(arg));
  if (need_col_major) *need_col_major = need;
  return true;
}

uint64_t GpuLowering::alloc_persistent(uint64_t bytes) {
  const uint64_t at = persist_bytes_;
  persist_bytes_ += (bytes + 1023) / 1024 * 1024;  // wgmma's swizzled tiles start on 1024 bytes
  persist_peak_ = std::max(persist_peak_, persist_bytes_);
  return at;
}

llvm::Value* GpuLowering::persistent_base() {
  if (!persist_base_gv_)
    persist_base_gv_ = new llvm::GlobalVariable(*mod_, b_.getInt32Ty(), false, llvm::GlobalValue::PrivateLinkage,
                                                b_.getInt32(0), "tri_smem_persistent_base");
  return b_.CreateLoad(b_.getInt32Ty(), persist_base_gv_);
}

Status GpuLowering::lower_dot_mma(OpId o, const MmaLayouts& l) {
  const ir::OpData& op = f_->op(o);
  // An operand written to shared memory before the loop (lower_for) is read there.
  auto in_smem = [&](ValueId v) {
    Val x = val(v);
    auto it = smem_hoisted_.find(v);
    if (x.kind != Val::Kind::Smem && it != smem_hoisted_.end()) {
      x.smem_col_major = operand_col_major(l, v == op.operands[0] ? 0 : 1, x);
      x.kind = Val::Kind::Smem;
      x.smem_base = it->second;
    }
    return x;
  };
  Val av = in_smem(op.operands[0]);
  Val bv = in_smem(op.operands[1]);
  // A K-major operand (l.eb != 2) in shared memory the other way round goes through registers
  // to the scratch, stored K-major.
  if (av.kind == Val::Kind::Smem && av.smem_col_major != operand_col_major(l, 0, av)) av = as_dist(av);
  if (bv.kind == Val::Kind::Smem && bv.smem_col_major != operand_col_major(l, 1, bv)) bv = as_dist(bv);
  const Val& cv = val(op.operands[2]);
  const bool bf16 = av.et.s == Scalar::BF16;
  const int64_t M = l.c.shape[0], N = l.c.shape[1], K = l.a.shape[1];
  const int64_t kstep = l.kstep(), chunk = 16 / l.eb;  // k per instruction, elements per 16 bytes
  const int64_t mr = M / (16 * l.wm), nr = N / (8 * l.wn), kr = K / kstep;
  std::vector<llvm::Value*> acc = regs_in(cv, l.c);
  // Both operands in shared memory: a loop-carried tile is there already (lower_control.cpp);
  // the others are written to the scratch, A [M x K] at 0 and B [K x N] after it.
  SmemTile ta{av.smem_base, M, K, operand_col_major(l, 0, av), l.eb}, tb{bv.smem_base, K, N, operand_col_major(l, 1, bv), l.eb};
  // wgmma can take A from registers holding it the way a wgmma accumulator of the same rows
  // does (attention's P, computed from the first dot's result): then it skips shared memory.
  std::vector<llvm::Value*> a_regs;
  if (l.wgmma && l.eb == 2 && l.wgn == 1 && av.kind == Val::Kind::Dist && K % 16 == 0 &&
      av.lay == wgmma_c_layout(M, K, l.wgm, 1))
    a_regs = av.regs;
  if ((av.kind != Val::Kind::Smem && a_regs.empty()) || bv.kind != Val::Kind::Smem) {
    const uint64_t b_at = (static_cast<uint64_t>(M * K * l.eb) + 1023) / 1024 * 1024;  // 1024-aligned for wgmma
    need_smem(b_at + static_cast<uint64_t>(K * N * l.eb));
    barrier();  // earlier readers of the scratch are done
    if (av.kind != Val::Kind::Smem && a_regs.empty()) {
      ta.base = b_.getInt32(0);
      mma_store_operand(av, ta);
    }
    if (bv.kind != Val::Kind::Smem) {
      tb.base = b_.getInt32(static_cast<uint32_t>(b_at));
      mma_store_operand(bv, tb);
    }
    barrier();
  }
  // A group left in flight (lower_for) must not read the scratch, which the next op may reuse:
  // an A that went there completes its group here.
  if (av.kind != Val::Kind::Smem && a_regs.empty()) async_wgmma_.erase(o);
  if (l.wgmma) return lower_dot_wgmma(o, l, ta, tb, std::move(acc), a_regs);
  // This warp's place: the low warp bits tile M, the next ones N (mma_layouts); the rest hold copies.
  const int wmb = log2i(l.wm);
  llvm::Value* warp_m = b_.CreateAnd(warp_, b_.getInt32(static_cast<uint32_t>(l.wm - 1)));
  llvm::Value* warp_n = b_.CreateAnd(b_.CreateLShr(warp_, wmb), b_.getInt32(static_cast<uint32_t>(l.wn - 1)));
  llvm::Value* j = b_.CreateLShr(lane_, 3);  // which 8x8 matrix this lane addresses
  llvm::Value* r8 = b_.CreateAnd(lane_, b_.getInt32(7));
  llvm::Value* j_lo = b_.CreateAnd(j, b_.getInt32(1));
  llvm::Value* j_hi = b_.CreateLShr(j, 1);
  auto ldm = [&](llvm::Intrinsic::ID id, llvm::Value* off, int n) {
    llvm::Value* ptr = smem_ptr(off);
    llvm::Value* r = b_.CreateIntrinsic(id, {ptr->getType()}, {ptr});  // overloaded on the pointer
    std::vector<llvm::Value*> out;
    for (int i = 0; i < n; ++i) out.push_back(n == 1 ? r : b_.CreateExtractValue(r, {static_cast<unsigned>(i)}));
    return out;
  };
  // The address lane j*8 + r8 gives: row r8 of the stored 8x8 matrix j, whose logical origin
  // is (r0, c0): a logical row in a row-major tile, a logical column in a column-major one.
  auto lane_addr = [&](const SmemTile& t, llvm::Value* r0, llvm::Value* c0) {
    return t.col_major ? mma_smem_offset(t, r0, b_.CreateAdd(c0, r8)) : mma_smem_offset(t, b_.CreateAdd(r0, r8), c0);
  };
  // A (mi, ki) as 4 registers: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15) (j bit 0: rows + 8,
  // bit 1: k + 8), with ldmatrix from a row-major tile and ldmatrix.trans from a column-major one.
  std::vector<std::vector<llvm::Value*>> a(static_cast<size_t>(mr * kr));
  for (int64_t mi = 0; mi < mr; ++mi)
    for (int64_t ki = 0; ki < kr; ++ki) {
      llvm::Value* r0 = b_.CreateAdd(b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(mi * 16 * l.wm)), b_.CreateShl(warp_m, 4)),
                                     b_.CreateShl(j_lo, 3));
      llvm::Value* c0 = b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(ki * kstep)),
                                     b_.CreateMul(j_hi, b_.getInt32(static_cast<uint32_t>(chunk))));
      a[mi + mr * ki] = ldm(ta.col_major ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                                         : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16,
                            lane_addr(ta, r0, c0), 4);
    }
  // B (nj, ki) as 2 registers, two n-tiles per ldmatrix.x4: matrices (k 0-7 | 8-15) of tile nj,
  // then of tile nj + 1 (j bit 0: k + 8, bit 1: the second tile); .trans from a row-major tile
  // (k-major rows), plain from a column-major one.
  std::vector<std::vector<llvm::Value*>> bb(static_cast<size_t>(nr * kr));
  auto n_base = [&](int64_t nj) {
    return b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(nj * 8 * l.wn)), b_.CreateShl(warp_n, 3));
  };
  for (int64_t ki = 0; ki < kr; ++ki)
    for (int64_t nj = 0; nj < nr; nj += 2) {
      llvm::Value* r0 = b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(ki * kstep)),
                                     b_.CreateMul(j_lo, b_.getInt32(static_cast<uint32_t>(chunk))));
      const bool tr = !tb.col_major;
      if (nj + 1 < nr) {
        llvm::Value* c0 = b_.CreateSelect(b_.CreateICmpNE(j_hi, b_.getInt32(0)), n_base(nj + 1), n_base(nj));
        std::vector<llvm::Value*> r = ldm(tr ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                                             : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16,
                                          lane_addr(tb, r0, c0), 4);
        bb[nj + nr * ki] = {r[0], r[1]};
        bb[nj + 1 + nr * ki] = {r[2], r[3]};
      } else {
        // Lanes 16-31 of an .x2 give no addresses; theirs are computed anyway and ignored.
        bb[nj + nr * ki] = ldm(tr ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16
                                  : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16,
                               lane_addr(tb, r0, n_base(nj)), 2);
      }
    }
  // f16 and bf16 through LLVM's intrinsics; the other types' instructions as inline asm (their
  // fragments are the same registers: 4 of A, 2 of B, 4 accumulators).
  const Scalar st = av.et.s;
  const bool int_acc = st == Scalar::I8;
  std::string asm_text;
  if (l.eb != 2) {
    const std::string t = st == Scalar::F32 ? "tf32" : st == Scalar::F8E4M3 ? "e4m3" : st == Scalar::F8E5M2 ? "e5m2" : "s8";
    if (st == Scalar::F8E4M3 || st == Scalar::F8E5M2) min_ptx_version_ = std::max(min_ptx_version_, 84);
    asm_text = "mma.sync.aligned.m16n8k" + std::to_string(kstep) + ".row.col." + (int_acc ? "s32" : "f32") + "." + t + "." +
               t + "." + (int_acc ? "s32" : "f32") + " {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
  }
  llvm::Function* mma = l.eb != 2 ? nullptr
                                  : llvm::Intrinsic::getDeclaration(mod_, bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                                                               : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32);
  llvm::Type* acc_ty = int_acc ? b_.getInt32Ty() : b_.getFloatTy();
  const std::string cc = int_acc ? "r" : "f";
  const std::string cons = "=" + cc + ",=" + cc + ",=" + cc + ",=" + cc + ",r,r,r,r,r,r," + cc + "," + cc + "," + cc + "," + cc;
  llvm::Type* ret = llvm::StructType::get(c_, {acc_ty, acc_ty, acc_ty, acc_ty});
  for (int64_t ki = 0; ki < kr; ++ki)
    for (int64_t mi = 0; mi < mr; ++mi)
      for (int64_t nj = 0; nj < nr; ++nj) {
        llvm::Value** d = &acc[4 * (nj + nr * mi)];
        std::vector<llvm::Value*> args;
        llvm::Value* r = nullptr;
        if (mma) {
          llvm::FunctionType* ft = mma->getFunctionType();
          for (llvm::Value* x : a[mi + mr * ki]) args.push_back(b_.CreateBitCast(x, ft->getParamType(args.size())));
          for (llvm::Value* y : bb[nj + nr * ki]) args.push_back(b_.CreateBitCast(y, ft->getParamType(args.size())));
          for (int i = 0; i < 4; ++i) args.push_back(d[i]);
          r = b_.CreateCall(mma, args);
        } else {
          for (llvm::Value* x : a[mi + mr * ki]) args.push_back(b_.CreateBitCast(x, b_.getInt32Ty()));
          for (llvm::Value* y : bb[nj + nr * ki]) args.push_back(b_.CreateBitCast(y, b_.getInt32Ty()));
          for (int i = 0; i < 4; ++i) args.push_back(d[i]);
          r = inline_asm(asm_text, cons, ret, args, /*pure=*/true);
        }
        for (int i = 0; i < 4; ++i) d[i] = b_.CreateExtractValue(r, {static_cast<unsigned>(i)});
      }
  set(op.results[0], dist(EType{false, int_acc ? Scalar::I32 : Scalar::F32}, l.c, std::move(acc)));
  return Status::ok();
}

// ---- Hopper: wgmma.mma_async (sm_90a)
//
// A warpgroup (4 warps) multiplies a 64 x 16 piece of A by a 16 x n piece of B, both read from
// shared memory through 64-bit matrix descriptors (PTX ISA, "Matrix Descriptor Format"): the
// start address, the leading and stride byte offsets and the swizzle mode, all in 16-byte units.
// An operand is K-major when k runs along its stored rows (A row-major, B column-major) and
// MN-major otherwise (imm-trans). mma_smem_offset's tiles are wgmma's canonical layouts: rows of
// 32, 64 or 128 bytes swizzled in 16-byte chunks (modes 3, 2, 1), longer rows cut into slabs of
// 64 columns of 128-byte rows. Per layout (LBO, SBO):
//   K-major:  8-row groups are SBO = 8 * row bytes apart; LBO is unused (1); a k16 step moves the
//             start 32 bytes along the row (or to the next slab).
//   MN-major: 8 k-rows are SBO = 8 * row bytes apart; slabs of 64 MN elements are LBO apart.
llvm::Value* GpuLowering::wgmma_desc(const SmemTile& t, bool is_a, llvm::Value* mn0, int64_t k0) {
  // The stored tile: rows are the MN dimension for a K-major operand, k for an MN-major one.
  const bool k_major = is_a ? !t.col_major : t.col_major;
  const int64_t mn_extent = is_a ? t.rows : t.cols;
  const int64_t k_extent = is_a ? t.cols : t.rows;
  const int64_t row_elems = k_major ? k_extent : mn_extent;
  const int64_t stored_rows = k_major ? mn_extent : k_extent;
  const int64_t slab_cols = 128 / t.eb;
  const bool slabs = row_elems > slab_cols;
  const int64_t row_bytes = slabs ? 128 : row_elems * t.eb;
  const uint64_t mode = row_bytes == 128 ? 1 : row_bytes == 64 ? 2 : 3;
  // The start address is a part that varies (the tile's buffer, the warpgroup's rows or slab)
  // plus a constant (k0's offset); both are multiples of 16, and the whole is below 2^18 (the
  // shared window), so the descriptor of (mn0, k0) is that of (mn0, 0) plus the constant / 16:
  // the k steps of one dot share one computed descriptor and differ by an immediate add.
  llvm::Value* var = b_.CreateAdd(b_.CreatePtrToInt(smem_, b_.getInt32Ty()), t.base);
  uint64_t koff = 0;
  uint64_t lbo = 1, sbo = static_cast<uint64_t>(8 * row_bytes);
  if (k_major) {
    // Row mn0 of the slab holding k0.
    const int64_t slab = slabs ? k0 / slab_cols : 0, kin = slabs ? k0 % slab_cols : k0;
    var = b_.CreateAdd(var, b_.CreateMul(mn0, b_.getInt32(static_cast<uint32_t>(row_bytes))));
    koff = static_cast<uint64_t>(slab * stored_rows * 128 + kin * t.eb);
  } else {
    // Row k0 of the slab holding mn0 (mn0 starts a slab: mma_layouts' warpgroup columns).
    if (slabs) var = b_.CreateAdd(var, b_.CreateMul(b_.CreateLShr(mn0, 6), b_.getInt32(static_cast<uint32_t>(stored_rows * 128))));
    koff = static_cast<uint64_t>(k0 * row_bytes);
    if (slabs) lbo = static_cast<uint64_t>(stored_rows * 128);
  }
  llvm::Value* addr = b_.CreateZExt(b_.CreateAnd(b_.CreateLShr(var, 4), b_.getInt32(0x3fff)), b_.getInt64Ty());
  const uint64_t fixed = ((lbo >> (lbo == 1 ? 0 : 4)) & 0x3fff) << 16 | ((sbo >> 4) & 0x3fff) << 32 | mode << 62;
  llvm::Value* desc = b_.CreateOr(addr, b_.getInt64(fixed));
  return koff ? b_.CreateAdd(desc, b_.getInt64(koff >> 4)) : desc;
}

std::vector<llvm::Value*> GpuLowering::wgmma_wait(int pending, std::vector<llvm::Value*> regs) {
  const int n = static_cast<int>(regs.size());
  std::string c;
  for (int i = 0; i < n; ++i) c += std::string(i ? "," : "") + (regs[i]->getType()->isFloatTy() ? "=f" : "=r");
  for (int i = 0; i < n; ++i) c += "," + std::to_string(i);
  c += std::string(n ? "," : "") + "~{memory}";
  std::vector<llvm::Type*> ts;
  for (llvm::Value* r : regs) ts.push_back(r->getType());
  llvm::Type* ret = n == 0 ? b_.getVoidTy() : n == 1 ? ts[0] : static_cast<llvm::Type*>(llvm::StructType::get(c_, ts));
  llvm::Value* r = inline_asm("wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";", c, ret, regs);
  if (n == 1) return {r};
  for (int i = 0; i < n; ++i) regs[i] = b_.CreateExtractValue(r, {static_cast<unsigned>(i)});
  return regs;
}

Status GpuLowering::lower_dot_wgmma(OpId o, const MmaLayouts& l, const SmemTile& ta, const SmemTile& tb,
                                    std::vector<llvm::Value*> acc, const std::vector<llvm::Value*>& a_regs) {
  const ir::OpData& op = f_->op(o);
  const Scalar st = val(op.operands[0]).et.s;
  const int64_t M = l.c.shape[0], N = l.c.shape[1], K = ta.cols;  // logical shapes: A is M x K
  const int64_t nw = N / l.wgn, mrep = M / (64 * l.wgm);
  const int64_t n_inst = nw > 256 ? 256 : nw;  // columns per instruction
  const int64_t kstep = l.kstep();
  llvm::Value* wg = b_.CreateLShr(warp_, 2);
  llvm::Value* gm = b_.CreateAnd(wg, b_.getInt32(static_cast<uint32_t>(l.wgm - 1)));
  llvm::Value* gn = b_.CreateLShr(wg, log2i(l.wgm));
  const std::string ty = st == Scalar::BF16 ? "bf16" : st == Scalar::F16 ? "f16" : st == Scalar::F8E4M3 ? "e4m3"
                         : st == Scalar::F8E5M2 ? "e5m2" : "tf32";
  const int regs = static_cast<int>(n_inst / 2);  // f32 accumulator registers per instruction
  std::string dlist;
  for (int i = 0; i < regs; ++i) dlist += (i ? ", $" : "$") + std::to_string(i);
  const int ta_imm = ta.col_major ? 1 : 0, tb_imm = tb.col_major ? 0 : 1;
  const bool a_in_regs = !a_regs.empty();
  // Operands: the accumulators ($0..), then A (a descriptor, or 4 registers), B's descriptor, the
  // scale-d flag, and the accumulators again (tied).
  const int a_ops = a_in_regs ? 4 : 1;
  const int b_at = regs + a_ops, flag_at = b_at + 1;
  std::string a_text = "$" + std::to_string(regs);
  if (a_in_regs)
    a_text = "{$" + std::to_string(regs) + ", $" + std::to_string(regs + 1) + ", $" + std::to_string(regs + 2) + ", $" +
             std::to_string(regs + 3) + "}";
  const std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(flag_at) +
                           ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n_inst) + "k" + std::to_string(kstep) +
                           ".f32." + ty + "." + ty + " {" + dlist + "}, " + a_text + ", $" + std::to_string(b_at) + ", p, 1, 1" +
                           // Only 16-bit operands may be MN-major (the transpose immediates).
                           (l.eb != 2 ? std::string()
                                      : ", " + (a_in_regs ? std::string() : std::to_string(ta_imm) + ", ") + std::to_string(tb_imm)) +
                           ";\n}";
  std::string cons;
  for (int i = 0; i < regs; ++i) cons += "=f,";
  cons += a_in_regs ? "r,r,r,r,l,r" : "l,l,r";
  for (int i = 0; i < regs; ++i) cons += "," + std::to_string(i);
  // A's registers for rows mi, k 16ki..16ki+15: the accumulator fragments of columns 16ki..+7
  // and 16ki+8..+15 (four f32 registers each: rows g and g+8), packed in pairs of 16 bits.
  auto a_frag = [&](int64_t mi, int64_t ki) {
    const int64_t per_rep = (K / 8) * 4;
    auto at_reg = [&](int64_t chunk, int i) { return a_regs[static_cast<size_t>(mi * per_rep + chunk * 4 + i)]; };
    auto pack = [&](llvm::Value* x, llvm::Value* y) {
      llvm::Type* h = x->getType();
      llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(h, 2));
      v = b_.CreateInsertElement(v, x, uint64_t(0));
      v = b_.CreateInsertElement(v, y, uint64_t(1));
      return b_.CreateBitCast(v, b_.getInt32Ty());
    };
    return std::vector<llvm::Value*>{pack(at_reg(2 * ki, 0), at_reg(2 * ki, 1)), pack(at_reg(2 * ki, 2), at_reg(2 * ki, 3)),
                                     pack(at_reg(2 * ki + 1, 0), at_reg(2 * ki + 1, 1)),
                                     pack(at_reg(2 * ki + 1, 2), at_reg(2 * ki + 1, 3))};
  };
  std::vector<llvm::Type*> outs(static_cast<size_t>(regs), b_.getFloatTy());
  llvm::StructType* rt = llvm::StructType::get(c_, outs);
  // A in registers: every fragment is made before the fence, which takes them as operands, so
  // that the code making them is not scheduled between the wgmmas (ptxas would then have to put
  // a warpgroup.arrive before each one).
  std::vector<llvm::Value*> held;  // A's registers: wgmma reads them until its group completes
  if (a_in_regs)
    for (int64_t ki = 0; ki < K / kstep; ++ki)
      for (int64_t mi = 0; mi < mrep; ++mi) {
        std::vector<llvm::Value*> f = a_frag(mi, ki);
        held.insert(held.end(), f.begin(), f.end());
      }
  // The tiles were written before a barrier (the scratch's, the loop's after its cp.async wait,
  // or the one after hoisted operands); mma_store_operand fenced the stored ones into the async
  // proxy.
  {
    std::string cons;
    for (size_t i = 0; i < held.size(); ++i) cons += "r,";
    inline_asm("wgmma.fence.sync.aligned;", cons + "~{memory}", b_.getVoidTy(), held);
  }
  for (int64_t ki = 0; ki < K / kstep; ++ki)
    for (int64_t mi = 0; mi < mrep; ++mi) {
      llvm::Value* m0 = b_.CreateAdd(b_.CreateShl(gm, 6), b_.getInt32(static_cast<uint32_t>(64 * l.wgm * mi)));
      std::vector<llvm::Value*> a_ops_v;
      if (a_in_regs) {
        const size_t at = static_cast<size_t>(4 * (ki * mrep + mi));
        a_ops_v.assign(held.begin() + static_cast<std::ptrdiff_t>(at), held.begin() + static_cast<std::ptrdiff_t>(at + 4));
      } else {
        a_ops_v = {wgmma_desc(ta, true, m0, kstep * ki)};
      }
      for (int64_t nc = 0; nc < nw; nc += n_inst) {
        llvm::Value* n0 = b_.CreateAdd(b_.CreateMul(gn, b_.getInt32(static_cast<uint32_t>(nw))),
                                       b_.getInt32(static_cast<uint32_t>(nc)));
        llvm::Value* db = wgmma_desc(tb, false, n0, kstep * ki);
        // The registers of this instruction: rows mi, columns nc .. nc + n_inst (4 per 8 columns).
        const size_t base = static_cast<size_t>(mi * (nw / 8) * 4 + (nc / 8) * 4);
        std::vector<llvm::Value*> args = a_ops_v;
        args.push_back(db);
        args.push_back(b_.getInt32(1));
        for (int i = 0; i < regs; ++i) args.push_back(acc[base + i]);
        llvm::Value* r = inline_asm(text, cons, rt, args);
        for (int i = 0; i < regs; ++i) acc[base + i] = b_.CreateExtractValue(r, {static_cast<unsigned>(i)});
      }
    }
  inline_asm("wgmma.commit_group.sync.aligned;", "~{memory}", b_.getVoidTy(), {});
  // In a pipelined loop (async_wgmma_) the group stays in flight into the next iteration: what
  // completes here is the previous iteration's group, whose tiles the loads after the next
  // barrier overwrite (lower_for). Otherwise the group completes here.
  if (async_wgmma_.count(o)) {
    // A's registers (attention's P) are read until the group completes: ptxas keeps registers
    // that an in-flight wgmma reads unchanged until a wait_group covering it.
    acc = wgmma_wait(1, std::move(acc));
    wgmma_prev_in_flight_ = false;
  } else {
    // The wait also takes A's registers, so they live (unchanged) until the group completes.
    const size_t n_acc = acc.size();
    acc.insert(acc.end(), held.begin(), held.end());
    acc = wgmma_wait(0, std::move(acc));
    acc.resize(n_acc);
    wgmma_prev_in_flight_ = false;  // every group has completed
  }
  set(op.results[0], dist(EType{false, Scalar::F32}, l.c, std::move(acc)));
  return Status::ok();
}

// ---- mma.sync from register fragments: tf32, i8, f8, and batched dots
//
// The operands are converted to the instructions' fragment layouts (mma_sync_layouts) like any
// layout conversion (a load is simply issued again in the fragment layout; other values go
// through shared memory), `elems` elements packed into each 32-bit register, and each warp
// issues mma.sync on them.
bool GpuLowering::mma_reg_layouts(const ir::Function& fn, OpId o, RegMma* out, std::string* why) const {
  const ir::OpData& op = fn.op(o);
  if (op.code != Opcode::Dot) return false;
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  auto dtype = [&](ValueId v) { return m_.types.get(m_.types.get(fn.type_of(v)).elem).scalar; };
  auto dims = [&](ValueId v) { return shape(fn.type_of(v)); };
  const Scalar ta = dtype(op.operands[0]), tb = dtype(op.operands[1]), tc = dtype(op.results[0]);
  const Shape sa = dims(op.operands[0]), sb = dims(op.operands[1]);
  const int rank = static_cast<int>(sa.size());
  if (opt_.sm < 80) return no("tensor cores need sm_80 or newer");
  if (rank != 2 && rank != 3) return no("only 2-D and batched 3-D dots run on tensor cores");
  if (ta != tb) return no("operands of two types are not on tensor cores");
  const bool tf32 = enum_attr(fn, o, "precision") == 1;
  RegMma l;
  if ((ta == Scalar::F16 || ta == Scalar::BF16) && tc == Scalar::F32) {
    const std::string t = ta == Scalar::F16 ? "f16" : "bf16";
    l.elems = 2;
    l.ptx = "mma.sync.aligned.m16n8k16.row.col.f32." + t + "." + t + ".f32";
  } else if (ta == Scalar::F32 && tc == Scalar::F32 && tf32) {
    l.elems = 1;
    l.ptx = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  } else if (ta == Scalar::I8 && tc == Scalar::I32) {
    l.elems = 4;
    l.int_acc = true;
    l.ptx = "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32";
  } else if ((ta == Scalar::F8E4M3 || ta == Scalar::F8E5M2) && tc == Scalar::F32) {
    if (opt_.sm < 89 || opt_.ptx_version_max < 84)
      return no("f8 on tensor cores needs sm_89 and PTX ISA 8.4 (the driver accepts " +
                std::to_string(opt_.ptx_version_max / 10) + "." + std::to_string(opt_.ptx_version_max % 10) + ")");
    const std::string t = ta == Scalar::F8E4M3 ? "e4m3" : "e5m2";
    l.elems = 4;
    l.min_ptx_version = 84;
    l.ptx = "mma.sync.aligned.m16n8k32.row.col.f32." + t + "." + t + ".f32";
  } else {
    return no("operands " + std::string(ir::scalar_name(ta)) + " into " + ir::scalar_name(tc) +
              (ta == Scalar::F32 ? " without precision=tf32" : "") + " are not on tensor cores");
  }
  const int64_t KI = 8 * l.elems;
  const int64_t M = sa[rank - 2], K = sa[rank - 1], N = sb[rank - 1], nb = rank == 3 ? sa[0] : 1;
  if (M < 16 || N < 8 || K < KI)
    return no("the block is smaller than one m16n8k" + std::to_string(KI) + " tile");
  split_warps(M, N, opt_.num_warps, false, &l.wm, &l.wn);
  mma_sync_layouts(rank == 3, nb, M, N, K, l.elems, l.wm, l.wn, opt_.num_warps, &l.a, &l.b, &l.c);
  *out = std::move(l);
  return true;
}

Status GpuLowering::lower_dot_mma_regs(OpId o, const RegMma& l) {
  const ir::OpData& op = f_->op(o);
  const Val& av = val(op.operands[0]);
  const Val& bv = val(op.operands[1]);
  const int rank = static_cast<int>(l.c.shape.size());
  const int64_t M = l.c.shape[rank - 2], N = l.c.shape[rank - 1], K = l.a.shape[rank - 1];
  const int64_t nb = rank == 3 ? l.c.shape[0] : 1, KI = 8 * l.elems;
  const int64_t mr = M / (16 * l.wm), nr = N / (8 * l.wn), kr = K / KI;
  min_ptx_version_ = std::max(min_ptx_version_, l.min_ptx_version);
  std::vector<llvm::Value*> ar = regs_in(av, l.a), br = regs_in(bv, l.b);
  std::vector<llvm::Value*> acc = regs_in(val(op.operands[2]), l.c);
  // Packs `elems` consecutive operand registers into one 32-bit register (the first one lowest).
  auto pack = [&](const std::vector<llvm::Value*>& regs, int64_t first, EType e) -> llvm::Value* {
    if (l.elems == 1) return b_.CreateBitCast(emit_round_tf32(b_, em_.to_arith(regs[first], e)), b_.getInt32Ty());
    llvm::Value* w = b_.getInt32(0);
    for (int i = 0; i < l.elems; ++i) {
      llvm::Value* m = to_mem(regs[first + i], e);
      if (!m->getType()->isIntegerTy())
        m = b_.CreateBitCast(m, b_.getIntNTy(m->getType()->getPrimitiveSizeInBits()));
      m = b_.CreateZExt(m, b_.getInt32Ty());
      w = b_.CreateOr(w, i ? b_.CreateShl(m, 8 * 4 / l.elems * i) : m);
    }
    return w;
  };
  llvm::Type* at = l.int_acc ? b_.getInt32Ty() : b_.getFloatTy();
  llvm::Type* ret = llvm::StructType::get(c_, {at, at, at, at});
  const std::string cc = l.int_acc ? "r" : "f";
  const std::string cons = "=" + cc + ",=" + cc + ",=" + cc + ",=" + cc + ",r,r,r,r,r,r," + cc + "," + cc + "," + cc + "," + cc;
  const std::string text = l.ptx + " {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
  for (int64_t bi = 0; bi < nb; ++bi)
    for (int64_t ki = 0; ki < kr; ++ki)
      for (int64_t mi = 0; mi < mr; ++mi)
        for (int64_t nj = 0; nj < nr; ++nj) {
          std::vector<llvm::Value*> args;
          const int64_t abase = 4 * l.elems * (mi + mr * (ki + kr * bi));
          for (int q = 0; q < 4; ++q) args.push_back(pack(ar, abase + l.elems * q, av.et));
          const int64_t bbase = 2 * l.elems * (nj + nr * (ki + kr * bi));
          for (int q = 0; q < 2; ++q) args.push_back(pack(br, bbase + l.elems * q, bv.et));
          llvm::Value** d = &acc[4 * (nj + nr * (mi + mr * bi))];
          for (int i = 0; i < 4; ++i) args.push_back(d[i]);
          llvm::Value* r = inline_asm(text, cons, ret, args, /*pure=*/true);
          for (int i = 0; i < 4; ++i) d[i] = b_.CreateExtractValue(r, {static_cast<unsigned>(i)});
        }
  set(op.results[0], dist(etype(f_->type_of(op.results[0])), l.c, std::move(acc)));
  return Status::ok();
}

}  // namespace tri::codegen::nvptx::detail
