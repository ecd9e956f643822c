// The .npy reader and writer (see npy.h). The header is a Python dict literal; only the subset
// NumPy writes is accepted: string keys, and values that are strings, True/False or tuples of
// non-negative integers, with free spacing and an optional trailing comma.
#include "npy.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

namespace tri_tool {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr int kMaxRank = 32;

struct HeaderValue {
  enum Kind { Str, Bool, Tuple } kind = Str;
  std::string s;
  bool b = false;
  std::vector<uint64_t> ints;
};

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : t_(text) {}

  bool parse(std::map<std::string, HeaderValue>* out, std::string* error) {
    skip();
    if (!eat('{')) return fail("header is not a dict: expected '{'", error);
    skip();
    while (!peek('}')) {
      std::string key;
      if (!string(&key)) return fail("expected a quoted key", error);
      skip();
      if (!eat(':')) return fail("expected ':' after key '" + key + "'", error);
      skip();
      HeaderValue v;
      if (peek('\'') || peek('"')) {
        v.kind = HeaderValue::Str;
        if (!string(&v.s)) return fail("unterminated string", error);
      } else if (word("True")) {
        v.kind = HeaderValue::Bool;
        v.b = true;
      } else if (word("False")) {
        v.kind = HeaderValue::Bool;
      } else if (eat('(')) {
        v.kind = HeaderValue::Tuple;
        if (!tuple(&v.ints, error)) return false;
      } else {
        return fail("unsupported value for key '" + key + "'", error);
      }
      if (out->count(key)) return fail("duplicate key '" + key + "'", error);
      (*out)[key] = std::move(v);
      skip();
      if (eat(',')) {
        skip();
        continue;
      }
      if (!peek('}')) return fail("expected ',' or '}' in header", error);
    }
    eat('}');
    skip();
    if (pos_ != t_.size()) return fail("trailing characters after the header dict", error);
    return true;
  }

 private:
  bool fail(const std::string& what, std::string* error) {
    *error = "malformed .npy header at offset " + std::to_string(pos_) + ": " + what;
    return false;
  }
  void skip() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r'))
      ++pos_;
  }
  bool peek(char c) const { return pos_ < t_.size() && t_[pos_] == c; }
  bool eat(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  bool word(std::string_view w) {
    if (t_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  bool string(std::string* out) {
    if (!(peek('\'') || peek('"'))) return false;
    char q = t_[pos_++];
    while (pos_ < t_.size() && t_[pos_] != q) {
      if (t_[pos_] == '\\') return false;  // NumPy never escapes in these headers
      out->push_back(t_[pos_++]);
    }
    return eat(q);
  }
  bool tuple(std::vector<uint64_t>* out, std::string* error) {
    skip();
    while (!peek(')')) {
      if (pos_ >= t_.size() || t_[pos_] < '0' || t_[pos_] > '9') return fail("expected an integer in shape", error);
      uint64_t v = 0;
      while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9') {
        if (v > (uint64_t(1) << 56)) return fail("shape dimension too large", error);
        v = v * 10 + uint64_t(t_[pos_++] - '0');
      }
      // NumPy writes Python 2 longs as "3L" in old files.
      if (peek('L')) ++pos_;
      if (out->size() >= kMaxRank) return fail("more than 32 dimensions", error);
      out->push_back(v);
      skip();
      if (eat(',')) {
        skip();
        continue;
      }
      if (!peek(')')) return fail("expected ',' or ')' in shape", error);
    }
    eat(')');
    return true;
  }

  std::string_view t_;
  size_t pos_ = 0;
};

// Maps a descr ("<f4") to a dtype; sets *swap for big-endian data.
bool dtype_from_descr(const std::string& d, int32_t* out, bool* swap) {
  if (d.size() != 3) return false;
  char order = d[0], kind = d[1], size = d[2];
  if (order != '<' && order != '>' && order != '|' && order != '=') return false;
  *swap = order == '>' && size != '1';
  struct Row { char kind, size; int32_t dtype; };
  static const Row rows[] = {
      {'f', '2', TRI_DTYPE_F16}, {'f', '4', TRI_DTYPE_F32}, {'f', '8', TRI_DTYPE_F64}, {'i', '1', TRI_DTYPE_I8},
      {'i', '2', TRI_DTYPE_I16}, {'i', '4', TRI_DTYPE_I32}, {'i', '8', TRI_DTYPE_I64}, {'u', '1', TRI_DTYPE_I8},
      {'u', '2', TRI_DTYPE_I16}, {'u', '4', TRI_DTYPE_I32}, {'u', '8', TRI_DTYPE_I64}, {'b', '1', TRI_DTYPE_I1},
  };
  for (const Row& r : rows) {
    if (r.kind == kind && r.size == size) {
      *out = r.dtype;
      return true;
    }
  }
  return false;
}

const char* descr_of(int32_t dtype) {
  switch (dtype) {
    case TRI_DTYPE_I1: return "|b1";
    case TRI_DTYPE_I8: return "|i1";
    case TRI_DTYPE_I16: return "<i2";
    case TRI_DTYPE_I32: return "<i4";
    case TRI_DTYPE_I64: return "<i8";
    case TRI_DTYPE_F16: return "<f2";
    case TRI_DTYPE_F64: return "<f8";
    default: return "<f4";  // f32, and bf16/f8 widened exactly
  }
}

}  // namespace

bool npy_parse(const void* data, size_t size, HostBuffer* out, std::string* error) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (size < kMagicLen + 2 || std::memcmp(p, kMagic, kMagicLen) != 0) {
    *error = "not a .npy file: bad magic";
    return false;
  }
  int major = p[6], minor = p[7];
  size_t header_len, header_start;
  if (major == 1) {
    if (size < 10) {
      *error = "truncated .npy file: no header length";
      return false;
    }
    header_len = size_t(p[8]) | size_t(p[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) {
      *error = "truncated .npy file: no header length";
      return false;
    }
    header_len = size_t(p[8]) | size_t(p[9]) << 8 | size_t(p[10]) << 16 | size_t(p[11]) << 24;
    header_start = 12;
  } else {
    *error = "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor);
    return false;
  }
  if (header_len > size - header_start) {
    *error = "truncated .npy file: header of " + std::to_string(header_len) + " bytes, file has " +
             std::to_string(size - header_start) + " after the preamble";
    return false;
  }
  std::string_view header(reinterpret_cast<const char*>(p + header_start), header_len);
  for (char c : header) {
    if (c == '\0') {
      *error = "malformed .npy header: NUL byte";
      return false;
    }
  }
  std::map<std::string, HeaderValue> dict;
  if (!HeaderParser(header).parse(&dict, error)) return false;
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    if (!dict.count(key)) {
      *error = std::string("malformed .npy header: no '") + key + "' key";
      return false;
    }
  }
  if (dict.size() != 3) {
    *error = "malformed .npy header: unexpected keys (expected descr, fortran_order, shape)";
    return false;
  }
  const HeaderValue& descr = dict["descr"];
  const HeaderValue& fortran = dict["fortran_order"];
  const HeaderValue& shape = dict["shape"];
  if (descr.kind != HeaderValue::Str || fortran.kind != HeaderValue::Bool || shape.kind != HeaderValue::Tuple) {
    *error = "malformed .npy header: descr must be a string, fortran_order a bool, shape a tuple";
    return false;
  }
  int32_t dtype;
  bool swap = false;
  if (!dtype_from_descr(descr.s, &dtype, &swap)) {
    *error = "unsupported .npy dtype '" + descr.s + "' (supported: <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1)";
    return false;
  }
  const size_t elem = dtype_bytes(dtype);
  const size_t avail = size - header_start - header_len;
  uint64_t count = 1;
  bool empty = false;
  for (uint64_t d : shape.ints) empty = empty || d == 0;
  for (uint64_t d : shape.ints) {
    if (empty) {
      count = 0;
      break;
    }
    if (count > avail / d) {
      // Without this, a huge shape would ask for more memory than the file can ever fill.
      count = UINT64_MAX;
      break;
    }
    count *= d;
  }
  if (count == UINT64_MAX || count * elem != avail) {
    *error = "malformed .npy file: shape " + [&] {
      std::string s = "(";
      for (size_t i = 0; i < shape.ints.size(); ++i) s += (i ? ", " : "") + std::to_string(shape.ints[i]);
      return s + ")";
    }() + " of " + descr.s + " needs " + (count == UINT64_MAX ? std::string("more") : std::to_string(count * elem)) +
             " data bytes, the file has " + std::to_string(avail);
    return false;
  }
  std::vector<int64_t> dims(shape.ints.begin(), shape.ints.end());
  HostBuffer buf(dtype, dims);
  const unsigned char* src = p + header_start + header_len;
  auto read_elem = [&](size_t i) {
    uint64_t v = 0;
    for (size_t b = 0; b < elem; ++b) {
      size_t byte = swap ? elem - 1 - b : b;
      v |= uint64_t(src[i * elem + byte]) << (8 * b);
    }
    if (dtype == TRI_DTYPE_I1) v = v != 0;
    return v;
  };
  if (!fortran.b || dims.size() < 2) {
    for (size_t i = 0; i < count; ++i) buf.set(i, read_elem(i));
  } else {
    // Column-major in the file: walk row-major indices and find each one's place there.
    std::vector<int64_t> idx(dims.size(), 0);
    for (size_t i = 0; i < count; ++i) {
      size_t f = 0, stride = 1;
      for (size_t a = 0; a < dims.size(); ++a) {
        f += idx[a] * stride;
        stride *= dims[a];
      }
      buf.set(i, read_elem(f));
      for (size_t a = dims.size(); a-- > 0;) {
        if (++idx[a] < dims[a]) break;
        idx[a] = 0;
      }
    }
  }
  *out = std::move(buf);
  return true;
}

std::string npy_serialize(const HostBuffer& b) {
  int32_t dtype = b.dtype();
  bool widen = dtype == TRI_DTYPE_BF16 || dtype == TRI_DTYPE_F8E4M3 || dtype == TRI_DTYPE_F8E5M2;
  std::string header = std::string("{'descr': '") + descr_of(dtype) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < b.shape().size(); ++i) header += (i ? ", " : "") + std::to_string(b.shape()[i]);
  if (b.shape().size() == 1) header += ",";
  header += "), }";
  // Pad with spaces so that the data starts on a 64-byte boundary, as NumPy does.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const int out_elem = widen ? 4 : dtype_bytes(dtype);
  for (size_t i = 0; i < b.count(); ++i) {
    uint64_t v = b.get(i);
    if (widen) v = double_to_float_bits(TRI_DTYPE_F32, float_bits_to_double(dtype, v));
    for (int k = 0; k < out_elem; ++k) out += static_cast<char>((v >> (8 * k)) & 0xff);
  }
  return out;
}

bool npy_read_file(const std::string& path, HostBuffer* out, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  std::string bytes;
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) bytes.append(chunk, n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) {
    *error = path + ": read error";
    return false;
  }
  if (!npy_parse(bytes.data(), bytes.size(), out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

bool npy_write_file(const std::string& path, const HostBuffer& buffer, std::string* error) {
  std::string bytes = npy_serialize(buffer);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) *error = path + ": write error";
  return ok;
}

}  // namespace tri_tool
