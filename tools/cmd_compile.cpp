// `tri compile`: compiles one kernel of an IR file for a target and writes what the target made
// (PTX for a GPU architecture, LLVM IR, the launch descriptor). It needs no GPU: naming the
// architecture is enough to make PTX for it. It uses only the public C API.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "kernel_runner.h"

using namespace tri_tool;

namespace {

const char kUsage[] =
    "usage: tri compile FILE [--kernel NAME] [--target T] [--const NAME=V]... [--assume NAME=N]...\n"
    "                   [--num-warps N] [--num-stages N] [-o OUT] [--meta OUT.json] [--llvm OUT.ll]\n"
    "\n"
    "Compiles kernel @NAME of FILE (the only kernel when --kernel is left out) for target T:\n"
    "a GPU architecture (sm_80, sm_86, sm_89, sm_90, sm_90a), 'cuda' (the current device's), or\n"
    "'cpu'. Writes the PTX to OUT (stdout without -o; GPU targets), the launch descriptor as JSON\n"
    "to --meta, and the optimized LLVM IR to --llvm.\n"
    "\n"
    "  --const NAME=V   a constexpr value (typed as the kernel declares it)\n"
    "  --assume NAME=N  a fact about runtime parameter %NAME, as launch-time specialization finds\n"
    "                   them: a pointer aligned to N bytes, an integer divisible by N\n"
    "  --num-warps N    warps per program instance on GPU targets (default 4)\n"
    "  --num-stages N   how many iterations ahead dot-feeding loops load (0: the target's default)\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "tri compile: %s\n(see 'tri help compile')\n", msg.c_str());
  return 2;
}

bool write(const std::string& path, const tri_blob* b) {
  FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "tri compile: cannot write '%s': %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  bool ok = std::fwrite(tri_blob_data(b), 1, tri_blob_size(b), f) == tri_blob_size(b);
  if (f != stdout) ok = std::fclose(f) == 0 && ok;
  return ok;
}

}  // namespace

int tri_cmd_compile(int argc, char** argv) {
  std::string file, kernel, target = "cuda", out = "-", meta, llvm;
  int warps = 4, stages = 0;
  std::vector<ConstInput> consts, assumed;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* into) {
      if (i + 1 >= argc) return false;
      *into = argv[++i];
      return true;
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--kernel") {
      if (!value(&kernel)) return usage_error("--kernel needs a name");
    } else if (a == "--target") {
      if (!value(&target)) return usage_error("--target needs a value");
    } else if (a == "-o") {
      if (!value(&out)) return usage_error("-o needs a path");
    } else if (a == "--meta") {
      if (!value(&meta)) return usage_error("--meta needs a path");
    } else if (a == "--llvm") {
      if (!value(&llvm)) return usage_error("--llvm needs a path");
    } else if (a == "--num-stages") {
      if (!value(&v)) return usage_error("--num-stages needs a number");
      stages = std::atoi(v.c_str());
    } else if (a == "--num-warps") {
      if (!value(&v)) return usage_error("--num-warps needs a number");
      warps = std::atoi(v.c_str());
    } else if (a == "--const") {
      if (!value(&v) || v.find('=') == std::string::npos) return usage_error("--const needs NAME=VALUE");
      consts.push_back({v.substr(0, v.find('=')), v.substr(v.find('=') + 1)});
    } else if (a == "--assume") {
      if (!value(&v) || v.find('=') == std::string::npos) return usage_error("--assume needs NAME=N");
      assumed.push_back({v.substr(0, v.find('=')), v.substr(v.find('=') + 1)});
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return usage_error("unknown option '" + a + "'");
    } else if (file.empty()) {
      file = a;
    } else {
      return usage_error("more than one FILE given");
    }
  }
  if (file.empty()) return usage_error("no FILE given");
  std::string bytes, err;
  if (!read_file(file, &bytes, &err)) {
    std::fprintf(stderr, "tri compile: %s\n", err.c_str());
    return 1;
  }
  Session s;
  tri_module* m = s.load(bytes, file, &err);
  if (!m) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  int rc = 1;
  tri_compile_options* o = nullptr;
  tri_kernel* k = nullptr;
  std::vector<ParamInfo> params;
  [&] {
    if (kernel.empty()) {
      uint32_t n = 0;
      tri_module_function_count(m, &n);
      for (uint32_t i = 0; i < n; ++i) {
        int32_t kind;
        const char* name;
        tri_module_function_kind(m, i, &kind);
        tri_module_function_name(m, i, &name);
        if (kind != TRI_FUNCTION_KERNEL) continue;
        if (!kernel.empty()) {
          std::fprintf(stderr, "tri compile: %s has several kernels; choose one with --kernel\n", file.c_str());
          rc = 2;
          return;
        }
        kernel = name;
      }
    }
    if (!kernel_params(m, kernel, &params, &err)) {
      std::fprintf(stderr, "tri compile: %s\n", err.c_str());
      return;
    }
    tri_compile_options_create(&o);
    const bool gpu_arch = target.rfind("sm_", 0) == 0;
    if (tri_compile_options_set_target(o, gpu_arch ? "cuda" : target.c_str()) != TRI_OK ||
        (gpu_arch && tri_compile_options_set_arch(o, target.c_str()) != TRI_OK) ||
        tri_compile_options_set_num_warps(o, warps) != TRI_OK || tri_compile_options_set_num_stages(o, stages) != TRI_OK) {
      std::fprintf(stderr, "tri compile: %s\n", last_error().c_str());
      return;
    }
    for (const ConstInput& c : consts) {
      const ParamInfo* p = nullptr;
      for (const ParamInfo& q : params)
        if (q.constexpr_param && q.name == c.name) p = &q;
      if (!p) {
        std::fprintf(stderr, "tri compile: kernel @%s has no constexpr named '%s'\n", kernel.c_str(), c.name.c_str());
        return;
      }
      if (!set_constexpr(o, *p, c.text, &err)) {
        std::fprintf(stderr, "tri compile: %s\n", err.c_str());
        return;
      }
    }
    for (const ConstInput& c : assumed) {
      uint32_t index = 0;
      const ParamInfo* p = nullptr;
      for (const ParamInfo& q : params) {
        if (q.constexpr_param) continue;
        if (q.name == c.name) {
          p = &q;
          break;
        }
        ++index;
      }
      if (!p) {
        std::fprintf(stderr, "tri compile: kernel @%s has no runtime parameter named '%s'\n", kernel.c_str(), c.name.c_str());
        return;
      }
      const uint32_t n = static_cast<uint32_t>(std::strtoul(c.text.c_str(), nullptr, 10));
      const bool ptr = p->type_kind == TRI_TYPE_POINTER;
      if ((ptr ? tri_compile_options_set_arg_align(o, index, n) : tri_compile_options_set_arg_divisible(o, index, n)) != TRI_OK) {
        std::fprintf(stderr, "tri compile: --assume %s=%s: %s\n", c.name.c_str(), c.text.c_str(), last_error().c_str());
        return;
      }
    }
    if (tri_kernel_compile(m, kernel.c_str(), o, &k) != TRI_OK) {
      std::fprintf(stderr, "%s\n", last_error().c_str());
      return;
    }
    struct Want {
      const char* kind;
      std::string path;
    };
    for (const Want& w : {Want{"ptx", target == "cpu" ? std::string() : out}, Want{"metadata", meta},
                          Want{"llvm", llvm}}) {
      if (w.path.empty()) continue;
      tri_blob* b = nullptr;
      if (tri_kernel_code(k, w.kind, &b) != TRI_OK) {
        std::fprintf(stderr, "tri compile: %s\n", last_error().c_str());
        return;
      }
      bool ok = write(w.path, b);
      tri_blob_destroy(b);
      if (!ok) return;
    }
    rc = 0;
  }();
  tri_kernel_destroy(k);
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  return rc;
}
