// libFuzzer target for import_ttir, the reader of Triton's TTIR text (docs/import.md).
//
// Every input must either be refused with a located error of the reader's codes (Parse for
// malformed text, Unsupported for what Tri lacks, LimitExceeded, OutOfMemory), whose message
// starts with the source name, or give a module that the verifier handles; a module that
// verifies must print as text that parses back to the same text.
#include <cstdint>
#include <string_view>

#include "fuzz_common.h"
#include "import/triton/ttir.h"
#include "ir/text.h"

using namespace tri;
using tri_fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& src = tri_fuzz::source_name();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Whatever looks_like_ttir says, it must not read past the input (ASan checks).
  (void)import::looks_like_ttir(data, size);
  std::unique_ptr<ir::Module> m;
  Status st = import::import_ttir(text, src, &m);
  if (!st.is_ok()) {
    check(st.code() == Code::Parse || st.code() == Code::Unsupported || st.code() == Code::LimitExceeded ||
              st.code() == Code::OutOfMemory,
          "import_ttir returned an unexpected code", std::string(code_name(st.code())) + ": " + st.message());
    check(st.message().rfind(src + ":", 0) == 0, "import_ttir's message does not start with the source name",
          st.message());
    return 0;
  }
  Status verified = tri_fuzz::verify_if_built(*m);
  if (!verified.is_ok()) return 0;
  std::string t1 = ir::print_text(*m);
  std::unique_ptr<ir::Module> m2;
  st = ir::parse_text(t1, src, &m2);
  check(st.is_ok(), "the text of an imported module does not parse", st.message() + "\n---- printed text:\n" + t1);
  std::string t2 = ir::print_text(*m2);
  check(t1 == t2, "print(parse(print(import(x)))) != print(import(x))", t1 + "\n---- vs\n" + t2);
  return 0;
}
