// The package container (src/package): a package round-trips field for field; every damage (a
// flipped byte anywhere, truncation at any length, trailing bytes, a newer version, foreign
// bytes) is an error and never a package; a body whose checksum is right but whose counts lie
// (what anyone who knows the format can make) is refused before anything is allocated for them.
#include <cstring>

#include "base/bytes.h"
#include "package/package.h"

#include "test_main.h"

using namespace tri;
using namespace tri::package;

static Package sample() {
  Package p;
  p.producer = "tri test";
  p.name = "vadd.tri";
  p.ir = std::string("\x89TRI\r\n\x1a\nbinary ir", 17);
  Function f;
  f.name = "vadd";
  f.kind = 0;
  Param x;
  x.name = "x";
  x.type = "ptr<f32>";
  x.kind = 0;
  x.type_kind = 1;
  x.dtype = 7;
  x.align = 16;
  f.params.push_back(x);
  Param block;
  block.name = "BLOCK";
  block.type = "i32";
  block.kind = 1;
  block.has_default = true;
  block.default_text = "1024";
  f.params.push_back(block);
  p.functions.push_back(f);
  Kernel k;
  k.name = "vadd";
  k.target = "cpu";
  k.num_warps = 8;
  k.num_stages = 2;
  k.constexprs.push_back(Constexpr{"BLOCK", false, 256, 0, false});
  k.constexprs.push_back(Constexpr{"SCALE", true, 0, 0.5, true});
  k.facts.push_back(Fact{1, 16, 0});
  k.equal_one = 4;
  k.waits = true;
  k.note = "tuned";
  for (uint64_t classes : {uint64_t(0), uint64_t(5)}) {
    Variant v;
    v.classes = classes;
    for (const char* m : {"x86-64-v2", "x86-64-v3"}) {
      Payload pl;
      pl.machine = m;
      pl.kind = "so";
      pl.metadata = std::string("meta\0", 5) + m;
      for (int i = 0; i < 3000; ++i) pl.bytes.push_back(static_cast<char>(i * 31 % 251));
      v.payloads.push_back(pl);
    }
    k.variants.push_back(v);
  }
  p.kernels.push_back(k);
  return p;
}

static void expect_same(const Package& a, const Package& b) {
  assert_true(a.producer == b.producer && a.name == b.name && a.ir == b.ir);
  assert_int_equal(a.functions.size(), b.functions.size());
  const Param& p = b.functions[0].params[1];
  assert_true(p.name == "BLOCK" && p.has_default && p.default_text == "1024" && p.kind == 1);
  assert_int_equal(b.functions[0].params[0].align, 16);
  const Kernel& k = b.kernels.at(0);
  assert_true(k.name == "vadd" && k.target == "cpu" && k.num_warps == 8 && k.num_stages == 2);
  assert_true(k.constexprs[0].i == 256 && !k.constexprs[0].is_float && !k.constexprs[0].is_default);
  assert_true(k.constexprs[1].f == 0.5 && k.constexprs[1].is_float && k.constexprs[1].is_default);
  assert_true(k.facts.size() == 1 && k.facts[0].param == 1 && k.facts[0].align == 16);
  assert_true(k.equal_one == 4 && k.waits && k.note == "tuned");
  assert_int_equal(k.variants.size(), 2);
  assert_int_equal(k.variants[1].classes, 5);
  assert_true(k.variants[1].payloads[1].machine == "x86-64-v3");
  assert_true(k.variants[1].payloads[1].metadata == a.kernels[0].variants[1].payloads[1].metadata);
  assert_true(k.variants[1].payloads[1].bytes == a.kernels[0].variants[1].payloads[1].bytes);
}

static void test_round_trip(void**) {
  Package p = sample(), back;
  std::string bytes;
  assert_true(write(p, &bytes).is_ok());
  assert_true(is_package(bytes.data(), bytes.size()));
  assert_true(bytes.size() < 12000);  // compressed: two variants of 2 x 3000 repetitive bytes
  Status st = read(bytes.data(), bytes.size(), "p.tripkg", &back);
  assert_true(st.is_ok());
  expect_same(p, back);
  Package empty, empty_back;
  assert_true(write(empty, &bytes).is_ok());
  assert_true(read(bytes.data(), bytes.size(), "e", &empty_back).is_ok());
  assert_true(empty_back.kernels.empty() && empty_back.functions.empty());
}

static void test_every_damage_is_an_error(void**) {
  std::string bytes;
  assert_true(write(sample(), &bytes).is_ok());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char bit : {0x01, 0x80}) {
      std::string d = bytes;
      d[i] = static_cast<char>(d[i] ^ bit);
      Package p;
      Status st = read(d.data(), d.size(), "d", &p);
      assert_false(st.is_ok());
      assert_true(st.code() == Code::CorruptBinary || st.code() == Code::UnsupportedVersion ||
                  st.code() == Code::LimitExceeded);
    }
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    Package p;
    assert_int_equal(int(read(bytes.data(), n, "t", &p).code()), int(Code::CorruptBinary));
  }
  std::string longer = bytes + "x";
  Package p;
  assert_int_equal(int(read(longer.data(), longer.size(), "l", &p).code()), int(Code::CorruptBinary));
  const char text[] = "kernel @k() {\n}\n";
  Status st = read(text, sizeof text - 1, "k.tri", &p);
  assert_int_equal(int(st.code()), int(Code::CorruptBinary));
  assert_true(st.message().find("k.tri: not a usable package: no package magic") == 0);
  assert_int_equal(int(read(nullptr, 0, "n", &p).code()), int(Code::CorruptBinary));
}

static void test_newer_version_says_so(void**) {
  std::string bytes;
  assert_true(write(sample(), &bytes).is_ok());
  bytes[8] = 9;
  Package p;
  Status st = read(bytes.data(), bytes.size(), "new.tripkg", &p);
  assert_int_equal(int(st.code()), int(Code::UnsupportedVersion));
  assert_true(st.message() == "new.tripkg: package format version 9 is newer than this library reads (1); upgrade Tri");
}

// A body with the right checksum whose counts promise more than its bytes hold.
static std::string forge(const std::string& body) {
  std::string out;
  assert_true(seal(body, &out).is_ok());
  return out;
}

static void test_lying_counts_are_refused(void**) {
  ByteWriter w;
  w.str("producer");
  w.str("name");
  w.str("");
  w.u(0xffffffffu, 4);  // four billion functions in a few bytes
  std::string bytes = forge(w.s);
  Package p;
  Status st = read(bytes.data(), bytes.size(), "forged", &p);
  assert_int_equal(int(st.code()), int(Code::CorruptBinary));
  assert_true(st.message().find("bad counts") != std::string::npos);
  ByteWriter s;
  s.u(0x7fffffffu, 4);  // a string longer than the body
  bytes = forge(s.s);
  assert_int_equal(int(read(bytes.data(), bytes.size(), "forged", &p).code()), int(Code::CorruptBinary));
  ByteWriter ok;  // the smallest valid body: three empty strings, no functions, no kernels
  ok.str("");
  ok.str("");
  ok.str("");
  ok.u(0, 4);
  ok.u(0, 4);
  bytes = forge(ok.s);
  assert_true(read(bytes.data(), bytes.size(), "min", &p).is_ok());
  ok.u(0, 1);  // one byte too many
  bytes = forge(ok.s);
  assert_int_equal(int(read(bytes.data(), bytes.size(), "more", &p).code()), int(Code::CorruptBinary));
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_every_damage_is_an_error),
      cmocka_unit_test(test_newer_version_says_so),
      cmocka_unit_test(test_lying_counts_are_refused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
