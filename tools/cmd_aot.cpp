// `tri aot`: compiles kernels ahead of time into one package (docs/aot.md) with the public
// package builder (tri_package_builder_*), and with --header writes a C header of typed launch
// functions, one per kernel, from the module's reflection. It needs no GPU: cubins come from
// ptxas when there is one, the CPU's shared objects from the C compiler driver.
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "kernel_runner.h"

using namespace tri_tool;

namespace {

const char kUsage[] =
    "usage: tri aot --list PACKAGE.tripkg\n"
    "       tri aot FILE -o OUT.tripkg [--kernel NAME[:CONST=V,...]]... [--target cuda|cpu]...\n"
    "               [--arch sm_80,sm_90a] [--cpu x86-64-v2,x86-64-v3,x86-64-v4] [--num-warps N]\n"
    "               [--num-stages N] [--tuned STORE] [--variants none|aligned|all] [--no-ir]\n"
    "               [--header OUT.h]\n"
    "\n"
    "Compiles kernels of FILE ahead of time into the package OUT.tripkg, which tri_module_load_package\n"
    "loads and runs without compiling, in libtri or in libtri_rt (docs/aot.md).\n"
    "\n"
    "  --kernel NAME[:C=V,...]  a kernel and its constexprs (others keep their defaults); repeat it\n"
    "                           for several kernels or specializations (default: every kernel of\n"
    "                           FILE, constexprs at their defaults)\n"
    "  --target T               cuda, cpu, or both when repeated (default: both)\n"
    "  --arch LIST              GPU architectures (default sm_80,sm_90a): PTX for each, and the cubin\n"
    "                           ptxas makes ($TRI_PTXAS, PATH, /usr/local/cuda/bin; TRI_PTXAS=none:\n"
    "                           PTX only)\n"
    "  --cpu LIST               x86-64 levels (default x86-64-v2,x86-64-v3,x86-64-v4), linked by cc\n"
    "  --num-warps N            warps per program on the GPU (default 4)\n"
    "  --num-stages N           pipelining stages (default 0: the target's)\n"
    "  --tuned STORE            also the winning config of each kernel's tuning results in STORE (a\n"
    "                           file `tri tune --export` wrote, or a cache directory; docs/tune.md),\n"
    "                           which the package's kernel then runs unless asked otherwise; without\n"
    "                           --kernel, only those\n"
    "  --variants V             launch-time variants besides the one without facts: aligned (every\n"
    "                           pointer aligned to 16), all (that and every integer divisible by 16;\n"
    "                           the default), none\n"
    "  --no-ir                  leave the module's IR out (libtri then cannot compile what is missing)\n"
    "  --header OUT.h           also write a C header of typed launch functions, one per kernel\n"
    "\n"
    "--list prints what a package holds, as JSON (tri_module_package_info).\n";

// tri aot --list: the package's contents through the library that loads it.
int list(const std::string& path) {
  std::string bytes, err;
  if (!read_file(path, &bytes, &err)) {
    std::fprintf(stderr, "tri aot: %s\n", err.c_str());
    return 1;
  }
  Session s;
  tri_module* m = nullptr;
  tri_blob* json = nullptr;
  int rc = 1;
  if (tri_module_load_package(s.context(), bytes.data(), bytes.size(), path.c_str(), &m) == TRI_OK &&
      tri_module_package_info(m, &json) == TRI_OK) {
    std::fwrite(tri_blob_data(json), 1, tri_blob_size(json), stdout);
    std::fputc('\n', stdout);
    rc = 0;
  } else {
    std::fprintf(stderr, "%s\n", last_error().c_str());
  }
  tri_blob_destroy(json);
  tri_module_destroy(m);
  return rc;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "tri aot: %s\n(see 'tri help aot')\n", msg.c_str());
  return 2;
}

struct KernelSpec {
  std::string name;
  std::vector<ConstInput> consts;
  std::string text;  // as given, for messages
};

bool parse_spec(const std::string& s, KernelSpec* out) {
  out->text = s;
  size_t colon = s.find(':');
  out->name = s.substr(0, colon);
  if (out->name.empty()) return false;
  if (colon == std::string::npos) return true;
  std::stringstream ss(s.substr(colon + 1));
  std::string kv;
  while (std::getline(ss, kv, ',')) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    out->consts.push_back({kv.substr(0, eq), kv.substr(eq + 1)});
  }
  return true;
}

// The C type of a parameter's values (what a pointer points at, or a scalar).
const char* c_type(int32_t dtype) {
  switch (dtype) {
    case TRI_DTYPE_I1: return "uint8_t";
    case TRI_DTYPE_I8: return "int8_t";
    case TRI_DTYPE_I16: return "int16_t";
    case TRI_DTYPE_I32: return "int32_t";
    case TRI_DTYPE_I64: return "int64_t";
    case TRI_DTYPE_F16:
    case TRI_DTYPE_BF16: return "uint16_t";
    case TRI_DTYPE_F32: return "float";
    case TRI_DTYPE_F64: return "double";
    default: return "uint8_t";  // f8 formats
  }
}

const char* dtype_macro(int32_t dtype) {
  static const char* const names[] = {"TRI_DTYPE_I1",  "TRI_DTYPE_I8",   "TRI_DTYPE_I16", "TRI_DTYPE_I32",
                                      "TRI_DTYPE_I64", "TRI_DTYPE_F16",  "TRI_DTYPE_BF16", "TRI_DTYPE_F32",
                                      "TRI_DTYPE_F64", "TRI_DTYPE_F8E4M3", "TRI_DTYPE_F8E5M2"};
  return dtype >= 0 && dtype < 11 ? names[dtype] : "TRI_DTYPE_I8";
}

std::string identifier(const std::string& s) {
  std::string r;
  for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

// One static inline function per kernel: typed arguments in, a tri_launch out. Scalars are
// passed as the kernel declares them; pointers as pointers to its element type (device
// pointers on "cuda"), with no extent.
std::string header(const std::string& file, const std::string& package, tri_module* m,
                   const std::vector<KernelSpec>& specs) {
  std::string guard = "TRI_AOT_" + identifier(package) + "_H_";
  for (char& c : guard) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string h = "/* Typed launch functions for the kernels of " + package + " (made by `tri aot` from " + file +
                  "; do not edit). Each checks nothing the library does not: it fills the tri_arg array\n * and "
                  "calls tri_launch. Get the kernel with tri_module_kernel from the package's module. */\n#ifndef " +
                  guard + "\n#define " + guard + "\n\n#include <stdint.h>\n#include <string.h>\n\n#include \"tri/tri.h\"\n";
  std::vector<std::string> done;
  for (const KernelSpec& s : specs) {
    bool seen = false;
    for (const std::string& d : done) seen = seen || d == s.name;
    if (seen) continue;
    done.push_back(s.name);
    std::vector<ParamInfo> params;
    std::string err;
    if (!kernel_params(m, s.name, &params, &err)) continue;
    std::string sig, body, doc;
    uint32_t n = 0;
    for (const ParamInfo& p : params) {
      if (p.constexpr_param) continue;
      const std::string id = identifier(p.name);
      doc += std::string(doc.empty() ? "" : ", ") + p.name + ": " + p.type_text;
      if (p.type_kind == TRI_TYPE_POINTER) {
        sig += std::string(", ") + c_type(p.dtype) + "* " + id;
        body += "  args[" + std::to_string(n) + "].value.p = " + id + ";\n  args[" + std::to_string(n) +
                "].kind = TRI_TYPE_POINTER;\n";
      } else {
        const bool f = p.dtype >= TRI_DTYPE_F16 && p.dtype <= TRI_DTYPE_F64;
        sig += std::string(", ") + (f ? "double" : "int64_t") + " " + id;
        body += "  args[" + std::to_string(n) + "].value." + (f ? "f" : "i") + " = " + id + ";\n  args[" +
                std::to_string(n) + "].kind = TRI_TYPE_SCALAR;\n";
      }
      body += "  args[" + std::to_string(n) + "].dtype = " + dtype_macro(p.dtype) + ";\n";
      ++n;
    }
    const std::string fn = "tri_aot_" + identifier(s.name);
    h += "\n/* @" + s.name + "(" + doc + ") */\nstatic inline tri_result " + fn +
         "(const tri_kernel* kernel, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z, void* stream" + sig +
         ") {\n  tri_arg args[" + std::to_string(n ? n : 1) + "];\n  memset(args, 0, sizeof args);\n" + body +
         "  return tri_launch(kernel, grid_x, grid_y, grid_z, stream, args, " + std::to_string(n) + ");\n}\n";
  }
  return h + "\n#endif\n";
}

bool write_file(const std::string& path, const void* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "tri aot: cannot write '%s': %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) std::fprintf(stderr, "tri aot: cannot write '%s'\n", path.c_str());
  return ok;
}

}  // namespace

int tri_cmd_aot(int argc, char** argv) {
  std::string file, out, arch, cpu, header_path, tuned, variants = "all";
  std::vector<std::string> targets;
  std::vector<KernelSpec> specs;
  int warps = 4, stages = 0;
  bool no_ir = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], v;
    auto value = [&](std::string* into) {
      if (i + 1 >= argc) return false;
      *into = argv[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--list") {
      if (!value(&v)) return usage_error("--list needs a package");
      return list(v);
    } else if (a == "-o") {
      if (!value(&out)) return usage_error("-o needs a path");
    } else if (a == "--kernel") {
      KernelSpec s;
      if (!value(&v) || !parse_spec(v, &s)) return usage_error("--kernel needs NAME or NAME:CONST=VALUE,...");
      specs.push_back(s);
    } else if (a == "--target") {
      if (!value(&v) || (v != "cuda" && v != "cpu")) return usage_error("--target is cuda or cpu");
      targets.push_back(v);
    } else if (a == "--arch") {
      if (!value(&arch)) return usage_error("--arch needs a list (sm_80,sm_90a)");
    } else if (a == "--cpu") {
      if (!value(&cpu)) return usage_error("--cpu needs a list (x86-64-v2,x86-64-v3)");
    } else if (a == "--num-warps") {
      if (!value(&v)) return usage_error("--num-warps needs a number");
      warps = std::atoi(v.c_str());
    } else if (a == "--num-stages") {
      if (!value(&v)) return usage_error("--num-stages needs a number");
      stages = std::atoi(v.c_str());
    } else if (a == "--tuned") {
      if (!value(&tuned)) return usage_error("--tuned needs a tuning store (an export file or a cache directory)");
    } else if (a == "--variants") {
      if (!value(&variants) || (variants != "none" && variants != "aligned" && variants != "all"))
        return usage_error("--variants is none, aligned or all");
    } else if (a == "--no-ir") {
      no_ir = true;
    } else if (a == "--header") {
      if (!value(&header_path)) return usage_error("--header needs a path");
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return usage_error("unknown option '" + a + "'");
    } else if (file.empty()) {
      file = a;
    } else {
      return usage_error("more than one FILE given");
    }
  }
  if (file.empty()) return usage_error("no FILE given");
  if (out.empty()) return usage_error("no -o OUT.tripkg given");
  if (targets.empty()) targets = {"cuda", "cpu"};
  const uint32_t flags = variants == "none" ? 0u : variants == "aligned" ? TRI_PACKAGE_ALIGNED
                                                                         : TRI_PACKAGE_ALIGNED | TRI_PACKAGE_DIVISIBLE;
  std::string bytes, err;
  if (!read_file(file, &bytes, &err)) {
    std::fprintf(stderr, "tri aot: %s\n", err.c_str());
    return 1;
  }
  Session s;
  s.set_log_handler([](int32_t level, const std::string& m) {
    if (level <= TRI_LOG_WARNING) std::fprintf(stderr, "%s\n", m.c_str());
  });
  tri_module* m = s.load(bytes, file, &err);
  if (!m) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  if (specs.empty() && tuned.empty()) {
    uint32_t n = 0;
    tri_module_function_count(m, &n);
    for (uint32_t i = 0; i < n; ++i) {
      int32_t kind;
      const char* name;
      tri_module_function_kind(m, i, &kind);
      tri_module_function_name(m, i, &name);
      if (kind == TRI_FUNCTION_KERNEL) specs.push_back(KernelSpec{name, {}, name});
    }
  }
  int rc = 1;
  tri_package_builder* b = nullptr;
  tri_compile_options* o = nullptr;
  tri_blob* pkg = nullptr;
  [&] {
    if (tri_package_builder_create(m, no_ir ? TRI_PACKAGE_NO_IR : 0, &b) != TRI_OK) {
      std::fprintf(stderr, "tri aot: %s\n", last_error().c_str());
      return;
    }
    for (const KernelSpec& spec : specs) {
      std::vector<ParamInfo> params;
      if (!kernel_params(m, spec.name, &params, &err)) {
        std::fprintf(stderr, "tri aot: %s\n", err.c_str());
        return;
      }
      for (const std::string& t : targets) {
        tri_compile_options_destroy(o);
        o = nullptr;
        tri_compile_options_create(&o);
        if (tri_compile_options_set_target(o, t.c_str()) != TRI_OK ||
            tri_compile_options_set_num_warps(o, warps) != TRI_OK ||
            tri_compile_options_set_num_stages(o, stages) != TRI_OK) {
          std::fprintf(stderr, "tri aot: %s\n", last_error().c_str());
          return;
        }
        if (!set_constexprs(o, params, spec.name, spec.consts, &err)) {
          std::fprintf(stderr, "tri aot: %s\n", err.c_str());
          return;
        }
        const std::string& machines = t == "cuda" ? arch : cpu;
        if (tri_package_builder_add(b, spec.name.c_str(), o, machines.empty() ? nullptr : machines.c_str(), flags) !=
            TRI_OK) {
          std::fprintf(stderr, "tri aot: %s (%s)\n", last_error().c_str(), t.c_str());
          return;
        }
        std::fprintf(stderr, "tri aot: @%s for %s (%s)\n", spec.text.c_str(), t.c_str(),
                     machines.empty() ? (t == "cuda" ? "sm_80,sm_90a" : "x86-64-v2,x86-64-v3,x86-64-v4")
                                      : machines.c_str());
      }
    }
    if (!tuned.empty()) {
      uint32_t total = 0;
      for (const std::string& t : targets) {
        const std::string& machines = t == "cuda" ? arch : cpu;
        uint32_t n = 0;
        if (tri_package_builder_add_tuned(b, tuned.c_str(), t.c_str(), machines.empty() ? nullptr : machines.c_str(),
                                          flags, &n) != TRI_OK) {
          std::fprintf(stderr, "tri aot: %s\n", last_error().c_str());
          return;
        }
        if (n) std::fprintf(stderr, "tri aot: %u tuned config(s) from %s for %s\n", n, tuned.c_str(), t.c_str());
        total += n;
      }
      if (!total) {
        std::fprintf(stderr, "tri aot: %s holds no tuning result for a kernel of %s and target %s\n", tuned.c_str(),
                     file.c_str(), targets.size() == 1 ? targets[0].c_str() : "cuda or cpu");
        return;
      }
    }
    if (tri_package_builder_finish(b, &pkg) != TRI_OK) {
      std::fprintf(stderr, "tri aot: %s\n", last_error().c_str());
      return;
    }
    if (!write_file(out, tri_blob_data(pkg), tri_blob_size(pkg))) return;
    if (!header_path.empty()) {
      std::string base = out.substr(out.find_last_of('/') + 1);
      base = base.substr(0, base.find('.'));
      const std::string h = header(file, base, m, specs);
      if (!write_file(header_path, h.data(), h.size())) return;
    }
    std::fprintf(stderr, "tri aot: wrote %s (%zu bytes)\n", out.c_str(), tri_blob_size(pkg));
    rc = 0;
  }();
  tri_blob_destroy(pkg);
  tri_compile_options_destroy(o);
  tri_package_builder_destroy(b);
  tri_module_destroy(m);
  return rc;
}
