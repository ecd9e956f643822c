// The f32 math functions on the interpreter and the CPU backend, through the public API: each
// math op and math_call function applied by a kernel to about 100,000 inputs (special values:
// +-0, subnormals, +-FLT_MIN, +-FLT_MAX, +-inf, NaN; each function's thresholds and poles; large
// arguments for the trigonometric ones; every 65536th f32 bit pattern; dense points where the
// function does its work) and compared with the long double C library. Special results (NaN,
// infinities, zeros) must match in class and sign; the others must be within the function's
// bound, the same table docs/ir.md gives for every backend (CUDA's single-precision bounds; the
// GPU's math library is held to it by tests/codegen/test_mathlib.cpp). Prints the max ulp per
// function and target. The GPU is left out (its buffers are device memory): the host build of
// its math library gives the GPU's bits.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_main.h"
#include "tri/tri.h"

namespace {

struct Fn {
  const char* name;  // math_call name, or an op
  bool op;           // an IR op rather than math_call
  int arity;
  long double (*ref1)(long double);
  long double (*ref2)(long double, long double);
  double bound;  // max ulp
  double lo, hi;  // where the function does its work
};

long double lexp10(long double x) { return exp10l(x); }
long double llgamma(long double x) {
  int s;
  return lgammal_r(x, &s);
}
long double lrsqrt(long double x) { return 1 / sqrtl(x); }

// The bounds of docs/ir.md ("Math functions"): CUDA's single-precision table; lgamma's holds
// outside [-10.001, -2.264], inside which a result past it must be within 2^-20 absolute.
const Fn kFns[] = {
    {"exp", true, 1, expl, nullptr, 2, -104, 89},        {"exp2", true, 1, exp2l, nullptr, 2, -150, 128},
    {"log", true, 1, logl, nullptr, 1, 0, 10},            {"log2", true, 1, log2l, nullptr, 1, 0, 10},
    {"sin", true, 1, sinl, nullptr, 2, -100, 100},        {"cos", true, 1, cosl, nullptr, 2, -100, 100},
    {"tanh", true, 1, tanhl, nullptr, 2, -10, 10},        {"erf", true, 1, erfl, nullptr, 2, -5, 5},
    {"rsqrt", true, 1, lrsqrt, nullptr, 2, 0, 100},       {"pow", true, 2, nullptr, powl, 4, 0, 4},
    {"expm1", false, 1, expm1l, nullptr, 1, -20, 89},     {"log1p", false, 1, log1pl, nullptr, 1, -1, 10},
    {"log10", false, 1, log10l, nullptr, 2, 0, 10},       {"exp10", false, 1, lexp10, nullptr, 2, -45, 38},
    {"cbrt", false, 1, cbrtl, nullptr, 1, -10, 10},       {"sinh", false, 1, sinhl, nullptr, 3, -90, 90},
    {"cosh", false, 1, coshl, nullptr, 2, -90, 90},       {"tan", false, 1, tanl, nullptr, 4, -100, 100},
    {"asin", false, 1, asinl, nullptr, 2, -1, 1},         {"acos", false, 1, acosl, nullptr, 2, -1, 1},
    {"atan", false, 1, atanl, nullptr, 2, -50, 50},       {"asinh", false, 1, asinhl, nullptr, 3, -10, 10},
    {"acosh", false, 1, acoshl, nullptr, 4, 1, 10},       {"atanh", false, 1, atanhl, nullptr, 3, -1, 1},
    {"erfc", false, 1, erfcl, nullptr, 4, -4, 10},        {"lgamma", false, 1, llgamma, nullptr, 6, -20, 40},
    {"tgamma", false, 1, tgammal, nullptr, 5, -40, 36},   {"round", false, 1, roundl, nullptr, 0, -10, 10},
    {"trunc", false, 1, truncl, nullptr, 0, -10, 10},     {"atan2", false, 2, nullptr, atan2l, 3, -10, 10},
    {"hypot", false, 2, nullptr, hypotl, 3, -10, 10},     {"fmod", false, 2, nullptr, fmodl, 0, -10, 10},
    {"copysign", false, 2, nullptr, copysignl, 0, -10, 10},
};

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// |got - ref| in ulps of the f32 result format at ref (infinity counts as 2^128).
double ulp_error(float got, long double ref) {
  const long double top = 0x1p128L;
  long double g = std::isinf(got) ? std::copysign(top, (long double)got) : (long double)got;
  long double r = std::isinf(ref) || std::fabs(ref) > top ? std::copysign(top, ref) : ref;
  if (g == r) return 0;
  int e;
  std::frexp(r == 0 ? g : r, &e);
  if (e < -125) e = -125;
  return (double)(std::fabs(g - r) / std::ldexp((long double)1, e - 24));
}

// Exactly-determined results: NaN, infinities and zeros (the class and the sign must match).
bool special_ok(float got, long double ref) {
  if (std::isnan(ref)) return std::isnan(got);
  float want = (float)ref;
  if (std::isinf(ref) || ref == 0) return !std::isnan(got) && got == want && std::signbit(got) == std::signbit(want);
  return true;
}

std::vector<float> inputs(const Fn& f, std::mt19937& rng) {
  std::vector<float> v;
  auto both = [&](float x) {
    v.push_back(x);
    v.push_back(-x);
  };
  for (float x : {0.0f, 0x1p-149f, 0x1.fffffcp-127f, 0x1p-130f, FLT_MIN, FLT_MAX, INFINITY, NAN, 1.0f, 0.5f, 2.0f, 3.0f,
                  10.0f, 1e-8f, 1e10f, 1e20f, 3e38f, 0x1p17f, 0x1p24f, 88.7228394f, 87.3365479f, 103.972084f, 104.0f,
                  89.4159851f, 38.5318394f, 45.1544991f, 9.19455242f, 10.0542f, 3.9192f, 35.0401001f, 4.08e36f})
    both(x);
  for (int k = 1; k <= 30; ++k) {  // poles and half-integers of the gamma functions, multiples of pi/2
    both((float)k);
    both(k + 0.5f);
    both(std::nextafter((float)k, 0.0f));
    both((float)(k * M_PI / 2));
  }
  for (float c : {1.0f, 0.5f, 2.0f}) {  // around the points where results are 0 or cancel
    float a = c, b = c;
    for (int i = 0; i < 16; ++i) {
      a = std::nextafter(a, 0.0f);
      b = std::nextafter(b, INFINITY);
      both(a);
      both(b);
    }
  }
  for (uint64_t b = 0x1234; b < (uint64_t(1) << 32); b += 65536) v.push_back(from_bits((uint32_t)b));
  std::uniform_real_distribution<double> u(f.lo, f.hi);
  for (int i = 0; i < 32768; ++i) v.push_back((float)u(rng));
  return v;
}

const char kTemplate[] =
    "kernel @k(%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 1024) {\n"
    "  %pid = program_id[axis=0] : i32\n"
    "  %bs = const[value=BLOCK] : i32\n"
    "  %start = mul %pid, %bs : i32\n"
    "  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>\n"
    "  %sv = splat %start : <BLOCK x i32>\n"
    "  %offs = add %sv, %r : <BLOCK x i32>\n"
    "  %nv = splat %n : <BLOCK x i32>\n"
    "  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>\n"
    "  %xb = splat %x : <BLOCK x ptr<f32>>\n"
    "  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>\n"
    "  %yb = splat %y : <BLOCK x ptr<f32>>\n"
    "  %yp = addptr %yb, %offs : <BLOCK x ptr<f32>>\n"
    "  %a = load %xp, mask=%mask : <BLOCK x f32>\n"
    "  %b = load %yp, mask=%mask : <BLOCK x f32>\n"
    "  %f = EXPR : <BLOCK x f32>\n"
    "  %ob = splat %out : <BLOCK x ptr<f32>>\n"
    "  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>\n"
    "  store %op, %f, mask=%mask\n"
    "  return\n"
    "}\n";

std::string kernel_text(const Fn& f) {
  std::string e = f.op ? std::string(f.name) + " %a" : "math_call[name=\"" + std::string(f.name) + "\"] %a";
  if (f.arity == 2) e += ", %b";
  std::string t = kTemplate;
  t.replace(t.find("EXPR"), 4, e);
  return t;
}

std::string last_error() {
  char buf[4096];
  tri_last_error_message(buf, sizeof buf);
  return buf;
}

tri_arg ptr_arg(const void* p, uint64_t bytes) {
  tri_arg a;
  std::memset(&a, 0, sizeof a);
  a.value.p = p;
  a.extent = bytes;
  a.kind = TRI_TYPE_POINTER;
  a.dtype = TRI_DTYPE_F32;
  return a;
}

// Runs f on (x, y) on `target`; false if the target is absent.
bool run(tri_context* ctx, const Fn& f, const char* target, const std::vector<float>& x, const std::vector<float>& y,
         std::vector<float>* out) {
  std::string text = kernel_text(f);
  tri_module* m = nullptr;
  if (tri_module_create(ctx, text.data(), text.size(), "math.tri", &m) != TRI_OK)
    fail_msg("%s: %s", f.name, last_error().c_str());
  tri_compile_options* o = nullptr;
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, target), TRI_OK);
  tri_kernel* k = nullptr;
  tri_result r = tri_kernel_compile(m, "k", o, &k);
  tri_compile_options_destroy(o);
  if (r != TRI_OK) {
    tri_module_destroy(m);
    if (std::string(target) == "cpu" && r == TRI_ERROR_UNSUPPORTED) return false;  // a build without the CPU backend
    fail_msg("%s on %s: %s", f.name, target, last_error().c_str());
  }
  out->assign(x.size(), 0.0f);
  tri_arg args[4] = {ptr_arg(x.data(), x.size() * 4), ptr_arg(y.data(), y.size() * 4),
                     ptr_arg(out->data(), out->size() * 4)};
  std::memset(&args[3], 0, sizeof args[3]);
  args[3].value.i = (int64_t)x.size();
  args[3].kind = TRI_TYPE_SCALAR;
  args[3].dtype = TRI_DTYPE_I32;
  uint32_t grid = (uint32_t)((x.size() + 1023) / 1024);
  if (tri_launch(k, grid, 1, 1, nullptr, args, 4) != TRI_OK)
    fail_msg("%s on %s: launch: %s", f.name, target, last_error().c_str());
  tri_kernel_destroy(k);
  tri_module_destroy(m);
  return true;
}

void test_math_accuracy(void** state) {
  tri_context* ctx = nullptr;
  assert_int_equal(tri_context_create(nullptr, TRI_VERSION_NUMBER, &ctx), TRI_OK);
  std::printf("%-9s %5s %8s | %-10s %-16s | %-10s %-16s\n", "function", "bound", "inputs", "interp", "at", "cpu", "at");
  int failures = 0;
  for (const Fn& f : kFns) {
    std::mt19937 rng(42);
    std::vector<float> x = inputs(f, rng), y;
    if (f.arity == 2) {  // the second argument: the same kinds of values, shuffled, and a moderate range
      y = x;
      std::shuffle(y.begin(), y.end(), rng);
      std::uniform_real_distribution<double> u(-12, 12);
      for (size_t i = 0; i < y.size(); i += 2) y[i] = (float)u(rng);
    } else {
      y.assign(x.size(), 0.0f);
    }
    std::printf("%-9s %5g %8zu", f.name, f.bound, x.size());
    for (const char* target : {"interp", "cpu"}) {
      std::vector<float> out;
      if (!run(ctx, f, target, x, y, &out)) {
        std::printf(" | %-27s", "(no CPU backend)");
        continue;
      }
      double worst = 0;
      float worst_x = 0;
      int bad = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        long double ref = f.arity == 1 ? f.ref1(x[i]) : f.ref2(x[i], y[i]);
        bool special = std::isnan(ref) || std::isinf(ref) || ref == 0 || std::isnan(x[i]) || std::isinf(x[i]);
        if (special) {
          if (!special_ok(out[i], ref) && bad++ < 5)
            std::printf("\n  %s %s(%a, %a) = %a, want %La", target, f.name, x[i], y[i], out[i], ref);
          continue;
        }
        double e = ulp_error(out[i], ref);
        if (std::string(f.name) == "lgamma" && x[i] < -2.264f && x[i] > -10.001f && e > f.bound) {
          if (std::fabs((long double)out[i] - ref) >= 0x1p-20L && bad++ < 5)
            std::printf("\n  %s lgamma(%a) = %a, want %La (absolute error 2^-20)", target, x[i], out[i], ref);
          continue;
        }
        if (e > worst) {
          worst = e;
          worst_x = x[i];
        }
        if (e > f.bound && bad++ < 5)
          std::printf("\n  %s %s(%a, %a) = %a, want %La (%.2f ulp)", target, f.name, x[i], y[i], out[i], ref, e);
      }
      if (bad) std::printf("\n  %s: %d outside the bound\n%-24s", target, bad, "");
      std::printf(" | %-10.3f %-16a", worst, worst_x);
      failures += bad;
    }
    std::printf("\n");
  }
  tri_context_destroy(ctx);
  assert_int_equal(failures, 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_math_accuracy)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
