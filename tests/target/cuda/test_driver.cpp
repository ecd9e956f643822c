// GPU tests of the CUDA driver layer (src/target/cuda): device queries, launches on a non-default stream,
// restoration of the caller's current context, one module set on two contexts of one GPU, a CUDA
// graph of 100 captured launches, the JIT log of rejected PTX, the cuLink cubin path and the
// dynamic shared memory opt-in. Where there is no driver or no device every test prints
// "skipped: no CUDA device" and CTest reports the test as skipped (tests/CMakeLists.txt).
//
// The kernels are hand-written PTX (ISA 7.0, sm_80, so any sm_80+ GPU can JIT them; checked with
// `ptxas -arch=sm_90` and `-arch=sm_80`):
//   add_u32(data, n, k):              data[i] += k for i < n
//   smem_add_u32(data, k, words):     one block; data[i] = old data[words-1-i] + k, through dynamic
//                                     shared memory of words*4 bytes
#include "target/cuda/driver.h"
#include "target/cuda/module.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include "test_main.h"

using namespace tri;
using namespace tri::cuda;

namespace {

const char kPtx[] = R"PTX(.version 7.0
.target sm_80
.address_size 64

.visible .entry add_u32(
  .param .u64 add_u32_data,
  .param .u32 add_u32_n,
  .param .u32 add_u32_k
)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<5>;

  ld.param.u64 %rd1, [add_u32_data];
  ld.param.u32 %r1, [add_u32_n];
  ld.param.u32 %r2, [add_u32_k];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r6, %r3, %r4, %r5;
  setp.ge.u32 %p1, %r6, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r7, [%rd4];
  add.s32 %r7, %r7, %r2;
  st.global.u32 [%rd4], %r7;
DONE:
  ret;
}

.extern .shared .align 16 .b8 smem_dyn[];

.visible .entry smem_add_u32(
  .param .u64 smem_add_u32_data,
  .param .u32 smem_add_u32_k,
  .param .u32 smem_add_u32_words
)
{
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<6>;

  ld.param.u64 %rd1, [smem_add_u32_data];
  ld.param.u32 %r1, [smem_add_u32_k];
  ld.param.u32 %r2, [smem_add_u32_words];
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %ntid.x;
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r5, smem_dyn;
  mov.u32 %r6, %r3;
FILL:
  setp.ge.u32 %p1, %r6, %r2;
  @%p1 bra FILLED;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r7, [%rd4];
  add.s32 %r7, %r7, %r1;
  shl.b32 %r8, %r6, 2;
  add.s32 %r8, %r5, %r8;
  st.shared.u32 [%r8], %r7;
  add.s32 %r6, %r6, %r4;
  bra FILL;
FILLED:
  bar.sync 0;
  mov.u32 %r6, %r3;
COPY:
  setp.ge.u32 %p1, %r6, %r2;
  @%p1 bra DONE;
  sub.s32 %r9, %r2, 1;
  sub.s32 %r9, %r9, %r6;
  shl.b32 %r8, %r9, 2;
  add.s32 %r8, %r5, %r8;
  ld.shared.u32 %r7, [%r8];
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r7;
  add.s32 %r6, %r6, %r4;
  bra COPY;
DONE:
  ret;
}
)PTX";

// The same kernel with an instruction no PTX ISA has.
std::string bad_ptx() {
  std::string p = kPtx;
  const std::string from = "add.s32 %r7, %r7, %r2;";
  p.replace(p.find(from), from.size(), "frobnicate.u32 %r7, %r7;");
  return p;
}

bool have_device() {
  int n = 0;
  return device_count(&n).is_ok() && n > 0;
}

#define REQUIRE_DEVICE()                         \
  do {                                           \
    if (!have_device()) {                        \
      std::printf("skipped: no CUDA device\n"); \
      skip();                                    \
    }                                            \
  } while (0)

void ok(const Status& st) {
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
}

const Api* api() {
  const Api* a = nullptr;
  ok(driver(&a));
  return a;
}

// What a host does with its own context: make it current on this thread.
void set_current(CUcontext c) { ok(check(api()->cuCtxSetCurrent(c), "cuCtxSetCurrent")); }

CUcontext current() {
  CUcontext c = nullptr;
  ok(current_context(&c));
  return c;
}

// Device buffer of n u32 values, freed in its context.
struct Buffer {
  CUcontext ctx;
  CUdeviceptr ptr = 0;
  size_t n;
  Buffer(CUcontext c, size_t count) : ctx(c), n(count) { ok(mem_alloc(ctx, n * 4, &ptr)); }
  ~Buffer() { ok(mem_free(ctx, ptr)); }
  void put(const std::vector<uint32_t>& v) { ok(copy_to_device(ctx, ptr, v.data(), n * 4)); }
  std::vector<uint32_t> get() {
    std::vector<uint32_t> v(n);
    ok(copy_to_host(ctx, v.data(), ptr, n * 4));
    return v;
  }
};

std::vector<uint32_t> iota(size_t n) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint32_t(i * 3);
  return v;
}

// add_u32 over `buf` (k added to each element) on `stream` in `ctx`.
Status launch_add(CUcontext ctx, CUfunction fn, Buffer& buf, uint32_t k, CUstream stream) {
  CUdeviceptr p = buf.ptr;
  uint32_t n = uint32_t(buf.n);
  void* args[] = {&p, &n, &k};
  LaunchConfig cfg;
  cfg.block[0] = 128;
  cfg.grid[0] = (n + 127) / 128;
  return launch_in(ctx, fn, cfg, stream, args, "add_u32");
}

void test_device_info(void**) {
  REQUIRE_DEVICE();
  int n = 0;
  ok(device_count(&n));
  for (int i = 0; i < n; ++i) {
    const DeviceInfo* d = nullptr;
    ok(device_info(i, &d));
    assert_false(d->name.empty());
    assert_true(d->cc_major >= 3);
    assert_true(d->sm_count > 0);
    assert_int_equal(d->warp_size, 32);
    assert_int_equal(d->shared_per_block, 48 * 1024);
    assert_true(d->shared_per_block_optin >= d->shared_per_block);
    assert_true(d->l2_bytes > 0);
    std::printf("device %d: %s sm_%d, %d SMs, shared %d/%d bytes, L2 %d bytes\n", i, d->name.c_str(), d->arch(),
                d->sm_count, d->shared_per_block, d->shared_per_block_optin, d->l2_bytes);
  }
  const DeviceInfo* d = nullptr;
  Status st = device_info(n, &d);
  assert_int_equal(int(st.code()), int(Code::InvalidArgument));
  int version = 0;
  ok(driver_version(&version));
  assert_true(version >= 11040);
  PtxVersion ptx = max_ptx_for_driver(version);
  assert_true(ptx.known());
  std::printf("driver %d: PTX ISA up to %d.%d\n", version, ptx.major, ptx.minor);
}

void test_launch_on_stream(void**) {
  REQUIRE_DEVICE();
  Devices devices;
  CUcontext ctx = nullptr;
  ok(devices.primary(0, &ctx));
  CUstream stream = nullptr;
  ok(stream_create(ctx, CU_STREAM_NON_BLOCKING, &stream));
  ModuleSet set(kPtx, "", "add_u32");
  CUfunction fn = nullptr;
  ok(set.function(ctx, &fn));
  CUfunction again = nullptr;
  ok(set.function(ctx, &again));
  assert_ptr_equal(fn, again);
  assert_int_equal(set.loaded_count(), 1);
  {
    Buffer buf(ctx, 1000);  // not a multiple of the block: the bound check matters
    buf.put(iota(1000));
    ok(launch_add(ctx, fn, buf, 7, stream));
    ok(stream_synchronize(ctx, stream));
    std::vector<uint32_t> got = buf.get();
    for (size_t i = 0; i < got.size(); ++i) assert_int_equal(got[i], i * 3 + 7);
  }
  ok(stream_destroy(ctx, stream));
}

void test_caller_context_restored(void**) {
  REQUIRE_DEVICE();
  // With no current context, none is left behind.
  set_current(nullptr);
  Devices devices;
  CUcontext primary = nullptr;
  ok(devices.primary(0, &primary));
  {
    Buffer buf(primary, 16);
    buf.put(iota(16));
    assert_null(current());
  }
  // With the caller's own context current, calls in the primary context leave it current.
  OwnedContext mine;
  ok(OwnedContext::create(0, &mine));
  assert_null(current());  // creating it did not change the current context either
  set_current(mine.get());
  ModuleSet set(kPtx, "", "add_u32");
  CUfunction fn = nullptr;
  ok(set.function(primary, &fn));
  assert_ptr_equal(current(), mine.get());
  {
    Buffer buf(primary, 256);
    buf.put(iota(256));
    ok(launch_add(primary, fn, buf, 1, nullptr));
    ok(context_synchronize(primary));
    assert_int_equal(buf.get()[255], 255 * 3 + 1);
    assert_ptr_equal(current(), mine.get());
  }
  // The launch context follows the caller: its current context when it has one.
  CUcontext chosen = nullptr;
  ok(devices.launch_context(0, nullptr, &chosen));
  assert_ptr_equal(chosen, mine.get());
  set_current(nullptr);
  ok(devices.launch_context(0, nullptr, &chosen));
  assert_ptr_equal(chosen, primary);
  set.forget(primary);
}

void test_two_contexts_one_module_set(void**) {
  REQUIRE_DEVICE();
  OwnedContext a, b;
  ok(OwnedContext::create(0, &a));
  ok(OwnedContext::create(0, &b));
  assert_ptr_not_equal(a.get(), b.get());
  {
    ModuleSet set(kPtx, "", "add_u32");
    CUfunction fa = nullptr, fb = nullptr;
    ok(set.function(a.get(), &fa));
    ok(set.function(b.get(), &fb));
    assert_ptr_not_equal(fa, fb);
    assert_int_equal(set.loaded_count(), 2);
    CUstream sb = nullptr;
    ok(stream_create(b.get(), CU_STREAM_NON_BLOCKING, &sb));
    {
      Buffer ba(a.get(), 300), bb(b.get(), 300);
      ba.put(iota(300));
      bb.put(iota(300));
      ok(launch_add(a.get(), fa, ba, 5, nullptr));
      ok(launch_add(b.get(), fb, bb, 9, sb));
      // The stream decides the context a launch needs.
      CUcontext of_stream = nullptr;
      ok(stream_context(sb, &of_stream));
      assert_ptr_equal(of_stream, b.get());
      ok(context_synchronize(a.get()));
      ok(stream_synchronize(b.get(), sb));
      std::vector<uint32_t> ga = ba.get(), gb = bb.get();
      for (size_t i = 0; i < 300; ++i) {
        assert_int_equal(ga[i], i * 3 + 5);
        assert_int_equal(gb[i], i * 3 + 9);
      }
    }
    ok(stream_destroy(b.get(), sb));
  }  // the set unloads its modules while both contexts still exist
}

void test_graph_capture_replay(void**) {
  REQUIRE_DEVICE();
  Devices devices;
  CUcontext ctx = nullptr;
  ok(devices.primary(0, &ctx));
  ModuleSet set(kPtx, "", "add_u32");
  CUfunction fn = nullptr;
  ok(set.function(ctx, &fn));  // loaded before capture: the warm path only looks it up
  CUstream stream = nullptr;
  ok(stream_create(ctx, CU_STREAM_NON_BLOCKING, &stream));
  {
    Buffer buf(ctx, 4096);
    buf.put(iota(4096));
    ok(capture_begin(ctx, stream));
    for (int i = 0; i < 100; ++i) {
      CUfunction warm = nullptr;
      ok(set.function(ctx, &warm));
      ok(launch_add(ctx, warm, buf, 1, stream));
    }
    CUgraph graph = nullptr;
    ok(capture_end(ctx, stream, &graph));
    assert_non_null(graph);
    // Capturing ran nothing.
    assert_int_equal(buf.get()[10], 30);
    CUgraphExec exec = nullptr;
    ok(graph_instantiate(ctx, graph, &exec));
    for (int r = 0; r < 3; ++r) ok(graph_launch(ctx, exec, stream));
    ok(stream_synchronize(ctx, stream));
    std::vector<uint32_t> got = buf.get();
    for (size_t i = 0; i < got.size(); ++i) assert_int_equal(got[i], i * 3 + 300);
    ok(graph_exec_destroy(ctx, exec));
    ok(graph_destroy(ctx, graph));
  }
  ok(stream_destroy(ctx, stream));
}

void test_rejected_ptx_has_jit_log(void**) {
  REQUIRE_DEVICE();
  Devices devices;
  CUcontext ctx = nullptr;
  ok(devices.primary(0, &ctx));
  Module m;
  JitLog log;
  Status st = load_ptx(ctx, bad_ptx(), &m, &log);
  assert_int_equal(int(st.code()), int(Code::Compile));
  std::printf("%s\n", st.message().c_str());
  assert_true(st.message().rfind("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX", 0) == 0);
  assert_false(log.error.empty());
  assert_true(st.message().find(log.error) != std::string::npos);
  assert_true(st.message().find("frobnicate") != std::string::npos);
  assert_false(bool(m));
  // The same through the cuLink path.
  std::string cubin;
  st = compile_ptx(ctx, bad_ptx(), &cubin);
  assert_int_equal(int(st.code()), int(Code::Compile));
  assert_true(st.message().find("CUDA_ERROR_INVALID_PTX") != std::string::npos);
  assert_true(st.message().find("frobnicate") != std::string::npos);
  // A module without the kernel: NotFound naming it.
  ok(load_ptx(ctx, kPtx, &m));
  CUfunction fn = nullptr;
  st = m.function("no_such_kernel", &fn);
  assert_int_equal(int(st.code()), int(Code::NotFound));
  assert_true(st.message().find("'no_such_kernel'") != std::string::npos);
}

void test_cubin_path(void**) {
  REQUIRE_DEVICE();
  Devices devices;
  CUcontext ctx = nullptr;
  ok(devices.primary(0, &ctx));
  std::string cubin;
  JitLog log;
  ok(compile_ptx(ctx, kPtx, &cubin, &log));
  assert_true(cubin.size() > 4);
  assert_memory_equal(cubin.data(), "\x7f" "ELF", 4);
  ModuleSet set("", cubin, "add_u32");
  CUfunction fn = nullptr;
  ok(set.function(ctx, &fn));
  Buffer buf(ctx, 64);
  buf.put(iota(64));
  ok(launch_add(ctx, fn, buf, 11, nullptr));
  ok(context_synchronize(ctx));
  std::vector<uint32_t> got = buf.get();
  for (size_t i = 0; i < got.size(); ++i) assert_int_equal(got[i], i * 3 + 11);
  // A cubin that is not one: an error, not a crash.
  Module m;
  std::string junk(256, 'x');
  Status st = load_cubin(ctx, junk.data(), junk.size(), &m);
  assert_false(st.is_ok());
  assert_true(st.message().find("CUDA_ERROR_") != std::string::npos);
}

void test_dynamic_shared_opt_in(void**) {
  REQUIRE_DEVICE();
  Devices devices;
  CUcontext ctx = nullptr;
  ok(devices.primary(0, &ctx));
  const DeviceInfo* d = nullptr;
  ok(device_info(0, &d));
  const uint32_t bytes = 64 * 1024;
  if (uint32_t(d->shared_per_block_optin) < bytes) {
    std::printf("not applicable: the device has less than 64 KB of opt-in shared memory per block\n");
    skip();
  }
  const uint32_t words = bytes / 4;
  uint32_t k = 2;
  LaunchConfig cfg;
  cfg.block[0] = 256;
  cfg.shared_bytes = bytes;
  Buffer buf(ctx, words);
  buf.put(iota(words));
  CUdeviceptr p = buf.ptr;
  uint32_t w = words;
  void* args[] = {&p, &k, &w};
  // Without the opt-in the launch fails, naming the kernel and the driver's error.
  Module plain;
  ok(load_ptx(ctx, kPtx, &plain));
  CUfunction raw = nullptr;
  ok(plain.function("smem_add_u32", &raw));
  Status st = launch_in(ctx, raw, cfg, nullptr, args, "smem_add_u32");
  assert_false(st.is_ok());
  std::printf("%s\n", st.message().c_str());
  assert_true(st.message().rfind("launch of kernel 'smem_add_u32' failed: cuLaunchKernel failed: CUDA_ERROR_", 0) ==
              0);
  // With it (ModuleSet sets the attribute when the kernel needs more than 48 KB) the launch runs.
  ModuleSet set(kPtx, "", "smem_add_u32", bytes);
  CUfunction fn = nullptr;
  ok(set.function(ctx, &fn));
  ok(launch_in(ctx, fn, cfg, nullptr, args, "smem_add_u32"));
  ok(context_synchronize(ctx));
  std::vector<uint32_t> got = buf.get();
  for (uint32_t i = 0; i < words; ++i) assert_int_equal(got[i], (words - 1 - i) * 3 + 2);
}

void test_events_and_launch_errors(void**) {
  REQUIRE_DEVICE();
  Devices devices;
  CUcontext ctx = nullptr;
  ok(devices.primary(0, &ctx));
  ModuleSet set(kPtx, "", "add_u32");
  CUfunction fn = nullptr;
  ok(set.function(ctx, &fn));
  CUevent start = nullptr, end = nullptr;
  ok(event_create(ctx, CU_EVENT_DEFAULT, &start));
  ok(event_create(ctx, CU_EVENT_DEFAULT, &end));
  Buffer buf(ctx, 1 << 20);
  ok(memset_d32(ctx, buf.ptr, 5, buf.n));
  ok(event_record(ctx, start, nullptr));
  ok(launch_add(ctx, fn, buf, 1, nullptr));
  ok(event_record(ctx, end, nullptr));
  ok(event_synchronize(ctx, end));
  float ms = -1;
  ok(event_elapsed_ms(ctx, start, end, &ms));
  assert_true(ms >= 0);
  assert_int_equal(buf.get()[12345], 6);
  ok(memset_d8(ctx, buf.ptr, 0, 4));
  assert_int_equal(buf.get()[0], 0);
  // 2048 threads per block is over every GPU's limit.
  CUdeviceptr p = buf.ptr;
  uint32_t n = 16, k = 1;
  void* args[] = {&p, &n, &k};
  LaunchConfig cfg;
  cfg.block[0] = 2048;
  Status st = launch_in(ctx, fn, cfg, nullptr, args, "add_u32");
  assert_false(st.is_ok());
  assert_true(st.message().rfind("launch of kernel 'add_u32' failed: cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE",
                                 0) == 0);
  ok(event_destroy(ctx, start));
  ok(event_destroy(ctx, end));
}

// Under tests/target/cuda/fake_libcuda.c (cuda/test_driver_fake) the driver counts module loads and
// context switches, which shows what the warm path does; a real driver has no such counters.
void test_warm_path_counts(void**) {
  REQUIRE_DEVICE();
  void* lib = dlopen(driver_library_name().c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto counter = lib ? reinterpret_cast<long (*)(const char*)>(dlsym(lib, "fake_cuda_counter")) : nullptr;
  if (!counter) {
    std::printf("not applicable: the driver is not tests/target/cuda/fake_libcuda.c\n");
    skip();
  }
  Devices devices;
  CUcontext ctx = nullptr;
  ok(devices.primary(0, &ctx));
  ModuleSet set(kPtx, "", "add_u32");
  CUfunction fn = nullptr;
  long loads = counter("module_loads");
  ok(set.function(ctx, &fn));
  assert_int_equal(counter("module_loads"), loads + 1);
  Buffer buf(ctx, 64);
  buf.put(iota(64));
  // The caller has the launch context current: no switch, no load, however many launches.
  set_current(ctx);
  long switches = counter("context_switches");
  for (int i = 0; i < 50; ++i) {
    CUcontext chosen = nullptr;
    ok(devices.launch_context(1, nullptr, &chosen));
    assert_ptr_equal(chosen, ctx);
    CUfunction warm = nullptr;
    ok(set.function(chosen, &warm));
    assert_ptr_equal(warm, fn);
    ok(launch_add(chosen, warm, buf, 1, nullptr));
  }
  assert_int_equal(counter("context_switches"), switches);
  assert_int_equal(counter("module_loads"), loads + 1);
  assert_int_equal(buf.get()[63], 63 * 3 + 50);
  // Without a current context a launch switches in and back out: two switches, still no load.
  set_current(nullptr);
  switches = counter("context_switches");
  ok(launch_add(ctx, fn, buf, 1, nullptr));
  assert_int_equal(counter("context_switches"), switches + 2);
  assert_null(current());
  assert_int_equal(counter("module_loads"), loads + 1);
  // A second device's context loads the image once more.
  CUcontext other = nullptr;
  ok(devices.primary(1, &other));
  assert_ptr_not_equal(other, ctx);
  ok(set.function(other, &fn));
  assert_int_equal(counter("module_loads"), loads + 2);
  assert_int_equal(set.loaded_count(), 2);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_device_info),
      cmocka_unit_test(test_launch_on_stream),
      cmocka_unit_test(test_caller_context_restored),
      cmocka_unit_test(test_two_contexts_one_module_set),
      cmocka_unit_test(test_graph_capture_replay),
      cmocka_unit_test(test_rejected_ptx_has_jit_log),
      cmocka_unit_test(test_cubin_path),
      cmocka_unit_test(test_dynamic_shared_opt_in),
      cmocka_unit_test(test_events_and_launch_errors),
      cmocka_unit_test(test_warm_path_counts),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
