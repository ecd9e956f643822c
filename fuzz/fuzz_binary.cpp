// libFuzzer target for read_binary, the reader of untrusted binary modules (docs/format.md).
//
// Every input must either be refused with a reader error code, or give a module that the
// verifier, the writer and the printer handle, that survives a write -> read round trip
// unchanged (same bytes when written again, same text when printed, same verifier verdict), and
// whose text parses back to the same text (the reader accepts what the parser accepts).
//
// Nearly every mutation of a valid file breaks its checksum, which would keep the fuzzer at the
// front door; the custom mutator therefore reseals most mutants (payload size and checksum set to
// match the payload), so the payload parser is what gets explored. The saved crash inputs are
// real files that reproduce without the mutator.
#include <xxhash.h>

#include <cstdint>
#include <cstring>

#include "fuzz_common.h"
#include "ir/binary.h"

using namespace tri;
using namespace tri::ir;
using tri_fuzz::check;

namespace {

constexpr size_t kHeader = 28;

void reseal(uint8_t* data, size_t size) {
  if (size < kHeader || !is_binary(data, size)) return;
  uint64_t payload = size - kHeader;
  uint64_t sum = XXH3_64bits(data + kHeader, payload);
  for (int i = 0; i < 8; ++i) {
    data[12 + i] = static_cast<uint8_t>(payload >> (8 * i));
    data[20 + i] = static_cast<uint8_t>(sum >> (8 * i));
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed % 16 != 0) reseal(data, size);  // leave some mutants unsealed, for the header checks
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& src = tri_fuzz::source_name();
  std::unique_ptr<Module> m;
  Status st = read_binary(data, size, src, &m);
  if (!st.is_ok()) {
    check(st.code() == Code::CorruptBinary || st.code() == Code::UnsupportedVersion ||
              st.code() == Code::LimitExceeded,
          "read_binary returned an unexpected code", std::string(code_name(st.code())) + ": " + st.message());
    check(st.message().rfind(src + ": error: ", 0) == 0, "read_binary's message lacks its prefix", st.message());
    check(m == nullptr, "read_binary failed but returned a module");
    return 0;
  }
  Status verified = tri_fuzz::verify_if_built(*m);

  std::string b1 = write_binary(*m);
  std::unique_ptr<Module> m2;
  st = read_binary(b1.data(), b1.size(), src, &m2);
  check(st.is_ok(), "a module read from binary does not read back after writing", st.message());
  std::string b2 = write_binary(*m2);
  check(b1 == b2, "writing a module read back from its own bytes gives other bytes");
  Status verified2 = tri_fuzz::verify_if_built(*m2);
  check(verified.code() == verified2.code() && verified.message() == verified2.message(),
        "verify differs after a binary round trip", verified.message() + "\nvs\n" + verified2.message());

#ifdef TRI_FUZZ_HAVE_TEXT
  std::string t1 = print_text(*m);
  std::string t2 = print_text(*m2);
  check(t1 == t2, "the text differs after a binary round trip", t1 + "\n---- vs\n" + t2);
  // The reader accepts what the parser accepts, so the text parses back, to the same text.
  std::unique_ptr<Module> m3;
  st = parse_text(t1, src, &m3);
  check(st.is_ok(), "the text of a module read from binary does not parse", st.message() + "\n" + t1);
  std::string t3 = print_text(*m3);
  check(t1 == t3, "binary -> text -> parse -> text changes the text", t1 + "\n---- vs\n" + t3);
#endif
  return 0;
}
