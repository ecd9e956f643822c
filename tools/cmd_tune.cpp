// `tri tune`: tunes one kernel of an IR file over a list of configs on a host target through
// tri_tune, with its inputs described as `tri run` describes them, and prints each config's
// median time and the winner. The result is stored in the cache directory (so running it again
// reports the stored result) and can be exported. It uses only the public C API.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <string>
#include <vector>

#include "commands.h"
#include "device_memory.h"
#include "host_data.h"
#include "kernel_runner.h"

using namespace tri_tool;

namespace {

const char kUsage[] =
    "usage: tri tune FILE --kernel NAME (--config C | --values NAME=V,V...)... [--warps W,W...]\n"
    "                [--stages S,S...] [--filter EXPR] [--arg NAME=SPEC]... [--key NAME]... [--bucket]\n"
    "                [--target T] [--grid G[,G[,G]]] [--const NAME=V]... [--repeat N] [--cache-dir DIR]\n"
    "                [--import PATH] [--export PATH] [--frozen] [--retune] [--use-other-device]\n"
    "                [--plot FILE.svg]\n"
    "\n"
    "Compiles kernel @NAME of FILE once per config, times each (one warm-up launch, then the\n"
    "median of N launches, default 10), prints a table and the winner: the fastest, or of the\n"
    "configs within 1% of it the first given. Buffers the kernel writes are restored before\n"
    "every launch. The result is stored in the disk cache; with the same inputs a second run\n"
    "reports it without benchmarking.\n"
    "\n"
    "  --config C       NAME=V,...,warps=W,stages=S: constexpr values, warps and stages\n"
    "  --values NAME=V,V...  a constexpr's values: the --values lists, --warps and --stages make a\n"
    "                   product of configs (after the --config ones), kept where --filter holds\n"
    "  --warps W,W...   the product's warps (default 4)\n"
    "  --stages S,S...  the product's stages (default 0: the target's)\n"
    "  --filter EXPR    keep a product's config where EXPR (C integer operators over the names,\n"
    "                   warps and stages) is nonzero, e.g. 'BM * BN <= 16384 && warps >= 4'\n"
    "  --arg NAME=SPEC  a runtime argument, as `tri run` takes it (rand:, fill:, zeros:, iota:, npy:, V)\n"
    "  --key NAME       an integer argument whose value selects the result (repeatable)\n"
    "  --bucket         round key values up to a power of two\n"
    "  --target T       cpu (default), interp, or cuda (buffers copied to device memory; timed with\n"
    "                   CUDA events on the default stream)\n"
    "  --grid G         each size a number or N/CONST[/CONST...]: N divided by the config's\n"
    "                   constexprs, rounding up\n"
    "  --const NAME=V   a constexpr value every config shares\n"
    "  --repeat N       timed launches per config\n"
    "  --cache-dir DIR  where results are stored (default: the context's cache directory)\n"
    "  --import PATH    use results exported earlier\n"
    "  --export PATH    write every known result to PATH afterwards\n"
    "  --frozen         never benchmark: a key with no result uses the first config\n"
    "  --retune         benchmark even when a result is stored\n"
    "  --use-other-device  use an imported result made on another device (default: tune here)\n"
    "  --plot FILE.svg  draw the space (tri_tune_plot): a heatmap over two values that vary (bars\n"
    "                   for one), the winner outlined and named\n"
    "\n"
    "Configs that cannot fit the target (threads, shared memory, registers) are pruned before\n"
    "compiling; the table says why.\n";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "tri tune: %s\n(see 'tri tune --help')\n", msg.c_str());
  return 2;
}

// One grid size: a number, or N/CONST[/CONST...] (divided by constexprs of the config, each
// division rounded up: a matmul's programs are M*N/BM/BN).
struct GridDim {
  uint64_t n = 1;
  std::vector<std::string> by;  // constexpr names, or none
};

struct GridSpec {
  std::vector<GridDim> dims;
  std::vector<std::vector<std::pair<std::string, int64_t>>> configs;
  std::string error;  // the first config a size could not be computed for
};

void grid_of(void* user, uint32_t config, uint32_t* grid) {
  GridSpec* g = static_cast<GridSpec*>(user);
  for (size_t d = 0; d < g->dims.size(); ++d) {
    const GridDim& dim = g->dims[d];
    uint64_t n = dim.n;
    for (const std::string& by : dim.by) {
      int64_t v = 0;
      for (const auto& kv : g->configs[config])
        if (kv.first == by) v = kv.second;
      if (v <= 0) {
        if (g->error.empty())
          g->error = "config " + std::to_string(config) + " has no positive constexpr " + by + " for --grid";
        n = 0;  // an empty launch: the config measures nothing and says why below
        break;
      }
      n = (n + static_cast<uint64_t>(v) - 1) / static_cast<uint64_t>(v);
    }
    grid[d] = static_cast<uint32_t>(n);
  }
}

// A config as the table and the progress lines show it: the library's text ("BLOCK=128,warps=4,
// stages=0") without warps and stages on a host target, where they change nothing, unless the
// space varies them.
struct ConfigText {
  bool host = true;
  bool warps_vary = false, stages_vary = false;
  std::string operator()(const std::string& text) const {
    if (!host) return text;
    std::string out;
    for (size_t at = 0; at <= text.size();) {
      size_t end = text.find(',', at);
      if (end == std::string::npos) end = text.size();
      std::string part = text.substr(at, end - at);
      at = end + 1;
      if ((part.rfind("warps=", 0) == 0 && !warps_vary) || (part.rfind("stages=", 0) == 0 && !stages_vary)) continue;
      out += (out.empty() ? "" : ",") + part;
    }
    return out.empty() ? "(defaults)" : out;
  }
};

// Progress on stderr as configs compile and are benchmarked: a bar redrawn in place on a
// terminal; otherwise one line per config and stage (a log, a CI job).
struct Progress {
  tri_tune_space* space = nullptr;
  const GridSpec* grid = nullptr;
  const ConfigText* show = nullptr;
  bool tty = false;
  uint32_t compiled = 0, measured = 0, count = 0;

  std::string config(uint32_t i) const {
    std::string text;
    if (i < grid->configs.size())
      for (const auto& kv : grid->configs[i]) text += (text.empty() ? "" : ",") + kv.first + "=" + std::to_string(kv.second);
    int64_t w = 0, st = 0;
    tri_tune_space_value(space, i, "warps", &w);
    tri_tune_space_value(space, i, "stages", &st);
    text += (text.empty() ? "" : ",") + std::string("warps=") + std::to_string(w) + ",stages=" + std::to_string(st);
    return (*show)(text);
  }
  static std::string bar(uint32_t done, uint32_t count) {
    const int width = 20;
    int fill = count ? static_cast<int>(static_cast<uint64_t>(done) * width / count) : width;
    return "[" + std::string(fill, '#') + std::string(width - fill, '.') + "] " + std::to_string(done) + "/" +
           std::to_string(count);
  }
  void on(int32_t stage, uint32_t config, uint32_t done, uint32_t n, tri_result status, double median_ns) {
    count = n;
    (stage == TRI_TUNE_STAGE_COMPILE ? compiled : measured) = done;
    if (tty) {
      std::fprintf(stderr, "\r  compile %s  benchmark %s ", bar(compiled, count).c_str(), bar(measured, count).c_str());
      if (measured == count) std::fprintf(stderr, "\r%*s\r", 80, "");
      std::fflush(stderr);
      return;
    }
    const char* what = stage == TRI_TUNE_STAGE_COMPILE ? "compiled" : "benchmarked";
    std::string note;
    if (status != TRI_OK) {
      note = std::string(": skipped (") + tri_result_name(status) + ")";
    } else if (stage == TRI_TUNE_STAGE_BENCHMARK) {
      char b[48];
      std::snprintf(b, sizeof b, ": %.3f us", median_ns / 1e3);
      note = b;
    }
    std::fprintf(stderr, "  %-11s %*u/%u  config %u (%s)%s\n", what, static_cast<int>(std::to_string(n).size()), done, n,
                 config, this->config(config).c_str(), note.c_str());
  }
  static void callback(void* user, int32_t stage, uint32_t config, uint32_t done, uint32_t n, tri_result status,
                       double median_ns) {
    static_cast<Progress*>(user)->on(stage, config, done, n, status, median_ns);
  }
};

// Finds `"field": ` in one line of the result and returns what follows, up to a comma or brace
// (a string's contents without quotes).
std::string field(const std::string& line, const std::string& name) {
  std::string pat = "\"" + name + "\": ";
  size_t p = line.find(pat);
  if (p == std::string::npos) return std::string();
  p += pat.size();
  if (p < line.size() && line[p] == '"') {
    std::string out;
    for (size_t i = p + 1; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      out += line[i];
    }
    return out;
  }
  size_t e = line.find_first_of(",}", p);
  return line.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

}  // namespace

int tri_cmd_tune(int argc, char** argv) {
  std::string file, kernel, target = "cpu", grid_text, cache_dir, import_path, export_path, plot_path;
  bool cache_dir_set = false, bucket = false, frozen = false, retune = false, other_device = false;
  std::vector<std::string> config_texts, keys, value_texts;
  std::string warps_text, stages_text, filter;
  std::vector<std::pair<std::string, std::string>> consts, arg_specs;
  uint32_t repeat = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    auto next = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--bucket") {
      bucket = true;
    } else if (a == "--frozen") {
      frozen = true;
    } else if (a == "--retune") {
      retune = true;
    } else if (a == "--use-other-device") {
      other_device = true;
    } else if (a == "--values" || a == "--warps" || a == "--stages" || a == "--filter") {
      if (!next(&v)) return usage_error(a + " needs a value");
      if (a == "--values") value_texts.push_back(v);
      if (a == "--warps") warps_text = v;
      if (a == "--stages") stages_text = v;
      if (a == "--filter") filter = v;
    } else if (a == "--kernel" || a == "--target" || a == "--grid" || a == "--repeat" || a == "--config" ||
               a == "--key" || a == "--const" || a == "--arg" || a == "--cache-dir" || a == "--import" ||
               a == "--export" || a == "--plot") {
      if (!next(&v)) return usage_error(a + " needs a value");
      if (a == "--plot") plot_path = v;
      if (a == "--kernel") kernel = v[0] == '@' ? v.substr(1) : v;
      if (a == "--target") target = v;
      if (a == "--grid") grid_text = v;
      if (a == "--config") config_texts.push_back(v);
      if (a == "--key") keys.push_back(v[0] == '%' ? v.substr(1) : v);
      if (a == "--cache-dir") cache_dir = v, cache_dir_set = true;
      if (a == "--import") import_path = v;
      if (a == "--export") export_path = v;
      if (a == "--repeat") {
        char* end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (*end || n < 1 || n > 10000) return usage_error("--repeat needs a count from 1 to 10000");
        repeat = static_cast<uint32_t>(n);
      }
      if (a == "--const" || a == "--arg") {
        size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0) return usage_error(a + " '" + v + "' is not NAME=VALUE");
        std::string name = v.substr(0, eq);
        if (name[0] == '%') name.erase(0, 1);
        (a == "--const" ? consts : arg_specs).emplace_back(name, v.substr(eq + 1));
      }
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("unknown option '" + a + "'");
    } else if (file.empty()) {
      file = a;
    } else {
      return usage_error("more than one FILE given ('" + file + "' and '" + a + "')");
    }
  }
  if (file.empty()) return usage_error("no FILE given");
  if (kernel.empty()) return usage_error("no --kernel given");
  if (config_texts.empty() && value_texts.empty()) return usage_error("no --config or --values given");
  if (value_texts.empty() && (!warps_text.empty() || !stages_text.empty() || !filter.empty()))
    return usage_error("--warps, --stages and --filter shape a product: give --values too");

  // The product's lists.
  auto int_list = [](const std::string& t, std::vector<int64_t>* out) {
    size_t pos = 0;
    while (pos <= t.size()) {
      size_t comma = t.find(',', pos);
      if (comma == std::string::npos) comma = t.size();
      std::string f = t.substr(pos, comma - pos);
      char* end = nullptr;
      long long val = std::strtoll(f.c_str(), &end, 10);
      if (f.empty() || *end) return false;
      out->push_back(val);
      pos = comma + 1;
    }
    return !out->empty();
  };
  std::vector<std::string> product_names;
  std::vector<std::vector<int64_t>> product_values;
  for (const std::string& t : value_texts) {
    size_t eq = t.find('=');
    std::vector<int64_t> vals;
    if (eq == std::string::npos || eq == 0 || !int_list(t.substr(eq + 1), &vals))
      return usage_error("--values '" + t + "' is not NAME=INTEGER,INTEGER...");
    product_names.push_back(t.substr(0, eq));
    product_values.push_back(std::move(vals));
  }
  std::vector<int64_t> warps64, stages64;
  if (!warps_text.empty() && !int_list(warps_text, &warps64)) return usage_error("--warps '" + warps_text + "'");
  if (!stages_text.empty() && !int_list(stages_text, &stages64)) return usage_error("--stages '" + stages_text + "'");

  // The configs, as tri_tune_space_add_config takes them.
  struct Cfg {
    std::vector<std::string> names;
    std::vector<int64_t> values;
    int32_t warps = 4, stages = 0;
  };
  std::vector<Cfg> cfgs;
  GridSpec grid;
  for (const std::string& t : config_texts) {
    Cfg c;
    std::vector<std::pair<std::string, int64_t>> kv;
    size_t pos = 0;
    while (pos <= t.size()) {
      size_t comma = t.find(',', pos);
      if (comma == std::string::npos) comma = t.size();
      std::string f = t.substr(pos, comma - pos);
      size_t eq = f.find('=');
      char* end = nullptr;
      long long val = eq == std::string::npos ? 0 : std::strtoll(f.c_str() + eq + 1, &end, 10);
      if (eq == std::string::npos || eq == 0 || eq + 1 == f.size() || *end)
        return usage_error("--config '" + t + "': '" + f + "' is not NAME=INTEGER");
      std::string name = f.substr(0, eq);
      if (name == "warps") c.warps = static_cast<int32_t>(val);
      else if (name == "stages") c.stages = static_cast<int32_t>(val);
      else c.names.push_back(name), c.values.push_back(val), kv.emplace_back(name, val);
      pos = comma + 1;
    }
    cfgs.push_back(std::move(c));
    grid.configs.push_back(std::move(kv));
  }
  if (grid_text.empty()) grid_text = "1";
  {
    size_t pos = 0;
    while (pos <= grid_text.size()) {
      size_t comma = grid_text.find(',', pos);
      if (comma == std::string::npos) comma = grid_text.size();
      std::string d = grid_text.substr(pos, comma - pos);
      GridDim g;
      size_t slash = d.find('/');
      char* end = nullptr;
      long long n = std::strtoll(d.substr(0, slash).c_str(), &end, 10);
      if (d.empty() || *end || n < 1 || n > 0xffffffffll || (slash != std::string::npos && slash + 1 == d.size()))
        return usage_error("bad --grid '" + grid_text + "'");
      g.n = static_cast<uint64_t>(n);
      for (size_t at = slash; at != std::string::npos;) {
        const size_t next_slash = d.find('/', at + 1);
        const std::string name = d.substr(at + 1, next_slash == std::string::npos ? std::string::npos : next_slash - at - 1);
        if (name.empty()) return usage_error("bad --grid '" + grid_text + "'");
        g.by.push_back(name);
        at = next_slash;
      }
      grid.dims.push_back(g);
      pos = comma + 1;
    }
    if (grid.dims.size() > 3) return usage_error("--grid takes at most three sizes");
    while (grid.dims.size() < 3) grid.dims.push_back(GridDim());
  }

  // A context with its cache directory, the module, and the kernel's parameters.
  tri_context_options* copts = nullptr;
  tri_context* ctx = nullptr;
  if (tri_context_options_create(&copts) != TRI_OK) return 1;
  if (cache_dir_set) tri_context_options_set_cache_dir(copts, cache_dir.c_str());
  tri_context_options_set_log(
      copts, [](void*, int32_t level, const char* msg) { std::fprintf(stderr, "%s: %s\n", level == 0 ? "error" : "warning", msg); },
      nullptr, TRI_LOG_WARNING);
  tri_result rc = tri_context_create(copts, TRI_VERSION_NUMBER, &ctx);
  tri_context_options_destroy(copts);
  if (rc != TRI_OK) {
    std::fprintf(stderr, "tri tune: cannot create a context: %s\n", last_error().c_str());
    return 1;
  }
  struct Cleanup {
    tri_context* ctx = nullptr;
    tri_module* module = nullptr;
    tri_compile_options* opts = nullptr;
    tri_tune_space* space = nullptr;
    tri_kernel* kernel = nullptr;
    tri_blob* result = nullptr;
    ~Cleanup() {
      tri_blob_destroy(result);
      tri_kernel_destroy(kernel);
      tri_tune_space_destroy(space);
      tri_compile_options_destroy(opts);
      tri_module_destroy(module);
      tri_context_destroy(ctx);
    }
  } cl;
  cl.ctx = ctx;
  std::string bytes, err;
  if (!read_file(file, &bytes, &err)) {
    std::fprintf(stderr, "tri tune: %s\n", err.c_str());
    return 1;
  }
  if (tri_module_create(ctx, bytes.data(), bytes.size(), file.c_str(), &cl.module) != TRI_OK) {
    std::fprintf(stderr, "%s\n", last_error().c_str());
    return 1;
  }
  std::vector<ParamInfo> params;
  if (!kernel_params(cl.module, kernel, &params, &err)) {
    std::fprintf(stderr, "tri tune: %s: %s\n", file.c_str(), err.c_str());
    return 1;
  }

  // Base options: the target and the shared constexprs.
  tri_compile_options_create(&cl.opts);
  if (tri_compile_options_set_target(cl.opts, target.c_str()) != TRI_OK) return usage_error(last_error());
  for (auto& c : consts) {
    const ParamInfo* p = nullptr;
    for (const ParamInfo& q : params)
      if (q.constexpr_param && q.name == c.first) p = &q;
    if (!p) return usage_error("kernel @" + kernel + " has no constexpr '" + c.first + "'");
    if (!set_constexpr(cl.opts, *p, c.second, &err)) return usage_error("--const " + c.first + ": " + err);
  }

  // Arguments in parameter order, from `tri run`'s specs; key names to indices.
  std::vector<ArgInput> inputs;
  std::vector<tri_arg> args;
  std::vector<uint32_t> key_index;
  std::vector<const ParamInfo*> runtime;
  for (const ParamInfo& p : params)
    if (!p.constexpr_param) runtime.push_back(&p);
  inputs.resize(runtime.size());
  for (size_t i = 0; i < runtime.size(); ++i) {
    const ParamInfo& p = *runtime[i];
    const std::string* spec = nullptr;
    for (auto& s : arg_specs)
      if (s.first == p.name) spec = &s.second;
    if (!spec) return usage_error("missing --arg " + p.name + " (" + p.type_text + ")");
    bool io_error = false;
    if (!make_arg(p.name, *spec, p, &inputs[i], &err, &io_error)) {
      if (!io_error) return usage_error("--arg " + p.name + ": " + err);
      std::fprintf(stderr, "tri tune: --arg %s: %s\n", p.name.c_str(), err.c_str());
      return 1;
    }
  }
  for (auto& s : arg_specs) {
    bool found = false;
    for (const ParamInfo* p : runtime) found = found || p->name == s.first;
    if (!found) return usage_error("kernel @" + kernel + " has no runtime parameter %" + s.first);
  }
  // On "cuda" the buffers go to device memory (freed at exit: the process ends right after).
  const bool gpu = target == "cuda";
  if (gpu) {
    std::string why;
    if (!device_init(&why)) {
      std::fprintf(stderr, "tri tune: skipped: no CUDA device (%s)\n", why.c_str());
      return 1;
    }
  }
  for (size_t i = 0; i < runtime.size(); ++i) {
    const ParamInfo& p = *runtime[i];
    ArgInput& a = inputs[i];
    tri_arg arg;
    std::memset(&arg, 0, sizeof arg);
    arg.dtype = a.dtype;
    if (p.type_kind == TRI_TYPE_POINTER) {
      if (a.is_scalar || a.dtype != p.dtype) return usage_error("--arg " + p.name + " must be a buffer of " + p.type_text);
      arg.kind = TRI_TYPE_POINTER;
      arg.value.p = a.buffer.data();
      arg.extent = a.buffer.byte_size();
      if (gpu) {
        const uint64_t dev = device_upload(a.buffer.data(), a.buffer.byte_size());
        if (!dev) {
          std::fprintf(stderr, "tri tune: cannot copy --arg %s to device memory\n", p.name.c_str());
          return 1;
        }
        arg.value.p = reinterpret_cast<const void*>(static_cast<uintptr_t>(dev));
      }
    } else {
      if (!a.is_scalar || a.dtype != p.dtype) return usage_error("--arg " + p.name + " must be a scalar " + p.type_text);
      arg.kind = TRI_TYPE_SCALAR;
      if (dtype_is_float(a.dtype)) arg.value.f = float_bits_to_double(a.dtype, a.scalar_bits);
      else arg.value.i = bits_to_signed(a.dtype, a.scalar_bits);
    }
    args.push_back(arg);
  }
  for (const std::string& k : keys) {
    size_t i = 0;
    while (i < runtime.size() && runtime[i]->name != k) ++i;
    if (i == runtime.size()) return usage_error("--key " + k + ": no runtime parameter %" + k);
    key_index.push_back(static_cast<uint32_t>(i));
  }

  // The space, and the call.
  tri_tune_space_create(&cl.space);
  for (size_t i = 0; i < cfgs.size(); ++i) {
    std::vector<const char*> names;
    for (const std::string& n : cfgs[i].names) names.push_back(n.c_str());
    if (tri_tune_space_add_config(cl.space, names.data(), cfgs[i].values.data(), static_cast<uint32_t>(names.size()),
                                  cfgs[i].warps, cfgs[i].stages, nullptr) != TRI_OK)
      return usage_error("--config '" + config_texts[i] + "': " + last_error());
  }
  if (!product_names.empty()) {
    std::vector<const char*> names;
    std::vector<const int64_t*> values;
    std::vector<uint32_t> counts;
    for (size_t i = 0; i < product_names.size(); ++i) {
      names.push_back(product_names[i].c_str());
      values.push_back(product_values[i].data());
      counts.push_back(static_cast<uint32_t>(product_values[i].size()));
    }
    std::vector<int32_t> warps(warps64.begin(), warps64.end()), stages(stages64.begin(), stages64.end());
    uint32_t before = 0, after = 0;
    tri_tune_space_count(cl.space, &before);
    if (tri_tune_space_add_product(cl.space, names.data(), values.data(), counts.data(),
                                   static_cast<uint32_t>(names.size()), warps.data(),
                                   static_cast<uint32_t>(warps.size()), stages.data(),
                                   static_cast<uint32_t>(stages.size()), filter.empty() ? nullptr : filter.c_str(),
                                   nullptr) != TRI_OK)
      return usage_error(last_error());
    tri_tune_space_count(cl.space, &after);
    if (after == 0) return usage_error("--filter '" + filter + "' keeps no config of the product");
    for (uint32_t i = before; i < after; ++i) {  // each product config's values, for --grid
      std::vector<std::pair<std::string, int64_t>> kv;
      for (const std::string& n : product_names) {
        int64_t v = 0;
        tri_tune_space_value(cl.space, i, n.c_str(), &v);
        kv.emplace_back(n, v);
      }
      grid.configs.push_back(std::move(kv));
    }
  }
  tri_tune_space_set_key(cl.space, key_index.data(), static_cast<uint32_t>(key_index.size()), bucket ? 1 : 0);
  tri_tune_space_set_repetitions(cl.space, repeat);
  if (!import_path.empty()) {
    uint32_t n = 0;
    if (tri_tune_import(ctx, import_path.c_str(), &n) != TRI_OK) {
      std::fprintf(stderr, "tri tune: %s\n", last_error().c_str());
      return 1;
    }
  }
  uint32_t flags = (frozen ? TRI_TUNE_FROZEN : 0) | (retune ? TRI_TUNE_RETUNE : 0) |
                   (other_device ? TRI_TUNE_USE_OTHER_DEVICE : 0);
  ConfigText show;
  show.host = target != "cuda";
  {
    uint32_t n = 0;
    tri_tune_space_count(cl.space, &n);
    int64_t w0 = 0, s0 = 0;
    tri_tune_space_value(cl.space, 0, "warps", &w0);
    tri_tune_space_value(cl.space, 0, "stages", &s0);
    for (uint32_t i = 1; i < n; ++i) {
      int64_t w = 0, st = 0;
      tri_tune_space_value(cl.space, i, "warps", &w);
      tri_tune_space_value(cl.space, i, "stages", &st);
      show.warps_vary = show.warps_vary || w != w0;
      show.stages_vary = show.stages_vary || st != s0;
    }
  }
  Progress progress;
  progress.space = cl.space;
  progress.grid = &grid;
  progress.show = &show;
  progress.tty = isatty(2);
  tri_tune_space_set_progress(cl.space, &Progress::callback, &progress);
  rc = tri_tune(cl.module, kernel.c_str(), cl.opts, cl.space, 1, 1, 1, nullptr, args.data(),
                static_cast<uint32_t>(args.size()), flags, nullptr, grid_of, &grid, &cl.kernel, &cl.result);
  if (rc != TRI_OK) {
    std::fprintf(stderr, "tri tune: %s: %s\n", tri_result_name(rc), last_error().c_str());
    return 1;
  }

  // The table, from the result: one config per line of its JSON.
  std::string json(static_cast<const char*>(tri_blob_data(cl.result)), tri_blob_size(cl.result));
  std::string source = field(json, "source"), best = field(json, "best");
  std::printf("@%s on %s (%s; key %s)\n", kernel.c_str(), target.c_str(), source.c_str(), field(json, "key").substr(0, 8).c_str());
  std::printf("  %3s  %-36s %14s  %s\n", "#", "config", "median (us)", "");
  size_t pos = 0;
  std::string winner;
  while ((pos = json.find("\n  {\"index\": ", pos)) != std::string::npos) {
    size_t end = json.find('\n', pos + 1);
    std::string line = json.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
    pos += 1;
    std::string idx = field(line, "index"), status = field(line, "status");
    std::string note;
    std::string time = "-";
    if (status != "0") {
      note = std::string(tri_result_name(std::atoi(status.c_str()))) + ": " + field(line, "error");
      if (note.size() > 90) note = note.substr(0, 87) + "...";
    } else if (field(line, "measured") == "true") {
      char b[32];
      std::snprintf(b, sizeof b, "%.3f", std::atof(field(line, "median_ns").c_str()) / 1e3);
      time = b;
    } else {
      note = "not measured";
    }
    if (idx == best) note = note.empty() ? "<- winner" : "<- " + note;
    if (idx == best) winner = show(field(line, "config"));
    std::printf("  %3s  %-36s %14s  %s\n", idx.c_str(), show(field(line, "config")).c_str(), time.c_str(), note.c_str());
  }
  std::printf("winner: config %s (%s)\n", best.c_str(), winner.c_str());
  if (!plot_path.empty()) {
    tri_blob* svg = nullptr;
    if (tri_tune_plot(json.data(), json.size(), nullptr, &svg) != TRI_OK) {
      std::fprintf(stderr, "tri tune: %s\n", last_error().c_str());
      return 1;
    }
    const size_t size = tri_blob_size(svg);
    FILE* f = std::fopen(plot_path.c_str(), "w");
    const bool written = f && std::fwrite(tri_blob_data(svg), 1, size, f) == size;
    tri_blob_destroy(svg);
    if (!f || std::fclose(f) != 0 || !written) {
      std::fprintf(stderr, "tri tune: cannot write %s\n", plot_path.c_str());
      return 1;
    }
    std::printf("plot: %s\n", plot_path.c_str());
  }
  if (!grid.error.empty()) std::fprintf(stderr, "warning: %s\n", grid.error.c_str());
  if (!export_path.empty()) {
    uint32_t n = 0;
    if (tri_tune_export(ctx, export_path.c_str(), &n) != TRI_OK) {
      std::fprintf(stderr, "tri tune: %s\n", last_error().c_str());
      return 1;
    }
    std::printf("exported %u result%s to %s\n", n, n == 1 ? "" : "s", export_path.c_str());
  }
  return 0;
}
