// Exhaustive checks of the narrow float conversions in base/fp.h: every 8- and 16-bit pattern
// decodes to the value its format defines and encodes back to itself, and narrowing of f32
// values rounds to nearest even (checked against an independent reference: the nearest of all
// decoded values, ties to the even pattern).
#include <cmath>
#include <cstring>
#include <vector>

#include "base/fp.h"
#include "test_main.h"

using namespace tri::fp;

static float ref_decode(uint32_t v, int ebits, int mbits, bool fn) {
  int bias = (1 << (ebits - 1)) - 1;
  uint32_t s = v >> (ebits + mbits) & 1, e = v >> mbits & ((1u << ebits) - 1), m = v & ((1u << mbits) - 1);
  double r;
  if (!fn && e == (1u << ebits) - 1) return m ? NAN : (s ? -INFINITY : INFINITY);
  if (fn && e == (1u << ebits) - 1 && m == (1u << mbits) - 1) return NAN;
  if (e == 0) r = m * std::pow(2.0, 1 - bias - mbits);
  else r = (1.0 + m / std::pow(2.0, mbits)) * std::pow(2.0, (int)e - bias);
  return (float)(s ? -r : r);
}

static void decode_all_patterns(void** state) {
  for (uint32_t v = 0; v < 65536; ++v) {
    float a = f16_to_f32((uint16_t)v), b = ref_decode(v, 5, 10, false);
    if (std::isnan(b)) assert_true(std::isnan(a));
    else assert_true(a == b && std::signbit(a) == std::signbit(b));
    if (!std::isnan(a)) assert_int_equal(f32_to_f16(a), v);
    float c = bf16_to_f32((uint16_t)v);
    if (!std::isnan(c)) assert_int_equal(f32_to_bf16(c), v);
  }
  for (uint32_t v = 0; v < 256; ++v) {
    float a = f8e4m3_to_f32((uint8_t)v), b = ref_decode(v, 4, 3, true);
    if (std::isnan(b)) assert_true(std::isnan(a));
    else { assert_true(a == b); assert_int_equal(f32_to_f8e4m3(a), v); }
    float c = f8e5m2_to_f32((uint8_t)v), d = ref_decode(v, 5, 2, false);
    if (std::isnan(d)) assert_true(std::isnan(c));
    else { assert_true(c == d); assert_int_equal(f32_to_f8e5m2(c), v); }
  }
  assert_true(f8e4m3_to_f32(0x7e) == 448.0f);
}

// Nearest representable value by brute force over all finite patterns; ties go to even patterns.
static uint32_t ref_round(float x, float (*dec)(uint32_t), uint32_t count) {
  double best = INFINITY;
  uint32_t best_v = 0;
  for (uint32_t v = 0; v < count; ++v) {
    float d = dec(v);
    if (std::isnan(d) || std::isinf(d)) continue;
    if (d == 0 && std::signbit(d) != std::signbit(x)) continue;
    double err = std::fabs((double)d - (double)x);
    if (err < best || (err == best && (v & 1) == 0 && (best_v & 1) == 1)) { best = err; best_v = v; }
  }
  return best_v;
}

static float dec16(uint32_t v) { return f16_to_f32((uint16_t)v); }
static float dec_e5m2(uint32_t v) { return f8e5m2_to_f32((uint8_t)v); }

static void narrowing_rounds_to_nearest_even(void** state) {
  // Midpoints and near-midpoints between neighbouring f16 values, normal and subnormal.
  std::vector<float> xs = {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 0.1f, 3.14159f, 65504.0f, 6.0e-8f,
                           2.98e-8f, 1.0e-5f, -2.5f, 1000.7f, -0.0f, 5.96e-8f};
  for (float x : xs) assert_int_equal(f32_to_f16(x), ref_round(x, dec16, 65536));
  for (float x : {0.3f, 1.1f, 57344.0f, 1.5e-5f, -7.0f, 0.0234f}) assert_int_equal(f32_to_f8e5m2(x), ref_round(x, dec_e5m2, 256));
  assert_true(std::isinf(f16_to_f32(f32_to_f16(70000.0f))));
  assert_int_equal(f32_to_bf16(1.0f + 1.0f / 256), 0x3f80);        // tie, rounds to even
  assert_int_equal(f32_to_bf16(1.0f + 3.0f / 256), 0x3f82);        // tie, rounds up to even
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decode_all_patterns),
      cmocka_unit_test(narrowing_rounds_to_nearest_even),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
