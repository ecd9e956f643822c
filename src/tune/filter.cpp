// The filter expression of a product space (filter.h).
#include "tune/filter.h"

#include <cctype>

namespace tri::tune {

class FilterParser {
 public:
  FilterParser(const std::string& t, Filter* f) : t_(t), f_(f) {}

  Status run() {
    int root = -1;
    TRI_RETURN_IF_ERROR(parse_or(&root));
    skip();
    if (pos_ != t_.size()) return error("an operator or the end");
    f_->root_ = root;
    return Status::ok();
  }

 private:
  void skip() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  bool eat(const char* tok) {
    skip();
    size_t n = std::char_traits<char>::length(tok);
    if (t_.compare(pos_, n, tok) != 0) return false;
    // "<" must not take the first half of "<=", nor "=" ... of "==" (handled by trying longer first).
    pos_ += n;
    return true;
  }
  Status error(const std::string& expected) const {
    std::string at = pos_ < t_.size() ? "'" + t_.substr(pos_, 12) + "'" : "the end";
    return Status(Code::InvalidArgument, "filter \"" + t_ + "\", column " + std::to_string(pos_ + 1) + ": expected " +
                                             expected + ", found " + at);
  }
  int add(Filter::Node n) {
    f_->nodes_.push_back(std::move(n));
    return static_cast<int>(f_->nodes_.size() - 1);
  }
  int bin(const std::string& op, int a, int b) {
    Filter::Node n;
    n.kind = Filter::Node::Bin;
    n.op = op;
    n.a = a;
    n.b = b;
    return add(n);
  }
  Status parse_or(int* out) {
    TRI_RETURN_IF_ERROR(parse_and(out));
    while (eat("||")) {
      int r = -1;
      TRI_RETURN_IF_ERROR(parse_and(&r));
      *out = bin("||", *out, r);
    }
    return Status::ok();
  }
  Status parse_and(int* out) {
    TRI_RETURN_IF_ERROR(parse_cmp(out));
    while (eat("&&")) {
      int r = -1;
      TRI_RETURN_IF_ERROR(parse_cmp(&r));
      *out = bin("&&", *out, r);
    }
    return Status::ok();
  }
  Status parse_cmp(int* out) {
    TRI_RETURN_IF_ERROR(parse_sum(out));
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!eat(op)) continue;
      int r = -1;
      TRI_RETURN_IF_ERROR(parse_sum(&r));
      *out = bin(op, *out, r);
      break;
    }
    return Status::ok();
  }
  Status parse_sum(int* out) {
    TRI_RETURN_IF_ERROR(parse_prod(out));
    for (;;) {
      const char* op = eat("+") ? "+" : eat("-") ? "-" : nullptr;
      if (!op) return Status::ok();
      int r = -1;
      TRI_RETURN_IF_ERROR(parse_prod(&r));
      *out = bin(op, *out, r);
    }
  }
  Status parse_prod(int* out) {
    TRI_RETURN_IF_ERROR(parse_unary(out));
    for (;;) {
      const char* op = eat("*") ? "*" : eat("/") ? "/" : eat("%") ? "%" : nullptr;
      if (!op) return Status::ok();
      int r = -1;
      TRI_RETURN_IF_ERROR(parse_unary(&r));
      *out = bin(op, *out, r);
    }
  }
  Status parse_unary(int* out) {
    skip();
    if (pos_ < t_.size() && (t_[pos_] == '-' || (t_[pos_] == '!' && t_.compare(pos_, 2, "!=") != 0))) {
      Filter::Node n;
      n.kind = t_[pos_] == '-' ? Filter::Node::Neg : Filter::Node::Not;
      ++pos_;
      TRI_RETURN_IF_ERROR(parse_unary(&n.a));
      *out = add(n);
      return Status::ok();
    }
    if (eat("(")) {
      TRI_RETURN_IF_ERROR(parse_or(out));
      if (!eat(")")) return error("')'");
      return Status::ok();
    }
    skip();
    size_t start = pos_;
    if (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_]))) {
      Filter::Node n;
      n.kind = Filter::Node::Int;
      while (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_]))) {
        if (n.value > (INT64_MAX - 9) / 10) return error("a smaller number");
        n.value = n.value * 10 + (t_[pos_++] - '0');
      }
      *out = add(n);
      return Status::ok();
    }
    while (pos_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '_')) ++pos_;
    if (pos_ == start) return error("a number, a name, '(', '-' or '!'");
    std::string name = t_.substr(start, pos_ - start);
    Filter::Node n;
    n.kind = Filter::Node::Var;
    if (name == "warps" || name == "num_warps") {
      n.var = -1;
    } else if (name == "stages" || name == "num_stages") {
      n.var = -2;
    } else {
      n.var = -3;
      for (size_t i = 0; i < f_->names_.size(); ++i)
        if (f_->names_[i] == name) n.var = static_cast<int>(i);
      if (n.var == -3) {
        std::string known;
        for (const std::string& k : f_->names_) known += k + ", ";
        pos_ = start;
        return Status(Code::InvalidArgument, "filter \"" + t_ + "\", column " + std::to_string(start + 1) +
                                                 ": no value is named '" + name + "' (the names are " + known +
                                                 "warps and stages)");
      }
    }
    *out = add(n);
    return Status::ok();
  }

  const std::string& t_;
  Filter* f_;
  size_t pos_ = 0;
};

Status Filter::parse(const std::string& text, const std::vector<std::string>& names, Filter* out) {
  Filter f;
  f.text_ = text;
  f.names_ = names;
  FilterParser p(f.text_, &f);
  TRI_RETURN_IF_ERROR(p.run());
  *out = std::move(f);
  return Status::ok();
}

Status Filter::eval(const Config& c, int64_t* out) const {
  if (root_ < 0) {
    *out = 1;
    return Status::ok();
  }
  return eval_node(root_, c, out);
}

Status Filter::eval_node(int i, const Config& c, int64_t* out) const {
  const Node& n = nodes_[i];
  switch (n.kind) {
    case Node::Int: *out = n.value; return Status::ok();
    case Node::Var:
      if (n.var == -1) {
        *out = c.num_warps;
      } else if (n.var == -2) {
        *out = c.num_stages;
      } else {
        const std::string& name = names_[n.var];
        for (const auto& kv : c.constexprs)
          if (kv.first == name) {
            *out = kv.second;
            return Status::ok();
          }
        return Status(Code::InvalidArgument, "filter \"" + text_ + "\": the config gives no value for '" + name + "'");
      }
      return Status::ok();
    case Node::Neg:
    case Node::Not: {
      int64_t a = 0;
      TRI_RETURN_IF_ERROR(eval_node(n.a, c, &a));
      *out = n.kind == Node::Neg ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : !a;
      return Status::ok();
    }
    case Node::Bin: break;
  }
  int64_t a = 0, b = 0;
  TRI_RETURN_IF_ERROR(eval_node(n.a, c, &a));
  // && and || do not evaluate their right side when the left decides (a division there is safe).
  if (n.op == "&&" && !a) return *out = 0, Status::ok();
  if (n.op == "||" && a) return *out = 1, Status::ok();
  TRI_RETURN_IF_ERROR(eval_node(n.b, c, &b));
  const auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
  const std::string& op = n.op;
  if (op == "&&" || op == "||") *out = b != 0;
  else if (op == "+") *out = wrap(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else if (op == "-") *out = wrap(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  else if (op == "*") *out = wrap(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else if (op == "/" || op == "%") {
    if (b == 0 || (a == INT64_MIN && b == -1))
      return Status(Code::InvalidArgument, "filter \"" + text_ + "\": division by " + std::to_string(b) + " for " +
                                               config_text(c));
    *out = op == "/" ? a / b : a % b;
  } else if (op == "==") *out = a == b;
  else if (op == "!=") *out = a != b;
  else if (op == "<") *out = a < b;
  else if (op == "<=") *out = a <= b;
  else if (op == ">") *out = a > b;
  else *out = a >= b;
  return Status::ok();
}

}  // namespace tri::tune
