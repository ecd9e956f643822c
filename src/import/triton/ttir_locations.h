// MLIR locations in TTIR (`loc(...)` and `#locN = loc(...)` aliases) and how they become Tri
// source locations.
//
// Triton prints a file:line:col for each op (its Python line), wrapped in name locations (the
// Python variable) and call sites (for code inlined from another function, Triton's library
// included). Tri keeps one source name per module and a line:col per op, so resolve() picks, for
// each op, the line in the kernel's own file: the callee's position if it is in that file (a
// user helper inlined into the kernel), else the call site's (a library function called from
// the user's line).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "import/triton/ttir_lexer.h"

namespace tri::import {

using LocId = int32_t;
constexpr LocId kNoLoc = -1;

struct FileLoc {
  std::string file;  // empty: unknown
  uint32_t line = 0, col = 0;
  bool known() const { return !file.empty(); }
};

class LocTable {
 public:
  // Reads a location body after `loc(` up to (not including) its ')'.
  LocId parse_body(Cursor& c, int depth = 0);
  // Reads `loc(...)`.
  LocId parse_loc(Cursor& c);
  // `#name = loc(...)`: records the alias (a second definition of a name is an error).
  void define_alias(Cursor& c);

  // The position `id` stands for, preferring `main_file` as described above.
  FileLoc resolve(LocId id, const std::string& main_file) const;
  // The file of the first file:line:col location read, or "" when there is none.
  const std::string& first_file() const { return first_file_; }
  // The first alias used but never defined: true with its name and where it is used.
  bool undefined_alias(std::string* name, Loc* at) const;

 private:
  struct Node {
    enum class Kind { Unknown, File, Name, CallSite, Fused, Alias } kind = Kind::Unknown;
    std::string text;  // File: the file; Alias: the alias name
    uint32_t line = 0, col = 0;
    std::vector<LocId> kids;  // Name: [child]; CallSite: [callee, caller]; Fused: members
  };
  LocId add(Node n);
  LocId parse_element(Cursor& c, int depth);
  // `budget` bounds the work: aliases can make a DAG with exponentially many paths.
  FileLoc resolve_rec(LocId id, const std::string& main_file, int depth, int* budget) const;

  std::vector<Node> nodes_;
  std::unordered_map<std::string, LocId> aliases_;
  std::vector<std::pair<std::string, Loc>> alias_uses_;
  std::string first_file_;
};

}  // namespace tri::import
