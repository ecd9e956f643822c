// The canonical IR text printer (what `tri fmt` writes; docs/ir.md, "Text format"). Canonical
// means one spelling per module: two-space indentation per region, one op per line, a blank line
// between functions, attributes in table order with defaults left out, optional operands by name
// after the positional ones, and floats in the shortest form that reads back to the same bits.
// Its output always parses back to an equal module (the golden tests check print(parse(x)) is a
// fixed point), so it also prints modules made by Builder, naming unnamed values %0, %1, ... in
// order of appearance without colliding with names that were written. Names are scoped by
// region as the parser reads them. Comments, when given (TextComments), go back where the
// parser found them.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "ir/limits.h"
#include "ir/text.h"
#include "ir/text_lexer.h"

namespace tri::ir {
namespace {

}  // namespace

// The shortest decimal that reads back to the same double (to_chars without a precision picks
// it, fixed or scientific, whichever is shorter), always with a '.' or an exponent so it reads
// back as a float; to_chars/from_chars ignore the locale.
std::string format_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

namespace {

std::string quote_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "\\%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The default of an attribute as the parser would store it if written out.
Attr default_attr(const AttrSpec& spec) {
  if (!spec.has_default) return Attr::none();
  const std::string& t = spec.default_text;
  switch (spec.kind) {
    case AttrKind::Int: return Attr::of_int(std::strtoll(t.c_str(), nullptr, 0));
    case AttrKind::Num:
      if (t.find_first_of(".eEn") != std::string::npos) return Attr::of_float(std::strtod(t.c_str(), nullptr));
      return Attr::of_int(std::strtoll(t.c_str(), nullptr, 0));
    case AttrKind::Bool: return Attr::of_bool(t == "true");
    case AttrKind::Str: return Attr::of_str(t.size() >= 2 ? t.substr(1, t.size() - 2) : t);
    case AttrKind::Enum:
      for (size_t i = 0; i < spec.enum_values.size(); ++i)
        if (spec.enum_values[i] == t) return Attr::of_enum(static_cast<int64_t>(i));
      return Attr::none();
    case AttrKind::Func:
    case AttrKind::Ints: return Attr::none();
  }
  return Attr::none();
}

bool valid_value_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxStringBytes) return false;
  for (char c : s)
    if (!text::is_name_char(c)) return false;
  return true;
}

class Printer {
 public:
  Printer(const Module& m, const TextComments* c) : m_(m), c_(c) {}

  std::string run() {
    // Zero bytes would not read back (an empty input is refused): a module without functions
    // prints as a comment, which parses to one.
    if (m_.functions.empty()) return "// empty module\n";
    for (size_t i = 0; i < m_.functions.size(); ++i) {
      if (i) out_ += '\n';
      fi_ = static_cast<uint32_t>(i);
      print_function(*m_.functions[i]);
    }
    if (c_) leading(c_->find(Anchor::End, 0), 0);
    return std::move(out_);
  }

 private:
  using Anchor = TextComments::Anchor;

  std::string type(TypeId t) const { return t < m_.types.size() ? m_.type_str(t) : "<bad type>"; }

  // ---- names. They are scoped like the parser's (region by region): a value defined here gets
  // its own name when no visible value has it, else a generated one (%0, %1, ... in order of
  // appearance, never a name written anywhere in the function).

  const std::string& use(ValueId v) {
    static const std::string kBad = "%<bad value>";
    if (v >= names_.size()) return kBad;
    if (names_[v].empty()) define(v);  // only for a module that would not verify
    return names_[v];
  }

  // Names `v` where it is defined. With `visible` false the name is chosen now but enters the
  // scope only at show() (an op's results: its regions may reuse their names).
  const std::string& define(ValueId v, const std::string* preferred = nullptr, bool visible = true) {
    static const std::string kBad = "%<bad value>";
    if (v >= names_.size()) return kBad;
    std::string& n = names_[v];
    if (!n.empty()) return n;
    const std::string& want = preferred && valid_value_name(*preferred) ? *preferred : f_->values[v].name;
    std::string chosen;
    if (valid_value_name(want) && !visible_.count(want)) {
      chosen = want;
    } else {
      for (;;) {
        std::string g = std::to_string(next_++);
        if (!reserved_.count(g) && !visible_.count(g)) {
          chosen = g;
          break;
        }
      }
    }
    n = "%" + chosen;
    if (visible) show(v);
    return n;
  }

  void show(ValueId v) {
    if (v >= names_.size() || names_[v].empty()) return;
    std::string bare = names_[v].substr(1);
    if (visible_.insert(bare).second && !scopes_.empty()) scopes_.back().push_back(std::move(bare));
  }

  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() {
    for (const std::string& n : scopes_.back()) visible_.erase(n);
    scopes_.pop_back();
  }

  // ---- comments

  const TextComments::Entry* entry(Anchor a, uint32_t id = 0) const { return c_ ? c_->find(a, fi_, id) : nullptr; }

  bool has_comments(const TextComments::Entry* e) const { return e && (!e->leading.empty() || !e->trailing.empty()); }

  // Whole-line comments before a line indented by `ind`; a blank line is kept, but never two in
  // a row nor one at the start of the file.
  void leading(const TextComments::Entry* e, int ind) {
    if (!e) return;
    for (const std::string& line : e->leading) {
      if (line.empty()) {
        if (!out_.empty() && !ends_with("\n\n")) out_ += '\n';
        continue;
      }
      indent(ind);
      out_ += line + "\n";
    }
  }

  void trailing(const TextComments::Entry* e) {
    if (e && !e->trailing.empty()) out_ += "  " + e->trailing;
  }

  bool ends_with(const char* s) const {
    size_t n = std::strlen(s);
    return out_.size() >= n && out_.compare(out_.size() - n, n, s) == 0;
  }

  // ---- printing

  void attr_value(const Attr& a, const AttrSpec& spec) {
    switch (a.kind) {
      case Attr::Kind::None: break;
      case Attr::Kind::Int: out_ += std::to_string(a.i); break;
      case Attr::Kind::Float: out_ += format_float(a.f); break;
      case Attr::Kind::Bool: out_ += a.i ? "true" : "false"; break;
      case Attr::Kind::Str: out_ += quote_string(a.s); break;
      case Attr::Kind::Func: out_ += "@" + a.s; break;
      case Attr::Kind::Sym: out_ += a.s; break;
      case Attr::Kind::Ints:
        out_ += '[';
        for (size_t i = 0; i < a.ints.size(); ++i) out_ += (i ? ", " : "") + std::to_string(a.ints[i]);
        out_ += ']';
        break;
      case Attr::Kind::Enum:
        if (a.i >= 0 && static_cast<size_t>(a.i) < spec.enum_values.size()) out_ += spec.enum_values[a.i];
        else out_ += std::to_string(a.i);
        break;
    }
  }

  void indent(int n) { out_.append(static_cast<size_t>(n), ' '); }

  void print_ops(BlockId b, int ind) {
    for (OpId o : f_->block(b).ops) print_op(o, ind);
  }

  void print_op(OpId o, int ind) {
    const OpData& d = f_->op(o);
    const OpInfo& info = op_info(d.code);
    const TextComments::Entry* comment = entry(Anchor::Op, o);
    leading(comment, ind);
    indent(ind);
    for (size_t i = 0; i < d.results.size(); ++i) out_ += (i ? ", " : "") + define(d.results[i], nullptr, false);
    if (!d.results.empty()) out_ += " = ";
    out_ += info.name;

    bool open = false;
    for (size_t i = 0; i < info.attrs.size() && i < d.attrs.size(); ++i) {
      const Attr& a = d.attrs[i];
      if (!a.present() || a == default_attr(info.attrs[i])) continue;
      out_ += open ? ", " : "[";
      open = true;
      out_ += info.attrs[i].name + "=";
      attr_value(a, info.attrs[i]);
    }
    if (open) out_ += ']';

    std::vector<const OperandSlot*> optional;
    for (const OperandSlot& s : info.operands)
      if (s.kind == SlotKind::Optional) optional.push_back(&s);
    size_t npos = d.operands.size() >= optional.size() ? d.operands.size() - optional.size() : d.operands.size();
    bool first = true;
    auto sep = [&] {
      out_ += first ? " " : ", ";
      first = false;
    };
    for (size_t i = 0; i < npos; ++i) {
      sep();
      out_ += use(d.operands[i]);
    }
    if (npos != d.operands.size()) {
      for (size_t k = 0; k < optional.size(); ++k) {
        ValueId v = d.operands[npos + k];
        if (v == kNoValue) continue;
        sep();
        out_ += optional[k]->name + "=" + use(v);
      }
    }

    BlockId prev = kNoBlock;
    for (BlockId r : d.regions) {
      const BlockData& blk = f_->block(r);
      out_ += " {";
      trailing(prev == kNoBlock ? comment : entry(Anchor::RegionClose, prev));
      out_ += '\n';
      push_scope();
      if (!blk.args.empty()) {
        const TextComments::Entry* args = entry(Anchor::RegionArgs, r);
        leading(args, ind);
        indent(ind);
        out_ += "^(";
        for (size_t i = 0; i < blk.args.size(); ++i) {
          ValueId a = blk.args[i];
          out_ += (i ? ", " : "") + define(a) + ": " + type(f_->type_of(a));
        }
        out_ += "):";
        trailing(args);
        out_ += '\n';
      }
      print_ops(r, ind + 2);
      pop_scope();
      leading(entry(Anchor::RegionClose, r), ind + 2);
      indent(ind);
      out_ += '}';
      prev = r;
    }
    for (ValueId v : d.results) show(v);
    if (!d.results.empty()) {
      out_ += " : ";
      for (size_t i = 0; i < d.results.size(); ++i) out_ += (i ? ", " : "") + type(f_->type_of(d.results[i]));
    }
    trailing(prev == kNoBlock ? comment : entry(Anchor::RegionClose, prev));
    out_ += '\n';
  }

  // Signatures are filled to this many columns (docs/ir.md, "Layout").
  static constexpr size_t kWidth = 100;

  size_t column() const {
    size_t nl = out_.rfind('\n');
    return nl == std::string::npos ? out_.size() : out_.size() - nl - 1;
  }

  // A parameter list after its '(': on one line when it fits in kWidth columns with `tail` (what
  // follows the last entry on its line: ")", ") {"), else filled line by line with continuation
  // lines aligned after the '('; one entry a line when one of them has a comment.
  template <typename Item>
  void print_list(size_t n, Anchor a, Item item, const std::string& tail) {
    bool multiline = false;
    for (size_t i = 0; i < n; ++i) multiline = multiline || has_comments(entry(a, static_cast<uint32_t>(i)));
    if (!multiline) {
      std::vector<std::string> items;
      for (size_t i = 0; i < n; ++i) {
        std::string saved;
        saved.swap(out_);
        item(i);
        items.push_back(std::move(out_));
        out_.swap(saved);
      }
      const size_t open = column();
      for (size_t i = 0; i < n; ++i) {
        const std::string piece = items[i] + (i + 1 < n ? "," : tail);
        if (i && column() + 1 + piece.size() > kWidth) {
          out_ += '\n';
          out_.append(open, ' ');
        } else if (i) {
          out_ += ' ';
        }
        out_ += items[i];
        if (i + 1 < n) out_ += ',';
      }
      return;
    }
    out_ += '\n';
    for (size_t i = 0; i < n; ++i) {
      const TextComments::Entry* e = entry(a, static_cast<uint32_t>(i));
      leading(e, 4);
      indent(4);
      item(i);
      if (i + 1 < n) out_ += ',';
      trailing(e);
      out_ += '\n';
    }
  }

  void print_function(const Function& f) {
    f_ = &f;
    names_.assign(f.values.size(), std::string());
    visible_.clear();
    scopes_.clear();
    reserved_.clear();
    next_ = 0;
    for (const ValueData& v : f.values)
      if (valid_value_name(v.name)) reserved_.insert(v.name);
    for (const Param& p : f.params)
      if (valid_value_name(p.name)) reserved_.insert(p.name);

    leading(entry(Anchor::Function), 0);
    push_scope();
    out_ += f.is_kernel ? "kernel @" : "func @";
    out_ += f.name + "(";
    // A kernel's constexprs go on a line of their own, indented four spaces, so what follows the
    // parameters on their last line is ")" alone; a function's results follow its ")".
    std::string results;
    if (!f.is_kernel && !f.results.empty()) {
      results = " -> (";
      for (size_t i = 0; i < f.results.size(); ++i) results += (i ? ", " : "") + type(f.results[i]);
      results += ')';
    }
    const bool constexprs = f.is_kernel && !f.constexprs.empty();
    // Lists with comments are printed one entry a line; then `) constexpr(` stays on one line.
    bool commented = false;
    for (size_t i = 0; i < f.params.size(); ++i)
      commented = commented || has_comments(entry(Anchor::Param, static_cast<uint32_t>(i)));
    for (size_t i = 0; constexprs && i < f.constexprs.size(); ++i)
      commented = commented || has_comments(entry(Anchor::Constexpr, static_cast<uint32_t>(i)));
    print_list(f.params.size(), Anchor::Param, [&](size_t i) {
      const Param& p = f.params[i];
      out_ += p.value != kNoValue ? define(p.value, &p.name) : "%" + p.name;
      out_ += ": " + type(p.type);
      std::vector<std::string> facts;
      if (p.align) facts.push_back("align=" + std::to_string(p.align));
      if (p.divisible) facts.push_back("divisible=" + std::to_string(p.divisible));
      if (p.noalias) facts.push_back("noalias");
      for (size_t k = 0; k < facts.size(); ++k) out_ += (k ? ", " : " {") + facts[k];
      if (!facts.empty()) out_ += '}';
    }, constexprs ? ")" : ")" + results + " {");
    out_ += ')';
    if (constexprs) {
      out_ += commented ? " constexpr(" : "\n    constexpr(";
      print_list(f.constexprs.size(), Anchor::Constexpr, [&](size_t i) {
        const Constexpr& c = f.constexprs[i];
        out_ += c.name + ": " + scalar_name(c.type);
        if (c.default_value.present()) {
          out_ += " = ";
          attr_value(c.default_value, AttrSpec{});
        }
      }, ") {");
      out_ += ')';
    }
    out_ += results;
    out_ += " {";
    trailing(entry(Anchor::Function));
    out_ += '\n';
    if (f.body != kNoBlock && f.body < f.blocks.size()) print_ops(f.body, 2);
    pop_scope();
    const TextComments::Entry* close = entry(Anchor::FunctionClose);
    leading(close, 2);
    out_ += "}";
    trailing(close);
    out_ += '\n';
  }

  const Module& m_;
  const TextComments* c_;
  uint32_t fi_ = 0;  // index of the function being printed
  std::string out_;
  const Function* f_ = nullptr;
  std::vector<std::string> names_;  // per ValueId: the printed name with '%', empty until defined
  std::unordered_set<std::string> visible_;       // names (without '%') of the values in scope
  std::vector<std::vector<std::string>> scopes_;  // the names each open region added to visible_
  std::unordered_set<std::string> reserved_;      // names written in the function, kept for their values
  uint64_t next_ = 0;
};

}  // namespace

std::string print_text(const Module& m, const TextComments* comments) { return Printer(m, comments).run(); }

}  // namespace tri::ir
