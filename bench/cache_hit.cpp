// The cost of a warm disk-cache hit on the CPU target, in one process: each round makes a new
// module (so the module's in-memory cache is empty) in one context and compiles a kernel that
// the cache directory already holds, which reads the request shortcut and the entry, checks
// them (the MAC), and links the object with ORC. Prints the median and the 10th/90th
// percentiles of the compile call in microseconds, and the cache's counters, as one JSON object.
//
// usage: tri-bench-cache CACHE_DIR [KERNEL.tri KERNEL_NAME] [ROUNDS]
//        (default: examples/vector_add.tri @vector_add, 200 rounds)
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tri/tri.h"

namespace {

using Clock = std::chrono::steady_clock;

int fail(const char* what) {
  char m[1024];
  tri_last_error_message(m, sizeof m);
  std::fprintf(stderr, "%s failed: %s\n", what, m);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tri-bench-cache CACHE_DIR [KERNEL.tri KERNEL_NAME] [ROUNDS]\n");
    return 2;
  }
  const char* root = std::getenv("TRI_SOURCE_DIR");
  std::string path = argc > 3 ? argv[2] : std::string(root ? root : ".") + "/examples/vector_add.tri";
  std::string name = argc > 3 ? argv[3] : "vector_add";
  int rounds = argc > 4 ? std::atoi(argv[4]) : argc == 3 ? std::atoi(argv[2]) : 200;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.empty()) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::vector<double> us;
  tri_context_options* co = nullptr;
  tri_context* ctx = nullptr;
  if (tri_context_options_create(&co) || tri_context_options_set_cache_dir(co, argv[1]) ||
      tri_context_create(co, TRI_VERSION_NUMBER, &ctx))
    return fail("tri_context_create");
  tri_context_options_destroy(co);
  tri_compile_options* o = nullptr;
  tri_compile_options_create(&o);
  tri_compile_options_set_target(o, "cpu");
  for (int r = 0; r <= rounds; ++r) {  // round 0 fills the cache when it is cold
    tri_module* m = nullptr;
    if (tri_module_create(ctx, text.data(), text.size(), path.c_str(), &m)) return fail("tri_module_create");
    tri_kernel* k = nullptr;
    const Clock::time_point t0 = Clock::now();
    if (tri_kernel_compile(m, name.c_str(), o, &k)) return fail("tri_kernel_compile");
    const double t = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (r > 0) us.push_back(t);
    tri_kernel_destroy(k);
    tri_module_destroy(m);
  }
  uint64_t hits = 0, misses = 0;
  tri_cache_stat(ctx, TRI_CACHE_STAT_HITS, &hits);
  tri_cache_stat(ctx, TRI_CACHE_STAT_MISSES, &misses);
  tri_compile_options_destroy(o);
  tri_context_destroy(ctx);
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[static_cast<size_t>(q * (us.size() - 1))]; };
  std::printf("{\"kernel\": \"%s\", \"rounds\": %d, \"hit_us_median\": %.1f, \"hit_us_p10\": %.1f, "
              "\"hit_us_p90\": %.1f, \"hits\": %" PRIu64 ", \"misses\": %" PRIu64 "}\n",
              name.c_str(), rounds, at(0.5), at(0.1), at(0.9), hits, misses);
  return 0;
}
