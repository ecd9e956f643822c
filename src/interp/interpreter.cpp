// The reference interpreter (interpreter.h): walks verified, specialized IR op by op, one program
// instance after another, holding every value as a whole block of lanes.
//
// A value is a vector of 64-bit lane patterns (numeric.h says how each type sits in them), plus,
// for pointers, the kernel argument each lane derives from (its provenance, for bounds checks),
// plus, in checked mode, for each lane whether it is undefined and which op made it so. The rules
// this file implements are docs/ir.md's "Semantics"; the choices that text leaves open are:
//  - A masked-off lane of a `load` without `other` (or of an `atomic`/`atomic_cas`) holds 0 bits.
//    In checked mode it is *undefined*: undefinedness flows through elementwise ops, shape ops,
//    reductions, scans and dot (any undefined input lane makes the lanes computed from it
//    undefined; `select` takes it only from the condition and the chosen operand), through
//    loop-carried values and into device functions, and is reported where it is used: a store's
//    value, an address, a mask, a control-flow condition (`if`, `while`, `assert`, `assume`) or
//    a `for` bound. Passing it to a call is not a use: the callee's uses are.
//  - Provenance survives addptr, splat, broadcast, the shape ops, select, bitcast and calls;
//    inttoptr makes a pointer without one, which checked mode does not bounds-check (it still
//    checks alignment). A pointer argument with extent 0 is not bounds-checked either.
//  - Checked mode also checks the launch arguments against their `align`/`divisible` facts, and
//    the facts of multiple_of and max_contiguous (as docs/ir.md words them) on defined lanes.
//  - `for` counts in exact integers (iv never wraps: the loop ends once iv >= hi). A step <= 0 is
//    an error in checked mode, and in any mode when the loop would run (it would never end).
//  - Reductions and scans combine sequentially in index order (scan[reverse] from the last
//    element, the running value as the combine's first operand). argmax/argmin keep the first
//    index of a strictly better value; a NaN never beats anything. Float atomics min/max follow
//    fmin/fmax with NaN propagation; atomic_cas compares bit patterns.
//  - dot sums over K in order, c = c + a*b with a separate rounding for the multiply and the add.
//  - Integer division or remainder by zero gives 0 (numeric.h). Checked mode reports it at the
//    first lane with a defined zero divisor; division has no mask, so that includes lanes a later
//    masked store discards (a masked load's `other` of 0 used as a divisor is reported).
//  - Device calls nest at most kMaxCallDepth deep (deeper is Code::Runtime); the verifier already
//    forbids recursion. A grid with a zero dimension runs no instance.
//  - print sends, per program instance and print op, one text of lines
//      <prefix>pid (x, y, z) idx (i, j): v0, v1
//    one line per active lane in row-major order (`idx (...)` is left out when every value is a
//    scalar). Integers print as signed decimals (i1 as 0/1), floats in the shortest form that
//    reads back to the same f32/f64 (f16, bf16 and f8 through f32), pointers as 0x hex, and an
//    undefined lane in checked mode as `undef`.
#include "interp/interp_impl.h"

namespace tri::interp {
namespace detail {

// ---------------------------------------------------------------------------------------------
// Launch

Status Interp::validate_block(const Function& f, BlockId b, std::set<const Function*>* seen) const {
  const BlockData& bd = f.block(b);
  auto concrete = [&](ValueId v, Loc loc) -> Status {
    if (types_.is_concrete(f.type_of(v))) return Status::ok();
    return error_at(Code::InvalidArgument, m_.source_name, loc,
                    "@" + f.name + " is not specialized: type " + m_.type_str(f.type_of(v)) +
                        " names a constexpr");
  };
  for (ValueId v : bd.args) TRI_RETURN_IF_ERROR(concrete(v, bd.loc));
  for (OpId o : bd.ops) {
    const OpData& op = f.op(o);
    const ir::OpInfo& info = ir::op_info(op.code);
    for (ValueId v : op.results) TRI_RETURN_IF_ERROR(concrete(v, op.loc));
    for (size_t i = 0; i < op.attrs.size(); ++i) {
      if (op.attrs[i].kind == Attr::Kind::Sym)
        return error_at(Code::InvalidArgument, m_.source_name, op.loc,
                        "@" + f.name + " is not specialized: '" + info.name + "' attribute '" + info.attrs[i].name +
                            "' names the constexpr " + op.attrs[i].s);
    }
    if (op.code == Opcode::InlineAsm)
      return error_at(Code::Unsupported, m_.source_name, op.loc, "inline_asm runs only on the GPU backend");
    if (op.code == Opcode::Call) {
      const std::string& name = f.attr(o, "callee").s;
      const Function* callee = m_.find(name);
      if (!callee || callee->is_kernel)
        return error_at(Code::InvalidArgument, m_.source_name, op.loc, "call to unknown device function @" + name);
      if (seen->insert(callee).second) TRI_RETURN_IF_ERROR(validate(*callee, seen));
    }
    for (BlockId r : op.regions) TRI_RETURN_IF_ERROR(validate_block(f, r, seen));
  }
  return Status::ok();
}

Status Interp::validate(const Function& f, std::set<const Function*>* seen) const {
  return validate_block(f, f.body, seen);
}

Status Interp::check_facts(const std::vector<Val>& argvals) const {
  for (size_t i = 0; i < kernel_.params.size(); ++i) {
    const ir::Param& p = kernel_.params[i];
    const Val& v = argvals[i];
    bool is_ptr = types_.is_ptr(p.type);
    if (p.align > 1 && is_ptr && v.bits[0] % p.align != 0)
      return error_at(Code::Runtime, m_.source_name, p.loc,
                      "argument %" + p.name + " is " + hex(v.bits[0]) + ", which is not aligned to " +
                          std::to_string(p.align) + " bytes as its {align=" + std::to_string(p.align) +
                          "} fact says");
    if (p.divisible > 1) {
      bool ok = is_ptr ? v.bits[0] % p.divisible == 0
                       : sext_bits(v.bits[0], elem_width(p.type)) % static_cast<int64_t>(p.divisible) == 0;
      if (!ok)
        return error_at(Code::Runtime, m_.source_name, p.loc,
                        "argument %" + p.name + " is " +
                            (is_ptr ? hex(v.bits[0]) : std::to_string(sext_bits(v.bits[0], elem_width(p.type)))) +
                            ", which is not divisible by " + std::to_string(p.divisible) + " as its {divisible=" +
                            std::to_string(p.divisible) + "} fact says");
    }
  }
  return Status::ok();
}

Status Interp::run(const Grid& grid, uint64_t first, uint64_t last) {
  if (!kernel_.is_kernel)
    return Status(Code::InvalidArgument, "@" + kernel_.name + " is a device function, not a kernel");
  if (nargs_ != kernel_.params.size())
    return Status(Code::LaunchArgs, "kernel @" + kernel_.name + " takes " + std::to_string(kernel_.params.size()) +
                                        " argument" + (kernel_.params.size() == 1 ? "" : "s") + ", got " +
                                        std::to_string(nargs_));
  if (nargs_ > 0 && !args_) return Status(Code::InvalidArgument, "launch arguments are NULL");
  std::set<const Function*> seen{&kernel_};
  TRI_RETURN_IF_ERROR(validate(kernel_, &seen));

  std::vector<Val> argvals;
  for (size_t i = 0; i < kernel_.params.size(); ++i) {
    TypeId t = kernel_.params[i].type;
    assert(!types_.is_block(t) && "kernel parameters are scalars or pointers");
    Val v = new_val(t);
    if (types_.is_ptr(t)) {
      v.bits[0] = args_[i].bits;
      v.prov[0] = static_cast<int32_t>(i);
    } else {
      v.bits[0] = trunc_bits(args_[i].bits, elem_width(t));
    }
    argvals.push_back(std::move(v));
  }
  if (checked_) TRI_RETURN_IF_ERROR(check_facts(argvals));

  if (opt_.memory_limit) {
    const uint64_t need = memory_estimate(m_, kernel_, checked_);
    if (need > opt_.memory_limit)
      return Status(Code::LimitExceeded,
                    "the interpreter would need about " + std::to_string(need) + " bytes for kernel @" + kernel_.name +
                        " (its block values, held at once), over the context's budget of " +
                        std::to_string(opt_.memory_limit) +
                        " bytes; use smaller blocks, the \"cpu\" target, or raise the budget "
                        "(tri_context_options_set_interp_memory_limit)");
  }

  grid_[0] = grid.x;
  grid_[1] = grid.y;
  grid_[2] = grid.z;
  for (uint64_t id = first; id < last; ++id) {
    pid_[0] = static_cast<uint32_t>(id % grid.x);
    pid_[1] = static_cast<uint32_t>(id / grid.x % grid.y);
    pid_[2] = static_cast<uint32_t>(id / grid.x / grid.y);
    if (opt_.cancel.requested()) return cancelled();
    Frame fr{&kernel_, std::vector<Val>(kernel_.values.size()), 0};
    std::vector<Val> out;
    TRI_RETURN_IF_ERROR(exec_block(fr, kernel_.body, argvals, &out));
  }
  return Status::ok();
}


// ---------------------------------------------------------------------------------------------
// Blocks and dispatch

Status Interp::exec_block(Frame& fr, BlockId b, std::vector<Val> args, std::vector<Val>* out) {
  const BlockData& bd = fr.f->block(b);
  assert(args.size() == bd.args.size());
  for (size_t i = 0; i < args.size(); ++i) fr.vals[bd.args[i]] = std::move(args[i]);
  out->clear();
  for (OpId o : bd.ops) {
    const OpData& op = fr.f->op(o);
    if (ir::op_info(op.code).is_terminator()) {
      for (ValueId v : op.operands) out->push_back(fr.vals[v]);
      return Status::ok();
    }
    TRI_RETURN_IF_ERROR(exec_op(fr, o));
  }
  return Status::ok();
}

Status Interp::exec_op(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  switch (op.code) {
    case Opcode::ProgramId:
    case Opcode::NumPrograms: {
      int64_t axis = int_attr(f, o, "axis");
      assert(axis >= 0 && axis < 3);
      uint64_t v = op.code == Opcode::ProgramId ? pid_[axis] : grid_[axis];
      TypeId t = f.type_of(op.results[0]);
      fr.vals[op.results[0]] = scalar_val(t, trunc_bits(v, elem_width(t)));
      return Status::ok();
    }
    case Opcode::Const: return exec_const(fr, o);
    case Opcode::Arange: {
      TypeId t = f.type_of(op.results[0]);
      Val r = new_val(t);
      int64_t start = int_attr(f, o, "start");
      for (int64_t i = 0; i < r.size(); ++i) r.bits[i] = trunc_bits(static_cast<uint64_t>(start + i), elem_width(t));
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Splat:
    case Opcode::Broadcast:
    case Opcode::ExpandDims:
    case Opcode::Reshape:
    case Opcode::Permute:
    case Opcode::Join:
    case Opcode::Split:
    case Opcode::Cat:
      return exec_shape(fr, o);
    case Opcode::AddPtr: return exec_addptr(fr, o);
    case Opcode::Load: return exec_load(fr, o);
    case Opcode::Store: return exec_store(fr, o);
    case Opcode::Atomic:
    case Opcode::AtomicCas:
      return exec_atomic(fr, o);
    case Opcode::Reduce:
    case Opcode::Scan:
      return exec_reduce_scan(fr, o);
    case Opcode::Dot: return exec_dot(fr, o);
    case Opcode::Rank:
    case Opcode::NumRanks: {
      const uint32_t v = op.code == Opcode::Rank ? (opt_.team ? opt_.team->rank : 0)
                                                 : (opt_.team ? opt_.team->num_ranks : 1);
      fr.vals[op.results[0]] = scalar_val(f.type_of(op.results[0]), v);
      return Status::ok();
    }
    case Opcode::SymmAt: return exec_symm_at(fr, o);
    case Opcode::Wait: return exec_wait(fr, o);
    case Opcode::ConsumeToken:
      // The value passes through; the token only orders (the interpreter runs ops in order).
      fr.vals[op.results[0]] = fr.vals[op.operands[0]];
      return Status::ok();
    case Opcode::Notify: return exec_notify(fr, o);
    case Opcode::Put: return exec_put(fr, o);
    case Opcode::Get: return exec_get(fr, o);
    case Opcode::For: return exec_for(fr, o);
    case Opcode::If: return exec_if(fr, o);
    case Opcode::While: return exec_while(fr, o);
    case Opcode::Call: return exec_call(fr, o);
    case Opcode::Print: return exec_print(fr, o);
    case Opcode::Assert: return exec_assert(fr, o);
    case Opcode::Assume: return exec_assume(fr, o);
    case Opcode::DebugBarrier: return Status::ok();
    case Opcode::MultipleOf:
    case Opcode::MaxContiguous:
      // Facts for the compiler: the value passes through (checked mode checks the fact first).
      if (checked_ && bool_attr(*fr.f, o, "checked")) TRI_RETURN_IF_ERROR(check_hint(fr, o));
      fr.vals[op.results[0]] = fr.vals[op.operands[0]];
      fr.vals[op.results[0]].type = f.type_of(op.results[0]);
      return Status::ok();
    case Opcode::InlineAsm:
      return error_at(Code::Unsupported, m_.source_name, op.loc, "inline_asm runs only on the GPU backend");
    case Opcode::Yield:
    case Opcode::Condition:
    case Opcode::Return:
      assert(!"terminators are handled by exec_block");
      return Status::ok();
    default:
      return exec_elementwise(fr, o);
  }
}

Status Interp::exec_const(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  TypeId t = f.type_of(op.results[0]);
  const Attr& a = f.attr(o, "value");
  uint64_t bits = 0;
  if (elem_is_ptr(t)) {
    bits = static_cast<uint64_t>(a.i);
  } else {
    Scalar s = elem_scalar(t);
    if (ir::is_int(s)) {
      uint64_t v = a.kind == Attr::Kind::Float ? float_to_int(a.f, 64, true) : static_cast<uint64_t>(a.i);
      bits = s == Scalar::I1 ? (v != 0) : trunc_bits(v, ir::scalar_bits(s));
    } else {
      long double v = a.kind == Attr::Kind::Float ? static_cast<long double>(a.f) : static_cast<long double>(a.i);
      bits = encode_float(v, s);
    }
  }
  Val r = new_val(t);
  for (auto& b : r.bits) b = bits;
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}


// ---------------------------------------------------------------------------------------------
// Control flow and calls

Status Interp::exec_for(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& lo = fr.vals[op.operands[0]];
  const Val& hi = fr.vals[op.operands[1]];
  const Val& st = fr.vals[op.operands[2]];
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "lo", lo, 0));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "hi", hi, 0));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "step", st, 0));
  const TypeId ivt = lo.type;
  const int w = elem_width(ivt);
  const __int128 l = sext_bits(lo.bits[0], w), h = sext_bits(hi.bits[0], w), s = sext_bits(st.bits[0], w);
  if (s <= 0 && (checked_ || l < h))
    return runtime_error(fr, o, "'for' step is " + std::to_string(static_cast<int64_t>(s)) + ", but it must be positive");
  std::vector<Val> iters;
  for (size_t k = 3; k < op.operands.size(); ++k) iters.push_back(fr.vals[op.operands[k]]);
  for (__int128 iv = l; iv < h; iv += s) {
    if (opt_.cancel.requested()) return cancelled();
    std::vector<Val> args;
    args.push_back(scalar_val(ivt, trunc_bits(static_cast<uint64_t>(iv), w)));
    for (Val& v : iters) args.push_back(std::move(v));
    TRI_RETURN_IF_ERROR(exec_block(fr, op.regions[0], std::move(args), &iters));
  }
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(iters[j]);
  return Status::ok();
}

Status Interp::exec_if(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& c = fr.vals[op.operands[0]];
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "cond", c, 0));
  const size_t which = (c.bits[0] & 1) ? 0 : 1;
  if (which >= op.regions.size()) return Status::ok();  // no else region (and no results)
  std::vector<Val> out;
  TRI_RETURN_IF_ERROR(exec_block(fr, op.regions[which], {}, &out));
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(out[j]);
  return Status::ok();
}

Status Interp::exec_while(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const BlockId before = op.regions[0], after = op.regions[1];
  const OpId condition = f.block(before).ops.back();
  std::vector<Val> vals;
  for (ValueId v : op.operands) vals.push_back(fr.vals[v]);
  for (;;) {
    if (opt_.cancel.requested()) return cancelled();
    std::vector<Val> out;
    TRI_RETURN_IF_ERROR(exec_block(fr, before, std::move(vals), &out));
    TRI_RETURN_IF_ERROR(check_defined(fr, condition, "cond", out[0], 0));
    const bool go_on = out[0].bits[0] & 1;
    vals.assign(std::make_move_iterator(out.begin() + 1), std::make_move_iterator(out.end()));
    if (!go_on) break;
    TRI_RETURN_IF_ERROR(exec_block(fr, after, std::move(vals), &out));
    vals = std::move(out);
  }
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(vals[j]);
  return Status::ok();
}

Status Interp::exec_call(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Function* callee = m_.find(f.attr(o, "callee").s);
  assert(callee && "validate() checked the callee");
  if (fr.depth + 1 > kMaxCallDepth)
    return runtime_error(fr, o, "'call' of @" + callee->name + " nests deeper than " + std::to_string(kMaxCallDepth) +
                                    " calls");
  Frame cf{callee, std::vector<Val>(callee->values.size()), fr.depth + 1};
  std::vector<Val> args;
  for (ValueId v : op.operands) args.push_back(fr.vals[v]);
  std::vector<Val> out;
  TRI_RETURN_IF_ERROR(exec_block(cf, callee->body, std::move(args), &out));
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(out[j]);
  return Status::ok();
}


}  // namespace detail

using namespace detail;

uint64_t memory_estimate(const ir::Module& m, const ir::Function& kernel, bool checked) {
  std::set<const Function*> seen{&kernel};
  std::vector<const Function*> work{&kernel};
  uint64_t bytes = 0;
  while (!work.empty()) {
    const Function* f = work.back();
    work.pop_back();
    for (const ir::ValueData& v : f->values) {
      const uint64_t n = static_cast<uint64_t>(m.types.num_elements(v.type));
      const bool ptr = m.types.is_ptr(m.types.elem_of(v.type));
      bytes += n * (8 + (ptr ? 4 : 0) + (checked ? 4 : 0));
    }
    for (OpId o = 0; o < f->ops.size(); ++o) {
      if (f->op(o).code != Opcode::Call) continue;
      const Function* callee = m.find(f->attr(o, "callee").s);
      if (callee && seen.insert(callee).second) work.push_back(callee);
    }
  }
  return 2 * bytes;
}

namespace {
bool is_wait(Opcode c) { return c == Opcode::Wait; }
}  // namespace

Status run(const ir::Module& m, const ir::Function& kernel, const Grid& grid, const ArgValue* args, size_t nargs,
           const Options& options) {
  const uint64_t count = grid.count();
  if (count == 0 || ir::find_op(m, kernel, &is_wait, nullptr) == ir::kNoOp) {
    Interp interp(m, kernel, args, nargs, options);
    return interp.run(grid, 0, count);
  }
  // A kernel that waits: every instance at once (interpreter.h). Check the launch once first.
  {
    Interp probe(m, kernel, args, nargs, options);
    TRI_RETURN_IF_ERROR(probe.run(Grid{grid.x, grid.y, grid.z}, 0, 0));
  }
  if (count > kMaxCoresidentPrograms)
    return Status(Code::LimitExceeded,
                  "kernel @" + kernel.name + " waits on signals, so its " + std::to_string(count) +
                      " program instances must all run at once, and the host targets run at most " +
                      std::to_string(kMaxCoresidentPrograms) + "; use a smaller grid");
  std::atomic<bool> stop{false};
  std::vector<Status> results(count);
  Status started = run_coresident(
      count, size_t(16) << 20,
      [&](uint64_t id) {
        Interp interp(m, kernel, args, nargs, options, &stop);
        results[id] = interp.run(grid, id, id + 1);
        if (!results[id].is_ok()) {
          stop.store(true);
          if (options.team && options.team->abort && results[id].code() != Code::Cancelled)
            options.team->abort->store(true);
        }
      },
      &stop);
  // The first real failure; instances that stopped because of it (or a cancel) come last.
  for (const Status& st : results)
    if (!st.is_ok() && st.code() != Code::Cancelled) return st;
  TRI_RETURN_IF_ERROR(started);
  for (const Status& st : results)
    if (!st.is_ok()) return st;
  return Status::ok();
}

}  // namespace tri::interp
