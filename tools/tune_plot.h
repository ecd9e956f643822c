// `tri tune --plot FILE.svg`: the tuning space as a picture, from tri_tune's result (one config per
// line of its JSON). Two or more constexprs (or warps, stages) that vary: a heatmap over the first
// two, each cell the fastest config with those two values; one that varies: bars. The winner is
// outlined, configs that failed are crossed out. Hand-written SVG: no library, no network.
#pragma once

#include <string>
#include <vector>

namespace tri_tool {

struct PlotConfig {
  std::vector<std::pair<std::string, long long>> values;  // in the config's order
  bool ok = false;     // measured
  double us = 0;       // its median, when ok
  bool winner = false;
};

// The SVG of a tuning result, `title` on top ("@matmul on cuda"). Names whose value is the same in
// every config are no axis.
std::string tune_svg(const std::string& title, const std::vector<PlotConfig>& configs);

}  // namespace tri_tool
