// The conformance suite: every value-computing op of src/ir/ops.def, for each element type it
// accepts and several block shapes, run on the interpreter (the oracle) and on every other target
// present, compared lane by lane (docs/testing.md describes the rules).
//
//   conformance                 run everything with a fresh seed (printed first: "seed N")
//   TRI_SEED=N conformance      reproduce a run
//   TRI_CONF_FILTER=text        run only the groups whose title contains `text`
//   TRI_CONF_TARGETS=interp,cpu the targets to run (the first is the oracle)
//   TRI_CONF_UNCHECKED=1        run the oracle without checked mode
//   TRI_CONF_JOBS=N             threads (default: the number of cores, at most 4)
//   TRI_CONF_SPLIT=1            run batched groups one op per kernel (to time or isolate ops)
//   TRI_CONF_DUMP=dir           write each group's IR to dir/<title>.tri (not host-only groups)
//
// The last line is "conformance: N passed, M failed"; the exit status is 1 when M > 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace {

// Targets whose kernels use host memory, oracle first. (A GPU target joins once the C API can
// allocate device memory.)
const char* const kTargets[] = {"interp", "cpu", "cuda"};

bool target_present(tri_context* ctx, const char* target) {
  static const char kProbe[] = "kernel @probe() {\n  return\n}\n";
  tri_compile_options* o = nullptr;
  if (tri_compile_options_create(&o) != TRI_OK) return false;
  bool present = tri_compile_options_set_target(o, target) == TRI_OK;
  tri_module* m = nullptr;
  if (present && tri_module_create(ctx, kProbe, sizeof kProbe - 1, "probe", &m) == TRI_OK) {
    tri_kernel* k = nullptr;
    present = tri_kernel_compile(m, "probe", o, &k) != TRI_ERROR_UNSUPPORTED;
    tri_kernel_destroy(k);
  }
  tri_module_destroy(m);
  tri_compile_options_destroy(o);
  return present;
}

}  // namespace

int main() {
  uint64_t seed;
  if (const char* s = std::getenv("TRI_SEED")) {
    seed = std::strtoull(s, nullptr, 10);
  } else {
    seed = std::random_device{}() % 1000000000u;
  }
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));

  std::vector<std::string> targets;
  {
    tri_context* ctx = nullptr;
    if (tri_context_create(nullptr, TRI_VERSION_NUMBER, &ctx) != TRI_OK) {
      std::printf("conformance: cannot create a context: %s\nconformance: 0 passed, 1 failed\n",
                  tri_tool::last_error().c_str());
      return 1;
    }
    if (const char* t = std::getenv("TRI_CONF_TARGETS")) {
      std::string s = t;
      size_t start = 0;
      while (start <= s.size()) {
        size_t c = s.find(',', start);
        std::string name = s.substr(start, c == std::string::npos ? std::string::npos : c - start);
        if (!name.empty()) targets.push_back(name);
        if (c == std::string::npos) break;
        start = c + 1;
      }
    } else {
      for (const char* t : kTargets)
        if (target_present(ctx, t)) targets.push_back(t);
    }
    tri_context_destroy(ctx);
  }
  if (targets.empty() || targets[0] != "interp") {
    std::printf("conformance: the interpreter (the oracle) is not available\nconformance: 0 passed, 1 failed\n");
    return 1;
  }
  std::printf("targets:");
  for (size_t i = 0; i < targets.size(); ++i) std::printf(" %s%s", targets[i].c_str(), i ? "" : " (oracle)");
  std::printf("\n");
  if (targets.size() == 1)
    std::printf("note: only the oracle is present; its C reference checks run, no backend is compared\n");

  const char* unchecked = std::getenv("TRI_CONF_UNCHECKED");
  const bool checked = !(unchecked && std::strcmp(unchecked, "1") == 0);
  // Groups run on several threads (each with its own context), which also exercises the C API's
  // thread safety; the report stays in generation order.
  unsigned jobs = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  if (const char* j = std::getenv("TRI_CONF_JOBS")) jobs = static_cast<unsigned>(std::max(1L, std::strtol(j, nullptr, 10)));
  const char* filter = std::getenv("TRI_CONF_FILTER");
  std::vector<conf::Group> groups;
  auto sink = [&](conf::Group g) {
    if (filter && g.title.find(filter) == std::string::npos) return;
    groups.push_back(std::move(g));
  };
  auto t0 = std::chrono::steady_clock::now();
  conf::gen_elementwise(seed, sink);
  conf::gen_casts(seed, sink);
  conf::gen_memory(seed, sink);
  conf::gen_atomics(seed, sink);
  conf::gen_reduce(seed, sink);
  conf::gen_dot(seed, sink);
  conf::gen_control(seed, sink);
  conf::gen_distributed(seed, sink);
  conf::Totals totals = conf::run_all(groups, seed, targets, checked, jobs);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%zu groups on %u threads in %.1f s\n", groups.size(), jobs, secs);
  std::printf("conformance: %d passed, %d failed\n", totals.passed, totals.failed);
  return totals.failed ? 1 : 0;
}
