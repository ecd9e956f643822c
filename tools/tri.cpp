// The `tri` command: check, format, convert and describe Tri IR files. It uses only the public C
// API (include/tri/tri.h), so everything it does a host program can do too; its messages are
// the library's messages, unchanged.
//
// Exit status: 0 success, 1 an input was bad or a file could not be read or written, 2 the
// command line was wrong.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "tri/tri.h"

using tri_tool::last_error;

namespace {

const char* const kUsage =
    "usage: tri <command> [options] [FILE...]\n"
    "\n"
    "Commands:\n"
    "  check FILE...                       parse and verify; print errors; exit 1 if any file is bad\n"
    "  fmt FILE [-o OUT]                   write the canonical text of FILE, comments kept (stdout without -o)\n"
    "  fmt --check FILE...                 exit 1 if a file is not in canonical text form\n"
    "  convert FILE -o OUT [--to FORMAT]   text to binary IR or binary to text (FORMAT: text, binary)\n"
    "  info FILE                           list kernels and device functions with their parameters\n"
    "  run FILE --kernel NAME [options]    run one kernel on inputs from the command line or .npy files\n"
    "  test FILE...                        run the '// run:' lines of IR files on every target present\n"
    "  compile FILE [--target sm_90] ...   write a kernel's PTX and launch descriptor (no GPU needed)\n"
    "  import FILE.ttir [-o OUT]           convert Triton's TTIR to Tri IR; print what was mapped\n"
    "  cache stats|ls|verify|clear|prune|export|import   look after the disk cache of compiled kernels\n"
    "  tune FILE --kernel NAME --config C...  time a kernel under each config and keep the fastest\n"
    "  aot FILE -o OUT.tripkg [--kernel K]... compile kernels ahead of time into a package (no GPU needed)\n"
    "  help [COMMAND]                      show this text or a command's\n"
    "\n"
    "Options:\n"
    "  -h, --help      show help (after a command: that command's)\n"
    "  --version       print the versions of the tool and the library\n"
    "\n"
    "FILE may be text or binary IR (told apart by the binary format's magic bytes) or Triton's\n"
    "TTIR (told apart by its content, docs/import.md); '-' reads\n"
    "standard input. Exit status: 0 success, 1 bad input or I/O error, 2 usage error.\n";

const char* const kCheckHelp =
    "usage: tri check FILE...\n"
    "\n"
    "Parses (or reads) and verifies each FILE. Errors are printed to stderr as\n"
    "'file:line:col: error: message'. Nothing is printed for good files. Exit status 1 if any\n"
    "file is bad.\n";

const char* const kFmtHelp =
    "usage: tri fmt FILE [-o OUT]\n"
    "       tri fmt --check FILE...\n"
    "\n"
    "Writes the canonical text form of FILE (text or binary IR) to OUT, or to stdout; the\n"
    "comments of a text FILE are kept where they were (OUT may be FILE). With --check, writes\n"
    "nothing and exits 1 if some FILE differs from its canonical text.\n";

const char* const kConvertHelp =
    "usage: tri convert FILE -o OUT [--to text|binary]\n"
    "\n"
    "Converts text IR to binary IR and binary IR to canonical text. --to forces the output\n"
    "format whatever the input is. OUT may be '-' for stdout. Comments are not converted\n"
    "(tri fmt keeps them).\n";

const char* const kInfoHelp =
    "usage: tri info FILE\n"
    "\n"
    "Lists the kernels and device functions of FILE with their parameters in IR syntax:\n"
    "name, type and facts of runtime parameters; type and default of constexpr parameters.\n";

const char* help_for(const std::string& cmd) {
  if (cmd == "check") return kCheckHelp;
  if (cmd == "fmt") return kFmtHelp;
  if (cmd == "convert") return kConvertHelp;
  if (cmd == "info") return kInfoHelp;
  return nullptr;
}

// With no command at all, the list of commands is what helps; otherwise one line says what is
// wrong and the help is a flag away.
int usage_error(const std::string& message, bool with_usage = false) {
  if (with_usage) std::fprintf(stderr, "tri: %s\n\n%s", message.c_str(), kUsage);
  else std::fprintf(stderr, "tri: %s\n(see 'tri --help')\n", message.c_str());
  return 2;
}

int command_usage_error(const std::string& cmd, const std::string& message) {
  std::fprintf(stderr, "tri %s: %s\n(see 'tri %s --help')\n", cmd.c_str(), message.c_str(), cmd.c_str());
  return 2;
}

bool read_input(const std::string& path, std::string* out) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "tri: cannot open '%s': %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  out->clear();
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  bool ok = !std::ferror(f);
  int err = errno;
  if (f != stdin) std::fclose(f);
  if (!ok) std::fprintf(stderr, "tri: cannot read '%s': %s\n", path.c_str(), std::strerror(err));
  return ok;
}

bool write_output(const std::string& path, const void* data, size_t size) {
  bool to_stdout = path.empty() || path == "-";
  FILE* f = to_stdout ? stdout : std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "tri: cannot open '%s' for writing: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok = (to_stdout ? std::fflush(f) : std::fclose(f)) == 0 && ok;
  if (!ok) std::fprintf(stderr, "tri: cannot write '%s': %s\n", to_stdout ? "<stdout>" : path.c_str(), std::strerror(errno));
  return ok;
}

// Owns the context and one module at a time; releases them on every path out.
class Session {
 public:
  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    tri_module_destroy(module_);
    tri_context_destroy(context_);
  }

  bool start() {
    if (tri_context_create(nullptr, TRI_VERSION_NUMBER, &context_) != TRI_OK) {
      std::fprintf(stderr, "tri: %s\n", last_error().c_str());
      return false;
    }
    return true;
  }

  // Reads `path` into a module; prints the library's message on failure.
  bool load(const std::string& path) {
    tri_module_destroy(module_);
    module_ = nullptr;
    if (!read_input(path, &bytes_)) return false;
    std::string name = path == "-" ? "<stdin>" : path;
    if (tri_module_create(context_, bytes_.data(), bytes_.size(), name.c_str(), &module_) != TRI_OK) {
      std::fprintf(stderr, "%s\n", last_error().c_str());
      return false;
    }
    return true;
  }

  const std::string& bytes() const { return bytes_; }
  const tri_module* module() const { return module_; }

 private:
  tri_context* context_ = nullptr;
  tri_module* module_ = nullptr;
  std::string bytes_;
};

// A module rendered as text or binary; `comments`: the text keeps the comments of the text the
// module was read from (what fmt writes).
bool render(const tri_module* m, bool binary, std::string* out, bool comments = false) {
  tri_blob* blob = nullptr;
  tri_result r = binary     ? tri_module_to_binary(m, &blob)
                 : comments ? tri_module_to_text_with_comments(m, &blob)
                            : tri_module_to_text(m, &blob);
  if (r != TRI_OK) {
    std::fprintf(stderr, "tri: %s\n", last_error().c_str());
    return false;
  }
  out->assign(static_cast<const char*>(tri_blob_data(blob)), tri_blob_size(blob));
  tri_blob_destroy(blob);
  return true;
}

// True when `input` is binary IR: it starts with the 8-byte magic (docs/format.md) that every
// binary the library writes starts with. Comparing with the library's own output keeps the
// magic's bytes in one place.
bool input_is_binary(const tri_module* m, const std::string& input) {
  std::string bin;
  if (!render(m, true, &bin)) return false;
  const size_t k = 8;
  return input.size() >= k && bin.size() >= k && input.compare(0, k, bin, 0, k) == 0;
}

struct Args {
  std::vector<std::string> files;
  std::string out;
  bool has_out = false;
  std::string to;
  bool check = false;
  bool help = false;
};

// Which options a command accepts.
struct Allowed {
  bool out = false, to = false, check = false;
};

int parse_args(const std::string& cmd, const std::vector<std::string>& argv, Allowed allowed, Args* a) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& s = argv[i];
    auto value = [&](std::string* dst) {
      if (i + 1 >= argv.size()) return false;
      *dst = argv[++i];
      return true;
    };
    if (s == "-h" || s == "--help") {
      a->help = true;
    } else if ((s == "-o" || s == "--output") && allowed.out) {
      if (!value(&a->out)) return command_usage_error(cmd, "option '" + s + "' needs a file name");
      a->has_out = true;
    } else if (s == "--to" && allowed.to) {
      if (!value(&a->to)) return command_usage_error(cmd, "option '--to' needs 'text' or 'binary'");
      if (a->to != "text" && a->to != "binary")
        return command_usage_error(cmd, "option '--to' takes 'text' or 'binary', not '" + a->to + "'");
    } else if (s.compare(0, 5, "--to=") == 0 && allowed.to) {
      a->to = s.substr(5);
      if (a->to != "text" && a->to != "binary")
        return command_usage_error(cmd, "option '--to' takes 'text' or 'binary', not '" + a->to + "'");
    } else if (s == "--check" && allowed.check) {
      a->check = true;
    } else if (s == "--") {
      for (++i; i < argv.size(); ++i) a->files.push_back(argv[i]);
    } else if (s.size() > 1 && s[0] == '-') {
      return command_usage_error(cmd, "unknown option '" + s + "'");
    } else {
      a->files.push_back(s);
    }
  }
  return 0;
}

int cmd_check(const Args& a) {
  if (a.files.empty()) return command_usage_error("check", "no input files");
  Session s;
  if (!s.start()) return 1;
  int rc = 0;
  for (const std::string& f : a.files)
    if (!s.load(f)) rc = 1;
  return rc;
}

int cmd_fmt(const Args& a) {
  if (a.files.empty()) return command_usage_error("fmt", "no input file");
  if (a.check && a.has_out) return command_usage_error("fmt", "--check writes nothing; drop -o");
  if (!a.check && a.files.size() > 1) return command_usage_error("fmt", "give one input file (or use --check)");
  Session s;
  if (!s.start()) return 1;
  int rc = 0;
  for (const std::string& f : a.files) {
    std::string text;
    if (!s.load(f) || !render(s.module(), false, &text, /*comments=*/true)) {
      rc = 1;
      continue;
    }
    if (a.check) {
      if (text != s.bytes()) {
        std::fprintf(stderr, "%s: not in canonical form (tri fmt %s -o %s rewrites it)\n", f.c_str(), f.c_str(),
                     f.c_str());
        rc = 1;
      }
    } else if (!write_output(a.out, text.data(), text.size())) {
      rc = 1;
    }
  }
  return rc;
}

int cmd_convert(const Args& a) {
  if (a.files.size() != 1) return command_usage_error("convert", a.files.empty() ? "no input file" : "give one input file");
  if (!a.has_out) return command_usage_error("convert", "no output file: give -o OUT ('-o -' for stdout)");
  Session s;
  if (!s.start() || !s.load(a.files[0])) return 1;
  bool to_binary = a.to.empty() ? !input_is_binary(s.module(), s.bytes()) : a.to == "binary";
  std::string out;
  if (!render(s.module(), to_binary, &out)) return 1;
  return write_output(a.out, out.data(), out.size()) ? 0 : 1;
}

// Reflection calls on a module that was created cannot fail short of a library bug; if one does,
// its message is printed rather than swallowed.
bool ok_or_report(tri_result r) {
  if (r != TRI_OK) std::fprintf(stderr, "tri: %s\n", last_error().c_str());
  return r == TRI_OK;
}

int cmd_info(const Args& a) {
  if (a.files.size() != 1) return command_usage_error("info", a.files.empty() ? "no input file" : "give one input file");
  Session s;
  if (!s.start() || !s.load(a.files[0])) return 1;
  const tri_module* m = s.module();
  uint32_t nf = 0;
  if (!ok_or_report(tri_module_function_count(m, &nf))) return 1;
  std::string out;
  uint32_t kernels = 0;
  for (uint32_t i = 0; i < nf; ++i) {
    const char* name;
    int32_t kind;
    uint32_t np;
    if (!ok_or_report(tri_module_function_name(m, i, &name)) || !ok_or_report(tri_module_function_kind(m, i, &kind)) ||
        !ok_or_report(tri_module_param_count(m, i, &np)))
      return 1;
    kernels += kind == TRI_FUNCTION_KERNEL;
    out += std::string(kind == TRI_FUNCTION_KERNEL ? "kernel @" : "func @") + name + "\n";
    for (uint32_t p = 0; p < np; ++p) {
      const char *pname, *type;
      int32_t pkind, type_kind, dtype;
      if (!ok_or_report(tri_module_param_name(m, i, p, &pname)) ||
          !ok_or_report(tri_module_param_kind(m, i, p, &pkind)) ||
          !ok_or_report(tri_module_param_type(m, i, p, &type_kind, &dtype, &type)))
        return 1;
      if (pkind == TRI_PARAM_CONSTEXPR) {
        const char* def;
        if (!ok_or_report(tri_module_param_default(m, i, p, &def))) return 1;
        out += std::string("  constexpr ") + pname + ": " + type + (def ? std::string(" = ") + def : "") + "\n";
        continue;
      }
      uint32_t align, divisible;
      int32_t noalias;
      if (!ok_or_report(tri_module_param_facts(m, i, p, &align, &divisible, &noalias))) return 1;
      std::vector<std::string> facts;
      if (align) facts.push_back("align=" + std::to_string(align));
      if (divisible) facts.push_back("divisible=" + std::to_string(divisible));
      if (noalias) facts.push_back("noalias");
      out += std::string("  %") + pname + ": " + type;
      for (size_t k = 0; k < facts.size(); ++k) out += (k ? ", " : " {") + facts[k];
      out += facts.empty() ? "\n" : "}\n";
    }
  }
  std::string name = a.files[0] == "-" ? "<stdin>" : a.files[0];
  uint32_t funcs = nf - kernels;
  std::string head = name + ": " + std::to_string(kernels) + (kernels == 1 ? " kernel, " : " kernels, ") +
                     std::to_string(funcs) + (funcs == 1 ? " device function\n" : " device functions\n");
  std::fputs(head.c_str(), stdout);
  std::fputs(out.c_str(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("no command given", /*with_usage=*/true);
  const std::string cmd = args[0];
  if (cmd == "-h" || cmd == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    uint32_t v = tri_version();
    std::printf("tri %d.%d.%d (library %u.%u.%u)\n", TRI_VERSION_MAJOR, TRI_VERSION_MINOR, TRI_VERSION_PATCH,
                v / 10000, v / 100 % 100, v % 100);
    return 0;
  }
  if (cmd == "help") {
    if (args.size() == 1) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (args[1] == "run" || args[1] == "test" || args[1] == "compile" || args[1] == "import" || args[1] == "cache" ||
        args[1] == "tune" || args[1] == "aot") {
      char flag[] = "--help";
      char* sub[] = {argv[2], flag, nullptr};
      return args[1] == "run"      ? tri_cmd_run(2, sub)
             : args[1] == "test"   ? tri_cmd_test(2, sub)
             : args[1] == "import" ? tri_cmd_import(2, sub)
             : args[1] == "cache"  ? tri_cmd_cache(2, sub)
             : args[1] == "tune"   ? tri_cmd_tune(2, sub)
             : args[1] == "aot"    ? tri_cmd_aot(2, sub)
                                   : tri_cmd_compile(2, sub);
    }
    const char* h = help_for(args[1]);
    if (!h) return usage_error("no command named '" + args[1] + "'");
    std::fputs(h, stdout);
    return 0;
  }
  if (cmd == "run") return tri_cmd_run(argc - 1, argv + 1);
  if (cmd == "test") return tri_cmd_test(argc - 1, argv + 1);
  if (cmd == "compile") return tri_cmd_compile(argc - 1, argv + 1);
  if (cmd == "import") return tri_cmd_import(argc - 1, argv + 1);
  if (cmd == "cache") return tri_cmd_cache(argc - 1, argv + 1);
  if (cmd == "tune") return tri_cmd_tune(argc - 1, argv + 1);
  if (cmd == "aot") return tri_cmd_aot(argc - 1, argv + 1);
  const char* help = help_for(cmd);
  if (!help) return usage_error(cmd[0] == '-' ? "unknown option '" + cmd + "'" : "unknown command '" + cmd + "'");

  std::vector<std::string> rest(args.begin() + 1, args.end());
  Args a;
  Allowed allowed;
  allowed.out = cmd == "fmt" || cmd == "convert";
  allowed.to = cmd == "convert";
  allowed.check = cmd == "fmt";
  if (int rc = parse_args(cmd, rest, allowed, &a)) return rc;
  if (a.help) {
    std::fputs(help, stdout);
    return 0;
  }
  if (cmd == "check") return cmd_check(a);
  if (cmd == "fmt") return cmd_fmt(a);
  if (cmd == "convert") return cmd_convert(a);
  return cmd_info(a);
}
