// What the binary IR format's reader (binary.cpp) and writer (binary_writer.cpp) share: the magic,
// the format version, the header's layout, the tags of attributes and types, the smallest size of
// each record (the reader checks counts against them before allocating) and the little-endian and
// name helpers. docs/format.md is the specification.
#pragma once

#include <cstdint>
#include <string>

#include "ir/ir.h"

namespace tri::ir::binary_detail {

// PNG-style: the high first byte is not ASCII (and never starts UTF-8 text), "\r\n" and "\n"
// catch line-ending conversion, 0x1a stops DOS `type`.
inline constexpr unsigned char kMagic[8] = {0x89, 'T', 'R', 'I', '\r', '\n', 0x1a, '\n'};
// 1: the first. 2: the payload names the text the module was read from (after the strings).
inline constexpr uint16_t kFormatVersion = 2;
// magic(8) version(u16) flags(u16) payload size(u64) checksum(u64)
inline constexpr size_t kHeaderSize = 28;
inline constexpr size_t kChecksumOffset = 20;

// Attribute kind tags (docs/format.md, "Attributes"). Stable: never renumber.
enum AttrTag : uint8_t {
  kTagNone = 0, kTagInt = 1, kTagFloat = 2, kTagBool = 3, kTagStr = 4,
  kTagFunc = 5, kTagInts = 6, kTagEnum = 7, kTagSym = 8,
};

// Type entry tags.
enum TypeTag : uint8_t { kTypeScalar = 0, kTypePtr = 1, kTypeBlock = 2 };

// The least bytes each kind of record takes, so a count can be checked against the bytes left
// before anything is allocated (docs/format.md lists the same numbers).
inline constexpr size_t kMinString = 1, kMinSymbol = 1, kMinType = 2, kMinFunction = 10, kMinResultType = 1;
inline constexpr size_t kMinConstexpr = 5, kMinParam = 8, kMinArg = 2, kMinOp = 7, kMinOperand = 1;
inline constexpr size_t kMinAttr = 3, kMinBlock = 4, kMinInt = 1, kMinResult = 2;

// Scalar codes in the file. The current Scalar enum happens to match; the table keeps the file
// independent of that enum's order.
inline constexpr Scalar kScalarOfCode[] = {Scalar::I1,  Scalar::I8,   Scalar::I16, Scalar::I32,
                                    Scalar::I64, Scalar::F16,  Scalar::BF16, Scalar::F32,
                                    Scalar::F64, Scalar::F8E4M3, Scalar::F8E5M2};
inline constexpr uint64_t kNumScalarCodes = sizeof(kScalarOfCode) / sizeof(kScalarOfCode[0]);
static_assert(kNumScalarCodes == kNumScalars, "a new scalar needs a new code in the binary format");

inline uint64_t scalar_code(Scalar s) {
  for (uint64_t c = 0; c < kNumScalarCodes; ++c)
    if (kScalarOfCode[c] == s) return c;
  assert(!"scalar without a code");
  return kNumScalarCodes;
}

inline void put_le(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

inline bool is_name_start(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
inline bool is_name_char(unsigned char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; }

// NAME of docs/ir.md's grammar: function, constexpr and symbol names.
inline bool is_name(const std::string& s) {
  if (s.empty() || !is_name_start(s[0])) return false;
  for (unsigned char c : s)
    if (!is_name_char(c)) return false;
  return true;
}

// The part of a VALUE after '%'; empty means unnamed.
inline bool is_value_name(const std::string& s) {
  for (unsigned char c : s)
    if (!is_name_char(c)) return false;
  return true;
}

}  // namespace tri::ir::binary_detail
