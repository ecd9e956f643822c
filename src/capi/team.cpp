// Teams on the host targets: tri_team_* (docs/distributed.md). A team is a set of ranks that
// run one kernel together; here each rank is a thread of this process that launches the kernel
// through the target interface with a TeamLaunch (base/launch.h) naming its rank and the heaps.
// The heaps are one block of host memory from the context's allocator, rank r's at
// base + r * heap_bytes; allocations take the same offset in every heap (first fit over a map
// of the ranges in use).
//
// Co-residency: a kernel that waits runs every program of a rank on its own thread (the targets
// do that); this file adds one thread per rank, so every program of every rank runs at once,
// within kMaxCoresidentPrograms over the whole team. A failure anywhere sets the launch's abort
// flag, which every wait of the team watches, so one failing rank cannot leave the others
// waiting until their timeout.
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "base/team.h"
#include "capi/handles.h"
#include "capi/team.h"
#include "target/target.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

namespace {

constexpr uint64_t kHeapAlign = kSymmetricHeapAlign;
constexpr uint32_t kMaxRanks = static_cast<uint32_t>(kMaxCoresidentPrograms);

}  // namespace

namespace tri::capi {

void team_free(tri_team* team) {
  tri_context* c = team->context;
  if (team->gpu) team->device.reset();  // frees the heap and leaves the team
  else capi::mem_free(c, team->memory, team->memory_bytes);
  delete team;
  capi::context_release(c);
}

}  // namespace tri::capi

extern "C" {

TRI_API tri_result tri_team_create(tri_context* context, uint32_t num_ranks, uint64_t heap_bytes_per_rank,
                                   tri_team** out_team) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(out_team);
  return guard([&] {
    if (num_ranks == 0) return set_error(Code::InvalidArgument, "tri_team_create: num_ranks is 0; a team has 1 or more ranks");
    if (num_ranks > kMaxRanks)
      return set_error(Code::LimitExceeded, "tri_team_create: " + std::to_string(num_ranks) +
                                                " ranks, more than the " + std::to_string(kMaxRanks) +
                                                " the host targets run at once");
    if (heap_bytes_per_rank == 0)
      return set_error(Code::InvalidArgument, "tri_team_create: heap_bytes_per_rank is 0; give each rank's heap a size");
    const uint64_t heap = (heap_bytes_per_rank + kHeapAlign - 1) / kHeapAlign * kHeapAlign;
    if (heap < heap_bytes_per_rank || heap > (uint64_t(1) << 46) / num_ranks)
      return set_error(Code::LimitExceeded, "tri_team_create: " + std::to_string(num_ranks) + " heaps of " +
                                                std::to_string(heap_bytes_per_rank) + " bytes do not fit in 64 TiB");
    auto team = std::make_unique<tri_team>();
    team->memory_bytes = static_cast<size_t>(heap * num_ranks);
    team->memory = capi::mem_alloc(context, team->memory_bytes, kHeapAlign);
    if (!team->memory)
      return set_error(Code::OutOfMemory, "tri_team_create: cannot allocate " + std::to_string(num_ranks) +
                                              " heaps of " + std::to_string(heap) + " bytes");
    std::memset(team->memory, 0, team->memory_bytes);
    team->context = context;
    team->num_ranks = num_ranks;
    team->heap_bytes = heap;
    for (uint32_t r = 0; r < num_ranks; ++r)
      team->bases.push_back(reinterpret_cast<uint64_t>(team->memory) + uint64_t(r) * heap);
    capi::context_retain(context);
    *out_team = team.release();
    return TRI_OK;
  });
}

TRI_API void tri_team_destroy(tri_team* team) {
  if (!team) return;
  const uint64_t left = team->holds.fetch_sub(1, std::memory_order_acq_rel) - 1;
  if (left == 0) {
    capi::team_free(team);
    return;
  }
  // tri.h forbids it; freeing the heaps under the running waits would crash the host, so the
  // last launch frees the team when it returns.
  team->context->log(TRI_LOG_WARNING, "tri_team_destroy: " + std::to_string(left) + " launch" +
                                          (left == 1 ? " of the team is" : "es of the team are") +
                                          " still running; the team is released when " +
                                          (left == 1 ? "it returns" : "they return") +
                                          " (destroy a team only after its launches)");
}

TRI_API tri_result tri_team_alloc(tri_team* team, uint64_t bytes, uint64_t* out_offset) {
  TRI_CHECK_ARG(team);
  TRI_CHECK_ARG(out_offset);
  return guard([&] {
    if (bytes == 0) return set_error(Code::InvalidArgument, "tri_team_alloc: bytes is 0");
    const uint64_t size = (bytes + kHeapAlign - 1) / kHeapAlign * kHeapAlign;
    if (size < bytes) return set_error(Code::OutOfMemory, "tri_team_alloc: " + std::to_string(bytes) + " bytes do not fit");
    uint64_t offset = 0, free_bytes = 0;
    bool found = false;
    {
      std::lock_guard<std::mutex> lock(team->mu);
      uint64_t at = 0;
      for (const auto& [off, len] : team->used) {
        free_bytes += off - at;
        if (!found && off - at >= size) {
          offset = at;
          found = true;
        }
        at = off + len;
      }
      free_bytes += team->heap_bytes - at;
      if (!found && team->heap_bytes - at >= size) {
        offset = at;
        found = true;
      }
      if (found) team->used.emplace(offset, size);
    }
    if (!found)
      return set_error(Code::OutOfMemory, "tri_team_alloc: no free range of " + std::to_string(size) +
                                              " bytes in the team's heaps of " + std::to_string(team->heap_bytes) +
                                              " bytes (" + std::to_string(free_bytes) +
                                              " bytes free in all); make the team with larger heaps");
    if (team->gpu) {
      Status st = team->device->zero(offset, size);
      if (!st.is_ok()) {
        std::lock_guard<std::mutex> lock(team->mu);
        team->used.erase(offset);
        return set_error(st);
      }
    } else {
      for (uint32_t r = 0; r < team->num_ranks; ++r)
        std::memset(reinterpret_cast<void*>(team->bases[r] + offset), 0, static_cast<size_t>(size));
    }
    *out_offset = offset;
    return TRI_OK;
  });
}

TRI_API tri_result tri_team_free(tri_team* team, uint64_t offset) {
  TRI_CHECK_ARG(team);
  return guard([&] {
    const uint64_t running = team->holds.load(std::memory_order_acquire) - 1;
    if (running > 0)
      return set_error(Code::InvalidArgument,
                       "tri_team_free: offset " + std::to_string(offset) + " may be in use: " + std::to_string(running) +
                           " launch" + (running == 1 ? " of the team is" : "es of the team are") +
                           " running; free buffers after the launches that use them return");
    std::lock_guard<std::mutex> lock(team->mu);
    auto it = team->used.find(offset);
    if (it == team->used.end())
      return set_error(Code::InvalidArgument, "tri_team_free: offset " + std::to_string(offset) +
                                                  " is not the start of an allocation of this team (tri_team_alloc)");
    team->used.erase(it);
    return TRI_OK;
  });
}

TRI_API tri_result tri_team_ptr(const tri_team* team, uint32_t rank, uint64_t offset, void** out_ptr) {
  TRI_CHECK_ARG(team);
  TRI_CHECK_ARG(out_ptr);
  if (rank >= team->num_ranks)
    return set_error(Code::InvalidArgument, "tri_team_ptr: rank " + std::to_string(rank) + ", but the team has " +
                                                std::to_string(team->num_ranks) + " ranks");
  if (offset >= team->heap_bytes)
    return set_error(Code::InvalidArgument, "tri_team_ptr: offset " + std::to_string(offset) +
                                                " is past the heap of " + std::to_string(team->heap_bytes) + " bytes");
  *out_ptr = reinterpret_cast<void*>(team->bases[rank] + offset);
  return TRI_OK;
}

TRI_API tri_result tri_team_set_wait_timeout(tri_team* team, uint64_t timeout_ms) {
  TRI_CHECK_ARG(team);
  team->wait_timeout_ms.store(timeout_ms);
  return TRI_OK;
}

TRI_API tri_result tri_team_launch(const tri_kernel* kernel, tri_team* team, uint32_t grid_x, uint32_t grid_y,
                                   uint32_t grid_z, const tri_arg* args, uint32_t num_args_per_rank) {
  TRI_CHECK_ARG(kernel);
  TRI_CHECK_ARG(team);
  capi::TeamHold hold(team);
  return guard([&] {
    const capi::Compiled& c = *kernel->compiled;
    if (team->gpu)
      return set_error(capi::gpu_team_launch(kernel, team, grid_x, grid_y, grid_z, args, num_args_per_rank, nullptr, true));
    if (c.target->uses_stream())
      return set_error(Code::InvalidArgument, "tri_team_launch: kernel @" + c.name + " is compiled for the \"" +
                                                  std::string(c.target->name()) +
                                                  "\" target, and this team runs on the host (tri_team_create); GPU "
                                                  "kernels run in GPU teams (tri_team_join)");
    if (grid_x > kMaxGridX || grid_y > kMaxGridYZ || grid_z > kMaxGridYZ)
      return set_error(Code::InvalidArgument, "tri_team_launch: grid (" + std::to_string(grid_x) + ", " +
                                                  std::to_string(grid_y) + ", " + std::to_string(grid_z) +
                                                  ") is too large: x may be at most " + std::to_string(kMaxGridX) +
                                                  " and y and z at most " + std::to_string(kMaxGridYZ));
    const uint32_t n = num_args_per_rank;
    if (n != c.params.size())
      return set_error(Code::LaunchArgs, "tri_team_launch: kernel @" + c.name + " takes " +
                                             std::to_string(c.params.size()) + " arguments per rank, got " +
                                             std::to_string(n));
    if (n && !args) return set_error(Code::InvalidArgument, "tri_team_launch: args is NULL");
    const uint32_t ranks = team->num_ranks;
    tri_context* ctx = kernel->module->context;
    // Every rank's arguments, checked and encoded before anything runs.
    std::vector<std::vector<ArgValue>> av(ranks, std::vector<ArgValue>(n));
    std::vector<const capi::Compiled*> variants(ranks);
    for (uint32_t r = 0; r < ranks; ++r) {
      uint64_t key = 0;
      const tri_arg* ra = args + uint64_t(r) * n;
      if (!c.encode_and_classify(ra, n, av[r].data(), &key)) {
        Status st = capi::encode_args(c, ra, n, av[r].data());
        return set_error(st.code(), "rank " + std::to_string(r) + ": " + st.message());
      }
      variants[r] = c.find_variant(key);
      if (!variants[r]) variants[r] = c.variant(key, [ctx](const std::string& m) { ctx->log(TRI_LOG_INFO, m); });
    }
    const Grid grid{grid_x, grid_y, grid_z};
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return TRI_OK;
    if (c.waits && grid.count() * ranks > kMaxCoresidentPrograms)
      return set_error(Code::LimitExceeded,
                       "tri_team_launch: kernel @" + c.name + " waits on signals, so the " +
                           std::to_string(grid.count()) + " program instances of each of the " + std::to_string(ranks) +
                           " ranks must all run at once, " + std::to_string(grid.count() * ranks) +
                           " in all, and the host targets run at most " + std::to_string(kMaxCoresidentPrograms) +
                           "; use a smaller grid or fewer ranks");
    std::atomic<bool> abort{false};
    std::vector<TeamLaunch> tl(ranks);
    for (uint32_t r = 0; r < ranks; ++r) {
      tl[r].rank = r;
      tl[r].num_ranks = ranks;
      tl[r].heap_bases = team->bases.data();
      tl[r].heap_bytes = team->heap_bytes;
      tl[r].wait_timeout_ms = team->wait_timeout_ms.load();
      tl[r].abort = &abort;
    }
    std::vector<Status> results(ranks);
    const CancelToken cancel = capi::cancel_token(ctx);
    Status started = run_coresident(
        ranks, size_t(16) << 20,
        [&](uint64_t r) {
          target::LaunchEnv env;
          env.print = &ctx->print_sink;
          env.pool = [](void* x, ThreadPool** out) { return capi::context_pool(static_cast<tri_context*>(x), out); };
          env.pool_user = ctx;
          env.cancel = cancel;
          env.interp_memory_limit = ctx->options.interp_memory_limit;
          env.team = &tl[r];
          results[r] = variants[r]->exe->launch(grid, av[r].data(), n, env);
          // A rank that failed before its programs ran (its target refused the launch) stops
          // the others too.
          if (!results[r].is_ok() && results[r].code() != Code::Cancelled) abort.store(true);
        },
        &abort);
    // The lowest rank's own failure; ranks that stopped because of it (Cancelled) come last.
    int pick = -1;
    for (uint32_t r = 0; r < ranks && pick < 0; ++r)
      if (!results[r].is_ok() && results[r].code() != Code::Cancelled) pick = static_cast<int>(r);
    if (pick < 0 && !started.is_ok()) {
      ctx->log(TRI_LOG_ERROR, started.message());
      return set_error(started);
    }
    for (uint32_t r = 0; r < ranks && pick < 0; ++r)
      if (!results[r].is_ok()) pick = static_cast<int>(r);
    if (pick < 0) return TRI_OK;
    Status st(results[pick].code(), "rank " + std::to_string(pick) + ": " + results[pick].message());
    ctx->log(TRI_LOG_ERROR, st.message());
    return set_error(st);
  });
}

}  // extern "C"
