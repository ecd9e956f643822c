// libFuzzer target for the package reader (src/package, docs/format.md "Packages"). The first
// byte picks what the rest is: a whole file (read as it is), or a body (sealed first, with a
// right checksum, so that the body's reader sees the bytes past the checksum a random file never
// gets by).
//
// Every input must be refused with CorruptBinary, UnsupportedVersion or LimitExceeded (no crash,
// no allocation past what the input holds, ASan watching), and a package that reads must write
// to bytes that read back and write to the same bytes again.
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "package/package.h"

using namespace tri;
using tri_fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    std::string sealed;
    if (!package::seal(bytes, &sealed).is_ok()) return 0;
    bytes = std::move(sealed);
  }
  package::Package p;
  Status st = package::read(bytes.data(), bytes.size(), "fuzz", &p);
  if (!st.is_ok()) {
    check(st.code() == Code::CorruptBinary || st.code() == Code::UnsupportedVersion || st.code() == Code::LimitExceeded,
          "package::read returned an unexpected code", st.message());
    return 0;
  }
  std::string once, twice;
  check(package::write(p, &once).is_ok(), "a package that reads does not write");
  package::Package back;
  check(package::read(once.data(), once.size(), "again", &back).is_ok(), "a written package does not read");
  check(package::write(back, &twice).is_ok() && once == twice, "a package changed through write and read");
  return 0;
}
