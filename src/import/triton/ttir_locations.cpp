// MLIR locations read from TTIR and resolved to the user's Python lines (see ttir_locations.h).
#include "import/triton/ttir_locations.h"

namespace tri::import {

namespace {
constexpr int kMaxLocDepth = 64;
constexpr size_t kMaxLocNodes = size_t(1) << 22;
}  // namespace

LocId LocTable::add(Node n) {
  if (nodes_.size() >= kMaxLocNodes)
    throw ImportError{Status(Code::LimitExceeded, "ttir: more than 4194304 locations")};
  nodes_.push_back(std::move(n));
  return static_cast<LocId>(nodes_.size() - 1);
}

LocId LocTable::parse_loc(Cursor& c) {
  c.expect_word("loc", "'loc('");
  c.expect('(', "'(' after 'loc'");
  LocId id = parse_body(c);
  c.expect(')', "')' closing 'loc('");
  return id;
}

// An element inside callsite(...) / fused[...] / name(...): an alias, a nested loc(...), or a body.
LocId LocTable::parse_element(Cursor& c, int depth) {
  if (c.peek_word("loc")) {
    c.expect_word("loc", "'loc'");
    c.expect('(', "'(' after 'loc'");
    LocId id = parse_body(c, depth + 1);
    c.expect(')', "')' closing 'loc('");
    return id;
  }
  return parse_body(c, depth + 1);
}

LocId LocTable::parse_body(Cursor& c, int depth) {
  if (depth > kMaxLocDepth) c.fail(c.loc(), "locations nested more than 64 deep");
  Node n;
  if (c.peek() == '#') {
    Loc at = c.loc();
    n.kind = Node::Kind::Alias;
    n.text = c.hash_ref("a location alias");
    alias_uses_.emplace_back(n.text, at);
    return add(std::move(n));
  }
  if (c.eat_word("unknown")) return add(std::move(n));
  if (c.eat_word("callsite")) {
    c.expect('(', "'(' after 'callsite'");
    LocId callee = parse_element(c, depth);
    c.expect_word("at", "'at' in a callsite location");
    LocId caller = parse_element(c, depth);
    c.expect(')', "')' closing 'callsite('");
    n.kind = Node::Kind::CallSite;
    n.kids = {callee, caller};
    return add(std::move(n));
  }
  if (c.eat_word("fused")) {
    if (c.peek() == '<') c.skip_balanced();
    c.expect('[', "'[' after 'fused'");
    n.kind = Node::Kind::Fused;
    if (c.peek() != ']') {
      do {
        n.kids.push_back(parse_element(c, depth));
      } while (c.eat(','));
    }
    c.expect(']', "']' closing 'fused['");
    return add(std::move(n));
  }
  if (c.peek_string()) {
    std::string s = c.string_lit("a file name or a location name");
    if (c.eat(':')) {
      n.kind = Node::Kind::File;
      n.text = std::move(s);
      n.line = static_cast<uint32_t>(c.uint("a line number"));
      c.expect(':', "':' before a column number");
      n.col = static_cast<uint32_t>(c.uint("a column number"));
      // A range `"f":1:2 to 3:4` (or `to :4`): the start is what counts.
      if (c.eat_word("to")) {
        if (c.peek() != ':') c.uint("a line number");
        c.expect(':', "':' in a location range");
        c.uint("a column number");
      }
      if (first_file_.empty()) first_file_ = n.text;
      return add(std::move(n));
    }
    n.kind = Node::Kind::Name;
    if (c.eat('(')) {
      n.kids.push_back(parse_element(c, depth));
      c.expect(')', "')' closing a name location");
    }
    return add(std::move(n));
  }
  c.fail_expected("a location ('unknown', a \"file\":line:col, a name, 'callsite', 'fused' or #alias)");
}

void LocTable::define_alias(Cursor& c) {
  Loc at = c.loc();
  std::string name = c.hash_ref("a location alias");
  c.expect('=', "'=' after a location alias");
  LocId id = parse_loc(c);
  if (!aliases_.emplace(name, id).second) c.fail(at, "location alias #" + name + " is defined twice");
}

bool LocTable::undefined_alias(std::string* name, Loc* at) const {
  for (const auto& [n, where] : alias_uses_)
    if (!aliases_.count(n)) {
      *name = n;
      at->line = where.line;
      at->col = where.col;
      return true;
    }
  return false;
}

FileLoc LocTable::resolve(LocId id, const std::string& main_file) const {
  int budget = 4096;
  return resolve_rec(id, main_file, 0, &budget);
}

FileLoc LocTable::resolve_rec(LocId id, const std::string& main_file, int depth, int* budget) const {
  if (id < 0 || static_cast<size_t>(id) >= nodes_.size() || depth > 2 * kMaxLocDepth || --*budget < 0)
    return FileLoc{};
  const Node& n = nodes_[id];
  switch (n.kind) {
    case Node::Kind::Unknown:
      return FileLoc{};
    case Node::Kind::File:
      return FileLoc{n.text, n.line, n.col};
    case Node::Kind::Name:
      return n.kids.empty() ? FileLoc{} : resolve_rec(n.kids[0], main_file, depth + 1, budget);
    case Node::Kind::Alias: {
      auto it = aliases_.find(n.text);
      return it == aliases_.end() ? FileLoc{} : resolve_rec(it->second, main_file, depth + 1, budget);
    }
    case Node::Kind::CallSite: {
      FileLoc callee = resolve_rec(n.kids[0], main_file, depth + 1, budget);
      if (callee.known() && callee.file == main_file) return callee;
      FileLoc caller = resolve_rec(n.kids[1], main_file, depth + 1, budget);
      return caller.known() ? caller : callee;
    }
    case Node::Kind::Fused: {
      FileLoc first;
      for (LocId k : n.kids) {
        FileLoc r = resolve_rec(k, main_file, depth + 1, budget);
        if (r.known() && r.file == main_file) return r;
        if (!first.known()) first = r;
      }
      return first;
    }
  }
  return FileLoc{};
}

}  // namespace tri::import
