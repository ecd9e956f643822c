// The "cuda" target through the public C API on a real GPU: kernels launched on a non-default
// stream, inside a CUDA graph capture (replayed 100 times), after the caller made another context
// current, and launched by hand with cuLaunchKernel from the launch descriptor alone
// (tri_kernel_code "metadata" + "ptx"), each checked against a host reference. Device memory,
// streams and graphs come from the CUDA driver, loaded here at run time as libtri loads it.
// Without a driver or a device every test prints "skipped: no CUDA device".
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tri/tri.h"
#include "test_main.h"

namespace {

using CUres = int;
struct Cu {
  CUres (*Init)(unsigned);
  CUres (*DeviceGet)(int*, int);
  CUres (*DevicePrimaryCtxRetain)(void**, int);
  CUres (*CtxSetCurrent)(void*);
  CUres (*CtxGetCurrent)(void**);
  CUres (*CtxCreate)(void**, unsigned, int);
  CUres (*CtxDestroy)(void*);
  CUres (*MemAlloc)(uint64_t*, size_t);
  CUres (*MemFree)(uint64_t);
  CUres (*HtoD)(uint64_t, const void*, size_t);
  CUres (*DtoH)(void*, uint64_t, size_t);
  CUres (*StreamCreate)(void**, unsigned);
  CUres (*StreamDestroy)(void*);
  CUres (*StreamSync)(void*);
  CUres (*BeginCapture)(void*, int);
  CUres (*EndCapture)(void*, void**);
  CUres (*GraphInstantiate)(void**, void*, unsigned long long);
  CUres (*GraphLaunch)(void*, void*);
  CUres (*GraphExecDestroy)(void*);
  CUres (*GraphDestroy)(void*);
  CUres (*ModuleLoadData)(void**, const void*);
  CUres (*ModuleGetFunction)(void**, void*, const char*);
  CUres (*LaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                        void**);
  void* primary = nullptr;
};

Cu cu;
bool have_gpu = false;

bool load_driver() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return false;
  bool ok = true;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    ok = ok && fn;
  };
  sym(cu.Init, "cuInit");
  sym(cu.DeviceGet, "cuDeviceGet");
  sym(cu.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(cu.CtxSetCurrent, "cuCtxSetCurrent");
  sym(cu.CtxGetCurrent, "cuCtxGetCurrent");
  sym(cu.CtxCreate, "cuCtxCreate_v2");
  sym(cu.CtxDestroy, "cuCtxDestroy_v2");
  sym(cu.MemAlloc, "cuMemAlloc_v2");
  sym(cu.MemFree, "cuMemFree_v2");
  sym(cu.HtoD, "cuMemcpyHtoD_v2");
  sym(cu.DtoH, "cuMemcpyDtoH_v2");
  sym(cu.StreamCreate, "cuStreamCreate");
  sym(cu.StreamDestroy, "cuStreamDestroy_v2");
  sym(cu.StreamSync, "cuStreamSynchronize");
  sym(cu.BeginCapture, "cuStreamBeginCapture_v2");
  sym(cu.EndCapture, "cuStreamEndCapture");
  sym(cu.GraphInstantiate, "cuGraphInstantiateWithFlags");
  sym(cu.GraphLaunch, "cuGraphLaunch");
  sym(cu.GraphExecDestroy, "cuGraphExecDestroy");
  sym(cu.GraphDestroy, "cuGraphDestroy");
  sym(cu.ModuleLoadData, "cuModuleLoadData");
  sym(cu.ModuleGetFunction, "cuModuleGetFunction");
  sym(cu.LaunchKernel, "cuLaunchKernel");
  int dev = 0;
  return ok && cu.Init(0) == 0 && cu.DeviceGet(&dev, 0) == 0 && cu.DevicePrimaryCtxRetain(&cu.primary, dev) == 0 &&
         cu.CtxSetCurrent(cu.primary) == 0;
}

#define CU(call) assert_int_equal((call), 0)
#define TRI(call)                                                                \
  do {                                                                           \
    tri_result r_ = (call);                                                      \
    if (r_ != TRI_OK) {                                                          \
      char msg_[2048];                                                           \
      tri_last_error_message(msg_, sizeof msg_);                                 \
      fail_msg("%s: %s: %s", #call, tri_result_name(r_), msg_);                  \
    }                                                                            \
  } while (0)

struct Fixture {
  tri_context* ctx = nullptr;
  tri_module* mod = nullptr;
  tri_kernel* k = nullptr;
};

void setup_vector_add(Fixture* f) {
  std::string text = tri_test::read_file(tri_test::source_path("examples/vector_add.tri"));
  TRI(tri_context_create(nullptr, TRI_VERSION_NUMBER, &f->ctx));
  TRI(tri_module_create(f->ctx, text.data(), text.size(), "vector_add.tri", &f->mod));
  tri_compile_options* o = nullptr;
  TRI(tri_compile_options_create(&o));
  TRI(tri_compile_options_set_target(o, "cuda"));
  TRI(tri_compile_options_set_constexpr_int(o, "BLOCK", 256));
  TRI(tri_kernel_compile(f->mod, "vector_add", o, &f->k));
  tri_compile_options_destroy(o);
}

void teardown(Fixture* f) {
  tri_kernel_destroy(f->k);
  tri_module_destroy(f->mod);
  tri_context_destroy(f->ctx);
}

tri_arg ptr_arg(uint64_t p, size_t bytes) {
  tri_arg a;
  std::memset(&a, 0, sizeof a);
  a.kind = TRI_TYPE_POINTER;
  a.dtype = TRI_DTYPE_F32;
  a.value.p = reinterpret_cast<const void*>(static_cast<uintptr_t>(p));
  a.extent = bytes;
  return a;
}

tri_arg i32_arg(int64_t v) {
  tri_arg a;
  std::memset(&a, 0, sizeof a);
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  a.value.i = v;
  return a;
}

constexpr int kN = 10000;  // not a multiple of the block: the last program is masked

struct Buffers {
  std::vector<float> x, y;
  uint64_t dx = 0, dy = 0, dout = 0;
  void make() {
    x.resize(kN);
    y.resize(kN);
    for (int i = 0; i < kN; ++i) {
      x[i] = static_cast<float>(i % 97) - 40.0f;
      y[i] = static_cast<float>(i % 13) * 0.5f;
    }
    CU(cu.MemAlloc(&dx, kN * 4));
    CU(cu.MemAlloc(&dy, kN * 4));
    CU(cu.MemAlloc(&dout, kN * 4));
    CU(cu.HtoD(dx, x.data(), kN * 4));
    CU(cu.HtoD(dy, y.data(), kN * 4));
    std::vector<float> poison(kN, NAN);
    CU(cu.HtoD(dout, poison.data(), kN * 4));
  }
  void free() {
    cu.MemFree(dx);
    cu.MemFree(dy);
    cu.MemFree(dout);
  }
  std::vector<float> out() {
    std::vector<float> o(kN);
    CU(cu.DtoH(o.data(), dout, kN * 4));
    return o;
  }
};

void test_stream_launch(void** state) {
  if (!have_gpu) {
    std::printf("skipped: no CUDA device\n");
    skip();
  }
  Fixture f;
  setup_vector_add(&f);
  Buffers b;
  b.make();
  void* stream = nullptr;
  CU(cu.StreamCreate(&stream, 1 /* non-blocking */));
  tri_arg args[] = {ptr_arg(b.dx, kN * 4), ptr_arg(b.dy, kN * 4), ptr_arg(b.dout, kN * 4), i32_arg(kN)};
  TRI(tri_launch(f.k, (kN + 255) / 256, 1, 1, stream, args, 4));
  CU(cu.StreamSync(stream));
  std::vector<float> o = b.out();
  for (int i = 0; i < kN; ++i)
    if (o[i] != b.x[i] + b.y[i]) fail_msg("out[%d] = %g, expected %g", i, o[i], b.x[i] + b.y[i]);
  CU(cu.StreamDestroy(stream));
  b.free();
  teardown(&f);
}

void test_graph_capture(void** state) {
  if (!have_gpu) {
    std::printf("skipped: no CUDA device\n");
    skip();
  }
  Fixture f;
  setup_vector_add(&f);
  Buffers b;
  b.make();
  std::vector<float> zeros(kN, 0.0f);
  CU(cu.HtoD(b.dout, zeros.data(), kN * 4));
  void* stream = nullptr;
  CU(cu.StreamCreate(&stream, 1));
  // out = x + out: each replay adds x once. A first launch loads the module (nothing on the
  // warm path may do that during capture).
  tri_arg args[] = {ptr_arg(b.dx, kN * 4), ptr_arg(b.dout, kN * 4), ptr_arg(b.dout, kN * 4), i32_arg(kN)};
  TRI(tri_launch(f.k, (kN + 255) / 256, 1, 1, stream, args, 4));
  CU(cu.StreamSync(stream));
  CU(cu.BeginCapture(stream, 0 /* global */));
  TRI(tri_launch(f.k, (kN + 255) / 256, 1, 1, stream, args, 4));
  void* graph = nullptr;
  CU(cu.EndCapture(stream, &graph));
  void* exec = nullptr;
  CU(cu.GraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < 100; ++r) CU(cu.GraphLaunch(exec, stream));
  CU(cu.StreamSync(stream));
  std::vector<float> o = b.out();
  for (int i = 0; i < kN; ++i)
    if (o[i] != 101.0f * b.x[i]) fail_msg("out[%d] = %g after 1 + 100 replays, expected %g", i, o[i], 101.0f * b.x[i]);
  cu.GraphExecDestroy(exec);
  cu.GraphDestroy(graph);
  CU(cu.StreamDestroy(stream));
  b.free();
  teardown(&f);
}

void test_other_context(void** state) {
  if (!have_gpu) {
    std::printf("skipped: no CUDA device\n");
    skip();
  }
  Fixture f;
  setup_vector_add(&f);
  {
    // Launch in the primary context first, then in a context the caller created: the kernel is
    // loaded into each, and the caller's current context stays current.
    Buffers b;
    b.make();
    tri_arg args[] = {ptr_arg(b.dx, kN * 4), ptr_arg(b.dy, kN * 4), ptr_arg(b.dout, kN * 4), i32_arg(kN)};
    TRI(tri_launch(f.k, (kN + 255) / 256, 1, 1, nullptr, args, 4));
    CU(cu.StreamSync(nullptr));
    b.free();
  }
  void* ctx2 = nullptr;
  int dev = 0;
  CU(cu.DeviceGet(&dev, 0));
  CU(cu.CtxCreate(&ctx2, 0, dev));  // becomes current
  Buffers b;
  b.make();
  tri_arg args[] = {ptr_arg(b.dx, kN * 4), ptr_arg(b.dy, kN * 4), ptr_arg(b.dout, kN * 4), i32_arg(kN)};
  TRI(tri_launch(f.k, (kN + 255) / 256, 1, 1, nullptr, args, 4));
  CU(cu.StreamSync(nullptr));
  void* now = nullptr;
  CU(cu.CtxGetCurrent(&now));
  assert_ptr_equal(now, ctx2);
  std::vector<float> o = b.out();
  for (int i = 0; i < kN; ++i)
    if (o[i] != b.x[i] + b.y[i]) fail_msg("second context: out[%d] = %g, expected %g", i, o[i], b.x[i] + b.y[i]);
  b.free();
  CU(cu.CtxDestroy(ctx2));
  CU(cu.CtxSetCurrent(cu.primary));
  teardown(&f);
}

// The number after `"key": ` in the descriptor.
long json_number(const std::string& j, const std::string& key) {
  size_t p = j.find("\"" + key + "\": ");
  if (p == std::string::npos) fail_msg("no %s in %s", key.c_str(), j.c_str());
  return std::strtol(j.c_str() + p + key.size() + 4, nullptr, 10);
}

void test_raw_launch_from_descriptor(void** state) {
  if (!have_gpu) {
    std::printf("skipped: no CUDA device\n");
    skip();
  }
  Fixture f;
  setup_vector_add(&f);
  tri_blob* meta = nullptr;
  tri_blob* ptx = nullptr;
  TRI(tri_kernel_code(f.k, "metadata", &meta));
  TRI(tri_kernel_code(f.k, "ptx", &ptx));
  std::string j(static_cast<const char*>(tri_blob_data(meta)), tri_blob_size(meta));
  std::string p(static_cast<const char*>(tri_blob_data(ptx)), tri_blob_size(ptx));
  assert_int_equal(json_number(j, "schema"), 1);
  assert_true(j.find("\"hidden_params\": []") != std::string::npos);
  size_t e = j.find("\"entry\": \"");
  std::string entry = j.substr(e + 10, j.find('"', e + 10) - e - 10);
  long threads = std::strtol(j.c_str() + j.find("\"block\": [") + 10, nullptr, 10);
  long shared = json_number(j, "shared_bytes");
  void* mod = nullptr;
  void* fn = nullptr;
  CU(cu.ModuleLoadData(&mod, p.c_str()));
  CU(cu.ModuleGetFunction(&fn, mod, entry.c_str()));
  Buffers b;
  b.make();
  int32_t n = kN;
  void* params[] = {&b.dx, &b.dy, &b.dout, &n};
  CU(cu.LaunchKernel(fn, (kN + 255) / 256, 1, 1, static_cast<unsigned>(threads), 1, 1, static_cast<unsigned>(shared),
                     nullptr, params, nullptr));
  CU(cu.StreamSync(nullptr));
  std::vector<float> raw = b.out();
  std::vector<float> poison(kN, NAN);
  CU(cu.HtoD(b.dout, poison.data(), kN * 4));
  tri_arg args[] = {ptr_arg(b.dx, kN * 4), ptr_arg(b.dy, kN * 4), ptr_arg(b.dout, kN * 4), i32_arg(kN)};
  TRI(tri_launch(f.k, (kN + 255) / 256, 1, 1, nullptr, args, 4));
  CU(cu.StreamSync(nullptr));
  std::vector<float> via_tri = b.out();
  assert_memory_equal(raw.data(), via_tri.data(), kN * 4);
  b.free();
  tri_blob_destroy(meta);
  tri_blob_destroy(ptx);
  teardown(&f);
}

}  // namespace

int main() {
  have_gpu = load_driver();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stream_launch),
      cmocka_unit_test(test_graph_capture),
      cmocka_unit_test(test_other_context),
      cmocka_unit_test(test_raw_launch_from_descriptor),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
