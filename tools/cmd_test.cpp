// `tri test`: IR files that execute. A `// run:` comment next to a kernel states its launch (grid,
// constexprs, arguments with literal contents) and what a buffer must hold afterwards; this
// command runs every such line on every target present (the interpreter in checked mode) and
// compares. The syntax is documented in docs/testing.md; in short:
//
//   // run: @vadd grid=(2) const BLOCK=4 args(%x = f32[5] {1,2,3,4,5}, %y = f32[5] fill(1),
//   //      %out = f32[5] zeros, %n = i32 5) expect(%out = {2,3,4,5,6})
//
// (a line ending in '\' continues on the next comment line).
#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "host_data.h"
#include "base/did_you_mean.h"
#include "kernel_runner.h"

using namespace tri_tool;

namespace {

struct Token {
  enum Kind { Word, Func, Value, Punct, String, End } kind = End;
  std::string text;
  int col = 0;  // 1-based column in the source line where the token starts
};

// One source position per character of the joined run text, so errors point into the file.
struct RunText {
  std::string text;
  std::vector<std::pair<int, int>> pos;  // (line, col) of each character
};

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-';
}

class Lexer {
 public:
  explicit Lexer(const RunText& rt) : rt_(rt) {}

  bool run(std::vector<Token>* out, std::string* error, int* err_at) {
    const std::string& s = rt_.text;
    size_t i = 0;
    while (i < s.size()) {
      char c = s[i];
      if (c == ' ' || c == '\t') {
        ++i;
        continue;
      }
      Token t;
      t.col = static_cast<int>(i);
      if (c == '@' || c == '%') {
        size_t j = i + 1;
        while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '.')) ++j;
        if (j == i + 1) {
          *error = std::string("expected a name after '") + c + "'";
          *err_at = static_cast<int>(i);
          return false;
        }
        t.kind = c == '@' ? Token::Func : Token::Value;
        t.text = s.substr(i + 1, j - i - 1);
        i = j;
      } else if (c == '"') {
        size_t j = i + 1;
        while (j < s.size() && s[j] != '"') {
          if (s[j] == '\\' && j + 1 < s.size()) ++j;
          t.text += s[j++];
        }
        if (j >= s.size()) {
          *error = "unterminated string";
          *err_at = static_cast<int>(i);
          return false;
        }
        t.kind = Token::String;
        i = j + 1;
      } else if (std::strchr("(){}[],=", c)) {
        t.kind = Token::Punct;
        t.text = std::string(1, c);
        ++i;
      } else if (is_word_char(c)) {
        size_t j = i;
        while (j < s.size() && is_word_char(s[j])) ++j;
        t.kind = Token::Word;
        t.text = s.substr(i, j - i);
        i = j;
      } else {
        *error = std::string("unexpected character '") + c + "'";
        *err_at = static_cast<int>(i);
        return false;
      }
      out->push_back(t);
    }
    Token end;
    end.col = static_cast<int>(s.size());
    out->push_back(end);
    return true;
  }

 private:
  const RunText& rt_;
};

// The contents of a buffer as written: a literal list, fill(v), zeros, iota(start, step).
struct Init {
  enum Kind { List, Fill, Zeros, Iota } kind = Zeros;
  std::vector<std::string> values;  // List; Fill uses values[0]
  std::string start = "0", step = "1";
  int at = 0;
};

struct ArgDecl {
  std::string name;
  int32_t dtype = TRI_DTYPE_F32;
  bool scalar = false;
  std::vector<int64_t> shape;
  std::string scalar_text;
  Init init;
  int at = 0;
};

struct Expect {
  std::string name;
  Init values;
  double atol = -1, rtol = -1;
  int64_t ulp = -1;
  int at = 0;
};

struct RunLine {
  std::string kernel;
  uint32_t grid[3] = {1, 1, 1};
  std::vector<ConstInput> consts;
  std::vector<ArgDecl> args;
  std::vector<Expect> expects;
  bool expect_error = false;
  std::string error_code, error_text;
  bool checked_only = false;
};

class Parser {
 public:
  Parser(const std::vector<Token>& toks) : t_(toks) {}

  bool parse(RunLine* out, std::string* error, int* err_at) {
    if (t_[p_].kind != Token::Func) return fail("expected '@KERNEL' after 'run:'", error, err_at);
    out->kernel = t_[p_++].text;
    bool have_args = false;
    while (t_[p_].kind != Token::End) {
      const Token& t = t_[p_];
      if (t.kind != Token::Word) return fail("expected grid=, const, args(...), expect(...), expect_error(...) or checked",
                                            error, err_at);
      if (t.text == "grid") {
        ++p_;
        if (!punct("=") || !punct("(")) return fail("expected grid=(X, Y, Z)", error, err_at);
        for (int i = 0; i < 3; ++i) {
          std::string n;
          if (!word(&n)) return fail("expected a grid size", error, err_at);
          char* end = nullptr;
          long long v = std::strtoll(n.c_str(), &end, 10);
          if (*end || v < 1 || v > 0xffffffffll) return fail("bad grid size '" + n + "'", error, err_at, -1);
          out->grid[i] = static_cast<uint32_t>(v);
          if (punct(")")) break;
          if (i == 2 || !punct(",")) return fail("expected ',' or ')' in grid", error, err_at);
        }
      } else if (t.text == "const") {
        ++p_;
        ConstInput c;
        if (!word(&c.name) || !punct("=") || !word(&c.text)) return fail("expected const NAME=VALUE", error, err_at);
        out->consts.push_back(c);
      } else if (t.text == "checked") {
        ++p_;
        out->checked_only = true;
      } else if (t.text == "args") {
        ++p_;
        if (have_args) return fail("args(...) given twice", error, err_at, -1);
        have_args = true;
        if (!punct("(")) return fail("expected '(' after args", error, err_at);
        if (!punct(")")) {
          for (;;) {
            ArgDecl a;
            if (!arg(&a, error, err_at)) return false;
            out->args.push_back(std::move(a));
            if (punct(")")) break;
            if (!punct(",")) return fail("expected ',' or ')' after an argument", error, err_at);
          }
        }
      } else if (t.text == "expect") {
        ++p_;
        if (!punct("(")) return fail("expected '(' after expect", error, err_at);
        for (;;) {
          Expect e;
          e.at = t_[p_].col;
          if (t_[p_].kind != Token::Value) return fail("expected %NAME = VALUES", error, err_at);
          e.name = t_[p_++].text;
          if (!punct("=")) return fail("expected '=' after %" + e.name, error, err_at);
          if (!init(&e.values, error, err_at)) return false;
          while (t_[p_].kind == Token::Word && (t_[p_].text == "atol" || t_[p_].text == "rtol" || t_[p_].text == "ulp")) {
            std::string key = t_[p_++].text, v;
            if (!punct("=") || !word(&v)) return fail("expected " + key + "=NUMBER", error, err_at);
            char* end = nullptr;
            double d = std::strtod(v.c_str(), &end);
            if (*end || !(d >= 0)) return fail("bad " + key + " '" + v + "'", error, err_at, -1);
            if (key == "atol") e.atol = d;
            if (key == "rtol") e.rtol = d;
            if (key == "ulp") e.ulp = static_cast<int64_t>(d);
          }
          out->expects.push_back(std::move(e));
          if (punct(")")) break;
          if (!punct(",")) return fail("expected ',' or ')' in expect", error, err_at);
        }
      } else if (t.text == "expect_error") {
        ++p_;
        if (!punct("(") || !word(&out->error_code)) return fail("expected expect_error(TRI_ERROR_..., \"text\")", error, err_at);
        if (punct(",")) {
          if (t_[p_].kind != Token::String) return fail("expected a quoted message fragment", error, err_at);
          out->error_text = t_[p_++].text;
        }
        if (!punct(")")) return fail("expected ')'", error, err_at);
        out->expect_error = true;
      } else {
        static const std::vector<std::string> kItems = {"grid", "const", "args", "expect", "expect_error", "checked"};
        return fail("unknown item '" + t.text + "'" + tri::did_you_mean(tri::nearest(t.text, kItems)) +
                        " (the items: grid=(...), const NAME=V, args(...), expect(...), expect_error(...), checked)",
                    error, err_at);
      }
    }
    if (!have_args) return fail("no args(...) given (write args() for a kernel without arguments)", error, err_at);
    if (out->expects.empty() && !out->expect_error)
      return fail("nothing to check: give expect(...) or expect_error(...)", error, err_at);
    return true;
  }

 private:
  bool fail(const std::string& msg, std::string* error, int* err_at, int back = 0) {
    *error = msg;
    *err_at = t_[back < 0 && p_ > 0 ? p_ - 1 : p_].col;
    return false;
  }
  bool punct(const char* s) {
    if (t_[p_].kind == Token::Punct && t_[p_].text == s) {
      ++p_;
      return true;
    }
    return false;
  }
  bool word(std::string* out) {
    if (t_[p_].kind != Token::Word) return false;
    *out = t_[p_++].text;
    return true;
  }

  bool arg(ArgDecl* a, std::string* error, int* err_at) {
    a->at = t_[p_].col;
    if (t_[p_].kind != Token::Value) return fail("expected %NAME = TYPE VALUE", error, err_at);
    a->name = t_[p_++].text;
    std::string dt;
    if (!punct("=") || !word(&dt)) return fail("expected '= TYPE' after %" + a->name, error, err_at);
    if (!dtype_from_name(dt, &a->dtype)) {
      // `%eps = 0.0`: a value where the element type goes.
      const bool value = !dt.empty() && (std::isdigit(static_cast<unsigned char>(dt[0])) || dt[0] == '-' ||
                                         dt[0] == '.' || dt == "inf" || dt == "nan" || dt == "true" || dt == "false");
      if (value)
        return fail("%" + a->name + " = " + dt + ": the element type comes before the value: `%" + a->name + " = " +
                        (dt.find_first_of(".en") != std::string::npos && dt != "true" ? "f32 " : "i32 ") + dt +
                        "` (the parameter's type)",
                    error, err_at, -1);
      return fail("unknown element type '" + dt + "'", error, err_at, -1);
    }
    if (punct("[")) {
      if (!punct("]")) {
        for (;;) {
          std::string n;
          if (!word(&n)) return fail("expected a dimension", error, err_at);
          char* end = nullptr;
          long long v = std::strtoll(n.c_str(), &end, 10);
          if (*end || v < 0 || v > (1ll << 30)) return fail("bad dimension '" + n + "'", error, err_at, -1);
          a->shape.push_back(v);
          if (punct("]")) break;
          if (!punct(",")) return fail("expected ',' or ']' in a shape", error, err_at);
        }
      }
      return init(&a->init, error, err_at);
    }
    a->scalar = true;
    if (!word(&a->scalar_text)) return fail("expected the scalar's value", error, err_at);
    return true;
  }

  bool init(Init* in, std::string* error, int* err_at) {
    in->at = t_[p_].col;
    if (t_[p_].kind == Token::Punct && t_[p_].text == "{") {
      in->kind = Init::List;
      return list(in, error, err_at);
    }
    std::string w;
    if (!word(&w)) return fail("expected {values}, fill(V), zeros or iota", error, err_at);
    if (w == "zeros") {
      in->kind = Init::Zeros;
    } else if (w == "fill") {
      in->kind = Init::Fill;
      std::string v;
      if (!punct("(") || !word(&v) || !punct(")")) return fail("expected fill(VALUE)", error, err_at);
      in->values.push_back(v);
    } else if (w == "iota") {
      in->kind = Init::Iota;
      if (punct("(")) {
        if (!word(&in->start)) return fail("expected iota(START[, STEP])", error, err_at);
        if (punct(",") && !word(&in->step)) return fail("expected iota(START, STEP)", error, err_at);
        if (!punct(")")) return fail("expected ')' after iota's arguments", error, err_at);
      }
    } else {
      return fail("expected {values}, fill(V), zeros or iota, not '" + w + "'", error, err_at, -1);
    }
    return true;
  }

  // { v, v, { v, v }, ... }: inner braces group rows for the reader and are flattened.
  bool list(Init* in, std::string* error, int* err_at) {
    if (!punct("{")) return fail("expected '{'", error, err_at);
    if (punct("}")) return true;
    for (;;) {
      if (t_[p_].kind == Token::Punct && t_[p_].text == "{") {
        if (!list(in, error, err_at)) return false;
      } else {
        std::string v;
        if (!word(&v)) return fail("expected a value", error, err_at);
        in->values.push_back(v);
      }
      if (punct("}")) return true;
      if (!punct(",")) return fail("expected ',' or '}' in a list", error, err_at);
    }
  }

  const std::vector<Token>& t_;
  size_t p_ = 0;
};

// Materializes an Init for a buffer of `count` elements of `dtype`.
bool build(const Init& in, int32_t dtype, size_t count, HostBuffer* b, std::string* error) {
  switch (in.kind) {
    case Init::Zeros:
      return true;
    case Init::Fill: {
      uint64_t bits;
      if (!parse_element(in.values[0], dtype, &bits, error)) return false;
      for (size_t i = 0; i < count; ++i) b->set(i, bits);
      return true;
    }
    case Init::Iota: {
      uint64_t sb, tb;
      if (!parse_element(in.start, dtype, &sb, error) || !parse_element(in.step, dtype, &tb, error)) return false;
      bool fl = dtype_is_float(dtype);
      for (size_t i = 0; i < count; ++i) {
        if (fl) {
          double v = float_bits_to_double(dtype, sb) + double(i) * float_bits_to_double(dtype, tb);
          b->set(i, double_to_float_bits(dtype, v));
        } else {
          b->set(i, (sb + uint64_t(i) * tb) & bits_mask(dtype));  // wraps, like the IR's integers
        }
      }
      return true;
    }
    case Init::List: {
      if (in.values.size() != count) {
        *error = std::to_string(in.values.size()) + " values given for " + std::to_string(count) + " elements";
        return false;
      }
      for (size_t i = 0; i < count; ++i) {
        uint64_t bits;
        if (!parse_element(in.values[i], dtype, &bits, error)) return false;
        b->set(i, bits);
      }
      return true;
    }
  }
  return false;
}

// Does `got` match `want` under the expectation's tolerance?
bool element_matches(int32_t dtype, uint64_t got, uint64_t want, const Expect& e) {
  if (!dtype_is_float(dtype)) return bits_to_unsigned(dtype, got) == bits_to_unsigned(dtype, want);
  bool gn = float_bits_is_nan(dtype, got), wn = float_bits_is_nan(dtype, want);
  if (gn || wn) return gn && wn;
  if ((got & bits_mask(dtype)) == (want & bits_mask(dtype))) return true;
  double g = float_bits_to_double(dtype, got), w = float_bits_to_double(dtype, want);
  if (std::isinf(g) || std::isinf(w)) return false;
  if (e.ulp >= 0 && ulp_distance(dtype, got, want) <= static_cast<uint64_t>(e.ulp)) return true;
  if (e.atol >= 0 || e.rtol >= 0) {
    double tol = std::max(e.atol, 0.0) + std::max(e.rtol, 0.0) * std::fabs(w);
    return std::fabs(g - w) <= tol;
  }
  return false;
}

struct FileResult {
  int passed = 0, failed = 0, skipped = 0;
};

struct Options {
  std::vector<std::string> targets;
  bool verbose = false;
};

std::string where(const std::string& file, const RunText& rt, int at) {
  if (rt.pos.empty()) return file;
  size_t i = std::min<size_t>(std::max(at, 0), rt.pos.size() - 1);
  return file + ":" + std::to_string(rt.pos[i].first) + ":" + std::to_string(rt.pos[i].second);
}

// Runs one run line on every target and prints one result line per target.
void run_line(Session& session, tri_module* module, const std::string& file, const RunText& rt, const RunLine& rl,
              const Options& opts, FileResult* res) {
  std::string loc = where(file, rt, 0);
  // Materialize the arguments once; each target gets copies.
  LaunchRequest base;
  base.kernel = rl.kernel;
  for (int i = 0; i < 3; ++i) base.grid[i] = rl.grid[i];
  base.consts = rl.consts;
  std::string err;
  auto line_fail = [&](const std::string& at, const std::string& msg) {
    std::printf("FAIL %s @%s: %s\n", at.c_str(), rl.kernel.c_str(), msg.c_str());
    res->failed += 1;
  };
  for (const ArgDecl& d : rl.args) {
    ArgInput a;
    a.name = d.name;
    a.dtype = d.dtype;
    a.is_scalar = d.scalar;
    if (d.scalar) {
      if (!parse_element(d.scalar_text, d.dtype, &a.scalar_bits, &err)) return line_fail(where(file, rt, d.at), err);
    } else {
      a.buffer = HostBuffer(d.dtype, d.shape);
      if (!build(d.init, d.dtype, a.buffer.count(), &a.buffer, &err))
        return line_fail(where(file, rt, d.init.at), "%" + d.name + ": " + err);
    }
    base.args.push_back(std::move(a));
  }
  std::vector<std::pair<size_t, HostBuffer>> wants;  // (argument index, expected contents)
  for (const Expect& e : rl.expects) {
    size_t idx = base.args.size();
    for (size_t i = 0; i < base.args.size(); ++i)
      if (base.args[i].name == e.name) idx = i;
    if (idx == base.args.size() || base.args[idx].is_scalar)
      return line_fail(where(file, rt, e.at), "expect names %" + e.name + ", which is not a buffer argument");
    const HostBuffer& b = base.args[idx].buffer;
    HostBuffer want(b.dtype(), b.shape());
    if (!build(e.values, b.dtype(), b.count(), &want, &err))
      return line_fail(where(file, rt, e.values.at), "expect %" + e.name + ": " + err);
    wants.emplace_back(idx, std::move(want));
  }

  std::vector<std::string> targets = opts.targets;
  if (rl.checked_only) {
    targets.clear();
    for (const std::string& t : opts.targets)
      if (t == "interp") targets.push_back(t);
    if (targets.empty()) {
      std::printf("SKIP %s @%s: a `checked` run line runs on the interp target only\n", loc.c_str(), rl.kernel.c_str());
      res->skipped += 1;
      return;
    }
  }
  for (const std::string& target : targets) {
    // A kernel that fails at run time on the GPU (a failed `assert` traps) leaves the CUDA
    // context unusable for the rest of the process, so such a line would fail every line after it.
    if (target == "cuda" && rl.expect_error && rl.error_code == "TRI_ERROR_RUNTIME") {
      std::printf("SKIP %s @%s [cuda]: a run-time failure on the GPU leaves the CUDA context unusable\n", loc.c_str(),
                  rl.kernel.c_str());
      res->skipped += 1;
      continue;
    }
    LaunchRequest req = base;
    req.target = target;
    req.checked = target == "interp";
    LaunchOutcome out;
    bool ok = launch_kernel(module, req, &out);
    session.take_log();
    std::string tag = loc + " @" + rl.kernel + " [" + target + "]";
    std::string timing;
    if (opts.verbose) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " (compile %.1f ms, launch %.3f ms)", out.compile_seconds * 1e3,
                    out.launch_seconds * 1e3);
      timing = buf;
    }
    if (rl.expect_error) {
      bool code_ok = !ok && rl.error_code == tri_result_name(out.code);
      bool text_ok = rl.error_text.empty() || out.message.find(rl.error_text) != std::string::npos;
      if (code_ok && text_ok) {
        std::printf("PASS %s%s\n", tag.c_str(), timing.c_str());
        res->passed += 1;
      } else {
        std::printf("FAIL %s: expected %s%s%s, got %s%s%s\n", tag.c_str(), rl.error_code.c_str(),
                    rl.error_text.empty() ? "" : " containing \"", rl.error_text.empty() ? "" : (rl.error_text + "\"").c_str(),
                    ok ? "success" : tri_result_name(out.code), ok ? "" : ": ",
                    ok ? "" : first_lines(out.message, opts.verbose ? 1000000 : 8).c_str());
        res->failed += 1;
      }
      continue;
    }
    if (!ok) {
      std::printf("FAIL %s: %s failed (%s): %s\n", tag.c_str(), out.stage.c_str(), tri_result_name(out.code),
                  first_lines(out.message, opts.verbose ? 1000000 : 8).c_str());
      res->failed += 1;
      continue;
    }
    std::vector<std::string> diffs;
    size_t ndiff = 0;
    for (size_t k = 0; k < wants.size(); ++k) {
      const Expect& e = rl.expects[k];
      const HostBuffer& got = out.buffers[wants[k].first];
      const HostBuffer& want = wants[k].second;
      for (size_t i = 0; i < got.count(); ++i) {
        if (element_matches(got.dtype(), got.get(i), want.get(i), e)) continue;
        if (++ndiff <= 8) {
          diffs.push_back("%" + e.name + "[" + std::to_string(i) + "] = " + format_bits(got.dtype(), got.get(i)) +
                          ", expected " + format_bits(want.dtype(), want.get(i)));
        }
      }
    }
    if (ndiff == 0) {
      std::printf("PASS %s%s\n", tag.c_str(), timing.c_str());
      res->passed += 1;
    } else {
      std::printf("FAIL %s: %zu element%s differ%s\n", tag.c_str(), ndiff, ndiff == 1 ? "" : "s", ndiff == 1 ? "s" : "");
      for (const std::string& d : diffs) std::printf("    %s\n", d.c_str());
      if (ndiff > diffs.size()) std::printf("    ... and %zu more\n", ndiff - diffs.size());
      res->failed += 1;
    }
  }
}

// Finds the run lines of a file: "// run:" comments, joined with their '\' continuations.
bool collect_run_lines(const std::string& text, std::vector<RunText>* out, std::string* error, int* err_line) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    size_t c = l.find_first_not_of(" \t");
    if (c == std::string::npos || l.compare(c, 2, "//") != 0) continue;
    size_t r = l.find_first_not_of(" \t", c + 2);
    if (r == std::string::npos || l.compare(r, 4, "run:") != 0) continue;
    RunText rt;
    size_t ln = i;
    size_t from = r + 4;
    for (;;) {
      std::string part = lines[ln].substr(from);
      while (!part.empty() && (part.back() == ' ' || part.back() == '\t' || part.back() == '\r')) part.pop_back();
      bool cont = !part.empty() && part.back() == '\\';
      if (cont) part.pop_back();
      for (size_t k = 0; k < part.size(); ++k) {
        rt.text += part[k];
        rt.pos.emplace_back(static_cast<int>(ln + 1), static_cast<int>(from + k + 1));
      }
      rt.text += ' ';
      rt.pos.emplace_back(static_cast<int>(ln + 1), static_cast<int>(from + part.size() + 1));
      if (!cont) break;
      if (++ln >= lines.size()) {
        *error = "a run line ends with '\\' at the end of the file";
        *err_line = static_cast<int>(ln);
        return false;
      }
      const std::string& nx = lines[ln];
      size_t cc = nx.find_first_not_of(" \t");
      if (cc == std::string::npos || nx.compare(cc, 2, "//") != 0) {
        *error = "a run line ends with '\\' but the next line is not a '//' comment";
        *err_line = static_cast<int>(ln + 1);
        return false;
      }
      from = cc + 2;
    }
    i = ln;
    out->push_back(std::move(rt));
  }
  return true;
}

FileResult test_file(Session& session, const std::string& file, const Options& opts) {
  FileResult res;
  std::string text, err;
  if (!read_file(file, &text, &err)) {
    std::printf("FAIL %s: %s\n", file.c_str(), err.c_str());
    res.failed = 1;
    return res;
  }
  std::vector<RunText> runs;
  int err_line = 0;
  if (!collect_run_lines(text, &runs, &err, &err_line)) {
    std::printf("FAIL %s:%d: %s\n", file.c_str(), err_line, err.c_str());
    res.failed = 1;
    return res;
  }
  if (runs.empty()) {
    std::printf("FAIL %s: no '// run:' lines\n", file.c_str());
    res.failed = 1;
    return res;
  }
  tri_module* module = session.load(text, file, &err);
  if (!module) {
    std::printf("FAIL %s: the module does not load: %s\n", file.c_str(), err.c_str());
    res.failed = static_cast<int>(runs.size());
    return res;
  }
  for (const RunText& rt : runs) {
    std::vector<Token> toks;
    int at = 0;
    RunLine rl;
    if (!Lexer(rt).run(&toks, &err, &at) || !Parser(toks).parse(&rl, &err, &at)) {
      std::printf("FAIL %s: error: %s\n", where(file, rt, at).c_str(), err.c_str());
      res.failed += 1;
      continue;
    }
    run_line(session, module, file, rt, rl, opts, &res);
  }
  tri_module_destroy(module);
  return res;
}

const char kUsage[] =
    "usage: tri test [--target T]... [-v] FILE...\n"
    "\n"
    "Runs every '// run:' line of each IR file on each target present (or the targets named),\n"
    "the interpreter in checked mode, and checks its expectations. Prints PASS or FAIL per run\n"
    "line and target, then 'N passed, M failed'; exits 1 when anything failed. -v adds compile\n"
    "and launch times and prints error messages whole (a backend's can hold a module). The\n"
    "run-line syntax is in docs/testing.md.\n";

}  // namespace

int tri_cmd_test(int argc, char** argv) {
  Options opts;
  std::vector<std::string> files, wanted;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-v" || a == "--verbose") {
      opts.verbose = true;
    } else if (a == "--target" || a.rfind("--target=", 0) == 0) {
      std::string t = a == "--target" ? (i + 1 < argc ? argv[++i] : "") : a.substr(9);
      if (t.empty()) {
        std::fprintf(stderr, "tri test: --target needs a name\n(see 'tri test --help')\n");
        return 2;
      }
      wanted.push_back(t);
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "tri test: unknown option '%s'\n(see 'tri test --help')\n", a.c_str());
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "tri test: no FILE given\n(see 'tri test --help')\n");
    return 2;
  }
  Session session;
  if (!session.ok()) {
    std::fprintf(stderr, "tri test: cannot create a context: %s\n", last_error().c_str());
    return 1;
  }
  if (wanted.empty()) {
    for (int i = 0; i < kNumHostTargets; ++i)
      if (target_present(session.context(), kHostTargets[i])) opts.targets.push_back(kHostTargets[i]);
  } else {
    for (const std::string& t : wanted) {
      if (!target_present(session.context(), t)) {
        std::fprintf(stderr, "tri test: target '%s' is not available here\n", t.c_str());
        return 2;
      }
      opts.targets.push_back(t);
    }
  }
  if (opts.targets.empty()) {
    std::fprintf(stderr, "tri test: no target is available\n");
    return 1;
  }
  int passed = 0, failed = 0, skipped = 0;
  for (const std::string& f : files) {
    FileResult r = test_file(session, f, opts);
    passed += r.passed;
    failed += r.failed;
    skipped += r.skipped;
  }
  if (skipped) std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  else std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
