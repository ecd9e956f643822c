// The IR's binary format (docs/format.md): a versioned, checksummed encoding of a module.
// text -> binary -> text keeps the module, its locations and (from version 2) the name of the
// text they refer to; comments are not carried.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/status.h"
#include "ir/ir.h"

namespace tri::ir {

// True when the bytes start with the binary format's magic.
bool is_binary(const void* data, size_t size);

// Reads a module. It never trusts its input: every length, count and index is checked against the
// bytes that remain and the tables read so far. Errors: Code::CorruptBinary (truncated, bad
// checksum, bad counts or indices), Code::UnsupportedVersion (a newer format version),
// Code::LimitExceeded (nesting deeper than kMaxNesting, counts past the limits in limits.h).
// The result is not verified: run verify() next. Its source_name, which its diagnostics use, is
// the name of the text the file was made from when the file stores one (version 2 and later),
// else `source_name`; errors about the bytes themselves always name `source_name`.
Status read_binary(const void* data, size_t size, const std::string& source_name, std::unique_ptr<Module>* out);

// Writes a module in the current format version. Without `locations`, every source location is
// written as unknown and the source name as empty: the canonical form the disk cache keys on.
std::string write_binary(const Module& m, bool locations = true);

}  // namespace tri::ir
