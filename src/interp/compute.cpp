// The reference interpreter's computing ops (interp_impl.h): constants, shape ops and addptr,
// elementwise arithmetic, comparisons, casts and math, reductions, scans and dot.
#include "interp/interp_impl.h"

namespace tri::interp::detail {

// ---- math_call: the functions of math_fns.def, for f32 (`name`f) and f64 (`name`)
struct MathFn {
  const char* name;
  int arity;
  float (*f1)(float);
  double (*d1)(double);
  float (*f2)(float, float);
  double (*d2)(double, double);
};
MathFn math_entry(const char* name, float (*f)(float), double (*d)(double)) {
  return {name, 1, f, d, nullptr, nullptr};
}
MathFn math_entry(const char* name, float (*f)(float, float), double (*d)(double, double)) {
  return {name, 2, nullptr, nullptr, f, d};
}
// glibc 2.36's tgammaf is off by up to 6 ulp (at x = -3.0802424: 1.896209 for 1.8962097); the
// double version rounded to float is within 1 ulp, as docs/ir.md promises 4.
float tgamma_f32(float x) { return static_cast<float>(std::tgamma(static_cast<double>(x))); }

const MathFn* find_math_fn(const std::string& name) {
  static const MathFn kFns[] = {
#define TRI_MATH_FN(fn, arity) math_entry(#fn, ::fn##f, ::fn),
#include "ir/math_fns.def"
#undef TRI_MATH_FN
  };
  static const MathFn kTgamma = math_entry("tgamma", &tgamma_f32, static_cast<double (*)(double)>(::tgamma));
  if (name == "tgamma") return &kTgamma;
  for (const MathFn& f : kFns)
    if (name == f.name) return &f;
  return nullptr;
}
float apply_math(const MathFn* m, const float* x) { return m->arity == 1 ? m->f1(x[0]) : m->f2(x[0], x[1]); }
double apply_math(const MathFn* m, const double* x) { return m->arity == 1 ? m->d1(x[0]) : m->d2(x[0], x[1]); }

// A float op computed in T (float for every type but f64: docs/ir.md computes f16, bf16 and f8 in
// f32 and rounds after each op).
template <class T>
T float_compute(Opcode code, const T* x, bool nan_propagate, const MathFn* mf) {
  switch (code) {
    case Opcode::Add: return x[0] + x[1];
    case Opcode::Sub: return x[0] - x[1];
    case Opcode::Mul: return x[0] * x[1];
    case Opcode::Neg: return -x[0];
    case Opcode::Abs: return std::fabs(x[0]);
    case Opcode::FDiv: return x[0] / x[1];
    case Opcode::FRem: return std::fmod(x[0], x[1]);
    case Opcode::FMin: return float_min(x[0], x[1], nan_propagate);
    case Opcode::FMax: return float_max(x[0], x[1], nan_propagate);
    case Opcode::Pow: return std::pow(x[0], x[1]);
    case Opcode::Fma: return std::fma(x[0], x[1], x[2]);
    case Opcode::Exp: return std::exp(x[0]);
    case Opcode::Exp2: return std::exp2(x[0]);
    case Opcode::Log: return std::log(x[0]);
    case Opcode::Log2: return std::log2(x[0]);
    case Opcode::Sqrt: return std::sqrt(x[0]);
    case Opcode::Rsqrt: return T(1) / std::sqrt(x[0]);
    case Opcode::Sin: return std::sin(x[0]);
    case Opcode::Cos: return std::cos(x[0]);
    case Opcode::Tanh: return std::tanh(x[0]);
    case Opcode::Erf: return std::erf(x[0]);
    case Opcode::Floor: return std::floor(x[0]);
    case Opcode::Ceil: return std::ceil(x[0]);
    case Opcode::MathCall: return apply_math(mf, x);
    default: break;
  }
  assert(!"not a float op");
  return T(0);
}

uint64_t eval_float(Opcode code, Scalar s, const uint64_t* in, int nin, bool nan_propagate, const MathFn* mf) {
  if (s == Scalar::F64) {
    double x[3] = {0, 0, 0};
    for (int k = 0; k < nin; ++k) x[k] = bits_f64(in[k]);
    return f64_bits(float_compute<double>(code, x, nan_propagate, mf));
  }
  float x[3] = {0, 0, 0};
  for (int k = 0; k < nin; ++k) x[k] = lane_f32(in[k], s);
  return f32_to_lane(float_compute<float>(code, x, nan_propagate, mf), s);
}

bool int_op_of(Opcode code, IntOp* out) {
  switch (code) {
    case Opcode::Add: *out = IntOp::Add; return true;
    case Opcode::Sub: *out = IntOp::Sub; return true;
    case Opcode::Mul: *out = IntOp::Mul; return true;
    case Opcode::SDiv: *out = IntOp::SDiv; return true;
    case Opcode::UDiv: *out = IntOp::UDiv; return true;
    case Opcode::SRem: *out = IntOp::SRem; return true;
    case Opcode::URem: *out = IntOp::URem; return true;
    case Opcode::CDiv: *out = IntOp::CDiv; return true;
    case Opcode::UMulHi: *out = IntOp::UMulHi; return true;
    case Opcode::And: *out = IntOp::And; return true;
    case Opcode::Or: *out = IntOp::Or; return true;
    case Opcode::Xor: *out = IntOp::Xor; return true;
    case Opcode::Shl: *out = IntOp::Shl; return true;
    case Opcode::LShr: *out = IntOp::LShr; return true;
    case Opcode::AShr: *out = IntOp::AShr; return true;
    case Opcode::SMin: *out = IntOp::SMin; return true;
    case Opcode::SMax: *out = IntOp::SMax; return true;
    case Opcode::UMin: *out = IntOp::UMin; return true;
    case Opcode::UMax: *out = IntOp::UMax; return true;
    default: return false;
  }
}


// ---------------------------------------------------------------------------------------------
// Shape ops: every result lane is a copy of one source lane (value, provenance, undefinedness).

Status Interp::exec_shape(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& src = fr.vals[op.operands[0]];
  TypeId rt = f.type_of(op.results[0]);
  switch (op.code) {
    case Opcode::Splat:
    case Opcode::ExpandDims:
    case Opcode::Reshape: {
      // Row-major order is unchanged: lane i of the result is lane i of the source (or the
      // scalar, for splat).
      Val r = new_val(rt);
      for (int64_t i = 0; i < r.size(); ++i) copy_lane(r, i, src, src.size() == 1 ? 0 : i);
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Broadcast: {
      // Dimensions align at the right; a source dimension of 1 (or a missing one) repeats.
      std::vector<int64_t> rs = shape_of(rt), ss = shape_of(src.type);
      Val r = new_val(rt);
      size_t off = rs.size() - ss.size();
      for (int64_t i = 0; i < r.size(); ++i) {
        int64_t rem = i, from = 0, stride = 1;
        for (size_t d = rs.size(); d-- > 0;) {
          int64_t idx = rem % rs[d];
          rem /= rs[d];
          if (d >= off) {
            int64_t sd = ss[d - off];
            from += (sd == 1 ? 0 : idx) * stride;
            stride *= sd;
          }
        }
        copy_lane(r, i, src, from);
      }
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Permute: {
      // Result dimension k is source dimension order[k].
      const std::vector<int64_t>& order = f.attr(o, "order").ints;
      std::vector<int64_t> rs = shape_of(rt), ss = shape_of(src.type);
      std::vector<int64_t> sstride(ss.size(), 1);
      for (size_t d = ss.size(); d-- > 1;) sstride[d - 1] = sstride[d] * ss[d];
      Val r = new_val(rt);
      for (int64_t i = 0; i < r.size(); ++i) {
        int64_t rem = i, from = 0;
        for (size_t d = rs.size(); d-- > 0;) {
          from += (rem % rs[d]) * sstride[order[d]];
          rem /= rs[d];
        }
        copy_lane(r, i, src, from);
      }
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Join: {
      // A new minor dimension of size 2: lhs at index 0, rhs at index 1.
      const Val& rhs = fr.vals[op.operands[1]];
      Val r = new_val(rt);
      for (int64_t i = 0; i < r.size() / 2; ++i) {
        copy_lane(r, 2 * i, src, i);
        copy_lane(r, 2 * i + 1, rhs, i);
      }
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    case Opcode::Split: {
      // The inverse of join: the last dimension (of size 2) is split into two results.
      Val r0 = new_val(rt), r1 = new_val(f.type_of(op.results[1]));
      for (int64_t i = 0; i < r0.size(); ++i) {
        copy_lane(r0, i, src, 2 * i);
        copy_lane(r1, i, src, 2 * i + 1);
      }
      fr.vals[op.results[0]] = std::move(r0);
      fr.vals[op.results[1]] = std::move(r1);
      return Status::ok();
    }
    case Opcode::Cat: {
      // Concatenation along dimension 0, which in row-major order is lhs's lanes then rhs's.
      const Val& rhs = fr.vals[op.operands[1]];
      Val r = new_val(rt);
      assert(r.size() == src.size() + rhs.size());
      for (int64_t i = 0; i < src.size(); ++i) copy_lane(r, i, src, i);
      for (int64_t i = 0; i < rhs.size(); ++i) copy_lane(r, src.size() + i, rhs, i);
      fr.vals[op.results[0]] = std::move(r);
      return Status::ok();
    }
    default: break;
  }
  assert(!"not a shape op");
  return Status::ok();
}

Status Interp::exec_addptr(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& p = fr.vals[op.operands[0]];
  const Val& off = fr.vals[op.operands[1]];
  TypeId rt = f.type_of(op.results[0]);
  const int64_t size = mem_bytes(pointee_scalar(rt));
  const int ow = elem_width(off.type);
  Val r = new_val(rt);
  for (int64_t i = 0; i < r.size(); ++i) {
    copy_lane(r, i, p, i);
    r.bits[i] = lane(p, i) + static_cast<uint64_t>(sext_bits(lane(off, i), ow)) * static_cast<uint64_t>(size);
    merge_undef(r, i, off, i);
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}


// ---------------------------------------------------------------------------------------------
// Elementwise ops: arithmetic, comparisons, select, casts, math

Status Interp::exec_elementwise(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Opcode code = op.code;
  const int nin = static_cast<int>(op.operands.size());
  assert(nin >= 1 && nin <= 3);
  const Val* in[3] = {nullptr, nullptr, nullptr};
  for (int k = 0; k < nin; ++k) in[k] = &fr.vals[op.operands[k]];
  const TypeId rt = f.type_of(op.results[0]);
  // The type that decides how operand bits are read (select's value operands, not its condition).
  const TypeId it = code == Opcode::Select ? in[1]->type : in[0]->type;
  const bool in_ptr = elem_is_ptr(it), out_ptr = elem_is_ptr(rt);
  const Scalar is = in_ptr ? Scalar::I64 : elem_scalar(it);
  const Scalar os = out_ptr ? Scalar::I64 : elem_scalar(rt);
  const int iw = elem_width(it), ow = elem_width(rt);

  IntOp iop{};
  const bool int_arith = !in_ptr && ir::is_int(is) && int_op_of(code, &iop);
  const ir::OpInfo& info = ir::op_info(code);
  const bool nan_propagate = info.attr_index("nan") < 0 || enum_attr(f, o, "nan") == "propagate";
  const bool flush_subnormal = info.attr_index("subnormal") >= 0 && enum_attr(f, o, "subnormal") == "flush";
  const std::string pred = info.attr_index("pred") >= 0 ? enum_attr(f, o, "pred") : std::string();
  const Round rounding =
      code == Opcode::FPTrunc && enum_attr(f, o, "rounding") == "rtz" ? Round::TowardZero : Round::NearestEven;
  const MathFn* mf = nullptr;
  if (code == Opcode::MathCall) {
    mf = find_math_fn(str_attr(f, o, "name"));
    assert(mf && "math_call of an unknown function (the verifier checks names)");
  }

  Val r = new_val(rt);
  for (int64_t i = 0; i < r.size(); ++i) {
    uint64_t x[3] = {0, 0, 0};
    for (int k = 0; k < nin; ++k) x[k] = lane(*in[k], i);
    uint64_t out = 0;
    bool div_by_zero = false;
    if (int_arith) {
      out = int_binary(iop, x[0], x[1], iw, &div_by_zero);
    } else {
      switch (code) {
        case Opcode::Neg:
        case Opcode::Abs:
          if (ir::is_int(is)) {
            int64_t v = sext_bits(x[0], iw);
            out = (code == Opcode::Neg || v < 0) ? trunc_bits(0 - x[0], iw) : x[0];
          } else {
            out = eval_float(code, is, x, 1, nan_propagate, nullptr);
          }
          break;
        case Opcode::Cmp: {
          const int64_t a = sext_bits(x[0], iw), b = sext_bits(x[1], iw);
          const uint64_t ua = x[0], ub = x[1];
          bool c = pred == "eq"    ? ua == ub
                   : pred == "ne"  ? ua != ub
                   : pred == "slt" ? a < b
                   : pred == "sle" ? a <= b
                   : pred == "sgt" ? a > b
                   : pred == "sge" ? a >= b
                   : pred == "ult" ? ua < ub
                   : pred == "ule" ? ua <= ub
                   : pred == "ugt" ? ua > ub
                                   : ua >= ub;
          out = c;
          break;
        }
        case Opcode::FCmp: {
          const long double a = decode_float(x[0], is), b = decode_float(x[1], is);
          const bool uno = std::isnan(a) || std::isnan(b);
          bool c;
          if (pred == "ord") c = !uno;
          else if (pred == "uno") c = uno;
          else {
            const std::string rel = pred.substr(1);
            bool cmp = rel == "eq" ? a == b : rel == "ne" ? a != b : rel == "lt" ? a < b
                     : rel == "le" ? a <= b : rel == "gt" ? a > b : a >= b;
            c = uno ? pred[0] == 'u' : cmp;
          }
          out = c;
          break;
        }
        case Opcode::Select: {
          const bool c = x[0] & 1;
          out = c ? x[1] : x[2];
          if (!r.prov.empty()) r.prov[i] = prov_at(*in[c ? 1 : 2], i);
          break;
        }
        case Opcode::Trunc:
        case Opcode::ZExt:
        case Opcode::PtrToInt:
        case Opcode::IntToPtr:
          out = trunc_bits(x[0], ow);
          break;
        case Opcode::SExt:
          out = trunc_bits(static_cast<uint64_t>(sext_bits(x[0], iw)), ow);
          break;
        case Opcode::FPTrunc:
        case Opcode::FPExt:
          // bf16 -> f32 is exact, a signaling NaN staying signaling (docs/ir.md); every other
          // conversion quiets it.
          if (code == Opcode::FPExt && is == Scalar::BF16 && os == Scalar::F32) out = (x[0] & 0xffff) << 16;
          else out = encode_float(decode_float(x[0], is), os, rounding);
          break;
        case Opcode::FPToSI:
        case Opcode::FPToUI:
          out = float_to_int(decode_float(x[0], is), ow, code == Opcode::FPToSI);
          break;
        case Opcode::SIToFP:
        case Opcode::UIToFP:
          out = int_to_float(x[0], iw, code == Opcode::SIToFP, float_format(os));
          break;
        case Opcode::Bitcast:
          out = x[0];
          if (in_ptr && out_ptr) r.prov[i] = prov_at(*in[0], i);
          break;
        default:
          assert(ir::is_float(is) && "an elementwise op on floats");
          out = eval_float(code, is, x, nin, nan_propagate, mf);
          if (flush_subnormal && is != Scalar::F64) {  // exp2[subnormal=flush]: an f32 result below 2^-126 is +0
            const float v = std::exp2(lane_f32(x[0], is));
            if (v < std::numeric_limits<float>::min()) out = f32_to_lane(0.0f, is);
          }
          break;
      }
    }
    r.bits[i] = out;
    if (checked_) {
      if (code == Opcode::Select) {
        merge_undef(r, i, *in[0], i);
        merge_undef(r, i, *in[(x[0] & 1) ? 1 : 2], i);
      } else {
        for (int k = 0; k < nin; ++k) merge_undef(r, i, *in[k], i);
      }
      if (div_by_zero && undef_at(*in[1], i) == kDefined)
        return runtime_error(fr, o, op_name(f, o) + lane_str(rt, i) + " divides by zero");
    }
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}


// ---------------------------------------------------------------------------------------------
// Reductions, scans, dot

uint64_t Interp::combine_builtin(const std::string& kind, TypeId elem, uint64_t a, uint64_t b) const {
  const Scalar s = elem_scalar(elem);
  const int w = ir::scalar_bits(s);
  bool dz = false;
  if (ir::is_float(s)) {
    uint64_t in[2] = {a, b};
    Opcode c = kind == "sum" ? Opcode::Add : kind == "prod" ? Opcode::Mul : kind == "max" ? Opcode::FMax
             : Opcode::FMin;
    assert(kind == "sum" || kind == "prod" || kind == "max" || kind == "min");
    return eval_float(c, s, in, 2, true, nullptr);
  }
  IntOp op = kind == "sum"    ? IntOp::Add
             : kind == "prod" ? IntOp::Mul
             : kind == "max"  ? IntOp::SMax
             : kind == "min"  ? IntOp::SMin
             : kind == "umax" ? IntOp::UMax
             : kind == "umin" ? IntOp::UMin
             : kind == "and"  ? IntOp::And
             : kind == "or"   ? IntOp::Or
                              : IntOp::Xor;
  return int_binary(op, a, b, w, &dz);
}

Status Interp::exec_reduce_scan(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const bool scan = op.code == Opcode::Scan;
  const std::vector<ValueId> srcs = f.variadic(o);
  const size_t nsrc = srcs.size();
  const int64_t axis = int_attr(f, o, "axis");
  const std::string kind = enum_attr(f, o, "kind");
  const bool reverse = scan && bool_attr(f, o, "reverse");
  const std::vector<int64_t> shape = shape_of(f.type_of(srcs[0]));
  const int64_t n = shape[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];

  std::vector<const Val*> in;
  for (ValueId v : srcs) in.push_back(&fr.vals[v]);
  std::vector<Val> res;
  for (ValueId v : op.results) res.push_back(new_val(f.type_of(v)));
  const bool arg = kind == "argmax" || kind == "argmin";
  const BlockId region = op.regions.empty() ? ir::kNoBlock : op.regions[0];

  for (int64_t ou = 0; ou < outer; ++ou) {
    for (int64_t inn = 0; inn < inner; ++inn) {
      auto src_lane = [&](int64_t k) { return (ou * n + k) * inner + inn; };
      const int64_t out_lane = ou * inner + inn;
      const int64_t first = reverse ? n - 1 : 0;
      const int64_t step = reverse ? -1 : 1;
      if (arg) {
        // One i32 index per source: the first lane holding the extreme value.
        for (size_t j = 0; j < nsrc; ++j) {
          const Val& x = *in[j];
          const TypeId et = types_.elem_of(x.type);
          const Scalar s = elem_scalar(et);
          auto key = [&](int64_t k) -> long double {
            uint64_t b = lane(x, src_lane(k));
            return ir::is_float(s) ? decode_float(b, s) : static_cast<long double>(sext_bits(b, ir::scalar_bits(s)));
          };
          int64_t best = 0;
          int32_t u = undef_at(x, src_lane(0));
          for (int64_t k = 1; k < n; ++k) {
            long double a = key(k), b = key(best);
            if (kind == "argmax" ? a > b : a < b) best = k;
            if (u == kDefined) u = undef_at(x, src_lane(k));
          }
          res[j].bits[out_lane] = trunc_bits(static_cast<uint64_t>(best), elem_width(res[j].type));
          if (checked_) res[j].undef[out_lane] = u;
        }
        continue;
      }
      // The running value of each source, combined with the next lane in order.
      std::vector<Val> acc;
      for (size_t j = 0; j < nsrc; ++j) {
        Val a = new_val(types_.elem_of(in[j]->type));
        copy_lane(a, 0, *in[j], src_lane(first));
        acc.push_back(std::move(a));
      }
      auto emit = [&](int64_t to) {
        for (size_t j = 0; j < nsrc; ++j) copy_lane(res[j], to, acc[j], 0);
      };
      if (scan) emit(src_lane(first));
      for (int64_t c = 1; c < n; ++c) {
        const int64_t k = first + c * step;
        if (region == ir::kNoBlock) {
          for (size_t j = 0; j < nsrc; ++j) {
            const TypeId et = types_.elem_of(in[j]->type);
            acc[j].bits[0] = combine_builtin(kind, et, acc[j].bits[0], lane(*in[j], src_lane(k)));
            merge_undef(acc[j], 0, *in[j], src_lane(k));
          }
        } else {
          std::vector<Val> args = acc;
          for (size_t j = 0; j < nsrc; ++j) {
            Val b = new_val(types_.elem_of(in[j]->type));
            copy_lane(b, 0, *in[j], src_lane(k));
            args.push_back(std::move(b));
          }
          std::vector<Val> out;
          TRI_RETURN_IF_ERROR(exec_block(fr, region, std::move(args), &out));
          assert(out.size() == nsrc);
          for (size_t j = 0; j < nsrc; ++j) {
            out[j].type = acc[j].type;
            acc[j] = std::move(out[j]);
          }
        }
        if (scan) emit(src_lane(k));
      }
      if (!scan) emit(out_lane);
    }
  }
  for (size_t j = 0; j < op.results.size(); ++j) fr.vals[op.results[j]] = std::move(res[j]);
  return Status::ok();
}

Status Interp::exec_dot(Frame& fr, OpId o) {
  const Function& f = *fr.f;
  const OpData& op = f.op(o);
  const Val& a = fr.vals[op.operands[0]];
  const Val& b = fr.vals[op.operands[1]];
  const Val& acc = fr.vals[op.operands[2]];
  const TypeId rt = f.type_of(op.results[0]);
  const std::vector<int64_t> sa = shape_of(a.type), sb = shape_of(b.type);
  const bool batched = sa.size() == 3;
  const int64_t B = batched ? sa[0] : 1, M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  const Scalar ea = elem_scalar(a.type), eb = elem_scalar(b.type), ec = elem_scalar(acc.type), er = elem_scalar(rt);
  const bool tf32 = enum_attr(f, o, "precision") == "tf32";
  Val r = new_val(rt);
  for (int64_t bt = 0; bt < B; ++bt) {
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        const int64_t ci = (bt * M + m) * N + n;
        auto ai = [&](int64_t k) { return (bt * M + m) * K + k; };
        auto bi = [&](int64_t k) { return (bt * K + k) * N + n; };
        uint64_t out;
        if (ir::is_int(ea)) {
          // Integer products accumulate in the accumulator's width and wrap.
          const int w = ir::scalar_bits(ec);
          uint64_t c = lane(acc, ci);
          for (int64_t k = 0; k < K; ++k) {
            uint64_t p = static_cast<uint64_t>(sext_bits(lane(a, ai(k)), ir::scalar_bits(ea))) *
                         static_cast<uint64_t>(sext_bits(lane(b, bi(k)), ir::scalar_bits(eb)));
            c = trunc_bits(c + p, w);
          }
          out = trunc_bits(c, ir::scalar_bits(er));
        } else {
          // Float inputs (f16, bf16, f8, f32) accumulate in f32 (docs/ir.md: dot).
          assert(ea != Scalar::F64 && eb != Scalar::F64 && ec != Scalar::F64);
          float c = lane_f32(lane(acc, ci), ec);
          for (int64_t k = 0; k < K; ++k) {
            float x = lane_f32(lane(a, ai(k)), ea), y = lane_f32(lane(b, bi(k)), eb);
            if (tf32 && ea == Scalar::F32) x = round_to_tf32(x);
            if (tf32 && eb == Scalar::F32) y = round_to_tf32(y);
            float p = x * y;
            c = c + p;
          }
          out = f32_to_lane(c, er);
        }
        r.bits[ci] = out;
        if (checked_) {
          merge_undef(r, ci, acc, ci);
          for (int64_t k = 0; k < K; ++k) {
            merge_undef(r, ci, a, ai(k));
            merge_undef(r, ci, b, bi(k));
          }
        }
      }
    }
  }
  fr.vals[op.results[0]] = std::move(r);
  return Status::ok();
}

}  // namespace tri::interp::detail
