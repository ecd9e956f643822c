// libFuzzer target for parse_text, the reader of untrusted IR text (docs/ir.md, "Text format").
//
// Every input must either be refused with a parse error, or give a module that the verifier and
// the printer handle, whose printed text parses again to the same text (print(parse(x)) is
// stable), and that survives text -> binary -> text unchanged (the binary format is lossless),
// with the verifier saying the same thing about both.
#include <cstdint>
#include <string_view>

#include "fuzz_common.h"
#include "ir/binary.h"
#include "ir/text.h"

using namespace tri;
using namespace tri::ir;
using tri_fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& src = tri_fuzz::source_name();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<Module> m;
  Status st = parse_text(text, src, &m);
  if (!st.is_ok()) {
    check(st.code() == Code::Parse || st.code() == Code::LimitExceeded, "parse_text returned an unexpected code",
          std::string(code_name(st.code())) + ": " + st.message());
    check(st.message().rfind(src + ":", 0) == 0, "parse_text's message does not start with the source name",
          st.message());
    return 0;
  }
  Status verified = tri_fuzz::verify_if_built(*m);

  std::string t1 = print_text(*m);
  std::unique_ptr<Module> m2;
  st = parse_text(t1, src, &m2);
  check(st.is_ok(), "the printed text does not parse", st.message() + "\n---- printed text:\n" + t1);
  std::string t2 = print_text(*m2);
  check(t1 == t2, "print(parse(print(x))) != print(x)", t1 + "\n---- vs\n" + t2);

  std::string b = write_binary(*m);
  std::unique_ptr<Module> m3;
  st = read_binary(b.data(), b.size(), src, &m3);
  check(st.is_ok(), "a parsed module does not read back from binary", st.message() + "\n---- text:\n" + t1);
  std::string t3 = print_text(*m3);
  check(t1 == t3, "text -> binary -> text changes the text", t1 + "\n---- vs\n" + t3);
  Status verified3 = tri_fuzz::verify_if_built(*m3);
  check(verified.code() == verified3.code() && verified.message() == verified3.message(),
        "verify differs after text -> binary", verified.message() + "\nvs\n" + verified3.message());
  return 0;
}
