// `tri compile`: compiles one kernel of an IR file for a target and writes what the target made
// (PTX for a GPU architecture, assembly for the CPU, LLVM IR, the launch descriptor, the cubin
// and its SASS). It needs no GPU: naming the architecture is enough to make PTX for it, and a
// cubin comes from the driver where there is one, else from ptxas when it is installed. It uses
// only the public C API (and the CUDA toolkit's ptxas, cuobjdump or nvdisasm, run as programs).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "kernel_runner.h"

extern char** environ;

using namespace tri_tool;

namespace {

const char kUsage[] =
    "usage: tri compile FILE [--kernel NAME] [--target T] [--const NAME=V]... [--assume NAME=N]...\n"
    "                   [--num-warps N] [--num-stages N] [-o OUT] [--meta OUT.json] [--llvm OUT.ll]\n"
    "                   [--asm OUT.s] [--cubin OUT.cubin] [--sass OUT.sass]\n"
    "\n"
    "Compiles kernel @NAME of FILE (the only kernel when --kernel is left out) for target T:\n"
    "a GPU architecture (sm_80, sm_86, sm_89, sm_90, sm_90a), 'cuda' (the current device's), or\n"
    "'cpu'. Writes the target's code to OUT (stdout when neither -o nor another output is given):\n"
    "the PTX on GPU targets, the host assembly on cpu; and, when asked:\n"
    "\n"
    "  --llvm OUT.ll    the optimized LLVM IR (every target but interp)\n"
    "  --asm OUT.s      the host assembly (cpu)\n"
    "  --meta OUT.json  the launch descriptor (GPU targets)\n"
    "  --cubin OUT      the machine code of the PTX: the driver's where there is a GPU, else made by\n"
    "                   ptxas (GPU targets; ptxas on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin)\n"
    "  --sass OUT       that cubin disassembled by cuobjdump -sass (or nvdisasm), found as ptxas is\n"
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

bool write(const std::string& path, const std::string& bytes) {
  FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "tri compile: cannot write '%s': %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (f != stdout) ok = std::fclose(f) == 0 && ok;
  if (!ok) std::fprintf(stderr, "tri compile: cannot write '%s'\n", path.c_str());
  return ok;
}

// A CUDA toolkit program: on PATH, else in $CUDA_HOME/bin, $CUDA_PATH/bin or /usr/local/cuda/bin;
// "" when none has it.
std::string cuda_tool(const char* name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t at = 0; at <= p.size();) {
      size_t end = p.find(':', at);
      if (end == std::string::npos) end = p.size();
      if (end > at) dirs.push_back(p.substr(at, end - at));
      at = end + 1;
    }
  }
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env))
      if (*v) dirs.push_back(std::string(v) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  for (const std::string& d : dirs) {
    std::string f = d + "/" + name;
    if (::access(f.c_str(), X_OK) == 0) return f;
  }
  return std::string();
}

// Runs argv[0] with `argv`, its standard output into *out; false with what went wrong.
bool run_tool(const std::vector<std::string>& argv, std::string* out, std::string* err) {
  char tmpl[] = "/tmp/tri-compile-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) return *err = std::string("cannot make a temporary file: ") + std::strerror(errno), false;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  if (rc == 0) ::waitpid(pid, &status, 0);
  std::string text;
  if (rc == 0) read_file(tmpl, &text, err);
  ::close(fd);
  ::unlink(tmpl);
  if (rc != 0) return *err = "cannot run " + argv[0] + ": " + std::strerror(rc), false;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return *err = argv[0] + " failed (exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                  ")",
           false;
  *out = std::move(text);
  return true;
}

// The cubin of `ptx` (the driver's when the kernel has one, else ptxas's for the PTX's .target).
bool make_cubin(tri_kernel* k, const std::string& ptx, std::string* cubin, std::string* err) {
  tri_blob* b = nullptr;
  if (tri_kernel_code(k, "cubin", &b) == TRI_OK) {
    cubin->assign(static_cast<const char*>(tri_blob_data(b)), tri_blob_size(b));
    tri_blob_destroy(b);
    return true;
  }
  const std::string ptxas = cuda_tool("ptxas");
  if (ptxas.empty())
    return *err = "no cubin: no GPU driver made one here, and ptxas (the CUDA toolkit's) is not on PATH, in "
                  "$CUDA_HOME/bin or in /usr/local/cuda/bin; write the PTX with -o and run "
                  "`ptxas -arch=sm_XX k.ptx -o k.cubin` where the toolkit is",
           false;
  size_t at = ptx.find(".target ");
  std::string arch = at == std::string::npos ? "" : ptx.substr(at + 8, ptx.find_first_of(", \n", at + 8) - at - 8);
  char dir[] = "/tmp/tri-cubin-XXXXXX";
  if (!::mkdtemp(dir)) return *err = std::string("cannot make a temporary folder: ") + std::strerror(errno), false;
  const std::string in = std::string(dir) + "/k.ptx", out = std::string(dir) + "/k.cubin";
  std::string ignored;
  bool ok = write(in, ptx) && run_tool({ptxas, "-arch=" + arch, in, "-o", out}, &ignored, err) &&
            read_file(out, cubin, err);
  ::unlink(in.c_str());
  ::unlink(out.c_str());
  ::rmdir(dir);
  return ok;
}

// The SASS of `cubin`, by cuobjdump -sass or else nvdisasm.
bool disassemble(const std::string& cubin, std::string* sass, std::string* err) {
  std::string tool = cuda_tool("cuobjdump");
  const bool cuobjdump = !tool.empty();
  if (!cuobjdump) tool = cuda_tool("nvdisasm");
  if (tool.empty())
    return *err = "SASS needs cuobjdump or nvdisasm (the CUDA toolkit's; Triton's wheel carries both in "
                  "triton/backends/nvidia/bin): put one on PATH, or write the cubin with --cubin and "
                  "disassemble it where they are (`cuobjdump -sass k.cubin`)",
           false;
  char tmpl[] = "/tmp/tri-sass-XXXXXX.cubin";
  int fd = ::mkstemps(tmpl, 6);
  if (fd < 0) return *err = std::string("cannot make a temporary file: ") + std::strerror(errno), false;
  ::close(fd);
  bool ok = write(tmpl, cubin) &&
            run_tool(cuobjdump ? std::vector<std::string>{tool, "-sass", tmpl} : std::vector<std::string>{tool, tmpl},
                     sass, err);
  ::unlink(tmpl);
  return ok;
}

}  // namespace

int tri_cmd_compile(int argc, char** argv) {
  std::string file, kernel, target = "cuda", out = "-", meta, llvm, asm_out, cubin_out, sass_out;
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
    } else if (a == "--asm") {
      if (!value(&asm_out)) return usage_error("--asm needs a path");
    } else if (a == "--cubin") {
      if (!value(&cubin_out)) return usage_error("--cubin needs a path");
    } else if (a == "--sass") {
      if (!value(&sass_out)) return usage_error("--sass needs a path");
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
  const bool gpu = target != "cpu" && target != "interp";
  if (target == "interp") return usage_error("the interp target makes no code to write; use --target cpu or a GPU one");
  if (!gpu && (!meta.empty() || !cubin_out.empty() || !sass_out.empty()))
    return usage_error(std::string(!meta.empty() ? "--meta" : !cubin_out.empty() ? "--cubin" : "--sass") +
                       " is for GPU targets (--target sm_90a, or cuda); the cpu target's code is its assembly (--asm)");
  if (gpu && !asm_out.empty())
    return usage_error("--asm is the cpu target's assembly; a GPU target's is its PTX (-o) or SASS (--sass)");
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
    // Each setting's error names the flag it came from (the library's names its C function).
    const std::string flag = tri_compile_options_set_target(o, gpu_arch ? "cuda" : target.c_str()) != TRI_OK ||
                                     (gpu_arch && tri_compile_options_set_arch(o, target.c_str()) != TRI_OK)
                                 ? "--target " + target
                             : tri_compile_options_set_num_warps(o, warps) != TRI_OK
                                 ? "--num-warps " + std::to_string(warps)
                             : tri_compile_options_set_num_stages(o, stages) != TRI_OK
                                 ? "--num-stages " + std::to_string(stages)
                                 : std::string();
    if (!flag.empty()) {
      std::fprintf(stderr, "tri compile: %s: %s\n", flag.c_str(), last_error().c_str());
      rc = 2;
      return;
    }
    if (!set_constexprs(o, params, kernel, consts, &err)) {
      std::fprintf(stderr, "tri compile: %s\n", err.c_str());
      return;
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
    auto code = [&](const char* kind, std::string* text) {
      tri_blob* b = nullptr;
      if (tri_kernel_code(k, kind, &b) != TRI_OK) {
        std::fprintf(stderr, "tri compile: %s\n", last_error().c_str());
        return false;
      }
      text->assign(static_cast<const char*>(tri_blob_data(b)), tri_blob_size(b));
      tri_blob_destroy(b);
      return true;
    };
    struct Want {
      const char* kind;
      std::string path;
    };
    // The target's code goes to stdout when nothing else was asked for (or -o names a file).
    const bool other = !meta.empty() || !llvm.empty() || !asm_out.empty() || !cubin_out.empty() || !sass_out.empty();
    const std::string main_out = out == "-" && other ? std::string() : out;
    const bool need_cubin = !cubin_out.empty() || !sass_out.empty();
    std::string ptx;  // ptxas makes the cubin from it
    for (const Want& w : {Want{gpu ? "ptx" : "asm", main_out}, Want{"asm", asm_out}, Want{"metadata", meta},
                          Want{"llvm", llvm}}) {
      const bool for_cubin = gpu && need_cubin && std::strcmp(w.kind, "ptx") == 0;
      if (w.path.empty() && !for_cubin) continue;
      std::string text;
      if (!code(w.kind, &text) || (!w.path.empty() && !write(w.path, text))) return;
      if (for_cubin) ptx = std::move(text);
    }
    if (!cubin_out.empty() || !sass_out.empty()) {
      std::string cubin, sass;
      if (!make_cubin(k, ptx, &cubin, &err) || (!cubin_out.empty() && !write(cubin_out, cubin)) ||
          (!sass_out.empty() && (!disassemble(cubin, &sass, &err) || !write(sass_out, sass)))) {
        if (!err.empty()) std::fprintf(stderr, "tri compile: %s\n", err.c_str());
        return;
      }
    }
    rc = 0;
  }();
  tri_kernel_destroy(k);
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  return rc;
}
