// The object behind tri_team (capi/team.cpp: teams on the host targets; capi/team_gpu.cpp:
// GPU teams on NVSHMEM, one rank per process).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "base/launch.h"
#include "base/status.h"
#include "target/target.h"
#include "tri/tri.h"

struct tri_team {
  tri_context* context = nullptr;  // holds a reference
  uint32_t num_ranks = 0;
  uint64_t heap_bytes = 0;
  void* memory = nullptr;
  size_t memory_bytes = 0;
  std::vector<uint64_t> bases;  // one per rank: where each rank's heap is, as this process sees it
  std::atomic<uint64_t> wait_timeout_ms{tri::kDefaultWaitTimeoutMs};
  // The caller's reference plus one per tri_team_launch running (host teams, and GPU teams'
  // synchronous launches): tri_team_destroy during a launch (which tri.h forbids) leaves the team
  // to the last launch to free, and tri_team_free refuses to free while a launch runs.
  std::atomic<uint64_t> holds{1};
  std::mutex mu;                        // guards `used`
  std::map<uint64_t, uint64_t> used;    // offset -> bytes of each allocation
  // A GPU team (tri_team_join): this process runs rank `rank` of it through `device` (its
  // target's DeviceTeam: the heap block, its device, NVSHMEM); `bases` is device->bases().
  bool gpu = false;
  uint32_t rank = 0;
  std::unique_ptr<tri::target::DeviceTeam> device;
};

namespace tri::capi {

// Frees the team (its heaps, or the GPU team's NVSHMEM state) and drops its context reference.
void team_free(tri_team* team);
// Holds the team for one launch; the last holder to let go frees it.
class TeamHold {
 public:
  explicit TeamHold(tri_team* t) : t_(t) { t_->holds.fetch_add(1, std::memory_order_acq_rel); }
  ~TeamHold() {
    if (t_->holds.fetch_sub(1, std::memory_order_acq_rel) == 1) team_free(t_);
  }
  TeamHold(const TeamHold&) = delete;
  TeamHold& operator=(const TeamHold&) = delete;

 private:
  tri_team* t_;
};

// GPU teams (capi/team_gpu.cpp), called by the tri_team_* functions of capi/team.cpp. The
// rest (zeroing a new buffer, freeing the heap) is team->device's.
// Launches this process's rank of the team on `stream` (NULL: the context's default stream).
Status gpu_team_launch(const tri_kernel* kernel, tri_team* team, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                       const tri_arg* args, uint32_t num_args, void* stream, bool sync);

}  // namespace tri::capi
