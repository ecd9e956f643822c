// libFuzzer target for the readers of the disk cache's untrusted files (docs/cache.md): an entry
// (decode_entry), a request shortcut (decode_shortcut) and a bundle (check_bundle, which streams
// the file). The first byte picks the reader; the rest is the file.
//
// Every input must be refused with CorruptBinary, UnsupportedVersion, LimitExceeded or Io (no
// crash, no allocation past the bounds of entry.h and bundle.h, ASan watching), and an entry that
// decodes must encode again to bytes that decode to the same entry.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "cache/bundle.h"
#include "cache/entry.h"
#include "cache/shortcut.h"
#include "fuzz_common.h"

using namespace tri;
using namespace tri::cache;
using tri_fuzz::check;

namespace {

bool expected(Code c) {
  return c == Code::CorruptBinary || c == Code::UnsupportedVersion || c == Code::LimitExceeded || c == Code::Io;
}

void entry(const std::string& bytes) {
  Key key;
  if (!entry_key(bytes, &key)) key = Key{1, 2};
  Entry e;
  Status st = decode_entry(bytes, key, nullptr, &e);
  if (!st.is_ok()) {
    check(expected(st.code()), "decode_entry returned an unexpected code", st.message());
    return;
  }
  std::string again;
  check(encode_entry(e, nullptr, &again).is_ok(), "a decoded entry does not encode");
  Entry back;
  check(decode_entry(again, key, nullptr, &back).is_ok(), "a re-encoded entry does not decode");
  check(back.kind == e.kind && back.metadata == e.metadata && back.payload == e.payload,
        "an entry changed through encode and decode");
}

void shortcut(const std::string& bytes) {
  Key entry_key_out;
  std::string module_bytes;
  Status st = decode_shortcut(bytes, Key{0x1234, 0x5678}, nullptr, &entry_key_out, &module_bytes);
  if (!st.is_ok()) check(expected(st.code()), "decode_shortcut returned an unexpected code", st.message());
}

void bundle(const std::string& bytes) {
  int fd = ::memfd_create("bundle", 0);
  if (fd < 0) return;
  if (::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size())) {
    BundleInfo info;
    Status st = check_bundle("/proc/self/fd/" + std::to_string(fd), &info);
    if (!st.is_ok()) check(expected(st.code()), "check_bundle returned an unexpected code", st.message());
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: entry(bytes); break;
    case 1: shortcut(bytes); break;
    default: bundle(bytes); break;
  }
  return 0;
}
