// The tuning space as a picture (tri_tune_plot, `tri tune --plot`, every binding's plot call): one
// SVG renderer over a tuning result, so the CLI and the four bindings draw the same picture.
//
// What is drawn: the names whose value differs between configs (constexprs in the order the
// configs give them, then "warps" and "stages") are the axes. Two or more: a heatmap over the
// first two (rows: the first, columns: the second), each cell the fastest measured config with
// those two values, its median written in it and shaded on a log scale (green: fastest). One (or
// none, or a grid of more than kMaxCells cells): a bar per config, its height the median. The
// chosen config is outlined and named under the picture; configs that failed or were not
// measured say so in place of a time. Numbers are written without the C locale (std::to_chars)
// and nothing depends on the clock or the machine, so a result always gives the same bytes (the
// golden test in tests/tune/test_plot.cpp compares them). Hand-written SVG: no library.
#pragma once

#include <cstddef>
#include <string>

#include "tune/tune.h"

namespace tri::tune {

// A heatmap's grid (rows x columns) above this draws bars instead: a picture that size cannot be
// read, and an untrusted result cannot make the text grow with the square of its configs.
constexpr size_t kMaxCells = 4096;
// A result with more configs than a space may hold (tri_tune_space_add_product's bound) is refused.
constexpr size_t kMaxPlotConfigs = 4096;

// The SVG text of `r`; `title` empty: "@<kernel> on <target>". Code::LimitExceeded when `r` has
// more than kMaxPlotConfigs configs, Code::CorruptBinary when it has none.
Status plot_svg(const Result& r, const std::string& title, std::string* out);

}  // namespace tri::tune
