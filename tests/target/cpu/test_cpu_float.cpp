// Float semantics of the CPU backend: IEEE arithmetic on f32/f64 (exact ops bit for bit, math
// functions within 4 ulp of a double/long double reference), NaN and -0.0 in fmin/fmax with both
// NaN policies, every fcmp predicate, and f16/bf16/f8 arithmetic (computed in f32, rounded after
// each op) against the independent references of float_ref.h.
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "float_ref.h"
#include "ir_build.h"
#include "test_main.h"

using namespace tri_test;

namespace {

struct OpSpec {
  Opcode code;
  int arity;
  std::string name;  // math_call name, or a label
  int nan_ignore = 0;
  bool exact = true;
};

std::vector<OpSpec> float_ops() {
  std::vector<OpSpec> ops = {
      {Opcode::Add, 2, "add"},       {Opcode::Sub, 2, "sub"},        {Opcode::Mul, 2, "mul"},
      {Opcode::FDiv, 2, "fdiv"},     {Opcode::FRem, 2, "frem"},      {Opcode::FMin, 2, "fmin"},
      {Opcode::FMax, 2, "fmax"},     {Opcode::FMin, 2, "fmin.ignore", 1}, {Opcode::FMax, 2, "fmax.ignore", 1},
      {Opcode::Neg, 1, "neg"},       {Opcode::Abs, 1, "abs"},        {Opcode::Sqrt, 1, "sqrt"},
      {Opcode::Floor, 1, "floor"},   {Opcode::Ceil, 1, "ceil"},      {Opcode::Fma, 3, "fma"},
      {Opcode::Rsqrt, 1, "rsqrt", 0, false}, {Opcode::Exp, 1, "exp", 0, false}, {Opcode::Exp2, 1, "exp2", 0, false},
      {Opcode::Log, 1, "log", 0, false},  {Opcode::Log2, 1, "log2", 0, false},  {Opcode::Sin, 1, "sin", 0, false},
      {Opcode::Cos, 1, "cos", 0, false},  {Opcode::Tanh, 1, "tanh", 0, false},  {Opcode::Erf, 1, "erf", 0, false},
      {Opcode::Pow, 2, "pow", 0, false},
  };
#define TRI_MATH_FN(n, arity) \
  ops.push_back({Opcode::MathCall, arity, #n, 0, std::string(#n) == "round" || std::string(#n) == "trunc" || std::string(#n) == "fmod" || std::string(#n) == "copysign"});
#include "ir/math_fns.def"
#undef TRI_MATH_FN
  return ops;
}

long double ref_op(const OpSpec& op, long double a, long double b, long double c) {
  const std::string& n = op.name;
  if (n == "add") return a + b;
  if (n == "sub") return a - b;
  if (n == "mul") return a * b;
  if (n == "fdiv") return a / b;
  if (n == "frem" || n == "fmod") return std::fmod(a, b);
  if (n == "neg") return -a;
  if (n == "abs") return std::fabs(a);
  if (n == "sqrt") return std::sqrt(a);
  if (n == "floor") return std::floor(a);
  if (n == "ceil") return std::ceil(a);
  if (n == "fma") return std::fma(a, b, c);
  if (n == "rsqrt") return 1 / std::sqrt(a);
  if (n == "exp") return std::exp(a);
  if (n == "exp2") return std::exp2(a);
  if (n == "log") return std::log(a);
  if (n == "log2") return std::log2(a);
  if (n == "sin") return std::sin(a);
  if (n == "cos") return std::cos(a);
  if (n == "tanh") return std::tanh(a);
  if (n == "erf") return std::erf(a);
  if (n == "pow") return std::pow(a, b);
  if (n == "expm1") return std::expm1(a);
  if (n == "log1p") return std::log1p(a);
  if (n == "log10") return std::log10(a);
  if (n == "exp10") return std::pow(10.0L, a);
  if (n == "cbrt") return std::cbrt(a);
  if (n == "sinh") return std::sinh(a);
  if (n == "cosh") return std::cosh(a);
  if (n == "tan") return std::tan(a);
  if (n == "asin") return std::asin(a);
  if (n == "acos") return std::acos(a);
  if (n == "atan") return std::atan(a);
  if (n == "asinh") return std::asinh(a);
  if (n == "acosh") return std::acosh(a);
  if (n == "atanh") return std::atanh(a);
  if (n == "erfc") return std::erfc(a);
  if (n == "lgamma") { int s; return lgammal_r(a, &s); }
  if (n == "tgamma") return std::tgamma(a);
  if (n == "round") return std::round(a);
  if (n == "trunc") return std::trunc(a);
  if (n == "atan2") return std::atan2(a, b);
  if (n == "hypot") return std::hypot(a, b);
  if (n == "copysign") return std::copysign(a, b);
  std::abort();
}

// fmin/fmax of floats in the format's own precision (the result is one of the operands).
long double ref_minmax(const OpSpec& op, long double a, long double b) {
  bool mx = op.code == Opcode::FMax;
  if (std::isnan(a) || std::isnan(b)) {
    if (!op.nan_ignore) return NAN;
    return std::isnan(a) ? b : a;
  }
  if (a == b && a == 0) {
    if (op.nan_ignore) return a;  // either zero; the checker accepts both
    bool an = std::signbit(a), bn = std::signbit(b);
    return mx ? (an && bn ? a : (an ? b : a)) : (an ? a : b);
  }
  return mx ? (a > b ? a : b) : (a < b ? a : b);
}

// lgamma and tgamma are the math library's weakest functions; the others meet 4 ulp.
int64_t ulp_bound(const std::string& n) { return n == "lgamma" || n == "tgamma" ? 16 : 4; }

// Builds `out[k*N + i] = op_k(a[i], b[i], c[i])` for every op in `ops` on element type s.
std::unique_ptr<tri::cpu::CpuKernel> build_ops(Scalar s, const std::vector<OpSpec>& ops, int n) {
  Mod md;
  Fn f(&md.m, "ops", true);
  ValueId in[3];
  for (int i = 0; i < 3; ++i) in[i] = f.param(md.p(s));
  ValueId out = f.param(md.p(s));
  TypeId bp = md.blk({n}, md.p(s)), bi = md.blk({n}, Scalar::I32);
  TypeId i32 = md.s(Scalar::I32);
  ValueId offs = f.arange(n);
  ValueId v[3];
  for (int i = 0; i < 3; ++i) v[i] = f.load(f.addptr(f.splat(in[i], bp), offs));
  TypeId bt = md.blk({n}, s);
  int k = 0;
  for (const OpSpec& op : ops) {
    std::vector<ValueId> operands(v, v + op.arity);
    std::vector<Attr> a;
    if (op.code == Opcode::MathCall) a = attrs(op.code, {{"name", Attr::of_str(op.name)}});
    if (op.code == Opcode::FMin || op.code == Opcode::FMax)
      a = {enum_attr(op.code, "nan", op.nan_ignore ? "ignore" : "propagate")};
    ValueId r = f.op1(op.code, operands, bt, a);
    ValueId o = f.bin(Opcode::Add, offs, f.splat(f.cint(i32, int64_t(k++) * n), bi));
    f.store(f.addptr(f.splat(out, bp), o), r);
  }
  f.ret();
  return compile_or_die(md.m, "ops");
}

std::vector<double> edge_values() {
  return {0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.0, 3.0, -2.5, 1e-40, -1e-40, FLT_MIN, FLT_MAX, -FLT_MAX,
          INFINITY, -INFINITY, NAN, 100.0, -100.0, 0.1, 89.0, -104.0, 1e10, 3.14159, 0.75, -0.3};
}

template <typename T>
void run_wide(Scalar s) {
  const std::vector<OpSpec> ops = float_ops();
  const int N = 1024;
  auto k = build_ops(s, ops, N);
  assert_non_null(k.get());
  std::vector<T> in[3];
  std::vector<double> e = edge_values();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < 3; ++j) {
      double x;
      if (j == 0 && i < int(e.size() * e.size())) x = e[i / e.size()];
      else if (j == 1 && i < int(e.size() * e.size())) x = e[i % e.size()];
      else x = (i % 5 == 0) ? u(rng) * 1000 : u(rng);
      in[j].push_back(static_cast<T>(x));
    }
  }
  std::vector<T> out(ops.size() * N);
  tri::ArgValue args[] = {ptr_arg(in[0].data()), ptr_arg(in[1].data()), ptr_arg(in[2].data()), ptr_arg(out.data())};
  assert_true(k->run(tri::Grid{}, args, 4, nullptr, {}).is_ok());
  int bad = 0;
  for (size_t o = 0; o < ops.size(); ++o) {
    const OpSpec& op = ops[o];
    for (int i = 0; i < N; ++i) {
      T a = in[0][i], b = in[1][i], c = in[2][i], got = out[o * N + i];
      bool ok;
      T want;
      if (op.code == Opcode::FMin || op.code == Opcode::FMax) {
        want = static_cast<T>(ref_minmax(op, a, b));
        if (op.nan_ignore && a == 0 && b == 0) ok = got == 0;
        else ok = (std::isnan(want) && std::isnan(got)) || (std::memcmp(&want, &got, sizeof(T)) == 0);
      } else if (op.exact) {
        if (op.name == "fma") want = sizeof(T) == 4 ? T(std::fmaf(a, b, c)) : T(std::fma(double(a), double(b), double(c)));
        else if (op.name == "frem" || op.name == "fmod") want = T(std::fmod(a, b));
        else if (op.name == "add") want = a + b;
        else if (op.name == "sub") want = a - b;
        else if (op.name == "mul") want = a * b;
        else if (op.name == "fdiv") want = a / b;
        else if (op.name == "sqrt") want = std::sqrt(a);
        else want = static_cast<T>(ref_op(op, a, b, c));
        ok = (std::isnan(want) && std::isnan(got)) || (std::memcmp(&want, &got, sizeof(T)) == 0);
      } else {
        long double r = ref_op(op, a, b, c);
        want = static_cast<T>(r);
        if (std::isnan(want) || std::isinf(want)) {
          ok = (std::isnan(want) && std::isnan(got)) || want == got;
        } else if (std::isnan(got) || std::isinf(got)) {
          ok = false;
        } else {
          int64_t d = sizeof(T) == 4 ? ulp_dist_f32(float(got), float(want)) : ulp_dist_f64(double(got), double(want));
          ok = d <= ulp_bound(op.name);
        }
      }
      if (!ok && bad++ < 12)
        std::fprintf(stderr, "%s %s(%.9g, %.9g, %.9g) = %.17g, want %.17g\n", tri::ir::scalar_name(s), op.name.c_str(),
                     double(a), double(b), double(c), double(got), double(want));
    }
  }
  assert_int_equal(bad, 0);
}

// Small floats: inputs are codes; the reference computes in f32 from the decoded values and
// rounds with ref_encode. Math functions may differ by one code (the f32 result is within 4 ulp).
void run_small(Scalar s) {
  const std::vector<OpSpec> ops = float_ops();
  const SmallFmt fmt = small_fmt(s);
  const int N = 1024;
  auto k = build_ops(s, ops, N);
  assert_non_null(k.get());
  std::mt19937 rng(11);
  const uint32_t mask = (1u << fmt.width) - 1;
  std::vector<uint16_t> in[3];
  for (int i = 0; i < N; ++i) {
    uint32_t a = fmt.width == 8 ? (i & 0xff) : (i < 64 ? (i * 1031) & mask : rng() & mask);
    in[0].push_back(a);
    in[1].push_back(rng() & mask);
    in[2].push_back(rng() & mask);
  }
  // Some operands near one another so that differences cancel, and small values.
  for (int i = 0; i < 64; ++i) in[1][i] = in[0][i] ^ 1;
  const size_t es = fmt.width / 8;
  std::vector<uint8_t> bytes[3];
  for (int j = 0; j < 3; ++j) {
    bytes[j].resize(N * es);
    for (int i = 0; i < N; ++i) std::memcpy(&bytes[j][i * es], &in[j][i], es);
  }
  std::vector<uint8_t> out(ops.size() * N * es);
  tri::ArgValue args[] = {ptr_arg(bytes[0].data()), ptr_arg(bytes[1].data()), ptr_arg(bytes[2].data()),
                          ptr_arg(out.data())};
  assert_true(k->run(tri::Grid{}, args, 4, nullptr, {}).is_ok());
  int bad = 0;
  for (size_t o = 0; o < ops.size(); ++o) {
    const OpSpec& op = ops[o];
    for (int i = 0; i < N; ++i) {
      uint32_t got = 0;
      std::memcpy(&got, &out[(o * N + i) * es], es);
      float a = float(ref_decode(s, in[0][i])), b = float(ref_decode(s, in[1][i])), c = float(ref_decode(s, in[2][i]));
      float r;  // the f32 result, computed in f32
      if (op.code == Opcode::FMin || op.code == Opcode::FMax) r = float(ref_minmax(op, a, b));
      else if (op.name == "add") r = a + b;
      else if (op.name == "sub") r = a - b;
      else if (op.name == "mul") r = a * b;
      else if (op.name == "fdiv") r = a / b;
      else if (op.name == "fma") r = std::fmaf(a, b, c);
      else if (op.name == "sqrt") r = std::sqrt(a);
      else r = float(ref_op(op, a, b, c));
      uint32_t want = ref_encode(s, r);
      bool ok;
      if (std::isnan(r)) {
        ok = ref_is_nan(s, got);
      } else if (op.code == Opcode::Neg || op.code == Opcode::Abs) {
        // Sign-bit operations: exact on every code, NaN included.
        uint32_t sb = 1u << (fmt.width - 1);
        ok = got == (op.code == Opcode::Neg ? (in[0][i] ^ sb) : (in[0][i] & ~sb));
      } else if ((op.code == Opcode::FMin || op.code == Opcode::FMax) && op.nan_ignore && a == 0 && b == 0) {
        ok = (got & ~(1u << (fmt.width - 1))) == 0;
      } else if (op.exact || (op.code == Opcode::FMin || op.code == Opcode::FMax)) {
        ok = got == want;
      } else {
        // Within one code of the correctly rounded f32 reference (same sign, or both zero).
        long double gv = ref_decode(s, got), wv = ref_decode(s, want);
        if (ref_is_nan(s, got)) ok = false;
        else if (std::isinf(wv) || std::isinf(gv)) ok = gv == wv || (std::fabs(ref_decode(s, got ^ 0)) > 0 && std::abs(int(got & 0x7fff) - int(want & 0x7fff)) <= 1 && (got >> (fmt.width - 1)) == (want >> (fmt.width - 1)));
        else ok = std::abs(int(got & ((1u << (fmt.width - 1)) - 1)) - int(want & ((1u << (fmt.width - 1)) - 1))) <= int(ulp_bound(op.name) / 4) &&
                  ((got >> (fmt.width - 1)) == (want >> (fmt.width - 1)) || gv == 0 || wv == 0);
      }
      if (!ok && bad++ < 12)
        std::fprintf(stderr, "%s %s(0x%x, 0x%x, 0x%x) = 0x%x, want 0x%x (f32 %.9g)\n", tri::ir::scalar_name(s),
                     op.name.c_str(), in[0][i], in[1][i], in[2][i], got, want, double(r));
    }
  }
  assert_int_equal(bad, 0);
}

void run_fcmp(Scalar s) {
  static const char* const preds[] = {"oeq", "one", "olt", "ole", "ogt", "oge", "ord",
                                      "ueq", "une", "ult", "ule", "ugt", "uge", "uno"};
  const int N = 32 * 32;
  Mod md;
  Fn f(&md.m, "cmp", true);
  ValueId a = f.param(md.p(s)), b = f.param(md.p(s)), out = f.param(md.p(Scalar::I1));
  TypeId bp = md.blk({N}, md.p(s)), bo = md.blk({N}, md.p(Scalar::I1)), bi = md.blk({N}, Scalar::I32);
  ValueId offs = f.arange(N);
  ValueId av = f.load(f.addptr(f.splat(a, bp), offs)), bv = f.load(f.addptr(f.splat(b, bp), offs));
  for (int p = 0; p < 14; ++p) {
    ValueId o = f.bin(Opcode::Add, offs, f.splat(f.cint(md.s(Scalar::I32), p * N), bi));
    f.store(f.addptr(f.splat(out, bo), o), f.fcmp(preds[p], av, bv));
  }
  f.ret();
  auto k = compile_or_die(md.m, "cmp");
  assert_non_null(k.get());
  std::vector<double> vals = {0.0, -0.0, 1.0, -1.0, 2.0, INFINITY, -INFINITY, NAN, 0.5, -0.5, 3.0, 1e-3};
  while (vals.size() < 32) vals.push_back(vals.size() * 0.25 - 3);
  const size_t es = s == Scalar::F64 ? 8 : s == Scalar::F32 ? 4 : small_fmt(s).width / 8;
  std::vector<uint8_t> A(N * es), B(N * es), O(14 * N);
  std::vector<double> av_(N), bv_(N);
  for (int i = 0; i < N; ++i) {
    double x = vals[i / 32], y = vals[i % 32];
    if (s == Scalar::F64) { std::memcpy(&A[i * 8], &x, 8); std::memcpy(&B[i * 8], &y, 8); }
    else if (s == Scalar::F32) { float fx = x, fy = y; std::memcpy(&A[i * 4], &fx, 4); std::memcpy(&B[i * 4], &fy, 4); }
    else {
      uint32_t cx = ref_encode(s, x), cy = ref_encode(s, y);
      std::memcpy(&A[i * es], &cx, es);
      std::memcpy(&B[i * es], &cy, es);
      x = ref_decode(s, cx);
      y = ref_decode(s, cy);
    }
    av_[i] = x;
    bv_[i] = y;
  }
  tri::ArgValue args[] = {ptr_arg(A.data()), ptr_arg(B.data()), ptr_arg(O.data())};
  assert_true(k->run(tri::Grid{}, args, 3, nullptr, {}).is_ok());
  for (int p = 0; p < 14; ++p)
    for (int i = 0; i < N; ++i) {
      double x = av_[i], y = bv_[i];
      bool un = std::isnan(x) || std::isnan(y);
      bool want;
      switch (p) {
        case 0: want = !un && x == y; break;
        case 1: want = !un && x != y; break;
        case 2: want = !un && x < y; break;
        case 3: want = !un && x <= y; break;
        case 4: want = !un && x > y; break;
        case 5: want = !un && x >= y; break;
        case 6: want = !un; break;
        case 7: want = un || x == y; break;
        case 8: want = un || x != y; break;
        case 9: want = un || x < y; break;
        case 10: want = un || x <= y; break;
        case 11: want = un || x > y; break;
        case 12: want = un || x >= y; break;
        default: want = un; break;
      }
      if (O[p * N + i] != (want ? 1 : 0)) fail_msg("%s fcmp %s(%g, %g) = %d", tri::ir::scalar_name(s), preds[p], x, y, O[p * N + i]);
    }
}

}  // namespace

// The inlined f32 exp, exp2, log, log2 and tanh (codegen/vec_math) over sweeps of the f32 range:
// every 2^11th bit pattern (all magnitudes, both signs) plus dense uniform samples where the
// functions are interesting, against double-precision references.
static void inline_math_sweep(void** state) {
  const char* names[] = {"exp", "exp2", "log", "log2", "tanh"};
  const Opcode codes[] = {Opcode::Exp, Opcode::Exp2, Opcode::Log, Opcode::Log2, Opcode::Tanh};
  const int64_t max_ulp[] = {1, 1, 1, 2, 2};
  const int N = 4096;
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId in = f.param(md.p(Scalar::F32)), out = f.param(md.p(Scalar::F32)), total = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), bi = md.blk({N}, Scalar::I32), bp = md.blk({N}, md.p(Scalar::F32));
  ValueId offs = f.bin(Opcode::Add, f.splat(f.bin(Opcode::Mul, f.pid(), f.cint(i32, N)), bi), f.arange(N));
  ValueId x = f.load(f.addptr(f.splat(in, bp), offs));
  for (int k = 0; k < 5; ++k) {
    ValueId o = f.bin(Opcode::Add, offs, f.splat(f.bin(Opcode::Mul, total, f.cint(i32, k)), bi));
    f.store(f.addptr(f.splat(out, bp), o), f.un(codes[k], x));
  }
  f.ret();
  auto kern = compile_or_die(md.m, "k");
  assert_non_null(kern.get());
  std::vector<float> xs;
  for (uint64_t u = 0; u < (1ull << 32); u += 2048) xs.push_back(f32_bits(uint32_t(u)));
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> wide(-110.0f, 110.0f), narrow(-2.0f, 2.0f), pos(0.0f, 4.0f);
  for (int i = 0; i < 200000; ++i) {
    xs.push_back(wide(rng));
    xs.push_back(narrow(rng));
    xs.push_back(pos(rng));
  }
  while (xs.size() % N) xs.push_back(0.0f);
  const int total_n = int(xs.size());
  std::vector<float> o(5 * xs.size());
  tri::ArgValue args[] = {ptr_arg(xs.data()), ptr_arg(o.data()), int_arg(total_n)};
  tri::ThreadPool pool(2);
  assert_true(kern->run(tri::Grid{uint32_t(total_n / N), 1, 1}, args, 3, &pool, {}).is_ok());
  for (int k = 0; k < 5; ++k) {
    int64_t worst = 0;
    float worst_x = 0;
    for (int i = 0; i < total_n; ++i) {
      double x = xs[i];
      double r = k == 0 ? std::exp(x) : k == 1 ? std::exp2(x) : k == 2 ? std::log(x) : k == 3 ? std::log2(x) : std::tanh(x);
      float want = float(r), got = o[size_t(k) * total_n + i];
      if (std::isnan(want) || std::isnan(got)) {
        if (std::isnan(want) != std::isnan(got)) fail_msg("%s(%.9g) = %.9g, want %.9g", names[k], x, got, want);
        continue;
      }
      int64_t d = (std::isinf(want) || std::isinf(got)) ? (want == got ? 0 : 1000) : ulp_dist_f32(got, want);
      if (d > worst) {
        worst = d;
        worst_x = float(x);
      }
    }
    std::printf("  %s: max %lld ulp (at %.9g)\n", names[k], (long long)worst, double(worst_x));
    if (worst > max_ulp[k]) fail_msg("%s is %lld ulp off at %.9g", names[k], (long long)worst, double(worst_x));
  }
}

static void ops_f32(void** state) { run_wide<float>(Scalar::F32); }
static void ops_f64(void** state) { run_wide<double>(Scalar::F64); }
static void ops_f16(void** state) { run_small(Scalar::F16); }
static void ops_bf16(void** state) { run_small(Scalar::BF16); }
static void ops_f8e4m3(void** state) { run_small(Scalar::F8E4M3); }
static void ops_f8e5m2(void** state) { run_small(Scalar::F8E5M2); }
static void fcmp_all(void** state) {
  for (Scalar s : {Scalar::F32, Scalar::F64, Scalar::F16, Scalar::BF16, Scalar::F8E4M3, Scalar::F8E5M2}) run_fcmp(s);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ops_f32),    cmocka_unit_test(ops_f64),    cmocka_unit_test(ops_f16),
      cmocka_unit_test(ops_bf16),   cmocka_unit_test(ops_f8e4m3), cmocka_unit_test(ops_f8e5m2),
      cmocka_unit_test(fcmp_all),   cmocka_unit_test(inline_math_sweep),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
