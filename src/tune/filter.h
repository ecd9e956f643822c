// The filter of a product space (tri_tune_space_add_product, `tri tune --filter`): an integer
// expression over a config's constexpr values and `warps` / `stages`, such as
// "BM * BN <= 128 * 128 * 2 && warps >= BM / 32". A config is kept when it is nonzero.
//
// Grammar (C's precedence and meaning, 64-bit integers):
//   or   := and ('||' and)*          and  := cmp ('&&' cmp)*
//   cmp  := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)?
//   sum  := prod (('+'|'-') prod)*    prod := unary (('*'|'/'|'%') unary)*
//   unary:= ('-'|'!') unary | INT | NAME | '(' or ')'
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "tune/tune.h"

namespace tri::tune {

class Filter {
 public:
  // Parses `text`; `names` are the constexprs a config gives (warps and stages always exist).
  // Errors say where (a column) and what was expected, or which name is unknown.
  static Status parse(const std::string& text, const std::vector<std::string>& names, Filter* out);
  // The expression's value for `c`; Code::InvalidArgument on division by zero.
  Status eval(const Config& c, int64_t* out) const;
  const std::string& text() const { return text_; }

 private:
  struct Node {
    enum Kind { Int, Var, Neg, Not, Bin } kind = Int;
    std::string op;   // for Bin: "+", "<=", "&&", ...
    int64_t value = 0;
    int var = -1;     // index into names_, or -1 warps, -2 stages
    int a = -1, b = -1;
  };
  Status eval_node(int n, const Config& c, int64_t* out) const;
  std::string text_;
  std::vector<std::string> names_;
  std::vector<Node> nodes_;
  int root_ = -1;
  friend class FilterParser;
};

}  // namespace tri::tune
