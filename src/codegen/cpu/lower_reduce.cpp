// Reductions, scans and dot on the CPU: reductions fold into a few accumulator lanes and finish
// with a short tree (vectorizable without reassociating float adds), scans run sequentially
// along their axis and vectorize across the others, and dot accumulates c + a*b over k in order.
#include "codegen/cpu/lower_impl.h"

#include <algorithm>
#include <cassert>

#include "codegen/scalar_ops.h"
#include "codegen/vec_math.h"

namespace tri::codegen::cpu::detail {

// ---------------------------------------------------------------------------------------------
// Reductions, scans, dot

Status FnLowering::lower_reduce(OpId o) {
  const ir::OpData& op = f_.op(o);
  std::vector<ValueId> srcs = f_.variadic(o);
  const int64_t axis = f_.attr(o, "axis").i;
  const std::string kind = enum_name(o, "kind");
  const bool has_region = !op.regions.empty();
  if (!has_region && kind.empty()) return error(o, Code::Compile, "'reduce' has neither a kind nor a combine region");
  if (srcs.empty()) return error(o, Code::Compile, "'reduce' has no operand");
  Shape s = shape(f_.type_of(srcs[0]));
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return error(o, Code::Compile, "'reduce' axis out of range");
  const size_t a = static_cast<size_t>(axis);
  const int64_t n = s[a];
  const bool arg = kind == "argmax" || kind == "argmin";
  if (!has_region && !arg && srcs.size() != 1) return error(o, Code::Compile, "builtin 'reduce' takes one operand");
  if (arg && srcs.size() != 1) return error(o, Code::Compile, "'" + kind + "' takes one operand");
  std::vector<Rep> in;
  for (ValueId v : srcs) in.push_back(rep(v));
  EType i32e{false, Scalar::I32};
  if (arg) {
    in.push_back(lazy_rep(i32e, s, 1, [this, a](const Idx& idx) { return b_.CreateTrunc(idx[a], b_.getInt32Ty()); }));
  }
  if (!has_region && !arg) {
    llvm::BasicBlock* probe = llvm::BasicBlock::Create(c_, "probe", lf_);
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(probe);
    llvm::Value* u = llvm::UndefValue::get(reg_ty(in[0].et));
    llvm::Value* ok = builtin_combine(kind, in[0].et, u, u);
    probe->eraseFromParent();
    if (!ok) return error(o, Code::Compile, "'reduce' kind '" + kind + "' does not apply to " + ir::scalar_name(in[0].et.s));
  }
  // W accumulator lanes along the axis, each folding C = n / W elements sequentially, then a
  // tree over the lanes. Builtin kinds are commutative: lane j folds elements j, W + j, ...
  // (contiguous vector loads) and the tree pairs j with j + W/2. A combine region need only be
  // associative, so the order of elements is kept: lane j folds the chunk [j*C, (j+1)*C) and
  // the tree pairs neighbours. The source is read through its lazy form, so the expression
  // that feeds a reduction (exp(x - m)) is computed inside the fold loop.
  const bool ordered = has_region;
  int64_t inner = 1;
  for (size_t d = a + 1; d < s.size(); ++d) inner *= s[d];
  constexpr int64_t kLanes = 32;
  const int64_t W = inner >= kLanes ? 1 : std::min(n, kLanes / inner);
  const int64_t C = n / W;
  Shape ws = s;
  ws[a] = W;
  std::vector<Rep> acc;
  for (const Rep& r : in) {
    llvm::Value* buf = alloca_buffer(mem_ty(r.et), num_elems(ws), elem_bytes(r.et));
    acc.push_back(buffer_rep(buf, r.et, ws));
  }
  Status st;
  auto combine = [&](const std::vector<llvm::Value*>& x, const std::vector<llvm::Value*>& y) {
    std::vector<llvm::Value*> r;
    if (has_region) {
      std::vector<llvm::Value*> args = x;
      args.insert(args.end(), y.begin(), y.end());
      st = lower_combine(op.regions[0], args, &r);
      if (!st.is_ok()) r.assign(x.size(), nullptr);
    } else if (arg) {
      EType e = in[0].et;
      llvm::Value* va = to_arith(x[0], e);
      llvm::Value* vb = to_arith(y[0], e);
      bool mx = kind == "argmax";
      llvm::Value* better;
      llvm::Value* equal;
      if (ir::is_float(e.s)) {
        better = mx ? b_.CreateFCmpOGT(vb, va) : b_.CreateFCmpOLT(vb, va);
        equal = b_.CreateFCmpOEQ(vb, va);
      } else {
        better = mx ? b_.CreateICmpSGT(vb, va) : b_.CreateICmpSLT(vb, va);
        equal = b_.CreateICmpEQ(vb, va);
      }
      // Ties go to the lower index (the first extreme element).
      llvm::Value* take = b_.CreateOr(better, b_.CreateAnd(equal, b_.CreateICmpSLT(y[1], x[1])));
      r = {b_.CreateSelect(take, y[0], x[0]), b_.CreateSelect(take, y[1], x[1])};
    } else {
      r = {builtin_combine(kind, in[0].et, x[0], y[0])};
    }
    return r;
  };
  auto store_acc = [&](const Idx& idx, const std::vector<llvm::Value*>& r) {
    llvm::Value* lin = linear(idx, ws);
    for (size_t j = 0; j < acc.size(); ++j) {
      llvm::Type* mt = mem_ty(acc[j].et);
      b_.CreateStore(to_mem(b_, r[j], acc[j].et.s), b_.CreateGEP(mt, acc[j].v, lin));
    }
  };
  auto src_pos = [&](llvm::Value* j, llvm::Value* c) -> llvm::Value* {
    return ordered ? b_.CreateAdd(b_.CreateMul(j, b_.getInt64(C)), c) : b_.CreateAdd(b_.CreateMul(c, b_.getInt64(W)), j);
  };
  // Lanes start with the first element of their share.
  loop_nest(ws, [&](const Idx& idx) {
    Idx sidx = idx;
    sidx[a] = src_pos(idx[a], b_.getInt64(0));
    std::vector<llvm::Value*> v;
    for (const Rep& r : in) v.push_back(elem(r, sidx));
    store_acc(idx, v);
  });
  if (C > 1) {
    Shape outer(s.begin(), s.begin() + a);
    Shape rest(ws.begin() + a, ws.end());
    loop_nest(outer, [&](const Idx& oi) {
      emit_loop(C - 1, [&](llvm::Value* c0) {
        llvm::Value* c = b_.CreateAdd(c0, b_.getInt64(1));
        loop_nest(rest, [&](const Idx& ri) {
          if (!st.is_ok()) return;
          Idx idx = oi;
          idx.append(ri.begin(), ri.end());
          Idx sidx = idx;
          sidx[a] = src_pos(idx[a], c);
          std::vector<llvm::Value*> x, y;
          for (size_t j = 0; j < in.size(); ++j) {
            x.push_back(elem(acc[j], idx));
            y.push_back(elem(in[j], sidx));
          }
          std::vector<llvm::Value*> r = combine(x, y);
          if (st.is_ok()) store_acc(idx, r);
        });
      });
    });
    TRI_RETURN_IF_ERROR(st);
  }
  for (int64_t half = W / 2; half >= 1; half /= 2) {
    Shape hs = ws;
    hs[a] = half;
    loop_nest(hs, [&](const Idx& idx) {
      if (!st.is_ok()) return;
      Idx ia = idx, ib = idx;
      if (ordered) {
        ia[a] = b_.CreateMul(idx[a], b_.getInt64(2));
        ib[a] = b_.CreateAdd(ia[a], b_.getInt64(1));
      } else {
        ib[a] = b_.CreateAdd(idx[a], b_.getInt64(half));
      }
      std::vector<llvm::Value*> x, y;
      for (const Rep& w : acc) {
        x.push_back(elem(w, ia));
        y.push_back(elem(w, ib));
      }
      std::vector<llvm::Value*> r = combine(x, y);
      if (st.is_ok()) store_acc(idx, r);
    });
    TRI_RETURN_IF_ERROR(st);
  }
  for (size_t j = 0; j < op.results.size(); ++j) {
    const Rep& w = arg ? acc.back() : acc[j];
    ValueId res = op.results[j];
    TypeId rt = f_.type_of(res);
    if (!m_.types.is_block(rt)) {
      Idx zero(s.size(), b_.getInt64(0));
      reps_[res] = scalar_rep(elem(w, zero), etype(rt));
      continue;
    }
    reps_[res] = lazy_rep(etype(rt), shape(rt), 1, [this, w, a](const Idx& idx) {
      Idx full(idx.begin(), idx.end());
      full.insert(full.begin() + a, b_.getInt64(0));
      return elem(w, full);
    });
  }
  return Status::ok();
}

Status FnLowering::lower_scan(OpId o) {
  const ir::OpData& op = f_.op(o);
  std::vector<ValueId> srcs = f_.variadic(o);
  const int64_t axis = f_.attr(o, "axis").i;
  const std::string kind = enum_name(o, "kind");
  const bool reverse = f_.attr(o, "reverse").i != 0;
  const bool has_region = !op.regions.empty();
  if (!has_region && kind.empty()) return error(o, Code::Compile, "'scan' has neither a kind nor a combine region");
  if (srcs.empty()) return error(o, Code::Compile, "'scan' has no operand");
  Shape s = shape(f_.type_of(srcs[0]));
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return error(o, Code::Compile, "'scan' axis out of range");
  if (!has_region && srcs.size() != 1) return error(o, Code::Compile, "builtin 'scan' takes one operand");
  const int64_t n = s[axis];
  std::vector<Rep> work;
  for (ValueId v : srcs) {
    const Rep& r = rep(v);
    llvm::Value* buf = alloca_buffer(mem_ty(r.et), num_elems(s), elem_bytes(r.et));
    store_into(r, buf);
    work.push_back(buffer_rep(buf, r.et, s));
  }
  if (!has_region) {
    llvm::BasicBlock* probe = llvm::BasicBlock::Create(c_, "probe", lf_);
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(probe);
    llvm::Value* u = llvm::UndefValue::get(reg_ty(work[0].et));
    llvm::Value* ok = builtin_combine(kind, work[0].et, u, u);
    probe->eraseFromParent();
    if (!ok) return error(o, Code::Compile, "'scan' kind '" + kind + "' does not apply to " + ir::scalar_name(work[0].et.s));
  }
  Status st;
  Shape rest = s;
  rest[axis] = 1;
  // Sequential along the axis (element k combines the running value at k-1, or k+1 when
  // reversed, with its own); every step is one loop over all the other dimensions.
  emit_loop(n - 1, [&](llvm::Value* kk) {
    llvm::Value* k = reverse ? b_.CreateSub(b_.getInt64(n - 2), kk) : b_.CreateAdd(kk, b_.getInt64(1));
    llvm::Value* prev = reverse ? b_.CreateAdd(k, b_.getInt64(1)) : b_.CreateSub(k, b_.getInt64(1));
    loop_nest(rest, [&](const Idx& idx0) {
      if (!st.is_ok()) return;
      Idx cur = idx0, before = idx0;
      cur[axis] = k;
      before[axis] = prev;
      std::vector<llvm::Value*> a, bv, r;
      for (const Rep& w : work) {
        a.push_back(elem(w, before));
        bv.push_back(elem(w, cur));
      }
      if (has_region) {
        std::vector<llvm::Value*> args = a;
        args.insert(args.end(), bv.begin(), bv.end());
        st = lower_combine(op.regions[0], args, &r);
        if (!st.is_ok()) return;
      } else {
        r = {builtin_combine(kind, work[0].et, a[0], bv[0])};
      }
      llvm::Value* lin = linear(cur, s);
      for (size_t j = 0; j < work.size(); ++j) {
        llvm::Type* mt = mem_ty(work[j].et);
        b_.CreateStore(to_mem(b_, r[j], work[j].et.s), b_.CreateGEP(mt, work[j].v, lin));
      }
    });
  });
  TRI_RETURN_IF_ERROR(st);
  for (size_t j = 0; j < op.results.size() && j < work.size(); ++j) reps_[op.results[j]] = work[j];
  return Status::ok();
}

Status FnLowering::lower_dot(OpId o) {
  const ir::OpData& op = f_.op(o);
  Rep a = rep(op.operands[0]), bm = rep(op.operands[1]), acc = rep(op.operands[2]);
  ValueId res = op.results[0];
  TypeId rt = f_.type_of(res);
  EType ec = etype(rt);
  Shape sa = a.shape, sb = bm.shape, sc = shape(rt);
  const size_t rank = sc.size();
  if ((rank != 2 && rank != 3) || sa.size() != rank || sb.size() != rank)
    return error(o, Code::Compile, "'dot' operands must be 2-D or 3-D blocks of one rank");
  const int64_t B = rank == 3 ? sc[0] : 1;
  const int64_t M = sc[rank - 2], N = sc[rank - 1], K = sa[rank - 1];
  if (sa[rank - 2] != M || sb[rank - 2] != K || sb[rank - 1] != N)
    return error(o, Code::Compile, "'dot' shapes do not match");
  const bool tf32 = enum_attr(o, "precision") == 1;
  // Compute type: the accumulator's (f32 for small-float accumulators).
  llvm::Type* ct = ir::is_int(ec.s) ? reg_ty(ec) : (ec.s == Scalar::F64 ? b_.getDoubleTy() : b_.getFloatTy());
  const int cbytes = static_cast<int>(ct->getPrimitiveSizeInBits() / 8);
  auto conv = [&](llvm::Value* v, EType e, bool input) -> llvm::Value* {
    if (ir::is_int(e.s)) return b_.CreateSExtOrTrunc(v, ct);
    llvm::Value* x = to_arith(v, e);
    if (tf32 && input && x->getType()->isFloatTy()) x = emit_round_tf32(b_, x);
    if (x->getType() != ct) x = ct->isDoubleTy() ? b_.CreateFPExt(x, ct) : b_.CreateFPTrunc(x, ct);
    return x;
  };
  if (ir::is_int(ec.s) != ir::is_int(a.et.s) || ir::is_int(ec.s) != ir::is_int(bm.et.s))
    return error(o, Code::Compile, "'dot' mixes integer and float operands");
  auto stage = [&](const Rep& r, const Shape& sh, bool input) {
    llvm::Value* buf = alloca_buffer(ct, num_elems(sh), cbytes);
    loop_nest(sh, [&](const Idx& idx) {
      b_.CreateStore(conv(elem(r, idx), r.et, input), b_.CreateGEP(ct, buf, linear(idx, sh)));
    });
    return buf;
  };
  llvm::Value* A = stage(a, sa, true);
  llvm::Value* Bb = stage(bm, sb, true);
  llvm::Value* C = stage(acc, sc, false);
  // C[m, n] += A[m, k] * B[k, n] with n innermost: a vectorizable elementwise update per k.
  emit_loop(B, [&](llvm::Value* bi) {
    emit_loop(M, [&](llvm::Value* m) {
      emit_loop(K, [&](llvm::Value* k) {
        llvm::Value* arow = b_.CreateAdd(b_.CreateMul(bi, b_.getInt64(M * K)), b_.CreateMul(m, b_.getInt64(K)));
        llvm::Value* av = b_.CreateLoad(ct, b_.CreateGEP(ct, A, b_.CreateAdd(arow, k)));
        llvm::Value* brow = b_.CreateAdd(b_.CreateMul(bi, b_.getInt64(K * N)), b_.CreateMul(k, b_.getInt64(N)));
        llvm::Value* crow = b_.CreateAdd(b_.CreateMul(bi, b_.getInt64(M * N)), b_.CreateMul(m, b_.getInt64(N)));
        emit_loop(N, [&](llvm::Value* nn) {
          llvm::Value* bv = b_.CreateLoad(ct, b_.CreateGEP(ct, Bb, b_.CreateAdd(brow, nn)));
          llvm::Value* cp = b_.CreateGEP(ct, C, b_.CreateAdd(crow, nn));
          llvm::Value* cv = b_.CreateLoad(ct, cp);
          // c + a*b rounded twice, summed over k in order: docs/ir.md allows no contraction
          // into an fma, and this is the interpreter's order, so the results agree bit for bit.
          llvm::Value* r = ct->isIntegerTy() ? b_.CreateAdd(cv, b_.CreateMul(av, bv))
                                             : b_.CreateFAdd(cv, b_.CreateFMul(av, bv));
          b_.CreateStore(r, cp);
        });
      });
    });
  });
  EType ce = ec;
  if (ct->isFloatTy()) ce.s = Scalar::F32;
  Rep cr = buffer_rep(C, ce, sc);
  if (ce.s == ec.s) {
    reps_[res] = cr;
  } else {
    set_result(res, lazy_rep(ec, sc, 14, [this, cr, ec](const Idx& idx) {
                 return ml_.encode(b_, elem(cr, idx), ec.s, false);
               }));
  }
  return Status::ok();
}

}  // namespace tri::codegen::cpu::detail
