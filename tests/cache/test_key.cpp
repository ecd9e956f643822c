// Cache keys: field boundaries change the key, equal inputs give equal keys, the hex form round-trips.
#include "cache/key.h"

#include "test_main.h"

using tri::cache::Key;
using tri::cache::KeyBuilder;

static void test_same_fields_same_key(void** state) {
  (void)state;
  KeyBuilder a, b;
  a.add("ir", "abc").add_u64("opt", 3);
  b.add("ir", "abc").add_u64("opt", 3);
  assert_true(a.finish() == b.finish());
}

static void test_boundaries_change_key(void** state) {
  (void)state;
  KeyBuilder a, b, c;
  a.add("x", "ab").add("y", "c");
  b.add("x", "a").add("y", "bc");
  c.add("xa", "b").add("y", "c");
  assert_true(a.finish() != b.finish());
  assert_true(a.finish() != c.finish());
  KeyBuilder d, e;
  d.add("ir", "abc");
  e.add("ir", "abd");
  assert_true(d.finish() != e.finish());
}

static void test_hex_round_trip(void** state) {
  (void)state;
  KeyBuilder a;
  a.add("ir", "kernel bytes");
  Key k = a.finish();
  std::string h = k.hex();
  assert_int_equal(h.size(), 32);
  Key back;
  assert_true(tri::cache::parse_key_hex(h, &back));
  assert_true(back == k);
  assert_false(tri::cache::parse_key_hex(h.substr(1), &back));
  assert_false(tri::cache::parse_key_hex(std::string(31, '0') + "G", &back));
  Key fixed{0x0123456789abcdefull, 0xfedcba9876543210ull};
  assert_string_equal(fixed.hex().c_str(), "0123456789abcdeffedcba9876543210");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_fields_same_key),
      cmocka_unit_test(test_boundaries_change_key),
      cmocka_unit_test(test_hex_round_trip),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
