// The contract between the CPU target's machine code and the runtime that runs it: the entry
// point every kernel's code exports, the runtime callbacks it calls by name, the first bytes of
// the launch state it reads, and the sites (print, assert, runtime errors) whose index it passes.
//
// Both halves build on it: codegen/cpu (the compiler) emits code that keeps this contract, and
// target/cpu (the runtime: kernel.h's launch loop, runtime.h's callbacks) runs such code, whether
// ORC loaded it in this process or it comes from a shared object built ahead of time. Nothing
// here needs LLVM.
//
// The entry point runs a contiguous range of program instances (linear id = x + gx * (y + gy * z)):
//   int32_t entry(const uint64_t* args, void* launch, uint32_t gx, uint32_t gy, uint32_t gz,
//                 uint64_t begin, uint64_t end)
// `args` are the runtime arguments as base/launch.h describes; `launch` is handed back unchanged
// to the runtime callbacks. It returns 0, or 1 when an assert failed (the callback has recorded
// which; the remaining instances of the range are not run) or the launch was cancelled.
// `launch` begins with a CancelHead: at every loop back-edge (`for`, `while`) and before each
// program instance after the first, the code reads the counter (an atomic load) and returns 1
// when it differs from `seen`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/types.h"

namespace tri::cpu {

// Names the generated code uses for the runtime: the JIT binds them to host addresses.
inline constexpr const char* kEntryFn = "tri.entry";
inline constexpr const char* kPrintFn = "tri.rt.print";    // (launch, site, pid[3], values[], mask)
inline constexpr const char* kAssertFn = "tri.rt.assert";  // (launch, site, pid[3], cond, mask)
inline constexpr const char* kErrorFn = "tri.rt.error";    // (launch, site, pid[3], i64 value)
// A `wait` (launch, site, pid[3], const u64* ptrs, const u8* mask or null, i64 lanes, i64 value,
// i32 flags) -> i32: 0 once every active lane's signal compares true, 1 when the launch must stop
// (a timeout, recorded as the failure; another program's failure; a cancel). flags: kWaitGe,
// kWaitAcquire, and the signal's bytes (4 or 8) << 8. The site is an ErrorSite (its location).
inline constexpr const char* kWaitFn = "tri.rt.wait";
// A distributed op's error (launch, site, pid[3], i32 what, i64 value): what 0, `value` is a rank
// outside the team; what 1, `value` is an address outside this rank's symmetric heap. The site
// is an ErrorSite whose `before` names the op ("'symm_at'").
inline constexpr const char* kDistErrorFn = "tri.rt.dist_error";
inline constexpr int32_t kWaitGe = 1;
inline constexpr int32_t kWaitAcquire = 2;

// The first bytes of the object `launch` points to (target/cpu/runtime.h's LaunchState).
struct CancelHead {
  const uint64_t* counter;  // read atomically (relaxed): a std::atomic<uint64_t>'s storage
  uint64_t seen;
};

// Follows CancelHead (at offset 16): the launch's team (base/launch.h's TeamLaunch, as the
// generated code reads it). Outside a team: rank 0 of 1, heap_base 0 and heap_bytes ~0 (every
// address counts as in the heap) and bases pointing at one 0, so symm_at to rank 0 is the
// identity. symm_at(p, r) is p + bases[r] - heap_base once p - heap_base < heap_bytes.
struct TeamHead {
  uint32_t rank;
  uint32_t num_ranks;
  uint64_t heap_base;
  uint64_t heap_bytes;
  const uint64_t* bases;
};
inline constexpr int kTeamHeadOffset = 16;

using EntryFn = int32_t (*)(const uint64_t* args, void* launch, uint32_t gx, uint32_t gy, uint32_t gz,
                            uint64_t begin, uint64_t end);

// One operand of a print op as the runtime receives it: a pointer to its elements in memory
// (row-major; a scalar is one element; i1 is one byte; small floats are their bits).
struct PrintOperand {
  ir::Scalar scalar = ir::Scalar::I32;
  bool is_ptr = false;
  std::vector<int64_t> shape;  // empty for a scalar
};

struct PrintSite {
  std::string prefix;
  Loc loc;
  std::vector<PrintOperand> operands;
  std::vector<int64_t> lanes;  // the shape the lanes (and the mask, one byte each) have; empty: one lane
  bool has_mask = false;
};

struct AssertSite {
  std::string msg;
  Loc loc;
  std::vector<int64_t> lanes;  // the condition's shape (its bytes and the mask's are passed); empty: scalar
  std::string type;            // the condition's type as IR text, for the message
  bool has_mask = false;
};

// A runtime error other than an assert, with one integer in its message:
// before + value + after (a `for` whose step is not positive).
struct ErrorSite {
  Loc loc;
  std::string before, after;
};

// What the runtime callbacks need to know about the print and assert ops of a kernel; the
// generated code passes a site index.
struct RuntimeSites {
  std::string source;  // the module's source name, for "file:line:col" in messages
  std::vector<PrintSite> prints;
  std::vector<AssertSite> asserts;
  std::vector<ErrorSite> errors;
};

}  // namespace tri::cpu
