// Token readers for TTIR text (see ttir_lexer.h).
#include "import/triton/ttir_lexer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "ir/limits.h"

namespace tri::import {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '$' || c == '-';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

void Cursor::advance(size_t n) {
  for (size_t k = 0; k < n && pos_ < s_.size(); ++k) {
    if (s_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
}

void Cursor::skip_ws() {
  while (pos_ < s_.size()) {
    char c = s_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance(1);
    } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
      while (pos_ < s_.size() && s_[pos_] != '\n') advance(1);
    } else {
      break;
    }
  }
}

void Cursor::fail(Loc at, const std::string& what) const {
  throw ImportError{error_at(Code::Parse, source_, at, what)};
}

void Cursor::fail_expected(const char* what) {
  Loc at = loc();
  std::string found;
  if (pos_ >= s_.size()) {
    found = "the end of the input";
  } else {
    size_t n = 0;
    while (pos_ + n < s_.size() && n < 24 && s_[pos_ + n] != '\n') ++n;
    found = "'" + std::string(s_.substr(pos_, n)) + "'";
    for (char& ch : found)
      if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
  }
  fail(at, std::string("expected ") + what + ", found " + found);
}

bool Cursor::eat(char c) {
  if (peek() != c) return false;
  advance(1);
  return true;
}

bool Cursor::eat_punct(std::string_view p) {
  skip_ws();
  if (s_.substr(pos_, p.size()) != p) return false;
  advance(p.size());
  return true;
}

bool Cursor::peek_word(std::string_view w) {
  skip_ws();
  if (s_.substr(pos_, w.size()) != w) return false;
  return !is_ident_char(peek_at(w.size()));
}

bool Cursor::eat_word(std::string_view w) {
  if (!peek_word(w)) return false;
  advance(w.size());
  return true;
}

void Cursor::expect(char c, const char* what) {
  if (!eat(c)) fail_expected(what);
}

void Cursor::expect_word(std::string_view w, const char* what) {
  if (!eat_word(w)) fail_expected(what);
}

bool Cursor::peek_ident() { return is_ident_start(peek()); }

std::string Cursor::ident(const char* what) {
  if (!peek_ident()) fail_expected(what);
  size_t n = 0;
  while (is_ident_char(peek_at(n))) ++n;
  if (n > ir::kMaxStringBytes) fail(loc(), "a name longer than " + std::to_string(ir::kMaxStringBytes) + " bytes");
  std::string out(s_.substr(pos_, n));
  advance(n);
  return out;
}

std::string Cursor::value_ref(const char* what) {
  if (peek() != '%') fail_expected(what);
  size_t n = 1;
  while (is_ident_char(peek_at(n))) ++n;
  if (n == 1) fail_expected(what);
  std::string out(s_.substr(pos_ + 1, n - 1));
  if (peek_at(n) == '#' && is_digit(peek_at(n + 1))) {
    size_t k = n + 1;
    while (is_digit(peek_at(k)) && k - n < 10) ++k;
    out += std::string(s_.substr(pos_ + n, k - n));
    n = k;
  }
  advance(n);
  return out;
}

std::string Cursor::symbol_ref(const char* what) {
  if (peek() != '@') fail_expected(what);
  advance(1);
  if (pos_ < s_.size() && s_[pos_] == '"') return string_lit(what);
  if (!is_ident_start(peek_at(0))) fail_expected(what);
  size_t n = 0;
  while (is_ident_char(peek_at(n))) ++n;
  std::string out(s_.substr(pos_, n));
  advance(n);
  return out;
}

std::string Cursor::hash_ref(const char* what) {
  if (peek() != '#') fail_expected(what);
  advance(1);
  size_t n = 0;
  while (is_ident_char(peek_at(n))) ++n;
  if (n == 0) fail_expected(what);
  std::string out(s_.substr(pos_, n));
  advance(n);
  return out;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Cursor::string_lit(const char* what) {
  if (peek() != '"') fail_expected(what);
  Loc start = loc();
  advance(1);
  std::string out;
  while (true) {
    if (pos_ >= s_.size() || s_[pos_] == '\n') fail(start, "unterminated string");
    char c = s_[pos_];
    if (c == '"') {
      advance(1);
      break;
    }
    if (c == '\\') {
      char d = peek_at(1);
      if (d == '\\' || d == '"') {
        out += d;
        advance(2);
      } else if (d == 'n') {
        out += '\n';
        advance(2);
      } else if (d == 't') {
        out += '\t';
        advance(2);
      } else if (hex_value(d) >= 0 && hex_value(peek_at(2)) >= 0) {
        out += static_cast<char>(hex_value(d) * 16 + hex_value(peek_at(2)));
        advance(3);
      } else {
        fail(loc(), "a bad escape in a string (MLIR knows \\\\ \\\" \\n \\t and \\HH)");
      }
    } else {
      out += c;
      advance(1);
    }
    if (out.size() > ir::kMaxStringBytes)
      fail(start, "a string longer than " + std::to_string(ir::kMaxStringBytes) + " bytes");
  }
  return out;
}

bool Cursor::peek_number() {
  char c = peek();
  return is_digit(c) || (c == '-' && is_digit(peek_at(1)));
}

NumLit Cursor::number(const char* what) {
  if (!peek_number()) fail_expected(what);
  Loc at = loc();
  size_t n = 0;
  bool neg = false;
  if (peek_at(0) == '-') {
    neg = true;
    n = 1;
  }
  NumLit lit;
  if (peek_at(n) == '0' && (peek_at(n + 1) == 'x' || peek_at(n + 1) == 'X')) {
    size_t k = n + 2;
    uint64_t v = 0;
    int digits = 0;
    while (hex_value(peek_at(k)) >= 0) {
      if (++digits > 16) fail(at, "a hex literal wider than 64 bits");
      v = v * 16 + static_cast<uint64_t>(hex_value(peek_at(k)));
      ++k;
    }
    if (digits == 0) fail(at, "a hex literal without digits");
    if (neg) fail(at, "a negative hex literal");
    lit.kind = NumLit::Kind::Hex;
    lit.bits = v;
    advance(k);
    return lit;
  }
  size_t k = n;
  while (is_digit(peek_at(k))) ++k;
  bool is_float = false;
  if (peek_at(k) == '.' && is_digit(peek_at(k + 1))) {
    is_float = true;
    ++k;
    while (is_digit(peek_at(k))) ++k;
  } else if (peek_at(k) == '.') {
    is_float = true;
    ++k;
  }
  if ((peek_at(k) == 'e' || peek_at(k) == 'E') &&
      (is_digit(peek_at(k + 1)) || ((peek_at(k + 1) == '+' || peek_at(k + 1) == '-') && is_digit(peek_at(k + 2))))) {
    is_float = true;
    k += 2;
    while (is_digit(peek_at(k))) ++k;
  }
  if (k > 400) fail(at, "a numeric literal longer than 400 characters");
  std::string text(s_.substr(pos_, k));
  errno = 0;
  if (is_float) {
    lit.kind = NumLit::Kind::Float;
    lit.f = std::strtod(text.c_str(), nullptr);
  } else {
    lit.kind = NumLit::Kind::Int;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno == ERANGE) {
      // i64 values past INT64_MAX print as unsigned decimals; keep their bit pattern.
      errno = 0;
      unsigned long long u = std::strtoull(text.c_str(), &end, 10);
      if (errno == ERANGE || neg) fail(at, "the integer " + text + " does not fit in 64 bits");
      v = static_cast<long long>(u);
    }
    lit.i = v;
  }
  advance(k);
  return lit;
}

uint64_t Cursor::uint(const char* what) {
  skip_ws();
  if (!is_digit(peek_at(0))) fail_expected(what);
  size_t k = 0;
  uint64_t v = 0;
  while (is_digit(peek_at(k))) {
    if (v > (uint64_t(1) << 40)) fail(loc(), std::string(what) + " is too large");
    v = v * 10 + static_cast<uint64_t>(peek_at(k) - '0');
    ++k;
  }
  advance(k);
  return v;
}

void Cursor::skip_balanced() {
  Loc start = loc();
  std::string stack;
  do {
    if (pos_ >= s_.size()) fail(start, "unbalanced brackets");
    char c = s_[pos_];
    if (c == '"') {
      string_lit("a string");
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (stack.size() >= 256) fail(start, "brackets nested more than 256 deep");
      stack += c;
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      // '->' is an arrow, not a closing bracket.
      if (c == '>' && pos_ > 0 && s_[pos_ - 1] == '-') {
        advance(1);
        continue;
      }
      char open = c == ')' ? '(' : c == ']' ? '[' : c == '}' ? '{' : '<';
      if (stack.empty() || stack.back() != open) fail(loc(), std::string("unbalanced '") + c + "'");
      stack.pop_back();
    } else if (stack.empty()) {
      fail_expected("a bracketed group");
    }
    advance(1);
  } while (!stack.empty());
}

}  // namespace tri::import
