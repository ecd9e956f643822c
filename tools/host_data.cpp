// Element types, bit patterns, conversions and host buffers for the `tri` command and the
// conformance suite (see host_data.h). The narrow float formats are handled by one generic
// encoder/decoder driven by exponent and mantissa widths, written from the IEEE rules rather
// than copied from Tri's src/base/fp.cpp, so that the two can check each other.
#include "host_data.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tri_tool {

namespace {

const DtypeInfo kInfo[kNumDtypes] = {
    {"i1", 1, 1, false, 0, 0, false},       {"i8", 8, 1, false, 0, 0, false},
    {"i16", 16, 2, false, 0, 0, false},     {"i32", 32, 4, false, 0, 0, false},
    {"i64", 64, 8, false, 0, 0, false},     {"f16", 16, 2, true, 5, 10, true},
    {"bf16", 16, 2, true, 8, 7, true},      {"f32", 32, 4, true, 8, 23, true},
    {"f64", 64, 8, true, 11, 52, true},     {"f8e4m3", 8, 1, true, 4, 3, false},
    {"f8e5m2", 8, 1, true, 5, 2, true},
};

// Largest finite value of a float format.
double max_finite(const DtypeInfo& d) {
  int bias = (1 << (d.exp_bits - 1)) - 1;
  if (d.ieee_special) {
    int emax = (1 << d.exp_bits) - 2 - bias;
    return (2.0 - std::ldexp(1.0, -d.man_bits)) * std::ldexp(1.0, emax);
  }
  // No infinities: the top exponent holds numbers, except all-ones mantissa, which is NaN.
  int emax = (1 << d.exp_bits) - 1 - bias;
  return (2.0 - std::ldexp(1.0, 1 - d.man_bits)) * std::ldexp(1.0, emax);
}

uint64_t quiet_nan_bits(const DtypeInfo& d) {
  uint64_t exp_all = (uint64_t(1) << d.exp_bits) - 1;
  if (!d.ieee_special) return (exp_all << d.man_bits) | ((uint64_t(1) << d.man_bits) - 1);
  return (exp_all << d.man_bits) | (uint64_t(1) << (d.man_bits - 1));
}

uint64_t encode_narrow(const DtypeInfo& d, double v) {
  const uint64_t sign = std::signbit(v) ? uint64_t(1) << (d.exp_bits + d.man_bits) : 0;
  if (std::isnan(v)) return sign | quiet_nan_bits(d);
  const int bias = (1 << (d.exp_bits - 1)) - 1;
  const uint64_t exp_all = (uint64_t(1) << d.exp_bits) - 1;
  const uint64_t inf_bits = d.ieee_special ? (exp_all << d.man_bits) : quiet_nan_bits(d);
  double a = std::fabs(v);
  if (std::isinf(a)) return sign | inf_bits;
  const int emin = 1 - bias;
  int e = a == 0 ? emin : std::max(std::ilogb(a), emin);
  double q = std::ldexp(1.0, e - d.man_bits);  // the spacing of the format's values near a
  double r = std::nearbyint(a / q) * q;        // ties to even (the default rounding mode)
  if (r > max_finite(d)) return sign | inf_bits;
  if (r < std::ldexp(1.0, emin)) {
    return sign | static_cast<uint64_t>(r / std::ldexp(1.0, emin - d.man_bits));
  }
  int er = std::ilogb(r);
  uint64_t mant = static_cast<uint64_t>(r / std::ldexp(1.0, er - d.man_bits)) - (uint64_t(1) << d.man_bits);
  return sign | (uint64_t(er + bias) << d.man_bits) | mant;
}

double decode_narrow(const DtypeInfo& d, uint64_t bits) {
  const int bias = (1 << (d.exp_bits - 1)) - 1;
  const uint64_t exp_all = (uint64_t(1) << d.exp_bits) - 1;
  const uint64_t man_all = (uint64_t(1) << d.man_bits) - 1;
  bool neg = (bits >> (d.exp_bits + d.man_bits)) & 1;
  uint64_t exp = (bits >> d.man_bits) & exp_all;
  uint64_t man = bits & man_all;
  double v;
  if (d.ieee_special && exp == exp_all) {
    v = man ? NAN : INFINITY;
  } else if (!d.ieee_special && exp == exp_all && man == man_all) {
    v = NAN;
  } else if (exp == 0) {
    v = std::ldexp(double(man), 1 - bias - d.man_bits);
  } else {
    v = std::ldexp(double(man | (man_all + 1)), int(exp) - bias - d.man_bits);
  }
  return neg ? -v : v;
}

}  // namespace

const DtypeInfo& dtype_info(int32_t dtype) {
  assert(dtype >= 0 && dtype < kNumDtypes && "invalid TRI_DTYPE");
  return kInfo[dtype];
}

bool dtype_from_name(std::string_view name, int32_t* out) {
  for (int i = 0; i < kNumDtypes; ++i) {
    if (name == kInfo[i].name) {
      *out = i;
      return true;
    }
  }
  return false;
}

uint64_t bits_mask(int32_t dtype) {
  int bits = dtype_info(dtype).bits;
  return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
}

uint64_t load_bits(const void* base, int32_t dtype, size_t index) {
  const auto* p = static_cast<const unsigned char*>(base) + index * dtype_bytes(dtype);
  switch (dtype_bytes(dtype)) {
    case 1: return *p;
    case 2: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { uint64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

void store_bits(void* base, int32_t dtype, size_t index, uint64_t bits) {
  auto* p = static_cast<unsigned char*>(base) + index * dtype_bytes(dtype);
  switch (dtype_bytes(dtype)) {
    case 1: *p = static_cast<unsigned char>(bits); break;
    case 2: { uint16_t v = static_cast<uint16_t>(bits); std::memcpy(p, &v, 2); break; }
    case 4: { uint32_t v = static_cast<uint32_t>(bits); std::memcpy(p, &v, 4); break; }
    default: std::memcpy(p, &bits, 8); break;
  }
}

int64_t bits_to_signed(int32_t dtype, uint64_t bits) {
  int w = dtype_info(dtype).bits;
  if (dtype == TRI_DTYPE_I1) return (bits & 1) ? -1 : 0;
  if (w >= 64) return static_cast<int64_t>(bits);
  uint64_t m = (uint64_t(1) << w) - 1;
  bits &= m;
  if (bits >> (w - 1)) bits |= ~m;
  return static_cast<int64_t>(bits);
}

uint64_t bits_to_unsigned(int32_t dtype, uint64_t bits) { return bits & bits_mask(dtype); }

double float_bits_to_double(int32_t dtype, uint64_t bits) {
  if (dtype == TRI_DTYPE_F32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  if (dtype == TRI_DTYPE_F64) {
    double f;
    std::memcpy(&f, &bits, 8);
    return f;
  }
  return decode_narrow(dtype_info(dtype), bits & bits_mask(dtype));
}

uint64_t double_to_float_bits(int32_t dtype, double v) {
  if (dtype == TRI_DTYPE_F32) {
    float f = static_cast<float>(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  if (dtype == TRI_DTYPE_F64) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }
  return encode_narrow(dtype_info(dtype), v);
}

bool float_bits_is_nan(int32_t dtype, uint64_t bits) { return std::isnan(float_bits_to_double(dtype, bits)); }
bool float_bits_is_zero(int32_t dtype, uint64_t bits) { return float_bits_to_double(dtype, bits) == 0.0; }
bool float_bits_negative(int32_t dtype, uint64_t bits) {
  int w = dtype_info(dtype).bits;
  return (bits >> (w - 1)) & 1;
}

uint64_t ulp_distance(int32_t dtype, uint64_t a, uint64_t b) {
  int w = dtype_info(dtype).bits;
  uint64_t mag_mask = w >= 64 ? ~(uint64_t(1) << 63) : (uint64_t(1) << (w - 1)) - 1;
  // Map to a line where consecutive representable values are consecutive integers.
  auto key = [&](uint64_t x) -> __int128 {
    __int128 mag = x & mag_mask;
    return float_bits_negative(dtype, x) ? -mag : mag;
  };
  __int128 d = key(a) - key(b);
  if (d < 0) d = -d;
  return d > __int128(~uint64_t(0)) ? ~uint64_t(0) : static_cast<uint64_t>(d);
}

double float_epsilon(int32_t dtype) { return std::ldexp(1.0, -dtype_info(dtype).man_bits); }

std::string format_bits(int32_t dtype, uint64_t bits) {
  char buf[64];
  if (!dtype_is_float(dtype)) {
    if (dtype == TRI_DTYPE_I1) return (bits & 1) ? "1" : "0";
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(bits_to_signed(dtype, bits)));
    return buf;
  }
  double v = float_bits_to_double(dtype, bits);
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  // The shortest decimal that reads back to the same bits in this format.
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (double_to_float_bits(dtype, std::strtod(buf, nullptr)) == (bits & bits_mask(dtype))) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

bool parse_element(std::string_view text, int32_t dtype, uint64_t* out_bits, std::string* error) {
  std::string s(text);
  auto fail = [&](const char* why) {
    *error = "'" + s + "' " + why + " " + dtype_name(dtype);
    return false;
  };
  if (s.empty()) return fail("is not a value of type");
  if (dtype_is_float(dtype)) {
    if (s == "true" || s == "false") return fail("is not a value of type");
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0') return fail("is not a value of type");
    *out_bits = double_to_float_bits(dtype, v);
    return true;
  }
  if (s == "true") { *out_bits = 1; return true; }
  if (s == "false") { *out_bits = 0; return true; }
  bool neg = s[0] == '-';
  std::string digits = neg || s[0] == '+' ? s.substr(1) : s;
  if (digits.empty() || digits[0] == '-' || digits[0] == '+') return fail("is not a value of type");
  errno = 0;
  char* end = nullptr;
  bool hex = digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  const char* num = digits.c_str() + (hex ? 2 : 0);
  if (!(hex ? std::isxdigit(static_cast<unsigned char>(*num)) : std::isdigit(static_cast<unsigned char>(*num))))
    return fail("is not a value of type");
  unsigned long long mag = std::strtoull(num, &end, hex ? 16 : 10);
  if (*end != '\0') return fail("is not a value of type");
  if (errno == ERANGE) return fail("is out of range of");
  int w = dtype_info(dtype).bits;
  if (dtype == TRI_DTYPE_I1) {
    if (mag > 1) return fail("is out of range of");
    *out_bits = mag;  // -1 and 1 both mean true
    return true;
  }
  if (neg) {
    unsigned long long lim = uint64_t(1) << (w - 1);  // |INT_MIN|
    if (mag > lim) return fail("is out of range of");
    *out_bits = (0 - static_cast<uint64_t>(mag)) & bits_mask(dtype);
  } else {
    if (w < 64 && mag > bits_mask(dtype)) return fail("is out of range of");
    *out_bits = mag;
  }
  return true;
}

void HostBuffer::Free::operator()(void* p) const { std::free(p); }

HostBuffer::HostBuffer(int32_t dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  count_ = 1;
  for (int64_t d : shape_) count_ *= static_cast<size_t>(d);
  alloc_ = (byte_size() + 63) / 64 * 64;
  if (alloc_ == 0) alloc_ = 64;
  void* p = std::aligned_alloc(64, alloc_);
  assert(p && "out of host memory");
  std::memset(p, 0, alloc_);
  data_.reset(p);
}

HostBuffer::HostBuffer(const HostBuffer& o) {
  if (!o.data_) return;  // a default-constructed buffer has no memory to copy
  *this = HostBuffer(o.dtype_, o.shape_);
  std::memcpy(data_.get(), o.data_.get(), alloc_);
}

HostBuffer& HostBuffer::operator=(const HostBuffer& o) {
  if (this != &o) *this = HostBuffer(o);
  return *this;
}

std::string describe_shape(int32_t dtype, const std::vector<int64_t>& shape) {
  std::string s = std::string(dtype_name(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string last_error() {
  size_t n = tri_last_error_message(nullptr, 0);
  std::string s(n, '\0');
  tri_last_error_message(s.data(), n);
  if (!s.empty()) s.pop_back();
  // The library names its C functions ("tri_compile_options_set_num_warps: 3 warps; ..."); a
  // command-line user did not call them, so the name goes (the caller names the flag instead),
  // and the one hint that points at a C function points at the command that does the same.
  size_t id = 0;
  while (id < s.size() && (std::isalnum(static_cast<unsigned char>(s[id])) || s[id] == '_')) ++id;
  if (s.compare(0, 4, "tri_") == 0 && s.compare(id, 2, ": ") == 0) s.erase(0, id + 2);
  const std::string arch_hint = "(tri_compile_options_set_arch, e.g. \"sm_90\")";
  if (size_t at = s.find(arch_hint); at != std::string::npos)
    s.replace(at, arch_hint.size(), "(`tri compile FILE --target sm_90` makes PTX without a GPU)");
  return s;
}

std::string first_lines(const std::string& message, int max_lines) {
  size_t pos = 0;
  for (int i = 0; i < max_lines; ++i) {
    pos = message.find('\n', pos);
    if (pos == std::string::npos) return message;
    ++pos;
  }
  size_t rest = 0;
  for (size_t i = pos; i < message.size(); ++i) rest += message[i] == '\n';
  if (message.back() != '\n') ++rest;
  return message.substr(0, pos) + "... (" + std::to_string(rest) + " more lines)";
}

}  // namespace tri_tool
