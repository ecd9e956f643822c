// Tests of the host-side value handling shared by the `tri` command and the conformance suite
// (tools/host_data.cpp, compiled in here). The suite judges backends with these conversions and
// ulp distances, so they are checked against independent references: every 8- and 16-bit float
// pattern round-trips, and narrowing picks the nearest representable value with ties to even
// (found by brute force over all patterns).
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "../../tools/host_data.cpp"
#include "test_main.h"

using namespace tri_tool;

static void narrow_patterns_round_trip(void** state) {
  for (int32_t dt : {TRI_DTYPE_F16, TRI_DTYPE_BF16, TRI_DTYPE_F8E4M3, TRI_DTYPE_F8E5M2}) {
    uint64_t n = uint64_t(1) << dtype_info(dt).bits;
    for (uint64_t v = 0; v < n; ++v) {
      double d = float_bits_to_double(dt, v);
      if (std::isnan(d)) {
        assert_true(float_bits_is_nan(dt, double_to_float_bits(dt, d)));
        continue;
      }
      assert_int_equal(double_to_float_bits(dt, d), v);
      assert_int_equal(double_to_float_bits(dt, std::strtod(format_bits(dt, v).c_str(), nullptr)), v);
    }
  }
  // Known values.
  assert_true(float_bits_to_double(TRI_DTYPE_F16, 0x7bff) == 65504.0);
  assert_true(float_bits_to_double(TRI_DTYPE_F8E4M3, 0x7e) == 448.0);
  assert_true(std::isnan(float_bits_to_double(TRI_DTYPE_F8E4M3, 0x7f)));
  assert_true(float_bits_to_double(TRI_DTYPE_F8E5M2, 0x7b) == 57344.0);
  assert_true(float_bits_to_double(TRI_DTYPE_BF16, 0x3f80) == 1.0);
  assert_true(float_bits_to_double(TRI_DTYPE_F16, 0x0001) == std::ldexp(1.0, -24));
}

// The nearest representable value, ties to the pattern with an even mantissa; overflow past the
// largest finite value by at least half a step goes to inf (NaN for e4m3).
static uint64_t brute_round(int32_t dt, double x) {
  uint64_t n = uint64_t(1) << dtype_info(dt).bits, best = 0;
  double best_err = INFINITY;
  for (uint64_t v = 0; v < n; ++v) {
    double d = float_bits_to_double(dt, v);
    if (!std::isfinite(d) || (d == 0 && std::signbit(d) != std::signbit(x))) continue;
    double err = std::fabs(d - x);
    if (err < best_err || (err == best_err && (v & 1) == 0)) {
      best = v;
      best_err = err;
    }
  }
  return best;
}

static void narrowing_is_nearest_even(void** state) {
  std::mt19937_64 rng(99);
  for (int32_t dt : {TRI_DTYPE_F16, TRI_DTYPE_BF16, TRI_DTYPE_F8E4M3, TRI_DTYPE_F8E5M2}) {
    uint64_t n = uint64_t(1) << dtype_info(dt).bits;
    int iters = dtype_info(dt).bits == 8 ? 4000 : 300;
    for (int i = 0; i < iters; ++i) {
      // Midpoints between neighbours (the ties) and random points between them.
      uint64_t v = rng() % (n / 2 - 1);
      double a = float_bits_to_double(dt, v), b = float_bits_to_double(dt, v + 1);
      if (!std::isfinite(a) || !std::isfinite(b)) continue;
      double t = (i % 3 == 0) ? 0.5 : std::ldexp(double(rng() >> 11), -53);
      double x = a + (b - a) * t;
      if (i & 1) x = -x;
      assert_int_equal(double_to_float_bits(dt, x), brute_round(dt, x));
    }
  }
  assert_true(std::isinf(float_bits_to_double(TRI_DTYPE_F16, double_to_float_bits(TRI_DTYPE_F16, 65520.0))));
  assert_int_equal(double_to_float_bits(TRI_DTYPE_F16, 65519.0), 0x7bff);
  assert_true(std::isnan(float_bits_to_double(TRI_DTYPE_F8E4M3, double_to_float_bits(TRI_DTYPE_F8E4M3, 480.0))));
  assert_int_equal(double_to_float_bits(TRI_DTYPE_F8E4M3, 464.0), 0x7e);  // tie to even: 448
  assert_int_equal(double_to_float_bits(TRI_DTYPE_BF16, 1.0 + 1.0 / 256), 0x3f80);
  assert_int_equal(double_to_float_bits(TRI_DTYPE_BF16, 1.0 + 3.0 / 256), 0x3f82);
}

static void ulps_and_text(void** state) {
  uint64_t one = double_to_float_bits(TRI_DTYPE_F32, 1.0);
  assert_int_equal(ulp_distance(TRI_DTYPE_F32, one, one + 3), 3);
  uint64_t pz = 0, nz = 0x80000000u, tiny = 1, ntiny = 0x80000001u;
  assert_int_equal(ulp_distance(TRI_DTYPE_F32, pz, nz), 0);
  assert_int_equal(ulp_distance(TRI_DTYPE_F32, ntiny, tiny), 2);
  assert_int_equal(ulp_distance(TRI_DTYPE_F64, 0x8000000000000001ull, 1), 2);
  assert_string_equal(format_bits(TRI_DTYPE_F32, nz).c_str(), "-0.0");
  assert_string_equal(format_bits(TRI_DTYPE_F32, double_to_float_bits(TRI_DTYPE_F32, 0.1)).c_str(), "0.1");
  assert_string_equal(format_bits(TRI_DTYPE_F32, double_to_float_bits(TRI_DTYPE_F32, 2.0)).c_str(), "2.0");
  assert_string_equal(format_bits(TRI_DTYPE_F16, 0x7c00).c_str(), "inf");
  assert_string_equal(format_bits(TRI_DTYPE_I8, 0x80).c_str(), "-128");
  uint64_t bits;
  std::string err;
  assert_true(parse_element("-128", TRI_DTYPE_I8, &bits, &err));
  assert_int_equal(bits, 0x80);
  assert_true(parse_element("255", TRI_DTYPE_I8, &bits, &err));
  assert_int_equal(bits, 0xff);
  assert_true(parse_element("0x7fffffffffffffff", TRI_DTYPE_I64, &bits, &err));
  assert_int_equal(bits, 0x7fffffffffffffffull);
  assert_true(parse_element("-9223372036854775808", TRI_DTYPE_I64, &bits, &err));
  assert_int_equal(bits, 0x8000000000000000ull);
  assert_true(parse_element("010", TRI_DTYPE_I32, &bits, &err));
  assert_int_equal(bits, 10);
  assert_false(parse_element("256", TRI_DTYPE_I8, &bits, &err));
  assert_false(parse_element("-129", TRI_DTYPE_I8, &bits, &err));
  assert_false(parse_element("0x-5", TRI_DTYPE_I32, &bits, &err));
  assert_false(parse_element("1.5", TRI_DTYPE_I32, &bits, &err));
  assert_false(parse_element("2", TRI_DTYPE_I1, &bits, &err));
  assert_false(parse_element("", TRI_DTYPE_F32, &bits, &err));
  assert_true(parse_element("-0.0", TRI_DTYPE_F16, &bits, &err));
  assert_int_equal(bits, 0x8000);
  assert_true(parse_element("-inf", TRI_DTYPE_BF16, &bits, &err));
  assert_int_equal(bits, 0xff80);
  assert_true(parse_element("3", TRI_DTYPE_F64, &bits, &err));
  assert_true(float_bits_to_double(TRI_DTYPE_F64, bits) == 3.0);
}

static void first_lines_cuts_long_messages(void** state) {
  assert_string_equal(first_lines("one line", 3).c_str(), "one line");
  assert_string_equal(first_lines("a\nb\nc", 3).c_str(), "a\nb\nc");
  assert_string_equal(first_lines("a\nb\nc\nd\ne", 2).c_str(), "a\nb\n... (3 more lines)");
  assert_string_equal(first_lines("a\nb\nc\n", 1).c_str(), "a\n... (2 more lines)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(narrow_patterns_round_trip),
      cmocka_unit_test(narrowing_is_nearest_even),
      cmocka_unit_test(ulps_and_text),
      cmocka_unit_test(first_lines_cuts_long_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
