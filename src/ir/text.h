// The IR's text format (docs/ir.md, "Text format"): parser and canonical printer.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ir/ir.h"

namespace tri::ir {

// Parses IR text into a new module. Parsing checks what reading needs (tokens, op and attribute
// names, attribute kinds, slot names, that every used value is defined earlier and every name is
// defined once, nesting depth at most kMaxNesting) but not types: run verify() next. Errors are
// Code::Parse (or LimitExceeded) with "source:line:col: error: ...". Locations of ops, params and
// functions are recorded for later diagnostics.
Status parse_text(std::string_view text, const std::string& source_name, std::unique_ptr<Module>* out);

// The canonical text of a module. print_text(parse_text(print_text(m))) == print_text(m).
std::string print_text(const Module& m);

// A float literal as the canonical printer writes it: the shortest decimal that reads back to the
// same double, always with a '.' or an exponent ("0.5", "100.0", "1e+30", "-inf", "nan").
std::string format_float(double v);

}  // namespace tri::ir
