// Entry files: round-trip, and every damage (a flipped byte anywhere, truncation at any length,
// an empty file, a wrong version, foreign bytes, another key) is an error, never wrong bytes.
#include "cache/entry.h"

#include "test_main.h"

using namespace tri::cache;

static Entry sample() {
  Entry e;
  KeyBuilder kb;
  kb.add("ir", "sample");
  e.key = kb.finish();
  e.kind = "obj";
  e.metadata = std::string("meta\0data", 9);
  for (int i = 0; i < 4000; ++i) e.payload.push_back(static_cast<char>(i * 7 % 13));
  return e;
}

static void test_round_trip(void** state) {
  (void)state;
  Entry e = sample(), back;
  std::string bytes;
  assert_true(encode_entry(e, &bytes).is_ok());
  assert_true(bytes.size() < e.payload.size());  // compressed
  assert_true(decode_entry(bytes, e.key, &back).is_ok());
  assert_true(back.key == e.key);
  assert_true(back.kind == e.kind);
  assert_true(back.metadata == e.metadata);
  assert_true(back.payload == e.payload);
  Entry empty = e;
  empty.payload.clear();
  assert_true(encode_entry(empty, &bytes).is_ok());
  assert_true(decode_entry(bytes, e.key, &back).is_ok());
  assert_true(back.payload.empty());
}

static void test_damage_is_an_error(void** state) {
  (void)state;
  Entry e = sample(), back;
  std::string bytes;
  assert_true(encode_entry(e, &bytes).is_ok());
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string d = bytes;
    d[i] = static_cast<char>(d[i] ^ 0x20);
    assert_false(decode_entry(d, e.key, &back).is_ok());
  }
  for (size_t n = 0; n < bytes.size(); ++n)
    assert_false(decode_entry(bytes.substr(0, n), e.key, &back).is_ok());
  assert_false(decode_entry(std::string(), e.key, &back).is_ok());
  assert_false(decode_entry("#!/bin/sh\necho not an entry\n", e.key, &back).is_ok());
  std::string v = bytes;
  v[8] = 2;  // format version 2
  tri::Status st = decode_entry(v, e.key, &back);
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::UnsupportedVersion));
  Key other = e.key;
  other.lo ^= 1;
  assert_false(decode_entry(bytes, other, &back).is_ok());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_damage_is_an_error),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
