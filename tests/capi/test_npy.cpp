// Tests of the `tri` command's .npy reader and writer (tools/npy.cpp, compiled in here): round
// trips of every element type, byte-exact agreement with what NumPy writes, the NumPy variants
// the reader accepts (fortran order, big-endian, version 2.0), and rejection of malformed files:
// every truncation, bad headers, size mismatches, and random corruptions, none of which may
// crash or over-read.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../tools/host_data.cpp"
#include "../../tools/npy.cpp"
#include "test_main.h"

using namespace tri_tool;

static HostBuffer filled(int32_t dtype, std::vector<int64_t> shape, uint32_t seed) {
  HostBuffer b(dtype, std::move(shape));
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < b.count(); ++i) {
    uint64_t v = rng() & bits_mask(dtype);
    if (dtype == TRI_DTYPE_I1) v &= 1;
    b.set(i, v);
  }
  return b;
}

static std::string make_npy(const std::string& header_dict, const std::string& data, int major = 1) {
  std::string h = header_dict;
  size_t pre = major == 1 ? 10 : 12;
  h.append((64 - (pre + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>((h.size() >> 8) & 0xff);
  if (major != 1) out += std::string(2, '\0');
  return out + h + data;
}

static bool parses(const std::string& bytes, HostBuffer* out = nullptr) {
  HostBuffer tmp;
  std::string err;
  bool ok = npy_parse(bytes.data(), bytes.size(), out ? out : &tmp, &err);
  if (!ok) assert_true(!err.empty());
  return ok;
}

static void round_trip_every_dtype(void** state) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {7}, {3, 5}, {2, 3, 4}, {0}, {4, 0, 2}};
  for (int32_t dt = 0; dt < kNumDtypes; ++dt) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      HostBuffer in = filled(dt, shapes[s], 17 * dt + s);
      std::string bytes = npy_serialize(in);
      assert_int_equal((bytes.size() - in.count() * (dt == TRI_DTYPE_BF16 || dt >= TRI_DTYPE_F8E4M3
                                                         ? 4 : dtype_bytes(dt))) % 64, 0);
      HostBuffer out;
      assert_true(parses(bytes, &out));
      assert_true(out.shape() == in.shape());
      assert_int_equal(out.count(), in.count());
      for (size_t i = 0; i < in.count(); ++i) {
        if (dt == TRI_DTYPE_BF16 || dt == TRI_DTYPE_F8E4M3 || dt == TRI_DTYPE_F8E5M2) {
          // Written as f32, exactly.
          assert_int_equal(out.dtype(), TRI_DTYPE_F32);
          double a = float_bits_to_double(dt, in.get(i)), b = float_bits_to_double(TRI_DTYPE_F32, out.get(i));
          assert_true((std::isnan(a) && std::isnan(b)) || a == b);
        } else {
          assert_int_equal(out.dtype(), dt);
          assert_int_equal(out.get(i), in.get(i));
        }
      }
    }
  }
}

// What numpy 1.x/2.x np.save writes for np.arange(3, dtype=np.float32) and a 2x2 int64 array.
static void matches_numpy_bytes(void** state) {
  HostBuffer b(TRI_DTYPE_F32, {3});
  for (int i = 0; i < 3; ++i) b.set(i, double_to_float_bits(TRI_DTYPE_F32, i));
  std::string bytes = npy_serialize(b);
  std::string expect("\x93NUMPY\x01\x00\x76\x00", 10);
  expect += "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  expect.append(128 - 1 - expect.size(), ' ');
  expect += '\n';
  expect += std::string("\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40", 12);
  assert_true(bytes == expect);

  HostBuffer m(TRI_DTYPE_I64, {2, 2});
  std::string mb = npy_serialize(m);
  assert_true(mb.find("'shape': (2, 2), }") != std::string::npos);
  assert_true(mb.find("'descr': '<i8'") != std::string::npos);
}

static void reads_numpy_variants(void** state) {
  // Fortran order: the file holds columns; rows come out.
  int32_t col_major[6] = {1, 4, 2, 5, 3, 6};  // [[1,2,3],[4,5,6]]
  HostBuffer out;
  assert_true(parses(make_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                              std::string(reinterpret_cast<char*>(col_major), 24)),
                     &out));
  for (int i = 0; i < 6; ++i) assert_int_equal(bits_to_signed(TRI_DTYPE_I32, out.get(i)), i + 1);
  // Big-endian data is swapped.
  assert_true(parses(make_npy("{'descr': '>i2', 'fortran_order': False, 'shape': (2,)}",
                              std::string("\x01\x02\xff\xfe", 4)),
                     &out));
  assert_int_equal(out.get(0), 0x0102);
  assert_int_equal(out.get(1), 0xfffe);
  // Version 2.0 (4-byte header length), double quotes, no trailing comma, a 0-d array.
  assert_true(parses(make_npy("{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": ()}", std::string(8, '\0'), 2),
                     &out));
  assert_int_equal(out.count(), 1);
  assert_true(out.shape().empty());
  // |u1 reads as i8 bits, |b1 normalizes to 0/1.
  assert_true(parses(make_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }", "\xff"), &out));
  assert_int_equal(out.dtype(), TRI_DTYPE_I8);
  assert_int_equal(out.get(0), 0xff);
  assert_true(parses(make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", std::string("\x00\x07", 2)),
                     &out));
  assert_int_equal(out.dtype(), TRI_DTYPE_I1);
  assert_int_equal(out.get(0), 0);
  assert_int_equal(out.get(1), 1);
}

static void rejects_malformed_headers(void** state) {
  const std::string four(4, '\0');
  const char* bad_dicts[] = {
      "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",   // complex: unsupported
      "{'descr': '<f4', 'shape': (1,), }",                           // no fortran_order
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1, }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [1], }",    // a list, not a tuple
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
      "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (1,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,) }x",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }",
      "['descr', '<f4']",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (1,), }",
      "{'descr': 'f4', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1 1), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
      "",
  };
  for (const char* d : bad_dicts) assert_false(parses(make_npy(d, four)));
  // Data of the wrong size, both ways, and a shape whose product overflows.
  assert_false(parses(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", four)));
  assert_false(parses(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", four + four)));
  assert_false(parses(make_npy(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", four)));
  // A NUL inside the header, a bad magic, an unknown version, a header length past the end.
  std::string good = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", four);
  assert_true(parses(good));
  std::string nul = good;
  nul[20] = '\0';
  assert_false(parses(nul));
  std::string magic = good;
  magic[1] = 'n';
  assert_false(parses(magic));
  std::string version = good;
  version[6] = 4;
  assert_false(parses(version));
  std::string len = good;
  len[8] = '\xff';
  len[9] = '\xff';
  assert_false(parses(len));
}

static void rejects_every_truncation_and_survives_corruption(void** state) {
  HostBuffer b = filled(TRI_DTYPE_F32, {3, 4}, 5);
  std::string good = npy_serialize(b);
  for (size_t n = 0; n < good.size(); ++n) {
    // Copy to an exact-size heap buffer so that a sanitizer build catches any over-read.
    std::vector<char> cut(good.begin(), good.begin() + n);
    HostBuffer out;
    std::string err;
    assert_false(npy_parse(cut.data(), cut.size(), &out, &err));
  }
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<char> m(good.begin(), good.end());
    int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f) m[rng() % 128] = static_cast<char>(rng());
    HostBuffer out;
    std::string err;
    if (npy_parse(m.data(), m.size(), &out, &err)) {
      assert_true(out.byte_size() <= m.size());
    } else {
      assert_true(!err.empty());
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip_every_dtype),
      cmocka_unit_test(matches_numpy_bytes),
      cmocka_unit_test(reads_numpy_variants),
      cmocka_unit_test(rejects_malformed_headers),
      cmocka_unit_test(rejects_every_truncation_and_survives_corruption),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
