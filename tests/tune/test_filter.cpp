// The filter expression of product spaces (src/tune/filter.cpp): C's precedence, short
// circuits, and errors that say where.
#include "tune/filter.h"

#include <cstring>

#include "test_main.h"

using namespace tri;

namespace {

int64_t eval(const std::string& text, int64_t bm, int64_t bn, int warps = 4, int stages = 2) {
  tune::Filter f;
  Status st = tune::Filter::parse(text, {"BM", "BN"}, &f);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  tune::Config c;
  c.constexprs = {{"BM", bm}, {"BN", bn}};
  c.num_warps = warps;
  c.num_stages = stages;
  int64_t v = 0;
  st = f.eval(c, &v);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return v;
}

std::string parse_error(const std::string& text) {
  tune::Filter f;
  Status st = tune::Filter::parse(text, {"BM", "BN"}, &f);
  return st.is_ok() ? std::string("(parsed)") : st.message();
}

}  // namespace

static void test_arithmetic_and_precedence(void** state) {
  (void)state;
  assert_int_equal(eval("1 + 2 * 3", 0, 0), 7);
  assert_int_equal(eval("(1 + 2) * 3", 0, 0), 9);
  assert_int_equal(eval("BM * BN / 4 - 1", 64, 32), 511);
  assert_int_equal(eval("BM % 48", 128, 0), 32);
  assert_int_equal(eval("-BM + 3", 5, 0), -2);
  assert_int_equal(eval("7 / -2", 0, 0), -3);  // C's truncation
  assert_int_equal(eval("1 + 2 == 3", 0, 0), 1);
  assert_int_equal(eval("warps * 32 <= BM && stages >= 2", 128, 0, 4, 2), 1);
  assert_int_equal(eval("num_warps == 8 || num_stages == 3", 0, 0, 4, 3), 1);
  assert_int_equal(eval("!(BM > 32) || BN == 16", 64, 16), 1);
  assert_int_equal(eval("!(BM > 32) || BN == 16", 64, 32), 0);
  assert_int_equal(eval("!!BM", 5, 0), 1);
  assert_int_equal(eval("BM != BN", 5, 5), 0);
}

static void test_short_circuit(void** state) {
  (void)state;
  // The right side is not evaluated when the left decides, so it may divide by zero there.
  assert_int_equal(eval("BN != 0 && BM / BN > 2", 64, 0), 0);
  assert_int_equal(eval("BN == 0 || BM / BN > 2", 64, 0), 1);
  tune::Filter f;
  assert_true(tune::Filter::parse("BM / BN", {"BM", "BN"}, &f).is_ok());
  tune::Config c;
  c.constexprs = {{"BM", 4}, {"BN", 0}};
  int64_t v = 0;
  Status st = f.eval(c, &v);
  assert_false(st.is_ok());
  assert_non_null(strstr(st.message().c_str(), "division by 0"));
}

static void test_errors(void** state) {
  (void)state;
  assert_non_null(strstr(parse_error("BM * BX").c_str(), "column 6: no value is named 'BX'"));
  assert_non_null(strstr(parse_error("BM < (BN").c_str(), "column 9: expected ')', found the end"));
  assert_non_null(strstr(parse_error("BM <").c_str(), "expected a number, a name"));
  assert_non_null(strstr(parse_error("BM BN").c_str(), "column 4: expected an operator or the end"));
  assert_non_null(strstr(parse_error("BM & BN").c_str(), "expected an operator or the end"));
  assert_non_null(strstr(parse_error("99999999999999999999").c_str(), "a smaller number"));
  assert_string_equal(parse_error(" BM>=BN&&BN>0 ").c_str(), "(parsed)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arithmetic_and_precedence),
      cmocka_unit_test(test_short_circuit),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
