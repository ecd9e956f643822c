// Is the driver's PTX JIT serialized? Times cuModuleLoadDataEx of one PTX text (each load gets a
// different trailing comment, so no JIT cache answers): once, then N threads sharing the
// primary context, then N threads each with a context of its own. No CUDA toolkit needed.
//
// usage (on a GPU machine):
//   tri compile examples/matmul_leaky_relu.tri --target sm_90a --const BM=128 --const BN=128 //       --const BK=32 --num-stages 4 -o mm.ptx
//   g++ -O2 -o driver_jit bench/gpu/driver_jit.cpp -ldl -lpthread && ./driver_jit mm.ptx 8
// H100, driver 580: one 682 ms; 8 threads, one context 4303 ms; 8 threads, own contexts 820 ms.
#include <dlfcn.h>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
typedef int CUresult;
typedef void* CUcontext;
typedef void* CUmodule;
static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(int*, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, int);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuCtxCreate)(CUcontext*, unsigned, int);
static CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**);
static CUresult (*cuModuleUnload)(CUmodule);
double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
#define L(n, s) *(void**)&n = dlsym(h, s)
  L(cuInit, "cuInit"); L(cuDeviceGet, "cuDeviceGet"); L(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  L(cuCtxSetCurrent, "cuCtxSetCurrent"); L(cuCtxCreate, "cuCtxCreate_v2"); L(cuModuleLoadDataEx, "cuModuleLoadDataEx");
  L(cuModuleUnload, "cuModuleUnload");
  std::ifstream f(argv[1]); std::stringstream ss; ss << f.rdbuf(); std::string ptx = ss.str();
  int n = argc > 2 ? atoi(argv[2]) : 8;
  cuInit(0); int dev; cuDeviceGet(&dev, 0); CUcontext primary; cuDevicePrimaryCtxRetain(&primary, dev); cuCtxSetCurrent(primary);
  auto load = [&](int salt) {
    std::string p = ptx + "\n// " + std::to_string(salt) + "\n";  // defeat any JIT cache
    CUmodule m; double t = now(); CUresult r = cuModuleLoadDataEx(&m, p.c_str(), 0, nullptr, nullptr);
    if (r) std::printf("load failed %d\n", r); else cuModuleUnload(m);
    return now() - t;
  };
  load(-1);
  std::printf("one: %.1f ms\n", load(0));
  double t = now();
  std::vector<std::thread> th;
  for (int i = 0; i < n; ++i) th.emplace_back([&, i] { cuCtxSetCurrent(primary); load(100 + i); });
  for (auto& x : th) x.join();
  std::printf("%d threads, one context: %.1f ms\n", n, now() - t);
  std::vector<CUcontext> ctxs(n);
  for (int i = 0; i < n; ++i) cuCtxCreate(&ctxs[i], 0, dev);
  th.clear(); t = now();
  for (int i = 0; i < n; ++i) th.emplace_back([&, i] { cuCtxSetCurrent(ctxs[i]); load(200 + i); });
  for (auto& x : th) x.join();
  std::printf("%d threads, own contexts: %.1f ms\n", n, now() - t);
  return 0;
}
