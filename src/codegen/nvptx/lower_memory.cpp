// Loads, stores and atomics on the GPU. Block loads and stores pick a layout whose threads hold
// runs of consecutive elements as wide as axis info proves contiguous and aligned (up to 16
// bytes), and move each run with one predicated vector instruction (inline PTX, so the cache and
// eviction hints of the op are honoured exactly). Replicated threads do not store.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "codegen/nvptx/lower_impl.h"
#include "codegen/scalar_ops.h"
#include "passes/axis_info.h"

namespace tri::codegen::nvptx::detail {
namespace {

int floor_pow2(int64_t v) {
  int r = 1;
  while (r * 2 <= v && r < (1 << 20)) r *= 2;
  return r;
}

// The dimension of register bit 0's basis when it is a unit step, and how many low register
// bits continue it (a run of 2^k consecutive elements per thread).
int run_of(const Layout& l, int* dim) {
  *dim = -1;
  if (l.reg.empty()) return 1;
  for (int d = 0; d < l.rank(); ++d)
    if (l.reg[0][d] == 1) *dim = d;
  if (*dim < 0) return 1;
  int k = 0;
  while (k < static_cast<int>(l.reg.size())) {
    Basis want(l.rank(), 0);
    want[*dim] = int64_t(1) << k;
    if (l.reg[k] != want) break;
    ++k;
  }
  return 1 << k;
}

}  // namespace

int GpuLowering::mem_vec(ValueId ptr, ValueId mask, int d, int eb) const { return mem_vec(axis(), ptr, mask, d, eb); }

int GpuLowering::mem_vec(const passes::AxisInfoAnalysis* ax, ValueId ptr, ValueId mask, int d, int eb) {
  if (!ax || d < 0) return 1;
  const passes::AxisInfo& pa = ax->get(ptr);
  if (d >= static_cast<int>(pa.contiguity.size())) return 1;
  int64_t v = 16 / eb;
  v = std::min<int64_t>(v, pa.contiguity[d]);
  v = std::min<int64_t>(v, std::max<int64_t>(1, pa.divisibility[d] / eb));
  if (mask != ir::kNoValue) {
    const passes::AxisInfo& ma = ax->get(mask);
    if (d < static_cast<int>(ma.constancy.size())) v = std::min<int64_t>(v, ma.constancy[d]);
  }
  return floor_pow2(std::max<int64_t>(1, v));
}

namespace {

// The bits of an element in memory, as an integer of its byte width.
llvm::Value* to_bits(llvm::IRBuilder<>& b, llvm::Value* v, EType e) {
  int bits = elem_bytes(e) * 8;
  if (e.ptr) return b.CreatePtrToInt(v, b.getInt64Ty());
  v = codegen::to_mem(b, v, e.s);
  if (v->getType()->isIntegerTy()) return v;
  return b.CreateBitCast(v, b.getIntNTy(bits));
}

llvm::Value* from_bits(llvm::IRBuilder<>& b, llvm::Value* v, EType e, llvm::LLVMContext& c) {
  if (e.ptr) return b.CreateIntToPtr(v, llvm::PointerType::getUnqual(c));
  llvm::Type* mt = mem_type(c, e.s);
  if (mt != v->getType()) v = b.CreateBitCast(v, mt);
  return codegen::from_mem(b, v, e.s);
}

struct AccessShape {
  int words;         // registers the asm moves
  int word_bits;     // 32, 16 (one 2-byte element or two bytes) or 8 (one byte, in a 32-bit register)
  const char* cons;  // the registers' constraint letter
};

AccessShape access_shape(int bytes) {
  if (bytes >= 4) return {bytes / 4, 32, "r"};
  if (bytes == 2) return {1, 16, "h"};
  return {1, 8, "r"};
}

// vec elements' bits (each elem_bits wide) <-> `words` registers. A 16-bit word holds one
// 2-byte element or two 1-byte ones; an 8-bit access moves one byte in a 32-bit register.
std::vector<llvm::Value*> pack(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& elems, int elem_bits,
                               AccessShape as) {
  if (as.word_bits == 8) return {b.CreateZExt(elems[0], b.getInt32Ty())};
  if (elems.size() == 1 && as.word_bits == elem_bits) return {elems[0]};
  llvm::Value* v = llvm::UndefValue::get(llvm::FixedVectorType::get(b.getIntNTy(elem_bits), elems.size()));
  for (size_t i = 0; i < elems.size(); ++i) v = b.CreateInsertElement(v, elems[i], i);
  v = b.CreateBitCast(v, llvm::FixedVectorType::get(b.getIntNTy(as.word_bits), as.words));
  std::vector<llvm::Value*> out;
  for (int i = 0; i < as.words; ++i) out.push_back(b.CreateExtractElement(v, i));
  return out;
}

std::vector<llvm::Value*> unpack(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& words, int elem_bits, int vec,
                                 AccessShape as) {
  if (as.word_bits == 8) return {b.CreateTrunc(words[0], b.getInt8Ty())};
  if (vec == 1 && as.word_bits == elem_bits) return {words[0]};
  llvm::Value* v = llvm::UndefValue::get(llvm::FixedVectorType::get(b.getIntNTy(as.word_bits), as.words));
  for (int i = 0; i < as.words; ++i) v = b.CreateInsertElement(v, words[i], i);
  v = b.CreateBitCast(v, llvm::FixedVectorType::get(b.getIntNTy(elem_bits), vec));
  std::vector<llvm::Value*> out;
  for (int i = 0; i < vec; ++i) out.push_back(b.CreateExtractElement(v, i));
  return out;
}

// How a factor of a load's mask varies along dimension d within the aligned runs of `vec`
// elements that a copy moves: the same over the run (Const), true on a prefix of it (Upper: an
// increasing index below a bound, `offs < n`), true on a suffix (Lower: `offs >= 0`), or not known.
// A run's mask is then all true when every factor is at the run's far end (its last element for
// Upper, first for Lower) and possibly partly true only when every factor is at its near end.
enum class RunMask { Const, Upper, Lower, Unknown };

RunMask run_mask(const ir::Function& f, const passes::AxisInfoAnalysis& ax, const std::function<Shape(ValueId)>& shape_of,
                 ValueId v, int d, int vec, int depth = 0) {
  const passes::AxisInfo& a = ax.get(v);
  if (d < 0 || d >= a.rank()) return RunMask::Unknown;
  // Runs start at multiples of vec; contiguity and constancy hold over aligned groups of their
  // size, so a multiple of vec covers each run.
  auto covers = [&](int64_t n) { return n >= vec && n % vec == 0; };
  if (covers(a.constancy[d])) return RunMask::Const;
  const ir::OpId o = f.value(v).def_op;
  if (o == ir::kNoOp || depth > 16) return RunMask::Unknown;
  const ir::OpData& op = f.op(o);
  auto next = [&](ValueId x, int dx) { return run_mask(f, ax, shape_of, x, dx, vec, depth + 1); };
  switch (op.code) {
    case Opcode::Broadcast:
      return static_cast<int>(shape_of(op.operands[0]).size()) == a.rank() ? next(op.operands[0], d) : RunMask::Unknown;
    case Opcode::Reshape:
    case Opcode::ExpandDims: {
      // Only dimensions of extent 1 come or go: d maps to the source dimension with the same
      // place among the others.
      const Shape rs = shape_of(v), ss = shape_of(op.operands[0]);
      std::vector<int> rd, sd;
      for (int i = 0; i < static_cast<int>(rs.size()); ++i)
        if (rs[i] != 1) rd.push_back(i);
      for (int i = 0; i < static_cast<int>(ss.size()); ++i)
        if (ss[i] != 1) sd.push_back(i);
      if (rd.size() != sd.size()) return RunMask::Unknown;
      for (size_t k = 0; k < rd.size(); ++k) {
        if (rs[rd[k]] != ss[sd[k]]) return RunMask::Unknown;
        if (rd[k] == d) return next(op.operands[0], sd[k]);
      }
      return RunMask::Unknown;
    }
    case Opcode::And: {
      const RunMask x = next(op.operands[0], d);
      const RunMask y = next(op.operands[1], d);
      if (x == RunMask::Const) return y;
      if (y == RunMask::Const || x == y) return x;
      return RunMask::Unknown;
    }
    case Opcode::Cmp: {
      const int64_t p = enum_attr(f, o, "pred");  // eq ne slt sle sgt sge ult ule ugt uge
      const bool lt = p == 2 || p == 3, gt = p == 4 || p == 5;
      if (!lt && !gt) return RunMask::Unknown;
      const passes::AxisInfo& l = ax.get(op.operands[0]);
      const passes::AxisInfo& r = ax.get(op.operands[1]);
      if (d >= l.rank() || d >= r.rank()) return RunMask::Unknown;
      if (covers(l.contiguity[d]) && covers(r.constancy[d])) return lt ? RunMask::Upper : RunMask::Lower;
      if (covers(l.constancy[d]) && covers(r.contiguity[d])) return lt ? RunMask::Lower : RunMask::Upper;
      return RunMask::Unknown;
    }
    default:
      return RunMask::Unknown;
  }
}

std::string operand_list(int first, int n) {
  std::string s = n > 1 ? "{" : "";
  for (int i = 0; i < n; ++i) s += (i ? ", $" : "$") + std::to_string(first + i);
  return s + (n > 1 ? "}" : "");
}

std::string vec_suffix(AccessShape as) {
  std::string s = as.words > 1 ? ".v" + std::to_string(as.words) : "";
  return s + (as.word_bits == 32 ? ".b32" : as.word_bits == 16 ? ".b16" : ".u8");
}

}  // namespace

// A pipelined operand tile (lower_for's async_dest_) goes from global to shared memory with
// cp.async, 16 bytes (or 8, 4) per instruction and masked lanes zero-filled (source size 0),
// without passing through registers; the result is the tile in shared memory. It qualifies
// when it is a 2-D block of the tile's element size, used once (by the yield), contiguous along its columns in the
// layout the load would have, not volatile, and its `other` is absent or +0.
bool GpuLowering::lower_load_async(OpId o) {
  const ir::OpData& op = f_->op(o);
  const SmemTile t = async_dest_.at(o);
  ValueId res = op.results[0];
  const EType e = etype(f_->type_of(res));
  ValueId pv = f_->operand(o, "ptr"), mv = f_->operand(o, "mask"), ov = f_->operand(o, "other");
  const Val& ptr = val(pv);
  const int eb = t.eb;
  if (e.ptr || elem_bytes(e) != eb || uses(res) != 1 || ptr.kind == Val::Kind::Scalar || ptr.shape.size() != 2) return false;
  if (f_->attr(o, "volatile").present() && f_->attr(o, "volatile").i) return false;
  if (ov != ir::kNoValue) {
    const OpId d = f_->value(ov).def_op;
    if (d == ir::kNoOp || f_->op(d).code != Opcode::Const) return false;
    const ir::Attr& v = f_->attr(d, "value");
    if (!(v.kind == ir::Attr::Kind::Float ? v.f == 0 && !std::signbit(v.f) : v.i == 0)) return false;
  }
  // The layout lower_load would pick, with its runs along the tile's stored rows (dimension 1,
  // or 0 for a column-major tile).
  const int want = t.col_major ? 0 : 1;
  Layout l;
  int dim = -1, vec = 1;
  // The copies are as wide as the pointer allows; a mask that changes inside a copy's run (its
  // bound of no known divisibility: a descriptor's shape read from memory) is checked per run
  // at run time (below).
  if (ptr.kind == Val::Kind::Dist) {
    l = ptr.lay;
    const int run = run_of(l, &dim);
    vec = std::min(run, mem_vec(pv, ir::kNoValue, dim, eb));
  } else {
    dim = want;
    vec = mem_vec(pv, ir::kNoValue, dim, eb);
    vec = static_cast<int>(std::min<int64_t>(vec, std::max<int64_t>(1, ptr.shape[0] * ptr.shape[1] / threads())));
    l = blocked(ptr.shape, want == 1 ? std::vector<int>{1, 0} : std::vector<int>{0, 1}, vec, opt_.num_warps);
    int d2;
    vec = std::min(vec, run_of(l, &d2));
  }
  vec = std::min(vec, 16 / eb);
  if (dim != want || vec * eb < 4) return false;
  const std::vector<llvm::Value*> ptrs = regs_in(ptr, l);
  const bool masked = mv != ir::kNoValue;
  // A mask that may change inside a run: each copy goes whole when every lane of its run is in
  // (or zero-fills when none is); a run with some lanes in and some out (a ragged edge) is
  // copied element by element through registers instead, which never happens where the bound
  // is a multiple of the run.
  const bool split = masked && mem_vec(pv, mv, dim, eb) < vec;
  // Where the mask is an `and` of factors each constant over a run or true on a prefix or a
  // suffix of it (run_mask: a descriptor's `0 <= offs < shape`), a run's whole-or-none test
  // reads each factor at the run's ends only, not every element's mask.
  std::vector<std::pair<ValueId, RunMask>> factors;
  bool factored = false;
  if (split && axis()) {
    std::vector<ValueId> work{mv};
    factored = true;
    auto shape_of = [&](ValueId x) { return this->shape(f_->type_of(x)); };
    while (!work.empty() && factored) {
      const ValueId x = work.back();
      work.pop_back();
      const ir::OpId d = f_->value(x).def_op;
      if (d != ir::kNoOp && f_->op(d).code == Opcode::And && factors.size() + work.size() < 8) {
        work.push_back(f_->op(d).operands[0]);
        work.push_back(f_->op(d).operands[1]);
        continue;
      }
      const RunMask k = run_mask(*f_, *axis(), shape_of, x, dim, vec);
      factors.push_back({x, k});
      if (k == RunMask::Unknown) factored = false;
    }
  }
  // Every element's mask, for the ragged branch (the optimizer sinks what only it uses); the
  // factors' registers for the runs' tests. Both made here, where every thread runs (a layout
  // conversion may take a barrier).
  const std::vector<llvm::Value*> masks = masked ? regs_in(val(mv), l) : std::vector<llvm::Value*>();
  std::vector<std::vector<llvm::Value*>> fregs;
  if (factored)
    for (const auto& fk : factors) fregs.push_back(regs_in(val(fk.first), l));
  const uint64_t dup = replicated_reg_mask(l);
  const int bytes = eb * vec;
  const llvm::Intrinsic::ID id = bytes == 16 ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
                                 : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                                              : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
  // A masked copy takes its mask as the instruction's ignore-src predicate (PTX 7.5), which
  // becomes the copy's own predicate: LLVM's intrinsic takes a source size instead, and the
  // selects that compute it from a mask made of several conditions (the tile's edges, the
  // pipelined iteration's) cost a chain of dependent instructions per copy in the loop.
  const bool ignore_src = masked && opt_.ptx_version >= 75;
  const std::string cp_text = std::string("cp.async.") + (bytes == 16 ? "cg" : "ca") + ".shared.global [$0], [$1], " +
                              std::to_string(bytes) + ", $2;";
  smem_war_barrier();  // every warp is done reading the buffer this tile replaces
  emit_if(owner(l), [&] {
    // Where the swizzle allows, one address per thread and a constant per copy (folded into
    // the instruction), instead of each copy's address computed from the ring buffer's base.
    const std::vector<llvm::Value*> dsts = mma_smem_addresses(t, l);
    if (split) {
      // One test per thread: whether any of its runs is ragged. Then either every run is one
      // copy (whole, or zero-filled with a source size of 0), or every element goes through
      // registers; the second branch runs only at a ragged edge.
      std::vector<llvm::Value*> alls(static_cast<size_t>(l.nregs()), nullptr);
      llvm::Value* ragged = b_.getFalse();
      for (int64_t r = 0; r < l.nregs(); r += vec) {
        if (r & dup) continue;
        llvm::Value* all = nullptr;
        llvm::Value* any = nullptr;
        if (factored) {
          // any over-approximates (an `and` of factors each partly true may be all false),
          // which only sends a run to the element-wise copy.
          for (size_t k = 0; k < factors.size(); ++k) {
            const RunMask m = factors[k].second;
            llvm::Value* first = fregs[k][r];
            llvm::Value* last = fregs[k][r + vec - 1];
            llvm::Value* far = m == RunMask::Upper ? last : first;
            llvm::Value* near = m == RunMask::Lower ? last : first;
            all = all ? b_.CreateAnd(all, far) : far;
            any = any ? b_.CreateAnd(any, near) : near;
          }
        } else {
          all = any = masks[r];
          for (int i = 1; i < vec; ++i) {
            all = b_.CreateAnd(all, masks[r + i]);
            any = b_.CreateOr(any, masks[r + i]);
          }
        }
        alls[static_cast<size_t>(r)] = all;
        ragged = b_.CreateOr(ragged, b_.CreateAnd(any, b_.CreateNot(all)));
      }
      emit_if(b_.CreateNot(ragged), [&] {
        for (int64_t r = 0; r < l.nregs(); r += vec) {
          if (r & dup) continue;
          llvm::Value* src = b_.CreateAddrSpaceCast(ptrs[r], llvm::PointerType::get(c_, 1));
          // cp_text's last operand as a source size (16 or 0), not an ignore-src predicate.
          inline_asm(cp_text, "r,l,r,~{memory}", b_.getVoidTy(),
                     {b_.CreatePtrToInt(dsts[static_cast<size_t>(r)], b_.getInt32Ty()), b_.CreatePtrToInt(src, b_.getInt64Ty()),
                      b_.CreateSelect(alls[static_cast<size_t>(r)], b_.getInt32(static_cast<uint32_t>(bytes)), b_.getInt32(0))});
        }
      });
      emit_if(ragged, [&] {
        for (int64_t r = 0; r < l.nregs(); r += vec) {
          if (r & dup) continue;
          for (int i = 0; i < vec; ++i) {
            llvm::Value* pi = b_.CreateAddrSpaceCast(ptrs[r + i], llvm::PointerType::get(c_, 1));
            // 8-bit elements travel in a 16-bit register (PTX has no 8-bit ones).
            const std::string w = eb == 4 ? "b32" : "b16";
            llvm::Value* v = inline_asm("{\n.reg .pred %p;\nsetp.ne.b32 %p, $2, 0;\nmov." + w + " $0, 0;\n@%p ld.global." +
                                            (eb == 1 ? std::string("u8") : w) + " $0, [$1];\n}",
                                        eb == 4 ? "=r,l,r,~{memory}" : "=h,l,r,~{memory}", eb == 4 ? b_.getInt32Ty() : b_.getInt16Ty(),
                                        {b_.CreatePtrToInt(pi, b_.getInt64Ty()), b_.CreateZExt(masks[r + i], b_.getInt32Ty())});
            if (eb == 1) v = b_.CreateTrunc(v, b_.getInt8Ty());
            b_.CreateAlignedStore(v, b_.CreateGEP(b_.getInt8Ty(), dsts[static_cast<size_t>(r)], b_.getInt32(static_cast<uint32_t>(eb * i))),
                                  llvm::Align(static_cast<uint64_t>(eb)));
          }
        }
        // Generic-proxy writes, read by wgmma after the loop's barrier.
        if (opt_.sm >= 90) inline_asm("fence.proxy.async.shared::cta;", "~{memory}", b_.getVoidTy(), {});
      });
      return;
    }
    for (int64_t r = 0; r < l.nregs(); r += vec) {
      if (r & dup) continue;
      llvm::Value* dst = dsts[static_cast<size_t>(r)];
      llvm::Value* src = b_.CreateAddrSpaceCast(ptrs[r], llvm::PointerType::get(c_, 1));
      if (ignore_src) {
        inline_asm(cp_text, "r,l,b,~{memory}", b_.getVoidTy(),
                   {b_.CreatePtrToInt(dst, b_.getInt32Ty()), b_.CreatePtrToInt(src, b_.getInt64Ty()), b_.CreateNot(masks[r])});
        continue;
      }
      llvm::Value* size = b_.getInt32(static_cast<uint32_t>(bytes));
      if (!masks.empty()) size = b_.CreateSelect(masks[r], size, b_.getInt32(0));
      b_.CreateIntrinsic(id, {}, {dst, src, size});
    }
  });
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
  ++async_commits_;
  Val v;
  v.kind = Val::Kind::Smem;
  v.et = e;
  v.shape = ptr.shape;
  v.smem_base = t.base;
  v.smem_col_major = t.col_major;
  set(res, std::move(v));
  return true;  // writes shared memory only: values loaded from global memory may load again
}

Status GpuLowering::lower_load(OpId o, const Val* ptr_override) {
  if (!ptr_override && async_dest_.count(o) && lower_load_async(o)) return Status::ok();
  const ir::OpData& op = f_->op(o);
  ValueId res = op.results[0];
  EType e = etype(f_->type_of(res));
  ValueId pv = f_->operand(o, "ptr"), mv = f_->operand(o, "mask"), ov = f_->operand(o, "other");
  const Val& ptr = ptr_override ? *ptr_override : val(pv);
  const bool vol = bool_attr(*f_, o, "volatile");
  const int eb = elem_bytes(e);
  if (ptr.kind == Val::Kind::Scalar) {
    // Every thread loads the same scalar.
    llvm::Value* mask = mv != ir::kNoValue ? val(mv).s : nullptr;
    llvm::Value* other = ov != ir::kNoValue ? val(ov).s : llvm::Constant::getNullValue(reg_ty(e));
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::Value* loaded = nullptr;
    llvm::BasicBlock* in = pre;
    emit_if(mask ? mask : b_.getTrue(), [&] {
      llvm::LoadInst* ld = b_.CreateAlignedLoad(mem_ty(e), ptr.s, llvm::Align(eb));
      ld->setVolatile(vol);
      loaded = from_mem(ld, e);
      in = b_.GetInsertBlock();
    });
    if (!mask) {
      set(res, scalar(loaded, e));
    } else {
      llvm::PHINode* phi = b_.CreatePHI(reg_ty(e), 2);
      phi->addIncoming(loaded, in);
      phi->addIncoming(other, pre);
      set(res, scalar(phi, e));
    }
    return Status::ok();
  }
  int vec = 1;
  Layout l = load_layout(pv, mv, ptr, eb, &vec, res);
  if (ptr.kind != Val::Kind::Dist) {
    Layout b;
    if (broadcast_layout(res, eb, &b)) {
      // A row (bias, weight, cos) that is only broadcast over a tile: loaded in the layout whose
      // registers the tile's natural layout takes as they are, so the broadcast moves nothing.
      int d;
      l = b;
      const int run = run_of(l, &d);
      vec = d < 0 ? 1 : std::min(run, mem_vec(pv, mv, d, eb));
    }
  }
  const Val* mask = mv != ir::kNoValue ? &val(mv) : nullptr;
  const Val* other = ov != ir::kNoValue ? &val(ov) : nullptr;
  Val v = dist(e, l, emit_load(*f_, o, ptr, mask, other, l, vec, e));
  if (!vol) {
    // Another layout's registers by loading again (lane groups as wide as axis info allows).
    const passes::AxisInfoAnalysis* ax = axis();
    const ir::Function* fn = f_;
    Val p = ptr, m = mask ? *mask : Val(), ot = other ? *other : Val();
    v.remat = std::make_shared<const std::function<std::vector<llvm::Value*>(const Layout&)>>(
        [this, ax, fn, o, p, m, ot, pv, mv, e, eb](const Layout& to) {
          int d;
          const int run = run_of(to, &d);
          const int w = std::min(run, mem_vec(ax, pv, mv, d, eb));
          return emit_load(*fn, o, p, m.kind == Val::Kind::None ? nullptr : &m,
                           ot.kind == Val::Kind::None ? nullptr : &ot, to, w, e);
        });
    v.epoch = mem_epoch_;
  }
  set(res, std::move(v));
  return Status::ok();
}

bool GpuLowering::broadcast_layout(ValueId v, int eb, Layout* out) {
  // The users of each value of the function, found once per function.
  auto& users = users_[f_];
  if (users.empty()) {
    users.assign(f_->values.size(), {});
    std::function<void(BlockId)> walk = [&](BlockId b) {
      for (OpId o : f_->block(b).ops) {
        for (ValueId x : f_->op(o).operands)
          if (x != ir::kNoValue) users[x].push_back(o);
        for (BlockId r : f_->op(o).regions) walk(r);
      }
    };
    walk(f_->body);
  }
  // v -> expand_dims* -> broadcast (the first, where every user is one), each expand_dims the
  // only user of its operand.
  std::vector<int> inserted;  // the axes expand_dims inserted, in the final shape's numbering
  ValueId cur = v;
  for (int steps = 0; steps < 8; ++steps) {
    if (cur >= users.size() || users[cur].empty()) return false;
    const bool all_broadcast = std::all_of(users[cur].begin(), users[cur].end(),
                                           [&](OpId u) { return f_->op(u).code == Opcode::Broadcast; });
    if (!all_broadcast && users[cur].size() != 1) return false;
    const ir::OpData& u = f_->op(users[cur][0]);
    if (u.code == Opcode::ExpandDims) {
      const int axis = static_cast<int>(f_->attr(users[cur][0], "axis").i);
      for (int& a : inserted)
        if (a >= axis) ++a;
      inserted.push_back(axis);
      cur = u.results[0];
      continue;
    }
    if (u.code != Opcode::Broadcast || inserted.empty()) return false;
    const Shape from = shape(f_->type_of(cur)), to = shape(f_->type_of(u.results[0]));
    std::vector<bool> proj(to.size(), false);
    for (size_t d = 0; d < to.size(); ++d) proj[d] = from[d] == 1 && to[d] != 1;
    int64_t n = 1;
    for (int64_t d : to) n *= d;
    const int tvec = static_cast<int>(std::min<int64_t>(std::max(1, 16 / eb), std::max<int64_t>(1, n / threads())));
    Layout l = unbroadcast(blocked(to, row_major(static_cast<int>(to.size())), tvec, opt_.num_warps), proj);
    std::sort(inserted.rbegin(), inserted.rend());
    for (int a : inserted) l = slice(l, a);
    if (l.shape != shape(f_->type_of(v))) return false;
    *out = l;
    return true;
  }
  return false;
}

// The layout a load of a block takes: the pointer's own when it has one, else the coalesced one
// axis info suggests. *vec: the elements each access moves.
Layout GpuLowering::load_layout(ValueId pv, ValueId mv, const Val& ptr, int eb, int* vec, ValueId res) {
  Layout l;
  int dim = -1;
  if (ptr.kind == Val::Kind::Dist) {
    l = ptr.lay;
    const int run = run_of(l, &dim);
    *vec = std::min(run, mem_vec(pv, mv, dim, eb));
    return l;
  }
  // The elements each thread holds follow the pointer alone (contiguity and alignment); the
  // mask only narrows each access, as in Triton's coalescing. A mask of unknown constancy
  // (`offs < n` with n of no known divisibility) then keeps 4 f32 a thread, read in 4 accesses,
  // and a scan or reduction combines them in the thread: FlagGems' cummax took the layout of one
  // element a thread and ran its lane scan once per element (136 SHFL.UP against Triton's 26).
  std::vector<int> order;
  int v = natural_load_vec(pv, ptr.shape, eb, &order);
  if (res != ir::kNoValue)
    if (const int cap = load_vec_cap(res)) v = std::min(v, cap);
  l = blocked(ptr.shape, order, v, opt_.num_warps);
  int d2;
  *vec = std::min({v, run_of(l, &d2), mem_vec(pv, mv, order[0], eb)});
  return l;
}

int GpuLowering::natural_load_vec(ValueId pv, const Shape& s, int eb, std::vector<int>* order) const {
  *order = row_major(static_cast<int>(s.size()));
  if (const passes::AxisInfoAnalysis* ax = axis()) {
    const passes::AxisInfo& pa = ax->get(pv);
    std::stable_sort(order->begin(), order->end(), [&](int a, int b) { return pa.contiguity[a] > pa.contiguity[b]; });
  }
  int v = mem_vec(pv, ir::kNoValue, (*order)[0], eb);
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return static_cast<int>(std::min<int64_t>(v, std::max<int64_t>(1, n / threads())));
}

int GpuLowering::load_vec_cap(ValueId res) {
  if (caps_fn_ != f_) {
    caps_fn_ = f_;
    load_caps_.clear();
    const ir::Function& f = *f_;
    // Values joined by elementwise ops, casts, selects and loop-carried positions.
    std::vector<ValueId> parent(f.values.size());
    for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<ValueId>(i);
    std::function<ValueId(ValueId)> find = [&](ValueId x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    auto unite = [&](ValueId a, ValueId b) {
      if (a == ir::kNoValue || b == ir::kNoValue || a >= parent.size() || b >= parent.size()) return;
      parent[find(a)] = find(b);
    };
    auto is_block = [&](ValueId v) { return v != ir::kNoValue && m_.types.is_block(f.type_of(v)); };
    struct L {
      ValueId res;
      Shape s;
      std::vector<int> order;
      int v, eb;
    };
    std::vector<L> loads;
    auto yield_of = [&](BlockId b) -> const ir::OpData* {
      const std::vector<OpId>& ops = f.block(b).ops;
      if (ops.empty() || f.op(ops.back()).code != Opcode::Yield) return nullptr;
      return &f.op(ops.back());
    };
    std::function<void(BlockId)> walk = [&](BlockId b) {
      for (OpId o : f.block(b).ops) {
        const ir::OpData& op = f.op(o);
        const ir::OpRule rule = ir::op_info(op.code).rule;
        const bool ew = rule == ir::OpRule::EwNum || rule == ir::OpRule::EwInt || rule == ir::OpRule::EwFloat ||
                        rule == ir::OpRule::Cast || op.code == Opcode::Select;
        if (ew && op.results.size() == 1 && is_block(op.results[0])) {
          const Shape rs = shape(f.type_of(op.results[0]));
          for (ValueId x : op.operands)
            if (is_block(x) && shape(f.type_of(x)) == rs) unite(x, op.results[0]);
        }
        if (op.code == Opcode::For && !op.regions.empty()) {
          const auto& body = f.block(op.regions[0]);
          const ir::OpData* y = yield_of(op.regions[0]);
          for (size_t i = 0; i < op.results.size() && 3 + i < op.operands.size(); ++i) {
            unite(op.operands[3 + i], op.results[i]);
            if (i + 1 < body.args.size()) unite(body.args[i + 1], op.results[i]);
            if (y && i < y->operands.size()) unite(y->operands[i], op.results[i]);
          }
        }
        if (op.code == Opcode::If)
          for (BlockId r : op.regions)
            if (const ir::OpData* y = yield_of(r))
              for (size_t i = 0; i < op.results.size() && i < y->operands.size(); ++i) unite(y->operands[i], op.results[i]);
        if (op.code == Opcode::Load && op.results.size() == 1 && is_block(op.results[0])) {
          const TypeId t = f.type_of(op.results[0]);
          const EType e = etype(t);
          L l{op.results[0], shape(t), {}, 0, elem_bytes(e)};
          if (!e.ptr) {
            l.v = natural_load_vec(f.operand(o, "ptr"), l.s, l.eb, &l.order);
            loads.push_back(std::move(l));
          }
        }
        for (BlockId r : op.regions) walk(r);
      }
    };
    walk(f.body);
    // Per group of loads of one shape and order that meet: the smallest vector, for the loads
    // that still move 4 bytes or more per access with it.
    std::map<std::pair<ValueId, std::pair<Shape, std::vector<int>>>, int> least;
    for (const L& l : loads) {
      auto key = std::make_pair(find(l.res), std::make_pair(l.s, l.order));
      auto it = least.find(key);
      if (it == least.end()) least[key] = l.v;
      else it->second = std::min(it->second, l.v);
    }
    for (const L& l : loads) {
      const int cap = least[std::make_pair(find(l.res), std::make_pair(l.s, l.order))];
      if (cap < l.v && cap * l.eb >= 4) load_caps_[l.res] = cap;
    }
  }
  auto it = load_caps_.find(res);
  return it == load_caps_.end() ? 0 : it->second;
}

std::vector<llvm::Value*> GpuLowering::emit_load(const ir::Function& fn, OpId o, const Val& ptr, const Val* mask,
                                                 const Val* other, const Layout& l, int vec, EType e) {
  const int eb = elem_bytes(e);
  const bool vol = bool_attr(fn, o, "volatile");
  std::vector<llvm::Value*> ptrs = regs_in(ptr, l);
  std::vector<llvm::Value*> masks = mask ? regs_in(*mask, l) : std::vector<llvm::Value*>();
  std::vector<llvm::Value*> others = other ? regs_in(*other, l) : std::vector<llvm::Value*>();

  std::string mods;
  if (vol) {
    mods = "ld.volatile.global";
  } else {
    static const char* const cache[] = {"", ".ca", ".cg", ".cs", ".cv"};
    static const char* const evict[] = {"", ".L1::evict_first", ".L1::evict_last"};
    int64_t ci = enum_attr(fn, o, "cache"), ei = enum_attr(fn, o, "evict");
    mods = std::string("ld.global") + (ci > 0 ? cache[ci] : ei > 0 ? evict[ei] : "");
  }
  const AccessShape as = access_shape(vec * eb);
  const int ebits = eb * 8;
  std::vector<llvm::Value*> out(l.nregs());
  for (int64_t r0 = 0; r0 < l.nregs(); r0 += vec) {
    std::vector<llvm::Type*> rts(as.words, as.word_bits == 16 ? b_.getInt16Ty() : b_.getInt32Ty());
    llvm::Type* ret = as.words == 1 ? rts[0] : static_cast<llvm::Type*>(llvm::StructType::get(c_, rts));
    std::vector<llvm::Value*> args = {b_.CreatePtrToInt(ptrs[r0], b_.getInt64Ty())};
    std::string cons;
    for (int i = 0; i < as.words; ++i) cons += std::string(i ? ",=" : "=") + as.cons;
    cons += ",l";
    std::string text = "{\n";
    const int addr = as.words;
    std::string pred;
    if (!masks.empty()) {
      args.push_back(b_.CreateZExt(masks[r0], b_.getInt32Ty()));
      cons += ",r";
      text += ".reg .pred %p;\nsetp.ne.b32 %p, $" + std::to_string(addr + 1) + ", 0;\n";
      pred = "@%p ";
      std::vector<llvm::Value*> dflt;
      if (!others.empty()) {
        std::vector<llvm::Value*> bits;
        for (int i = 0; i < vec; ++i) bits.push_back(to_bits(b_, others[r0 + i], e));
        dflt = pack(b_, bits, ebits, as);
      }
      const char* mov = as.word_bits == 16 ? "mov.b16" : "mov.b32";
      for (int i = 0; i < as.words; ++i) {
        if (dflt.empty()) {
          text += std::string(mov) + " $" + std::to_string(i) + ", 0;\n";
        } else {
          args.push_back(dflt[i]);
          cons += std::string(",") + as.cons;
          text += std::string(mov) + " $" + std::to_string(i) + ", $" + std::to_string(addr + 2 + i) + ";\n";
        }
      }
    }
    text += pred + mods + vec_suffix(as) + " " + operand_list(0, as.words) + ", [$" + std::to_string(addr) + "];\n}";
    if (vol) {
      cons += ",~{memory}";
    } else {
      // An unused immediate input marks the asm as a load for LLVM's machine passes (an "i"
      // operand sets its may-load flag; the call's memory(read) below does not reach them).
      // Without it MachineLICM took a load at a loop-invariant address for pure arithmetic and
      // hoisted it out of the loop, past the loop's waits and stores: on 2 GPUs the team
      // tests' ring read its first tile 300 times (tests/capi/ring_gpu.c).
      args.push_back(b_.getInt32(0));
      cons += ",i";
    }
    llvm::CallInst* call = inline_asm(text, cons, ret, args, /*pure=*/!vol);
    // It reads memory and nothing else: not moved across a store or a barrier, removed when
    // unused (a volatile load has side effects instead).
    if (!vol) {
      call->setOnlyReadsMemory();
      call->setDoesNotThrow();
      call->addFnAttr(llvm::Attribute::WillReturn);
    }
    std::vector<llvm::Value*> words;
    for (int i = 0; i < as.words; ++i) words.push_back(as.words == 1 ? call : b_.CreateExtractValue(call, i));
    std::vector<llvm::Value*> elems = unpack(b_, words, ebits, vec, as);
    for (int i = 0; i < vec; ++i) out[r0 + i] = from_bits(b_, elems[i], e, c_);
  }
  return out;
}

Status GpuLowering::lower_store(OpId o, const Val* ptr_override) {
  ++mem_epoch_;
  ValueId pv = f_->operand(o, "ptr"), vv = f_->operand(o, "value"), mv = f_->operand(o, "mask");
  const Val& ptr = ptr_override ? *ptr_override : val(pv);
  const Val& value = val(vv);
  EType e = value.et;
  const int eb = elem_bytes(e);
  if (ptr.kind == Val::Kind::Scalar) {
    // One thread stores a scalar.
    llvm::Value* cond = b_.CreateICmpEQ(tid_, b_.getInt32(0));
    if (mv != ir::kNoValue) cond = b_.CreateAnd(cond, val(mv).s);
    emit_if(cond, [&] { b_.CreateAlignedStore(to_mem(value.s, e), ptr.s, llvm::Align(eb)); });
    return Status::ok();
  }
  // The layout: the coalesced one axis info suggests, unless the value's own stores as wide.
  std::vector<int> order = row_major(static_cast<int>(ptr.shape.size()));
  if (const passes::AxisInfoAnalysis* ax = axis()) {
    const passes::AxisInfo& pa = ax->get(pv);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return pa.contiguity[a] > pa.contiguity[b]; });
  }
  int64_t n = 1;
  for (int64_t d : ptr.shape) n *= d;
  int want = std::min<int64_t>(mem_vec(pv, mv, order[0], eb), std::max<int64_t>(1, n / threads()));
  Layout l = blocked(ptr.shape, order, want, opt_.num_warps);
  int dim;
  int vec = std::min(want, run_of(l, &dim));
  for (const Val* cand : {&value, &ptr}) {
    if (cand->kind != Val::Kind::Dist) continue;
    int d2;
    const int run = run_of(cand->lay, &d2);
    int v2 = std::min(run, mem_vec(pv, mv, d2, eb));
    if (v2 >= vec && replicated_lane_mask(cand->lay) == 0 && replicated_warp_mask(cand->lay) == 0) {
      l = cand->lay;
      vec = v2;
      break;
    }
  }
  std::vector<llvm::Value*> ptrs = regs_in(ptr, l), vals = regs_in(value, l);
  std::vector<llvm::Value*> masks = mv != ir::kNoValue ? regs_in(val(mv), l) : std::vector<llvm::Value*>();
  static const char* const cache[] = {"", ".wb", ".cg", ".cs", ".wt"};
  static const char* const evict[] = {"", ".L1::evict_first", ".L1::evict_last"};
  int64_t ci = enum_attr(*f_, o, "cache"), ei = enum_attr(*f_, o, "evict");
  std::string mods = std::string("st.global") + (ci > 0 ? cache[ci] : ei > 0 ? evict[ei] : "");
  const AccessShape as = access_shape(vec * eb);
  const uint64_t dup = replicated_reg_mask(l);
  llvm::Value* own = owner(l);
  for (int64_t r0 = 0; r0 < l.nregs(); r0 += vec) {
    if (r0 & dup) continue;
    std::vector<llvm::Value*> bits;
    for (int i = 0; i < vec; ++i) bits.push_back(to_bits(b_, vals[r0 + i], e));
    std::vector<llvm::Value*> words = pack(b_, bits, eb * 8, as);
    llvm::Value* pred = own;
    if (!masks.empty()) pred = b_.CreateAnd(pred, masks[r0]);
    std::vector<llvm::Value*> args = {b_.CreatePtrToInt(ptrs[r0], b_.getInt64Ty()), b_.CreateZExt(pred, b_.getInt32Ty())};
    std::string cons = "l,r";
    for (llvm::Value* w : words) {
      args.push_back(w);
      cons += std::string(",") + as.cons;
    }
    std::string text = "{\n.reg .pred %p;\nsetp.ne.b32 %p, $1, 0;\n@%p " + mods + vec_suffix(as) + " [$0], " +
                       operand_list(2, as.words) + ";\n}";
    if (as.word_bits == 8) {
      // A single byte is stored from the low bits of a 32-bit register.
      text = "{\n.reg .pred %p;\n.reg .b16 %h;\nsetp.ne.b32 %p, $1, 0;\ncvt.u16.u32 %h, $2;\n@%p " + mods +
             ".u8 [$0], %h;\n}";
    }
    cons += ",~{memory}";
    inline_asm(text, cons, b_.getVoidTy(), args);
  }
  return Status::ok();
}

Status GpuLowering::lower_atomic(OpId o) {
  ++mem_epoch_;
  const ir::OpData& op = f_->op(o);
  const bool cas = op.code == Opcode::AtomicCas;
  ValueId res = op.results[0];
  EType e = etype(f_->type_of(res));
  const Val& ptr = val(op.operands[0]);
  ValueId mv = f_->operand(o, "mask");
  const int eb = elem_bytes(e);
  llvm::AtomicOrdering ord = atomic_ordering(enum_attr(*f_, o, "order"));
  // LLVM 19's NVPTX backend writes `atom` without its memory order (relaxed), so the order is
  // made of fences: release and acq_rel fence before the atomic, acquire and acq_rel after, at
  // the op's scope. Measured on the H100: a spin lock over block loads and stores
  // (tests/run/spin_lock.tri) lost updates without them.
  const int64_t order = enum_attr(*f_, o, "order");
  const bool release = order == 2 || order == 3, acquire = order == 1 || order == 3;
  const int64_t scope = enum_attr(*f_, o, "scope");
  auto fence = [&] {
    const char* text = scope == 0 ? "fence.acq_rel.cta;" : scope == 2 ? "fence.acq_rel.sys;" : "fence.acq_rel.gpu;";
    inline_asm(text, "~{memory}", b_.getVoidTy());
  };
  auto one = [&](llvm::Value* p, llvm::Value* cmp, llvm::Value* v) -> llvm::Value* {
    if (!cas) return em_.atomic_lane(*f_, o, p, v, e);
    llvm::Type* it = b_.getIntNTy(eb * 8);
    auto bits = [&](llvm::Value* x) -> llvm::Value* {
      if (e.s == Scalar::I1) return b_.CreateZExt(x, it);
      return x->getType() == it ? x : b_.CreateBitCast(x, it);
    };
    llvm::Value* pair = b_.CreateAtomicCmpXchg(p, bits(cmp), bits(v), llvm::MaybeAlign(eb), ord,
                                               atomic_failure_ordering(ord));
    llvm::Value* old = b_.CreateExtractValue(pair, 0);
    if (e.s == Scalar::I1) return b_.CreateICmpNE(old, b_.getInt8(0));
    return old->getType() == reg_ty(e) ? old : b_.CreateBitCast(old, reg_ty(e));
  };
  // Runs one lane under `cond` and returns its result (undefined where cond is false).
  auto guarded = [&](llvm::Value* cond, llvm::Value* p, llvm::Value* cmp, llvm::Value* v) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::Value* r = nullptr;
    llvm::BasicBlock* in = pre;
    emit_if(cond, [&] {
      r = one(p, cmp, v);
      in = b_.GetInsertBlock();
    });
    if (llvm::isa<llvm::ConstantInt>(cond)) return r;
    llvm::PHINode* phi = b_.CreatePHI(reg_ty(e), 2);
    phi->addIncoming(r, in);
    phi->addIncoming(llvm::UndefValue::get(reg_ty(e)), pre);
    return static_cast<llvm::Value*>(phi);
  };
  if (ptr.kind == Val::Kind::Scalar) {
    // Thread 0 performs it, between its fences; the old value reaches the others through shared
    // memory. A release (release or acq_rel: a lock's release) must order every thread's earlier
    // memory operations, not only thread 0's: a barrier first, after which thread 0's fence
    // covers them (fences are cumulative over what the barrier ordered before them; CUTLASS's
    // semaphores and Triton's scalar atomics rely on the same). Without the barrier a spin lock
    // over a critical section of block loads and stores (Triton's layer-norm backward) let the
    // next holder read partial sums some warps had not stored yet. An acquire is passed on to
    // the other threads by the barrier after it. Every thread fencing instead cost a GPU-scope
    // MEMBAR per warp and a barrier more per atomic (layer-norm backward: 6 MEMBAR.ALL.GPU and
    // 14 barriers where Triton has 3 and 8).
    const bool used = uses(res) != 0;
    if (release || used) barrier();  // also: every thread is done with the shared slot's last use
    llvm::Value* cond = b_.CreateICmpEQ(tid_, b_.getInt32(0));
    if (mv != ir::kNoValue) cond = b_.CreateAnd(cond, val(mv).s);
    if (used) need_smem(8);
    emit_if(cond, [&] {
      if (release) fence();
      llvm::Value* r = one(ptr.s, cas ? val(op.operands[1]).s : nullptr, val(op.operands[cas ? 2 : 1]).s);
      if (acquire) fence();
      if (used) b_.CreateAlignedStore(to_mem(r, e), smem_ptr(b_.getInt32(0)), llvm::Align(eb));
    });
    if (used || acquire) barrier();
    if (used) {
      set(res, scalar(from_mem(b_.CreateAlignedLoad(mem_ty(e), smem_ptr(b_.getInt32(0)), llvm::Align(eb)), e), e));
    } else {
      set(res, scalar(llvm::UndefValue::get(reg_ty(e)), e));
    }
    return Status::ok();
  }
  Layout l = ptr.kind == Val::Kind::Dist ? ptr.lay : default_layout(ptr.shape, e);
  if (release) fence();
  if (!cas && combine_atomic(o, l)) {
    if (acquire) fence();
    return Status::ok();
  }
  std::vector<llvm::Value*> ptrs = regs_in(ptr, l);
  std::vector<llvm::Value*> cmps = cas ? regs_in(val(op.operands[1]), l) : std::vector<llvm::Value*>();
  std::vector<llvm::Value*> vals = regs_in(val(op.operands[cas ? 2 : 1]), l);
  std::vector<llvm::Value*> masks = mv != ir::kNoValue ? regs_in(val(mv), l) : std::vector<llvm::Value*>();
  const uint64_t dup = replicated_reg_mask(l);
  llvm::Value* own = owner(l);
  std::vector<llvm::Value*> out(l.nregs());
  for (int64_t r = 0; r < l.nregs(); ++r) {
    if (r & dup) continue;
    llvm::Value* cond = own;
    if (!masks.empty()) cond = b_.CreateAnd(cond, masks[r]);
    out[r] = guarded(cond, ptrs[r], cas ? cmps[r] : nullptr, vals[r]);
  }
  for (int64_t r = 0; r < l.nregs(); ++r)
    if (r & dup) out[r] = out[r & ~dup];
  if (acquire) fence();
  Val v = dist(e, l, std::move(out));
  if (uses(res) != 0 && (replicated_lane_mask(l) || replicated_warp_mask(l))) {
    // Replicated threads did not perform the atomic: give them the owners' results.
    int64_t n = 1;
    for (int64_t d : l.shape) n *= d;
    need_smem(static_cast<uint64_t>(n) * eb);
    barrier();
    emit_if(own, [&] {
      for (int64_t r = 0; r < l.nregs(); ++r) {
        if (r & dup) continue;
        llvm::Value* off = b_.CreateMul(linear(coords(l, r), l.shape), b_.getInt32(eb));
        b_.CreateAlignedStore(to_mem(v.regs[r], e), smem_ptr(off), llvm::Align(eb));
      }
    });
    barrier();
    for (int64_t r = 0; r < l.nregs(); ++r) {
      llvm::Value* off = b_.CreateMul(linear(coords(l, r), l.shape), b_.getInt32(eb));
      v.regs[r] = from_mem(b_.CreateAlignedLoad(mem_ty(e), smem_ptr(off), llvm::Align(eb)), e);
    }
  }
  set(res, std::move(v));
  return Status::ok();
}

bool GpuLowering::combine_atomic(OpId o, const Layout& l) {
  // Many lanes of a program updating few addresses (a histogram) are combined in a shared-memory
  // table keyed by address before anything reaches global memory: each lane adds into its
  // address's slot with a shared-memory atomic, then the program sends one global atomic per
  // distinct address. Only where that cannot change what anyone observes: the old values are
  // unused, the order is relaxed, and the kind is commutative and associative on the type.
  const ir::OpData& op = f_->op(o);
  const std::string kind = enum_name(*f_, o, "kind");
  EType e = etype(f_->type_of(op.results[0]));
  if (uses(op.results[0]) != 0 || enum_name(*f_, o, "order") != "relaxed") return false;
  const bool i32 = !e.ptr && (e.s == Scalar::I32);
  const bool f32 = !e.ptr && e.s == Scalar::F32;
  if (!(i32 && (kind == "add" || kind == "min" || kind == "max" || kind == "umin" || kind == "umax" ||
                kind == "and" || kind == "or" || kind == "xor")) &&
      !(f32 && kind == "add"))
    return false;
  int64_t n = 1;
  for (int64_t d : l.shape) n *= d;
  if (n < 256) return false;
  constexpr uint32_t kSlots = 512, kProbes = 8;
  llvm::AtomicRMWInst::BinOp bop = kind == "add" ? (f32 ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add)
                                   : kind == "min" ? llvm::AtomicRMWInst::Min
                                   : kind == "max" ? llvm::AtomicRMWInst::Max
                                   : kind == "umin" ? llvm::AtomicRMWInst::UMin
                                   : kind == "umax" ? llvm::AtomicRMWInst::UMax
                                   : kind == "and" ? llvm::AtomicRMWInst::And
                                   : kind == "or" ? llvm::AtomicRMWInst::Or
                                                  : llvm::AtomicRMWInst::Xor;
  uint32_t ident = kind == "and" || kind == "umin" ? 0xffffffffu : kind == "min" ? 0x7fffffffu
                   : kind == "max" ? 0x80000000u : 0u;
  if (i32 && combine_atomic_direct(o, l, kind, bop, ident)) return true;
  llvm::Type* vt = f32 ? b_.getFloatTy() : b_.getInt32Ty();
  llvm::Value* identity = f32 ? static_cast<llvm::Value*>(llvm::ConstantFP::get(vt, 0.0)) : b_.getInt32(ident);
  // Keys (addresses; 0 is an empty slot) then values.
  need_smem(kSlots * 12);
  auto key_ptr = [&](llvm::Value* i) { return smem_ptr(b_.CreateMul(i, b_.getInt32(8))); };
  auto val_ptr = [&](llvm::Value* i) { return smem_ptr(b_.CreateAdd(b_.getInt32(kSlots * 8), b_.CreateMul(i, b_.getInt32(4)))); };
  // Each thread walks slots tid, tid + threads, ...
  auto for_my_slots = [&](const std::function<void(llvm::Value*)>& body) {
    for (uint32_t k = 0; k < kSlots; k += threads()) {
      llvm::Value* i = b_.CreateAdd(tid_, b_.getInt32(k));
      if (k + threads() <= kSlots) body(i);
      else emit_if(b_.CreateICmpULT(i, b_.getInt32(kSlots)), [&] { body(i); });
    }
  };
  barrier();
  for_my_slots([&](llvm::Value* i) {
    b_.CreateAlignedStore(b_.getInt64(0), key_ptr(i), llvm::Align(8));
    b_.CreateAlignedStore(identity, val_ptr(i), llvm::Align(4));
  });
  barrier();
  ValueId mv = f_->operand(o, "mask");
  std::vector<llvm::Value*> ptrs = regs_in(val(op.operands[0]), l);
  std::vector<llvm::Value*> vals = regs_in(val(op.operands[1]), l);
  std::vector<llvm::Value*> masks = mv != ir::kNoValue ? regs_in(val(mv), l) : std::vector<llvm::Value*>();
  const uint64_t dup = replicated_reg_mask(l);
  llvm::Value* own = owner(l);
  // Adds `value` into the slot of `addr`, probing up to kProbes slots; a lane that finds none
  // updates global memory (`gptr`) itself.
  auto probe_and_update = [&](llvm::Value* addr, llvm::Value* value, llvm::Value* gptr) {
    llvm::Value* h = b_.CreateTrunc(b_.CreateLShr(b_.CreateMul(b_.CreateLShr(addr, 2), b_.getInt64(0x9E3779B97F4A7C15ull)), 55),
                                    b_.getInt32Ty());
    // Probe up to kProbes slots; a lane that finds none updates global memory itself.
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(c_, "probe", lf_);
    llvm::BasicBlock* hit = llvm::BasicBlock::Create(c_, "probe.hit", lf_);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(c_, "probe.next", lf_);
    llvm::BasicBlock* miss = llvm::BasicBlock::Create(c_, "probe.miss", lf_);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "probe.done", lf_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* k = b_.CreatePHI(b_.getInt32Ty(), 2);
    k->addIncoming(b_.getInt32(0), pre);
    llvm::Value* slot = b_.CreateAnd(b_.CreateAdd(h, k), b_.getInt32(kSlots - 1));
    // Most lanes find their address already in place: a plain read first, the
    // compare-and-swap only when the slot looks free.
    llvm::LoadInst* seen = b_.CreateAlignedLoad(b_.getInt64Ty(), key_ptr(slot), llvm::Align(8));
    seen->setVolatile(true);
    llvm::BasicBlock* claim = llvm::BasicBlock::Create(c_, "probe.claim", lf_);
    llvm::BasicBlock* check = llvm::BasicBlock::Create(c_, "probe.check", lf_);
    llvm::BasicBlock* at_seen = b_.GetInsertBlock();
    b_.CreateCondBr(b_.CreateICmpEQ(seen, b_.getInt64(0)), claim, check);
    b_.SetInsertPoint(claim);
    llvm::Value* pair = b_.CreateAtomicCmpXchg(key_ptr(slot), b_.getInt64(0), addr, llvm::MaybeAlign(8),
                                               llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
    llvm::Value* won = b_.CreateExtractValue(pair, 0);
    b_.CreateBr(check);
    b_.SetInsertPoint(check);
    llvm::PHINode* prev = b_.CreatePHI(b_.getInt64Ty(), 2);
    prev->addIncoming(seen, at_seen);
    prev->addIncoming(won, claim);
    llvm::Value* mine = b_.CreateOr(b_.CreateICmpEQ(prev, b_.getInt64(0)), b_.CreateICmpEQ(prev, addr));
    b_.CreateCondBr(mine, hit, next);
    b_.SetInsertPoint(hit);
    b_.CreateAtomicRMW(bop, val_ptr(slot), value, llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
    b_.CreateBr(done);
    b_.SetInsertPoint(next);
    llvm::Value* k1 = b_.CreateAdd(k, b_.getInt32(1));
    k->addIncoming(k1, next);
    b_.CreateCondBr(b_.CreateICmpULT(k1, b_.getInt32(kProbes)), loop, miss);
    b_.SetInsertPoint(miss);
    b_.CreateAtomicRMW(bop, gptr, value, llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  };
  // When every lane adds the same value (a constant or a splat: a histogram's 1), the lanes of a
  // warp that share an address first agree on one update (match.any): its leader adds the value
  // times the number of peers (min, max, and, or: the value once), so no two lanes of a warp
  // touch one slot in the same instruction and the table sees each address once per warp.
  const ir::OpData* vdef = f_->value(op.operands[1]).def_op == ir::kNoOp ? nullptr : &f_->op(f_->value(op.operands[1]).def_op);
  const bool uniform = vdef && (vdef->code == Opcode::Const || vdef->code == Opcode::Splat) && kind != "xor" &&
                       !(f32 && kind != "add");
  for (int64_t r = 0; r < l.nregs(); ++r) {
    if (r & dup) continue;
    llvm::Value* cond = own;
    if (!masks.empty()) cond = b_.CreateAnd(cond, masks[r]);
    emit_if(cond, [&] {
      llvm::Value* addr = b_.CreatePtrToInt(ptrs[r], b_.getInt64Ty());
      llvm::Value* value = vals[r];
      if (uniform) {
        llvm::Value* active = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_activemask, {}, {});
        llvm::Value* peers = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_match_any_sync_i64, {}, {active, addr});
        llvm::Value* below = b_.CreateSub(b_.CreateShl(b_.getInt32(1), lane_), b_.getInt32(1));
        llvm::Value* leader = b_.CreateICmpEQ(b_.CreateAnd(peers, below), b_.getInt32(0));
        if (kind == "add") {
          llvm::Value* count = b_.CreateIntrinsic(llvm::Intrinsic::ctpop, {b_.getInt32Ty()}, {peers});
          value = f32 ? b_.CreateFMul(value, b_.CreateUIToFP(count, vt)) : b_.CreateMul(value, count);
        }
        llvm::BasicBlock* lead = llvm::BasicBlock::Create(c_, "agg.leader", lf_);
        llvm::BasicBlock* after = llvm::BasicBlock::Create(c_, "agg.done", lf_);
        b_.CreateCondBr(leader, lead, after);
        b_.SetInsertPoint(lead);
        probe_and_update(addr, value, ptrs[r]);
        b_.CreateBr(after);
        b_.SetInsertPoint(after);
        return;
      }
      probe_and_update(addr, value, ptrs[r]);
    });
  }
  barrier();
  for_my_slots([&](llvm::Value* i) {
    llvm::Value* key = b_.CreateAlignedLoad(b_.getInt64Ty(), key_ptr(i), llvm::Align(8));
    emit_if(b_.CreateICmpNE(key, b_.getInt64(0)), [&] {
      llvm::Value* v = b_.CreateAlignedLoad(vt, val_ptr(i), llvm::Align(4));
      b_.CreateAtomicRMW(bop, b_.CreateIntToPtr(key, llvm::PointerType::get(c_, 1)), v, llvm::MaybeAlign(4),
                         llvm::AtomicOrdering::Monotonic);
    });
  });
  // The result is unused: any registers do.
  set(op.results[0], dist(e, l, std::vector<llvm::Value*>(l.nregs(), llvm::UndefValue::get(reg_ty(e)))));
  return true;
}

// The i32 case of combine_atomic where the pointers are one base plus i32 offsets (addptr of a
// splat: a histogram's bins + v): each warp combines into its own direct-mapped table of
// kTable slots indexed by the offset, with plain shared-memory atomics (no hashing, no probing,
// and no other warp contending for the slot); offsets outside [0, kTable) go to global memory
// at once. Then the warps' tables are combined slot by slot and each slot that moved from the
// identity is sent with one global atomic.
bool GpuLowering::combine_atomic_direct(OpId o, const Layout& l, const std::string& kind,
                                        llvm::AtomicRMWInst::BinOp bop, uint32_t ident) {
  const ir::OpData& op = f_->op(o);
  const OpId pdef = f_->value(op.operands[0]).def_op;
  if (pdef == ir::kNoOp || f_->op(pdef).code != Opcode::AddPtr) return false;
  const ir::OpData& ap = f_->op(pdef);
  const OpId bdef = f_->value(ap.operands[0]).def_op;
  if (bdef == ir::kNoOp || f_->op(bdef).code != Opcode::Splat) return false;
  const Val& base = val(f_->op(bdef).operands[0]);
  const EType oe = val(ap.operands[1]).et;
  if (base.kind != Val::Kind::Scalar || oe.ptr || oe.s != Scalar::I32) return false;
  constexpr uint32_t kTable = 256;
  const uint32_t warps = static_cast<uint32_t>(opt_.num_warps);
  need_smem(static_cast<uint64_t>(kTable) * warps * 4);
  auto slot_ptr = [&](llvm::Value* w, llvm::Value* i) {
    return smem_ptr(b_.CreateMul(b_.CreateAdd(b_.CreateMul(w, b_.getInt32(kTable)), i), b_.getInt32(4)));
  };
  barrier();
  for (uint32_t k = 0; k < kTable * warps; k += threads())
    b_.CreateAlignedStore(b_.getInt32(ident), smem_ptr(b_.CreateMul(b_.CreateAdd(tid_, b_.getInt32(k)), b_.getInt32(4))),
                          llvm::Align(4));
  barrier();
  ValueId mv = f_->operand(o, "mask");
  std::vector<llvm::Value*> ptrs = regs_in(val(op.operands[0]), l);
  std::vector<llvm::Value*> offs = regs_in(val(ap.operands[1]), l);
  std::vector<llvm::Value*> vals = regs_in(val(op.operands[1]), l);
  std::vector<llvm::Value*> masks = mv != ir::kNoValue ? regs_in(val(mv), l) : std::vector<llvm::Value*>();
  const uint64_t dup = replicated_reg_mask(l);
  llvm::Value* own = owner(l);
  for (int64_t r = 0; r < l.nregs(); ++r) {
    if (r & dup) continue;
    llvm::Value* cond = own;
    if (!masks.empty()) cond = b_.CreateAnd(cond, masks[r]);
    emit_if(cond, [&] {
      llvm::Value* in_table = b_.CreateICmpULT(offs[r], b_.getInt32(kTable));
      llvm::BasicBlock* table = llvm::BasicBlock::Create(c_, "atomic.table", lf_);
      llvm::BasicBlock* global = llvm::BasicBlock::Create(c_, "atomic.global", lf_);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(c_, "atomic.done", lf_);
      b_.CreateCondBr(in_table, table, global);
      b_.SetInsertPoint(table);
      b_.CreateAtomicRMW(bop, slot_ptr(warp_, offs[r]), vals[r], llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
      b_.CreateBr(done);
      b_.SetInsertPoint(global);
      b_.CreateAtomicRMW(bop, ptrs[r], vals[r], llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    });
  }
  barrier();
  for (uint32_t k = 0; k < kTable; k += threads()) {
    llvm::Value* i = b_.CreateAdd(tid_, b_.getInt32(k));
    auto body = [&] {
      llvm::Value* acc = b_.CreateAlignedLoad(b_.getInt32Ty(), slot_ptr(b_.getInt32(0), i), llvm::Align(4));
      for (uint32_t w = 1; w < warps; ++w) {
        llvm::Value* x = b_.CreateAlignedLoad(b_.getInt32Ty(), slot_ptr(b_.getInt32(w), i), llvm::Align(4));
        acc = kind == "add"    ? b_.CreateAdd(acc, x)
              : kind == "min"  ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, acc, x)
              : kind == "max"  ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, acc, x)
              : kind == "umin" ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, acc, x)
              : kind == "umax" ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, acc, x)
              : kind == "and"  ? b_.CreateAnd(acc, x)
              : kind == "or"   ? b_.CreateOr(acc, x)
                               : b_.CreateXor(acc, x);
      }
      emit_if(b_.CreateICmpNE(acc, b_.getInt32(ident)), [&] {
        llvm::Value* p = b_.CreateGEP(b_.getInt32Ty(), base.s, i);
        b_.CreateAtomicRMW(bop, p, acc, llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
      });
    };
    if (k + threads() <= kTable) body();
    else emit_if(b_.CreateICmpULT(i, b_.getInt32(kTable)), body);
  }
  set(op.results[0], dist(etype(f_->type_of(op.results[0])), l,
                          std::vector<llvm::Value*>(l.nregs(), llvm::UndefValue::get(b_.getInt32Ty()))));
  return true;
}

int GpuLowering::uses(ValueId v) {
  auto it = uses_.find(f_);
  if (it == uses_.end()) {
    std::vector<int> u(f_->values.size(), 0);
    for (const ir::OpData& od : f_->ops)
      for (ValueId x : od.operands)
        if (x != ir::kNoValue) ++u[x];
    it = uses_.emplace(f_, std::move(u)).first;
  }
  return it->second[v];
}

}  // namespace tri::codegen::nvptx::detail
