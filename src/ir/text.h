// The IR's text format (docs/ir.md, "Text format"): parser and canonical printer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/ir.h"

namespace tri::ir {

// The `//` comments of a text module, kept beside the module rather than in it: passes never see
// or maintain them, and only the text printer reads them back (`tri fmt`, tri_module_to_text).
// Each comment is attached to a place of the module's structure (docs/ir.md, "Comments"): the
// whole-line comments before a function, parameter, op, region header, closing '}' or the end
// of the file, and the comment at the end of a line to what that line prints.
struct TextComments {
  enum class Anchor : uint8_t {
    Function,       // before `kernel`/`func`; trailing: at the end of the header line (the '{')
    Param,          // id: runtime parameter index
    Constexpr,      // id: constexpr parameter index
    Op,             // id: OpId; trailing: the op's line, or its first line when it has regions
    RegionArgs,     // id: BlockId; the `^(...):` line
    RegionClose,    // id: BlockId; before (inside the region) / at the end of its closing '}' line
    FunctionClose,  // before / after the function's closing '}'
    End,            // after the last function (func and id are 0)
  };
  struct Key {
    Anchor anchor = Anchor::End;
    uint32_t func = 0;  // function index in the module
    uint32_t id = 0;
    bool operator<(const Key& o) const {
      if (anchor != o.anchor) return anchor < o.anchor;
      if (func != o.func) return func < o.func;
      return id < o.id;
    }
  };
  struct Entry {
    // The lines before the anchor, each a comment as written ("// ...") or "" for a blank line
    // that separated comments (or a comment and the anchor).
    std::vector<std::string> leading;
    std::string trailing;  // the comment at the end of the anchor's line; "" when none
  };
  std::map<Key, Entry> entries;

  const Entry* find(Anchor a, uint32_t func, uint32_t id = 0) const {
    auto it = entries.find(Key{a, func, id});
    return it == entries.end() ? nullptr : &it->second;
  }
};

// Parses IR text into a new module. Parsing checks what reading needs (tokens, op and attribute
// names, attribute kinds, slot names, that every used value is defined earlier and visible, that
// no name is defined twice among the values visible at one point: names are scoped by region,
// so sibling regions may reuse one and a nested region may not shadow one; nesting depth at most
// kMaxNesting) but not types: run verify() next. Errors are Code::Parse (or LimitExceeded) with
// "source:line:col: error: ...". Locations of ops, params and functions are recorded for later
// diagnostics. When `comments` is not null it receives the text's comments (cleared first).
Status parse_text(std::string_view text, const std::string& source_name, std::unique_ptr<Module>* out,
                  TextComments* comments = nullptr);

// The canonical text of a module. print_text(parse_text(print_text(m))) == print_text(m). With
// `comments` (from parse_text of the text `m` was read from, before any change to `m`), the
// comments are printed back where they were attached; the result is again a fixed point.
std::string print_text(const Module& m, const TextComments* comments = nullptr);

// A float literal as the canonical printer writes it: the shortest decimal that reads back to the
// same double, always with a '.' or an exponent ("0.5", "100.0", "1e+30", "-inf", "nan").
std::string format_float(double v);

}  // namespace tri::ir
