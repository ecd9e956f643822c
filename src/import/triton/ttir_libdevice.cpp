// libdevice calls in TTIR (`tt.extern_elementwise` with symbol "__nv_NAME", the functions of
// triton.language.extra.libdevice) and what each becomes in Tri's IR (docs/import.md has the
// table).
//
// A function with a Tri op becomes that op; one that Tri's ops compute exactly becomes them (the
// NaN and infinity tests, bit casts, round-half-even, float-to-integer conversions with each
// rounding, the integer bit functions popc/clz/ffs/brev by SWAR steps, signed high products,
// halving adds, ...); one whose result Tri cannot reproduce (directed rounding of arithmetic,
// special functions Tri's math library lacks) is an error naming it. The bodies of libdevice
// (libdevice.10.bc, which Triton's wheel carries) are the reference for each definition.
#include <cmath>
#include <cstring>

#include "import/triton/ttir_reader.h"

namespace tri::import {

using namespace tri::ir;

namespace {

enum class Ld {
  Op,          // one Tri op on the arguments (exp2 of f32 flushes, as __nv_exp2f does; flag 1: on
               // f32, approx=true, where libdevice is the approximate instruction in Triton's mode)
  MathCall,    // math_call[name]
  IsNan,       // i32 1 where NaN
  IsInf,       // i32 1 where +-inf
  IsFinite,    // i32 1 where neither NaN nor infinite
  SignBit,     // i32: the sign bit
  Bitcast,     // float_as_int and the like
  Rint,        // round half to even (rint, nearbyint)
  ToInt,       // float -> integer with a rounding (flag: 0 rn, 1 rz, 2 rd, 3 ru; +4 unsigned)
  IntToFloat,  // integer -> float, to nearest (flag 1: unsigned)
  FPTrunc,     // double -> float (flag 1: toward zero)
  HiInt,       // the high 32 bits of a double
  LoInt,       // the low 32 bits of a double
  HiLo,        // a double from its high and low 32 bits
  MulHi,       // signed high half of the double-width product
  Mul24,       // product of the low 24 bits (flag 1: unsigned)
  Sad,         // |a - b| + c (flag 1: unsigned)
  HAdd,        // floor((a + b) / 2) without overflow (flag 1: unsigned)
  RHAdd,       // ceil((a + b) / 2) without overflow (flag 1: unsigned)
  Popc,        // set bits (i32)
  Clz,         // leading zeros (i32)
  Ffs,         // 1 + index of the lowest set bit, 0 for 0 (i32)
  Brev,        // bits reversed
  Fdim,        // a - b where a > b (or NaN), else +0
  Saturate,    // clamped to [0, 1], NaN to 0
  Rcp,         // 1 / x, correctly rounded
  PowI,        // x to an integer power
  LLRint,      // rint, to i64
  LLRound,     // round half away from zero, to i64
};

struct LdEntry {
  const char* sym;  // without "__nv_"
  Ld kind;
  int arity;
  Opcode code = Opcode::Yield;  // Ld::Op
  const char* name = nullptr;   // Ld::MathCall
  int flag = 0;
};

const LdEntry kLibdevice[] = {
    // One Tri op (Tri's are at least as accurate as the approximations the fast_ ones name).
    {"expf", Ld::Op, 1, Opcode::Exp}, {"exp", Ld::Op, 1, Opcode::Exp},
    {"fast_expf", Ld::Op, 1, Opcode::Exp, nullptr, 1},
    {"exp2f", Ld::Op, 1, Opcode::Exp2}, {"exp2", Ld::Op, 1, Opcode::Exp2},
    {"logf", Ld::Op, 1, Opcode::Log}, {"log", Ld::Op, 1, Opcode::Log}, {"fast_logf", Ld::Op, 1, Opcode::Log},
    {"log2f", Ld::Op, 1, Opcode::Log2}, {"log2", Ld::Op, 1, Opcode::Log2}, {"fast_log2f", Ld::Op, 1, Opcode::Log2},
    {"sqrtf", Ld::Op, 1, Opcode::Sqrt, nullptr, 1}, {"sqrt", Ld::Op, 1, Opcode::Sqrt},
    {"fsqrt_rn", Ld::Op, 1, Opcode::Sqrt}, {"dsqrt_rn", Ld::Op, 1, Opcode::Sqrt},
    {"rsqrtf", Ld::Op, 1, Opcode::Rsqrt, nullptr, 1}, {"rsqrt", Ld::Op, 1, Opcode::Rsqrt},
    {"sinf", Ld::Op, 1, Opcode::Sin}, {"sin", Ld::Op, 1, Opcode::Sin}, {"fast_sinf", Ld::Op, 1, Opcode::Sin},
    {"cosf", Ld::Op, 1, Opcode::Cos}, {"cos", Ld::Op, 1, Opcode::Cos}, {"fast_cosf", Ld::Op, 1, Opcode::Cos},
    {"tanhf", Ld::Op, 1, Opcode::Tanh}, {"tanh", Ld::Op, 1, Opcode::Tanh},
    {"erff", Ld::Op, 1, Opcode::Erf}, {"erf", Ld::Op, 1, Opcode::Erf},
    {"floorf", Ld::Op, 1, Opcode::Floor}, {"floor", Ld::Op, 1, Opcode::Floor},
    {"ceilf", Ld::Op, 1, Opcode::Ceil}, {"ceil", Ld::Op, 1, Opcode::Ceil},
    {"fabsf", Ld::Op, 1, Opcode::Abs}, {"fabs", Ld::Op, 1, Opcode::Abs}, {"abs", Ld::Op, 1, Opcode::Abs},
    {"llabs", Ld::Op, 1, Opcode::Abs},
    {"powf", Ld::Op, 2, Opcode::Pow}, {"pow", Ld::Op, 2, Opcode::Pow}, {"fast_powf", Ld::Op, 2, Opcode::Pow},
    {"fmaf", Ld::Op, 3, Opcode::Fma}, {"fma", Ld::Op, 3, Opcode::Fma}, {"fmaf_rn", Ld::Op, 3, Opcode::Fma},
    {"fma_rn", Ld::Op, 3, Opcode::Fma},
    {"fdiv_rn", Ld::Op, 2, Opcode::FDiv}, {"ddiv_rn", Ld::Op, 2, Opcode::FDiv},
    {"fast_fdividef", Ld::Op, 2, Opcode::FDiv, nullptr, 1},
    {"fadd_rn", Ld::Op, 2, Opcode::Add}, {"dadd_rn", Ld::Op, 2, Opcode::Add},
    {"fsub_rn", Ld::Op, 2, Opcode::Sub}, {"dsub_rn", Ld::Op, 2, Opcode::Sub},
    {"fmul_rn", Ld::Op, 2, Opcode::Mul}, {"dmul_rn", Ld::Op, 2, Opcode::Mul},
    {"umulhi", Ld::Op, 2, Opcode::UMulHi}, {"umul64hi", Ld::Op, 2, Opcode::UMulHi},
    // Tri's math_call.
    {"expm1f", Ld::MathCall, 1, Opcode::Yield, "expm1"}, {"expm1", Ld::MathCall, 1, Opcode::Yield, "expm1"},
    {"log1pf", Ld::MathCall, 1, Opcode::Yield, "log1p"}, {"log1p", Ld::MathCall, 1, Opcode::Yield, "log1p"},
    {"log10f", Ld::MathCall, 1, Opcode::Yield, "log10"}, {"log10", Ld::MathCall, 1, Opcode::Yield, "log10"},
    {"fast_log10f", Ld::MathCall, 1, Opcode::Yield, "log10"},
    {"exp10f", Ld::MathCall, 1, Opcode::Yield, "exp10"}, {"exp10", Ld::MathCall, 1, Opcode::Yield, "exp10"},
    {"fast_exp10f", Ld::MathCall, 1, Opcode::Yield, "exp10"},
    {"cbrtf", Ld::MathCall, 1, Opcode::Yield, "cbrt"}, {"cbrt", Ld::MathCall, 1, Opcode::Yield, "cbrt"},
    {"sinhf", Ld::MathCall, 1, Opcode::Yield, "sinh"}, {"sinh", Ld::MathCall, 1, Opcode::Yield, "sinh"},
    {"coshf", Ld::MathCall, 1, Opcode::Yield, "cosh"}, {"cosh", Ld::MathCall, 1, Opcode::Yield, "cosh"},
    {"tanf", Ld::MathCall, 1, Opcode::Yield, "tan"}, {"tan", Ld::MathCall, 1, Opcode::Yield, "tan"},
    {"fast_tanf", Ld::MathCall, 1, Opcode::Yield, "tan"},
    {"asinf", Ld::MathCall, 1, Opcode::Yield, "asin"}, {"asin", Ld::MathCall, 1, Opcode::Yield, "asin"},
    {"acosf", Ld::MathCall, 1, Opcode::Yield, "acos"}, {"acos", Ld::MathCall, 1, Opcode::Yield, "acos"},
    {"atanf", Ld::MathCall, 1, Opcode::Yield, "atan"}, {"atan", Ld::MathCall, 1, Opcode::Yield, "atan"},
    {"asinhf", Ld::MathCall, 1, Opcode::Yield, "asinh"}, {"asinh", Ld::MathCall, 1, Opcode::Yield, "asinh"},
    {"acoshf", Ld::MathCall, 1, Opcode::Yield, "acosh"}, {"acosh", Ld::MathCall, 1, Opcode::Yield, "acosh"},
    {"atanhf", Ld::MathCall, 1, Opcode::Yield, "atanh"}, {"atanh", Ld::MathCall, 1, Opcode::Yield, "atanh"},
    {"erfcf", Ld::MathCall, 1, Opcode::Yield, "erfc"}, {"erfc", Ld::MathCall, 1, Opcode::Yield, "erfc"},
    {"lgammaf", Ld::MathCall, 1, Opcode::Yield, "lgamma"}, {"lgamma", Ld::MathCall, 1, Opcode::Yield, "lgamma"},
    {"tgammaf", Ld::MathCall, 1, Opcode::Yield, "tgamma"}, {"tgamma", Ld::MathCall, 1, Opcode::Yield, "tgamma"},
    {"roundf", Ld::MathCall, 1, Opcode::Yield, "round"}, {"round", Ld::MathCall, 1, Opcode::Yield, "round"},
    {"truncf", Ld::MathCall, 1, Opcode::Yield, "trunc"}, {"trunc", Ld::MathCall, 1, Opcode::Yield, "trunc"},
    {"atan2f", Ld::MathCall, 2, Opcode::Yield, "atan2"}, {"atan2", Ld::MathCall, 2, Opcode::Yield, "atan2"},
    {"hypotf", Ld::MathCall, 2, Opcode::Yield, "hypot"}, {"hypot", Ld::MathCall, 2, Opcode::Yield, "hypot"},
    {"fmodf", Ld::MathCall, 2, Opcode::Yield, "fmod"}, {"fmod", Ld::MathCall, 2, Opcode::Yield, "fmod"},
    {"copysignf", Ld::MathCall, 2, Opcode::Yield, "copysign"}, {"copysign", Ld::MathCall, 2, Opcode::Yield, "copysign"},
    // Compositions of Tri ops with libdevice's exact result.
    {"isnanf", Ld::IsNan, 1}, {"isnand", Ld::IsNan, 1}, {"isinff", Ld::IsInf, 1}, {"isinfd", Ld::IsInf, 1},
    {"finitef", Ld::IsFinite, 1}, {"isfinited", Ld::IsFinite, 1},
    {"signbitf", Ld::SignBit, 1}, {"signbitd", Ld::SignBit, 1},
    {"float_as_int", Ld::Bitcast, 1}, {"float_as_uint", Ld::Bitcast, 1}, {"int_as_float", Ld::Bitcast, 1},
    {"uint_as_float", Ld::Bitcast, 1}, {"double_as_longlong", Ld::Bitcast, 1}, {"longlong_as_double", Ld::Bitcast, 1},
    {"rintf", Ld::Rint, 1}, {"rint", Ld::Rint, 1}, {"nearbyintf", Ld::Rint, 1}, {"nearbyint", Ld::Rint, 1},
    {"llrintf", Ld::LLRint, 1}, {"llrint", Ld::LLRint, 1}, {"llroundf", Ld::LLRound, 1}, {"llround", Ld::LLRound, 1},
    {"float2int_rn", Ld::ToInt, 1, Opcode::Yield, nullptr, 0}, {"float2int_rz", Ld::ToInt, 1, Opcode::Yield, nullptr, 1},
    {"float2int_rd", Ld::ToInt, 1, Opcode::Yield, nullptr, 2}, {"float2int_ru", Ld::ToInt, 1, Opcode::Yield, nullptr, 3},
    {"float2uint_rn", Ld::ToInt, 1, Opcode::Yield, nullptr, 4}, {"float2uint_rz", Ld::ToInt, 1, Opcode::Yield, nullptr, 5},
    {"float2uint_rd", Ld::ToInt, 1, Opcode::Yield, nullptr, 6}, {"float2uint_ru", Ld::ToInt, 1, Opcode::Yield, nullptr, 7},
    {"float2ll_rn", Ld::ToInt, 1, Opcode::Yield, nullptr, 0}, {"float2ll_rz", Ld::ToInt, 1, Opcode::Yield, nullptr, 1},
    {"float2ll_rd", Ld::ToInt, 1, Opcode::Yield, nullptr, 2}, {"float2ll_ru", Ld::ToInt, 1, Opcode::Yield, nullptr, 3},
    {"float2ull_rn", Ld::ToInt, 1, Opcode::Yield, nullptr, 4}, {"float2ull_rz", Ld::ToInt, 1, Opcode::Yield, nullptr, 5},
    {"float2ull_rd", Ld::ToInt, 1, Opcode::Yield, nullptr, 6}, {"float2ull_ru", Ld::ToInt, 1, Opcode::Yield, nullptr, 7},
    {"double2int_rn", Ld::ToInt, 1, Opcode::Yield, nullptr, 0}, {"double2int_rz", Ld::ToInt, 1, Opcode::Yield, nullptr, 1},
    {"double2int_rd", Ld::ToInt, 1, Opcode::Yield, nullptr, 2}, {"double2int_ru", Ld::ToInt, 1, Opcode::Yield, nullptr, 3},
    {"double2uint_rn", Ld::ToInt, 1, Opcode::Yield, nullptr, 4},
    {"double2uint_rz", Ld::ToInt, 1, Opcode::Yield, nullptr, 5},
    {"double2uint_rd", Ld::ToInt, 1, Opcode::Yield, nullptr, 6},
    {"double2uint_ru", Ld::ToInt, 1, Opcode::Yield, nullptr, 7},
    {"double2ll_rn", Ld::ToInt, 1, Opcode::Yield, nullptr, 0}, {"double2ll_rz", Ld::ToInt, 1, Opcode::Yield, nullptr, 1},
    {"double2ll_rd", Ld::ToInt, 1, Opcode::Yield, nullptr, 2}, {"double2ll_ru", Ld::ToInt, 1, Opcode::Yield, nullptr, 3},
    {"double2ull_rn", Ld::ToInt, 1, Opcode::Yield, nullptr, 4}, {"double2ull_rz", Ld::ToInt, 1, Opcode::Yield, nullptr, 5},
    {"double2ull_rd", Ld::ToInt, 1, Opcode::Yield, nullptr, 6}, {"double2ull_ru", Ld::ToInt, 1, Opcode::Yield, nullptr, 7},
    {"int2float_rn", Ld::IntToFloat, 1}, {"ll2float_rn", Ld::IntToFloat, 1}, {"int2double_rn", Ld::IntToFloat, 1},
    {"ll2double_rn", Ld::IntToFloat, 1}, {"uint2float_rn", Ld::IntToFloat, 1, Opcode::Yield, nullptr, 1},
    {"ull2float_rn", Ld::IntToFloat, 1, Opcode::Yield, nullptr, 1},
    {"uint2double_rn", Ld::IntToFloat, 1, Opcode::Yield, nullptr, 1},
    {"ull2double_rn", Ld::IntToFloat, 1, Opcode::Yield, nullptr, 1},
    {"double2float_rn", Ld::FPTrunc, 1}, {"double2float_rz", Ld::FPTrunc, 1, Opcode::Yield, nullptr, 1},
    {"double2hiint", Ld::HiInt, 1}, {"double2loint", Ld::LoInt, 1}, {"hiloint2double", Ld::HiLo, 2},
    {"mulhi", Ld::MulHi, 2}, {"mul64hi", Ld::MulHi, 2},
    {"mul24", Ld::Mul24, 2}, {"umul24", Ld::Mul24, 2, Opcode::Yield, nullptr, 1},
    {"sad", Ld::Sad, 3}, {"usad", Ld::Sad, 3, Opcode::Yield, nullptr, 1},
    {"hadd", Ld::HAdd, 2}, {"uhadd", Ld::HAdd, 2, Opcode::Yield, nullptr, 1},
    {"rhadd", Ld::RHAdd, 2}, {"urhadd", Ld::RHAdd, 2, Opcode::Yield, nullptr, 1},
    {"popc", Ld::Popc, 1}, {"popcll", Ld::Popc, 1}, {"clz", Ld::Clz, 1}, {"clzll", Ld::Clz, 1},
    {"ffs", Ld::Ffs, 1}, {"ffsll", Ld::Ffs, 1}, {"brev", Ld::Brev, 1}, {"brevll", Ld::Brev, 1},
    {"fdimf", Ld::Fdim, 2}, {"fdim", Ld::Fdim, 2}, {"saturatef", Ld::Saturate, 1},
    {"frcp_rn", Ld::Rcp, 1}, {"drcp_rn", Ld::Rcp, 1}, {"powif", Ld::PowI, 2}, {"powi", Ld::PowI, 2},
};

}  // namespace

ValueId Reader::cst_int(TypeId t, int64_t v) {
  Scalar s;
  if (!m_->types.elem_scalar(t, &s) || !is_int(s)) malformed("an integer constant of type " + m_->type_str(t));
  return make1(Opcode::Const, {}, t, {s == Scalar::I1 ? Attr::of_bool(v & 1) : Attr::of_int(v)});
}

ValueId Reader::cst_float(TypeId t, double v) { return make1(Opcode::Const, {}, t, {Attr::of_float(v)}); }

void Reader::op_extern(const std::string&) {
  std::vector<ValueId> args = operand_list();
  AttrDict d = parse_dict();
  c_.expect(':', "':' before the types");
  parse_type_list();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId t = parse_type();
  auto sym = d.find("symbol");
  if (sym == d.end() || sym->second.kind != AttrVal::Kind::Str) malformed("tt.extern_elementwise needs symbol = \"...\"");
  const std::string& symbol = sym->second.s;
  std::string base = symbol.rfind("__nv_", 0) == 0 ? symbol.substr(5) : std::string();
  if (base.empty())
    unsupported("extern function '" + symbol + "' is not a libdevice function (__nv_*); the importer maps only those");
  const LdEntry* e = nullptr;
  for (const LdEntry& l : kLibdevice)
    if (base == l.sym) e = &l;
  if (!e) unsupported("libdevice function '" + symbol + "' has no Tri counterpart (docs/import.md lists the ones mapped)");
  if (static_cast<int>(args.size()) != e->arity)
    malformed("libdevice '" + symbol + "' takes " + std::to_string(e->arity) + " argument(s)");
  // Integer or float scalars or blocks of one shape, as libdevice's functions take.
  Scalar rs;
  if (!m_->types.elem_scalar(t, &rs)) malformed("libdevice '" + symbol + "' with a result of type " + m_->type_str(t));
  for (ValueId v : args) {
    Scalar s;
    TypeId vt = f_->type_of(v);
    if (!m_->types.elem_scalar(vt, &s) || m_->types.with_elem(vt, scalar(rs)) != t)
      malformed("libdevice '" + symbol + "' with an argument of type " + m_->type_str(vt) + " and a result of type " +
                m_->type_str(t));
  }
  set_results({libdevice_value(e, symbol, args, t)});
}

ValueId Reader::libdevice_value(const void* entry, const std::string& symbol, const std::vector<ValueId>& args, TypeId t) {
  const LdEntry& e = *static_cast<const LdEntry*>(entry);
  ValueId x = args[0];
  TypeId xt = f_->type_of(x);
  Scalar xs, rs;
  m_->types.elem_scalar(xt, &xs);
  m_->types.elem_scalar(t, &rs);
  auto with = [&](TypeId like, Scalar s) { return m_->types.with_elem(like, scalar(s)); };
  auto need_float = [&](Scalar s) {
    if (s != Scalar::F32 && s != Scalar::F64) malformed("libdevice '" + symbol + "' on " + scalar_name(s));
  };
  auto need_int = [&](Scalar s) {
    if (s != Scalar::I32 && s != Scalar::I64) malformed("libdevice '" + symbol + "' on " + scalar_name(s));
  };
  auto op2 = [&](Opcode code, ValueId a, ValueId b) { return make1(code, {a, b}, f_->type_of(a)); };
  auto icmp = [&](const char* pred, ValueId a, ValueId b) {
    return make1(Opcode::Cmp, {a, b}, with(f_->type_of(a), Scalar::I1), {enum_attr(Opcode::Cmp, "pred", pred)});
  };
  auto fcmp = [&](const char* pred, ValueId a, ValueId b) {
    return make1(Opcode::FCmp, {a, b}, with(f_->type_of(a), Scalar::I1), {enum_attr(Opcode::FCmp, "pred", pred)});
  };
  auto to_i32 = [&](ValueId b) {  // an i1 flag or an i64 count as the i32 libdevice returns
    Scalar s;
    m_->types.elem_scalar(f_->type_of(b), &s);
    if (s == Scalar::I32) return b;
    return make1(s == Scalar::I1 ? Opcode::ZExt : Opcode::Trunc, {b}, t);
  };
  auto copysign = [&](ValueId mag, ValueId sign) {
    return make1(Opcode::MathCall, {mag, sign}, f_->type_of(mag), {Attr::of_str("copysign")});
  };
  // Round half to even: (x + c) - c with c = +-2^p rounds |x| < 2^p to an integer in the
  // default rounding mode; larger values (and NaN, infinities) are integers already; the sign is
  // put back so that -0.3 gives -0.
  auto rint = [&](ValueId v) {
    TypeId vt = f_->type_of(v);
    Scalar s;
    m_->types.elem_scalar(vt, &s);
    need_float(s);
    ValueId big = cst_float(vt, s == Scalar::F32 ? 8388608.0 : 4503599627370496.0);
    ValueId c = copysign(big, v);
    ValueId r = op2(Opcode::Sub, op2(Opcode::Add, v, c), c);
    ValueId small = fcmp("olt", make1(Opcode::Abs, {v}, vt), big);
    r = make1(Opcode::Select, {small, r, v}, vt);
    return copysign(r, v);
  };
  auto width = [&](Scalar s) { return scalar_bits(s); };
  // Population count by SWAR steps (w = 32 or 64 bits).
  auto popc = [&](ValueId v) {
    TypeId vt = f_->type_of(v);
    Scalar s;
    m_->types.elem_scalar(vt, &s);
    int w = width(s);
    auto k = [&](uint64_t bits) { return cst_int(vt, static_cast<int64_t>(w == 32 ? bits & 0xffffffffu : bits)); };
    ValueId y = op2(Opcode::Sub, v, op2(Opcode::And, op2(Opcode::LShr, v, k(1)), k(0x5555555555555555ull)));
    y = op2(Opcode::Add, op2(Opcode::And, y, k(0x3333333333333333ull)),
            op2(Opcode::And, op2(Opcode::LShr, y, k(2)), k(0x3333333333333333ull)));
    y = op2(Opcode::And, op2(Opcode::Add, y, op2(Opcode::LShr, y, k(4))), k(0x0f0f0f0f0f0f0f0full));
    y = op2(Opcode::LShr, op2(Opcode::Mul, y, k(0x0101010101010101ull)), k(w - 8));
    return to_i32(y);
  };

  switch (e.kind) {
    case Ld::Op: {
      std::vector<Attr> attrs;
      // __nv_exp2f is ex2.approx.ftz.f32 in the FTZ mode Triton links libdevice in; __nv_sqrtf
      // and __nv_rsqrtf are sqrt.approx.ftz.f32 and rsqrt.approx.ftz.f32 there (Triton leaves
      // __CUDA_PREC_SQRT at 0), __nv_fast_expf ex2.approx.ftz of x log2 e, __nv_fast_fdividef
      // div.approx.f32: Tri's approx=true ops (docs/ir.md, "Approximate math").
      if (e.code == Opcode::Exp2 && rs == Scalar::F32) attrs.push_back(enum_attr(Opcode::Exp2, "subnormal", "flush"));
      if (e.flag == 1 && rs == Scalar::F32) attrs.push_back(Attr::of_bool(true));
      return make1(e.code, args, t, attrs);
    }
    case Ld::MathCall:
      need_float(rs);
      return make1(Opcode::MathCall, args, t, {Attr::of_str(e.name)});
    case Ld::IsNan:
      need_float(xs);
      return to_i32(fcmp("uno", x, x));
    case Ld::IsInf:
    case Ld::IsFinite: {
      need_float(xs);
      ValueId a = make1(Opcode::Abs, {x}, xt);
      return to_i32(fcmp(e.kind == Ld::IsInf ? "oeq" : "olt", a, cst_float(xt, INFINITY)));
    }
    case Ld::SignBit: {
      need_float(xs);
      Scalar is = xs == Scalar::F32 ? Scalar::I32 : Scalar::I64;
      ValueId bits = make1(Opcode::Bitcast, {x}, with(xt, is));
      return to_i32(op2(Opcode::LShr, bits, cst_int(with(xt, is), width(is) - 1)));
    }
    case Ld::Bitcast:
      return make1(Opcode::Bitcast, {x}, t);
    case Ld::Rint:
      return rint(x);
    case Ld::ToInt: {
      need_float(xs);
      int mode = e.flag & 3;
      ValueId r = mode == 0 ? rint(x) : mode == 2 ? make1(Opcode::Floor, {x}, xt) : mode == 3 ? make1(Opcode::Ceil, {x}, xt) : x;
      return make1(e.flag & 4 ? Opcode::FPToUI : Opcode::FPToSI, {r}, t);
    }
    case Ld::IntToFloat:
      return make1(e.flag ? Opcode::UIToFP : Opcode::SIToFP, {x}, t);
    case Ld::FPTrunc:
      return make1(Opcode::FPTrunc, {x}, t, {enum_attr(Opcode::FPTrunc, "rounding", e.flag ? "rtz" : "rtne")});
    case Ld::HiInt:
    case Ld::LoInt: {
      if (xs != Scalar::F64) malformed("libdevice '" + symbol + "' on " + scalar_name(xs));
      ValueId bits = make1(Opcode::Bitcast, {x}, with(xt, Scalar::I64));
      if (e.kind == Ld::HiInt) bits = op2(Opcode::LShr, bits, cst_int(with(xt, Scalar::I64), 32));
      return make1(Opcode::Trunc, {bits}, t);
    }
    case Ld::HiLo: {
      TypeId wide = with(xt, Scalar::I64);
      ValueId hi = op2(Opcode::Shl, make1(Opcode::ZExt, {x}, wide), cst_int(wide, 32));
      ValueId bits = op2(Opcode::Or, hi, make1(Opcode::ZExt, {args[1]}, wide));
      return make1(Opcode::Bitcast, {bits}, t);
    }
    case Ld::MulHi: {
      need_int(xs);
      ValueId y = args[1];
      if (xs == Scalar::I32) {
        TypeId wide = with(xt, Scalar::I64);
        ValueId p = op2(Opcode::Mul, make1(Opcode::SExt, {x}, wide), make1(Opcode::SExt, {y}, wide));
        return make1(Opcode::Trunc, {op2(Opcode::AShr, p, cst_int(wide, 32))}, t);
      }
      // The signed high half from the unsigned one: subtract y where x < 0 and x where y < 0.
      ValueId zero = cst_int(xt, 0);
      ValueId hi = op2(Opcode::UMulHi, x, y);
      hi = op2(Opcode::Sub, hi, make1(Opcode::Select, {icmp("slt", x, zero), y, zero}, xt));
      return op2(Opcode::Sub, hi, make1(Opcode::Select, {icmp("slt", y, zero), x, zero}, xt));
    }
    case Ld::Mul24: {
      need_int(xs);
      auto low24 = [&](ValueId v) {
        if (e.flag) return op2(Opcode::And, v, cst_int(xt, 0xffffff));
        ValueId eight = cst_int(xt, 8);
        return op2(Opcode::AShr, op2(Opcode::Shl, v, eight), eight);
      };
      return op2(Opcode::Mul, low24(x), low24(args[1]));
    }
    case Ld::Sad: {
      need_int(xs);
      ValueId y = args[1];
      ValueId lt = icmp(e.flag ? "ult" : "slt", x, y);
      ValueId diff = make1(Opcode::Select, {lt, op2(Opcode::Sub, y, x), op2(Opcode::Sub, x, y)}, xt);
      return op2(Opcode::Add, diff, args[2]);
    }
    case Ld::HAdd:
    case Ld::RHAdd: {
      need_int(xs);
      ValueId y = args[1];
      ValueId half = op2(e.flag ? Opcode::LShr : Opcode::AShr, op2(Opcode::Xor, x, y), cst_int(xt, 1));
      if (e.kind == Ld::HAdd) return op2(Opcode::Add, op2(Opcode::And, x, y), half);
      return op2(Opcode::Sub, op2(Opcode::Or, x, y), half);
    }
    case Ld::Popc:
      need_int(xs);
      return popc(x);
    case Ld::Clz: {
      need_int(xs);
      ValueId y = x;
      for (int sh = 1; sh < width(xs); sh *= 2) y = op2(Opcode::Or, y, op2(Opcode::LShr, y, cst_int(xt, sh)));
      return popc(op2(Opcode::Xor, y, cst_int(xt, -1)));
    }
    case Ld::Ffs: {
      need_int(xs);
      ValueId zero = cst_int(xt, 0);
      ValueId low = op2(Opcode::And, x, op2(Opcode::Sub, zero, x));  // the lowest set bit
      ValueId n = popc(op2(Opcode::Sub, low, cst_int(xt, 1)));
      TypeId rt = f_->type_of(n);
      n = op2(Opcode::Add, n, cst_int(rt, 1));
      return make1(Opcode::Select, {icmp("eq", x, zero), cst_int(rt, 0), n}, rt);
    }
    case Ld::Brev: {
      need_int(xs);
      int w = width(xs);
      auto k = [&](uint64_t bits) { return cst_int(xt, static_cast<int64_t>(w == 32 ? bits & 0xffffffffu : bits)); };
      const uint64_t masks[] = {0x5555555555555555ull, 0x3333333333333333ull, 0x0f0f0f0f0f0f0f0full,
                                0x00ff00ff00ff00ffull, 0x0000ffff0000ffffull};
      ValueId y = x;
      int step = 0;
      for (int sh = 1; sh < w; sh *= 2, ++step) {
        ValueId s = cst_int(xt, sh);
        if (sh * 2 == w) {  // the last step swaps the halves: no mask
          y = op2(Opcode::Or, op2(Opcode::LShr, y, s), op2(Opcode::Shl, y, s));
        } else {
          ValueId m = k(masks[step]);
          y = op2(Opcode::Or, op2(Opcode::And, op2(Opcode::LShr, y, s), m), op2(Opcode::Shl, op2(Opcode::And, y, m), s));
        }
      }
      return y;
    }
    case Ld::Fdim: {
      need_float(xs);
      ValueId le = fcmp("ole", x, args[1]);
      return make1(Opcode::Select, {le, cst_float(xt, 0.0), op2(Opcode::Sub, x, args[1])}, xt);
    }
    case Ld::Saturate: {
      need_float(xs);
      Attr ignore = enum_attr(Opcode::FMax, "nan", "ignore");
      ValueId v = make1(Opcode::FMax, {x, cst_float(xt, 0.0)}, xt, {ignore});
      return make1(Opcode::FMin, {v, cst_float(xt, 1.0)}, xt, {ignore});
    }
    case Ld::Rcp:
      need_float(xs);
      return op2(Opcode::FDiv, cst_float(xt, 1.0), x);
    case Ld::PowI: {
      need_float(xs);
      return make1(Opcode::Pow, {x, make1(Opcode::SIToFP, {args[1]}, xt)}, t);
    }
    case Ld::LLRint:
      return make1(Opcode::FPToSI, {rint(x)}, t);
    case Ld::LLRound:
      need_float(xs);
      return make1(Opcode::FPToSI, {make1(Opcode::MathCall, {x}, xt, {Attr::of_str("round")})}, t);
  }
  malformed("libdevice '" + symbol + "'");
}

}  // namespace tri::import
