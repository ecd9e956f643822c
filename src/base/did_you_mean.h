// "Did you mean" hints: the names nearest to a misspelled one, and the hint text. Header-only and
// free of Tri's other layers, so the IR parser and the `tri` command (tools/, built on the public
// API) share one definition.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace tri {

// Levenshtein distance, for "did you mean" hints (names are short: at most a few dozen bytes are
// compared; longer ones are not worth a hint).
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The candidates nearest to `typed`: first, for op names (`stems`), those whose name without a
// one-letter type prefix (s, u, f: `smax` -> `max`) starts `typed` (`maximum` -> smax, umax,
// fmax); then those within an edit distance of a third of the length (at least 1, less than the
// length), nearest first. At most four.
inline std::vector<std::string> nearest(std::string_view typed, const std::vector<std::string>& candidates,
                                 bool stems = false) {
  std::vector<std::string> out;
  if (typed.size() > 64) return out;
  auto add = [&](const std::string& c) {
    if (out.size() < 4 && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  for (const std::string& c : candidates) {
    if (!stems) break;
    bool typed_prefix = c.size() >= 4 && (c[0] == 's' || c[0] == 'u' || c[0] == 'f');
    std::string_view stem = typed_prefix ? std::string_view(c).substr(1) : std::string_view(c);
    if (stem.size() >= 3 && typed.size() > stem.size() && typed.substr(0, stem.size()) == stem) add(c);
  }
  const size_t limit = std::max<size_t>(1, typed.size() / 3);
  std::vector<std::pair<size_t, const std::string*>> close;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(typed, c);
    if (d <= limit && d < typed.size()) close.emplace_back(d, &c);
  }
  std::stable_sort(close.begin(), close.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [d, c] : close) add(*c);
  return out;
}

// " (did you mean a, b?)" or "".
inline std::string did_you_mean(const std::vector<std::string>& names, const char* sigil = "") {
  if (names.empty()) return "";
  std::string s = " (did you mean ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += i + 1 == names.size() ? " or " : ", ";
    s += std::string("'") + sigil + names[i] + "'";
  }
  return s + "?)";
}

}  // namespace tri
