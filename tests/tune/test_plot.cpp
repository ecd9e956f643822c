// The tuning picture (src/tune/plot.cpp). Golden: each tests/golden/plot/<name>.json (a fixed
// tuning result: no timing happens here) must draw exactly <name>.svg: a heatmap over two
// constexprs with a third name varying, a failed cell and an empty one (heatmap); bars over one
// constexpr with a failed config (bars); one config never measured, its kernel name needing
// escapes (unmeasured). TRI_UPDATE_GOLDEN=1 rewrites the .svg files from the renderer (then
// review the diff). Besides: a caller's title is escaped and made valid UTF-8, and results that
// cannot be drawn are refused with their code.
#include <filesystem>

#include "golden.h"
#include "tune/plot.h"

#include "test_main.h"

using namespace tri;
namespace fs = std::filesystem;

static void plot_goldens(void** state) {
  (void)state;
  std::vector<fs::path> inputs = tri_test::golden_files("tests/golden/plot", ".json");
  if (inputs.size() < 3) fail_msg("expected the golden results under tests/golden/plot, found %zu", inputs.size());
  const bool update = std::getenv("TRI_UPDATE_GOLDEN") != nullptr;
  int failures = 0;
  for (const fs::path& in : inputs) {
    tune::Result r;
    Status st = tune::from_json(tri_test::read_file(in.string()), &r);
    std::string svg;
    if (st.is_ok()) st = tune::plot_svg(r, "", &svg);
    if (!st.is_ok()) {
      print_error("%s: %s\n", in.filename().c_str(), st.message().c_str());
      ++failures;
      continue;
    }
    fs::path out = in;
    out.replace_extension(".svg");
    if (update) std::ofstream(out, std::ios::binary) << svg;
    if (svg != tri_test::read_file(out.string())) {
      print_error("%s: the picture differs from %s:\n%s\n", in.filename().c_str(), out.filename().c_str(), svg.c_str());
      ++failures;
    }
  }
  assert_int_equal(failures, 0);
}

static tune::Result two_configs() {
  tune::Result r;
  r.kernel = "k";
  r.target = "cpu";
  for (int64_t b : {64, 128}) {
    tune::Config c;
    c.constexprs = {{"BLOCK", b}};
    tune::Trial t;
    t.measured = true;
    t.median_ns = 1000.0 * static_cast<double>(b);
    r.configs.push_back(c);
    r.trials.push_back(t);
  }
  return r;
}

static void test_title_is_escaped_and_utf8(void** state) {
  (void)state;
  std::string svg;
  // A control character becomes a space, a byte that is not UTF-8 a '?'; markup is escaped and
  // valid UTF-8 (a 2- and a 3-byte sequence) stays as it is.
  assert_true(tune::plot_svg(two_configs(), "a\x01<b>&\xff \xc3\xa9\xe2\x86\x92", &svg).is_ok());
  assert_true(svg.find("<title>a &lt;b&gt;&amp;? \xc3\xa9\xe2\x86\x92</title>") != std::string::npos);
  // A truncated sequence, an overlong one and a surrogate are not UTF-8 either.
  assert_true(tune::plot_svg(two_configs(), "\xe2\x86|\xc0\xaf|\xed\xa0\x80", &svg).is_ok());
  assert_true(svg.find("<title>?\?|?\?|?\?\?</title>") != std::string::npos);
  // Same result, same bytes; the default title names the kernel and the target.
  std::string again;
  assert_true(tune::plot_svg(two_configs(), "", &svg).is_ok());
  assert_true(tune::plot_svg(two_configs(), "", &again).is_ok());
  assert_true(svg == again);
  assert_true(svg.find("<title>@k on cpu</title>") != std::string::npos);
  assert_true(svg.find("winner: config 0 (BLOCK=64), 64.0 us") != std::string::npos);
}

static void test_refusals(void** state) {
  (void)state;
  std::string svg;
  tune::Result none;
  assert_int_equal(static_cast<int>(tune::plot_svg(none, "", &svg).code()), static_cast<int>(Code::CorruptBinary));
  tune::Result many = two_configs();
  many.configs.resize(tune::kMaxPlotConfigs + 1);
  many.trials.resize(tune::kMaxPlotConfigs + 1);
  assert_int_equal(static_cast<int>(tune::plot_svg(many, "", &svg).code()), static_cast<int>(Code::LimitExceeded));
  // A grid too big to read (65 x 65 cells from 65 configs on its diagonal) draws bars instead,
  // so the text grows with the configs, not with their square.
  tune::Result diag;
  for (int64_t i = 0; i < 65; ++i) {
    tune::Config c;
    c.constexprs = {{"A", i}, {"B", i}};
    tune::Trial t;
    t.status = 1;
    diag.configs.push_back(c);
    diag.trials.push_back(t);
  }
  assert_true(tune::plot_svg(diag, "", &svg).is_ok());
  assert_true(svg.find("class=\"cell") == std::string::npos);
  assert_true(svg.find("too many values for a heatmap") != std::string::npos);
  assert_true(svg.size() < 65 * 600);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plot_goldens),
      cmocka_unit_test(test_title_is_escaped_and_utf8),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
