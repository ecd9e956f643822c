// Helpers of the tests that run imported TTIR through the public C API (test_ttir_run.cpp,
// test_ttir_control.cpp): buffers with their tri_arg, f16 conversions, launching a fixture or a
// TTIR snippet on a target (the interpreter in checked mode), and comparisons that name the
// element and the target. Each test binary includes it once (the globals are its own).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tri/tri.h"
#include "test_main.h"

namespace ttir_test {

inline tri_context* g_ctx;
inline const char* const kTargets[] = {"interp", "cpu"};
inline constexpr int kGuard = 8;  // guard elements after every output buffer

inline std::string last_error() {
  char buf[4096];
  tri_last_error_message(buf, sizeof buf);
  return buf;
}

// ---- f16 conversions for the f16 kernels (round to nearest even)
inline uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (man ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000;
    int shift = 14 - exp;
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float from_half(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v = exp == 0 ? std::ldexp(static_cast<float>(man), -24)
            : exp == 31 ? (man ? NAN : INFINITY)
                        : std::ldexp(static_cast<float>(man | 0x400), exp - 25);
  return sign ? -v : v;
}

// ---- buffers and arguments
struct Buffer {
  std::vector<unsigned char> bytes;
  int32_t dtype;
  size_t elem;
  template <class T>
  T* as() { return reinterpret_cast<T*>(bytes.data()); }
  template <class T>
  const T* as() const { return reinterpret_cast<const T*>(bytes.data()); }
};

template <class T>
inline Buffer buffer(const std::vector<T>& v, int32_t dtype) {
  Buffer b;
  b.dtype = dtype;
  b.elem = sizeof(T);
  b.bytes.resize(v.size() * sizeof(T));
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}

inline tri_arg ptr_arg(Buffer& b) {
  tri_arg a{};
  a.value.p = b.bytes.data();
  a.extent = b.bytes.size();
  a.kind = TRI_TYPE_POINTER;
  a.dtype = b.dtype;
  return a;
}

inline tri_arg i32_arg(int64_t v) {
  tri_arg a{};
  a.value.i = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I32;
  return a;
}

inline tri_arg i64_arg(int64_t v) {
  tri_arg a{};
  a.value.i = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_I64;
  return a;
}

inline tri_arg f32_arg(double v) {
  tri_arg a{};
  a.value.f = v;
  a.kind = TRI_TYPE_SCALAR;
  a.dtype = TRI_DTYPE_F32;
  return a;
}

inline std::string fixture_text(const std::string& name, std::string* path) {
  *path = "tests/import/ttir/" + name + ".ttir";
  std::string text = tri_test::read_file(tri_test::source_path(*path));
  if (text.empty()) fail_msg("cannot read %s", path->c_str());
  return text;
}

inline tri_module* load_fixture(const std::string& name) {
  std::string path, text = fixture_text(name, &path);
  tri_module* m = nullptr;
  if (tri_module_create(g_ctx, text.data(), text.size(), path.c_str(), &m) != TRI_OK)
    fail_msg("importing %s: %s", path.c_str(), last_error().c_str());
  return m;
}

// Imports `text` (named `source` in messages), compiles kernel `kernel` for `target` (the
// interpreter in checked mode) and launches it. Returns false (after printing why) when the
// target is absent; fails the test on any other error unless `want` says which error is expected.
inline bool launch_text(const std::string& text, const std::string& source, const char* kernel, const char* target,
                 uint32_t gx, uint32_t gy, std::vector<tri_arg> args, tri_result want = TRI_OK,
                 std::string* message = nullptr) {
  tri_module* m = nullptr;
  if (tri_module_create(g_ctx, text.data(), text.size(), source.c_str(), &m) != TRI_OK)
    fail_msg("importing %s: %s", source.c_str(), last_error().c_str());
  tri_compile_options* o = nullptr;
  assert_int_equal(tri_compile_options_create(&o), TRI_OK);
  assert_int_equal(tri_compile_options_set_target(o, target), TRI_OK);
  if (std::strcmp(target, "interp") == 0) assert_int_equal(tri_compile_options_set_checked(o, 1), TRI_OK);
  tri_kernel* k = nullptr;
  tri_result r = tri_kernel_compile(m, kernel, o, &k);
  tri_compile_options_destroy(o);
  if (r == TRI_ERROR_UNSUPPORTED && std::strcmp(target, "cpu") == 0) {
    std::printf("note: target %s is not in this build; %s runs on the interpreter only\n", target, source.c_str());
    tri_module_destroy(m);
    return false;
  }
  if (r != TRI_OK) fail_msg("%s @%s [%s]: compile: %s", source.c_str(), kernel, target, last_error().c_str());
  r = tri_launch(k, gx, gy, 1, nullptr, args.data(), static_cast<uint32_t>(args.size()));
  std::string msg = r == TRI_OK ? "" : last_error();
  tri_kernel_destroy(k);
  tri_module_destroy(m);
  if (r != want)
    fail_msg("%s @%s [%s]: launch returned %d, expected %d: %s", source.c_str(), kernel, target, r, want, msg.c_str());
  if (message) *message = msg;
  return true;
}

// TTIR snippet `name` of tests/import/snippets (also seeds of the TTIR fuzzer: fuzz/make_corpus.sh).
inline std::string snippet(const std::string& name) {
  std::string text = tri_test::read_file(tri_test::source_path("tests/import/snippets/" + name + ".ttir"));
  if (text.empty()) fail_msg("cannot read tests/import/snippets/%s.ttir", name.c_str());
  return text;
}

// The same for fixture `name` of tests/import/ttir.
inline bool launch(const std::string& name, const char* kernel, const char* target, uint32_t gx, uint32_t gy,
            std::vector<tri_arg> args, tri_result want = TRI_OK, std::string* message = nullptr) {
  std::string path, text = fixture_text(name, &path);
  return launch_text(text, path, kernel, target, gx, gy, std::move(args), want, message);
}

// |got - want| <= atol + rtol * |want|, element by element, with a message naming the element.
inline void expect_close(const char* what, const char* target, const float* got, const double* want, size_t n, double atol,
                  double rtol) {
  for (size_t i = 0; i < n; ++i) {
    double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(d <= atol + rtol * std::fabs(want[i])))
      fail_msg("%s [%s]: element %zu is %.9g, expected %.9g (atol %g, rtol %g)", what, target, i, got[i], want[i], atol,
               rtol);
  }
}

template <class T>
inline void expect_guard(const char* what, const char* target, const T* data, size_t n, T sentinel) {
  for (size_t i = n; i < n + kGuard; ++i)
    if (std::memcmp(&data[i], &sentinel, sizeof(T)) != 0) fail_msg("%s [%s]: guard element %zu was written", what, target, i);
}

inline std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline const float kSentinel = -777.0f;

}  // namespace ttir_test

using namespace ttir_test;  // NOLINT: the tests that include this use its names unqualified
