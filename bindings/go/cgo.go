// The cgo side of the package: how it finds tri.h and libtri (pkg-config's `tri`: tri.pc of an
// installed Tri, or a build tree's tri-uninstalled.pc; its rpath lets programs start without
// LD_LIBRARY_PATH), and the C helpers that keep the
// cgo pointer rules. Go pointers (the slices given to Launch) reach C only as direct call
// arguments, never stored inside Go or C memory, which Go 1.19 (no runtime.Pinner) requires.
// Streams and device pointers are integers on the Go side (uintptr, uint64) and become void*
// only in C, so no integer is ever converted to an unsafe.Pointer in Go. The launch helpers take
// C pointers (handles, C memory) as uintptr_t too: with Go 1.19's cgo every pointer-typed
// argument of a call costs a heap allocation, an integer none.

package tri

/*
#cgo pkg-config: tri
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tri/tri.h>

// Exported from log.go.
extern void triGoLog(void* user, int32_t level, char* message);

static void tri_go_log(void* user, int32_t level, const char* message) {
  triGoLog(user, level, (char*)message);
}

// Defined here once (a preamble without //export is compiled once) and declared where used.
// The handle travels as an integer, so no Go pointer is converted.
tri_result tri_go_set_log(tri_context_options* options, uintptr_t handle, int32_t max_level) {
  return tri_context_options_set_log(options, tri_go_log, (void*)handle, max_level);
}

#define TRI_GO_MAX_BUFFERS 16

// Launches on `stream` with the buffers given as arguments: buffer j is the pointer of argument
// slot[j]. The arguments (`args`, `slot`: C memory, see encodedCall) are copied and the pointers
// placed in the copy, so neither Go memory nor C memory keeps a Go pointer after the call.
tri_result tri_go_launch(uintptr_t kernel, uint32_t gx, uint32_t gy, uint32_t gz, uintptr_t stream,
                         uintptr_t args, uint32_t n, uintptr_t slots, uint32_t nbuf,
                         void* b0, void* b1, void* b2, void* b3, void* b4, void* b5, void* b6, void* b7,
                         void* b8, void* b9, void* b10, void* b11, void* b12, void* b13, void* b14, void* b15) {
  void* b[TRI_GO_MAX_BUFFERS] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15};
  const uint32_t* slot = (const uint32_t*)slots;
  tri_arg local[32];
  tri_arg* a = n <= 32 ? local : (tri_arg*)malloc(sizeof(tri_arg) * n);
  if (!a) return TRI_ERROR_OUT_OF_MEMORY;
  if (n) memcpy(a, (const tri_arg*)args, sizeof(tri_arg) * n);
  for (uint32_t j = 0; j < nbuf && j < TRI_GO_MAX_BUFFERS; ++j) a[slot[j]].value.p = b[j];
  tri_result r = tri_launch((const tri_kernel*)kernel, gx, gy, gz, (void*)stream, a, n);
  if (a != local) free(a);
  return r;
}

// A launch whose arguments hold no Go memory (device pointers, C memory, scalars): the arguments
// are in C memory already and go to tri_launch as they are; every argument is an integer.
tri_result tri_go_launch_c(uintptr_t kernel, uint32_t gx, uint32_t gy, uint32_t gz, uintptr_t stream,
                           uintptr_t args, uint32_t n) {
  return tri_launch((const tri_kernel*)kernel, gx, gy, gz, (void*)stream, (const tri_arg*)args, n);
}

tri_result tri_go_plan_launch(uintptr_t plan) { return tri_launch_plan_launch((tri_launch_plan*)plan); }

// Exported from tune.go.
extern void triGoTuneGrid(void* user, uint32_t config, uint32_t* grid);
extern void triGoTuneStage(void* user, int32_t stage, uint32_t config, uint32_t done, uint32_t count,
                           int32_t status, double median_ns);

static void tri_go_tune_grid(void* user, uint32_t config, uint32_t* grid) {
  triGoTuneGrid(user, config, grid);
}

static void tri_go_tune_stage(void* user, int32_t stage, uint32_t config, uint32_t done, uint32_t count,
                              tri_result status, double median_ns) {
  triGoTuneStage(user, stage, config, done, count, status, median_ns);
}

// Sets the space's progress callback to the Go function behind `handle` (a cgo.Handle, as an
// integer); 0 clears it.
tri_result tri_go_set_tune_progress(tri_tune_space* space, uintptr_t handle) {
  return tri_tune_space_set_progress(space, handle ? tri_go_tune_stage : NULL, (void*)handle);
}

// tri_tune with the arguments of tri_go_launch (buffer j is the pointer of argument slot[j]).
// `grids` is the cgo.Handle of the configs' grids, given back to Go by tri_go_tune_grid, or 0 for
// one grid (gx, gy, gz) for every config; the handle travels as an integer, as the log sink's.
tri_result tri_go_tune(tri_module* module, const char* name, const tri_compile_options* options,
                       const tri_tune_space* space, uint32_t gx, uint32_t gy, uint32_t gz, uintptr_t stream,
                       const tri_arg* args, uint32_t n, uint32_t flags, uintptr_t grids, tri_kernel** out_kernel,
                       tri_blob** out_result, const uint32_t* slot, uint32_t nbuf,
                       void* b0, void* b1, void* b2, void* b3, void* b4, void* b5, void* b6, void* b7,
                       void* b8, void* b9, void* b10, void* b11, void* b12, void* b13, void* b14, void* b15) {
  void* b[TRI_GO_MAX_BUFFERS] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15};
  tri_arg local[32];
  tri_arg* a = n <= 32 ? local : (tri_arg*)malloc(sizeof(tri_arg) * n);
  if (!a) return TRI_ERROR_OUT_OF_MEMORY;
  if (n) memcpy(a, args, sizeof(tri_arg) * n);
  for (uint32_t j = 0; j < nbuf && j < TRI_GO_MAX_BUFFERS; ++j) a[slot[j]].value.p = b[j];
  tri_result r = tri_tune(module, name, options, space, gx, gy, gz, (void*)stream, a, n, flags, NULL,
                          grids ? tri_go_tune_grid : NULL, (void*)grids, out_kernel, out_result);
  if (a != local) free(a);
  return r;
}

// A team launch (tri_team_launch, or tri_team_launch_async when `async`) with the buffers of
// tri_go_launch: `args` holds n arguments (every rank's, rank-major, or this rank's for async),
// per_rank of them per rank; buffer j is the pointer of argument slot[j]. The stream becomes a
// pointer here.
tri_result tri_go_team_launch(const tri_kernel* kernel, tri_team* team, uint32_t gx, uint32_t gy, uint32_t gz,
                              int32_t async, uintptr_t stream, const tri_arg* args, uint32_t n, uint32_t per_rank,
                              const uint32_t* slot, uint32_t nbuf,
                              void* b0, void* b1, void* b2, void* b3, void* b4, void* b5, void* b6, void* b7,
                              void* b8, void* b9, void* b10, void* b11, void* b12, void* b13, void* b14,
                              void* b15) {
  void* b[TRI_GO_MAX_BUFFERS] = {b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15};
  tri_arg local[32];
  tri_arg* a = n <= 32 ? local : (tri_arg*)malloc(sizeof(tri_arg) * (n ? n : 1));
  if (!a) return TRI_ERROR_OUT_OF_MEMORY;
  if (n) memcpy(a, args, sizeof(tri_arg) * n);
  for (uint32_t j = 0; j < nbuf && j < TRI_GO_MAX_BUFFERS; ++j) a[slot[j]].value.p = b[j];
  tri_result r = async ? tri_team_launch_async(kernel, team, gx, gy, gz, a, per_rank, (void*)stream)
                       : tri_team_launch(kernel, team, gx, gy, gz, a, per_rank);
  if (a != local) free(a);
  return r;
}

// The address of a GPU team's heap as an integer (a device address is never a Go pointer).
tri_result tri_go_team_device_ptr(const tri_team* team, uint32_t rank, uint64_t offset, uint64_t* out) {
  void* p = NULL;
  tri_result r = tri_team_ptr(team, rank, offset, &p);
  *out = (uint64_t)(uintptr_t)p;
  return r;
}

// A plan's arguments hold no Go pointer (Plan refuses Go memory; device and C memory travel as
// integers), so they are passed as they are; the stream becomes a pointer here.
tri_result tri_go_plan_create(const tri_kernel* kernel, uint32_t gx, uint32_t gy, uint32_t gz, uintptr_t stream,
                              const tri_arg* args, uint32_t n, tri_launch_plan** out) {
  return tri_launch_plan_create(kernel, gx, gy, gz, (void*)stream, args, n, out);
}

tri_result tri_go_plan_set_stream(tri_launch_plan* plan, uintptr_t stream) {
  return tri_launch_plan_set_stream(plan, (void*)stream);
}
*/
import "C"

// maxBuffers is how many pointer arguments one launch can take (TRI_GO_MAX_BUFFERS).
const maxBuffers = 16
