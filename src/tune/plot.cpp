// The tuning picture (plot.h): a tuning result drawn as SVG text.
#include "tune/plot.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

namespace tri::tune {
namespace {

// A number with `digits` decimals, whatever the host program's locale says.
std::string fixed(double v, int digits) {
  char b[64];
  auto res = std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, digits);
  return res.ec == std::errc() ? std::string(b, res.ptr) : std::string("0");
}

// Text as XML character data: markup escaped, the control characters XML 1.0 forbids made
// spaces, and bytes that are not UTF-8 (or code points XML forbids) made '?' (a title or a name
// from an untrusted result must not break the document).
std::string esc(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : c < 0x20 ? " " : std::string(1, s[i]);
      ++i;
      continue;
    }
    const size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    uint32_t cp = len == 4 ? c & 7u : len == 3 ? c & 15u : c & 31u;
    bool ok = len != 0 && i + len <= s.size() && !(len == 3 && c >= 0xf0);
    for (size_t k = 1; ok && k < len; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      ok = (d & 0xc0) == 0x80;
      cp = cp << 6 | (d & 63u);
    }
    ok = ok && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
         !(cp >= 0xd800 && cp <= 0xdfff) && cp != 0xfffe && cp != 0xffff;
    if (ok) o.append(s, i, len), i += len;
    else o += '?', ++i;
  }
  return o;
}

std::string us_text(double us) { return fixed(us, us >= 1000 ? 0 : us >= 10 ? 1 : 2); }

// Fastest green, slowest yellow-white: a sequential scale a reader can order without a legend.
std::string color(double t) {
  t = std::clamp(t, 0.0, 1.0);
  const int r = static_cast<int>(35 + t * 215), g = static_cast<int>(139 + t * 101), b = static_cast<int>(69 + t * 111);
  const char* hex = "0123456789abcdef";
  std::string s = "#";
  for (int v : {r, g, b}) s += hex[v >> 4], s += hex[v & 15];
  return s;
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle", int size = 12,
                 const std::string& extra = "") {
  return "<text x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" text-anchor=\"" + anchor + "\" font-size=\"" +
         std::to_string(size) + "\"" + extra + ">" + esc(s) + "</text>\n";
}

std::string rect(const char* cls, double x, double y, double w, double h, const std::string& rest) {
  return "<rect class=\"" + std::string(cls) + "\" x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" width=\"" +
         fixed(w, 1) + "\" height=\"" + fixed(h, 1) + "\"" + rest + "/>\n";
}

const char* const kOutline = " stroke=\"#000000\" stroke-width=\"3\"";
const char* const kGrey = " fill=\"#555555\"";

// One config as the picture sees it.
struct Point {
  std::vector<std::pair<std::string, int64_t>> values;  // constexprs, then warps and stages
  enum State { Ok, Failed, Unmeasured } state = Unmeasured;
  double us = 0;  // the median in microseconds, when Ok
  bool winner = false;
  int64_t value(const std::string& name) const {
    for (const auto& [n, v] : values)
      if (n == name) return v;
    return 0;
  }
};

const char* state_text(Point::State s) { return s == Point::Failed ? "failed" : "not measured"; }

}  // namespace

Status plot_svg(const Result& r, const std::string& title_in, std::string* out) {
  if (r.configs.empty() || r.configs.size() != r.trials.size())
    return Status(Code::CorruptBinary, "a tuning result with no configs has nothing to plot");
  if (r.configs.size() > kMaxPlotConfigs)
    return Status(Code::LimitExceeded, "a tuning result of " + std::to_string(r.configs.size()) +
                                           " configs; a space holds at most " + std::to_string(kMaxPlotConfigs));
  std::vector<Point> pts;
  for (size_t i = 0; i < r.configs.size(); ++i) {
    Point p;
    p.values = r.configs[i].constexprs;
    p.values.emplace_back("warps", r.configs[i].num_warps);
    p.values.emplace_back("stages", r.configs[i].num_stages);
    const Trial& t = r.trials[i];
    const double us = t.median_ns / 1e3;
    if (t.status != 0) p.state = Point::Failed;
    else if (t.measured && std::isfinite(us) && us > 0) p.state = Point::Ok, p.us = us;
    p.winner = static_cast<int>(i) == r.best;
    pts.push_back(std::move(p));
  }

  // The names whose values vary, in the order the configs name them; each one's values, sorted.
  std::vector<std::string> names, axes;
  std::map<std::string, std::vector<int64_t>> values;
  for (const Point& p : pts)
    for (const auto& [n, v] : p.values) {
      auto [it, added] = values.try_emplace(n);
      if (added) names.push_back(n);
      if (std::find(it->second.begin(), it->second.end(), v) == it->second.end()) it->second.push_back(v);
    }
  for (const std::string& n : names)
    if (values[n].size() > 1) axes.push_back(n);
  for (auto& [n, vs] : values) std::sort(vs.begin(), vs.end());

  double lo = 0, hi = 0;
  for (const Point& p : pts)
    if (p.state == Point::Ok) lo = lo == 0 ? p.us : std::min(lo, p.us), hi = std::max(hi, p.us);
  auto shade = [&](double us) { return hi > lo ? (std::log(us) - std::log(lo)) / (std::log(hi) - std::log(lo)) : 0.0; };

  const double left = 90, top = 56;
  double width = 0, height = 0;
  std::string body, note;
  const bool heat = axes.size() >= 2 && values[axes[0]].size() * values[axes[1]].size() <= kMaxCells;
  if (heat) {
    // Rows: axes[0]'s values; columns: axes[1]'s. A cell holds the fastest measured config with
    // its two values (over the other names that vary).
    const std::vector<int64_t>& rows = values[axes[0]];
    const std::vector<int64_t>& cols = values[axes[1]];
    std::map<std::pair<int64_t, int64_t>, std::vector<const Point*>> cells;
    for (const Point& p : pts) cells[{p.value(axes[0]), p.value(axes[1])}].push_back(&p);
    const double cw = 86, ch = 40;
    const double grid_w = cw * static_cast<double>(cols.size()), grid_h = ch * static_cast<double>(rows.size());
    width = left + grid_w + 30;
    height = top + grid_h + 84;
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      const double y = top + ch * static_cast<double>(ri);
      body += text(left - 8, y + ch / 2 + 4, std::to_string(rows[ri]), "end");
      for (size_t ci = 0; ci < cols.size(); ++ci) {
        const double x = left + cw * static_cast<double>(ci);
        auto it = cells.find({rows[ri], cols[ci]});
        if (it == cells.end()) {
          body += rect("cell empty", x, y, cw - 2, ch - 2, " fill=\"#ffffff\" stroke=\"#dddddd\"");
          continue;
        }
        const Point* best = nullptr;
        bool winner = false, failed = true;
        for (const Point* p : it->second) {
          winner = winner || p->winner;
          failed = failed && p->state == Point::Failed;
          if (p->state == Point::Ok && (!best || p->us < best->us)) best = p;
        }
        const std::string outline = winner ? kOutline : "";
        if (!best) {
          body += rect(winner ? "cell winner" : "cell", x, y, cw - 2, ch - 2, " fill=\"#dddddd\"" + outline);
          body += text(x + cw / 2 - 1, y + ch / 2 + 4, failed ? "failed" : "not measured", "middle", 11,
                       " fill=\"#777777\"");
        } else {
          body += rect(winner ? "cell winner" : "cell", x, y, cw - 2, ch - 2,
                       " fill=\"" + color(shade(best->us)) + "\"" + outline);
          body += text(x + cw / 2 - 1, y + ch / 2 + 4, us_text(best->us) + " us", "middle", 12,
                       winner ? " font-weight=\"bold\"" : "");
        }
      }
    }
    for (size_t ci = 0; ci < cols.size(); ++ci)
      body += text(left + cw * static_cast<double>(ci) + cw / 2 - 1, top + grid_h + 16, std::to_string(cols[ci]));
    body += text(left + grid_w / 2, top + grid_h + 36, axes[1], "middle", 12, " font-weight=\"bold\"");
    const std::string mid = fixed(top + grid_h / 2, 1);
    body += text(18, top + grid_h / 2, axes[0], "middle", 12, " font-weight=\"bold\" transform=\"rotate(-90 18 " + mid + ")\"");
    std::string rest;
    for (size_t i = 2; i < axes.size(); ++i) rest += (rest.empty() ? "" : ", ") + axes[i];
    note = "each cell: the fastest config with those values" + (rest.empty() ? "" : " (over " + rest + ")") +
           "; greener is faster; outlined: the winner";
  } else {
    // A bar per config, in index order: its height the median, labelled with the value of the
    // one name that varies (or the config's index).
    const double bw = 56, ph = 220;
    const double n = static_cast<double>(pts.size());
    width = left + bw * n + 30;
    height = top + ph + 84;
    const double scale = hi > 0 ? ph / hi : 1;
    for (size_t i = 0; i < pts.size(); ++i) {
      const Point& p = pts[i];
      const double x = left + bw * static_cast<double>(i);
      if (p.state == Point::Ok) {
        const double h = std::max(1.0, p.us * scale);
        body += rect(p.winner ? "bar winner" : "bar", x + 6, top + ph - h, bw - 12, h,
                     " fill=\"" + color(shade(p.us)) + "\"" + (p.winner ? kOutline : ""));
        body += text(x + bw / 2, top + ph - h - 6, us_text(p.us), "middle", 11, p.winner ? " font-weight=\"bold\"" : "");
      } else {
        body += text(x + bw / 2, top + ph - 6, p.state == Point::Failed ? "failed" : "unmeasured", "middle", 10,
                     std::string(" fill=\"#777777\"") + (p.winner ? " font-weight=\"bold\"" : ""));
      }
      body += text(x + bw / 2, top + ph + 16, axes.size() == 1 ? std::to_string(p.value(axes[0])) : "#" + std::to_string(i));
    }
    body += "<line x1=\"" + fixed(left, 1) + "\" y1=\"" + fixed(top + ph, 1) + "\" x2=\"" + fixed(left + bw * n, 1) +
            "\" y2=\"" + fixed(top + ph, 1) + "\" stroke=\"#444444\"/>\n";
    body += "<line x1=\"" + fixed(left, 1) + "\" y1=\"" + fixed(top, 1) + "\" x2=\"" + fixed(left, 1) + "\" y2=\"" +
            fixed(top + ph, 1) + "\" stroke=\"#444444\"/>\n";
    body += text(left - 6, top + 4, hi > 0 ? us_text(hi) : "-", "end", 11);
    body += text(left - 6, top + ph + 4, "0", "end", 11);
    body += text(left + bw * n / 2, top + ph + 36, axes.size() == 1 ? axes[0] : "config", "middle", 12,
                 " font-weight=\"bold\"");
    const std::string mid = fixed(top + ph / 2, 1);
    body += text(40, top + ph / 2, "median (us)", "middle", 12, " font-weight=\"bold\" transform=\"rotate(-90 40 " + mid + ")\"");
    note = axes.size() > 1 ? "a bar per config (too many values for a heatmap); outlined: the winner"
                           : "a bar per config; outlined: the winner";
  }

  // The winner, named by the values that vary.
  const Point& w = pts[static_cast<size_t>(std::clamp(r.best, 0, static_cast<int>(pts.size()) - 1))];
  std::string won = "winner: config " + std::to_string(r.best);
  std::string vals;
  for (const std::string& a : axes) vals += (vals.empty() ? "" : ", ") + a + "=" + std::to_string(w.value(a));
  if (!vals.empty()) won += " (" + vals + ")";
  won += w.state == Point::Ok ? ", " + us_text(w.us) + " us" : std::string(", ") + state_text(w.state);

  const std::string title = title_in.empty() ? "@" + r.kernel + " on " + r.target : title_in;
  // Wide enough for the longest line of text (about 0.6 em a character in a sans-serif font).
  auto span = [](const std::string& s, double size) { return 0.6 * size * static_cast<double>(s.size()); };
  width = std::max({width, 420.0, left + span(title, 15) + 20, left + span(won, 12) + 20, left + span(note, 11) + 20});
  width = std::ceil(width);
  *out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fixed(width, 0) + "\" height=\"" + fixed(height, 0) +
         "\" font-family=\"sans-serif\">\n<title>" + esc(title) + "</title>\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" +
         text(left, 24, title, "start", 15, " font-weight=\"bold\"") +
         text(left, 42, "median time of each config (lower is better)", "start", 11, kGrey) + body +
         text(left, height - 28, won, "start", 12, " class=\"winner-label\"") + text(left, height - 10, note, "start", 11, kGrey) +
         "</svg>\n";
  return Status::ok();
}

}  // namespace tri::tune
