// The IR text parser (docs/ir.md, "Text format"): text -> Module, built through ir::Builder so
// that operands land in the op table's slot layout. It checks what reading needs (tokens, op,
// attribute and slot names, attribute kinds, operand counts, that every used value is defined
// earlier and visible, no name defined twice among visible values, nesting depth) and leaves
// typing to the verifier. Its errors say what to write instead where it can tell (nearest names,
// the op's operand form). On request it also collects the text's comments, attached to places of
// the module (TextComments), for the printer to put back.
//
// The input is untrusted (the C API and a fuzzer feed it arbitrary bytes): recursion happens only
// through nested regions and is bounded by kMaxNesting, every count is bounded by limits.h, and the
// first error stops the parse with a located Status.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "base/did_you_mean.h"
#include "ir/limits.h"
#include "ir/text.h"
#include "ir/text_lexer.h"

namespace tri::ir {
namespace {

using text::Lexer;
using text::Tok;
using text::Token;

const char* attr_kind_desc(AttrKind k) {
  switch (k) {
    case AttrKind::Int: return "an integer or a constexpr name";
    case AttrKind::Num: return "a number, true, false or a constexpr name";
    case AttrKind::Bool: return "true or false";
    case AttrKind::Str: return "a string";
    case AttrKind::Func: return "a function name (@f)";
    case AttrKind::Ints: return "a list of integers ([1, 0])";
    case AttrKind::Enum: return "one of its values";
  }
  return "?";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string loc_str(Loc l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }

// Names other IRs and Triton's language use for what Tri writes another way, with the Tri
// spelling: an unknown op of one of these names says how to write it instead of only "unknown".
const char* foreign_op_hint(std::string_view name) {
  static const struct {
    const char* name;
    const char* hint;
  } kHints[] = {
      {"trans", "a transpose is `permute[order=[1, 0]] %x` (any order for other ranks)"},
      {"transpose", "a transpose is `permute[order=[1, 0]] %x` (any order for other ranks)"},
      {"where", "a lane-wise choice is `select %cond, %a, %b`"},
      {"view", "a change of shape is `reshape %x`"},
      {"full", "a filled block is `const[value=V] : <N x T>`"},
      {"zeros", "a filled block is `const[value=0] : <N x T>`"},
      {"broadcast_to", "`broadcast %x` grows dimensions of size 1; `expand_dims[axis=A]` adds one; `splat` makes a "
                       "block of a scalar"},
      {"sum", "a reduction is `reduce[axis=A, kind=sum] %x`"},
      {"cumsum", "a prefix sum is `scan[axis=A, kind=sum] %x`"},
      {"cumprod", "a prefix product is `scan[axis=A, kind=prod] %x`"},
      {"argmax", "`reduce[axis=A, kind=argmax] %x, %index` gives the value and its index"},
      {"argmin", "`reduce[axis=A, kind=argmin] %x, %index` gives the value and its index"},
      {"div", "division is `fdiv` (floats), `sdiv` or `udiv` (integers), `cdiv` (rounding up)"},
      {"truediv", "division is `fdiv` (floats), `sdiv` or `udiv` (integers), `cdiv` (rounding up)"},
      {"mod", "a remainder is `srem` or `urem` (integers), `frem` (floats)"},
      {"rem", "a remainder is `srem` or `urem` (integers), `frem` (floats)"},
      {"cast", "conversions are named: trunc, zext, sext, fptrunc, fpext, fptosi, fptoui, sitofp, uitofp, bitcast"},
      {"to", "conversions are named: trunc, zext, sext, fptrunc, fpext, fptosi, fptoui, sitofp, uitofp, bitcast"},
      {"atomic_add", "atomics are `atomic[kind=add] %ptr, %value` (kinds: add, min, max, and, or, xor, xchg)"},
      {"atomic_max", "atomics are `atomic[kind=max] %ptr, %value` (kinds: add, min, max, and, or, xor, xchg)"},
      {"atomic_min", "atomics are `atomic[kind=min] %ptr, %value` (kinds: add, min, max, and, or, xor, xchg)"},
      {"atomic_xchg", "atomics are `atomic[kind=xchg] %ptr, %value` (kinds: add, min, max, and, or, xor, xchg)"},
      {"sigmoid", "a sigmoid is `1 / (1 + exp(-x))`: neg, exp, add, fdiv"},
  };
  for (const auto& h : kHints)
    if (name == h.name) return h.hint;
  return nullptr;
}

const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (uint32_t i = 0; i < kNumOpcodes; ++i) v.push_back(op_info(static_cast<Opcode>(i)).name);
    return v;
  }();
  return names;
}

// How an op's operands are written: "ptr, then optional mask=%v, other=%v".
std::string operand_form(const OpInfo& info) {
  std::string pos, opt;
  for (const OperandSlot& s : info.operands) {
    if (s.kind == SlotKind::Optional) {
      opt += (opt.empty() ? "" : ", ") + s.name + "=%v";
    } else {
      pos += (pos.empty() ? "" : ", ") + s.name + (s.kind == SlotKind::Required ? "" : "...");
    }
  }
  std::string out = pos.empty() ? "no positional operands" : pos;
  if (!opt.empty()) out += ", then by name " + opt;
  return out;
}

bool is_name(const Token& t, std::string_view s) { return t.kind == Tok::Name && t.text == s; }

class Parser {
 public:
  Parser(std::string_view src, const std::string& source) : src_(src), lex_(src), source_(source) {}

  Status run(std::unique_ptr<Module>* out, TextComments* comments) {
    if (comments) lex_.record_comments(&comments_);
    recording_ = comments != nullptr;
    m_ = std::make_unique<Module>();
    m_->source_name = source_;
    while (peek().kind != Tok::End) {
      if (!parse_function()) return status_;
    }
    if (comments) attach_comments(comments);
    *out = std::move(m_);
    return Status::ok();
  }

 private:
  // A value name of the function being parsed.
  struct NameInfo {
    ValueId id;
    Loc loc;
    bool visible;
    size_t depth;  // scopes_.size() when it was defined
  };

  // ---- comments

  using Anchor = TextComments::Anchor;

  // A place comments can attach to. `leads`: a whole-line comment before it belongs to it (it
  // starts a printed line); otherwise only a comment at the end of its line does.
  struct Event {
    Loc loc;
    TextComments::Key key;
    bool leads;
  };

  static bool before(Loc a, Loc b) { return a.line != b.line ? a.line < b.line : a.col < b.col; }

  void event(Loc loc, Anchor a, uint32_t id, bool leads) {
    if (!recording_) return;
    uint32_t func = static_cast<uint32_t>(m_->functions.size() - 1);  // the function being parsed
    events_.push_back(Event{loc, TextComments::Key{a, func, id}, leads});
  }

  // A whole-line comment goes to the next place that starts a line, a comment after code to the
  // last place before it on its line (see TextComments).
  void attach_comments(TextComments* out) {
    out->entries.clear();
    std::stable_sort(events_.begin(), events_.end(),
                     [](const Event& a, const Event& b) { return before(a.loc, b.loc); });
    struct Group {
      uint32_t last_line;
      uint32_t anchor_line;
    };
    std::map<TextComments::Key, Group> groups;
    size_t e = 0;  // first event after the current comment
    for (const text::Comment& c : comments_) {
      while (e < events_.size() && before(events_[e].loc, c.loc)) ++e;
      if (c.own_line) {
        size_t k = e;
        while (k < events_.size() && !events_[k].leads) ++k;
        TextComments::Key key = k < events_.size() ? events_[k].key : TextComments::Key{Anchor::End, 0, 0};
        TextComments::Entry& entry = out->entries[key];
        if (c.blank_before && (entry.leading.empty() || !entry.leading.back().empty()))
          entry.leading.emplace_back();
        entry.leading.push_back(c.text);
        groups[key] = Group{c.loc.line, k < events_.size() ? events_[k].loc.line : 0};
      } else if (e > 0) {
        std::string& t = out->entries[events_[e - 1].key].trailing;
        t += (t.empty() ? "" : " ") + c.text;
      }
    }
    // A blank line between the last comment and its anchor is kept too.
    for (const auto& [key, g] : groups)
      if (g.anchor_line > g.last_line + 1 && line_is_blank(g.anchor_line - 1))
        out->entries[key].leading.emplace_back();
  }

  // Whether 1-based line `line` of the input holds only spaces.
  bool line_is_blank(uint32_t line) {
    if (line_starts_.empty()) {
      line_starts_.push_back(0);
      for (size_t i = 0; i < src_.size(); ++i)
        if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
    if (line == 0 || line > line_starts_.size()) return false;
    for (size_t pos = line_starts_[line - 1]; pos < src_.size() && src_[pos] != '\n'; ++pos)
      if (src_[pos] != ' ' && src_[pos] != '\t' && src_[pos] != '\r') return false;
    return true;
  }

  // ---- tokens

  const Token& peek() {
    if (!has_peek_) {
      peek_mark_ = lex_.mark();
      peek_ = lex_.next();
      has_peek_ = true;
    }
    return peek_;
  }

  Token take() {
    peek();
    has_peek_ = false;
    return std::move(peek_);
  }

  // Where the lexer would start reading the next token (the peeked one included).
  Lexer::Mark here() { return has_peek_ ? peek_mark_ : lex_.mark(); }
  void rewind(Lexer::Mark m) {
    lex_.reset(m);
    has_peek_ = false;
  }

  bool fail(Loc loc, const std::string& msg, Code code = Code::Parse) {
    if (status_.is_ok()) status_ = error_at(code, source_, loc, msg);
    return false;
  }

  static std::string lexeme(const Token& t) {
    switch (t.kind) {
      case Tok::Value: return "%" + text::quote_for_diag(t.text);
      case Tok::Func: return "@" + text::quote_for_diag(t.text);
      default: return text::quote_for_diag(t.text);
    }
  }

  // Reports that `t` is not what was expected; a malformed token reports its own error.
  bool fail_expected(const std::string& what, const Token& t) {
    if (t.kind == Tok::Error) return fail(t.loc, t.str, t.code);
    if (t.kind == Tok::End) return fail(t.loc, "unexpected end of input, expected " + what);
    return fail(t.loc, "expected " + what + ", found '" + lexeme(t) + "'");
  }

  bool expect(Tok kind, const char* what, Token* out = nullptr) {
    Token t = take();
    if (t.kind != kind) return fail_expected(what, t);
    if (out) *out = std::move(t);
    return true;
  }

  // ---- limits

  bool check_value_limit(Loc loc) {
    if (f_->values.size() > kMaxValuesPerFunction)
      return fail(loc, "function '@" + f_->name + "' has more than kMaxValuesPerFunction (" +
                           std::to_string(kMaxValuesPerFunction) + ") values",
                  Code::LimitExceeded);
    return true;
  }

  bool check_type_limit(Loc loc) {
    if (m_->types.size() > kMaxTypes)
      return fail(loc, "module has more than kMaxTypes (" + std::to_string(kMaxTypes) + ") types",
                  Code::LimitExceeded);
    return true;
  }

  // ---- values and scopes

  // Names are scoped by region (as in MLIR): a name whose value went out of scope with its region
  // may be defined again; a name still visible may not, in the same region or a nested one.
  bool define(const Token& name, ValueId v) {
    std::string key(name.text);
    auto it = names_.find(key);
    if (it != names_.end() && it->second.visible) {
      if (it->second.depth == scopes_.size())
        return fail(name.loc, "value '%" + key + "' defined twice (first at " + loc_str(it->second.loc) +
                                  "): give the second one another name");
      return fail(name.loc, "value '%" + key + "' shadows the value of that name defined at " +
                                loc_str(it->second.loc) + " in an enclosing region: give it another name");
    }
    f_->values[v].name = key;
    NameInfo* info;
    if (it != names_.end()) {
      info = &it->second;
      *info = NameInfo{v, name.loc, true, scopes_.size()};
    } else {
      info = &names_.emplace(std::move(key), NameInfo{v, name.loc, true, scopes_.size()}).first->second;
    }
    scopes_.back().push_back(info);
    return true;
  }

  bool resolve(const Token& name, ValueId* out) {
    auto it = names_.find(std::string(name.text));
    if (it == names_.end()) {
      std::vector<std::string> visible;
      for (const auto& [n, info] : names_)
        if (info.visible) visible.push_back(n);
      std::sort(visible.begin(), visible.end());
      return fail(name.loc, "undefined value '%" + std::string(name.text) + "'" +
                                did_you_mean(nearest(name.text, visible), "%"));
    }
    if (!it->second.visible)
      return fail(name.loc, "value '%" + std::string(name.text) + "' is not visible here (defined at " +
                                loc_str(it->second.loc) + ")");
    *out = it->second.id;
    return true;
  }

  // Module::intern scans every symbol; a module with many distinct names must stay linear.
  SymId intern(const std::string& name) {
    auto it = symbols_.find(name);
    if (it != symbols_.end()) return it->second;
    m_->symbols.push_back(name);
    SymId id = static_cast<SymId>(m_->symbols.size() - 1);
    symbols_.emplace(name, id);
    return id;
  }

  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() {
    for (NameInfo* info : scopes_.back()) info->visible = false;
    scopes_.pop_back();
  }

  // ---- types

  bool parse_scalar(Scalar* out) {
    Token t = take();
    if (t.kind == Tok::Name && scalar_from_name(std::string(t.text), out)) return true;
    return fail_expected("a scalar type", t);
  }

  // scalar | ptr<scalar>
  bool parse_elem(TypeId* out) {
    if (is_name(peek(), "ptr")) {
      Token p = take();
      Scalar s;
      if (!expect(Tok::Less, "'<'") || !parse_scalar(&s)) return false;
      if (!expect(Tok::Greater, "'>'")) return false;
      *out = m_->types.ptr(m_->types.scalar(s));
      return check_type_limit(p.loc);
    }
    Scalar s;
    if (!parse_scalar(&s)) return false;
    *out = m_->types.scalar(s);
    return true;
  }

  bool parse_type(TypeId* out) {
    const Token& t = peek();
    if (t.kind == Tok::Name) {
      Scalar s;
      if (t.text == "ptr" || scalar_from_name(std::string(t.text), &s)) return parse_elem(out);
      return fail_expected("a type", take());
    }
    if (t.kind != Tok::Less) return fail_expected("a type", take());
    Loc type_loc = t.loc;
    take();
    // The dims are read character by character: in `<4x8xf32>` the `x` is part of no name.
    std::vector<Dim> dims;
    std::string glued;  // the last dim name when it contains an 'x' (`BLOCKxf32` is one name)
    for (;;) {
      lex_.skip_space();
      Loc loc = lex_.loc();
      char c = lex_.peek_char();
      if (c >= '0' && c <= '9') {
        Token d = lex_.take_dim();
        if (d.kind == Tok::Error) return fail(d.loc, d.str, d.code);
        if (d.i > kMaxDim)
          return fail(loc, "block dimension " + std::to_string(d.i) + " is larger than kMaxDim (" +
                               std::to_string(kMaxDim) + ")",
                      Code::LimitExceeded);
        dims.push_back(Dim::lit(d.i));
      } else if (!lex_.at_end() && text::is_name_start(c)) {
        Lexer::Mark m = lex_.mark();
        std::string name(lex_.take_name_chars());
        Scalar s;
        if (name == "ptr" || scalar_from_name(name, &s)) {
          lex_.reset(m);
          break;
        }
        if (name.size() > kMaxStringBytes)
          return fail(loc, "name longer than kMaxStringBytes (" + std::to_string(kMaxStringBytes) + ")",
                      Code::LimitExceeded);
        glued = name.find('x') != std::string::npos ? name : std::string();
        dims.push_back(Dim::name(intern(name)));
      } else {
        has_peek_ = false;
        return fail_expected("a block dimension or element type", peek());
      }
      if (dims.size() > static_cast<size_t>(kMaxBlockRank))
        return fail(type_loc, "block type has more than " + std::to_string(kMaxBlockRank) + " dimensions");
      lex_.skip_space();
      if (lex_.at_end() || lex_.peek_char() != 'x') {
        const Token& found = peek();
        if (glued.empty() || found.kind == Tok::Error || found.kind == Tok::End)
          return fail_expected("'x' in block type", found);
        return fail(found.loc, "expected 'x' in block type, found '" + lexeme(found) + "' ('" + text::quote_for_diag(glued) +
                               "' reads as one name: put spaces around 'x' after a constexpr name)");
      }
      glued.clear();
      lex_.advance();
    }
    if (dims.empty()) return fail(type_loc, "block type needs at least one dimension");
    TypeId elem;
    if (!parse_elem(&elem) || !expect(Tok::Greater, "'>'")) return false;
    *out = m_->types.block(dims, elem);
    return check_type_limit(type_loc);
  }

  bool parse_types(std::vector<TypeId>* out) {
    for (;;) {
      TypeId t;
      if (!parse_type(&t)) return false;
      out->push_back(t);
      if (peek().kind != Tok::Comma) return true;
      take();
    }
  }

  // ---- attributes

  bool fail_attr_kind(const OpInfo& info, const AttrSpec& spec, const Token& t) {
    if (t.kind == Tok::Error) return fail(t.loc, t.str, t.code);
    std::string want = spec.kind == AttrKind::Enum ? "one of " + join(spec.enum_values) : attr_kind_desc(spec.kind);
    std::string found = t.kind == Tok::End ? "end of input" : "'" + lexeme(t) + "'";
    return fail(t.loc, "attribute '" + spec.name + "' of '" + info.name + "' must be " + want + ", found " + found);
  }

  bool parse_attr_value(const OpInfo& info, const AttrSpec& spec, Attr* out) {
    Token t = take();
    bool is_bool_word = is_name(t, "true") || is_name(t, "false");
    bool is_float_word = is_name(t, "inf") || is_name(t, "nan");
    switch (spec.kind) {
      case AttrKind::Int:
        if (t.kind == Tok::Int) *out = Attr::of_int(t.i);
        else if (t.kind == Tok::Name && !is_bool_word && !is_float_word) *out = Attr::of_sym(std::string(t.text));
        else return fail_attr_kind(info, spec, t);
        return true;
      case AttrKind::Num:
        if (t.kind == Tok::Int) *out = Attr::of_int(t.i);
        else if (t.kind == Tok::Float) *out = Attr::of_float(t.f);
        else if (is_bool_word) *out = Attr::of_bool(t.text == "true");
        else if (is_float_word) *out = Attr::of_float(t.text == "inf" ? HUGE_VAL : std::numeric_limits<double>::quiet_NaN());
        else if (t.kind == Tok::Name) *out = Attr::of_sym(std::string(t.text));
        else return fail_attr_kind(info, spec, t);
        return true;
      case AttrKind::Bool:
        if (!is_bool_word) return fail_attr_kind(info, spec, t);
        *out = Attr::of_bool(t.text == "true");
        return true;
      case AttrKind::Str:
        if (t.kind != Tok::String) return fail_attr_kind(info, spec, t);
        *out = Attr::of_str(std::move(t.str));
        return true;
      case AttrKind::Func:
        if (t.kind != Tok::Func) return fail_attr_kind(info, spec, t);
        *out = Attr::of_func(std::string(t.text));
        return true;
      case AttrKind::Ints: {
        if (t.kind != Tok::LBracket) return fail_attr_kind(info, spec, t);
        std::vector<int64_t> v;
        if (peek().kind == Tok::RBracket) {
          take();
        } else {
          for (;;) {
            Token e = take();
            if (e.kind != Tok::Int) return fail_attr_kind(info, spec, e);
            v.push_back(e.i);
            Token sep = take();
            if (sep.kind == Tok::RBracket) break;
            if (sep.kind != Tok::Comma) return fail_expected("',' or ']'", sep);
          }
        }
        *out = Attr::of_ints(std::move(v));
        return true;
      }
      case AttrKind::Enum:
        if (t.kind != Tok::Name) return fail_attr_kind(info, spec, t);
        for (size_t i = 0; i < spec.enum_values.size(); ++i) {
          if (spec.enum_values[i] == t.text) {
            *out = Attr::of_enum(static_cast<int64_t>(i));
            return true;
          }
        }
        return fail(t.loc, "'" + lexeme(t) + "' is not a value of attribute '" + spec.name + "' of '" + info.name +
                               "' (allowed: " + join(spec.enum_values) + ")");
    }
    return fail_attr_kind(info, spec, t);
  }

  bool parse_attrs(const OpInfo& info, std::vector<Attr>* attrs) {
    take();  // '['
    for (;;) {
      Token n = take();
      if (n.kind != Tok::Name) return fail_expected("an attribute name", n);
      int idx = info.attr_index(n.text);
      if (idx < 0) {
        std::vector<std::string> names;
        for (const AttrSpec& a : info.attrs) names.push_back(a.name);
        return fail(n.loc, "unknown attribute '" + lexeme(n) + "' for '" + info.name + "' (" +
                               (names.empty() ? std::string("it has no attributes") : "attributes: " + join(names)) +
                               ")");
      }
      const AttrSpec& spec = info.attrs[idx];
      Attr& a = (*attrs)[idx];
      if (a.present()) return fail(n.loc, "attribute '" + spec.name + "' given twice");
      if (peek().kind == Tok::Equal) {
        take();
        if (!parse_attr_value(info, spec, &a)) return false;
      } else if (spec.kind == AttrKind::Bool) {
        a = Attr::of_bool(true);
      } else {
        return fail(n.loc, "attribute '" + spec.name + "' of '" + info.name + "' needs a value (" +
                               (spec.kind == AttrKind::Enum ? "one of " + join(spec.enum_values)
                                                            : std::string(attr_kind_desc(spec.kind))) +
                               ")");
      }
      Token sep = take();
      if (sep.kind == Tok::RBracket) return true;
      if (sep.kind != Tok::Comma) return fail_expected("',' or ']'", sep);
    }
  }

  // ---- operands

  // True when the op being parsed has operands: a value list not followed by '=' (that would be the
  // next op's results), or `name=`.
  bool operands_follow() {
    const Token& t = peek();
    if (t.kind != Tok::Value && t.kind != Tok::Name) return false;
    Lexer::Mark start = here();
    bool result;
    if (t.kind == Tok::Name) {
      lex_.reset(start);
      lex_.next();
      result = lex_.next().kind == Tok::Equal;
    } else {
      lex_.reset(start);
      for (;;) {
        Token v = lex_.next();
        if (v.kind != Tok::Value) {
          result = true;  // malformed; let the operand parser report it
          break;
        }
        Token sep = lex_.next();
        if (sep.kind != Tok::Comma) {
          result = sep.kind != Tok::Equal;
          break;
        }
      }
    }
    rewind(start);
    return result;
  }

  bool parse_operands(const OpInfo& info, const Token& opname, std::vector<ValueId>* out) {
    std::vector<ValueId> positional;
    std::vector<int> optional_slots;  // slot indices of the optional slots, in order
    for (size_t i = 0; i < info.operands.size(); ++i)
      if (info.operands[i].kind == SlotKind::Optional) optional_slots.push_back(static_cast<int>(i));
    std::vector<ValueId> named(optional_slots.size(), kNoValue);
    const size_t required = static_cast<size_t>(info.num_required());
    const bool variadic = info.has_variadic();
    bool any_named = false;
    if (operands_follow()) {
      for (;;) {
        Token t = take();
        if (t.kind == Tok::Name) {
          if (!expect(Tok::Equal, "'='")) return false;
          Token v;
          if (!expect(Tok::Value, "a value", &v)) return false;
          int slot = info.slot_index(t.text);
          if (slot < 0 || info.operands[slot].kind != SlotKind::Optional) {
            if (slot >= 0)
              return fail(t.loc, "operand slot '" + lexeme(t) + "' of '" + info.name +
                                     "' is written positionally: drop '" + lexeme(t) + "=' (" + info.name +
                                     " takes " + operand_form(info) + ")");
            std::vector<std::string> names;
            for (int s : optional_slots) names.push_back(info.operands[s].name);
            return fail(t.loc, "unknown operand slot '" + lexeme(t) + "' for '" + info.name + "' (" +
                                   (names.empty() ? std::string("it has no named slots")
                                                  : "named slots: " + join(names)) +
                                   ")");
          }
          size_t k = 0;
          while (optional_slots[k] != slot) ++k;
          if (named[k] != kNoValue) return fail(t.loc, "operand slot '" + lexeme(t) + "' given twice");
          if (!resolve(v, &named[k])) return false;
          any_named = true;
        } else if (t.kind == Tok::Value) {
          if (any_named)
            return fail(t.loc, "positional operand after named operands: write the positional ones first ('" +
                                   info.name + "' takes " + operand_form(info) + ")");
          if (!variadic && positional.size() == required) {
            std::string hint;
            for (int k : optional_slots) hint += (hint.empty() ? "" : ", ") + info.operands[k].name + "=%v";
            if (!hint.empty()) hint = "; write the optional ones by name: " + hint;
            std::string slots;
            for (const OperandSlot& os : info.operands)
              if (os.kind == SlotKind::Required) slots += (slots.empty() ? "" : ", ") + os.name;
            return fail(t.loc, "too many operands for '" + info.name + "': expected " + std::to_string(required) +
                                   (slots.empty() ? "" : " (" + slots + ")") + hint);
          }
          ValueId v;
          if (!resolve(t, &v)) return false;
          positional.push_back(v);
        } else {
          return fail_expected("an operand", t);
        }
        if (peek().kind != Tok::Comma) break;
        take();
      }
    }
    size_t min = required;
    for (const OperandSlot& s : info.operands)
      if (s.kind == SlotKind::Variadic1) ++min;
    if (positional.size() < min)
      return fail(opname.loc, "too few operands for '" + info.name + "': expected " + (variadic ? "at least " : "") +
                                  std::to_string(min) + ", got " + std::to_string(positional.size()) + " ('" +
                                  info.name + "' takes " + operand_form(info) + ")");
    *out = std::move(positional);
    out->insert(out->end(), named.begin(), named.end());
    return true;
  }

  // ---- ops and regions

  bool parse_op(BlockId block, int depth) {
    std::vector<Token> results;
    if (peek().kind == Tok::Value) {
      for (;;) {
        results.push_back(take());
        if (peek().kind != Tok::Comma) break;
        take();
        if (peek().kind != Tok::Value) return fail_expected("a value name", take());
      }
      if (!expect(Tok::Equal, "'='")) return false;
    }
    Token opname = take();
    if (opname.kind != Tok::Name) return fail_expected(results.empty() ? "an op or '}'" : "an op name", opname);
    Opcode code;
    if (!opcode_from_name(opname.text, &code)) {
      if (const char* hint = foreign_op_hint(opname.text))
        return fail(opname.loc, "unknown op '" + lexeme(opname) + "': " + hint + "; the ops are listed in docs/ir.md");
      return fail(opname.loc, "unknown op '" + lexeme(opname) + "'" +
                                  did_you_mean(nearest(opname.text, op_names(), true)) +
                                  "; the ops are listed in docs/ir.md");
    }
    const OpInfo& info = op_info(code);
    std::vector<Attr> attrs(info.attrs.size());
    if (peek().kind == Tok::LBracket && !parse_attrs(info, &attrs)) return false;
    for (size_t i = 0; i < info.attrs.size(); ++i)
      if (!info.attrs[i].optional && !attrs[i].present())
        return fail(opname.loc, "'" + info.name + "' needs attribute '" + info.attrs[i].name + "': write " + info.name +
                                    "[" + info.attrs[i].name + "=...]");
    std::vector<ValueId> operands;
    if (!parse_operands(info, opname, &operands)) return false;

    b_->set_insertion_block(block);
    OpId op = b_->create(code, operands, {}, std::move(attrs), opname.loc);
    event(results.empty() ? opname.loc : results[0].loc, Anchor::Op, op, true);
    if (f_->ops.size() > kMaxOpsPerFunction)
      return fail(opname.loc, "function '@" + f_->name + "' has more than kMaxOpsPerFunction (" +
                                  std::to_string(kMaxOpsPerFunction) + ") ops",
                  Code::LimitExceeded);
    while (peek().kind == Tok::LBrace) {
      if (!parse_region(op, depth + 1)) return false;
    }
    std::vector<TypeId> types;
    Loc colon_loc = opname.loc;
    if (peek().kind == Tok::Colon) {
      colon_loc = take().loc;
      if (!parse_types(&types)) return false;
    }
    if (types.size() != results.size())
      return fail(results.empty() ? colon_loc : opname.loc,
                  "'" + info.name + "' has " + plural(results.size(), "result name") + " but " +
                      plural(types.size(), "result type"));
    for (size_t i = 0; i < results.size(); ++i) {
      ValueId v = b_->new_value(types[i], op, kNoBlock, static_cast<uint32_t>(i));
      f_->ops[op].results.push_back(v);
      if (!check_value_limit(results[i].loc) || !define(results[i], v)) return false;
    }
    return true;
  }

  // Ops up to the closing '}' of the current region.
  bool parse_ops(BlockId block, int depth) {
    for (;;) {
      const Token& t = peek();
      if (t.kind == Tok::RBrace) {
        Token rb = take();
        if (block == f_->body) event(rb.loc, Anchor::FunctionClose, 0, true);
        else event(rb.loc, Anchor::RegionClose, block, true);
        return true;
      }
      if (t.kind == Tok::End || t.kind == Tok::Error) return fail_expected("an op or '}'", take());
      if (!parse_op(block, depth)) return false;
    }
  }

  bool parse_region(OpId op, int depth) {
    Token lb = take();  // '{'
    // The '{' ends the op's first line, or the `} {` line that closes the previous region.
    const std::vector<BlockId>& prev = f_->ops[op].regions;
    if (prev.empty()) event(lb.loc, Anchor::Op, op, false);
    else event(lb.loc, Anchor::RegionClose, prev.back(), false);
    Loc caret_loc;
    if (depth > kMaxNesting)
      return fail(lb.loc, "regions nested deeper than kMaxNesting (" + std::to_string(kMaxNesting) + ")",
                  Code::LimitExceeded);
    std::vector<Token> arg_names;
    std::vector<TypeId> arg_types;
    if (peek().kind == Tok::Caret) {
      caret_loc = take().loc;
      if (!expect(Tok::LParen, "'('")) return false;
      for (;;) {
        Token v;
        TypeId t;
        if (!expect(Tok::Value, "a value name", &v) || !expect(Tok::Colon, "':'") || !parse_type(&t)) return false;
        arg_names.push_back(std::move(v));
        arg_types.push_back(t);
        Token sep = take();
        if (sep.kind == Tok::RParen) break;
        if (sep.kind != Tok::Comma) return fail_expected("',' or ')'", sep);
      }
      if (!expect(Tok::Colon, "':'")) return false;
    }
    BlockId block = b_->add_region(op, arg_types);
    f_->blocks[block].loc = lb.loc;
    if (caret_loc.line) event(caret_loc, Anchor::RegionArgs, block, true);
    push_scope();
    for (size_t i = 0; i < arg_names.size(); ++i) {
      if (!check_value_limit(arg_names[i].loc) || !define(arg_names[i], f_->blocks[block].args[i])) return false;
    }
    if (!parse_ops(block, depth)) return false;
    pop_scope();
    return true;
  }

  // ---- functions

  bool parse_fact(Param* p, std::vector<std::string>* seen) {
    Token n = take();
    if (n.kind != Tok::Name) return fail_expected("a parameter fact (align, divisible, noalias)", n);
    std::string name(n.text);
    if (name != "align" && name != "divisible" && name != "noalias")
      return fail(n.loc, "unknown parameter fact '" + lexeme(n) + "' (facts: align, divisible, noalias)");
    for (const std::string& s : *seen)
      if (s == name) return fail(n.loc, "parameter fact '" + name + "' given twice");
    seen->push_back(name);
    if (name == "noalias") {
      p->noalias = true;
      return true;
    }
    Token v;
    if (!expect(Tok::Equal, "'='") || !expect(Tok::Int, "an integer", &v)) return false;
    if (v.i < 0 || v.i > static_cast<int64_t>(UINT32_MAX))
      return fail(v.loc, "'" + name + "' must be between 0 and " + std::to_string(UINT32_MAX));
    (name == "align" ? p->align : p->divisible) = static_cast<uint32_t>(v.i);
    return true;
  }

  bool parse_param(std::vector<Param>* params, std::vector<Token>* names) {
    Token v;
    if (!expect(Tok::Value, "a parameter name (%x)", &v)) return false;
    Param p;
    p.name = std::string(v.text);
    p.loc = v.loc;
    event(v.loc, Anchor::Param, static_cast<uint32_t>(params->size()), true);
    if (!expect(Tok::Colon, "':'") || !parse_type(&p.type)) return false;
    if (peek().kind == Tok::LBrace) {
      take();
      std::vector<std::string> seen;
      for (;;) {
        if (!parse_fact(&p, &seen)) return false;
        Token sep = take();
        if (sep.kind == Tok::RBrace) break;
        if (sep.kind != Tok::Comma) return fail_expected("',' or '}'", sep);
      }
    }
    params->push_back(std::move(p));
    names->push_back(std::move(v));
    return true;
  }

  bool parse_constexpr_default(Constexpr* c) {
    Token t = take();
    if (t.kind == Tok::Error) return fail(t.loc, t.str, t.code);
    if (c->type == Scalar::I1) {
      if (is_name(t, "true") || is_name(t, "false")) {
        c->default_value = Attr::of_bool(t.text == "true");
        return true;
      }
    } else if (is_int(c->type)) {
      if (t.kind == Tok::Int) {
        c->default_value = Attr::of_int(t.i);
        return true;
      }
    } else {
      if (t.kind == Tok::Int || t.kind == Tok::Float || is_name(t, "inf") || is_name(t, "nan")) {
        double v = t.kind == Tok::Int ? static_cast<double>(t.i)
                   : t.kind == Tok::Float ? t.f
                   : t.text == "inf"      ? HUGE_VAL
                                          : std::numeric_limits<double>::quiet_NaN();
        c->default_value = Attr::of_float(v);
        return true;
      }
    }
    const char* want = c->type == Scalar::I1 ? "true or false" : is_int(c->type) ? "an integer" : "a number";
    return fail_expected(std::string(want) + " (the default of constexpr '" + c->name + "': " + scalar_name(c->type) +
                             ")",
                         t);
  }

  bool parse_constexprs(Function* f) {
    take();  // 'constexpr'
    if (!expect(Tok::LParen, "'('")) return false;
    for (;;) {
      Token n;
      if (!expect(Tok::Name, "a constexpr name", &n)) return false;
      Constexpr c;
      c.name = std::string(n.text);
      c.loc = n.loc;
      event(n.loc, Anchor::Constexpr, static_cast<uint32_t>(f->constexprs.size()), true);
      Scalar unused;
      if (c.name == "true" || c.name == "false" || c.name == "inf" || c.name == "nan" || c.name == "ptr" ||
          scalar_from_name(c.name, &unused))
        return fail(n.loc, "'" + c.name + "' cannot name a constexpr (it is a literal or a type)");
      if (!constexpr_names_.insert(c.name).second) return fail(n.loc, "constexpr '" + c.name + "' declared twice");
      if (!expect(Tok::Colon, "':'") || !parse_scalar(&c.type)) return false;
      if (peek().kind == Tok::Equal) {
        take();
        if (!parse_constexpr_default(&c)) return false;
      }
      f->constexprs.push_back(std::move(c));
      Token sep = take();
      if (sep.kind == Tok::RParen) {
        event(sep.loc, Anchor::Function, 0, false);
        return true;
      }
      if (sep.kind != Tok::Comma) return fail_expected("',' or ')'", sep);
    }
  }

  bool parse_function() {
    Token kw = take();
    if (!is_name(kw, "kernel") && !is_name(kw, "func")) return fail_expected("'kernel' or 'func'", kw);
    bool kernel = kw.text == "kernel";
    Token name;
    if (!expect(Tok::Func, "a function name (@f)", &name)) return false;
    if (!function_names_.insert(std::string(name.text)).second)
      return fail(name.loc, "function '@" + std::string(name.text) + "' defined twice");
    if (m_->functions.size() >= kMaxFunctions)
      return fail(kw.loc, "module has more than kMaxFunctions (" + std::to_string(kMaxFunctions) + ") functions",
                  Code::LimitExceeded);
    m_->functions.push_back(std::make_unique<Function>());
    Function* f = m_->functions.back().get();
    f->name = std::string(name.text);
    f->is_kernel = kernel;
    f->loc = kw.loc;
    f_ = f;
    event(kw.loc, Anchor::Function, 0, true);
    names_.clear();
    scopes_.clear();
    constexpr_names_.clear();

    std::vector<Token> param_names;
    if (!expect(Tok::LParen, "'('")) return false;
    if (peek().kind == Tok::RParen) {
      event(take().loc, Anchor::Function, 0, false);
    } else {
      for (;;) {
        if (!parse_param(&f->params, &param_names)) return false;
        Token sep = take();
        if (sep.kind == Tok::RParen) {
          event(sep.loc, Anchor::Function, 0, false);
          break;
        }
        if (sep.kind != Tok::Comma) return fail_expected("',' or ')'", sep);
      }
    }
    if (kernel && is_name(peek(), "constexpr") && !parse_constexprs(f)) return false;
    if (!kernel && peek().kind == Tok::Arrow) {
      take();
      if (!expect(Tok::LParen, "'('")) return false;
      if (peek().kind != Tok::RParen && !parse_types(&f->results)) return false;
      if (!expect(Tok::RParen, "')'")) return false;
    }

    Builder b(m_.get(), f);
    b_ = &b;
    std::vector<TypeId> param_types;
    for (const Param& p : f->params) param_types.push_back(p.type);
    f->body = b.create_block(param_types);
    Token lb;
    if (!expect(Tok::LBrace, "'{'", &lb)) return false;
    f->blocks[f->body].loc = lb.loc;
    event(lb.loc, Anchor::Function, 0, false);
    if (peek().kind == Tok::Caret)
      return fail(peek().loc, "a function body has no block arguments (they are the parameters)");
    push_scope();
    for (size_t i = 0; i < f->params.size(); ++i) {
      f->params[i].value = f->blocks[f->body].args[i];
      if (!check_value_limit(param_names[i].loc) || !define(param_names[i], f->params[i].value)) return false;
    }
    if (!parse_ops(f->body, 0)) return false;
    pop_scope();
    b_ = nullptr;
    return true;
  }

  std::string_view src_;
  Lexer lex_;
  std::string source_;
  bool has_peek_ = false;
  Token peek_;
  Lexer::Mark peek_mark_{};
  Status status_;

  std::unique_ptr<Module> m_;
  Function* f_ = nullptr;
  Builder* b_ = nullptr;
  std::unordered_map<std::string, NameInfo> names_;  // node-based: NameInfo pointers stay valid
  std::vector<std::vector<NameInfo*>> scopes_;
  std::unordered_map<std::string, SymId> symbols_;  // mirrors m_->symbols
  std::unordered_set<std::string> function_names_;
  std::unordered_set<std::string> constexpr_names_;  // of the function being parsed

  bool recording_ = false;  // comments are wanted
  std::vector<text::Comment> comments_;
  std::vector<Event> events_;
  std::vector<size_t> line_starts_;  // byte offset of each line, built when first needed
};

}  // namespace

Status parse_text(std::string_view text, const std::string& source_name, std::unique_ptr<Module>* out,
                  TextComments* comments) {
  if (text.size() > kMaxInputBytes)
    return error_at(Code::LimitExceeded, source_name, Loc{},
                    "input larger than kMaxInputBytes (" + std::to_string(kMaxInputBytes) + ")");
  Parser p(text, source_name);
  return p.run(out, comments);
}

}  // namespace tri::ir
