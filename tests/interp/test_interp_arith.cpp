// Elementwise ops through whole kernels (masked loads of a non-power-of-two count, the op, a
// masked store), checked against C computed in the test: every integer op over all i8 pairs and
// over edge values of i1/i16/i32/i64, float ops on f32/f64/f16/bf16/f8 edge values (NaN, inf,
// -0.0, denormals), comparisons, select, every cast, and every math_call name.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "test_main.h"

using namespace tri_test;

namespace {

const Opcode kIntOps[] = {Opcode::Add,  Opcode::Sub,  Opcode::Mul,    Opcode::SDiv, Opcode::UDiv,
                          Opcode::SRem, Opcode::URem, Opcode::CDiv,   Opcode::UMulHi, Opcode::And,
                          Opcode::Or,   Opcode::Xor,  Opcode::Shl,    Opcode::LShr, Opcode::AShr,
                          Opcode::SMin, Opcode::SMax, Opcode::UMin,   Opcode::UMax};

bool is_div(Opcode c) {
  return c == Opcode::SDiv || c == Opcode::UDiv || c == Opcode::SRem || c == Opcode::URem || c == Opcode::CDiv;
}

// docs/ir.md's integer rules for a type with signed S and unsigned U of its width (8..64 bits).
// Divisors are never zero here. Everything is computed in the type itself or in a wider one, so
// that C's own overflow rules never apply.
template <class S, class U>
U ref_int(Opcode c, U a, U b) {
  constexpr int w = sizeof(U) * 8;
  const S sa = static_cast<S>(a), sb = static_cast<S>(b);
  const S smin = std::numeric_limits<S>::min();
  auto sdiv = [&](S x, S y) -> U { return (x == smin && y == -1) ? static_cast<U>(smin) : static_cast<U>(x / y); };
  switch (c) {
    case Opcode::Add: return static_cast<U>(a + b);
    case Opcode::Sub: return static_cast<U>(a - b);
    case Opcode::Mul: return static_cast<U>(static_cast<unsigned __int128>(a) * b);
    case Opcode::SDiv: return sdiv(sa, sb);
    case Opcode::UDiv: return static_cast<U>(a / b);
    case Opcode::SRem: return (sa == smin && sb == -1) ? 0 : static_cast<U>(sa % sb);
    case Opcode::URem: return static_cast<U>(a % b);
    case Opcode::CDiv: return sdiv(static_cast<S>(static_cast<U>(a + b - 1)), sb);
    case Opcode::UMulHi: return static_cast<U>((static_cast<unsigned __int128>(a) * b) >> w);
    case Opcode::And: return a & b;
    case Opcode::Or: return a | b;
    case Opcode::Xor: return a ^ b;
    case Opcode::Shl: return b >= w ? 0 : static_cast<U>(static_cast<uint64_t>(a) << b);
    case Opcode::LShr: return b >= w ? 0 : static_cast<U>(a >> b);
    case Opcode::AShr: return b >= w ? (sa < 0 ? static_cast<U>(-1) : 0) : static_cast<U>(sa >> b);
    case Opcode::SMin: return sa < sb ? a : b;
    case Opcode::SMax: return sa > sb ? a : b;
    case Opcode::UMin: return a < b ? a : b;
    case Opcode::UMax: return a > b ? a : b;
    default: break;
  }
  std::abort();
}

template <class S, class U>
void check_int_ops(Scalar s, const std::vector<U>& as, const std::vector<U>& bs) {
  for (Opcode c : kIntOps) {
    std::vector<uint64_t> x, y;
    for (U a : as)
      for (U b : bs) {
        if (is_div(c) && b == 0) continue;
        x.push_back(a);
        y.push_back(b);
      }
    Status st;
    std::vector<uint64_t> got = run_elementwise(c, {s, s}, s, {x, y}, {}, &st);
    if (!st.is_ok()) fail_msg("%s: %s", tri::ir::op_info(c).name.c_str(), st.message().c_str());
    for (size_t i = 0; i < x.size(); ++i) {
      U want = ref_int<S, U>(c, static_cast<U>(x[i]), static_cast<U>(y[i]));
      if (got[i] != want)
        fail_msg("%s %s(0x%llx, 0x%llx) = 0x%llx, want 0x%llx", tri::ir::scalar_name(s),
                 tri::ir::op_info(c).name.c_str(), (unsigned long long)x[i], (unsigned long long)y[i],
                 (unsigned long long)got[i], (unsigned long long)want);
    }
  }
}

template <class U>
std::vector<U> int_edges(uint64_t seed) {
  using S = std::make_signed_t<U>;
  std::vector<U> v = {0, 1, 2, 3, 7, static_cast<U>(-1), static_cast<U>(-2), static_cast<U>(-7),
                      static_cast<U>(std::numeric_limits<S>::min()), static_cast<U>(std::numeric_limits<S>::max()),
                      static_cast<U>(std::numeric_limits<S>::min() + 1), static_cast<U>(sizeof(U) * 8),
                      static_cast<U>(sizeof(U) * 8 - 1), static_cast<U>(sizeof(U) * 8 + 1)};
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 12; ++i) v.push_back(static_cast<U>(rng()));
  return v;
}

void int_ops_all_i8_pairs(void**) {
  std::vector<uint8_t> all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<uint8_t>(i));
  check_int_ops<int8_t, uint8_t>(Scalar::I8, all, all);
}

void int_ops_wider_edges(void**) {
  check_int_ops<int16_t, uint16_t>(Scalar::I16, int_edges<uint16_t>(1), int_edges<uint16_t>(2));
  check_int_ops<int32_t, uint32_t>(Scalar::I32, int_edges<uint32_t>(3), int_edges<uint32_t>(4));
  check_int_ops<int64_t, uint64_t>(Scalar::I64, int_edges<uint64_t>(5), int_edges<uint64_t>(6));
}

void int_ops_i1(void**) {
  // i1 read signed is {0, -1}; read unsigned {0, 1}. Expected tables for a, b in (0,0) (0,1) (1,0) (1,1).
  struct Row {
    Opcode c;
    uint64_t r[4];
  };
  const Row rows[] = {
      {Opcode::Add, {0, 1, 1, 0}},  {Opcode::Sub, {0, 1, 1, 0}},  {Opcode::Mul, {0, 0, 0, 1}},
      {Opcode::UMulHi, {0, 0, 0, 0}},
      {Opcode::And, {0, 0, 0, 1}},  {Opcode::Or, {0, 1, 1, 1}},   {Opcode::Xor, {0, 1, 1, 0}},
      {Opcode::Shl, {0, 0, 1, 0}},  {Opcode::LShr, {0, 0, 1, 0}}, {Opcode::AShr, {0, 0, 1, 1}},
      {Opcode::SMin, {0, 1, 1, 1}}, {Opcode::SMax, {0, 0, 0, 1}}, {Opcode::UMin, {0, 0, 0, 1}},
      {Opcode::UMax, {0, 1, 1, 1}},
  };
  for (const Row& row : rows) {
    std::vector<uint64_t> got = run_elementwise(row.c, {Scalar::I1, Scalar::I1}, Scalar::I1, {{0, 0, 1, 1}, {0, 1, 0, 1}});
    assert_int_equal(got.size(), 4);
    for (int i = 0; i < 4; ++i)
      if (got[i] != row.r[i]) fail_msg("i1 %s case %d: %llu", tri::ir::op_info(row.c).name.c_str(), i, (unsigned long long)got[i]);
  }
  // Division by true (-1 signed, 1 unsigned): sdiv(-1, -1) = 1 wraps to -1; remainders are 0;
  // cdiv(a, -1) = sdiv(a - 2, -1) = -a, which is a in one bit.
  const Row divs[] = {{Opcode::SDiv, {0, 0, 1, 1}}, {Opcode::UDiv, {0, 0, 1, 1}}, {Opcode::SRem, {0, 0, 0, 0}},
                      {Opcode::URem, {0, 0, 0, 0}}, {Opcode::CDiv, {0, 0, 1, 1}}};
  for (const Row& row : divs) {
    std::vector<uint64_t> got = run_elementwise(row.c, {Scalar::I1, Scalar::I1}, Scalar::I1, {{0, 0, 1, 1}, {1, 1, 1, 1}});
    for (int i = 0; i < 4; ++i)
      if (got[i] != row.r[i]) fail_msg("i1 %s case %d: %llu", tri::ir::op_info(row.c).name.c_str(), i, (unsigned long long)got[i]);
  }
  // neg/abs of true (-1) are true.
  assert_true(run_elementwise(Opcode::Neg, {Scalar::I1}, Scalar::I1, {{0, 1}}) == std::vector<uint64_t>({0, 1}));
  assert_true(run_elementwise(Opcode::Abs, {Scalar::I1}, Scalar::I1, {{0, 1}}) == std::vector<uint64_t>({0, 1}));
}

void int_neg_abs_wrap(void**) {
  std::vector<uint64_t> in = {0, 1, 0xffffffff, 0x80000000, 0x7fffffff, 12345};
  std::vector<uint64_t> neg = run_elementwise(Opcode::Neg, {Scalar::I32}, Scalar::I32, {in});
  std::vector<uint64_t> abs = run_elementwise(Opcode::Abs, {Scalar::I32}, Scalar::I32, {in});
  for (size_t i = 0; i < in.size(); ++i) {
    int32_t v = static_cast<int32_t>(in[i]);
    uint32_t n = 0u - static_cast<uint32_t>(v);
    assert_int_equal(neg[i], n);
    assert_int_equal(abs[i], v < 0 ? n : static_cast<uint32_t>(v));
  }
  assert_int_equal(abs[3], 0x80000000);  // abs(INT_MIN) is INT_MIN
  std::vector<uint64_t> in64 = {0x8000000000000000ull, 5, static_cast<uint64_t>(-5)};
  std::vector<uint64_t> abs64 = run_elementwise(Opcode::Abs, {Scalar::I64}, Scalar::I64, {in64});
  assert_int_equal(abs64[0], 0x8000000000000000ull);
  assert_int_equal(abs64[1], 5);
  assert_int_equal(abs64[2], 5);
}

void division_by_zero(void**) {
  // Unchecked: every division or remainder by zero gives 0 (the interpreter's pick of the
  // unspecified value). Checked: the first active lane with a zero divisor is reported.
  for (Opcode c : {Opcode::SDiv, Opcode::UDiv, Opcode::SRem, Opcode::URem, Opcode::CDiv}) {
    Status st;
    std::vector<uint64_t> got =
        run_elementwise(c, {Scalar::I32, Scalar::I32}, Scalar::I32, {{7, 0x80000000, 5}, {0, 0, 2}}, {}, &st, false);
    assert_true(st.is_ok());
    assert_int_equal(got[0], 0);
    assert_int_equal(got[1], 0);
    assert_int_equal(got[2], (ref_int<int32_t, uint32_t>(c, 5, 2)));
  }
  Status st;
  std::vector<uint64_t> x(70, 1), y(70, 1);
  y[67] = 0;  // lane 3 of program 1
  run_elementwise(Opcode::SDiv, {Scalar::I32, Scalar::I32}, Scalar::I32, {x, y}, {}, &st, true);
  assert_int_equal(st.code(), Code::Runtime);
  assert_string_equal(st.message().c_str(), "t.tri:20:7: error: 'sdiv' lane [3] of <64 x i32> divides by zero; program (1, 0, 0)");
  // The first zero divisor is the one reported.
  run_elementwise(Opcode::URem, {Scalar::I8, Scalar::I8}, Scalar::I8, {{1, 2, 3}, {0, 0, 1}}, {}, &st, true);
  assert_string_equal(st.message().c_str(), "t.tri:20:7: error: 'urem' lane [0] of <64 x i8> divides by zero; program (0, 0, 0)");
}

// ---- floats

std::vector<float> f32_edges() {
  return {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 3.7f, -2.5f, 1e-3f, 100.0f, -1e30f, 1e30f,
          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
          std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(),
          -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
          std::numeric_limits<float>::max(), 0.1f, 7.0f, -3.0f};
}

bool same_f32(uint64_t got, float want) {
  float g = bits_f32(static_cast<uint32_t>(got));
  if (want != want) return g != g;
  return static_cast<uint32_t>(got) == f32_bits(want);
}
bool same_f64(uint64_t got, double want) {
  double g = bits_f64(got);
  if (want != want) return g != g;
  return got == f64_bits(want);
}

float ref_fmin(float a, float b, bool prop) {
  if (a != a || b != b) return prop ? std::numeric_limits<float>::quiet_NaN() : (a != a ? b : a);
  if (a == 0 && b == 0) return (std::signbit(a) || std::signbit(b)) ? -0.0f : 0.0f;
  return a < b ? a : b;
}
float ref_fmax(float a, float b, bool prop) {
  if (a != a || b != b) return prop ? std::numeric_limits<float>::quiet_NaN() : (a != a ? b : a);
  if (a == 0 && b == 0) return (std::signbit(a) && std::signbit(b)) ? -0.0f : 0.0f;
  return a > b ? a : b;
}

struct FloatCase {
  Opcode code;
  int arity;
  std::function<float(float, float, float)> f;
  std::function<double(double, double, double)> d;
};

std::vector<FloatCase> float_cases() {
  return {
      {Opcode::Add, 2, [](float a, float b, float) { return a + b; }, [](double a, double b, double) { return a + b; }},
      {Opcode::Sub, 2, [](float a, float b, float) { return a - b; }, [](double a, double b, double) { return a - b; }},
      {Opcode::Mul, 2, [](float a, float b, float) { return a * b; }, [](double a, double b, double) { return a * b; }},
      {Opcode::FDiv, 2, [](float a, float b, float) { return a / b; }, [](double a, double b, double) { return a / b; }},
      {Opcode::FRem, 2, [](float a, float b, float) { return fmodf(a, b); }, [](double a, double b, double) { return fmod(a, b); }},
      {Opcode::Pow, 2, [](float a, float b, float) { return powf(a, b); }, [](double a, double b, double) { return pow(a, b); }},
      {Opcode::Fma, 3, [](float a, float b, float c) { return fmaf(a, b, c); }, [](double a, double b, double c) { return fma(a, b, c); }},
      {Opcode::Neg, 1, [](float a, float, float) { return -a; }, [](double a, double, double) { return -a; }},
      {Opcode::Abs, 1, [](float a, float, float) { return fabsf(a); }, [](double a, double, double) { return fabs(a); }},
      {Opcode::Exp, 1, [](float a, float, float) { return expf(a); }, [](double a, double, double) { return exp(a); }},
      {Opcode::Exp2, 1, [](float a, float, float) { return exp2f(a); }, [](double a, double, double) { return exp2(a); }},
      {Opcode::Log, 1, [](float a, float, float) { return logf(a); }, [](double a, double, double) { return log(a); }},
      {Opcode::Log2, 1, [](float a, float, float) { return log2f(a); }, [](double a, double, double) { return log2(a); }},
      {Opcode::Sqrt, 1, [](float a, float, float) { return sqrtf(a); }, [](double a, double, double) { return sqrt(a); }},
      {Opcode::Rsqrt, 1, [](float a, float, float) { return 1.0f / sqrtf(a); }, [](double a, double, double) { return 1.0 / sqrt(a); }},
      {Opcode::Sin, 1, [](float a, float, float) { return sinf(a); }, [](double a, double, double) { return sin(a); }},
      {Opcode::Cos, 1, [](float a, float, float) { return cosf(a); }, [](double a, double, double) { return cos(a); }},
      {Opcode::Tanh, 1, [](float a, float, float) { return tanhf(a); }, [](double a, double, double) { return tanh(a); }},
      {Opcode::Erf, 1, [](float a, float, float) { return erff(a); }, [](double a, double, double) { return erf(a); }},
      {Opcode::Floor, 1, [](float a, float, float) { return floorf(a); }, [](double a, double, double) { return floor(a); }},
      {Opcode::Ceil, 1, [](float a, float, float) { return ceilf(a); }, [](double a, double, double) { return ceil(a); }},
      {Opcode::FMin, 2, [](float a, float b, float) { return ref_fmin(a, b, true); }, nullptr},
      {Opcode::FMax, 2, [](float a, float b, float) { return ref_fmax(a, b, true); }, nullptr},
  };
}

// All arity-tuples of the edge values (the third operand of fma from a short list).
void tuples(int arity, const std::vector<float>& e, std::vector<std::vector<float>>* out) {
  out->assign(3, {});
  std::vector<float> thirds = arity == 3 ? std::vector<float>{0.0f, -0.0f, 1.0f, -1e30f,
                                                              std::numeric_limits<float>::infinity()}
                                         : std::vector<float>{0.0f};
  for (float a : e)
    for (float b : (arity >= 2 ? e : std::vector<float>{0.0f}))
      for (float c : thirds) {
        (*out)[0].push_back(a);
        (*out)[1].push_back(b);
        (*out)[2].push_back(c);
      }
}

void float_ops_f32_f64(void**) {
  for (const FloatCase& fc : float_cases()) {
    std::vector<std::vector<float>> t;
    tuples(fc.arity, f32_edges(), &t);
    std::vector<Scalar> ts(fc.arity, Scalar::F32), td(fc.arity, Scalar::F64);
    std::vector<std::vector<uint64_t>> in32(fc.arity), in64(fc.arity);
    for (int k = 0; k < fc.arity; ++k)
      for (float v : t[k]) {
        in32[k].push_back(f32_bits(v));
        in64[k].push_back(f64_bits(static_cast<double>(v) * 1.000000001));
      }
    std::vector<uint64_t> g32 = run_elementwise(fc.code, ts, Scalar::F32, in32);
    std::vector<uint64_t> g64 = run_elementwise(fc.code, td, Scalar::F64, in64);
    assert_int_equal(g32.size(), t[0].size());
    for (size_t i = 0; i < t[0].size(); ++i) {
      float want = fc.f(t[0][i], t[1][i], t[2][i]);
      if (!same_f32(g32[i], want))
        fail_msg("f32 %s(%a, %a, %a) = %a, want %a", tri::ir::op_info(fc.code).name.c_str(), t[0][i], t[1][i], t[2][i],
                 bits_f32(static_cast<uint32_t>(g32[i])), want);
      if (!fc.d) continue;
      double a = bits_f64(in64[0][i]), b = fc.arity > 1 ? bits_f64(in64[1][i]) : 0,
             c = fc.arity > 2 ? bits_f64(in64[2][i]) : 0;
      double wd = fc.d(a, b, c);
      if (!same_f64(g64[i], wd))
        fail_msg("f64 %s(%a, %a, %a) = %a, want %a", tri::ir::op_info(fc.code).name.c_str(), a, b, c, bits_f64(g64[i]), wd);
    }
  }
}

void fmin_fmax_nan_policies(void**) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<uint64_t> a = {f32_bits(nan), f32_bits(1.0f), f32_bits(nan), f32_bits(-0.0f), f32_bits(0.0f), f32_bits(2.0f)};
  std::vector<uint64_t> b = {f32_bits(1.0f), f32_bits(nan), f32_bits(nan), f32_bits(0.0f), f32_bits(-0.0f), f32_bits(-3.0f)};
  Attr ignore = enum_attr(Opcode::FMin, "nan", "ignore");
  std::vector<uint64_t> mn_p = run_elementwise(Opcode::FMin, {Scalar::F32, Scalar::F32}, Scalar::F32, {a, b});
  std::vector<uint64_t> mx_p = run_elementwise(Opcode::FMax, {Scalar::F32, Scalar::F32}, Scalar::F32, {a, b});
  std::vector<uint64_t> mn_i = run_elementwise(Opcode::FMin, {Scalar::F32, Scalar::F32}, Scalar::F32, {a, b}, {ignore});
  std::vector<uint64_t> mx_i = run_elementwise(Opcode::FMax, {Scalar::F32, Scalar::F32}, Scalar::F32, {a, b}, {ignore});
  const float want_mn_p[] = {nan, nan, nan, -0.0f, -0.0f, -3.0f};
  const float want_mx_p[] = {nan, nan, nan, 0.0f, 0.0f, 2.0f};
  const float want_mn_i[] = {1.0f, 1.0f, nan, -0.0f, -0.0f, -3.0f};
  const float want_mx_i[] = {1.0f, 1.0f, nan, 0.0f, 0.0f, 2.0f};
  for (int i = 0; i < 6; ++i) {
    assert_true(same_f32(mn_p[i], want_mn_p[i]));
    assert_true(same_f32(mx_p[i], want_mx_p[i]));
    assert_true(same_f32(mn_i[i], want_mn_i[i]));
    assert_true(same_f32(mx_i[i], want_mx_i[i]));
  }
}

// f16: computed in f32 and rounded once per op; the compiler's _Float16 conversion is the judge.
void float_ops_f16_bf16(void**) {
  std::vector<float> e = f32_edges();
  for (float& v : e) v = static_cast<float>(static_cast<_Float16>(v));  // representable in f16
  e.push_back(65504.0f);
  e.push_back(6.1035156e-05f);  // smallest normal
  e.push_back(5.9604645e-08f);  // smallest denormal
  for (const FloatCase& fc : float_cases()) {
    std::vector<std::vector<float>> t;
    tuples(fc.arity, e, &t);
    for (auto& col : t)
      for (float& v : col) v = static_cast<float>(static_cast<_Float16>(v));
    std::vector<Scalar> ts(fc.arity, Scalar::F16), tb(fc.arity, Scalar::BF16);
    std::vector<std::vector<uint64_t>> in16(fc.arity), inb(fc.arity);
    for (int k = 0; k < fc.arity; ++k)
      for (float v : t[k]) {
        in16[k].push_back(f16_bits(static_cast<_Float16>(v)));
        inb[k].push_back(f32_bits(v) >> 16);  // bf16 inputs: the top half of the f32 pattern
      }
    std::vector<uint64_t> g16 = run_elementwise(fc.code, ts, Scalar::F16, in16);
    std::vector<uint64_t> gb = run_elementwise(fc.code, tb, Scalar::BF16, inb);
    for (size_t i = 0; i < t[0].size(); ++i) {
      float want = fc.f(t[0][i], t[1][i], t[2][i]);
      _Float16 w16 = static_cast<_Float16>(want);
      uint16_t g = static_cast<uint16_t>(g16[i]);
      bool ok = want != want ? (bits_f16(g) != bits_f16(g)) : g == f16_bits(w16);
      if (!ok)
        fail_msg("f16 %s(%a, %a, %a) = 0x%04x, want 0x%04x", tri::ir::op_info(fc.code).name.c_str(), t[0][i], t[1][i],
                 t[2][i], g, f16_bits(w16));
      // bf16: inputs are the truncated f32 patterns; the result is the f32 result rounded to
      // nearest even on its top 16 bits.
      float x = bits_f32(static_cast<uint32_t>(inb[0][i]) << 16);
      float y = fc.arity > 1 ? bits_f32(static_cast<uint32_t>(inb[1][i]) << 16) : 0;
      float z = fc.arity > 2 ? bits_f32(static_cast<uint32_t>(inb[2][i]) << 16) : 0;
      float wb = fc.f(x, y, z);
      uint32_t u = f32_bits(wb);
      uint16_t gbv = static_cast<uint16_t>(gb[i]);
      if (wb != wb) {
        assert_true((gbv & 0x7f80) == 0x7f80 && (gbv & 0x7f) != 0);
      } else if (gbv != ((u + 0x7fff + ((u >> 16) & 1)) >> 16)) {
        fail_msg("bf16 %s(%a, %a, %a) = 0x%04x", tri::ir::op_info(fc.code).name.c_str(), x, y, z, gbv);
      }
    }
  }
}

void float_ops_f8(void**) {
  // e4m3fn: 1.5 + 1.5 = 3 (0x44); 448 + 64 = 512 saturates to 448 (0x7e); 0x7f is NaN.
  std::vector<uint64_t> g = run_elementwise(Opcode::Add, {Scalar::F8E4M3, Scalar::F8E4M3}, Scalar::F8E4M3,
                                            {{0x3c, 0x7e, 0x7f, 0x01}, {0x3c, 0x50, 0x38, 0x81}});
  assert_int_equal(g[0], 0x44);
  assert_int_equal(g[1], 0x7e);
  assert_true((g[2] & 0x7f) == 0x7f);
  assert_int_equal(g[3], 0x00);  // 2^-9 - 2^-9 = +0
  // e5m2: 57344 * 2 overflows to inf (0x7c); 1.25 * 1.25 = 1.5625 rounds to 1.5 (0x3e).
  g = run_elementwise(Opcode::Mul, {Scalar::F8E5M2, Scalar::F8E5M2}, Scalar::F8E5M2, {{0x7b, 0x3d}, {0x40, 0x3d}});
  assert_int_equal(g[0], 0x7c);
  assert_int_equal(g[1], 0x3e);
}

// ---- comparisons and select

void cmp_all_predicates(void**) {
  const char* preds[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
  std::vector<uint64_t> a, b;
  for (int x = 0; x < 256; x += 3)
    for (int y = 0; y < 256; y += 5) {
      a.push_back(x);
      b.push_back(y);
    }
  for (const char* p : preds) {
    std::vector<uint64_t> got = run_elementwise(Opcode::Cmp, {Scalar::I8, Scalar::I8}, Scalar::I1, {a, b},
                                                {enum_attr(Opcode::Cmp, "pred", p)});
    std::string ps = p;
    for (size_t i = 0; i < a.size(); ++i) {
      int8_t sa = static_cast<int8_t>(a[i]), sb = static_cast<int8_t>(b[i]);
      uint8_t ua = static_cast<uint8_t>(a[i]), ub = static_cast<uint8_t>(b[i]);
      bool w = ps == "eq" ? ua == ub : ps == "ne" ? ua != ub : ps == "slt" ? sa < sb : ps == "sle" ? sa <= sb
             : ps == "sgt" ? sa > sb : ps == "sge" ? sa >= sb : ps == "ult" ? ua < ub : ps == "ule" ? ua <= ub
             : ps == "ugt" ? ua > ub : ua >= ub;
      if (got[i] != static_cast<uint64_t>(w)) fail_msg("cmp %s(%d, %d)", p, sa, sb);
    }
  }
  // 64-bit signed vs unsigned at the sign boundary.
  std::vector<uint64_t> got = run_elementwise(Opcode::Cmp, {Scalar::I64, Scalar::I64}, Scalar::I1,
                                              {{0x8000000000000000ull}, {1}}, {enum_attr(Opcode::Cmp, "pred", "slt")});
  assert_int_equal(got[0], 1);
  got = run_elementwise(Opcode::Cmp, {Scalar::I64, Scalar::I64}, Scalar::I1, {{0x8000000000000000ull}, {1}},
                        {enum_attr(Opcode::Cmp, "pred", "ult")});
  assert_int_equal(got[0], 0);
}

void cmp_pointers(void**) {
  // Pointers compare as 64-bit addresses: p + i against p + 2 over i = 0..3.
  KB kb;
  ValueId p = kb.param("p", kb.ptr(Scalar::F64));
  ValueId out = kb.param("out", kb.ptr(Scalar::I1));
  ValueId ptrs = kb.lanes_of(p, kb.arange(0, 4));
  ValueId mid = kb.splat(kb.addptr(p, kb.i32(2)), {4});
  ValueId lt = kb.cmp("ult", ptrs, mid), eq = kb.cmp("eq", ptrs, mid);
  kb.store(kb.lanes_of(out, kb.arange(0, 4)), lt);
  kb.store(kb.lanes_of(out, kb.arange(4, 8)), eq);
  kb.ret();
  double buf[4];
  uint8_t o[8];
  assert_true(kb.run(Grid{}, {arg_ptr(buf, 32), arg_ptr(o, 8)}, true).is_ok());
  const uint8_t want[8] = {1, 1, 0, 0, 0, 0, 1, 0};
  assert_memory_equal(o, want, 8);
}

void fcmp_all_predicates(void**) {
  const char* preds[] = {"oeq", "one", "olt", "ole", "ogt", "oge", "ord", "ueq", "une", "ult", "ule", "ugt", "uge", "uno"};
  std::vector<float> e = f32_edges();
  std::vector<uint64_t> a, b;
  std::vector<float> fa, fb;
  for (float x : e)
    for (float y : e) {
      fa.push_back(x);
      fb.push_back(y);
      a.push_back(f32_bits(x));
      b.push_back(f32_bits(y));
    }
  // f16 from the same values: those outside f16's range become +-inf or 0 on both sides alike,
  // so compare the f16 values themselves in the reference.
  for (const char* p : preds) {
    for (Scalar s : {Scalar::F32, Scalar::F64, Scalar::F16}) {
      std::vector<uint64_t> ia = a, ib = b;
      for (size_t i = 0; i < a.size(); ++i) {
        if (s == Scalar::F64) {
          ia[i] = f64_bits(fa[i]);
          ib[i] = f64_bits(fb[i]);
        } else if (s == Scalar::F16) {
          ia[i] = f16_bits(static_cast<_Float16>(fa[i]));
          ib[i] = f16_bits(static_cast<_Float16>(fb[i]));
        }
      }
      std::vector<uint64_t> got =
          run_elementwise(Opcode::FCmp, {s, s}, Scalar::I1, {ia, ib}, {enum_attr(Opcode::FCmp, "pred", p)});
      std::string ps = p;
      for (size_t i = 0; i < a.size(); ++i) {
        float x = fa[i], y = fb[i];
        if (s == Scalar::F16) {
          x = static_cast<float>(static_cast<_Float16>(x));
          y = static_cast<float>(static_cast<_Float16>(y));
        }
        bool uno = std::isunordered(x, y);
        bool w = ps == "oeq" ? x == y : ps == "one" ? (x < y || x > y) : ps == "olt" ? x < y : ps == "ole" ? x <= y
               : ps == "ogt" ? x > y : ps == "oge" ? x >= y : ps == "ord" ? !uno : ps == "ueq" ? (uno || x == y)
               : ps == "une" ? x != y : ps == "ult" ? !(x >= y) : ps == "ule" ? !(x > y) : ps == "ugt" ? !(x <= y)
               : ps == "uge" ? !(x < y) : uno;
        if (got[i] != static_cast<uint64_t>(w)) fail_msg("fcmp %s(%a, %a) = %llu", p, x, y, (unsigned long long)got[i]);
      }
    }
  }
}

void select_lanes(void**) {
  std::vector<uint64_t> got = run_elementwise(Opcode::Select, {Scalar::I1, Scalar::F32, Scalar::F32}, Scalar::F32,
                                              {{1, 0, 1, 0, 0}, {1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}});
  assert_true(got == std::vector<uint64_t>({1, 20, 3, 40, 50}));
}

// ---- casts

void integer_casts(void**) {
  std::vector<uint64_t> in = {0, 1, 0x7f, 0x80, 0xff, 0x1234, 0xffff};
  // trunc i16 -> i8 and -> i1 (low bit), zext/sext i8 -> i32, sext i1 -> i32 (true is -1)
  std::vector<uint64_t> got = run_elementwise(Opcode::Trunc, {Scalar::I16}, Scalar::I8, {in});
  for (size_t i = 0; i < in.size(); ++i) assert_int_equal(got[i], static_cast<uint8_t>(in[i]));
  got = run_elementwise(Opcode::Trunc, {Scalar::I16}, Scalar::I1, {in});
  for (size_t i = 0; i < in.size(); ++i) assert_int_equal(got[i], in[i] & 1);
  std::vector<uint64_t> b8 = {0, 1, 0x7f, 0x80, 0xff};
  got = run_elementwise(Opcode::ZExt, {Scalar::I8}, Scalar::I32, {b8});
  for (size_t i = 0; i < b8.size(); ++i) assert_int_equal(got[i], b8[i]);
  got = run_elementwise(Opcode::SExt, {Scalar::I8}, Scalar::I32, {b8});
  for (size_t i = 0; i < b8.size(); ++i) assert_int_equal(got[i], static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(b8[i]))));
  got = run_elementwise(Opcode::SExt, {Scalar::I1}, Scalar::I64, {{0, 1}});
  assert_int_equal(got[1], ~uint64_t(0));
  got = run_elementwise(Opcode::ZExt, {Scalar::I1}, Scalar::I64, {{0, 1}});
  assert_int_equal(got[1], 1);
  got = run_elementwise(Opcode::SExt, {Scalar::I32}, Scalar::I64, {{0x80000000}});
  assert_int_equal(got[0], 0xffffffff80000000ull);
}

void float_casts(void**) {
  // fptrunc f32 -> f16 / bf16 / f8, both roundings; fpext back is exact.
  std::mt19937 rng(7);
  std::vector<uint64_t> in;
  std::vector<float> fin;
  for (float v : f32_edges()) fin.push_back(v);
  for (int i = 0; i < 3000; ++i) fin.push_back(std::ldexp(static_cast<float>(rng() % 100000) / 1000.0f, static_cast<int>(rng() % 40) - 28) * ((rng() & 1) ? 1 : -1));
  for (float v : fin) in.push_back(f32_bits(v));
  std::vector<uint64_t> h = run_elementwise(Opcode::FPTrunc, {Scalar::F32}, Scalar::F16, {in});
  for (size_t i = 0; i < fin.size(); ++i) {
    if (fin[i] != fin[i]) continue;
    if (h[i] != f16_bits(static_cast<_Float16>(fin[i]))) fail_msg("fptrunc f16 of %a: 0x%llx", fin[i], (unsigned long long)h[i]);
  }
  // rtz: the f16 nearer zero of the two neighbours, never the rounded-up one.
  std::vector<uint64_t> hz = run_elementwise(Opcode::FPTrunc, {Scalar::F32}, Scalar::F16, {in}, {enum_attr(Opcode::FPTrunc, "rounding", "rtz")});
  for (size_t i = 0; i < fin.size(); ++i) {
    float x = fin[i];
    if (x != x || std::isinf(x)) continue;
    float back = static_cast<float>(bits_f16(static_cast<uint16_t>(hz[i])));
    float up = static_cast<float>(bits_f16(static_cast<uint16_t>(hz[i] + 1)));  // next away from zero
    bool ok = std::fabs(back) <= std::fabs(x) && (std::fabs(x) < std::fabs(up) || std::isinf(up) || std::fabs(back) == 65504.0f);
    if (!ok) fail_msg("fptrunc rtz f16 of %a gave %a", x, back);
  }
  std::vector<uint64_t> back = run_elementwise(Opcode::FPExt, {Scalar::F16}, Scalar::F32, {h});
  for (size_t i = 0; i < fin.size(); ++i) {
    float want = static_cast<float>(bits_f16(static_cast<uint16_t>(h[i])));
    assert_true(same_f32(back[i], want));
  }
  // bf16 <-> f64, f8 -> f32
  std::vector<uint64_t> bf = {0x3f80, 0xbf80, 0x7f80, 0x0001, 0x8000};
  std::vector<uint64_t> d = run_elementwise(Opcode::FPExt, {Scalar::BF16}, Scalar::F64, {bf});
  for (size_t i = 0; i < bf.size(); ++i) assert_true(same_f64(d[i], bits_f32(static_cast<uint32_t>(bf[i]) << 16)));
  std::vector<uint64_t> f8 = run_elementwise(Opcode::FPExt, {Scalar::F8E4M3}, Scalar::F32, {{0x7e, 0x01, 0xb8, 0x7f}});
  assert_true(same_f32(f8[0], 448.0f));
  assert_true(same_f32(f8[1], std::ldexp(1.0f, -9)));
  assert_true(same_f32(f8[2], -1.0f));
  assert_true(bits_f32(static_cast<uint32_t>(f8[3])) != bits_f32(static_cast<uint32_t>(f8[3])));
  // f64 -> f16 directly, not through f32: 1 + 2^-11 + 2^-40 rounds up in f16 (f32 would first
  // drop the 2^-40 and leave a tie that rounds down).
  double tricky = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  std::vector<uint64_t> t16 = run_elementwise(Opcode::FPTrunc, {Scalar::F64}, Scalar::F16, {{f64_bits(tricky)}});
  assert_int_equal(t16[0], f16_bits(static_cast<_Float16>(tricky)));
  assert_int_equal(t16[0], 0x3c01);
  std::vector<uint64_t> t32 = run_elementwise(Opcode::FPTrunc, {Scalar::F64}, Scalar::F32, {{f64_bits(1e300), f64_bits(0.1)}},
                                              {enum_attr(Opcode::FPTrunc, "rounding", "rtz")});
  assert_true(same_f32(t32[0], std::numeric_limits<float>::max()));
  const float rn = static_cast<float>(0.1);  // rounds up, so rtz is the f32 below it
  assert_true(static_cast<double>(rn) > 0.1);
  assert_true(same_f32(t32[1], std::nextafter(rn, 0.0f)));
}

void float_int_casts(void**) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {nan, inf, -inf, 3e9f, -3e9f, 2147483520.0f, -2147483648.0f, -1.5f, -0.5f, 0.5f, 255.9f, 256.0f, -129.0f, 1e20f};
  std::vector<uint64_t> in;
  for (float x : v) in.push_back(f32_bits(x));
  std::vector<uint64_t> si = run_elementwise(Opcode::FPToSI, {Scalar::F32}, Scalar::I32, {in});
  std::vector<uint64_t> ui = run_elementwise(Opcode::FPToUI, {Scalar::F32}, Scalar::I32, {in});
  std::vector<uint64_t> s8 = run_elementwise(Opcode::FPToSI, {Scalar::F32}, Scalar::I8, {in});
  std::vector<uint64_t> u8 = run_elementwise(Opcode::FPToUI, {Scalar::F32}, Scalar::I8, {in});
  std::vector<uint64_t> s64 = run_elementwise(Opcode::FPToSI, {Scalar::F32}, Scalar::I64, {in});
  for (size_t i = 0; i < v.size(); ++i) {
    double x = v[i];
    auto sat = [&](double lo, double hi) -> double { return x != x ? 0 : x < lo ? lo : x > hi ? hi : std::trunc(x); };
    assert_int_equal(si[i], static_cast<uint32_t>(static_cast<int32_t>(sat(-2147483648.0, 2147483647.0))));
    assert_int_equal(ui[i], static_cast<uint32_t>(sat(0, 4294967295.0)));
    assert_int_equal(s8[i], static_cast<uint8_t>(static_cast<int8_t>(sat(-128, 127))));
    assert_int_equal(u8[i], static_cast<uint8_t>(sat(0, 255)));
    long double xl = x;
    int64_t w64 = x != x ? 0 : xl >= 9223372036854775807.0L ? INT64_MAX : xl <= -9223372036854775808.0L ? INT64_MIN : static_cast<int64_t>(std::trunc(x));
    assert_int_equal(s64[i], static_cast<uint64_t>(w64));
  }
  // f16 -> i32 and f64 -> i64 edges.
  std::vector<uint64_t> h = run_elementwise(Opcode::FPToSI, {Scalar::F16}, Scalar::I32, {{0x7c00, 0xfc00, 0x7e00, 0xc500}});
  assert_true(h == std::vector<uint64_t>({0x7fffffff, 0x80000000, 0, static_cast<uint32_t>(-5)}));
  std::vector<uint64_t> d = run_elementwise(Opcode::FPToUI, {Scalar::F64}, Scalar::I64, {{f64_bits(1.8446744073709552e19), f64_bits(9.2233720368547758e18)}});
  assert_int_equal(d[0], ~uint64_t(0));
  assert_int_equal(d[1], uint64_t(1) << 63);
  // Integers to floats: i8 both readings, i64 -> f32/f16, i32 -> f64.
  std::vector<uint64_t> b = {0x80, 0xff, 0x7f};
  std::vector<uint64_t> sf = run_elementwise(Opcode::SIToFP, {Scalar::I8}, Scalar::F32, {b});
  std::vector<uint64_t> uf = run_elementwise(Opcode::UIToFP, {Scalar::I8}, Scalar::F32, {b});
  assert_true(sf == std::vector<uint64_t>({f32_bits(-128.0f), f32_bits(-1.0f), f32_bits(127.0f)}));
  assert_true(uf == std::vector<uint64_t>({f32_bits(128.0f), f32_bits(255.0f), f32_bits(127.0f)}));
  std::vector<uint64_t> big = {0x7fffffffffffffffull, 0x8000000000000000ull, (uint64_t(1) << 60) + (uint64_t(1) << 36) + 1, 65520, 65519};
  std::vector<uint64_t> bf = run_elementwise(Opcode::SIToFP, {Scalar::I64}, Scalar::F32, {big});
  std::vector<uint64_t> bu = run_elementwise(Opcode::UIToFP, {Scalar::I64}, Scalar::F32, {big});
  std::vector<uint64_t> bh = run_elementwise(Opcode::SIToFP, {Scalar::I64}, Scalar::F16, {big});
  for (size_t i = 0; i < big.size(); ++i) {
    assert_int_equal(bf[i], f32_bits(static_cast<float>(static_cast<int64_t>(big[i]))));
    assert_int_equal(bu[i], f32_bits(static_cast<float>(big[i])));
  }
  assert_int_equal(bh[0], 0x7c00);  // past f16's range: inf
  assert_int_equal(bh[1], 0xfc00);
  assert_int_equal(bh[3], 0x7c00);  // 65520 is the tie between 65504 and 65536 (inf): even is inf
  assert_int_equal(bh[4], 0x7bff);
  std::vector<uint64_t> i1 = run_elementwise(Opcode::SIToFP, {Scalar::I1}, Scalar::F64, {{0, 1}});
  assert_true(same_f64(i1[1], -1.0));
}

void bitcasts(void**) {
  std::vector<uint64_t> g = run_elementwise(Opcode::Bitcast, {Scalar::F32}, Scalar::I32, {{f32_bits(-1.5f), f32_bits(std::numeric_limits<float>::quiet_NaN())}});
  assert_int_equal(g[0], f32_bits(-1.5f));
  assert_int_equal(g[1], 0x7fc00000);
  g = run_elementwise(Opcode::Bitcast, {Scalar::I16}, Scalar::F16, {{0x3c00, 0xfc01}});
  assert_int_equal(g[0], 0x3c00);
  assert_int_equal(g[1], 0xfc01);  // a NaN payload survives a bitcast
  g = run_elementwise(Opcode::Bitcast, {Scalar::I8}, Scalar::F8E5M2, {{0x7d}});
  assert_int_equal(g[0], 0x7d);
}

// ---- math_call: every name of math_fns.def, against libm

struct MathRef {
  const char* name;
  int arity;
  float (*f1)(float);
  double (*d1)(double);
  float (*f2)(float, float);
  double (*d2)(double, double);
};
MathRef mref(const char* n, float (*f)(float), double (*d)(double)) { return {n, 1, f, d, nullptr, nullptr}; }
MathRef mref(const char* n, float (*f)(float, float), double (*d)(double, double)) { return {n, 2, nullptr, nullptr, f, d}; }

// f32 tgamma is glibc's double tgamma rounded (its tgammaf is off by up to 6 ulp): the interpreter's choice.
float tgamma_via_f64(float x) { return static_cast<float>(std::tgamma(static_cast<double>(x))); }

void math_call_every_name(void**) {
  const MathRef refs[] = {
#define TRI_MATH_FN(fn, arity) mref(#fn, ::fn##f, ::fn),
#include "ir/math_fns.def"
#undef TRI_MATH_FN
  };
  std::vector<float> e = {0.0f, -0.0f, 0.25f, -0.75f, 1.0f, 1.5f, -2.0f, 3.0f, 10.5f, -30.0f, 1e-5f,
                          std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  for (const MathRef& r : refs) {
    std::vector<std::vector<float>> t;
    tuples(r.arity, e, &t);
    std::vector<std::vector<uint64_t>> in32(r.arity), in64(r.arity), in16(r.arity);
    for (int k = 0; k < r.arity; ++k)
      for (float v : t[k]) {
        in32[k].push_back(f32_bits(v));
        in64[k].push_back(f64_bits(v));
        in16[k].push_back(f16_bits(static_cast<_Float16>(v)));
      }
    std::vector<Attr> attrs = {Attr::of_str(r.name)};
    std::vector<uint64_t> g32 = run_elementwise(Opcode::MathCall, std::vector<Scalar>(r.arity, Scalar::F32), Scalar::F32, in32, attrs);
    std::vector<uint64_t> g64 = run_elementwise(Opcode::MathCall, std::vector<Scalar>(r.arity, Scalar::F64), Scalar::F64, in64, attrs);
    std::vector<uint64_t> g16 = run_elementwise(Opcode::MathCall, std::vector<Scalar>(r.arity, Scalar::F16), Scalar::F16, in16, attrs);
    for (size_t i = 0; i < t[0].size(); ++i) {
      float a = t[0][i], b = t[1][i];
      float (*f1)(float) = std::string(r.name) == "tgamma" ? tgamma_via_f64 : r.f1;
      float wf = r.arity == 1 ? f1(a) : r.f2(a, b);
      double wd = r.arity == 1 ? r.d1(a) : r.d2(a, b);
      if (!same_f32(g32[i], wf)) fail_msg("math_call %s f32(%a, %a)", r.name, a, b);
      if (!same_f64(g64[i], wd)) fail_msg("math_call %s f64(%a, %a)", r.name, a, b);
      float a16 = static_cast<float>(static_cast<_Float16>(a)), b16 = static_cast<float>(static_cast<_Float16>(b));
      float w16 = r.arity == 1 ? f1(a16) : r.f2(a16, b16);
      uint16_t g = static_cast<uint16_t>(g16[i]);
      bool ok = w16 != w16 ? bits_f16(g) != bits_f16(g) : g == f16_bits(static_cast<_Float16>(w16));
      if (!ok) fail_msg("math_call %s f16(%a, %a)", r.name, a16, b16);
    }
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(int_ops_all_i8_pairs),
      cmocka_unit_test(int_ops_wider_edges),
      cmocka_unit_test(int_ops_i1),
      cmocka_unit_test(int_neg_abs_wrap),
      cmocka_unit_test(division_by_zero),
      cmocka_unit_test(float_ops_f32_f64),
      cmocka_unit_test(fmin_fmax_nan_policies),
      cmocka_unit_test(float_ops_f16_bf16),
      cmocka_unit_test(float_ops_f8),
      cmocka_unit_test(cmp_all_predicates),
      cmocka_unit_test(cmp_pointers),
      cmocka_unit_test(fcmp_all_predicates),
      cmocka_unit_test(select_lanes),
      cmocka_unit_test(integer_casts),
      cmocka_unit_test(float_casts),
      cmocka_unit_test(float_int_casts),
      cmocka_unit_test(bitcasts),
      cmocka_unit_test(math_call_every_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
