// Shared by the fuzz targets: how a broken invariant is reported (print what is needed to
// understand it, then abort so libFuzzer saves the input), and the optional parts of the build.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "base/status.h"
#include "ir/ir.h"

#ifdef TRI_FUZZ_HAVE_TEXT
#include "ir/text.h"
#endif
#ifdef TRI_FUZZ_HAVE_VERIFIER
#include "ir/verifier.h"
#endif

namespace tri_fuzz {

[[noreturn]] inline void die(const std::string& what, const std::string& detail = std::string()) {
  std::fprintf(stderr, "\n==== tri fuzz invariant broken: %s\n", what.c_str());
  if (!detail.empty()) std::fprintf(stderr, "%s\n", detail.c_str());
  std::fprintf(stderr, "====\n");
  std::abort();
}

inline void check(bool ok, const std::string& what, const std::string& detail = std::string()) {
  if (!ok) die(what, detail);
}

// verify() when the verifier is in the build, else Ok.
inline tri::Status verify_if_built(const tri::ir::Module& m) {
#ifdef TRI_FUZZ_HAVE_VERIFIER
  tri::Status st = tri::ir::verify(m);
  check(st.is_ok() || st.code() == tri::Code::Verify || st.code() == tri::Code::LimitExceeded,
        "verify returned an unexpected code", std::string(tri::code_name(st.code())) + ": " + st.message());
  return st;
#else
  (void)m;
  return tri::Status::ok();
#endif
}

// Source name used for every read, so that diagnostics of equal modules are equal strings.
inline const std::string& source_name() {
  static const std::string name = "fuzz";
  return name;
}

}  // namespace tri_fuzz
