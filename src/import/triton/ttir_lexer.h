// A character cursor over TTIR text with the token readers that MLIR's printed syntax needs.
//
// MLIR's syntax is context dependent (`tensor<16x16xf32>` is one type, `16` and `x` are not
// separate tokens there), so the reader pulls the token it expects next instead of tokenizing the
// text up front. Every reader skips whitespace and `//` comments first, never reads past the end,
// and reports a failure by throwing ImportError (caught at the importer's entry point).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tri::import {

// How the importer leaves a failed parse: thrown, caught in import_ttir, returned as Status.
struct ImportError {
  Status status;
  bool op_named = false;  // the message names the TTIR op it happened in (Reader::parse_op)
};

// A numeric literal as MLIR prints it: an integer, a float, or a hex bit pattern (`0xFF800000`,
// which MLIR uses for floats that have no short decimal form: infinities, NaNs).
struct NumLit {
  enum class Kind { Int, Float, Hex } kind = Kind::Int;
  int64_t i = 0;      // Int (sign applied)
  double f = 0;       // Float
  uint64_t bits = 0;  // Hex
};

class Cursor {
 public:
  Cursor(std::string_view text, const std::string& source) : s_(text), source_(source) {}

  void skip_ws();
  bool at_end() { skip_ws(); return pos_ >= s_.size(); }
  char peek() { skip_ws(); return pos_ < s_.size() ? s_[pos_] : '\0'; }
  char peek_at(size_t k) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }
  // The location of the next token.
  Loc loc() { skip_ws(); return Loc{line_, col_}; }

  // Consumes `c` if it is next.
  bool eat(char c);
  // Consumes the punctuation `p` ("->", "<{", ...) if it is next.
  bool eat_punct(std::string_view p);
  // Consumes the word `w` if it is next and not followed by a name character.
  bool eat_word(std::string_view w);
  bool peek_word(std::string_view w);

  void expect(char c, const char* what);
  void expect_word(std::string_view w, const char* what);

  // A bare identifier: [A-Za-z_][A-Za-z0-9_.$-]* (op names like `arith.addi` included).
  std::string ident(const char* what);
  bool peek_ident();
  // `%name` or `%name#N`; returns the text after '%'.
  std::string value_ref(const char* what);
  bool peek_value() { return peek() == '%'; }
  // `@name` or `@"quoted name"`; returns the name.
  std::string symbol_ref(const char* what);
  // `#name`; returns the name after '#'.
  std::string hash_ref(const char* what);
  // A double-quoted string with MLIR's escapes (\\ \" \n \t \HH).
  std::string string_lit(const char* what);
  bool peek_string() { return peek() == '"'; }
  // An integer, float or hex literal, with an optional leading '-'.
  NumLit number(const char* what);
  bool peek_number();
  // An unsigned decimal integer (dimensions, line numbers).
  uint64_t uint(const char* what);

  // Skips one balanced group starting at the next '(' '[' '{' or '<' (strings respected).
  void skip_balanced();

  [[noreturn]] void fail(Loc at, const std::string& what) const;
  [[noreturn]] void fail_expected(const char* what);

  const std::string& source() const { return source_; }
  size_t pos() const { return pos_; }
  std::string_view text() const { return s_; }
  // Moves to byte `p` of the text (which must be the start of a line) at `line`.
  void seek_line(size_t p, uint32_t line) { pos_ = p; line_ = line; col_ = 1; }

 private:
  void advance(size_t n);
  std::string_view s_;
  std::string source_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

bool is_ident_start(char c);
bool is_ident_char(char c);

}  // namespace tri::import
