// Tokenizer of the IR text format. Numbers are read with std::from_chars so that the host
// program's locale (a ',' decimal point) can never change what a module means.
#include "ir/text_lexer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "ir/limits.h"

namespace tri::ir::text {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; }

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string quote_for_diag(std::string_view text) {
  constexpr size_t kMax = 40;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (text.size() > kMax) out += "...";
  return out;
}

void Lexer::advance() {
  if (pos_ >= src_.size()) return;
  if (src_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

void Lexer::skip_space() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance();
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
      size_t begin = pos_;
      Loc at = loc();
      while (pos_ < src_.size() && src_[pos_] != '\n') advance();
      if (comments_ && begin >= recorded_until_) record_comment(begin, at);
    } else {
      break;
    }
  }
}

namespace {

bool all_space(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r') return false;
  return true;
}

}  // namespace

// Called with pos_ at the end of the comment's line.
void Lexer::record_comment(size_t begin, Loc at) {
  recorded_until_ = pos_;
  Comment c;
  c.loc = at;
  std::string_view text = src_.substr(begin, pos_ - begin);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  c.text = std::string(text);
  size_t line_start = src_.rfind('\n', begin == 0 ? 0 : begin - 1);
  line_start = (begin == 0 || line_start == std::string_view::npos) ? 0 : line_start + 1;
  c.own_line = all_space(src_.substr(line_start, begin - line_start));
  if (line_start > 0) {
    size_t prev_start = line_start >= 2 ? src_.rfind('\n', line_start - 2) : std::string_view::npos;
    prev_start = prev_start == std::string_view::npos ? 0 : prev_start + 1;
    c.blank_before = all_space(src_.substr(prev_start, line_start - 1 - prev_start));
  }
  comments_->push_back(std::move(c));
}

std::string_view Lexer::take_name_chars() {
  size_t begin = pos_;
  while (pos_ < src_.size() && is_name_char(src_[pos_])) advance();
  return src_.substr(begin, pos_ - begin);
}

Token Lexer::make(Tok kind, size_t begin, Loc loc) const {
  Token t;
  t.kind = kind;
  t.text = src_.substr(begin, pos_ - begin);
  t.loc = loc;
  return t;
}

Token Lexer::error(Loc loc, std::string msg, Code code) const {
  Token t;
  t.kind = Tok::Error;
  t.loc = loc;
  t.str = std::move(msg);
  t.code = code;
  return t;
}

Token Lexer::take_dim() {
  Loc loc = this->loc();
  size_t begin = pos_;
  uint64_t v = 0;
  bool overflow = false;
  if (pos_ + 2 < src_.size() && src_[pos_] == '0' && (src_[pos_ + 1] == 'x' || src_[pos_ + 1] == 'X') &&
      hex_value(src_[pos_ + 2]) >= 0) {
    advance();
    advance();
    while (pos_ < src_.size() && hex_value(src_[pos_]) >= 0) {
      if (v >> 60) overflow = true;
      v = (v << 4) | static_cast<uint64_t>(hex_value(src_[pos_]));
      advance();
    }
  } else {
    while (pos_ < src_.size() && is_digit(src_[pos_])) {
      uint64_t d = static_cast<uint64_t>(src_[pos_] - '0');
      if (v > (UINT64_MAX - d) / 10) overflow = true;
      v = v * 10 + d;
      advance();
    }
  }
  Token t = make(Tok::Int, begin, loc);
  if (overflow || v > static_cast<uint64_t>(INT64_MAX))
    return error(loc, "integer literal '" + quote_for_diag(t.text) + "' out of range");
  t.i = static_cast<int64_t>(v);
  return t;
}

Token Lexer::lex_number(size_t begin, Loc loc) {
  bool neg = false;
  if (src_[pos_] == '-') {
    neg = true;
    advance();
    if (src_.substr(pos_, 3) == "inf" && !(pos_ + 3 < src_.size() && is_name_char(src_[pos_ + 3]))) {
      advance();
      advance();
      advance();
      Token t = make(Tok::Float, begin, loc);
      t.f = -HUGE_VAL;
      return t;
    }
    if (pos_ >= src_.size() || !is_digit(src_[pos_])) return error(loc, "unexpected character '-'");
  }
  // Hexadecimal integer: its digits are the two's complement bit pattern of a 64-bit value.
  if (src_[pos_] == '0' && pos_ + 2 < src_.size() && (src_[pos_ + 1] == 'x' || src_[pos_ + 1] == 'X') &&
      hex_value(src_[pos_ + 2]) >= 0) {
    advance();
    advance();
    uint64_t v = 0;
    bool overflow = false;
    while (pos_ < src_.size() && hex_value(src_[pos_]) >= 0) {
      if (v >> 60) overflow = true;
      v = (v << 4) | static_cast<uint64_t>(hex_value(src_[pos_]));
      advance();
    }
    Token t = make(Tok::Int, begin, loc);
    if (overflow || (neg && v > (uint64_t(1) << 63)))
      return error(loc, "integer literal '" + quote_for_diag(t.text) + "' out of range");
    t.i = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    return t;
  }
  size_t digits_begin = pos_;
  while (pos_ < src_.size() && is_digit(src_[pos_])) advance();
  size_t digits_end = pos_;
  bool is_float = false;
  if (pos_ < src_.size() && src_[pos_] == '.') {
    is_float = true;
    advance();
    while (pos_ < src_.size() && is_digit(src_[pos_])) advance();
  }
  if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
    size_t k = pos_ + 1;
    if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
    if (k < src_.size() && is_digit(src_[k])) {
      is_float = true;
      while (pos_ < k) advance();
      while (pos_ < src_.size() && is_digit(src_[pos_])) advance();
    }
  }
  Token t = make(is_float ? Tok::Float : Tok::Int, begin, loc);
  if (is_float) {
    double v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
      return error(loc, "float literal '" + quote_for_diag(t.text) + "' out of range");
    t.f = v;
    return t;
  }
  const uint64_t limit = neg ? (uint64_t(1) << 63) : static_cast<uint64_t>(INT64_MAX);
  uint64_t v = 0;
  for (size_t k = digits_begin; k < digits_end; ++k) {
    uint64_t d = static_cast<uint64_t>(src_[k] - '0');
    if (v > (limit - d) / 10) return error(loc, "integer literal '" + quote_for_diag(t.text) + "' out of range");
    v = v * 10 + d;
  }
  t.i = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return t;
}

Token Lexer::lex_string(Loc loc) {
  size_t begin = pos_;
  advance();  // the opening quote
  std::string out;
  for (;;) {
    if (pos_ >= src_.size()) return error(loc, "unterminated string");
    char c = src_[pos_];
    if (c == '"') {
      advance();
      break;
    }
    if (c == '\\') {
      Loc esc = this->loc();
      advance();
      char e = peek_char();
      if (pos_ < src_.size() && (e == '\\' || e == '"')) {
        out.push_back(e);
        advance();
      } else if (pos_ < src_.size() && e == 'n') {
        out.push_back('\n');
        advance();
      } else if (pos_ < src_.size() && e == 't') {
        out.push_back('\t');
        advance();
      } else if (pos_ + 1 < src_.size() && hex_value(e) >= 0 && hex_value(src_[pos_ + 1]) >= 0) {
        out.push_back(static_cast<char>(hex_value(e) * 16 + hex_value(src_[pos_ + 1])));
        advance();
        advance();
      } else if (pos_ >= src_.size()) {
        return error(loc, "unterminated string");
      } else {
        return error(esc, "bad escape '\\" + quote_for_diag(src_.substr(pos_, 1)) + "' in string");
      }
    } else {
      out.push_back(c);
      advance();
    }
    if (out.size() > kMaxStringBytes)
      return error(loc, "string longer than kMaxStringBytes (" + std::to_string(kMaxStringBytes) + ")",
                   Code::LimitExceeded);
  }
  Token t = make(Tok::String, begin, loc);
  t.str = std::move(out);
  return t;
}

Token Lexer::next() {
  skip_space();
  Loc loc = this->loc();
  size_t begin = pos_;
  if (pos_ >= src_.size()) return make(Tok::End, begin, loc);
  char c = src_[pos_];
  auto single = [&](Tok k) {
    advance();
    return make(k, begin, loc);
  };
  switch (c) {
    case '(': return single(Tok::LParen);
    case ')': return single(Tok::RParen);
    case '{': return single(Tok::LBrace);
    case '}': return single(Tok::RBrace);
    case '[': return single(Tok::LBracket);
    case ']': return single(Tok::RBracket);
    case '<': return single(Tok::Less);
    case '>': return single(Tok::Greater);
    case ',': return single(Tok::Comma);
    case ':': return single(Tok::Colon);
    case '=': return single(Tok::Equal);
    case '^': return single(Tok::Caret);
    case '"': return lex_string(loc);
    default: break;
  }
  if (c == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '>') {
    advance();
    advance();
    return make(Tok::Arrow, begin, loc);
  }
  if (c == '-' || is_digit(c)) return lex_number(begin, loc);
  if (c == '%' || c == '@') {
    advance();
    if (pos_ >= src_.size() || !(c == '%' ? is_name_char(src_[pos_]) : is_name_start(src_[pos_])))
      return error(loc, c == '%' ? "expected a value name after '%'" : "expected a function name after '@'");
    std::string_view name = take_name_chars();
    if (name.size() > kMaxStringBytes)
      return error(loc, "name longer than kMaxStringBytes (" + std::to_string(kMaxStringBytes) + ")",
                   Code::LimitExceeded);
    Token t = make(c == '%' ? Tok::Value : Tok::Func, begin, loc);
    t.text = name;
    return t;
  }
  if (is_name_start(c)) {
    take_name_chars();
    Token t = make(Tok::Name, begin, loc);
    if (t.text.size() > kMaxStringBytes)
      return error(loc, "name longer than kMaxStringBytes (" + std::to_string(kMaxStringBytes) + ")",
                   Code::LimitExceeded);
    return t;
  }
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return error(loc, std::string("unexpected character '") + c + "'");
  char buf[40];
  std::snprintf(buf, sizeof buf, "unexpected byte 0x%02x", u);
  return error(loc, buf);
}

}  // namespace tri::ir::text
