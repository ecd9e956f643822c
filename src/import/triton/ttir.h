// Triton's TTIR as an input form: the MLIR text that Triton 3.x prints after its `ttir` stage
// (compiled.asm["ttir"]), read into Tri's IR (docs/import.md).
//
// This layer sits above ir (it builds ir::Module with ir::Builder) and below capi, which calls it
// from tri_module_create when the input looks like TTIR. It needs no MLIR and no Triton.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "ir/ir.h"

namespace tri::import {

// True when `data` is TTIR rather than Tri's IR text: after leading whitespace and `//` comments
// the text starts with a location alias (`#loc...`), `module`, or `tt.func` — none of which can
// start Tri's text (which starts with `kernel` or `func`). Never reads past `size`.
bool looks_like_ttir(const void* data, size_t size);

// Reads TTIR text into a new module (not verified: run ir::verify next). Every `tt.func public`
// becomes a kernel and every other `tt.func` a device function; `tt.divisibility` on an argument
// becomes its `align` (pointers) or `divisible` (integers) fact.
//
// Locations: when the text carries Triton's `loc(...)` locations, each op's location is the
// Python line and column it came from, and the module's source_name is the kernel's Python file
// (so verifier, checked-mode and assert messages name the user's Python lines); a location in
// another file (Triton's own library code, inlined) resolves through its call site to the user's
// line. Without locations, ops are located at their TTIR line and column and source_name is
// `source_name`.
//
// Errors name the TTIR line and column (`source_name:line:col: error: ...`), and the Python line
// when there is one: Code::Parse for malformed text, Code::Unsupported for an op, a libdevice
// function, a type or an attribute that Tri lacks (the message names it and says why),
// Code::LimitExceeded for input past the limits of ir/limits.h. Never crashes on any input.
Status import_ttir(std::string_view text, const std::string& source_name, std::unique_ptr<ir::Module>* out);

}  // namespace tri::import
