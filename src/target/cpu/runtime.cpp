// Runtime callbacks of the CPU backend and the host symbol table. The callbacks run on pool
// threads, concurrently; they only touch the LaunchState under its mutex.
#include "target/cpu/runtime.h"

#include "base/team.h"

#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>

namespace tri::cpu {
namespace {

using ir::Scalar;

// Small float bits -> float (exact), for printing.
float small_to_float(uint32_t bits, Scalar s) {
  if (s == Scalar::BF16) {
    uint32_t u = bits << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  int E, M, bias;
  bool ieee = true;
  switch (s) {
    case Scalar::F16: E = 5; M = 10; bias = 15; break;
    case Scalar::F8E5M2: E = 5; M = 2; bias = 15; break;
    default: E = 4; M = 3; bias = 7; ieee = false; break;
  }
  uint32_t sign = (bits >> (E + M)) & 1, ef = (bits >> M) & ((1u << E) - 1), mf = bits & ((1u << M) - 1);
  float mag;
  if (ieee && ef == (1u << E) - 1) {
    mag = mf ? NAN : INFINITY;
  } else if (!ieee && ef == (1u << E) - 1 && mf == (1u << M) - 1) {
    mag = NAN;
  } else if (ef == 0) {
    mag = std::ldexp(static_cast<float>(mf), 1 - bias - M);
  } else {
    mag = std::ldexp(static_cast<float>(mf | (1u << M)), static_cast<int>(ef) - bias - M);
  }
  return sign ? -mag : mag;
}

// The shortest text that reads back to the same float (std::to_chars), as the interpreter
// prints: "1", "0.1", "1e+30", "inf", "-nan".
std::string shortest(float v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}
std::string shortest(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

int64_t num_elems(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string index_text(const std::vector<int64_t>& shape, int64_t lin) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = lin % shape[d];
    lin /= shape[d];
  }
  std::string s = "(";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + ")";
}

std::string pid_text(const uint32_t* pid) {
  return "(" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) + ", " + std::to_string(pid[2]) + ")";
}

// One text per print op and instance, a line per active lane in row-major order:
//   <prefix>pid (x, y, z) idx (i, j): v0, v1
// (`idx` only when a value or the mask is a block), as the reference interpreter writes it.
extern "C" void tri_cpu_print(void* launch, uint32_t site, const uint32_t* pid, const void* const* values,
                              const uint8_t* mask) {
  auto* ls = static_cast<LaunchState*>(launch);
  if (!ls->print || !*ls->print) return;
  const PrintSite& s = ls->sites->prints[site];
  const int64_t lanes = num_elems(s.lanes);
  std::string text;
  for (int64_t lane = 0; lane < lanes; ++lane) {
    if (mask && !mask[s.lanes.empty() ? 0 : lane]) continue;
    if (!text.empty()) text += '\n';
    text += s.prefix + "pid " + pid_text(pid);
    if (!s.lanes.empty()) text += " idx " + index_text(s.lanes, lane);
    for (size_t i = 0; i < s.operands.size(); ++i) {
      const PrintOperand& op = s.operands[i];
      int64_t n = num_elems(op.shape);
      text += i ? ", " : ": ";
      text += format_element(op, values[i], op.shape.empty() ? 0 : lane % n);
    }
  }
  if (text.empty()) return;
  std::lock_guard<std::mutex> lock(ls->print_mu);
  (*ls->print)(text);
}

// " of rank 1 (of 4)" in a team, after "program (x, y, z)" in messages.
std::string rank_text(const LaunchState* ls) {
  if (!ls->team_launch) return "";
  return " of rank " + std::to_string(ls->team.rank) + " (of " + std::to_string(ls->team.num_ranks) + ")";
}

void record_failure(LaunchState* ls, const uint32_t* pid, Status st) {
  uint64_t id = pid[0] + uint64_t(ls->grid.x) * (pid[1] + uint64_t(ls->grid.y) * pid[2]);
  std::lock_guard<std::mutex> lock(ls->mu);
  if (!ls->failed || id < ls->failed_instance) {
    ls->failed = true;
    ls->failed_instance = id;
    ls->failure = std::move(st);
  }
  ls->stop.store(true, std::memory_order_relaxed);
  // The rest of the team stops waiting for what this program will not send.
  if (ls->team_launch && ls->team_launch->abort) ls->team_launch->abort->store(true);
}

// "'assert' lane [i, j] of <4 x 8 x i1> failed: msg; program (x, y, z)", the interpreter's words.
extern "C" void tri_cpu_assert(void* launch, uint32_t site, const uint32_t* pid, const uint8_t* cond,
                               const uint8_t* mask) {
  auto* ls = static_cast<LaunchState*>(launch);
  const AssertSite& s = ls->sites->asserts[site];
  const int64_t lanes = num_elems(s.lanes);
  int64_t bad = 0;
  for (int64_t lane = 0; lane < lanes; ++lane) {
    bool active = !mask || mask[lane];
    if (active && !cond[lane]) {
      bad = lane;
      break;
    }
  }
  std::string what = "'assert'";
  if (!s.lanes.empty()) {
    std::string idx = index_text(s.lanes, bad);
    what += " lane [" + idx.substr(1, idx.size() - 2) + "] of " + s.type;
  }
  what += " failed";
  if (!s.msg.empty()) what += ": " + s.msg;
  what += "; program " + pid_text(pid) + rank_text(ls);
  record_failure(ls, pid, Status(Code::Runtime, format_diag(ls->sites->source, s.loc, what)));
}

extern "C" void tri_cpu_error(void* launch, uint32_t site, const uint32_t* pid, int64_t value) {
  auto* ls = static_cast<LaunchState*>(launch);
  const ErrorSite& s = ls->sites->errors[site];
  std::string what = s.before + std::to_string(value) + s.after + "; program " + pid_text(pid) + rank_text(ls);
  record_failure(ls, pid, Status(Code::Runtime, format_diag(ls->sites->source, s.loc, what)));
}

std::string hex_text(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// The errors of symm_at, notify, put and get, in the interpreter's words (lower.h, kDistErrorFn).
extern "C" void tri_cpu_dist_error(void* launch, uint32_t site, const uint32_t* pid, int32_t what, int64_t value) {
  auto* ls = static_cast<LaunchState*>(launch);
  const ErrorSite& s = ls->sites->errors[site];
  std::string text;
  if (what == 0 && !ls->team_launch) {
    text = s.before + " names rank " + std::to_string(value) +
           ", but a launch outside a team is rank 0 of 1 (launch it with tri_team_launch)";
  } else if (what == 0) {
    text = s.before + " names rank " + std::to_string(value) + ", but the team has " +
           std::to_string(ls->team.num_ranks) + " ranks (0 to " + std::to_string(ls->team.num_ranks - 1) + ")";
  } else {
    text = s.before + " address " + hex_text(static_cast<uint64_t>(value)) + " is not in this rank's symmetric heap [" +
           hex_text(ls->team.heap_base) + ", " + hex_text(ls->team.heap_base + ls->team.heap_bytes) + ")";
  }
  text += "; program " + pid_text(pid) + rank_text(ls);
  if (what != 0) text += "; pass addresses of tri_team_alloc'd buffers (tri_team_ptr)";
  record_failure(ls, pid, Status(Code::Runtime, format_diag(ls->sites->source, s.loc, text)));
}

// A `wait` (lower.h, kWaitFn): every active lane in turn.
extern "C" int32_t tri_cpu_wait(void* launch, uint32_t site, const uint32_t* pid, const uint64_t* ptrs,
                                const uint8_t* mask, int64_t lanes, int64_t value, int32_t flags) {
  auto* ls = static_cast<LaunchState*>(launch);
  WaitRequest w;
  w.bytes = (flags >> 8) & 0xff;
  w.cmp = (flags & kWaitGe) ? WaitCmp::Ge : WaitCmp::Eq;
  w.acquire = (flags & kWaitAcquire) != 0;
  w.value = value;
  const uint64_t timeout = ls->team_launch ? ls->team_launch->wait_timeout_ms : kDefaultWaitTimeoutMs;
  const CancelToken cancel{reinterpret_cast<const std::atomic<uint64_t>*>(ls->cancel.counter), ls->cancel.seen};
  for (int64_t i = 0; i < lanes; ++i) {
    if (mask && !mask[i]) continue;
    w.addr = ptrs[i];
    int64_t last = 0;
    switch (wait_signal(w, timeout, &ls->stop, ls->team_launch ? ls->team_launch->abort : nullptr, cancel, &last)) {
      case WaitEnd::Done: break;
      case WaitEnd::TimedOut: {
        const ErrorSite& s = ls->sites->errors[site];
        std::string text = "'wait' timed out after " + std::to_string(timeout) + " ms: the signal at " +
                           hex_text(w.addr) + " holds " + std::to_string(last) + ", and it waits for " +
                           (w.cmp == WaitCmp::Eq ? "== " : ">= ") + std::to_string(value) +
                           " (is a notify missing? tri_team_set_wait_timeout sets the limit); program " +
                           pid_text(pid) + rank_text(ls);
        record_failure(ls, pid, Status(Code::Runtime, format_diag(ls->sites->source, s.loc, text)));
        return 1;
      }
      case WaitEnd::Stopped:
      case WaitEnd::Cancelled:
        return 1;
    }
  }
  return 0;
}

// lgamma writes the global signgam; these use the reentrant variants.
extern "C" float tri_lgammaf(float x) {
  int sign;
  return lgammaf_r(x, &sign);
}
extern "C" double tri_lgamma(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

// glibc 2.36's tgammaf is off by up to 6 ulp (at x = -3.0802424: 1.896209 for 1.8962097); the
// double version rounded to float is within 1 ulp, as docs/ir.md promises 4.
extern "C" float tri_tgammaf(float x) { return static_cast<float>(std::tgamma(static_cast<double>(x))); }

using F1 = float (*)(float);
using D1 = double (*)(double);
using F2 = float (*)(float, float);
using D2 = double (*)(double, double);

}  // namespace

std::string format_element(const PrintOperand& op, const void* data, int64_t index) {
  const auto* p = static_cast<const uint8_t*>(data);
  char buf[64];
  if (op.is_ptr) {
    uint64_t v;
    std::memcpy(&v, p + index * 8, 8);
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
  }
  switch (op.scalar) {
    case Scalar::I1: return p[index] ? "1" : "0";
    case Scalar::I8: return std::to_string(static_cast<int8_t>(p[index]));
    case Scalar::I16: { int16_t v; std::memcpy(&v, p + index * 2, 2); return std::to_string(v); }
    case Scalar::I32: { int32_t v; std::memcpy(&v, p + index * 4, 4); return std::to_string(v); }
    case Scalar::I64: { int64_t v; std::memcpy(&v, p + index * 8, 8); return std::to_string(v); }
    case Scalar::F32: { float v; std::memcpy(&v, p + index * 4, 4); return shortest(v); }
    case Scalar::F64: { double v; std::memcpy(&v, p + index * 8, 8); return shortest(v); }
    case Scalar::F16: case Scalar::BF16: {
      uint16_t v;
      std::memcpy(&v, p + index * 2, 2);
      return shortest(small_to_float(v, op.scalar));
    }
    case Scalar::F8E4M3: case Scalar::F8E5M2:
      return shortest(small_to_float(p[index], op.scalar));
  }
  return "?";
}

const std::vector<HostSymbol>& host_symbols() {
  static const std::vector<HostSymbol> table = [] {
    std::vector<HostSymbol> t;
    auto add = [&](const char* name, void* addr) { t.push_back({name, addr}); };
    add(kPrintFn, reinterpret_cast<void*>(&tri_cpu_print));
    add(kAssertFn, reinterpret_cast<void*>(&tri_cpu_assert));
    add(kErrorFn, reinterpret_cast<void*>(&tri_cpu_error));
    add(kWaitFn, reinterpret_cast<void*>(&tri_cpu_wait));
    add(kDistErrorFn, reinterpret_cast<void*>(&tri_cpu_dist_error));
    add("tri.rt.lgammaf", reinterpret_cast<void*>(&tri_lgammaf));
    add("tri.rt.lgamma", reinterpret_cast<void*>(&tri_lgamma));
    add("memcpy", reinterpret_cast<void*>(&::memcpy));
    add("memmove", reinterpret_cast<void*>(&::memmove));
    add("memset", reinterpret_cast<void*>(&::memset));
#define TRI_M1(n)                                                      \
  add(#n "f", reinterpret_cast<void*>(static_cast<F1>(&::n##f)));     \
  add(#n, reinterpret_cast<void*>(static_cast<D1>(&::n)));
#define TRI_M2(n)                                                      \
  add(#n "f", reinterpret_cast<void*>(static_cast<F2>(&::n##f)));     \
  add(#n, reinterpret_cast<void*>(static_cast<D2>(&::n)));
    // What the lowering calls, and what LLVM may turn intrinsics and libcalls into.
    TRI_M1(exp) TRI_M1(exp2) TRI_M1(exp10) TRI_M1(expm1) TRI_M1(log) TRI_M1(log2) TRI_M1(log10) TRI_M1(log1p)
    TRI_M1(sin) TRI_M1(cos) TRI_M1(tan) TRI_M1(asin) TRI_M1(acos) TRI_M1(atan) TRI_M1(sinh) TRI_M1(cosh)
    TRI_M1(tanh) TRI_M1(asinh) TRI_M1(acosh) TRI_M1(atanh) TRI_M1(erf) TRI_M1(erfc)
    TRI_M1(cbrt) TRI_M1(sqrt) TRI_M1(floor) TRI_M1(ceil) TRI_M1(trunc) TRI_M1(round) TRI_M1(rint)
    TRI_M1(nearbyint) TRI_M1(fabs)
    TRI_M2(pow) TRI_M2(atan2) TRI_M2(hypot) TRI_M2(fmod) TRI_M2(copysign) TRI_M2(fmin) TRI_M2(fmax)
    TRI_M2(remainder)
    add("tgammaf", reinterpret_cast<void*>(&tri_tgammaf));
    add("tgamma", reinterpret_cast<void*>(static_cast<D1>(&::tgamma)));
#undef TRI_M1
#undef TRI_M2
    add("fmaf", reinterpret_cast<void*>(static_cast<float (*)(float, float, float)>(&::fmaf)));
    add("fma", reinterpret_cast<void*>(static_cast<double (*)(double, double, double)>(&::fma)));
    add("ldexpf", reinterpret_cast<void*>(static_cast<float (*)(float, int)>(&::ldexpf)));
    add("ldexp", reinterpret_cast<void*>(static_cast<double (*)(double, int)>(&::ldexp)));
    add("frexpf", reinterpret_cast<void*>(static_cast<float (*)(float, int*)>(&::frexpf)));
    add("frexp", reinterpret_cast<void*>(static_cast<double (*)(double, int*)>(&::frexp)));
    add("sincosf", reinterpret_cast<void*>(static_cast<void (*)(float, float*, float*)>(&::sincosf)));
    add("sincos", reinterpret_cast<void*>(static_cast<void (*)(double, double*, double*)>(&::sincos)));
    return t;
  }();
  return table;
}

}  // namespace tri::cpu
