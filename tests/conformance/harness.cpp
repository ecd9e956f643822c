// The conformance harness: input generation, the kernel text builder, the tile helpers and the
// runner that executes a group on every target and compares (see harness.h).
#include "harness.h"

#include "device_memory.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cinttypes>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

namespace conf {

using namespace tri_tool;

namespace {
// The byte output buffers start filled with (an i1 store writes 0 or 1, never this).
constexpr unsigned char kSentinel = 0x5a;
}  // namespace

uint64_t mix_seed(uint64_t seed, const std::string& salt) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : salt) h = (h ^ c) * 1099511628211ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

// ---- values

namespace {

int width(int32_t dt) { return dtype_info(dt).bits; }

uint64_t int_edge(int32_t dt, int which) {
  int w = width(dt);
  uint64_t m = bits_mask(dt);
  uint64_t min = w == 1 ? 1 : (uint64_t(1) << (w - 1));
  switch (which) {
    case 0: return 0;
    case 1: return 1;
    case 2: return m;            // -1
    case 3: return 2 & m;
    case 4: return min;          // INT_MIN
    case 5: return (min - 1) & m;  // INT_MAX
    case 6: return (min + 1) & m;
    case 7: return (min - 2) & m;
    case 8: return 0x5555555555555555ull & m;
    default: return 0xaaaaaaaaaaaaaaaaull & m;
  }
}

}  // namespace

std::vector<uint64_t> edge_values(int32_t dt, Dist dist) {
  std::vector<uint64_t> out;
  if (!dtype_is_float(dt)) {
    if (dt == TRI_DTYPE_I1) return {0, 1};
    for (int i = 0; i < 10; ++i) out.push_back(int_edge(dt, i));
    if (dist == Dist::Shift) {
      int w = width(dt);
      out = {0, 1, uint64_t(w - 1), uint64_t(w), uint64_t(w + 1), uint64_t(2 * w) & bits_mask(dt), bits_mask(dt)};
    }
    if (dist == Dist::NonZero) out.erase(out.begin());
    return out;
  }
  const DtypeInfo& d = dtype_info(dt);
  auto f = [&](double v) { return double_to_float_bits(dt, v); };
  uint64_t sign = uint64_t(1) << (d.bits - 1);
  uint64_t max_sub = (uint64_t(1) << d.man_bits) - 1, min_norm = uint64_t(1) << d.man_bits;
  uint64_t max_fin = 0;
  for (uint64_t v = f(INFINITY); v > 0; --v) {  // the largest finite pattern below inf/NaN
    if (std::isfinite(float_bits_to_double(dt, v - 1))) {
      max_fin = v - 1;
      break;
    }
  }
  if (dt == TRI_DTYPE_F32 || dt == TRI_DTYPE_F64) max_fin = d.bits == 32 ? 0x7f7fffffull : 0x7fefffffffffffffull;
  // A signaling NaN (quiet bit clear, payload 1), where the format has one: random bit patterns
  // produce them too, so they are better tested on purpose than by chance.
  uint64_t exp_all = ((uint64_t(1) << d.exp_bits) - 1) << d.man_bits;
  uint64_t snan = d.ieee_special && d.man_bits >= 2 ? (exp_all | 1) : f(NAN);
  std::vector<uint64_t> all = {f(0.0),  f(-0.0),   f(1.0),   f(-1.0),  f(0.5),  f(-0.5),     f(1.5),
                               f(2.5),  f(-2.5),   f(3.0),   f(100.0), f(-100), 1,           sign | 1,
                               max_sub, min_norm,  sign | min_norm,      max_fin, sign | max_fin,
                               f(INFINITY), f(-INFINITY), f(NAN), snan, sign | snan};
  for (uint64_t v : all) {
    double x = float_bits_to_double(dt, v);
    if (std::isnan(x) && (dist == Dist::NoNaN || dist == Dist::Unit || dist == Dist::Near1)) continue;
    if (std::isinf(x) && (dist == Dist::Unit || dist == Dist::Near1)) continue;
    if (dist == Dist::Positive && (std::signbit(x) || std::isnan(x))) continue;
    if (dist == Dist::Near1 && !(std::fabs(x) >= 0.5 && std::fabs(x) < 2)) continue;
    if (dist == Dist::Unit && !(std::fabs(x) < 1)) continue;
    if (dist == Dist::Small && !(x == std::floor(x) && std::fabs(x) <= 8)) continue;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (dist == Dist::Cast) {
    // Where float-to-int and float-to-float casts saturate, overflow or tie.
    const double more[] = {127.0,       128.0,        -128.0,       -129.0,        127.5,      -128.5,
                           255.0,       256.0,        32767.0,      32768.0,       -32769.0,   65535.0,
                           65536.0,     2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0,
                           4294967296.0, 9.2233720368547758e18, -9.2233720368547758e18, 1.8446744073709552e19,
                           0.49999997,  0.5000001,    -0.75,        1e20,          -1e20,      65504.0,
                           65519.0,     65520.0,      448.0,        464.0,         480.0,      57344.0,
                           61440.0,     3.3895313892515355e38, 1e-40, 6e-8, 2.9802322387695312e-08};
    for (double v : more) out.push_back(f(v));
  }
  return out;
}

uint64_t gen_value(Rng& rng, int32_t dt, Dist dist) {
  uint64_t m = bits_mask(dt);
  if (!dtype_is_float(dt)) {
    if (dt == TRI_DTYPE_I1) {
      // In memory an i1 is a byte: nonzero reads as true.
      static const uint64_t bytes[] = {0, 1, 0, 1, 0, 1, 2, 0x80, 0xff};
      return dist == Dist::General ? bytes[rng.below(9)] : rng.below(2);
    }
    int w = width(dt);
    switch (dist) {
      case Dist::Shift: {
        double u = rng.uniform();
        if (u < 0.6) return rng.below(w);
        if (u < 0.8) return w + rng.below(w + 4);
        if (u < 0.9) return rng.bits() & m;
        std::vector<uint64_t> e = edge_values(dt, Dist::Shift);
        return e[rng.below(e.size())];
      }
      case Dist::Small:
        return static_cast<uint64_t>(rng.range(-8, 8)) & m;
      default: {
        double u = rng.uniform();
        uint64_t v;
        if (u < 0.3) {
          v = int_edge(dt, static_cast<int>(rng.below(10)));
        } else if (u < 0.6) {
          v = static_cast<uint64_t>(rng.range(-16, 16)) & m;
        } else {
          v = rng.bits() & m;
        }
        if (dist == Dist::NonZero && v == 0) v = 1;
        return v;
      }
    }
  }
  auto f = [&](double v) { return double_to_float_bits(dt, v); };
  double u = rng.uniform();
  switch (dist) {
    case Dist::Unit: {
      if (u < 0.05) {
        std::vector<uint64_t> e = edge_values(dt, Dist::Unit);
        return e[rng.below(e.size())];
      }
      return f(rng.uniform(-1, 1));
    }
    case Dist::Near1: {
      double x = rng.uniform(0.5, 2.0);
      return f(rng.chance(0.5) ? -x : x);
    }
    case Dist::Small:
      return f(double(rng.range(-8, 8)));
    case Dist::Positive: {
      if (u < 0.6) return f(rng.uniform(0, 10));
      if (u < 0.75) {
        uint64_t v = rng.bits() & (m >> 1);
        return float_bits_is_nan(dt, v) ? f(2.0) : v;
      }
      std::vector<uint64_t> e = edge_values(dt, Dist::Positive);
      return e[rng.below(e.size())];
    }
    case Dist::Cast: {
      if (u < 0.6) {
        std::vector<uint64_t> e = edge_values(dt, Dist::Cast);
        return e[rng.below(e.size())];
      }
      if (u < 0.8) return f(rng.uniform(-300, 300));
      return rng.bits() & m;
    }
    default: {
      uint64_t v;
      if (u < 0.25) {
        std::vector<uint64_t> e = edge_values(dt, dist);
        v = e[rng.below(e.size())];
      } else if (u < 0.6) {
        v = f(rng.uniform(-4, 4));
      } else if (u < 0.85) {
        v = rng.bits() & m;
      } else {
        v = f(rng.uniform(-100, 100));
      }
      if ((dist == Dist::NoNaN) && float_bits_is_nan(dt, v)) v = f(rng.uniform(-4, 4));
      if (dist == Dist::NonZero && float_bits_is_zero(dt, v)) v = f(1.0);
      return v;
    }
  }
}

HostBuffer gen_buffer(Rng& rng, int32_t dt, size_t count, Dist dist) {
  HostBuffer b(dt, {static_cast<int64_t>(count)});
  for (size_t i = 0; i < count; ++i) b.set(i, gen_value(rng, dt, dist));
  return b;
}

std::string lit(int32_t dt, double v) {
  if (dt == TRI_DTYPE_I1) return v != 0 ? "true" : "false";
  if (!dtype_is_float(dt)) return std::to_string(static_cast<long long>(v));
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string lit_bits(int32_t dt, uint64_t bits) {
  if (dt == TRI_DTYPE_I1) return (bits & 0xff) ? "true" : "false";
  if (!dtype_is_float(dt)) return std::to_string(static_cast<long long>(bits_to_signed(dt, bits)));
  return lit(dt, float_bits_to_double(dt, bits));
}

// ---- builder

Builder::Builder(std::string title, uint64_t seed, const std::string& salt)
    : rng(mix_seed(seed, salt.empty() ? title : salt)) {
  g.title = std::move(title);
  g.seed = seed;
}

std::string Builder::in_buf(const std::string& name, HostBuffer data, std::string facts) {
  params_ += (params_.empty() ? "" : ", ") + ("%" + name) + ": ptr<" + dtype_name(data.dtype()) + ">" +
             (facts.empty() ? "" : " {" + facts + "}");
  Arg a;
  a.buf = static_cast<int>(g.bufs.size());
  a.dtype = data.dtype();
  g.args.push_back(a);
  g.bufs.push_back(std::move(data));
  g.names.push_back(name);
  out_count_.push_back(0);
  return "%" + name;
}

std::string Builder::out_buf(const std::string& name, int32_t dtype, size_t count, size_t guard) {
  HostBuffer b(dtype, {static_cast<int64_t>(count + guard)});
  std::memset(b.data(), kSentinel, b.byte_size());
  std::string v = in_buf(name, std::move(b));
  out_count_.back() = count;
  return v;
}

std::string Builder::scalar(const std::string& name, int32_t dtype, uint64_t bits) {
  params_ += (params_.empty() ? "" : ", ") + ("%" + name) + ": " + dtype_name(dtype);
  Arg a;
  a.scalar = true;
  a.dtype = dtype;
  a.bits = bits;
  g.args.push_back(a);
  return "%" + name;
}

int Builder::buf_index(const std::string& name) const {
  std::string n = name[0] == '%' ? name.substr(1) : name;
  for (size_t i = 0; i < g.names.size(); ++i)
    if (g.names[i] == n) return static_cast<int>(i);
  std::fprintf(stderr, "conformance: internal error: no buffer '%s' in group '%s'\n", n.c_str(), g.title.c_str());
  std::abort();
}

std::string Builder::fresh(const std::string& hint) { return "%" + hint + std::to_string(counter_++); }

std::string Builder::op(const std::string& rhs, const std::string& type) {
  std::string v = fresh();
  body_ += std::string(2 * indent_, ' ') + v + " = " + rhs + " : " + type + "\n";
  return v;
}

std::vector<std::string> Builder::ops(const std::string& rhs, const std::vector<std::string>& types) {
  std::vector<std::string> vs;
  std::string lhs, ts;
  for (size_t i = 0; i < types.size(); ++i) {
    vs.push_back(fresh());
    lhs += (i ? ", " : "") + vs.back();
    ts += (i ? ", " : "") + types[i];
  }
  body_ += std::string(2 * indent_, ' ') + lhs + " = " + rhs + " : " + ts + "\n";
  return vs;
}

void Builder::stmt(const std::string& s) { body_ += std::string(2 * indent_, ' ') + s + "\n"; }

void Builder::open(const std::string& line) {
  stmt(line);
  ++indent_;
}

void Builder::close(const std::string& line) {
  --indent_;
  stmt(line);
}

void Builder::mid(const std::string& line) {
  --indent_;
  stmt(line);
  ++indent_;
}

Check& Builder::check(const std::string& what, const std::string& out, Cmp cmp, std::vector<std::string> inputs) {
  Check c;
  c.what = what;
  c.buf = buf_index(out);
  c.cmp = cmp;
  for (const std::string& i : inputs) c.inputs.push_back(buf_index(i));
  c.written = out_count_[c.buf];
  g.checks.push_back(std::move(c));
  return g.checks.back();
}

Group Builder::finish() {
  g.ir = prelude + "kernel @" + g.kernel + "(" + params_ + ")" + (constexprs.empty() ? "" : " " + constexprs) +
         " {\n" + body_ + "  return\n}\n";
  return g;
}

std::string blk(const std::vector<int64_t>& dims, const std::string& elem) {
  std::string s = "<";
  for (int64_t d : dims) s += std::to_string(d) + " x ";
  return s + elem + ">";
}

std::string blk(const std::vector<int64_t>& dims, int32_t dtype) { return blk(dims, dtype_name(dtype)); }

// ---- tiles

size_t Tile::count() const {
  size_t n = 1;
  for (int64_t e : ext) n *= static_cast<size_t>(e);
  return n;
}

std::string Tile::name() const {
  std::string s = "<";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  s += ">";
  if (dims.size() == 1) return s + " n=" + std::to_string(ext[0]) + " grid=" + std::to_string(grid);
  s += " ext=";
  for (size_t i = 0; i < ext.size(); ++i) s += (i ? "x" : "") + std::to_string(ext[i]);
  return s;
}

TileIR emit_tile(Builder& b, const Tile& t, const std::string& prefix) {
  TileIR r;
  r.dims = t.dims;
  const std::string i32 = "i32";
  const std::string bi = blk(t.dims, i32), b1 = blk(t.dims, "i1");
  if (t.dims.size() == 1) {
    std::string n = b.scalar(prefix + "n", TRI_DTYPE_I32, static_cast<uint64_t>(t.ext[0]));
    std::string pid = b.op("program_id[axis=0]", i32);
    std::string bs = b.op("const[value=" + std::to_string(t.dims[0]) + "]", i32);
    std::string start = b.op("mul " + pid + ", " + bs, i32);
    std::string ar = b.op("arange[start=0, end=" + std::to_string(t.dims[0]) + "]", bi);
    std::string sv = b.op("splat " + start, bi);
    r.offs = b.op("add " + sv + ", " + ar, bi);
    std::string nv = b.op("splat " + n, bi);
    r.mask = b.op("cmp[pred=slt] " + r.offs + ", " + nv, b1);
    r.idx = {r.offs};
    r.ext = {n};
    return r;
  }
  const int rank = static_cast<int>(t.dims.size());
  for (int a = 0; a < rank; ++a)
    r.ext.push_back(b.scalar(prefix + "e" + std::to_string(a), TRI_DTYPE_I32, static_cast<uint64_t>(t.ext[a])));
  // Strides of the dense buffer, computed from the runtime extents.
  std::vector<std::string> stride(rank);
  stride[rank - 1] = b.op("const[value=1]", i32);
  for (int a = rank - 2; a >= 0; --a) stride[a] = b.op("mul " + r.ext[a + 1] + ", " + stride[a + 1], i32);
  for (int a = 0; a < rank; ++a) {
    std::vector<int64_t> cur = {t.dims[a]};
    std::string v = b.op("arange[start=0, end=" + std::to_string(t.dims[a]) + "]", blk(cur, i32));
    for (int o = 0; o < rank; ++o) {
      if (o == a) continue;
      cur.insert(cur.begin() + o, 1);
      v = b.op("expand_dims[axis=" + std::to_string(o) + "] " + v, blk(cur, i32));
    }
    v = b.op("broadcast " + v, bi);
    r.idx.push_back(v);
    std::string sv = b.op("splat " + stride[a], bi);
    std::string term = b.op("mul " + v + ", " + sv, bi);
    r.offs = r.offs.empty() ? term : b.op("add " + r.offs + ", " + term, bi);
    std::string ev = b.op("splat " + r.ext[a], bi);
    std::string in = b.op("cmp[pred=slt] " + v + ", " + ev, b1);
    r.mask = r.mask.empty() ? in : b.op("and " + r.mask + ", " + in, b1);
  }
  return r;
}

std::string const_tile(Builder& b, const TileIR& t, int32_t dtype, const std::string& value_text) {
  return b.op("const[value=" + value_text + "]", blk(t.dims, dtype));
}

std::string load_tile(Builder& b, const TileIR& t, const std::string& ptr, int32_t dtype, const std::string& other) {
  std::string pt = blk(t.dims, std::string("ptr<") + dtype_name(dtype) + ">");
  std::string base = b.op("splat " + ptr, pt);
  std::string p = b.op("addptr " + base + ", " + t.offs, pt);
  std::string o = const_tile(b, t, dtype, other);
  return b.op("load " + p + ", mask=" + t.mask + ", other=" + o, blk(t.dims, dtype));
}

void store_tile(Builder& b, const TileIR& t, const std::string& ptr, int32_t dtype, const std::string& value) {
  std::string pt = blk(t.dims, std::string("ptr<") + dtype_name(dtype) + ">");
  std::string base = b.op("splat " + ptr, pt);
  std::string p = b.op("addptr " + base + ", " + t.offs, pt);
  b.stmt("store " + p + ", " + value + ", mask=" + t.mask);
}

std::vector<Tile> standard_tiles() {
  return {
      Tile{{16}, {250}, 16},
      Tile{{4, 8}, {3, 7}, 1},
      Tile{{2, 2, 4}, {1, 2, 3}, 1},
  };
}

// ---- running

Runner::Runner(uint64_t seed, std::vector<std::string> targets, bool checked_oracle)
    : seed_(seed), targets_(std::move(targets)), checked_(checked_oracle) {
  tri_context_options* o = nullptr;
  if (tri_context_options_create(&o) != TRI_OK) return;
  tri_context_options_set_log(o, &Runner::on_log, this, TRI_LOG_INFO);
  if (tri_context_create(o, TRI_VERSION_NUMBER, &ctx_) != TRI_OK) ctx_ = nullptr;
  tri_context_options_destroy(o);
}

Runner::~Runner() { tri_context_destroy(ctx_); }

namespace {
std::mutex g_log_mu;
}

void Runner::on_log(void* user, int32_t level, const char* msg) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  static_cast<Runner*>(user)->log_.emplace_back(msg);
}

Runner::Result Runner::run_on(tri_module* m, const Group& g, const std::string& target) {
  Result r;
  r.bufs = g.bufs;
  if (target == "cuda" && (g.expect_error != TRI_OK || !g.log_contains.empty())) {
    r.skipped = true;
    return r;
  }
  {
    std::lock_guard<std::mutex> lock(g_log_mu);
    log_.clear();
  }
  tri_compile_options* o = nullptr;
  tri_compile_options_create(&o);
  tri_result rc = tri_compile_options_set_target(o, target.c_str());
  if (rc == TRI_OK && target == targets_[0] && checked_) rc = tri_compile_options_set_checked(o, 1);
  if (rc == TRI_OK && target == "cuda")
    if (const char* w = std::getenv("TRI_CONF_NUM_WARPS")) rc = tri_compile_options_set_num_warps(o, std::atoi(w));
  tri_kernel* k = nullptr;
  if (rc == TRI_OK) rc = tri_kernel_compile(m, g.kernel.c_str(), o, &k);
  tri_compile_options_destroy(o);
  if (rc != TRI_OK) {
    r.code = rc;
    r.stage = "compile";
    r.message = last_error();
    return r;
  }
  // On the GPU the buffers live in device memory for the launch.
  const bool device = target == "cuda";
  std::vector<uint64_t> dev(r.bufs.size(), 0);
  if (device) {
    std::string why;
    if (!device_init(&why)) {
      r.code = TRI_ERROR_UNSUPPORTED;
      r.stage = "launch";
      r.message = why;
      tri_kernel_destroy(k);
      return r;
    }
    for (size_t i = 0; i < r.bufs.size(); ++i) dev[i] = device_upload(r.bufs[i].data(), r.bufs[i].byte_size());
  }
  std::vector<tri_arg> args;
  for (const Arg& a : g.args) {
    tri_arg x;
    std::memset(&x, 0, sizeof x);
    x.dtype = a.dtype;
    if (a.scalar) {
      x.kind = TRI_TYPE_SCALAR;
      if (dtype_is_float(a.dtype)) {
        x.value.f = float_bits_to_double(a.dtype, a.bits);
      } else {
        x.value.i = bits_to_signed(a.dtype, a.bits);
      }
    } else {
      x.kind = TRI_TYPE_POINTER;
      x.value.p = device ? reinterpret_cast<const void*>(static_cast<uintptr_t>(dev[a.buf])) : r.bufs[a.buf].data();
      x.extent = r.bufs[a.buf].byte_size();
    }
    args.push_back(x);
  }
  rc = tri_launch(k, g.grid[0], g.grid[1], g.grid[2], nullptr, args.data(), static_cast<uint32_t>(args.size()));
  if (device) {
    std::string err;
    if (rc == TRI_OK && !device_sync(&err)) {
      rc = TRI_ERROR_RUNTIME;
      tri_kernel_destroy(k);
      r.code = rc;
      r.stage = "launch";
      r.message = err;
      return r;
    }
    for (size_t i = 0; i < r.bufs.size(); ++i) device_download_free(dev[i], r.bufs[i].data(), r.bufs[i].byte_size());
  }
  if (rc != TRI_OK) {
    r.code = rc;
    r.stage = "launch";
    r.message = last_error();
  } else {
    r.ok = true;
  }
  tri_kernel_destroy(k);
  std::lock_guard<std::mutex> lock(g_log_mu);
  r.log = log_;
  return r;
}

namespace {

const char* cmp_name(const Check& c) {
  switch (c.cmp) {
    case Cmp::Exact: return "exact";
    case Cmp::ExactAnyZero: return "exact, either zero";
    case Cmp::Ulp: return "ulp bound";
    default: return "tolerance";
  }
}

bool lane_matches(int32_t dt, const Check& c, size_t i, uint64_t want, uint64_t got) {
  if (!dtype_is_float(dt)) return bits_to_unsigned(dt, want) == bits_to_unsigned(dt, got);
  want &= bits_mask(dt);
  got &= bits_mask(dt);
  bool wn = float_bits_is_nan(dt, want), gn = float_bits_is_nan(dt, got);
  if (wn || gn) return wn && gn;
  if (want == got) return true;
  double w = float_bits_to_double(dt, want), g = float_bits_to_double(dt, got);
  switch (c.cmp) {
    case Cmp::Exact: return false;
    case Cmp::ExactAnyZero: return w == 0 && g == 0;
    case Cmp::Ulp:
      if (std::isinf(w) || std::isinf(g)) return w == g;
      if (w == 0 && g == 0) return false;  // zeros of different signs
      return ulp_distance(dt, want, got) <= c.ulps;
    case Cmp::Tol:
      if (std::isinf(w) || std::isinf(g)) return w == g;
      return std::fabs(w - g) <= (i < c.tol.size() ? c.tol[i] : 0.0);
  }
  return false;
}

}  // namespace

namespace {
// An element for a failure report: NaNs show their bits (a quiet and a signaling NaN can behave
// differently, and both print as "nan").
std::string show(int32_t dt, uint64_t bits) {
  std::string s = format_bits(dt, bits);
  if (dtype_is_float(dt) && float_bits_is_nan(dt, bits)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "(0x%llx)", static_cast<unsigned long long>(bits & bits_mask(dt)));
    s += buf;
  }
  return s;
}
}  // namespace

size_t Runner::compare(const Group& g, const Check& c, const HostBuffer& want, const HostBuffer& got,
                       const char* want_name, const char* got_name, std::vector<std::string>* details) {
  size_t bad = 0;
  int32_t dt = got.dtype();
  for (size_t i = 0; i < got.count(); ++i) {
    if (i < c.skip.size() && c.skip[i]) continue;
    if (lane_matches(dt, c, i, want.get(i), got.get(i))) continue;
    if (c.cmp == Cmp::Ulp && c.abs_tol > 0 && !c.inputs.empty() && dtype_is_float(dt)) {
      const HostBuffer& in = g.bufs[c.inputs[0]];
      double x = i < in.count() ? float_bits_to_double(in.dtype(), in.get(i)) : 0;
      double w = float_bits_to_double(dt, want.get(i)), v = float_bits_to_double(dt, got.get(i));
      if (x < c.abs_input_below && std::fabs(w - v) <= c.abs_tol) continue;
    }
    if (++bad > 4) continue;
    std::string line = std::string(got_name) + " vs " + want_name + ": " + c.what + " (" + dtype_name(dt) +
                       ", " + cmp_name(c) + "): element " + std::to_string(i) + ":";
    if (c.describe) {
      line += " " + c.describe(i);
    } else {
      for (int in : c.inputs) {
        const HostBuffer& b = g.bufs[in];
        line += " " + g.names[in] + "=" + (i < b.count() ? show(b.dtype(), b.get(i)) : std::string("(guard)"));
      }
    }
    line += " -> " + std::string(want_name) + " " + show(dt, want.get(i)) + ", " + got_name + " " +
            show(dt, got.get(i));
    if (c.cmp == Cmp::Tol && i < c.tol.size()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " (tolerance %.3g)", c.tol[i]);
      line += buf;
    }
    if (c.cmp == Cmp::Ulp) line += " (bound " + std::to_string(c.ulps) + " ulp)";
    details->push_back(line);
  }
  if (bad > 4) details->push_back("  ... " + std::to_string(bad - 4) + " more elements of " + c.what + " differ");
  return bad;
}

bool Runner::run_one(const Group& g, bool allow_split, std::vector<std::string>* lines) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> details;
  int cases = 0, failed = 0;
  const size_t others = targets_.size() - 1;
  auto whole_group_fails = [&](const std::string& why) {
    int n = static_cast<int>(g.checks.size() * std::max<size_t>(others, 1) + g.refs.size());
    if (g.expect_error != TRI_OK || !g.log_contains.empty()) n = static_cast<int>(targets_.size());
    n = std::max(n, 1);
    cases += n;
    failed += n;
    details.push_back(why);
  };

  const char* dump_dir = std::getenv("TRI_CONF_DUMP");
  if (const char* dir = dump_dir) {
    // Each group's IR, for rerunning a kernel by hand (`tri run`, `tri check`).
    std::string name;
    for (char ch : g.title) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    if (FILE* f = std::fopen((std::string(dir) + "/" + name + ".tri").c_str(), "w")) {
      std::fwrite(g.ir.data(), 1, g.ir.size(), f);
      std::fclose(f);
    }
  }
  tri_module* m = nullptr;
  if (tri_module_create(ctx_, g.ir.data(), g.ir.size(), g.title.c_str(), &m) != TRI_OK) {
    whole_group_fails("the module does not load: " + last_error() + "\n--- IR ---\n" + g.ir + "----------");
  } else {
    std::vector<Result> res;
    bool any_failed_run = false;
    for (const std::string& t : targets_) {
      res.push_back(run_on(m, g, t));
      if (!res.back().ok && !res.back().skipped && g.expect_error == TRI_OK) any_failed_run = true;
    }
    tri_module_destroy(m);
    static const bool force_split = std::getenv("TRI_CONF_SPLIT") != nullptr;
    if ((any_failed_run || force_split) && allow_split && g.split) {
      for (size_t t = 0; t < targets_.size() && any_failed_run; ++t)
        if (!res[t].ok)
          lines->push_back("  (batch failed on " + targets_[t] + ": " + res[t].stage + ": " +
                           first_lines(res[t].message, 1) + "; running its ops one by one)");
      bool all_ok = true;
      for (const Group& part : g.split()) all_ok = run_one(part, false, lines) && all_ok;
      return all_ok;
    }
    if (g.expect_error != TRI_OK) {
      for (size_t t = 0; t < targets_.size(); ++t) {
        if (res[t].skipped) continue;
        ++cases;
        if (res[t].ok || res[t].code != g.expect_error || res[t].stage != "launch") {
          ++failed;
          details.push_back(targets_[t] + ": expected the launch to fail with " + tri_result_name(g.expect_error) +
                            ", got " + (res[t].ok ? std::string("success")
                                                  : res[t].stage + " " + tri_result_name(res[t].code) + ": " +
                                                        first_lines(res[t].message, 8)));
        }
      }
    } else if (!res[0].ok) {
      whole_group_fails("the oracle (" + targets_[0] + ") failed at " + res[0].stage + " (" +
                        tri_result_name(res[0].code) + "): " + first_lines(res[0].message, 8));
    } else {
      for (const Check& c : g.checks) {
        if (!c.written) continue;
        const HostBuffer& out = res[0].bufs[c.buf];
        const auto* bytes = static_cast<const unsigned char*>(out.data());
        size_t n = std::min(c.written, out.count()) * dtype_bytes(out.dtype());
        bool any = false;
        for (size_t i = 0; i < n && !any; ++i) any = bytes[i] != kSentinel;
        // Below 8 bytes a result can equal the sentinel (an i8 sum does one time in 256): the
        // check would fail correct kernels at random, so it looks at larger outputs only.
        if (!any && n >= 8) {
          ++cases;
          ++failed;
          details.push_back(c.what + ": the oracle stored nothing in " + g.names[c.buf] +
                            " (a mask that is never true?)");
        }
      }
      for (const RefCheck& rc : g.refs) {
        ++cases;
        if (compare(g, rc.check, rc.expected, res[0].bufs[rc.check.buf], "C", targets_[0].c_str(), &details))
          ++failed;
      }
      for (size_t t = 1; t < targets_.size(); ++t) {
        if (res[t].skipped) continue;
        if (!res[t].ok) {
          cases += static_cast<int>(g.checks.size());
          failed += static_cast<int>(g.checks.size());
          details.push_back(targets_[t] + " failed at " + res[t].stage + " (" + tri_result_name(res[t].code) +
                            "): " + first_lines(res[t].message, 8));
          continue;
        }
        for (const Check& c : g.checks) {
          ++cases;
          if (compare(g, c, res[0].bufs[c.buf], res[t].bufs[c.buf], targets_[0].c_str(), targets_[t].c_str(),
                      &details))
            ++failed;
        }
      }
    }
    if (!g.log_contains.empty() && g.expect_error == TRI_OK) {
      for (size_t t = 0; t < targets_.size(); ++t) {
        if (res[t].skipped) continue;
        ++cases;
        std::string all;
        for (const std::string& l : res[t].log) all += l + "\n";
        if (all.find(g.log_contains) == std::string::npos) {
          ++failed;
          details.push_back(targets_[t] + ": the log does not contain \"" + g.log_contains + "\"; it was: " +
                            (all.empty() ? std::string("(empty)") : all));
        }
      }
    }
  }
  totals_.passed += cases - failed;
  totals_.failed += failed;
  char head[64];
  std::snprintf(head, sizeof head, "%-4s ", failed ? "FAIL" : "ok");
  std::string line = head + g.title + "  [" +
                     (failed ? std::to_string(failed) + " of " + std::to_string(cases) + " failed"
                             : std::to_string(cases) + " passed") +
                     "]";
  char secs[32];
  std::snprintf(secs, sizeof secs, " %.2fs", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  line += secs;
  lines->push_back(line);
  for (const std::string& d : details) lines->push_back("    " + d);
  if (failed) lines->push_back("    (reproduce with TRI_SEED=" + std::to_string(seed_) + ")");
  return failed == 0;
}

std::vector<std::string> Runner::run(const Group& g) {
  std::vector<std::string> lines;
  run_one(g, true, &lines);
  return lines;
}

Totals run_all(const std::vector<Group>& groups, uint64_t seed, const std::vector<std::string>& targets,
               bool checked_oracle, unsigned jobs) {
  std::mutex mu;
  size_t next = 0, printed = 0;
  std::vector<std::vector<std::string>> done(groups.size());
  std::vector<uint8_t> finished(groups.size(), 0);
  Totals total;
  auto worker = [&]() {
    Runner r(seed, targets, checked_oracle);
    for (;;) {
      size_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= groups.size()) break;
        i = next++;
      }
      std::vector<std::string> lines;
      if (r.ok()) {
        lines = r.run(groups[i]);
      } else {
        lines = {"FAIL " + groups[i].title + "  [no context: " + last_error() + "]"};
      }
      std::lock_guard<std::mutex> lock(mu);
      done[i] = std::move(lines);
      finished[i] = 1;
      // Print in group order as soon as the next group in line is finished.
      while (printed < groups.size() && finished[printed]) {
        for (const std::string& l : done[printed]) std::printf("%s\n", l.c_str());
        done[printed].clear();
        ++printed;
      }
      std::fflush(stdout);
    }
    std::lock_guard<std::mutex> lock(mu);
    if (!r.ok()) total.failed += 1;
    total.passed += r.totals().passed;
    total.failed += r.totals().failed;
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(jobs, 1u); ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  return total;
}

}  // namespace conf
