// The reference interpreter's distributed ops (interp_impl.h; docs/distributed.md): rank and
// symm_at over the team's symmetric heaps, and the signals of wait, notify, put and get.
#include "interp/interp_impl.h"

namespace tri::interp::detail {

// ---------------------------------------------------------------------------------------------
// Distributed ops: ranks, the symmetric heap, signals (docs/distributed.md)

Status Interp::symm_delta(const Frame& fr, OpId o, const Val& rank, uint64_t* delta) const {
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "rank", rank, 0));
  const int64_t r = sext_bits(lane(rank, 0), 32);
  const TeamLaunch* t = opt_.team;
  const int64_t n = t ? t->num_ranks : 1;
  if (r < 0 || r >= n) {
    if (!t)
      return runtime_error(fr, o, op_name(*fr.f, o) + " names rank " + std::to_string(r) +
                                      ", but a launch outside a team is rank 0 of 1 (launch it with tri_team_launch)");
    return runtime_error(fr, o, op_name(*fr.f, o) + " names rank " + std::to_string(r) + ", but the team has " +
                                    std::to_string(n) + " ranks (0 to " + std::to_string(n - 1) + ")");
  }
  *delta = t && t->heap_bases ? t->heap_bases[r] - t->heap_bases[t->rank] : 0;
  return Status::ok();
}

Status Interp::check_symm(const Frame& fr, OpId o, const Val& p, int64_t i) const {
  const TeamLaunch* t = opt_.team;
  if (!t || !t->heap_bases) return Status::ok();
  const uint64_t addr = lane(p, i), base = t->heap_bases[t->rank];
  if (addr - base < t->heap_bytes) return Status::ok();
  return runtime_error(fr, o, op_name(*fr.f, o) + lane_str(p.type, i) + " address " + hex(addr) +
                                  " is not in this rank's symmetric heap [" + hex(base) + ", " +
                                  hex(base + t->heap_bytes) + ")" +
                                  "; pass addresses of tri_team_alloc'd buffers (tri_team_ptr)");
}

void Interp::signal_write(uint64_t addr, int bytes, bool add, uint64_t value) {
  // Release: every store this program made before is visible to whoever acquires the signal.
  if (bytes == 8) {
    auto* p = reinterpret_cast<uint64_t*>(addr);
    if (add) __atomic_fetch_add(p, value, __ATOMIC_RELEASE);
    else __atomic_store_n(p, value, __ATOMIC_RELEASE);
  } else {
    auto* p = reinterpret_cast<uint32_t*>(addr);
    if (add) __atomic_fetch_add(p, static_cast<uint32_t>(value), __ATOMIC_RELEASE);
    else __atomic_store_n(p, static_cast<uint32_t>(value), __ATOMIC_RELEASE);
  }
}

Status Interp::exec_symm_at(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[f.operand(o, "ptr")];
  uint64_t delta;
  TRI_RETURN_IF_ERROR(symm_delta(fr, o, fr.vals[f.operand(o, "rank")], &delta));
  Val r = new_val(f.type_of(op.results[0]));
  for (int64_t i = 0; i < r.size(); ++i) {
    copy_lane(r, i, p, i);
    if (undef_at(p, i) != kDefined) continue;  // reported where it is used
    TRI_RETURN_IF_ERROR(check_symm(fr, o, p, i));
    r.bits[i] = lane(p, i) + delta;
    // A peer's address is not in the argument it came from: checked mode checks it for
    // alignment only (its heap was checked here).
    if (delta != 0) r.prov[i] = kNoProv;
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

Status Interp::exec_wait(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[f.operand(o, "ptr")];
  const Val& value = fr.vals[f.operand(o, "value")];
  const Val* mask = optional(fr, o, "mask");
  const Scalar s = pointee_scalar(p.type);
  const int bytes = mem_bytes(s);
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", value, 0));
  WaitRequest w;
  w.bytes = bytes;
  w.cmp = enum_attr(f, o, "cmp") == "ge" ? WaitCmp::Ge : WaitCmp::Eq;
  w.value = sext_bits(lane(value, 0), bytes * 8);
  w.acquire = enum_attr(f, o, "order") == "acquire";
  const TeamLaunch* t = opt_.team;
  const uint64_t timeout = t ? t->wait_timeout_ms : kDefaultWaitTimeoutMs;
  const int64_t n = types_.num_elements(p.type);
  for (int64_t i = 0; i < n; ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    TRI_RETURN_IF_ERROR(check_access(fr, o, "waits on", p, i, bytes));
    w.addr = lane(p, i);
    int64_t last = 0;
    switch (wait_signal(w, timeout, stop_, t ? t->abort : nullptr, opt_.cancel, &last)) {
      case WaitEnd::Done: break;
      case WaitEnd::TimedOut:
        return runtime_error(fr, o, op_name(f, o) + lane_str(p.type, i) + " timed out after " +
                                        std::to_string(timeout) + " ms: the signal at " + hex(w.addr) + " holds " +
                                        std::to_string(last) + ", and it waits for " +
                                        (w.cmp == WaitCmp::Eq ? "== " : ">= ") + std::to_string(w.value) +
                                        " (is a notify missing? tri_team_set_wait_timeout sets the limit)");
      case WaitEnd::Stopped:
        return Status(Code::Cancelled, error_at(Code::Runtime, m_.source_name, op.loc,
                                                op_name(f, o) + " gave up: another program failed; " + program()).message());
      case WaitEnd::Cancelled: return cancelled();
    }
  }
  fr.vals[op.results[0]] = scalar_val(f.type_of(op.results[0]), 0);
  return Status::ok();
}

Status Interp::exec_notify(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const Val& p = fr.vals[f.operand(o, "ptr")];
  const Val& value = fr.vals[f.operand(o, "value")];
  uint64_t delta;
  TRI_RETURN_IF_ERROR(symm_delta(fr, o, fr.vals[f.operand(o, "rank")], &delta));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, 0));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", value, 0));
  const int bytes = mem_bytes(pointee_scalar(p.type));
  TRI_RETURN_IF_ERROR(check_access(fr, o, "signals", p, 0, bytes));
  TRI_RETURN_IF_ERROR(check_symm(fr, o, p, 0));
  signal_write(lane(p, 0) + delta, bytes, enum_attr(f, o, "kind") == "add", lane(value, 0));
  return Status::ok();
}

Status Interp::exec_put(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const Val& p = fr.vals[f.operand(o, "ptr")];
  const Val& v = fr.vals[f.operand(o, "value")];
  const Val* mask = optional(fr, o, "mask");
  const Val* signal = optional(fr, o, "signal");
  const Val* signal_value = optional(fr, o, "signal_value");
  uint64_t delta;
  TRI_RETURN_IF_ERROR(symm_delta(fr, o, fr.vals[f.operand(o, "rank")], &delta));
  const Scalar s = pointee_scalar(p.type);
  const int64_t n = types_.num_elements(p.type);
  for (int64_t i = 0; i < n; ++i) {
    bool active;
    TRI_RETURN_IF_ERROR(active_lane(fr, o, mask, i, &active));
    if (!active) continue;
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "ptr", p, i));
    TRI_RETURN_IF_ERROR(check_defined(fr, o, "value", v, i));
    // This rank's address is checked against its argument; the peer's is in the peer's heap.
    TRI_RETURN_IF_ERROR(check_access(fr, o, "writes", p, i, mem_bytes(s)));
    TRI_RETURN_IF_ERROR(check_symm(fr, o, p, i));
    write_mem(lane(p, i) + delta, s, lane(v, i));
  }
  if (!signal) return Status::ok();
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "signal", *signal, 0));
  TRI_RETURN_IF_ERROR(check_defined(fr, o, "signal_value", *signal_value, 0));
  const int bytes = mem_bytes(pointee_scalar(signal->type));
  TRI_RETURN_IF_ERROR(check_access(fr, o, "signals", *signal, 0, bytes));
  TRI_RETURN_IF_ERROR(check_symm(fr, o, *signal, 0));
  signal_write(lane(*signal, 0) + delta, bytes, enum_attr(f, o, "signal_kind") == "add", lane(*signal_value, 0));
  return Status::ok();
}

Status Interp::exec_get(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[f.operand(o, "ptr")];
  const Val* mask = optional(fr, o, "mask");
  const Val* other = optional(fr, o, "other");
  uint64_t delta;
  TRI_RETURN_IF_ERROR(symm_delta(fr, o, fr.vals[f.operand(o, "rank")], &delta));
  const Scalar s = pointee_scalar(p.type);
  Val r = new_val(f.type_of(op.results[0]));
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
    TRI_RETURN_IF_ERROR(check_symm(fr, o, p, i));
    r.bits[i] = read_mem(lane(p, i) + delta, s);
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

}  // namespace tri::interp::detail
