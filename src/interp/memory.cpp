// The reference interpreter's memory ops (interp_impl.h): load, store, atomic and atomic_cas,
// with the checks of every access (NULL page, bounds against the argument a pointer derives
// from, alignment, undefined addresses and masks).
#include "interp/interp_impl.h"

namespace tri::interp::detail {

// ---------------------------------------------------------------------------------------------
// Memory

Status Interp::check_access(const Frame& fr, OpId o, const char* verb, const Val& p, int64_t i, int bytes) const {
  const uint64_t addr = lane(p, i);
  const int32_t arg = prov_at(p, i);
  auto head = [&] {
    return op_name(*fr.f, o) + lane_str(p.type, i) + " " + verb + " " + std::to_string(bytes) + " bytes at " + hex(addr);
  };
  // NULL, in every mode: an address in the first page, or (checked) any address derived from a
  // NULL argument, whatever extent came with it. Reported like an out-of-bounds access.
  const bool null_arg = arg != kNoProv && args_[arg].bits == 0;
  if (addr < kNullPageBytes || (checked_ && null_arg))
    return runtime_error(fr, o, head() + ", out of bounds: " +
                                    (null_arg ? "argument %" + kernel_.params[arg].name + " is NULL"
                                              : std::string("a NULL pointer (the first ") +
                                                    std::to_string(kNullPageBytes) + " bytes are never valid)"));
  if (!checked_) return Status::ok();
  if (addr % bytes != 0) return runtime_error(fr, o, head() + ", which is not " + std::to_string(bytes) + "-byte aligned");
  if (arg == kNoProv || args_[arg].extent == 0) return Status::ok();
  const uint64_t base = args_[arg].bits, extent = args_[arg].extent;
  const int64_t off = static_cast<int64_t>(addr - base);
  if (off >= 0 && static_cast<uint64_t>(off) <= extent && extent - static_cast<uint64_t>(off) >= static_cast<uint64_t>(bytes))
    return Status::ok();
  return runtime_error(fr, o, head() + ", out of bounds: byte offset " + std::to_string(off) + " of argument %" +
                                  kernel_.params[arg].name + " (extent " + std::to_string(extent) + " bytes)");
}

Status Interp::exec_load(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[op.operands[0]];
  const Val* mask = optional(fr, o, "mask");
  const Val* other = optional(fr, o, "other");
  TypeId rt = f.type_of(op.results[0]);
  const Scalar s = pointee_scalar(p.type);
  Val r = new_val(rt);
  for (int64_t i = 0; i < r.size(); ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) {
      if (other) {
        copy_lane(r, i, *other, i);
      } else if (checked_) {
        r.undef[i] = origin_of(fr, o);
      }
      continue;
    }
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    TRI_RETURN_IF_ERROR(check_access(fr, o, "reads", p, i, mem_bytes(s)));
    r.bits[i] = read_mem(lane(p, i), s);
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

Status Interp::exec_store(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[op.operands[0]];
  const Val& v = fr.vals[op.operands[1]];
  const Val* mask = optional(fr, o, "mask");
  const Scalar s = pointee_scalar(p.type);
  const int64_t n = types_.num_elements(p.type);
  for (int64_t i = 0; i < n; ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", v, i));
    TRI_RETURN_IF_ERROR(check_access(fr, o, "writes", p, i, mem_bytes(s)));
    write_mem(lane(p, i), s, lane(v, i));
  }
  return Status::ok();
}

Status Interp::exec_atomic(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const bool cas = op.code == Opcode::AtomicCas;
  const Val& p = fr.vals[op.operands[0]];
  const Val* cmp = cas ? &fr.vals[op.operands[1]] : nullptr;
  const Val& v = fr.vals[op.operands[cas ? 2 : 1]];
  const Val* mask = optional(fr, o, "mask");
  const std::string kind = cas ? std::string() : enum_attr(f, o, "kind");
  const Scalar s = pointee_scalar(p.type);
  const int w = ir::scalar_bits(s);
  TypeId rt = f.type_of(op.results[0]);
  Val r = new_val(rt);
  for (int64_t i = 0; i < r.size(); ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) {
      if (checked_) r.undef[i] = origin_of(fr, o);
      continue;
    }
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    if (cmp) TRI_RETURN_IF_ERROR(check_defined(fr, o, "cmp", *cmp, i));
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", v, i));
    TRI_RETURN_IF_ERROR(check_access(fr, o, "updates", p, i, mem_bytes(s)));
    const uint64_t addr = lane(p, i);
    const uint64_t x = lane(v, i);
    // One atomic read-modify-write of the memory's bits (other threads, and other ranks of a
    // team, may update the same address): compute from what was read, retry if it changed.
    const int bytes = mem_bytes(s);
    uint64_t raw = atomic_load_raw(addr, bytes);
    uint64_t old;
    for (;;) {
      old = s == Scalar::I1 ? (raw != 0) : raw;
      uint64_t next = old;
      bool dz = false;
      if (cas) {
        if (old == lane(*cmp, i)) next = x;
      } else if (kind == "xchg") {
        next = x;
      } else if (kind == "and" || kind == "or" || kind == "xor" || kind == "umin" || kind == "umax") {
        IntOp iop = kind == "and" ? IntOp::And : kind == "or" ? IntOp::Or : kind == "xor" ? IntOp::Xor
                  : kind == "umin" ? IntOp::UMin : IntOp::UMax;
        next = int_binary(iop, old, x, w, &dz);
      } else if (ir::is_float(s)) {
        // f32 add flushes subnormal operands and results to sign-preserving zero (docs/ir.md,
        // "Atomics": what the GPU's atom.add.f32 does, so every target gives the same bits).
        const bool ftz = s == Scalar::F32 && kind == "add";
        auto flush = [&](uint64_t b) { return ftz && (b & 0x7f800000u) == 0 ? (b & 0x80000000u) : b; };
        uint64_t in[2] = {flush(old), flush(x)};
        Opcode c = kind == "add" ? Opcode::Add : kind == "min" ? Opcode::FMin : Opcode::FMax;
        next = flush(eval_float(c, s, in, 2, true, nullptr));
      } else {
        IntOp iop = kind == "add" ? IntOp::Add : kind == "min" ? IntOp::SMin : IntOp::SMax;
        next = int_binary(iop, old, x, w, &dz);
      }
      if (s == Scalar::I1) next &= 1;
      if (atomic_cas_raw(addr, bytes, &raw, next)) break;
    }
    r.bits[i] = old;
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

}  // namespace tri::interp::detail
