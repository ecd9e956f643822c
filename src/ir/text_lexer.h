// The tokenizer of the IR text format (docs/ir.md, "Text format"), shared by the parser and its
// tests. It reads untrusted bytes: every access is bounds-checked, NUL bytes and invalid UTF-8 are
// ordinary bytes (allowed inside strings, an error elsewhere), and malformed input becomes an
// Error token carrying its message rather than a crash. Block types (`<4x8xf32>`) cannot be
// tokenized context-free because `x` is a name character, so the parser reads them with the
// character-level helpers at the end of the class.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tri::ir::text {

enum class Tok : uint8_t {
  End,       // end of input
  Error,     // a malformed token; `str` holds the message, `code` the error code
  Value,     // %name   (text: the name without '%')
  Func,      // @name   (text: the name without '@')
  Name,      // identifier, keyword, op name, scalar name, `true`, `inf`, ...
  Int,       // integer literal (`i`)
  Float,     // float literal with '.', an exponent, or `-inf` (`f`)
  String,    // "..." (`str`: the decoded bytes)
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Less, Greater,
  Comma, Colon, Equal, Caret, Arrow,
};

struct Token {
  Tok kind = Tok::End;
  std::string_view text;  // the lexeme as written (sigil removed for Value and Func)
  Loc loc;
  int64_t i = 0;
  double f = 0;
  std::string str;
  Code code = Code::Parse;  // for Error tokens
};

// A `//` comment as written (trailing spaces dropped). `own_line`: nothing but spaces before it on
// its line; `blank_before`: the line before it holds only spaces (and it is not the first line).
struct Comment {
  Loc loc;
  std::string text;
  bool own_line = false;
  bool blank_before = false;
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  // From now on, every comment skipped is appended to `sink`, once each even when the caller
  // rewinds and reads a stretch again (`tri fmt` keeps them; docs/ir.md, "Comments").
  void record_comments(std::vector<Comment>* sink) { comments_ = sink; }

  // The next token, skipping whitespace and `//` comments.
  Token next();

  // A saved position, to look ahead and come back.
  struct Mark {
    size_t pos;
    uint32_t line, col;
  };
  Mark mark() const { return {pos_, line_, col_}; }
  void reset(Mark m) {
    pos_ = m.pos;
    line_ = m.line;
    col_ = m.col;
  }

  // Character-level access for block types.
  void skip_space();
  bool at_end() const { return pos_ >= src_.size(); }
  char peek_char() const { return pos_ < src_.size() ? src_[pos_] : '\0'; }
  Loc loc() const { return Loc{line_, col_}; }
  void advance();  // one byte
  // Reads [A-Za-z0-9_.]* from here (possibly empty).
  std::string_view take_name_chars();
  // Reads a dimension: decimal digits, or 0x and hex digits (greedy). Returns an Int or Error token.
  Token take_dim();

 private:
  Token make(Tok kind, size_t begin, Loc loc) const;
  Token error(Loc loc, std::string msg, Code code = Code::Parse) const;
  Token lex_number(size_t begin, Loc loc);
  Token lex_string(Loc loc);

  std::string_view src_;
  void record_comment(size_t begin, Loc loc);

  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
  std::vector<Comment>* comments_ = nullptr;
  size_t recorded_until_ = 0;  // comments starting before this byte are recorded already
};

bool is_name_start(char c);
bool is_name_char(char c);
// A short printable rendering of a lexeme for diagnostics (non-printable bytes as \xHH, long text cut).
std::string quote_for_diag(std::string_view text);

}  // namespace tri::ir::text
