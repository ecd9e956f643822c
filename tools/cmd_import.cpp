// `tri import`: reads Triton's TTIR (the MLIR text Triton prints after its ttir stage) through
// tri_module_create, which tells TTIR apart from Tri's own text by its content, and writes the
// module as Tri IR text (or binary). It then says what it read and what it made: the TTIR ops
// by name and the Tri ops by name, counted from the two texts. It uses only the public C API.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "commands.h"
#include "tri/tri.h"

using tri_tool::last_error;

namespace {

const char kUsage[] =
    "usage: tri import FILE.ttir [-o OUT] [--binary]\n"
    "\n"
    "Converts Triton's TTIR (compiled.asm[\"ttir\"] of Triton 3.x) to Tri IR: text, or binary with\n"
    "--binary. OUT defaults to stdout ('-'). Then prints the TTIR ops it read and the Tri ops it\n"
    "made, by name and count (to stdout when OUT is a file, else to stderr). Ops, types and\n"
    "libdevice functions Tri lacks are errors naming the TTIR line and the Python line\n"
    "(docs/import.md). Exit status: 0 success, 1 bad input or I/O error, 2 usage error.\n";

bool read_all(const std::string& path, std::string* out) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "tri import: cannot open '%s': %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  bool ok = !std::ferror(f);
  if (f != stdin) std::fclose(f);
  if (!ok) std::fprintf(stderr, "tri import: cannot read '%s'\n", path.c_str());
  return ok;
}

std::string trim(const std::string& line) {
  size_t b = line.find_first_not_of(" \t\r");
  return b == std::string::npos ? std::string() : line.substr(b);
}

// The name of the op on one line of TTIR or Tri text, or "" for lines that hold no op (function
// headers, closing braces, block labels, comments, location aliases).
std::string op_on_line(const std::string& raw, bool ttir) {
  std::string l = trim(raw);
  if (l.empty() || l[0] == '}' || l[0] == '^' || l[0] == '#' || l.compare(0, 2, "//") == 0) return "";
  for (const char* skip : {"module", "tt.func", "kernel ", "func ", "constexpr("})
    if (l.compare(0, std::strlen(skip), skip) == 0) return "";
  if (l[0] == '%') {
    size_t eq = l.find(" = ");
    if (eq == std::string::npos) return "";  // a continued header line
    l = l.substr(eq + 3);
  }
  if (l[0] == '"') {
    size_t e = l.find('"', 1);
    return e == std::string::npos ? "" : l.substr(1, e - 1);
  }
  size_t e = 0;
  while (e < l.size() && l[e] != ' ' && l[e] != '[' && l[e] != '(' && l[e] != ':') ++e;
  std::string name = l.substr(0, e);
  // Tri's text: an op name is a bare word; TTIR's has a dialect prefix.
  if (ttir && name.find('.') == std::string::npos) return "";
  return name;
}

std::string census(const std::string& text, bool ttir, size_t* total) {
  std::map<std::string, int> counts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string name = op_on_line(text.substr(start, end - start), ttir);
    if (!name.empty()) ++counts[name];
    start = end + 1;
  }
  std::string out;
  *total = 0;
  for (const auto& [name, n] : counts) {
    out += (out.empty() ? "" : ", ") + name + " " + std::to_string(n);
    *total += n;
  }
  return out;
}

}  // namespace

int tri_cmd_import(int argc, char** argv) {
  std::string file, out = "-";
  bool binary = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o" || a == "--output") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tri import: option '%s' needs a file name\n\n%s", a.c_str(), kUsage);
        return 2;
      }
      out = argv[++i];
    } else if (a == "--binary") {
      binary = true;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "tri import: unknown option '%s'\n\n%s", a.c_str(), kUsage);
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "tri import: give one input file\n\n%s", kUsage);
      return 2;
    }
  }
  if (file.empty()) {
    std::fprintf(stderr, "tri import: no input file\n\n%s", kUsage);
    return 2;
  }
  std::string bytes;
  if (!read_all(file, &bytes)) return 1;
  tri_context* ctx = nullptr;
  if (tri_context_create(nullptr, TRI_VERSION_NUMBER, &ctx) != TRI_OK) {
    std::fprintf(stderr, "tri import: %s\n", last_error().c_str());
    return 1;
  }
  std::string name = file == "-" ? "<stdin>" : file;
  tri_module* m = nullptr;
  if (tri_module_create(ctx, bytes.data(), bytes.size(), name.c_str(), &m) != TRI_OK) {
    std::fprintf(stderr, "%s\n", last_error().c_str());
    tri_context_destroy(ctx);
    return 1;
  }
  tri_blob *text = nullptr, *bin = nullptr;
  int rc = 0;
  if (tri_module_to_text(m, &text) != TRI_OK || (binary && tri_module_to_binary(m, &bin) != TRI_OK)) {
    std::fprintf(stderr, "tri import: %s\n", last_error().c_str());
    rc = 1;
  }
  uint32_t nf = 0, kernels = 0;
  tri_module_function_count(m, &nf);
  for (uint32_t i = 0; i < nf; ++i) {
    int32_t kind = 0;
    tri_module_function_kind(m, i, &kind);
    kernels += kind == TRI_FUNCTION_KERNEL;
  }
  if (rc == 0) {
    const tri_blob* w = binary ? bin : text;
    FILE* f = out == "-" ? stdout : std::fopen(out.c_str(), "wb");
    if (!f) {
      std::fprintf(stderr, "tri import: cannot open '%s' for writing: %s\n", out.c_str(), std::strerror(errno));
      rc = 1;
    } else {
      bool ok = std::fwrite(tri_blob_data(w), 1, tri_blob_size(w), f) == tri_blob_size(w);
      ok = (f == stdout ? std::fflush(f) : std::fclose(f)) == 0 && ok;
      if (!ok) {
        std::fprintf(stderr, "tri import: cannot write '%s'\n", out.c_str());
        rc = 1;
      }
    }
  }
  if (rc == 0) {
    std::string tri_text(static_cast<const char*>(tri_blob_data(text)), tri_blob_size(text));
    size_t n_ttir = 0, n_tri = 0;
    std::string read = census(bytes, true, &n_ttir);
    std::string made = census(tri_text, false, &n_tri);
    FILE* info = out == "-" ? stderr : stdout;
    std::fprintf(info, "%s -> %s: %u kernel(s), %u device function(s)\n", name.c_str(),
                 out == "-" ? "<stdout>" : out.c_str(), kernels, nf - kernels);
    std::fprintf(info, "  TTIR ops read (%zu): %s\n", n_ttir, read.c_str());
    std::fprintf(info, "  Tri ops made (%zu): %s\n", n_tri, made.c_str());
  }
  tri_blob_destroy(text);
  tri_blob_destroy(bin);
  tri_module_destroy(m);
  tri_context_destroy(ctx);
  return rc;
}
