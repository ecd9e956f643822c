// The CPU target's launch loop (kernel.h): a grid's program instances in chunks on the thread
// pool, co-resident instances on threads of their own, with the IEEE floating-point environment
// every instance runs in.
#include "target/cpu/kernel.h"

#include <algorithm>
#include <cassert>
#include <mutex>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "base/team.h"
#include "target/cpu/runtime.h"

namespace tri::cpu {
namespace {

// Block buffers up to this size per instance may run on the caller's stack (see run()).
constexpr uint64_t kCallerStackBytes = 64 << 10;

// The instances of a launch run with IEEE defaults whatever the host thread set (a game engine
// may have turned on flush-to-zero): round to nearest, denormals kept, exceptions masked.
class FpEnvGuard {
 public:
#if defined(__x86_64__) || defined(__i386__)
  FpEnvGuard() : saved_(_mm_getcsr()) { _mm_setcsr(0x1f80); }
  ~FpEnvGuard() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

}  // namespace

CpuKernel::CpuKernel(CpuCode code, CpuBuild build) : code_(std::move(code)), build_(std::move(build)) {}

Status CpuKernel::run(const Grid& grid, const ArgValue* args, size_t nargs, ThreadPool* pool,
                      const PrintSink& print, const CancelToken& cancel, const TeamLaunch* team,
                      bool coresident) const {
  const CpuCode& k = code_;
  if (nargs != k.num_params)
    return Status(Code::LaunchArgs, "kernel '" + k.name + "' takes " + std::to_string(k.num_params) +
                                        " arguments, got " + std::to_string(nargs));
  if (nargs > 0 && !args) return Status(Code::InvalidArgument, "launch arguments are NULL");
  const uint64_t count = grid.count();
  if (count == 0) return Status::ok();
  std::vector<uint64_t> bits(nargs);
  for (size_t i = 0; i < nargs; ++i) bits[i] = args[i].bits;
  LaunchState ls;
  static const std::atomic<uint64_t> kNeverCancelled{0};
  const std::atomic<uint64_t>* counter = cancel.counter ? cancel.counter : &kNeverCancelled;
  static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t), "the generated code reads the counter as an i64");
  ls.cancel.counter = reinterpret_cast<const uint64_t*>(counter);
  ls.cancel.seen = cancel.counter ? cancel.seen : 0;
  assert(static_cast<void*>(&ls.cancel) == static_cast<void*>(&ls) && "the generated code reads it at offset 0");
  auto cancelled = [&] {
    return Status(Code::Cancelled, "the launch of kernel '" + k.name + "' was cancelled (tri_context_cancel)");
  };
  if (cancel.requested()) return cancelled();
  ls.sites = &k.sites;
  ls.print = &print;
  ls.grid = grid;
  assert(reinterpret_cast<char*>(&ls.team) - reinterpret_cast<char*>(&ls) == kTeamHeadOffset);
  if (team) {
    ls.team_launch = team;
    ls.team.rank = team->rank;
    ls.team.num_ranks = team->num_ranks;
    if (team->heap_bases) {
      ls.team.heap_base = team->heap_bases[team->rank];
      ls.team.heap_bytes = team->heap_bytes;
      ls.team.bases = team->heap_bases;
    }
  }
  EntryFn entry = k.entry;
  if (coresident) {
    if (count > kMaxCoresidentPrograms)
      return Status(Code::LimitExceeded,
                    "kernel '" + k.name + "' waits on signals, so its " + std::to_string(count) +
                        " program instances must all run at once, and the host targets run at most " +
                        std::to_string(kMaxCoresidentPrograms) + "; use a smaller grid");
    // Each instance on its own thread, with room for its block buffers and the runtime's calls.
    const size_t stack = static_cast<size_t>(std::max<uint64_t>(k.stack_bytes + (uint64_t(4) << 20), uint64_t(8) << 20));
    Status started = run_coresident(
        count, stack,
        [&](uint64_t id) {
          FpEnvGuard fp;
          if (entry(bits.data(), &ls, grid.x, grid.y, grid.z, id, id + 1) != 0) {
            std::lock_guard<std::mutex> lock(ls.mu);
            if (!ls.failed) ls.cancelled.store(true, std::memory_order_relaxed);
          }
        },
        &ls.stop);
    if (ls.failed) return ls.failure;
    if (!started.is_ok()) return started;
    if (ls.cancelled.load(std::memory_order_relaxed)) return cancelled();
    return Status::ok();
  }
  // Kernels with small frames also run on the calling thread (any thread's stack holds them),
  // which spares a launch of one chunk the wake-up of a worker.
  const bool caller_joins = k.stack_bytes <= kCallerStackBytes;
  if (!pool && caller_joins) {
    FpEnvGuard fp;
    const int32_t rc = entry(bits.data(), &ls, grid.x, grid.y, grid.z, 0, count);
    if (ls.failed) return ls.failure;
    return rc != 0 ? cancelled() : Status::ok();
  }
  std::unique_ptr<ThreadPool> own;
  if (!pool) {
    own = std::make_unique<ThreadPool>(1);
    if (own->size() == 0) return Status(Code::OutOfMemory, "cannot start a thread for the launch: " + own->start_error());
    pool = own.get();
  }
  // Enough chunks per worker to balance uneven instances, few enough to amortize the hand-out.
  uint64_t chunks = std::min<uint64_t>(count, uint64_t(pool->size() + (caller_joins ? 1 : 0)) * 16);
  const uint64_t per = (count + chunks - 1) / chunks;
  chunks = (count + per - 1) / per;
  Status ran = pool->run(
      chunks,
      [&](uint64_t c) {
        if (ls.stop.load(std::memory_order_relaxed)) return;
        if (cancel.requested()) {
          ls.cancelled.store(true, std::memory_order_relaxed);
          return;
        }
        uint64_t begin = c * per, end = std::min(count, begin + per);
        FpEnvGuard fp;
        // 1 without a recorded failure: the instance stopped for a cancel.
        if (entry(bits.data(), &ls, grid.x, grid.y, grid.z, begin, end) != 0) {
          std::lock_guard<std::mutex> lock(ls.mu);
          if (!ls.failed) ls.cancelled.store(true, std::memory_order_relaxed);
        }
      },
      caller_joins);
  if (!ran.is_ok()) return ran;
  if (ls.failed) return ls.failure;
  if (ls.cancelled.load(std::memory_order_relaxed)) return cancelled();
  return Status::ok();
}

}  // namespace tri::cpu
