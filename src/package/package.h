// Packages (docs/format.md, "Packages"): kernels compiled ahead of time (`tri aot`) in one file
// that the runtime loads without compiling anything. A package holds the module's reflection
// (what tri_module_param_* report), optionally the module's binary IR (so the full library can
// compile what the package lacks), and kernels: each one specialization request (target,
// constexprs, warps, stages, argument facts) with variants for argument classes (launch-time
// specialization), each variant with its code for several machines (a cubin and PTX per GPU
// architecture; a shared object per x86-64 level).
//
// This file is the container only: the data model, write() and a read() that trusts nothing (a
// fuzzer runs it: fuzz/fuzz_package.cpp). What the payloads mean is each target's (target.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tri::package {

inline constexpr uint16_t kFormatVersion = 1;
inline constexpr size_t kHeaderBytes = 48;
inline constexpr uint64_t kMaxBodyBytes = uint64_t(1) << 30;  // decompressed

// One parameter as the reflection calls report it (tri_module_param_*): TRI_PARAM_*,
// TRI_TYPE_*, TRI_DTYPE_* values.
struct Param {
  std::string name;
  std::string type;          // the type as IR text
  bool has_default = false;  // constexprs
  std::string default_text;  // the default as IR text
  int32_t kind = 0;
  int32_t type_kind = 0;
  int32_t dtype = 0;
  uint32_t align = 0;
  uint32_t divisible = 0;
  int32_t noalias = 0;
};

struct Function {
  std::string name;
  int32_t kind = 0;  // TRI_FUNCTION_*
  std::vector<Param> params;
};

// A constexpr's value in a kernel's specialization; `is_default` when the request left it at the
// kernel's default (a lookup that does not name it matches only such an entry).
struct Constexpr {
  std::string name;
  bool is_float = false;
  int64_t i = 0;
  double f = 0;
  bool is_default = false;
};

// A fact the request stated about a runtime parameter (tri_compile_options_set_arg_align /
// _divisible).
struct Fact {
  uint32_t param = 0;
  uint32_t align = 0;
  uint32_t divisible = 0;
};

// Code for one machine: `machine` names it ("sm_90a", "x86-64-v3"); `kind`, `metadata` and
// `bytes` are the target's (target/cuda: "ptx" or "ptx+cubin"; target/cpu: "so").
struct Payload {
  std::string machine;
  std::string kind;
  std::string metadata;
  std::string bytes;
};

// A variant for the argument classes `classes` (two bits per runtime parameter, as
// capi::Compiled::classify makes them; 0: the kernel without argument facts).
struct Variant {
  uint64_t classes = 0;
  std::vector<Payload> payloads;
};

struct Kernel {
  std::string name;    // the kernel function's name
  std::string target;  // "cuda", "cpu"
  int32_t num_warps = 4;
  int32_t num_stages = 0;
  std::vector<Constexpr> constexprs;  // every constexpr of the kernel, in declaration order
  std::vector<Fact> facts;
  uint32_t equal_one = 0;  // runtime integer parameters known to be 1, by bit
  bool waits = false;      // the kernel waits on signals (its programs must all run at once)
  std::string note;        // where the specialization came from ("tuned: config 3 of 12"), for people
  std::vector<Variant> variants;
};

struct Package {
  std::string producer;  // "tri 0.2.0"
  std::string name;      // the module's name (for messages)
  std::string ir;        // the module's binary IR (docs/format.md), or empty
  std::vector<Function> functions;
  std::vector<Kernel> kernels;
};

// True when the bytes start with a package's magic.
bool is_package(const void* data, size_t size);

// Encodes `p` in the current format version (zstd, then the checksum).
Status write(const Package& p, std::string* out);

// The body write() seals: the package's fields, uncompressed.
std::string encode_body(const Package& p);
// The file around a body as it is (compressed, headed and checksummed), which write() makes of
// an encoded Package; for tests and fuzzers that reach the body's reader with bodies of their own.
Status seal(const std::string& body, std::string* out);

// Decodes a package. Every length, count and size is checked against the bytes there are, and
// the checksum against the bytes before anything is decompressed. Errors name `name`:
// Code::CorruptBinary (truncated, bad checksum, bad counts), Code::UnsupportedVersion (a newer
// format), Code::LimitExceeded (past kMaxBodyBytes).
Status read(const void* data, size_t size, const std::string& name, Package* out);

}  // namespace tri::package
