// `tri run`: executes one kernel of an IR file on inputs described on the command line (random,
// filled, iota, scalars, or .npy files), prints the launch time and a summary of every buffer
// afterwards, and saves chosen buffers as .npy. It is the quickest way to try a kernel on a
// target without writing a host program, and it uses only the public C API.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "host_data.h"
#include "kernel_runner.h"
#include "npy.h"

using namespace tri_tool;

namespace {

const char kUsage[] =
    "usage: tri run FILE --kernel NAME [--target T] [--grid X[,Y[,Z]]] [--const NAME=V]...\n"
    "               [--arg NAME=SPEC]... [--save NAME=PATH.npy]... [--checked] [--repeat N] [--quiet]\n"
    "\n"
    "Runs kernel @NAME of FILE (IR text or binary) once on target T (cpu, interp; default cpu)\n"
    "over a grid of X*Y*Z programs (default 1,1,1), then prints each buffer's summary.\n"
    "\n"
    "  --const NAME=V     a constexpr value (typed as the kernel declares it)\n"
    "  --arg NAME=SPEC    a runtime argument (NAME without '%'); SPEC is one of\n"
    "       rand:DT[SHAPE][:seed=N][:lo=A][:hi=B]  uniform random: floats in [lo,hi) (default\n"
    "                                             [-1,1)), integers in [lo,hi] (default [-100,100])\n"
    "       fill:DT[SHAPE]:V                      every element V\n"
    "       zeros:DT[SHAPE]                       every element 0\n"
    "       iota:DT[SHAPE][:start=A][:step=B]     A, A+B, A+2B, ... (default 0, 1)\n"
    "       npy:PATH                              a .npy file of the parameter's element type\n"
    "                                             (float data is rounded to a float parameter's type)\n"
    "       npy-cast:PATH                         a .npy file of another type, each value converted\n"
    "                                             (integers must fit; floats to integers must be whole)\n"
    "       DT:V  or  V                           a scalar (V alone takes the parameter's type)\n"
    "     DT is an element type (f32, i32, bf16, ...); SHAPE is [N] or [N,M,...]\n"
    "  --save NAME=PATH   write the buffer of argument NAME after the launch as .npy\n"
    "  --checked          bounds-check memory accesses and masked lanes (on the interpreter,\n"
    "                     which it selects when --target is not given)\n"
    "  --repeat N         launch N times (buffers are not reset) and report the median time\n"
    "  --quiet            print only the timing line\n";

// One line says what was wrong; the options are a --help away.
int usage_error(const std::string& msg) {
  std::fprintf(stderr, "tri run: %s\n(see 'tri run --help')\n", msg.c_str());
  return 2;
}

// The NumPy name of an element type, for messages about .npy files.
const char* numpy_name(int32_t dtype) {
  switch (dtype) {
    case TRI_DTYPE_I1: return "bool";
    case TRI_DTYPE_I8: return "int8";
    case TRI_DTYPE_I16: return "int16";
    case TRI_DTYPE_I32: return "int32";
    case TRI_DTYPE_I64: return "int64";
    case TRI_DTYPE_F16: return "float16";
    case TRI_DTYPE_F32: return "float32";
    case TRI_DTYPE_F64: return "float64";
    default: return nullptr;  // bf16 and the f8 formats have no NumPy type
  }
}

// Converts every element of `in` to `dtype`: floats round to nearest even; an integer must fit
// the target read as signed or unsigned, and a float going to an integer must be a whole number
// in range (the message names the first element that is not).
bool cast_buffer(const HostBuffer& in, int32_t dtype, HostBuffer* out, std::string* error) {
  HostBuffer b(dtype, in.shape());
  const int32_t from = in.dtype();
  const int bits = dtype_info(dtype).bits;
  for (size_t i = 0; i < in.count(); ++i) {
    uint64_t v = in.get(i);
    if (dtype_is_float(dtype)) {
      double d = dtype_is_float(from) ? float_bits_to_double(from, v) : double(bits_to_signed(from, v));
      b.set(i, double_to_float_bits(dtype, d));
      continue;
    }
    bool fits;
    int64_t x;
    if (dtype_is_float(from)) {
      double d = float_bits_to_double(from, v);
      fits = d == std::floor(d) && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18;
      x = fits ? static_cast<int64_t>(d) : 0;
    } else {
      x = from == TRI_DTYPE_I1 ? int64_t(v & 1) : bits_to_signed(from, v);
      fits = true;
    }
    if (fits && bits < 64) {
      int64_t lo = dtype == TRI_DTYPE_I1 ? 0 : -(int64_t(1) << (bits - 1));
      int64_t hi = dtype == TRI_DTYPE_I1 ? 1 : (int64_t(1) << bits) - 1;
      fits = x >= lo && x <= hi;
    }
    if (!fits) {
      *error = "element " + std::to_string(i) + " (" + format_bits(from, v) + ") does not fit " + dtype_name(dtype);
      return false;
    }
    b.set(i, static_cast<uint64_t>(x) & bits_mask(dtype));
  }
  *out = std::move(b);
  return true;
}

// Splits "a:b:c" at ':' (a Windows drive letter is not a concern for this tool).
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

// Parses "f32[4,8]" into a dtype and a shape.
bool parse_typed_shape(const std::string& s, int32_t* dtype, std::vector<int64_t>* shape, std::string* error) {
  size_t lb = s.find('[');
  if (lb == std::string::npos || s.back() != ']') {
    *error = "'" + s + "' is not DTYPE[SHAPE] (e.g. f32[1024])";
    return false;
  }
  if (!dtype_from_name(s.substr(0, lb), dtype)) {
    *error = "unknown element type '" + s.substr(0, lb) + "'";
    return false;
  }
  shape->clear();
  std::string dims = s.substr(lb + 1, s.size() - lb - 2);
  if (dims.empty()) return true;
  uint64_t total = 1;
  for (const std::string& d : split(dims, ',')) {
    char* end = nullptr;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end != '\0' || v < 0 || v > (1ll << 40)) {
      *error = "bad dimension '" + d + "' in '" + s + "'";
      return false;
    }
    total *= static_cast<uint64_t>(v) ? static_cast<uint64_t>(v) : 1;
    if (total > (uint64_t(1) << 34)) {
      *error = "'" + s + "' is too large";
      return false;
    }
    shape->push_back(v);
  }
  return true;
}

bool parse_double(const std::string& s, double* out) {
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0';
}

}  // namespace

namespace tri_tool {

// Builds one argument from its SPEC, for parameter `p`.
bool make_arg(const std::string& name, const std::string& spec, const ParamInfo& p, ArgInput* out,
              std::string* error, bool* io_error) {
  if (io_error) *io_error = false;
  out->name = name;
  std::vector<std::string> parts = split(spec, ':');
  const std::string& kind = parts[0];
  auto want_ptr = [&]() {
    if (p.type_kind != TRI_TYPE_POINTER) {
      *error = "%" + name + " is " + p.type_text + ", a scalar: give DT:V or V, not '" + spec + "'";
      return false;
    }
    return true;
  };
  if (kind == "npy" || kind == "npy-cast") {
    if (!want_ptr()) return false;
    std::string path = spec.substr(kind.size() + 1);
    if (!npy_read_file(path, &out->buffer, error)) {
      if (io_error) *io_error = true;
      return false;
    }
    const int32_t have = out->buffer.dtype();
    if (have != p.dtype) {
      if (kind == "npy" && !(dtype_is_float(have) && dtype_is_float(p.dtype))) {
        const char* have_np = numpy_name(have);
        const char* want_np = numpy_name(p.dtype);
        *error = path + " holds " + (have_np ? have_np : dtype_name(have)) + " data (" +
                 describe_shape(have, out->buffer.shape()) + ") but %" + name + " is " + p.type_text +
                 ": save it as " +
                 (want_np ? std::string(want_np) + " (array.astype(numpy." + want_np + "))" : dtype_name(p.dtype)) +
                 ", or give npy-cast:" + path + " to convert each value here";
        return false;
      }
      HostBuffer conv;
      if (!cast_buffer(out->buffer, p.dtype, &conv, error)) {
        *error = path + ": " + *error + " (converting to %" + name + ": " + p.type_text + ")";
        return false;
      }
      out->buffer = std::move(conv);
    }
    out->dtype = out->buffer.dtype();
    return true;
  }
  if (kind == "rand" || kind == "fill" || kind == "zeros" || kind == "iota") {
    if (!want_ptr()) return false;
    if (parts.size() < 2) {
      *error = "'" + spec + "' needs DTYPE[SHAPE]";
      return false;
    }
    int32_t dt;
    std::vector<int64_t> shape;
    if (!parse_typed_shape(parts[1], &dt, &shape, error)) return false;
    HostBuffer b(dt, shape);
    std::map<std::string, std::string> opts;
    size_t first_opt = 2;
    std::string fill_value;
    if (kind == "fill") {
      if (parts.size() < 3) {
        *error = "'" + spec + "' needs a value: fill:DT[SHAPE]:V";
        return false;
      }
      fill_value = parts[2];
      first_opt = 3;
    }
    for (size_t i = first_opt; i < parts.size(); ++i) {
      size_t eq = parts[i].find('=');
      if (eq == std::string::npos) {
        *error = "option '" + parts[i] + "' in '" + spec + "' is not KEY=VALUE";
        return false;
      }
      opts[parts[i].substr(0, eq)] = parts[i].substr(eq + 1);
    }
    const std::vector<std::string> allowed = kind == "rand" ? std::vector<std::string>{"seed", "lo", "hi"}
                                             : kind == "iota" ? std::vector<std::string>{"start", "step"}
                                                              : std::vector<std::string>{};
    for (auto& kv : opts) {
      if (std::find(allowed.begin(), allowed.end(), kv.first) == allowed.end()) {
        *error = "unknown option '" + kv.first + "' for " + kind;
        return false;
      }
    }
    auto num = [&](const char* key, double dflt, double* v) {
      if (!opts.count(key)) {
        *v = dflt;
        return true;
      }
      if (!parse_double(opts[key], v)) {
        *error = std::string("option ") + key + "='" + opts[key] + "' is not a number";
        return false;
      }
      return true;
    };
    bool fl = dtype_is_float(dt);
    if (kind == "fill") {
      uint64_t bits;
      if (!parse_element(fill_value, dt, &bits, error)) return false;
      for (size_t i = 0; i < b.count(); ++i) b.set(i, bits);
    } else if (kind == "iota") {
      double start, step;
      if (!num("start", 0, &start) || !num("step", 1, &step)) return false;
      for (size_t i = 0; i < b.count(); ++i) {
        double v = start + step * double(i);
        if (!fl && !(std::fabs(v) < 9.2e18)) {
          *error = "iota: value out of integer range";
          return false;
        }
        b.set(i, fl ? double_to_float_bits(dt, v) : static_cast<uint64_t>(static_cast<int64_t>(v)) & bits_mask(dt));
      }
    } else if (kind == "rand") {
      double seed, lo, hi;
      if (!num("seed", 0, &seed) || !num("lo", fl ? -1 : -100, &lo) || !num("hi", fl ? 1 : 100, &hi)) return false;
      if (!(lo <= hi)) {
        *error = "rand: lo must not exceed hi";
        return false;
      }
      std::mt19937_64 rng(static_cast<uint64_t>(seed));
      for (size_t i = 0; i < b.count(); ++i) {
        if (fl) {
          double u = std::ldexp(double(rng() >> 11), -53);
          b.set(i, double_to_float_bits(dt, lo + (hi - lo) * u));
        } else if (dt == TRI_DTYPE_I1) {
          b.set(i, rng() & 1);
        } else {
          if (!(std::fabs(lo) < 9.2e18 && std::fabs(hi) < 9.2e18)) {
            *error = "rand: lo and hi must be within the i64 range";
            return false;
          }
          int64_t l = static_cast<int64_t>(lo), h = static_cast<int64_t>(hi);
          uint64_t span = static_cast<uint64_t>(h) - static_cast<uint64_t>(l) + 1;
          uint64_t r = span ? rng() % span : rng();
          b.set(i, (static_cast<uint64_t>(l) + r) & bits_mask(dt));
        }
      }
    }
    out->dtype = dt;
    out->buffer = std::move(b);
    return true;
  }
  // A scalar: DT:V or V.
  if (p.type_kind == TRI_TYPE_SCALAR && spec.find('[') != std::string::npos) {
    *error = "%" + name + " is " + p.type_text + ", a scalar: give DT:V or V, not '" + spec + "'";
    return false;
  }
  if (p.type_kind != TRI_TYPE_SCALAR) {
    *error = "%" + name + " is " + p.type_text + ": give a buffer (rand:, fill:, zeros:, iota:, npy:), not '" +
             spec + "'";
    return false;
  }
  out->is_scalar = true;
  std::string value = spec;
  out->dtype = p.dtype;
  if (parts.size() == 2) {
    if (!dtype_from_name(parts[0], &out->dtype)) {
      *error = "unknown element type '" + parts[0] + "' in '" + spec + "'";
      return false;
    }
    value = parts[1];
  } else if (parts.size() > 2) {
    *error = "'" + spec + "' is not a scalar (DT:V)";
    return false;
  }
  return parse_element(value, out->dtype, &out->scalar_bits, error);
}

}  // namespace tri_tool

namespace {

void print_summary(const ArgInput& a, const HostBuffer& b) {
  std::printf("  %%%-12s %-16s", a.name.c_str(), describe_shape(b.dtype(), b.shape()).c_str());
  if (b.count() == 0) {
    std::printf(" (empty)\n");
    return;
  }
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  size_t nan = 0;
  bool fl = dtype_is_float(b.dtype());
  for (size_t i = 0; i < b.count(); ++i) {
    double v = fl ? float_bits_to_double(b.dtype(), b.get(i)) : double(bits_to_signed(b.dtype(), b.get(i)));
    if (b.dtype() == TRI_DTYPE_I1) v = b.get(i) & 1;
    if (std::isnan(v)) {
      ++nan;
      continue;
    }
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    sum += v;
  }
  if (nan == b.count()) {
    std::printf(" all %zu nan", nan);  // no min, max or mean to speak of
  } else {
    std::printf(" min %.6g  max %.6g  mean %.6g", mn, mx, sum / double(b.count() - nan));
    if (nan) std::printf("  nan %zu", nan);
  }
  std::printf("  [");
  size_t shown = std::min<size_t>(b.count(), 8);
  for (size_t i = 0; i < shown; ++i) std::printf("%s%s", i ? ", " : "", format_bits(b.dtype(), b.get(i)).c_str());
  std::printf("%s]\n", b.count() > shown ? ", ..." : "");
}

bool split_eq(const std::string& s, std::string* key, std::string* value) {
  size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  *key = s.substr(0, eq);
  if (!key->empty() && (*key)[0] == '%') key->erase(0, 1);
  *value = s.substr(eq + 1);
  return true;
}

}  // namespace

int tri_cmd_run(int argc, char** argv) {
  std::string file, kernel, target = "cpu", grid_text;
  std::vector<std::pair<std::string, std::string>> consts, arg_specs, saves;
  bool checked = false, quiet = false, target_given = false;
  int repeat = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::string opt = a, val;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      // --kernel=NAME form; --arg/--const/--save values contain '=' themselves.
      if (eq != std::string::npos && a.compare(0, 5, "--arg") != 0 && a.compare(0, 7, "--const") != 0 &&
          a.compare(0, 6, "--save") != 0) {
        opt = a.substr(0, eq);
        val = a.substr(eq + 1);
        has_inline = true;
      }
    }
    auto next = [&](std::string* out) {
      if (has_inline) {
        *out = val;
        return true;
      }
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v, key, value;
    if (opt == "--checked") {
      checked = true;
    } else if (opt == "--quiet") {
      quiet = true;
    } else if (opt == "--kernel" || opt == "--target" || opt == "--grid" || opt == "--repeat") {
      if (!next(&v)) return usage_error(opt + " needs a value");
      if (opt == "--kernel") kernel = v[0] == '@' ? v.substr(1) : v;
      if (opt == "--target") {
        target = v;
        target_given = true;
      }
      if (opt == "--grid") grid_text = v;
      if (opt == "--repeat") {
        char* end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (*end || n < 1 || n > 1000000) return usage_error("--repeat needs a count from 1 to 1000000");
        repeat = static_cast<int>(n);
      }
    } else if (opt == "--const" || opt == "--arg" || opt == "--save") {
      if (!next(&v)) return usage_error(opt + " needs NAME=VALUE");
      if (!split_eq(v, &key, &value)) return usage_error(opt + " '" + v + "' is not NAME=VALUE");
      (opt == "--const" ? consts : opt == "--arg" ? arg_specs : saves).emplace_back(key, value);
    } else if (a.rfind("--const=", 0) == 0 || a.rfind("--arg=", 0) == 0 || a.rfind("--save=", 0) == 0) {
      size_t eq = a.find('=');
      std::string o = a.substr(0, eq), kv = a.substr(eq + 1);
      if (!split_eq(kv, &key, &value)) return usage_error(o + " '" + kv + "' is not NAME=VALUE");
      (o == "--const" ? consts : o == "--arg" ? arg_specs : saves).emplace_back(key, value);
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
  // Checked mode is the interpreter's: --checked alone selects it, and a conflict is named.
  if (checked && !target_given) target = "interp";
  if (checked && target != "interp")
    return usage_error("--checked runs on the interpreter only: use --target interp (or leave --target out), not '" +
                       target + "'");

  LaunchRequest req;
  req.kernel = kernel;
  req.target = target;
  req.checked = checked;
  req.repeat = repeat;
  if (!grid_text.empty()) {
    std::vector<std::string> g = split(grid_text, ',');
    if (g.size() > 3) return usage_error("--grid takes at most three sizes");
    for (size_t i = 0; i < g.size(); ++i) {
      char* end = nullptr;
      long long n = std::strtoll(g[i].c_str(), &end, 10);
      if (g[i].empty() || *end || n < 1 || n > 0xffffffffll) return usage_error("bad --grid '" + grid_text + "'");
      req.grid[i] = static_cast<uint32_t>(n);
    }
  }
  for (auto& c : consts) req.consts.push_back({c.first, c.second});

  Session session;
  if (!session.ok()) {
    std::fprintf(stderr, "tri run: cannot create a context: %s\n", last_error().c_str());
    return 1;
  }
  // `print` output arrives at level info; errors are reported from the failing call instead.
  session.set_log_handler([](int32_t level, const std::string& msg) {
    if (level == TRI_LOG_INFO) std::printf("%s\n", msg.c_str());
    if (level == TRI_LOG_WARNING) std::fprintf(stderr, "warning: %s\n", msg.c_str());
  });
  std::string bytes, err;
  if (!read_file(file, &bytes, &err)) {
    std::fprintf(stderr, "tri run: %s\n", err.c_str());
    return 1;
  }
  tri_module* module = session.load(bytes, file, &err);
  if (!module) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  struct ModuleGuard {
    tri_module* m;
    ~ModuleGuard() { tri_module_destroy(m); }
  } guard{module};
  std::vector<ParamInfo> params;
  if (!kernel_params(module, kernel, &params, &err)) {
    std::fprintf(stderr, "tri run: %s: %s\n", file.c_str(), err.c_str());
    return 1;
  }
  for (auto& s : arg_specs) {
    const ParamInfo* p = nullptr;
    for (const ParamInfo& q : params)
      if (!q.constexpr_param && q.name == s.first) p = &q;
    if (!p) {
      std::string names;
      for (const ParamInfo& q : params)
        if (!q.constexpr_param) names += (names.empty() ? "%" : ", %") + q.name;
      return usage_error("kernel @" + kernel + " has no runtime parameter %" + s.first +
                         " (it has: " + (names.empty() ? std::string("none") : names) + ")");
    }
    ArgInput a;
    bool io_error = false;
    if (!make_arg(s.first, s.second, *p, &a, &err, &io_error)) {
      if (!io_error) return usage_error("--arg " + s.first + ": " + err);
      std::fprintf(stderr, "tri run: --arg %s: %s\n", s.first.c_str(), err.c_str());
      return 1;
    }
    req.args.push_back(std::move(a));
  }
  for (auto& s : saves) {
    bool found = false;
    for (const ArgInput& a : req.args) found = found || (a.name == s.first && !a.is_scalar);
    if (!found) return usage_error("--save " + s.first + ": no buffer argument %" + s.first);
  }

  LaunchOutcome out;
  // Whether the compile came from the disk cache: its counters before and after.
  auto cache_stat = [&](int32_t stat) {
    uint64_t v = 0;
    tri_cache_stat(session.context(), stat, &v);
    return v;
  };
  const uint64_t hits = cache_stat(TRI_CACHE_STAT_HITS), stores = cache_stat(TRI_CACHE_STAT_STORES);
  const bool launched = launch_kernel(module, req, &out);
  const char* cached = cache_stat(TRI_CACHE_STAT_ENABLED) == 0       ? "disk cache off"
                       : cache_stat(TRI_CACHE_STAT_HITS) > hits     ? "from the disk cache"
                       : cache_stat(TRI_CACHE_STAT_STORES) > stores ? "compiled, stored in the disk cache"
                       : req.target == "interp"                     ? "the interpreter compiles nothing to cache"
                                                                    : "compiled, not stored in the disk cache";
  if (!launched) {
    std::fprintf(stderr, "tri run: %s failed (%s): %s\n", out.stage.c_str(), tri_result_name(out.code),
                 out.message.c_str());
    return out.stage == "bind" ? 2 : 1;
  }
  std::vector<double> t = out.launch_times;
  std::sort(t.begin(), t.end());
  std::printf("@%s on %s, grid (%u,%u,%u): compile %.3f ms (%s), launch %.3f ms", kernel.c_str(), target.c_str(),
              req.grid[0], req.grid[1], req.grid[2], out.compile_seconds * 1e3, cached, out.launch_seconds * 1e3);
  if (t.size() > 1)
    std::printf(" (first of %zu; median %.3f ms, min %.3f ms)", t.size(), t[t.size() / 2] * 1e3, t.front() * 1e3);
  std::printf("\n");
  if (!quiet) {
    for (size_t i = 0; i < req.args.size(); ++i) {
      const ArgInput& a = req.args[i];
      if (a.is_scalar) {
        std::printf("  %%%-12s %-16s %s\n", a.name.c_str(), dtype_name(a.dtype), format_bits(a.dtype, a.scalar_bits).c_str());
      } else {
        print_summary(a, out.buffers[i]);
      }
    }
  }
  int rc = 0;
  for (auto& s : saves) {
    for (size_t i = 0; i < req.args.size(); ++i) {
      if (req.args[i].name != s.first) continue;
      if (!npy_write_file(s.second, out.buffers[i], &err)) {
        std::fprintf(stderr, "tri run: %s\n", err.c_str());
        rc = 1;
      } else if (!quiet) {
        std::printf("saved %%%s to %s\n", s.first.c_str(), s.second.c_str());
      }
    }
  }
  return rc;
}
