// GPU teams through the C API (docs/distributed.md): tri_team_make_id, tri_team_join, tri_team_rank,
// tri_team_barrier and the launches of a process's rank. One rank per process, each on its own
// GPU; the team itself (NVSHMEM, the heap block, its device) is the target's (target.h:
// team_make_id, team_join, DeviceTeam; target/cuda/team.cpp). This file checks the C API's
// arguments; capi/team.cpp keeps the team's allocations.
#include "capi/handles.h"
#include "capi/team.h"
#include "target/target.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

namespace tri::capi {
namespace {

// The target whose devices make GPU teams.
Status team_target(const target::Target** out) {
  *out = target::device_target();
  if (!*out) return Status(Code::Unsupported, "this build has no GPU target; GPU teams need the \"cuda\" target");
  return Status::ok();
}

}  // namespace

Status gpu_team_launch(const tri_kernel* kernel, tri_team* team, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                       const tri_arg* args, uint32_t num_args, void* stream, bool sync) {
  const capi::Compiled& c = *kernel->compiled;
  const std::string name = sync ? "tri_team_launch" : "tri_team_launch_async";
  if (!c.target->uses_stream())
    return Status(Code::InvalidArgument, name + ": kernel @" + c.name + " is compiled for the \"" +
                                             std::string(c.target->name()) +
                                             "\" target, and this team's ranks are GPUs (tri_team_join): compile it "
                                             "for \"cuda\"");
  if (grid_x > kMaxGridX || grid_y > kMaxGridYZ || grid_z > kMaxGridYZ)
    return Status(Code::InvalidArgument, name + ": the grid is too large: x may be at most " +
                                             std::to_string(kMaxGridX) + " and y and z at most " +
                                             std::to_string(kMaxGridYZ));
  if (num_args != c.params.size())
    return Status(Code::LaunchArgs, name + ": kernel @" + c.name + " takes " +
                                        std::to_string(c.params.size()) + " arguments, got " +
                                        std::to_string(num_args) + " (a GPU team's process passes its own rank's)");
  if (num_args && !args) return Status(Code::InvalidArgument, name + ": args is NULL");
  ArgValue av[256];
  if (num_args > 256) return Status(Code::LaunchArgs, name + ": more than 256 arguments");
  uint64_t key = 0;
  if (!c.encode_and_classify(args, num_args, av, &key)) TRI_RETURN_IF_ERROR(capi::encode_args(c, args, num_args, av));
  tri_context* ctx = kernel->module->context;
  const capi::Compiled* v = c.find_variant(key);
  if (!v) v = c.variant(key, [ctx](const std::string& m) { ctx->log(TRI_LOG_INFO, m); });
  if (grid_x == 0 || grid_y == 0 || grid_z == 0) return Status::ok();
  TeamLaunch tl;
  tl.rank = team->rank;
  tl.num_ranks = team->num_ranks;
  tl.heap_bases = team->bases.data();
  tl.heap_bytes = team->heap_bytes;
  tl.wait_timeout_ms = team->wait_timeout_ms.load();
  return team->device->launch(*v->exe, Grid{grid_x, grid_y, grid_z}, av, num_args, stream, &tl, sync,
                               "rank " + std::to_string(team->rank) + ": kernel @" + c.name);
}

}  // namespace tri::capi

extern "C" {

TRI_API tri_result tri_team_make_id(tri_context* context, void* out_id, size_t id_bytes) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(out_id);
  return guard([&] {
    if (id_bytes < TRI_TEAM_ID_BYTES)
      return set_error(Code::InvalidArgument, "tri_team_make_id: the id takes " + std::to_string(TRI_TEAM_ID_BYTES) +
                                                  " bytes, the buffer has " + std::to_string(id_bytes));
    const target::Target* t = nullptr;
    Status st = capi::team_target(&t);
    if (st.is_ok()) st = t->team_make_id(out_id, id_bytes);
    return set_error(st);
  });
}

TRI_API tri_result tri_team_join(tri_context* context, const void* id, size_t id_bytes, uint32_t rank,
                                 uint32_t num_ranks, uint32_t device, uint64_t heap_bytes_per_rank, tri_team** out_team) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(id);
  TRI_CHECK_ARG(out_team);
  return guard([&] {
    if (id_bytes != TRI_TEAM_ID_BYTES)
      return set_error(Code::InvalidArgument, "tri_team_join: an id is " + std::to_string(TRI_TEAM_ID_BYTES) +
                                                  " bytes (tri_team_make_id), got " + std::to_string(id_bytes));
    if (num_ranks == 0 || rank >= num_ranks)
      return set_error(Code::InvalidArgument, "tri_team_join: rank " + std::to_string(rank) + " of a team of " +
                                                  std::to_string(num_ranks) + " ranks");
    if (heap_bytes_per_rank == 0)
      return set_error(Code::InvalidArgument, "tri_team_join: heap_bytes_per_rank is 0; give each rank's heap a size");
    const target::Target* t = nullptr;
    Status st = capi::team_target(&t);
    auto team = std::make_unique<tri_team>();
    team->heap_bytes = (heap_bytes_per_rank + kSymmetricHeapAlign - 1) / kSymmetricHeapAlign * kSymmetricHeapAlign;
    if (st.is_ok()) st = t->team_join(id, id_bytes, rank, num_ranks, device, team->heap_bytes, &team->device);
    if (!st.is_ok()) return set_error(st.code(), "tri_team_join: " + st.message());
    team->context = context;
    team->gpu = true;
    team->rank = rank;
    team->num_ranks = num_ranks;
    team->bases = team->device->bases();
    capi::context_retain(context);
    *out_team = team.release();
    return TRI_OK;
  });
}

TRI_API tri_result tri_team_rank(const tri_team* team, uint32_t* out_rank, uint32_t* out_num_ranks) {
  TRI_CHECK_ARG(team);
  if (out_rank) *out_rank = team->rank;
  if (out_num_ranks) *out_num_ranks = team->num_ranks;
  return TRI_OK;
}

TRI_API tri_result tri_team_barrier(tri_team* team) {
  TRI_CHECK_ARG(team);
  return guard([&] {
    if (!team->gpu) return TRI_OK;  // a host team's ranks are this process's threads: nothing to wait for
    return set_error(team->device->barrier());
  });
}

TRI_API tri_result tri_team_launch_async(const tri_kernel* kernel, tri_team* team, uint32_t grid_x, uint32_t grid_y,
                                         uint32_t grid_z, const tri_arg* args, uint32_t num_args, void* stream) {
  TRI_CHECK_ARG(kernel);
  TRI_CHECK_ARG(team);
  return guard([&] {
    if (!team->gpu)
      return set_error(Code::InvalidArgument,
                       "tri_team_launch_async: this team runs on the host (tri_team_create); use tri_team_launch");
    return set_error(capi::gpu_team_launch(kernel, team, grid_x, grid_y, grid_z, args, num_args, stream, false));
  });
}

}  // extern "C"
