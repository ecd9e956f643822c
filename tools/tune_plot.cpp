// The tuning picture of `tri tune --plot` (tune_plot.h).
#include "tune_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace tri_tool {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : std::string(1, c);
  return o;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string us_text(double us) { return us >= 1000 ? fmt("%.0f", us) : us >= 10 ? fmt("%.1f", us) : fmt("%.2f", us); }

// Fastest green, slowest yellow-white (a sequential scale a reader can order without a legend).
std::string color(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const int r = static_cast<int>(35 + t * (250 - 35)), g = static_cast<int>(139 + t * (240 - 139)),
            b = static_cast<int>(69 + t * (180 - 69));
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle", int size = 12,
                 const char* extra = "") {
  return "<text x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", y) + "\" text-anchor=\"" + anchor +
         "\" font-size=\"" + std::to_string(size) + "\"" + extra + ">" + esc(s) + "</text>\n";
}

}  // namespace

std::string tune_svg(const std::string& title, const std::vector<PlotConfig>& configs) {
  // The names whose values vary, in the order the configs name them.
  std::vector<std::string> names;
  std::map<std::string, std::vector<long long>> values;
  for (const PlotConfig& c : configs)
    for (const auto& [n, v] : c.values) {
      if (!values.count(n)) names.push_back(n);
      auto& vs = values[n];
      if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
  std::vector<std::string> axes;
  for (const std::string& n : names)
    if (values[n].size() > 1) axes.push_back(n);
  for (auto& [n, vs] : values) std::sort(vs.begin(), vs.end());
  double lo = 1e300, hi = 0;
  for (const PlotConfig& c : configs)
    if (c.ok) lo = std::min(lo, c.us), hi = std::max(hi, c.us);
  auto shade = [&](double us) { return hi > lo ? (std::log(us) - std::log(lo)) / (std::log(hi) - std::log(lo)) : 0.0; };
  auto value_of = [](const PlotConfig& c, const std::string& n) {
    for (const auto& [k, v] : c.values)
      if (k == n) return v;
    return 0LL;
  };
  std::string body;
  double width = 0, height = 0;
  const double left = 90, top = 56;
  if (axes.size() >= 2) {
    // Heatmap: rows axes[0], columns axes[1]; a cell is the fastest config with those values.
    const auto& rows = values[axes[0]];
    const auto& cols = values[axes[1]];
    const double cw = 86, ch = 40;
    width = left + cw * cols.size() + 30;
    height = top + ch * rows.size() + 64;
    for (size_t r = 0; r < rows.size(); ++r) {
      body += text(left - 8, top + ch * r + ch / 2 + 4, std::to_string(rows[r]), "end");
      for (size_t k = 0; k < cols.size(); ++k) {
        const PlotConfig* best = nullptr;
        bool any = false, winner = false;
        for (const PlotConfig& c : configs) {
          if (value_of(c, axes[0]) != rows[r] || value_of(c, axes[1]) != cols[k]) continue;
          any = true;
          winner = winner || c.winner;
          if (c.ok && (!best || c.us < best->us)) best = &c;
        }
        const double x = left + cw * k, y = top + ch * r;
        const std::string rect = "<rect x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", y) + "\" width=\"" +
                                 fmt("%.1f", cw - 2) + "\" height=\"" + fmt("%.1f", ch - 2) + "\"";
        if (!any) {
          body += rect + " fill=\"#ffffff\" stroke=\"#dddddd\"/>\n";
        } else if (!best) {
          body += rect + " fill=\"#dddddd\"/>\n" + text(x + cw / 2 - 1, y + ch / 2 + 4, "failed", "middle", 11,
                                                          " fill=\"#777777\"");
        } else {
          body += rect + " fill=\"" + color(shade(best->us)) + "\"" +
                  (winner ? " stroke=\"#000000\" stroke-width=\"3\"" : "") + "/>\n" +
                  text(x + cw / 2 - 1, y + ch / 2 + 4, us_text(best->us) + " us", "middle", 12,
                       winner ? " font-weight=\"bold\"" : "");
        }
      }
    }
    for (size_t k = 0; k < cols.size(); ++k)
      body += text(left + cw * k + cw / 2 - 1, top + ch * rows.size() + 16, std::to_string(cols[k]));
    body += text(left + cw * cols.size() / 2, top + ch * rows.size() + 36, axes[1]);
    body += text(18, top + ch * rows.size() / 2, axes[0], "middle", 12,
                 (" transform=\"rotate(-90 18 " + fmt("%.1f", top + ch * rows.size() / 2) + ")\"").c_str());
    std::string rest;
    for (size_t i = 2; i < axes.size(); ++i) rest += (rest.empty() ? "" : ", ") + axes[i];
    body += text(left, height - 10,
                 "each cell: the fastest config with those values" + (rest.empty() ? "" : " (over " + rest + ")") +
                     "; outlined: the winner",
                 "start", 11, " fill=\"#555555\"");
  } else {
    // Bars: one per config (its value of the varying name, or its index), height its median.
    const double bw = 56, ph = 220;
    width = left + bw * configs.size() + 30;
    height = top + ph + 64;
    const double scale = hi > 0 ? ph / hi : 1;
    for (size_t i = 0; i < configs.size(); ++i) {
      const PlotConfig& c = configs[i];
      const double x = left + bw * i;
      const std::string label = axes.empty() ? "#" + std::to_string(i) : std::to_string(value_of(c, axes[0]));
      if (c.ok) {
        const double h = std::max(1.0, c.us * scale);
        body += "<rect x=\"" + fmt("%.1f", x + 6) + "\" y=\"" + fmt("%.1f", top + ph - h) + "\" width=\"" +
                fmt("%.1f", bw - 12) + "\" height=\"" + fmt("%.1f", h) + "\" fill=\"" + color(shade(c.us)) + "\"" +
                (c.winner ? " stroke=\"#000000\" stroke-width=\"3\"" : "") + "/>\n";
        body += text(x + bw / 2, top + ph - h - 6, us_text(c.us), "middle", 11, c.winner ? " font-weight=\"bold\"" : "");
      } else {
        body += text(x + bw / 2, top + ph - 6, "failed", "middle", 11, " fill=\"#777777\"");
      }
      body += text(x + bw / 2, top + ph + 16, label);
    }
    body += "<line x1=\"" + fmt("%.1f", left) + "\" y1=\"" + fmt("%.1f", top + ph) + "\" x2=\"" +
            fmt("%.1f", left + bw * configs.size()) + "\" y2=\"" + fmt("%.1f", top + ph) + "\" stroke=\"#444444\"/>\n";
    body += text(left + bw * configs.size() / 2, top + ph + 36, axes.empty() ? "config" : axes[0]);
    body += text(left - 8, top + 10, "us", "end");
    body += text(left, height - 10, "median per config; outlined: the winner", "start", 11, " fill=\"#555555\"");
  }
  width = std::max(width, 420.0);
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", width) + "\" height=\"" +
         fmt("%.0f", height) + "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" +
         text(left, 24, title, "start", 15, " font-weight=\"bold\"") +
         text(left, 42, "median time of each config (lower is better)", "start", 11, " fill=\"#555555\"") + body +
         "</svg>\n";
}

}  // namespace tri_tool
