// Entry files: round-trip, and every damage (a flipped byte anywhere, truncation at any length,
// an empty file, a wrong version, foreign bytes, another key) is an error, never wrong bytes; an
// entry sealed with another secret, or unsealed, or rewritten with a fresh unkeyed digest (what
// anyone who knows the format can make) never decodes under a cache's secret.
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

static const MacKey kSecret = [] {
  MacKey k;
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i * 37 + 1);
  return k;
}();

static void test_round_trip(void** state) {
  (void)state;
  Entry e = sample(), back;
  std::string bytes;
  assert_true(encode_entry(e, &kSecret, &bytes).is_ok());
  assert_true(bytes.size() < e.payload.size());  // compressed
  assert_true(decode_entry(bytes, e.key, &kSecret, &back).is_ok());
  assert_true(back.key == e.key);
  assert_true(back.kind == e.kind);
  assert_true(back.metadata == e.metadata);
  assert_true(back.payload == e.payload);
  Entry empty = e;
  empty.payload.clear();
  assert_true(encode_entry(empty, &kSecret, &bytes).is_ok());
  assert_true(decode_entry(bytes, e.key, &kSecret, &back).is_ok());
  assert_true(back.payload.empty());
  // Unkeyed (inside a bundle), and resealed between the two forms.
  assert_true(encode_entry(e, nullptr, &bytes).is_ok());
  assert_true(decode_entry(bytes, e.key, nullptr, &back).is_ok());
  std::string sealed, open;
  assert_true(reseal_entry(bytes, e.key, nullptr, &kSecret, &sealed).is_ok());
  assert_true(decode_entry(sealed, e.key, &kSecret, &back).is_ok() && back.payload == e.payload);
  assert_true(reseal_entry(sealed, e.key, &kSecret, nullptr, &open).is_ok());
  assert_true(open == bytes);
}

// Issue 29, point 2: the checksum was an unkeyed xxh3, so an entry rewritten with a recomputed
// checksum loaded. Now the MAC needs the cache's secret.
static void test_forgeries_are_errors(void** state) {
  (void)state;
  Entry e = sample(), back;
  std::string sealed, unkeyed, other;
  assert_true(encode_entry(e, &kSecret, &sealed).is_ok());
  assert_true(encode_entry(e, nullptr, &unkeyed).is_ok());
  MacKey another = kSecret;
  another[0] ^= 1;
  assert_true(encode_entry(e, &another, &other).is_ok());
  assert_false(decode_entry(unkeyed, e.key, &kSecret, &back).is_ok());
  assert_false(decode_entry(other, e.key, &kSecret, &back).is_ok());
  // Patched payload bytes with the digest recomputed as anyone could.
  std::string forged = sealed.substr(0, sealed.size() - kMacBytes);
  forged[forged.size() - 5] ^= 0x40;
  Mac m = mac(nullptr, forged.data(), forged.size());
  forged.append(reinterpret_cast<const char*>(m.data()), m.size());
  tri::Status st = decode_entry(forged, e.key, &kSecret, &back);
  assert_false(st.is_ok());
  assert_true(st.message().find("MAC mismatch") != std::string::npos);
  // A name too short to hold a key (a bundle's entry of 3 bytes, found by fuzz_cache): no key.
  Key k;
  assert_false(entry_key(std::string("TRICACHE\2\0\0"), &k));
  assert_true(entry_key(sealed, &k) && k == e.key);
  // Sizes are bounded before anything is allocated.
  std::string head = sealed.substr(0, kEntryHeadBytes);
  assert_false(check_entry_head(head.data(), head.size(), kMaxEntryBytes + 1).is_ok());
  assert_true(check_entry_head(head.data(), head.size(), sealed.size()).is_ok());
}

static void test_damage_is_an_error(void** state) {
  (void)state;
  Entry e = sample(), back;
  std::string bytes;
  assert_true(encode_entry(e, &kSecret, &bytes).is_ok());
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string d = bytes;
    d[i] = static_cast<char>(d[i] ^ 0x20);
    assert_false(decode_entry(d, e.key, &kSecret, &back).is_ok());
  }
  for (size_t n = 0; n < bytes.size(); ++n)
    assert_false(decode_entry(bytes.substr(0, n), e.key, &kSecret, &back).is_ok());
  assert_false(decode_entry(std::string(), e.key, &kSecret, &back).is_ok());
  assert_false(decode_entry("#!/bin/sh\necho not an entry\n", e.key, &kSecret, &back).is_ok());
  std::string v = bytes;
  v[8] = 1;  // format version 1 (xxh3 checksums)
  tri::Status st = decode_entry(v, e.key, &kSecret, &back);
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::UnsupportedVersion));
  Key other = e.key;
  other.lo ^= 1;
  assert_false(decode_entry(bytes, other, &kSecret, &back).is_ok());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_damage_is_an_error),
      cmocka_unit_test(test_forgeries_are_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
