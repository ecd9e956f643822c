// The host side of the CPU backend's generated code: the state of one launch that the code
// hands back to the runtime callbacks (print, assert), the callbacks themselves, and the table
// of host symbols (callbacks, libm, memcpy & co.) that the JIT binds by address so that symbol
// lookup never depends on what the host process happens to export.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/launch.h"
#include "base/status.h"
#include "target/cpu/abi.h"

namespace tri::cpu {

// One launch's shared state. The generated code sees it as an opaque pointer.
struct LaunchState {
  // First: the generated code reads it at this offset (target/cpu/abi.h). Points at the
  // cancel token's counter, or at a counter that never changes.
  CancelHead cancel{nullptr, 0};
  // Second, at kTeamHeadOffset: the team as the generated code reads it (outside a team, rank 0
  // of 1 with every address in the "heap" and a zero delta).
  TeamHead team{0, 1, 0, ~uint64_t(0), &kNoTeamBase};
  static constexpr uint64_t kNoTeamBase = 0;
  const TeamLaunch* team_launch = nullptr;  // null outside a team
  const RuntimeSites* sites = nullptr;
  const PrintSink* print = nullptr;
  Grid grid;
  std::atomic<bool> stop{false};  // set on the first failure: chunks not yet started are skipped
  // Serializes the print sink, and is the only lock held while calling out of the library: the
  // sink may re-enter Tri (launch another kernel of the same context, which then runs on the
  // calling thread: base/thread_pool.h), and a failure elsewhere is never kept waiting by it.
  std::mutex print_mu;
  std::mutex mu;                  // guards the fields below
  bool failed = false;
  std::atomic<bool> cancelled{false};  // an instance or a chunk was cut short by a cancel
  uint64_t failed_instance = 0;   // linear id of the instance whose failure is kept (the lowest)
  Status failure;
};

struct HostSymbol {
  const char* name;
  void* address;
};

// Every host function the generated code may call, by the name it calls it.
const std::vector<HostSymbol>& host_symbols();

// Formats one element of a print operand as the reference interpreter does: integers in signed
// decimal (i1 as 0/1), floats in the shortest form that reads back to the same f32/f64 (f16,
// bf16 and f8 through f32: "1", "0.1", "1e+30", "inf", "nan"), pointers as 0x hex.
std::string format_element(const PrintOperand& op, const void* data, int64_t index);

}  // namespace tri::cpu
