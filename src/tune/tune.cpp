// The autotuner's rules (tune.h): configs and their text, keys, the written-parameter analysis,
// the median and the deterministic choice, and the JSON form of results with its small reader.
#include "tune/tune.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "ir/op_info.h"

namespace tri::tune {

std::string config_text(const Config& c) {
  std::string s;
  for (const auto& kv : c.constexprs) s += kv.first + "=" + std::to_string(kv.second) + ",";
  s += "warps=" + std::to_string(c.num_warps) + ",stages=" + std::to_string(c.num_stages);
  return s;
}

Status parse_config(const std::string& text, Config* out) {
  Config c;
  size_t pos = 0;
  if (text.empty()) return Status(Code::InvalidArgument, "an empty config");
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string field = text.substr(pos, comma - pos);
    size_t eq = field.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == field.size())
      return Status(Code::InvalidArgument, "config field '" + field + "' is not NAME=INTEGER");
    std::string name = field.substr(0, eq), value = field.substr(eq + 1);
    char* end = nullptr;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (*end) return Status(Code::InvalidArgument, "config field '" + field + "' has no integer value");
    if (name == "warps" || name == "num_warps") c.num_warps = static_cast<int32_t>(v);
    else if (name == "stages" || name == "num_stages") c.num_stages = static_cast<int32_t>(v);
    else c.constexprs.emplace_back(name, v);
    pos = comma + 1;
  }
  *out = std::move(c);
  return Status::ok();
}

int64_t bucket_pow2(int64_t v) {
  if (v < 1) return v;
  int64_t p = 1;
  while (p < v && p < (int64_t(1) << 62)) p <<= 1;
  return p;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int choose(const std::vector<Trial>& trials, double tie) {
  double fastest = 0;
  bool any = false;
  for (const Trial& t : trials) {
    if (t.status != 0 || !t.measured) continue;
    if (!any || t.median_ns < fastest) fastest = t.median_ns;
    any = true;
  }
  if (!any) return -1;
  for (size_t i = 0; i < trials.size(); ++i) {
    const Trial& t = trials[i];
    if (t.status == 0 && t.measured && t.median_ns <= fastest * (1.0 + tie)) return static_cast<int>(i);
  }
  return -1;  // unreachable: the fastest one qualifies
}

std::vector<bool> written_params(const ir::Function& f) {
  using ir::Opcode;
  const size_t np = f.params.size();
  // Which parameters each value derives from, as a set of parameter indices. Kernels have few
  // parameters; a vector<bool> per value keeps it simple and unbounded.
  std::vector<std::vector<bool>> from(f.values.size(), std::vector<bool>(np, false));
  for (size_t p = 0; p < np; ++p)
    if (f.params[p].value != ir::kNoValue) from[f.params[p].value][p] = true;
  std::vector<bool> written(np, false);
  auto merge = [&](std::vector<bool>& into, const std::vector<bool>& src) {
    bool changed = false;
    for (size_t p = 0; p < np; ++p)
      if (src[p] && !into[p]) into[p] = changed = true;
    return changed;
  };
  // Iterate to a fixed point: loop-carried values feed back into their loop's arguments.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t o = 0; o < f.ops.size(); ++o) {
      const ir::OpData& op = f.ops[o];
      std::vector<bool> in(np, false);
      for (ir::ValueId v : op.operands)
        if (v != ir::kNoValue) merge(in, from[v]);
      auto flow = [&](ir::ValueId to, ir::ValueId src) {
        if (to != ir::kNoValue && src != ir::kNoValue) changed |= merge(from[to], from[src]);
      };
      if (op.code == Opcode::For && !op.regions.empty() && op.operands.size() >= 3) {
        // lo, hi, step -> the induction variable; init j and yield j -> carried j and result j.
        const ir::BlockData& body = f.blocks[op.regions[0]];
        std::vector<ir::ValueId> y = f.passed_on(op.regions[0]);
        for (int k = 0; k < 3 && !body.args.empty(); ++k) flow(body.args[0], op.operands[k]);
        for (size_t j = 0; j + 3 < op.operands.size(); ++j) {
          ir::ValueId carried = j + 1 < body.args.size() ? body.args[j + 1] : ir::kNoValue;
          ir::ValueId result = j < op.results.size() ? op.results[j] : ir::kNoValue;
          ir::ValueId yielded = j < y.size() ? y[j] : ir::kNoValue;
          flow(carried, op.operands[j + 3]);
          flow(carried, yielded);
          flow(result, op.operands[j + 3]);
          flow(result, yielded);
        }
      } else if (op.code == Opcode::If) {
        for (ir::BlockId b : op.regions) {
          std::vector<ir::ValueId> y = f.passed_on(b);
          for (size_t j = 0; j < y.size() && j < op.results.size(); ++j) flow(op.results[j], y[j]);
        }
      } else if (op.code == Opcode::While && op.regions.size() == 2) {
        const ir::BlockData& before = f.blocks[op.regions[0]];
        const ir::BlockData& after = f.blocks[op.regions[1]];
        std::vector<ir::ValueId> cond = f.passed_on(op.regions[0]), back = f.passed_on(op.regions[1]);
        for (size_t j = 0; j < before.args.size(); ++j) {
          if (j < op.operands.size()) flow(before.args[j], op.operands[j]);
          if (j < back.size()) flow(before.args[j], back[j]);
        }
        for (size_t j = 0; j < cond.size(); ++j) {
          if (j < after.args.size()) flow(after.args[j], cond[j]);
          if (j < op.results.size()) flow(op.results[j], cond[j]);
        }
      } else {
        // Any other op (regions of reduce and scan included): everything in reaches everything out.
        for (ir::BlockId b : op.regions)
          for (ir::ValueId v : f.passed_on(b))
            if (v != ir::kNoValue) merge(in, from[v]);
        for (ir::ValueId r : op.results) changed |= merge(from[r], in);
        for (ir::BlockId b : op.regions)
          for (ir::ValueId a : f.blocks[b].args) changed |= merge(from[a], in);
      }
      if (op.code == Opcode::Store || op.code == Opcode::Atomic || op.code == Opcode::AtomicCas) {
        ir::ValueId ptr = op.operands.empty() ? ir::kNoValue : op.operands[0];
        if (ptr != ir::kNoValue) changed |= merge(written, from[ptr]);
      } else if (op.code == Opcode::Call || op.code == Opcode::InlineAsm) {
        changed |= merge(written, in);
      }
    }
  }
  for (size_t p = 0; p < np; ++p) written[p] = written[p] && f.params[p].value != ir::kNoValue;
  return written;
}

// ---- JSON

namespace {

std::string esc(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// A JSON value, enough for the results this file writes.
struct J {
  enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
  double n = 0;
  bool b = false;
  std::string s;
  std::vector<J> a;
  std::vector<std::pair<std::string, J>> o;
  size_t begin = 0, end = 0;  // where the value's text lies in the input
  const J* get(const std::string& k) const {
    for (const auto& kv : o)
      if (kv.first == k) return &kv.second;
    return nullptr;
  }
};

class Reader {
 public:
  explicit Reader(const std::string& t) : t_(t) {}
  bool value(J* out, int depth = 0) {
    ws();
    if (p_ >= t_.size() || depth > 32) return false;
    out->begin = p_;
    char c = t_[p_];
    bool ok;
    if (c == '{') ok = object(out, depth);
    else if (c == '[') ok = array(out, depth);
    else if (c == '"') ok = (out->kind = J::Str, string(&out->s));
    else if (t_.compare(p_, 4, "true") == 0) ok = (out->kind = J::Bool, out->b = true, p_ += 4, true);
    else if (t_.compare(p_, 5, "false") == 0) ok = (out->kind = J::Bool, p_ += 5, true);
    else if (t_.compare(p_, 4, "null") == 0) ok = (p_ += 4, true);
    else ok = number(out);
    out->end = p_;
    return ok;
  }
  bool at_end() {
    ws();
    return p_ == t_.size();
  }

 private:
  void ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\n' || t_[p_] == '\t' || t_[p_] == '\r')) ++p_;
  }
  bool number(J* out) {
    const char* s = t_.c_str() + p_;
    char* e = nullptr;
    out->n = std::strtod(s, &e);
    if (e == s) return false;
    out->kind = J::Num;
    p_ += static_cast<size_t>(e - s);
    return true;
  }
  bool string(std::string* out) {
    ++p_;
    while (p_ < t_.size() && t_[p_] != '"') {
      char c = t_[p_++];
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (p_ >= t_.size()) return false;
      char e = t_[p_++];
      if (e == 'u') {
        if (p_ + 4 > t_.size()) return false;
        unsigned v = static_cast<unsigned>(std::strtoul(t_.substr(p_, 4).c_str(), nullptr, 16));
        p_ += 4;
        if (v < 0x80) *out += static_cast<char>(v);
        else if (v < 0x800) *out += static_cast<char>(0xc0 | (v >> 6)), *out += static_cast<char>(0x80 | (v & 63));
        else
          *out += static_cast<char>(0xe0 | (v >> 12)), *out += static_cast<char>(0x80 | ((v >> 6) & 63)),
              *out += static_cast<char>(0x80 | (v & 63));
      } else {
        *out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
      }
    }
    if (p_ >= t_.size()) return false;
    ++p_;
    return true;
  }
  bool array(J* out, int depth) {
    out->kind = J::Arr;
    ++p_;
    ws();
    if (p_ < t_.size() && t_[p_] == ']') return ++p_, true;
    for (;;) {
      out->a.emplace_back();
      if (!value(&out->a.back(), depth + 1)) return false;
      ws();
      if (p_ >= t_.size()) return false;
      if (t_[p_] == ']') return ++p_, true;
      if (t_[p_++] != ',') return false;
    }
  }
  bool object(J* out, int depth) {
    out->kind = J::Obj;
    ++p_;
    ws();
    if (p_ < t_.size() && t_[p_] == '}') return ++p_, true;
    for (;;) {
      ws();
      if (p_ >= t_.size() || t_[p_] != '"') return false;
      std::string k;
      if (!string(&k)) return false;
      ws();
      if (p_ >= t_.size() || t_[p_++] != ':') return false;
      out->o.emplace_back(k, J());
      if (!value(&out->o.back().second, depth + 1)) return false;
      ws();
      if (p_ >= t_.size()) return false;
      if (t_[p_] == '}') return ++p_, true;
      if (t_[p_++] != ',') return false;
    }
  }
  const std::string& t_;
  size_t p_ = 0;
};

Status parse(const std::string& text, J* out) {
  Reader r(text);
  if (!r.value(out) || !r.at_end()) return Status(Code::CorruptBinary, "not valid JSON");
  return Status::ok();
}

Status bad(const std::string& what) { return Status(Code::CorruptBinary, "not a tuning result: " + what); }

bool get_str(const J& o, const char* k, std::string* out) {
  const J* v = o.get(k);
  if (!v || v->kind != J::Str) return false;
  *out = v->s;
  return true;
}
// A JSON number that is an integer an int64_t holds (converting any other double is undefined).
bool as_int(double n, int64_t* out) {
  if (!std::isfinite(n) || n != std::floor(n) || n < -9223372036854775808.0 || n >= 9223372036854775808.0) return false;
  *out = static_cast<int64_t>(n);
  return true;
}
bool get_int(const J& o, const char* k, int64_t* out) {
  const J* v = o.get(k);
  return v && v->kind == J::Num && as_int(v->n, out);
}

}  // namespace

std::string to_json(const Result& r, const std::string& source) {
  std::string s = "{\"schema\": 1, \"key\": " + esc(r.key) +
                  (r.portable_key.empty() ? std::string() : ", \"portable_key\": " + esc(r.portable_key)) +
                  ", \"kernel\": " + esc(r.kernel) +
                  ", \"target\": " + esc(r.target) + ", \"device\": " + esc(r.device) +
                  ", \"tri\": " + esc(r.version) + ", \"source\": " + esc(source) + ",\n \"key_values\": {";
  for (size_t i = 0; i < r.key_values.size(); ++i)
    s += (i ? ", " : "") + esc(r.key_values[i].first) + ": " + std::to_string(r.key_values[i].second);
  s += "}, \"dtypes\": [";
  for (size_t i = 0; i < r.dtypes.size(); ++i) s += (i ? ", " : "") + esc(r.dtypes[i]);
  s += "],\n \"best\": " + std::to_string(r.best) + ", \"configs\": [";
  for (size_t i = 0; i < r.configs.size(); ++i) {
    const Config& c = r.configs[i];
    const Trial& t = r.trials[i];
    s += std::string(i ? "," : "") + "\n  {\"index\": " + std::to_string(i) + ", \"config\": " + esc(config_text(c)) +
         ", \"constexprs\": {";
    for (size_t k = 0; k < c.constexprs.size(); ++k)
      s += (k ? ", " : "") + esc(c.constexprs[k].first) + ": " + std::to_string(c.constexprs[k].second);
    s += "}, \"num_warps\": " + std::to_string(c.num_warps) + ", \"num_stages\": " + std::to_string(c.num_stages) +
         ", \"status\": " + std::to_string(t.status) + ", \"measured\": " + (t.measured ? "true" : "false");
    if (!t.error.empty()) s += ", \"error\": " + esc(t.error);
    if (t.measured) {
      s += ", \"median_ns\": " + num(t.median_ns) + ", \"times_ns\": [";
      for (size_t k = 0; k < t.times_ns.size(); ++k) s += (k ? ", " : "") + num(t.times_ns[k]);
      s += "]";
    }
    s += "}";
  }
  return s + "]}\n";
}

Status from_json(const std::string& text, Result* out) {
  J root;
  TRI_RETURN_IF_ERROR(parse(text, &root));
  if (root.kind != J::Obj) return bad("not an object");
  int64_t schema = 0, best = 0;
  if (!get_int(root, "schema", &schema) || schema != 1) return bad("schema is not 1");
  Result r;
  if (!get_str(root, "key", &r.key) || r.key.size() != 32 || !get_str(root, "kernel", &r.kernel) ||
      !get_str(root, "target", &r.target) || !get_str(root, "device", &r.device) ||
      !get_str(root, "tri", &r.version) || !get_int(root, "best", &best))
    return bad("a field of key, kernel, target, device, tri, best is missing");
  if (root.get("portable_key") && (!get_str(root, "portable_key", &r.portable_key) || r.portable_key.size() != 32))
    return bad("portable_key is not 32 hex digits");
  const J* kv = root.get("key_values");
  const J* dt = root.get("dtypes");
  const J* cf = root.get("configs");
  if (!kv || kv->kind != J::Obj || !dt || dt->kind != J::Arr || !cf || cf->kind != J::Arr)
    return bad("key_values, dtypes or configs is missing");
  for (const auto& e : kv->o) {
    int64_t v = 0;
    if (e.second.kind != J::Num || !as_int(e.second.n, &v)) return bad("a key value is not a 64-bit integer");
    r.key_values.emplace_back(e.first, v);
  }
  for (const J& e : dt->a) {
    if (e.kind != J::Str) return bad("a dtype is not a string");
    r.dtypes.push_back(e.s);
  }
  for (const J& e : cf->a) {
    Config c;
    Trial t;
    int64_t w = 0, st = 0, status = 0;
    const J* ce = e.get("constexprs");
    if (e.kind != J::Obj || !ce || ce->kind != J::Obj || !get_int(e, "num_warps", &w) ||
        !get_int(e, "num_stages", &st) || !get_int(e, "status", &status))
      return bad("a config lacks constexprs, num_warps, num_stages or status");
    for (const auto& x : ce->o) {
      int64_t v = 0;
      if (x.second.kind != J::Num || !as_int(x.second.n, &v)) return bad("a constexpr value is not a 64-bit integer");
      c.constexprs.emplace_back(x.first, v);
    }
    // The values tri_tune_space_add_config accepts; a stored 0 (or 3) would reach the compiler.
    if (w < 1 || w > 32 || (w & (w - 1)))
      return bad("a config's num_warps is " + std::to_string(w) + ", not 1, 2, 4, 8, 16 or 32");
    if (st < 0 || st > 8) return bad("a config's num_stages is " + std::to_string(st) + ", not 0 to 8");
    c.num_warps = static_cast<int32_t>(w);
    c.num_stages = static_cast<int32_t>(st);
    t.status = static_cast<int32_t>(status);
    get_str(e, "error", &t.error);
    const J* m = e.get("measured");
    t.measured = m && m->kind == J::Bool && m->b;
    const J* md = e.get("median_ns");
    if (md && md->kind == J::Num) t.median_ns = md->n;
    const J* ts = e.get("times_ns");
    if (ts && ts->kind == J::Arr)
      for (const J& x : ts->a)
        if (x.kind == J::Num) t.times_ns.push_back(x.n);
    r.configs.push_back(std::move(c));
    r.trials.push_back(std::move(t));
  }
  if (best < 0 || best >= static_cast<int64_t>(r.configs.size())) return bad("best is not a config's index");
  r.best = static_cast<int>(best);
  *out = std::move(r);
  return Status::ok();
}

Status split_export(const std::string& text, std::vector<std::string>* out) {
  J root;
  TRI_RETURN_IF_ERROR(parse(text, &root));
  int64_t version = 0;
  const J* rs = root.kind == J::Obj ? root.get("results") : nullptr;
  if (!get_int(root, "tri_tune", &version) || !rs || rs->kind != J::Arr)
    return Status(Code::CorruptBinary, "not a tuning export: no \"tri_tune\" and \"results\" fields");
  if (version != 1)
    return Status(Code::UnsupportedVersion, "a tuning export of version " + std::to_string(version) + " (this Tri reads 1)");
  out->clear();
  for (const J& r : rs->a) out->push_back(text.substr(r.begin, r.end - r.begin));
  return Status::ok();
}

std::string join_export(const std::vector<std::string>& results) {
  std::string s = "{\"tri_tune\": 1, \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    std::string r = results[i];
    while (!r.empty() && r.back() == '\n') r.pop_back();
    s += (i ? ",\n" : "") + r;
  }
  return s + "\n]}\n";
}

}  // namespace tri::tune
