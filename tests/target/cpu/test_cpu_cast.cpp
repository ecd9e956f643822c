// Casts of the CPU backend between every pair of numeric types, against float_ref.h and exact
// long double values: int->int (trunc, zext, sext), int->float correctly rounded (including
// i64 -> bf16/f16/f8, where going through f32 or f64 would round twice), saturating float->int
// (NaN gives 0), float->float with nearest-even and toward-zero rounding (between formats of one
// width there is no cast, only bitcasts), and bitcasts that keep
// every bit (NaN payloads included).
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "float_ref.h"
#include "ir_build.h"
#include "test_main.h"

using namespace tri_test;

namespace {

const Scalar kAll[] = {Scalar::I1,  Scalar::I8,   Scalar::I16, Scalar::I32,    Scalar::I64,   Scalar::F16,
                       Scalar::BF16, Scalar::F32, Scalar::F64, Scalar::F8E4M3, Scalar::F8E5M2};

int width(Scalar s) { return tri::ir::scalar_bits(s); }
int bytes(Scalar s) { return s == Scalar::I1 ? 1 : width(s) / 8; }
bool is_f(Scalar s) { return tri::ir::is_float(s); }
bool small(Scalar s) { return s == Scalar::F16 || s == Scalar::BF16 || s == Scalar::F8E4M3 || s == Scalar::F8E5M2; }

struct Cast {
  Opcode code;
  Scalar to;
  bool rtz = false;
};

std::vector<Cast> casts_from(Scalar from) {
  std::vector<Cast> out;
  for (Scalar to : kAll) {
    if (to == from) continue;
    if (!is_f(from) && !is_f(to)) {
      if (width(to) < width(from)) out.push_back({Opcode::Trunc, to});
      else if (width(to) > width(from)) {
        out.push_back({Opcode::ZExt, to});
        out.push_back({Opcode::SExt, to});
      }
    } else if (!is_f(from) && is_f(to)) {
      out.push_back({Opcode::SIToFP, to});
      out.push_back({Opcode::UIToFP, to});
    } else if (is_f(from) && !is_f(to)) {
      if (to == Scalar::I1) continue;
      out.push_back({Opcode::FPToSI, to});
      out.push_back({Opcode::FPToUI, to});
    } else if (width(to) > width(from)) {
      out.push_back({Opcode::FPExt, to});
    } else if (width(to) < width(from)) {
      out.push_back({Opcode::FPTrunc, to});
      out.push_back({Opcode::FPTrunc, to, true});
    }
    if (width(to) == width(from) && to != Scalar::I1 && from != Scalar::I1) out.push_back({Opcode::Bitcast, to});
  }
  return out;
}

// Input values of type `s` as raw bits.
std::vector<uint64_t> inputs(Scalar s, int n) {
  std::vector<uint64_t> v;
  std::mt19937_64 rng(width(s) * 31 + int(s));
  if (!is_f(s)) {
    int w = width(s);
    uint64_t m = w == 64 ? ~0ull : (1ull << w) - 1;
    for (uint64_t x : {0ull, 1ull, ~0ull, 2ull, 3ull, 0x7full, 0x80ull, 0xffull, 0x7fffull, 0x8000ull, 0x7fffffffull,
                       0x80000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull, (1ull << 53) + 1, (1ull << 24) + 1,
                       0x1000001ull, 0x1010001ull, 65520ull, 65519ull, 464ull, 0x7ffff000ull})
      v.push_back(x & m);
    while (int(v.size()) < n) {
      uint64_t x = rng();
      x >>= rng() % 64;
      v.push_back((rng() & 1 ? x : ~x) & m);
    }
  } else if (small(s)) {
    uint64_t m = (1ull << width(s)) - 1;
    for (uint64_t c = 0; c <= m && int(v.size()) < n / 2; ++c) v.push_back(c);
    while (int(v.size()) < n) v.push_back(rng() & m);
    if (width(s) == 16) for (uint64_t c : {0x7c00ull, 0xfc00ull, 0x7c01ull, 0x7e00ull, 0x7f80ull, 0xff80ull, 0x7fc0ull, 0x7f81ull, 0x7bffull, 0x0001ull, 0x8001ull}) v.push_back(c);
  } else {
    std::vector<long double> vals = {0.0L, -0.0L, 1.0L, -1.0L, 0.5L, 1.5L, 2.5L, -2.5L, 65504.0L, 65519.0L, 65520.0L,
                                     65535.0L, 448.0L, 463.0L, 464.0L, 465.0L, 480.0L, 57344.0L, 61439.0L, 61440.0L,
                                     1e-8L, 5.9604644775390625e-8L, 2.98e-8L, 2.9802322387695312e-8L, 1e-40L, -1e-40L,
                                     FLT_MAX, -FLT_MAX, FLT_MIN, 3.4028235677973366e38L, 1e39L, -1e39L, 1e300L,
                                     INFINITY, -INFINITY, NAN, 127.5L, 128.0L, 255.5L, 256.0L, -128.5L, -129.0L,
                                     32767.5L, 2147483647.0L, 2147483648.0L, -2147483649.0L, 4294967296.0L,
                                     9.3e18L, 1.9e19L, -9.3e18L, 1.0000001L, 1.00048828125L, 1.000732421875L,
                                     0.0009765625L, 9.18354961579912115600575419704879435795832466228193376178712270530013483949005603790283203125e-41L};
    for (long double x : vals) v.push_back(s == Scalar::F32 ? bits_f32(float(x)) : bits_f64(double(x)));
    // Values on and beside the rounding boundaries of the small formats.
    for (Scalar t : {Scalar::F16, Scalar::BF16, Scalar::F8E4M3, Scalar::F8E5M2}) {
      uint32_t mx = ref_max_code(t);
      for (int k = 0; k < 40; ++k) {
        uint32_t c = rng() % mx;
        long double mid = (ref_decode(t, c) + ref_decode(t, c + 1)) / 2;
        for (long double x : {mid, -mid}) {
          if (s == Scalar::F32) {
            float f = float(x);
            v.push_back(bits_f32(f));
            v.push_back(bits_f32(std::nextafterf(f, INFINITY)));
            v.push_back(bits_f32(std::nextafterf(f, -INFINITY)));
          } else {
            double d = double(x);
            v.push_back(bits_f64(d));
            v.push_back(bits_f64(std::nextafter(d, INFINITY)));
          }
        }
      }
    }
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    while (int(v.size()) < n) {
      double x = u(rng) * std::pow(10.0, double(int(rng() % 24) - 12));
      v.push_back(s == Scalar::F32 ? bits_f32(float(x)) : bits_f64(x));
    }
  }
  v.resize(n);
  return v;
}

// The value of raw bits of type s, exactly (NaN for NaN).
long double value_of(Scalar s, uint64_t b, bool is_signed = true) {
  switch (s) {
    case Scalar::F32: return f32_bits(uint32_t(b));
    case Scalar::F64: return f64_bits(b);
    case Scalar::F16: case Scalar::BF16: case Scalar::F8E4M3: case Scalar::F8E5M2: return ref_decode(s, uint32_t(b));
    default: {
      int w = width(s);
      if (!is_signed || w == 64) return is_signed ? (long double)int64_t(b) : (long double)b;
      int64_t x = int64_t(b << (64 - w)) >> (64 - w);
      return (long double)x;
    }
  }
}

uint64_t mask_of(Scalar s) { int w = width(s); return w == 64 ? ~0ull : (1ull << w) - 1; }

// Expected bits of converting exact value x to float type t; returns false when any NaN will do.
bool float_bits(Scalar t, long double x, bool rtz, uint64_t* out) {
  if (std::isnan(x)) return false;
  if (small(t)) {
    *out = ref_encode(t, x, rtz);
    return true;
  }
  if (t == Scalar::F32) {
    float r = float(x);
    if (rtz && std::fabs((long double)r) > std::fabs(x)) r = std::isinf(r) ? std::copysign(FLT_MAX, r) : std::nextafterf(r, 0.0f);
    *out = bits_f32(r);
  } else {
    double r = double(x);
    if (rtz && std::fabs((long double)r) > std::fabs(x)) r = std::isinf(r) ? std::copysign(DBL_MAX, r) : std::nextafter(r, 0.0);
    *out = bits_f64(r);
  }
  return true;
}

bool is_nan_bits(Scalar t, uint64_t b) {
  if (small(t)) return ref_is_nan(t, uint32_t(b));
  return t == Scalar::F32 ? std::isnan(f32_bits(uint32_t(b))) : std::isnan(f64_bits(b));
}

void run_from(Scalar from) {
  const int N = 512;
  std::vector<Cast> casts = casts_from(from);
  Mod md;
  Fn f(&md.m, "casts", true);
  ValueId in = f.param(md.p(from));
  std::vector<ValueId> outs;
  for (const Cast& c : casts) outs.push_back(f.param(md.p(c.to)));
  ValueId offs = f.arange(N);
  ValueId v = f.load(f.addptr(f.splat(in, md.blk({N}, md.p(from))), offs));
  for (size_t i = 0; i < casts.size(); ++i) {
    std::vector<Attr> a;
    if (casts[i].code == Opcode::FPTrunc) a = {enum_attr(Opcode::FPTrunc, "rounding", casts[i].rtz ? "rtz" : "rtne")};
    ValueId r = f.cast(casts[i].code, v, casts[i].to, a);
    f.store(f.addptr(f.splat(outs[i], md.blk({N}, md.p(casts[i].to))), offs), r);
  }
  f.ret();
  auto k = compile_or_die(md.m, "casts");
  assert_non_null(k.get());
  std::vector<uint64_t> iv = inputs(from, N);
  std::vector<uint8_t> ib(N * bytes(from));
  for (int i = 0; i < N; ++i) std::memcpy(&ib[i * bytes(from)], &iv[i], bytes(from));
  std::vector<std::vector<uint8_t>> ob(casts.size());
  std::vector<tri::ArgValue> args = {ptr_arg(ib.data())};
  for (size_t i = 0; i < casts.size(); ++i) {
    ob[i].assign(N * bytes(casts[i].to), 0xcd);
    args.push_back(ptr_arg(ob[i].data()));
  }
  assert_true(k->run(tri::Grid{}, args.data(), args.size(), nullptr, {}).is_ok());
  int bad = 0;
  for (size_t ci = 0; ci < casts.size(); ++ci) {
    const Cast& c = casts[ci];
    for (int i = 0; i < N; ++i) {
      uint64_t got = 0;
      std::memcpy(&got, &ob[ci][i * bytes(c.to)], bytes(c.to));
      uint64_t x = iv[i];
      uint64_t want = 0;
      bool any_nan = false;
      switch (c.code) {
        case Opcode::Trunc: want = x & mask_of(c.to); break;
        case Opcode::ZExt: want = x; break;
        case Opcode::SExt: want = uint64_t(int64_t(value_of(from, x))) & mask_of(c.to); break;
        case Opcode::SIToFP: case Opcode::UIToFP: {
          long double v0 = value_of(from, x, c.code == Opcode::SIToFP);
          if (from == Scalar::I1) v0 = (x & 1) ? (c.code == Opcode::SIToFP ? -1.0L : 1.0L) : 0.0L;
          float_bits(c.to, v0, false, &want);
          break;
        }
        case Opcode::FPToSI: case Opcode::FPToUI: {
          long double v0 = value_of(from, x);
          int w = width(c.to);
          long double lo = c.code == Opcode::FPToSI ? -std::ldexp(1.0L, w - 1) : 0.0L;
          long double hi = c.code == Opcode::FPToSI ? std::ldexp(1.0L, w - 1) - 1 : std::ldexp(1.0L, w) - 1;
          long double t = std::isnan(v0) ? 0 : std::trunc(v0);
          if (t < lo) t = lo;
          if (t > hi) t = hi;
          want = (c.code == Opcode::FPToSI ? uint64_t(int64_t(t)) : uint64_t(t)) & mask_of(c.to);
          break;
        }
        case Opcode::FPExt: case Opcode::FPTrunc:
          any_nan = !float_bits(c.to, value_of(from, x), c.rtz, &want);
          break;
        case Opcode::Bitcast: want = x; break;
        default: break;
      }
      bool ok = any_nan ? is_nan_bits(c.to, got) : got == want;
      if (!ok && bad++ < 12)
        std::fprintf(stderr, "%s %s%s -> %s: 0x%llx gave 0x%llx, want 0x%llx\n", tri::ir::op_info(c.code).name.c_str(),
                     tri::ir::scalar_name(from), c.rtz ? " (rtz)" : "", tri::ir::scalar_name(c.to),
                     (unsigned long long)x, (unsigned long long)got, (unsigned long long)want);
    }
  }
  assert_int_equal(bad, 0);
}

}  // namespace

static void casts_from_ints(void** state) {
  for (Scalar s : {Scalar::I1, Scalar::I8, Scalar::I16, Scalar::I32, Scalar::I64}) run_from(s);
}
static void casts_from_wide_floats(void** state) {
  for (Scalar s : {Scalar::F32, Scalar::F64}) run_from(s);
}
static void casts_from_small_floats(void** state) {
  for (Scalar s : {Scalar::F16, Scalar::BF16, Scalar::F8E4M3, Scalar::F8E5M2}) run_from(s);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(casts_from_ints),
      cmocka_unit_test(casts_from_wide_floats),
      cmocka_unit_test(casts_from_small_floats),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
