// libFuzzer target for the reader of tuning results (src/tune: tune::from_json), which reads the
// tuning store's files, `tri tune --export` files and, through tri_tune_plot, a caller's bytes.
// The first byte picks the form: a single result, or an export file of results side by side.
//
// Every input must be refused with CorruptBinary (no crash, no undefined behaviour: UBSan aborts);
// a result that reads must write again to JSON that reads back and writes the same, and must
// draw (tune::plot_svg) or be refused as too large.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "tune/plot.h"
#include "tune/tune.h"

using namespace tri;
using tri_fuzz::check;

namespace {

void one(const std::string& text) {
  tune::Result r;
  Status st = tune::from_json(text, &r);
  if (!st.is_ok()) {
    check(st.code() == Code::CorruptBinary, "from_json returned an unexpected code", st.message());
    return;
  }
  const std::string again = tune::to_json(r, "fuzz");
  tune::Result back;
  st = tune::from_json(again, &back);
  check(st.is_ok(), "a result that reads does not read back after writing", st.message());
  check(tune::to_json(back, "fuzz") == again, "a result does not write the same twice");
  std::string svg;
  st = tune::plot_svg(r, "fuzz", &svg);
  check(st.is_ok() || st.code() == Code::LimitExceeded, "plot_svg refused a result that reads", st.message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    std::vector<std::string> parts;
    if (!tune::split_export(text, &parts).is_ok()) return 0;
    for (const std::string& p : parts) one(p);
  } else {
    one(text);
  }
  return 0;
}
