// Status: the result of a fallible internal call (a code and a message), and the diagnostic
// formatting shared by every layer. The codes are the public tri_result values (include/tri/tri.h
// checks that they agree), so the C API passes them through unchanged.
//
// User errors (bad IR, bad arguments) travel as Status; broken internal invariants are asserts.
// Messages start lowercase, have no trailing period, and name the thing and the place:
//   softmax.tri:12:9: error: 'add' operands have types <128 x f32> and <256 x f32>
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace tri {

enum class Code : int32_t {
  Ok = 0,
  InvalidArgument = 1,   // NULL handle or pointer, bad option, bad size
  Parse = 2,             // malformed IR text
  Verify = 3,            // well-formed IR that breaks a typing or structure rule
  CorruptBinary = 4,     // binary IR that is truncated, has a bad checksum, bad counts or indices
  UnsupportedVersion = 5,// binary IR of a newer format version, or header/library mismatch
  NotFound = 6,          // no kernel / function / parameter of that name
  LimitExceeded = 7,     // nesting too deep, input too large
  OutOfMemory = 8,
  Specialize = 9,        // a constexpr missing, of the wrong type, or out of range
  LaunchArgs = 10,       // launch arguments do not match the kernel's signature
  Unsupported = 11,      // a target or feature that is not available here
  Compile = 12,          // the backend failed to compile (an internal error with the IR attached)
  Runtime = 13,          // a kernel failed while running (checked-mode violation, assert)
  Io = 14,               // a file could not be read or written
  Internal = 15,         // a bug in Tri
  Cancelled = 16,        // a launch or compile stopped by tri_context_cancel
  Untrusted = 17,        // a bundle without a signature by a key the context trusts
};

const char* code_name(Code c);

struct Loc {
  uint32_t line = 0;  // 1-based; 0 means unknown
  uint32_t col = 0;
  bool known() const { return line != 0; }
};

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == Code::Ok; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::Ok;
  std::string message_;
};

// "source:line:col: error: what" (the location part is dropped when unknown).
std::string format_diag(const std::string& source, Loc loc, const std::string& what);

// Builds a Status carrying a located diagnostic.
inline Status error_at(Code code, const std::string& source, Loc loc, const std::string& what) {
  return Status(code, format_diag(source, loc, what));
}

#define TRI_RETURN_IF_ERROR(expr)          \
  do {                                     \
    ::tri::Status _st = (expr);            \
    if (!_st.is_ok()) return _st;          \
  } while (0)

}  // namespace tri
