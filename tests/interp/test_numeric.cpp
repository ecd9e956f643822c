// The interpreter's scalar conversions against independent definitions: every 8- and 16-bit
// pattern decodes to the value its fields define (f16 also against the compiler's _Float16), and
// rounding into each format agrees with "the nearest representable value, ties to the even
// pattern" found by search over a table of every value of the format, for ties, near-ties,
// overflow, underflow, denormals, zeros, infs and NaNs, from f32, f64 and 64-bit integers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "interp/numeric.h"
#include "kernel_builder.h"
#include "test_main.h"

using namespace tri::interp;
using tri::ir::Scalar;
using namespace tri_test;

namespace {

// ---- reference formats, defined from their fields
struct Ref {
  int e, m;           // exponent and mantissa bits
  bool fn;            // f8e4m3fn: no inf, only S.1111.111 is NaN
  int bias() const { return (1 << (e - 1)) - 1; }
  int total() const { return 1 + e + m; }
  bool is_nan(uint32_t code) const {
    uint32_t ef = (code >> m) & ((1u << e) - 1), mf = code & ((1u << m) - 1);
    if (fn) return ef == (1u << e) - 1 && mf == (1u << m) - 1;
    return ef == (1u << e) - 1 && mf != 0;
  }
  bool is_inf(uint32_t code) const {
    uint32_t ef = (code >> m) & ((1u << e) - 1), mf = code & ((1u << m) - 1);
    return !fn && ef == (1u << e) - 1 && mf == 0;
  }
  // value = (-1)^s * 2^(E - bias) * 1.M, or 2^(1 - bias) * 0.M when E = 0
  long double value(uint32_t code) const {
    uint32_t s = code >> (e + m), ef = (code >> m) & ((1u << e) - 1), mf = code & ((1u << m) - 1);
    long double frac = static_cast<long double>(mf) / static_cast<long double>(1u << m);
    long double v = ef == 0 ? std::pow(2.0L, 1 - bias()) * frac : std::pow(2.0L, static_cast<int>(ef) - bias()) * (1 + frac);
    if (is_inf(code)) v = INFINITY;
    return s ? -v : v;
  }
};

const Ref kF16{5, 10, false}, kBF16{8, 7, false}, kE4M3{4, 3, true}, kE5M2{5, 2, false}, kTF32{8, 10, false};

// Every non-negative finite value of a format, sorted, with its code; for IEEE formats also the
// power of two just past the largest finite value, standing for inf (rounding to nearest treats
// it as the next value up, which is how IEEE defines overflow).
struct Table {
  Ref f;
  std::vector<std::pair<long double, uint32_t>> vals;
  long double max_finite = 0;
  uint32_t max_code = 0;
  explicit Table(Ref r) : f(r) {
    uint32_t sign = 1u << (f.e + f.m);
    for (uint32_t c = 0; c < sign; ++c) {
      if (f.is_nan(c) || f.is_inf(c)) continue;
      vals.push_back({f.value(c), c});
    }
    std::sort(vals.begin(), vals.end());
    max_finite = vals.back().first;
    max_code = vals.back().second;
    if (!f.fn) {
      int emax = (1 << f.e) - 2 - f.bias();
      vals.push_back({std::pow(2.0L, emax + 1), ((1u << f.e) - 1) << f.m});  // inf
    }
  }
  // The expected code of x rounded into the format.
  uint32_t round(long double x, bool rtz) const {
    const uint32_t sign = std::signbit(x) ? 1u << (f.e + f.m) : 0;
    const uint32_t inf = ((1u << f.e) - 1) << f.m;
    if (std::isnan(x)) return 0xffffffff;  // any NaN
    long double a = std::fabs(x);
    const uint32_t maxc = max_code;
    if (std::isinf(a)) return sign | (f.fn ? maxc : inf);
    if (f.fn && a > max_finite) return sign | maxc;  // fn formats saturate
    // At or past the inf stand-in, only rounding toward zero stays finite.
    if (!f.fn && a >= vals.back().first) return sign | (rtz ? maxc : inf);
    auto hi = std::lower_bound(vals.begin(), vals.end(), std::make_pair(a, 0u));
    if (hi->first == a) return sign | hi->second;
    auto lo = hi - 1;
    if (rtz) return sign | lo->second;
    long double dl = a - lo->first, dh = hi->first - a;
    if (dl < dh) return sign | lo->second;
    if (dh < dl) return sign | hi->second;
    return sign | ((lo->second & 1) ? hi->second : lo->second);
  }
};

bool same_code(uint64_t got, uint32_t want, const Ref& f) {
  if (want == 0xffffffff) return f.is_nan(static_cast<uint32_t>(got));
  return got == want;
}

// Inputs that probe every rounding boundary of a table: each value, the midpoints between
// neighbours, and the f32/f64 numbers just beside them, with both signs.
// `stride` > 1 keeps every stride-th neighbourhood, and all of them near zero and near the top.
std::vector<long double> probes(const Table& t, size_t stride) {
  std::vector<long double> out;
  for (size_t i = 0; i < t.vals.size(); ++i) {
    if (i % stride != 0 && i > 4096 && i + 4096 < t.vals.size()) continue;
    long double v = t.vals[i].first;
    out.push_back(v);
    if (i + 1 < t.vals.size()) {
      long double mid = (v + t.vals[i + 1].first) / 2;
      out.push_back(mid);
      out.push_back(std::nextafter(static_cast<double>(mid), 0.0));
      out.push_back(std::nextafter(static_cast<double>(mid), INFINITY));
      out.push_back(std::nextafter(static_cast<float>(mid), 0.0f));
      out.push_back(std::nextafter(static_cast<float>(mid), INFINITY));
    }
  }
  out.push_back(INFINITY);
  out.push_back(NAN);
  out.push_back(1e30L);
  out.push_back(1e-30L);
  out.push_back(std::numeric_limits<double>::denorm_min());
  size_t n = out.size();
  for (size_t i = 0; i < n; ++i) out.push_back(-out[i]);
  return out;
}

void check_format(const Table& t, FloatFormat ff, const char* name, size_t stride = 1) {
  // Decoding: every pattern.
  const uint32_t count = 1u << t.f.total();
  for (uint32_t c = 0; c < count; ++c) {
    long double got = decode_float(c, ff);
    if (t.f.is_nan(c)) {
      if (!std::isnan(got)) fail_msg("%s: 0x%x should decode to NaN", name, c);
      continue;
    }
    long double want = t.f.value(c);
    if (got != want || std::signbit(got) != std::signbit(want))
      fail_msg("%s: 0x%x decodes to %Lg, want %Lg", name, c, got, want);
  }
  // Encoding: every boundary, both rounding modes.
  for (long double x : probes(t, stride)) {
    for (int rtz = 0; rtz < 2; ++rtz) {
      uint64_t got = encode_float(x, ff, rtz ? Round::TowardZero : Round::NearestEven);
      uint32_t want = t.round(x, rtz);
      if (!same_code(got, want, t.f))
        fail_msg("%s: %.20Lg (rtz=%d) encodes to 0x%llx, want 0x%x", name, x, rtz, (unsigned long long)got, want);
    }
  }
}

void f16_matches_definition_and_compiler(void**) {
  Table t(kF16);
  check_format(t, float_format(Scalar::F16), "f16");
  // And against the compiler's _Float16, from f32 and from f64 (no double rounding through f32).
  for (uint32_t c = 0; c < 65536; ++c) {
    long double d = decode_float(c, Scalar::F16);
    _Float16 h = bits_f16(static_cast<uint16_t>(c));
    if (std::isnan(d)) {
      assert_true(h != h);
    } else {
      assert_true(d == static_cast<long double>(h));
    }
  }
  std::mt19937_64 rng(1);
  for (int i = 0; i < 500000; ++i) {
    uint32_t u = static_cast<uint32_t>(rng());
    float x = bits_f32(u);
    uint64_t got = encode_float(x, Scalar::F16);
    _Float16 want = static_cast<_Float16>(x);
    if (x != x) {
      assert_true(kF16.is_nan(static_cast<uint32_t>(got)));
      continue;
    }
    if (got != f16_bits(want)) fail_msg("f16 of %a: 0x%llx, want 0x%x", x, (unsigned long long)got, f16_bits(want));
    // A 53-bit double that lands in or near f16's range.
    double dx = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 60) - 80);
    if (rng() & 1) dx = -dx;
    if (encode_float(dx, Scalar::F16) != f16_bits(static_cast<_Float16>(dx)))
      fail_msg("f16 of double %a", dx);
  }
}

void bf16_matches_definition(void**) {
  Table t(kBF16);
  check_format(t, float_format(Scalar::BF16), "bf16");
  // bf16 is the top half of an f32: decode must agree with that, and rounding with the usual
  // add-bias-then-truncate formulation on a sample of all f32 patterns.
  for (uint32_t c = 0; c < 65536; ++c) {
    float want = bits_f32(c << 16);
    long double got = decode_float(c, Scalar::BF16);
    if (want != want) assert_true(std::isnan(got));
    else assert_true(got == want);
  }
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4099) {
    float x = bits_f32(static_cast<uint32_t>(u));
    uint64_t got = encode_float(x, Scalar::BF16);
    if (x != x) {
      assert_true(kBF16.is_nan(static_cast<uint32_t>(got)));
      continue;
    }
    uint32_t v = static_cast<uint32_t>(u);
    uint32_t want = (v + 0x7fff + ((v >> 16) & 1)) >> 16;
    if (got != want) fail_msg("bf16 of 0x%08x: 0x%llx, want 0x%x", v, (unsigned long long)got, want);
  }
}

void f8e4m3_matches_definition(void**) {
  Table t(kE4M3);
  check_format(t, float_format(Scalar::F8E4M3), "f8e4m3");
  // Spot values written out by hand from the definition.
  assert_true(decode_float(0x7e, Scalar::F8E4M3) == 448);
  assert_true(decode_float(0x01, Scalar::F8E4M3) == std::ldexp(1.0L, -9));
  assert_true(decode_float(0x08, Scalar::F8E4M3) == std::ldexp(1.0L, -6));
  assert_true(std::isnan(decode_float(0x7f, Scalar::F8E4M3)));
  assert_true(std::isnan(decode_float(0xff, Scalar::F8E4M3)));
  assert_true(decode_float(0x78, Scalar::F8E4M3) == 256);  // no inf: E=15 is an ordinary binade
  assert_int_equal(encode_float(1e9L, Scalar::F8E4M3), 0x7e);
  assert_int_equal(encode_float(-INFINITY, Scalar::F8E4M3), 0xfe);
  assert_int_equal(encode_float(NAN, Scalar::F8E4M3), 0x7f);
  assert_int_equal(encode_float(464, Scalar::F8E4M3), 0x7e);  // tie between 448 and 480: even is 448
}

void f8e5m2_matches_definition(void**) {
  Table t(kE5M2);
  check_format(t, float_format(Scalar::F8E5M2), "f8e5m2");
  assert_true(decode_float(0x7b, Scalar::F8E5M2) == 57344);
  assert_true(std::isinf(decode_float(0x7c, Scalar::F8E5M2)));
  assert_int_equal(encode_float(61440, Scalar::F8E5M2), 0x7c);     // tie past the max: to inf
  assert_int_equal(encode_float(61439, Scalar::F8E5M2), 0x7b);
  assert_int_equal(encode_float(1e9L, Scalar::F8E5M2, Round::TowardZero), 0x7b);
  assert_int_equal(encode_float(std::ldexp(1.0L, -17), Scalar::F8E5M2), 0x00);  // half the smallest: to even 0
  assert_int_equal(encode_float(std::ldexp(3.0L, -18), Scalar::F8E5M2), 0x01);
}

void tf32_rounds_to_ten_bits(void**) {
  Table t(kTF32);
  // tf32 has 2^19 patterns: all decode; rounding is probed in the denormal and top binades and
  // in a sample between.
  check_format(t, kTf32, "tf32", 61);
  assert_true(round_to_tf32(1.0f + std::ldexp(1.0f, -11)) == 1.0f);                       // tie to even
  assert_true(round_to_tf32(1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));  // tie up to even
  assert_true(round_to_tf32(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 1.0f + std::ldexp(1.0f, -10));
}

void f32_and_f64_agree_with_hardware(void**) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 1000000; ++i) {
    double d = bits_f64(rng());
    float want = static_cast<float>(d);
    uint64_t got = encode_float(d, Scalar::F32);
    if (d != d) {
      assert_true(bits_f32(static_cast<uint32_t>(got)) != bits_f32(static_cast<uint32_t>(got)));
      continue;
    }
    if (got != f32_bits(want)) fail_msg("f32 of %a: 0x%llx", d, (unsigned long long)got);
    uint32_t u = static_cast<uint32_t>(rng());
    float x = bits_f32(u);
    if (x == x) {
      assert_true(decode_float(u, Scalar::F32) == x);
      assert_int_equal(encode_float(x, Scalar::F64), f64_bits(x));
    }
  }
  // Rounding toward zero from f64 to f32: the truncated neighbour, and the max finite on overflow.
  double d = 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -40);
  assert_int_equal(encode_float(d, Scalar::F32, Round::TowardZero), f32_bits(1.0f));
  assert_int_equal(encode_float(d, Scalar::F32), f32_bits(1.0f + std::ldexp(1.0f, -23)));
  assert_int_equal(encode_float(1e300, Scalar::F32, Round::TowardZero), f32_bits(std::numeric_limits<float>::max()));
  assert_int_equal(encode_float(-1e300, Scalar::F32), f32_bits(-INFINITY));
}

void integers_to_floats_round_once(void**) {
  // From 64-bit integers: compare with the table search on the exact integer value, and with
  // the hardware's (correctly rounded) int64 -> float/double conversions.
  Table t16(kF16), tbf(kBF16), t8(kE4M3);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200000; ++i) {
    uint64_t u = rng() >> (rng() % 64);
    int64_t s = static_cast<int64_t>(rng()) >> (rng() % 64);
    assert_int_equal(int_to_float(static_cast<uint64_t>(s), 64, true, float_format(Scalar::F32)),
                     f32_bits(static_cast<float>(s)));
    assert_int_equal(int_to_float(u, 64, false, float_format(Scalar::F32)), f32_bits(static_cast<float>(u)));
    assert_int_equal(int_to_float(u, 64, false, float_format(Scalar::F64)), f64_bits(static_cast<double>(u)));
    assert_int_equal(int_to_float(static_cast<uint64_t>(s), 64, true, float_format(Scalar::F64)),
                     f64_bits(static_cast<double>(s)));
    assert_int_equal(int_to_float(u, 64, false, float_format(Scalar::F16)), t16.round(static_cast<long double>(u), false));
    assert_int_equal(int_to_float(u, 64, false, float_format(Scalar::BF16)), tbf.round(static_cast<long double>(u), false));
    assert_int_equal(int_to_float(static_cast<uint64_t>(s), 64, true, float_format(Scalar::F8E4M3)),
                     t8.round(static_cast<long double>(s), false));
  }
  // 2^53 + 1 is not a double: nearest even is 2^53. Then to f32 from i64 2^24 + 1 rounds to 2^24.
  assert_int_equal(int_to_float((uint64_t(1) << 53) + 1, 64, true, float_format(Scalar::F64)), f64_bits(9007199254740992.0));
  assert_int_equal(int_to_float((uint64_t(1) << 24) + 1, 32, true, float_format(Scalar::F32)), f32_bits(16777216.0f));
  // A value that double rounding through f64 would get wrong for f32: 2^60 + 2^36 + 1 rounds up.
  uint64_t v = (uint64_t(1) << 60) + (uint64_t(1) << 36) + 1;
  assert_int_equal(int_to_float(v, 64, false, float_format(Scalar::F32)), f32_bits(static_cast<float>(v)));
  assert_int_equal(f32_bits(static_cast<float>(v)), f32_bits(std::ldexp(1.0f, 60) + std::ldexp(1.0f, 37)));
  // Signed vs unsigned reading of the same i8 pattern; i1 true is -1 when signed.
  assert_int_equal(int_to_float(0xff, 8, true, float_format(Scalar::F32)), f32_bits(-1.0f));
  assert_int_equal(int_to_float(0xff, 8, false, float_format(Scalar::F32)), f32_bits(255.0f));
  assert_int_equal(int_to_float(1, 1, true, float_format(Scalar::F32)), f32_bits(-1.0f));
  assert_int_equal(int_to_float(1, 1, false, float_format(Scalar::F32)), f32_bits(1.0f));
}

void floats_to_integers_saturate(void**) {
  struct Case {
    long double x;
    int w;
    bool is_signed;
    uint64_t want;
  };
  const Case cases[] = {
      {NAN, 32, true, 0},
      {-NAN, 32, false, 0},
      {INFINITY, 32, true, 0x7fffffff},
      {-INFINITY, 32, true, 0x80000000},
      {INFINITY, 32, false, 0xffffffff},
      {-INFINITY, 32, false, 0},
      {2147483647.9L, 32, true, 0x7fffffff},
      {2147483648.0L, 32, true, 0x7fffffff},
      {-2147483648.9L, 32, true, 0x80000000},
      {-2147483649.0L, 32, true, 0x80000000},
      {-1.5L, 32, true, 0xffffffff},
      {-0.99L, 32, false, 0},
      {-1.0L, 32, false, 0},
      {4294967295.5L, 32, false, 0xffffffff},
      {1e30L, 64, true, 0x7fffffffffffffffull},
      {-1e30L, 64, true, 0x8000000000000000ull},
      {1e30L, 64, false, 0xffffffffffffffffull},
      {18446744073709549568.0L, 64, false, 18446744073709549568ull},
      {9223372036854775807.0L, 64, true, 0x7fffffffffffffffull},
      {200.7L, 8, true, 127},
      {-200.7L, 8, true, 0x80},
      {200.7L, 8, false, 200},
      {300.0L, 8, false, 255},
      {-7.9L, 16, true, 0xfff9},
      {0.5L, 1, true, 0},
      {-1.0L, 1, true, 1},  // i1 signed range is [-1, 0]
      {3.0L, 1, true, 0},
      {3.0L, 1, false, 1},
  };
  for (const Case& c : cases) {
    uint64_t got = float_to_int(c.x, c.w, c.is_signed);
    if (got != c.want)
      fail_msg("float_to_int(%Lg, %d, %d) = 0x%llx, want 0x%llx", c.x, c.w, c.is_signed, (unsigned long long)got,
               (unsigned long long)c.want);
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(f16_matches_definition_and_compiler),
      cmocka_unit_test(bf16_matches_definition),
      cmocka_unit_test(f8e4m3_matches_definition),
      cmocka_unit_test(f8e5m2_matches_definition),
      cmocka_unit_test(tf32_rounds_to_ten_bits),
      cmocka_unit_test(f32_and_f64_agree_with_hardware),
      cmocka_unit_test(integers_to_floats_round_once),
      cmocka_unit_test(floats_to_integers_saturate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
