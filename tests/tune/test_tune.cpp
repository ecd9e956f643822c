// The autotuner's rules (src/tune): the deterministic choice with its 1% tie band, medians,
// bucketing, config text, which parameters a kernel writes, and results through JSON and export.
#include "tune/tune.h"

#include "ir/text.h"

#include "test_main.h"

using namespace tri;

static tune::Trial timed(double median) {
  tune::Trial t;
  t.measured = true;
  t.median_ns = median;
  return t;
}

static void test_choose_fastest(void** state) {
  (void)state;
  std::vector<tune::Trial> t = {timed(300), timed(100), timed(200)};
  assert_int_equal(tune::choose(t), 1);
}

static void test_choose_ties_go_to_lowest_index(void** state) {
  (void)state;
  // 100.9 is within 1% of 100: configs 1 and 2 tie, and the lower index wins although 2 is faster.
  std::vector<tune::Trial> t = {timed(150), timed(100.9), timed(100), timed(100.5)};
  assert_int_equal(tune::choose(t), 1);
  // 101.5 is outside the band: the fastest wins alone.
  t = {timed(150), timed(101.5), timed(100)};
  assert_int_equal(tune::choose(t), 2);
  // The same measurements in the same order always give the same answer, and a wider band
  // (a noisier machine) reaches further.
  t = {timed(104), timed(100)};
  assert_int_equal(tune::choose(t), 1);
  assert_int_equal(tune::choose(t, 0.05), 0);
}

static void test_choose_skips_failures(void** state) {
  (void)state;
  std::vector<tune::Trial> t = {timed(10), timed(100), timed(50)};
  t[0].status = 12;  // failed to compile: its time means nothing
  t[2].measured = false;
  assert_int_equal(tune::choose(t), 1);
  t[1].status = 13;
  assert_int_equal(tune::choose(t), -1);
  assert_int_equal(tune::choose({}), -1);
}

static void test_median_and_bucket(void** state) {
  (void)state;
  assert_true(tune::median({5, 1, 3}) == 3);
  assert_true(tune::median({4, 1, 3, 2}) == 2.5);
  assert_true(tune::median({}) == 0);
  assert_int_equal(tune::bucket_pow2(1000), 1024);
  assert_int_equal(tune::bucket_pow2(1024), 1024);
  assert_int_equal(tune::bucket_pow2(1025), 2048);
  assert_int_equal(tune::bucket_pow2(1), 1);
  assert_int_equal(tune::bucket_pow2(0), 0);
  assert_int_equal(tune::bucket_pow2(-7), -7);
}

static void test_config_text(void** state) {
  (void)state;
  tune::Config c;
  assert_true(tune::parse_config("BLOCK=64,warps=8,stages=2,SPLIT=3", &c).is_ok());
  assert_int_equal(c.constexprs.size(), 2);
  assert_string_equal(c.constexprs[1].first.c_str(), "SPLIT");
  assert_int_equal(c.num_warps, 8);
  assert_int_equal(c.num_stages, 2);
  assert_string_equal(tune::config_text(c).c_str(), "BLOCK=64,SPLIT=3,warps=8,stages=2");
  assert_false(tune::parse_config("BLOCK", &c).is_ok());
  assert_false(tune::parse_config("BLOCK=x", &c).is_ok());
  assert_false(tune::parse_config("", &c).is_ok());
}

// %out is written through a pointer advanced in a loop; %acc through an atomic under an if;
// %x and %y are only read.
static const char kKernel[] =
    "kernel @k(%x: ptr<f32>, %out: ptr<f32>, %acc: ptr<f32>, %y: ptr<f32>, %n: i32) {\n"
    "  %zero = const[value=0] : i32\n"
    "  %one = const[value=1] : i32\n"
    "  %p = for %zero, %n, %one, %out {\n"
    "  ^(%i: i32, %q: ptr<f32>):\n"
    "    %v = load %x : f32\n"
    "    %w = load %y : f32\n"
    "    %s = add %v, %w : f32\n"
    "    store %q, %s\n"
    "    %q2 = addptr %q, %one : ptr<f32>\n"
    "    yield %q2\n"
    "  } : ptr<f32>\n"
    "  %c = cmp[pred=sgt] %n, %zero : i1\n"
    "  if %c {\n"
    "    %v = load %x : f32\n"
    "    %old = atomic[kind=add] %acc, %v : f32\n"
    "    yield\n"
    "  }\n"
    "  return\n"
    "}\n";

static void test_written_params(void** state) {
  (void)state;
  std::unique_ptr<ir::Module> m;
  Status st = ir::parse_text(kKernel, "k.tri", &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  std::vector<bool> w = tune::written_params(*m->functions[0]);
  assert_int_equal(w.size(), 5);
  assert_false(w[0]);
  assert_true(w[1]);
  assert_true(w[2]);
  assert_false(w[3]);
  assert_false(w[4]);
}

static void test_json_round_trip(void** state) {
  (void)state;
  tune::Result r;
  r.key = std::string(32, 'a');
  r.kernel = "softmax";
  r.target = "cpu";
  r.device = "obj 1; \"x86\"\n";
  r.version = "0.2.0";
  r.key_values = {{"n", 1024}};
  r.dtypes = {"ptr<f32>", "i32"};
  tune::Config a, b;
  assert_true(tune::parse_config("BLOCK=64,warps=4,stages=1", &a).is_ok());
  assert_true(tune::parse_config("BLOCK=48,warps=4,stages=1", &b).is_ok());
  r.configs = {a, b};
  r.trials = {timed(1234.5), tune::Trial()};
  r.trials[0].times_ns = {1200, 1234.5, 1300};
  r.trials[1].status = 9;
  r.trials[1].error = "BLOCK is \"48\": not a power of two";
  r.best = 0;
  std::string j = tune::to_json(r, "benchmark");
  tune::Result back;
  Status st = tune::from_json(j, &back);
  if (!st.is_ok()) fail_msg("%s\n%s", st.message().c_str(), j.c_str());
  assert_string_equal(tune::to_json(back, "benchmark").c_str(), j.c_str());
  assert_string_equal(back.device.c_str(), r.device.c_str());
  assert_string_equal(back.trials[1].error.c_str(), r.trials[1].error.c_str());
  // Export files hold results side by side and give each back as written.
  std::vector<std::string> parts;
  assert_true(tune::split_export(tune::join_export({j, j}), &parts).is_ok());
  assert_int_equal(parts.size(), 2);
  assert_true(tune::from_json(parts[1], &back).is_ok());
  assert_int_equal(back.trials[0].times_ns.size(), 3);
  // Damage is an error, never a guess.
  assert_false(tune::from_json(j.substr(0, j.size() / 2), &back).is_ok());
  assert_false(tune::from_json("{\"schema\": 2}", &back).is_ok());
  // Numbers an int64 cannot hold are refused (converting them was undefined behaviour), and
  // num_stages up to 8, as tuning takes them, read back.
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = j;
    const size_t at = t.find(from);
    assert_true(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  assert_false(tune::from_json(with("\"BLOCK\": 64", "\"BLOCK\": 1e300"), &back).is_ok());
  assert_false(tune::from_json(with("\"BLOCK\": 64", "\"BLOCK\": 0.5"), &back).is_ok());
  assert_false(tune::from_json(with("\"best\": 0", "\"best\": -1e30"), &back).is_ok());
  assert_true(tune::from_json(with("\"num_stages\": 1", "\"num_stages\": 8"), &back).is_ok());
  assert_int_equal(back.configs[0].num_stages, 8);
  assert_false(tune::split_export("[1, 2]", &parts).is_ok());
  assert_int_equal(static_cast<int>(tune::split_export("{\"tri_tune\": 9, \"results\": []}", &parts).code()),
                   static_cast<int>(Code::UnsupportedVersion));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_choose_fastest),
      cmocka_unit_test(test_choose_ties_go_to_lowest_index),
      cmocka_unit_test(test_choose_skips_failures),
      cmocka_unit_test(test_median_and_bucket),
      cmocka_unit_test(test_config_text),
      cmocka_unit_test(test_written_params),
      cmocka_unit_test(test_json_round_trip),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
