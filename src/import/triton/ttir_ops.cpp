// What each TTIR op becomes in Tri's IR (docs/import.md has the table). Each handler reads the
// op's custom syntax as Triton 3.x prints it, after the result names and the op name, up to (not
// including) its trailing `loc(...)`, makes the Tri ops and names the results.
#include <cmath>
#include <cstring>

#include "import/triton/ttir_reader.h"
#include "ir/limits.h"

namespace tri::import {

using namespace tri::ir;

namespace {

struct Mapped {
  const char* ttir;
  Opcode code;
};

// Elementwise ops with one TTIR op per Tri op; FMin/FMax's `nan` attribute is set by name.
const Mapped kBinary[] = {
    {"arith.addi", Opcode::Add},     {"arith.addf", Opcode::Add},        {"arith.subi", Opcode::Sub},
    {"arith.subf", Opcode::Sub},     {"arith.muli", Opcode::Mul},        {"arith.mulf", Opcode::Mul},
    {"arith.divsi", Opcode::SDiv},   {"arith.divui", Opcode::UDiv},      {"arith.remsi", Opcode::SRem},
    {"arith.remui", Opcode::URem},   {"arith.divf", Opcode::FDiv},       {"arith.remf", Opcode::FRem},
    {"arith.andi", Opcode::And},     {"arith.ori", Opcode::Or},          {"arith.xori", Opcode::Xor},
    {"arith.shli", Opcode::Shl},     {"arith.shrsi", Opcode::AShr},      {"arith.shrui", Opcode::LShr},
    {"arith.maxsi", Opcode::SMax},   {"arith.minsi", Opcode::SMin},      {"arith.maxui", Opcode::UMax},
    {"arith.minui", Opcode::UMin},   {"arith.maximumf", Opcode::FMax},   {"arith.minimumf", Opcode::FMin},
    {"arith.maxnumf", Opcode::FMax}, {"arith.minnumf", Opcode::FMin},    {"tt.mulhiui", Opcode::UMulHi},
    {"arith.mulhiui", Opcode::UMulHi}, {"tt.precise_divf", Opcode::FDiv}, {"math.powf", Opcode::Pow},
    {"tt.approx_divf", Opcode::FDiv},
    {"math.copysign", Opcode::MathCall}, {"math.atan2", Opcode::MathCall},
};

const Mapped kUnary[] = {
    {"arith.negf", Opcode::Neg},   {"math.absf", Opcode::Abs},     {"math.absi", Opcode::Abs},
    {"math.exp", Opcode::Exp},     {"math.exp2", Opcode::Exp2},    {"math.log", Opcode::Log},
    {"math.log2", Opcode::Log2},   {"math.sqrt", Opcode::Sqrt},    {"tt.precise_sqrt", Opcode::Sqrt},
    {"math.rsqrt", Opcode::Rsqrt}, {"math.sin", Opcode::Sin},      {"math.cos", Opcode::Cos},
    {"math.tanh", Opcode::Tanh},   {"math.erf", Opcode::Erf},      {"math.floor", Opcode::Floor},
    {"math.ceil", Opcode::Ceil},   {"math.expm1", Opcode::MathCall}, {"math.log1p", Opcode::MathCall},
    {"math.log10", Opcode::MathCall}, {"math.cbrt", Opcode::MathCall}, {"math.tan", Opcode::MathCall},
    {"math.sinh", Opcode::MathCall}, {"math.cosh", Opcode::MathCall}, {"math.asin", Opcode::MathCall},
    {"math.acos", Opcode::MathCall}, {"math.atan", Opcode::MathCall}, {"math.asinh", Opcode::MathCall},
    {"math.acosh", Opcode::MathCall}, {"math.atanh", Opcode::MathCall}, {"math.erfc", Opcode::MathCall},
    {"math.round", Opcode::MathCall}, {"math.trunc", Opcode::MathCall},
};

const Mapped kCasts[] = {
    {"arith.extsi", Opcode::SExt},     {"arith.extui", Opcode::ZExt},     {"arith.trunci", Opcode::Trunc},
    {"arith.extf", Opcode::FPExt},     {"arith.truncf", Opcode::FPTrunc}, {"arith.fptosi", Opcode::FPToSI},
    {"arith.fptoui", Opcode::FPToUI},  {"arith.sitofp", Opcode::SIToFP},  {"arith.uitofp", Opcode::UIToFP},
    {"arith.bitcast", Opcode::Bitcast}, {"tt.bitcast", Opcode::Bitcast},  {"tt.int_to_ptr", Opcode::IntToPtr},
    {"tt.ptr_to_int", Opcode::PtrToInt},
};

Opcode lookup(const Mapped* table, size_t n, const std::string& name) {
  for (size_t i = 0; i < n; ++i)
    if (name == table[i].ttir) return table[i].code;
  return Opcode::Yield;  // unreachable: handlers are registered from these tables
}

double half_bits_to_double(uint64_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f;
  uint64_t man = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), -24);
  } else if (exp == 31) {
    v = man ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<double>(man | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

}  // namespace

const std::unordered_map<std::string, Reader::Handler>& Reader::handlers() {
  static const std::unordered_map<std::string, Handler> table = [] {
    std::unordered_map<std::string, Handler> t;
    for (const Mapped& m : kBinary) t[m.ttir] = &Reader::op_binary;
    for (const Mapped& m : kUnary) t[m.ttir] = &Reader::op_unary;
    for (const Mapped& m : kCasts) t[m.ttir] = &Reader::op_cast;
    t["math.fma"] = &Reader::op_fma;
    t["arith.cmpi"] = &Reader::op_cmp;
    t["arith.cmpf"] = &Reader::op_cmp;
    t["arith.select"] = &Reader::op_select;
    t["arith.constant"] = &Reader::op_constant;
    t["ub.poison"] = &Reader::op_poison;
    t["tt.get_program_id"] = &Reader::op_program;
    t["tt.get_num_programs"] = &Reader::op_program;
    t["tt.make_range"] = &Reader::op_make_range;
    for (const char* n : {"tt.splat", "tt.broadcast", "tt.reshape", "tt.join", "tt.cat", "tt.split"})
      t[n] = &Reader::op_shape;
    t["tt.expand_dims"] = &Reader::op_expand_dims;
    t["tt.trans"] = &Reader::op_trans;
    t["tt.addptr"] = &Reader::op_addptr;
    t["tt.load"] = &Reader::op_load;
    t["tt.store"] = &Reader::op_store;
    t["tt.atomic_rmw"] = &Reader::op_atomic_rmw;
    t["tt.atomic_cas"] = &Reader::op_atomic_cas;
    t["tt.dot"] = &Reader::op_dot;
    t["tt.extern_elementwise"] = &Reader::op_extern;
    t["tt.fp_to_fp"] = &Reader::op_fp_to_fp;
    t["tt.call"] = &Reader::op_call;
    t["tt.return"] = &Reader::op_return;
    t["tt.assert"] = &Reader::op_assert;
    t["llvm.intr.assume"] = &Reader::op_assume;
    t["tt.print"] = &Reader::op_print;
    t["tt.reduce"] = &Reader::op_reduce_scan;
    t["tt.scan"] = &Reader::op_reduce_scan;
    t["scf.for"] = &Reader::op_for;
    t["scf.if"] = &Reader::op_if;
    t["scf.while"] = &Reader::op_while;
    t["scf.yield"] = &Reader::op_yield;
    t["tt.reduce.return"] = &Reader::op_yield;
    t["tt.scan.return"] = &Reader::op_yield;
    t["scf.condition"] = &Reader::op_condition;
    t["ttg.barrier"] = &Reader::op_barrier;
    t["gpu.barrier"] = &Reader::op_barrier;
    t["cf.br"] = &Reader::op_branch;
    t["cf.cond_br"] = &Reader::op_branch;
    t["tt.clampf"] = &Reader::op_clampf;
    t["tt.gather"] = &Reader::op_gather;
    t["tt.unsplat"] = &Reader::op_unsplat;
    t["tt.elementwise_inline_asm"] = &Reader::op_inline_asm;
    t["tt.atomic_load"] = &Reader::op_atomic_load_store;
    t["tt.atomic_store"] = &Reader::op_atomic_load_store;
    t["tt.atomic_poll"] = &Reader::op_atomic_load_store;
    t["tt.grid_dependency_wait"] = &Reader::op_grid_dependency;
    t["tt.grid_dependency_launch_dependents"] = &Reader::op_grid_dependency;
    t["tt.make_tensor_descriptor"] = &Reader::op_make_descriptor;
    t["tt.descriptor_load"] = &Reader::op_descriptor_load;
    t["tt.descriptor_store"] = &Reader::op_descriptor_store;
    t["tt.descriptor_reduce"] = &Reader::op_descriptor_store;
    t["tt.descriptor_gather"] = &Reader::op_descriptor_gather;
    t["tt.descriptor_scatter"] = &Reader::op_descriptor_scatter;
    return t;
  }();
  return table;
}

// ---------------------------------------------------------------- elementwise

// Whether values of type t are f32 (scalars or blocks): Triton's default f32 `/`, sqrt, rsqrt
// and exp are the approximate instructions, which Tri's ops say with approx=true (docs/import.md).
bool Reader::approx_f32(TypeId t) const {
  Scalar s;
  return m_->types.elem_scalar(t, &s) && s == Scalar::F32;
}

void Reader::op_binary(const std::string& name) {
  ValueId a = operand();
  c_.expect(',', "',' between operands");
  ValueId b = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  Opcode code = lookup(kBinary, sizeof kBinary / sizeof kBinary[0], name);
  std::vector<Attr> attrs;
  if (name == "arith.maxnumf" || name == "arith.minnumf") attrs.push_back(Attr::of_enum(1));  // nan=ignore
  if (code == Opcode::MathCall) attrs.push_back(Attr::of_str(name.substr(5)));
  // Triton's div.full.f32 (and for tl.fdiv(approx=True), 3.9's tt.approx_divf, at least that).
  if ((name == "arith.divf" || name == "tt.approx_divf") && approx_f32(t)) attrs.push_back(Attr::of_bool(true));
  set_results({make1(code, {a, b}, t, attrs)});
}

void Reader::op_unary(const std::string& name) {
  ValueId a = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  Opcode code = lookup(kUnary, sizeof kUnary / sizeof kUnary[0], name);
  std::vector<Attr> attrs;
  if (code == Opcode::MathCall) attrs.push_back(Attr::of_str(name.substr(5)));
  // Triton's NVIDIA backend computes f32 math.sqrt, math.rsqrt and math.exp with approximate
  // instructions (sqrt.approx.ftz, rsqrt.approx.ftz, ex2.approx of x log2 e); tt.precise_sqrt
  // is the correctly rounded one.
  if ((name == "math.sqrt" || name == "math.rsqrt" || name == "math.exp") && approx_f32(t))
    attrs.push_back(Attr::of_bool(true));
  // Triton's NVIDIA backend computes an f32 math.exp2 with ex2.approx.ftz.f32, which flushes
  // subnormal results to zero: Tri's exp2[subnormal=flush] says the same.
  if (code == Opcode::Exp2 && elem_scalar_type(t) == scalar(Scalar::F32))
    attrs.push_back(enum_attr(Opcode::Exp2, "subnormal", "flush"));
  set_results({make1(code, {a}, t, attrs)});
}

void Reader::op_fma(const std::string&) {
  ValueId a = operand();
  c_.expect(',', "','");
  ValueId b = operand();
  c_.expect(',', "','");
  ValueId x = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  set_results({make1(Opcode::Fma, {a, b, x}, t)});
}

void Reader::op_cmp(const std::string& name) {
  std::string pred = c_.ident("a comparison predicate");
  c_.expect(',', "',' after the predicate");
  ValueId a = operand();
  c_.expect(',', "',' between operands");
  ValueId b = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  TypeId rt = m_->types.with_elem(t, scalar(Scalar::I1));
  if (name == "arith.cmpf" && (pred == "true" || pred == "false")) {
    set_results({make1(Opcode::Const, {}, rt, {Attr::of_bool(pred == "true")})});
    return;
  }
  Opcode code = name == "arith.cmpi" ? Opcode::Cmp : Opcode::FCmp;
  set_results({make1(code, {a, b}, rt, {enum_attr(code, "pred", pred)})});
}

void Reader::op_select(const std::string&) {
  ValueId cond = operand();
  c_.expect(',', "','");
  ValueId a = operand();
  c_.expect(',', "','");
  ValueId b = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  std::vector<TypeId> ts = parse_type_list();
  TypeId t = ts.back();
  // A scalar condition choosing between blocks becomes a splat (Tri's select is lane by lane).
  if (m_->types.is_block(t) && !m_->types.is_block(f_->type_of(cond)))
    cond = make1(Opcode::Splat, {cond}, m_->types.with_elem(t, scalar(Scalar::I1)));
  set_results({make1(Opcode::Select, {cond, a, b}, t)});
}

void Reader::op_cast(const std::string& name) {
  ValueId a = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  parse_type();
  // arith casts write `A to B`; tt.bitcast, tt.int_to_ptr and tt.ptr_to_int write `A -> B`.
  if (!c_.eat_punct("->")) c_.expect_word("to", "'to' or '->' between the cast's types");
  TypeId t = parse_type();
  Opcode code = lookup(kCasts, sizeof kCasts / sizeof kCasts[0], name);
  set_results({make1(code, {a}, t)});
}

void Reader::op_constant(const std::string&) {
  // 1024 : i32 | 1.0e+00 : f32 | 0xFF800000 : f32 | true | dense<V> : tensor<...>
  bool dense = c_.eat_word("dense");
  if (dense) c_.expect('<', "'<' after dense");
  Loc vat = c_.loc();
  enum { Int, Float, Hex, Bool } kind;
  NumLit n;
  bool bval = false;
  if (c_.eat_word("true")) {
    kind = Bool;
    bval = true;
  } else if (c_.eat_word("false")) {
    kind = Bool;
  } else if (c_.peek_number()) {
    n = c_.number("a constant");
    kind = n.kind == NumLit::Kind::Int ? Int : n.kind == NumLit::Kind::Float ? Float : Hex;
  } else if (dense && c_.peek() == '[') {
    unsupported("a constant tensor with different elements (dense<[...]>): Tri's const fills a block with one value");
  } else {
    c_.fail_expected("a constant value");
  }
  if (dense) c_.expect('>', "'>' closing dense<");
  skip_trailing_attrs();
  TypeId t;
  if (kind == Bool && c_.peek() != ':') {
    t = scalar(Scalar::I1);  // `arith.constant true` prints no type
  } else {
    c_.expect(':', "':' before the constant's type");
    t = parse_type();
  }
  Scalar s;
  if (!m_->types.elem_scalar(t, &s)) malformed("a constant of pointer type");
  Attr value;
  if (kind == Bool) {
    if (s != Scalar::I1) c_.fail(vat, "a boolean constant of a type other than i1");
    value = Attr::of_bool(bval);
  } else if (is_int(s)) {
    if (kind == Float) c_.fail(vat, "a float constant of integer type");
    int64_t v = kind == Int ? n.i : static_cast<int64_t>(n.bits);
    if (s == Scalar::I1) {
      value = Attr::of_bool(v & 1);
    } else {
      // Keep the value in range of the type, read as signed (MLIR prints i8 255 as -1).
      int bits = scalar_bits(s);
      if (bits < 64) {
        uint64_t mask = (uint64_t(1) << bits) - 1;
        uint64_t u = static_cast<uint64_t>(v) & mask;
        if (u >> (bits - 1)) u |= ~mask;
        v = static_cast<int64_t>(u);
      }
      value = Attr::of_int(v);
    }
  } else {
    double d = 0;
    if (kind == Float) {
      d = n.f;
    } else if (kind == Int) {
      d = static_cast<double>(n.i);
    } else if (s == Scalar::F32) {
      uint32_t b = static_cast<uint32_t>(n.bits);
      float fv;
      std::memcpy(&fv, &b, 4);
      d = fv;
    } else if (s == Scalar::F64) {
      std::memcpy(&d, &n.bits, 8);
    } else if (s == Scalar::F16) {
      d = half_bits_to_double(n.bits & 0xffff);
    } else if (s == Scalar::BF16) {
      uint32_t b = static_cast<uint32_t>(n.bits & 0xffff) << 16;
      float fv;
      std::memcpy(&fv, &b, 4);
      d = fv;
    } else {
      unsupported("a hex constant of type " + m_->type_str(t) + " is not imported yet");
    }
    if (kind == Bool) c_.fail(vat, "a boolean constant of float type");
    value = Attr::of_float(d);
  }
  set_results({make1(Opcode::Const, {}, t, {value})});
}

void Reader::op_poison(const std::string&) {
  // ub.poison : T — any value will do; Tri's zero is one.
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  Scalar s;
  if (!m_->types.elem_scalar(t, &s)) unsupported("ub.poison of pointer type is not imported");
  set_results({make1(Opcode::Const, {}, t, {is_int(s) ? Attr::of_int(0) : Attr::of_float(0)})});
}

// ---------------------------------------------------------------- program, ranges, shapes

void Reader::op_program(const std::string& name) {
  Loc at = c_.loc();
  std::string axis = c_.ident("an axis (x, y or z)");
  int a = axis == "x" ? 0 : axis == "y" ? 1 : axis == "z" ? 2 : -1;
  if (a < 0) c_.fail(at, "expected an axis x, y or z, found '" + axis + "'");
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  set_results({make1(name == "tt.get_program_id" ? Opcode::ProgramId : Opcode::NumPrograms, {}, t,
                     {Attr::of_int(a)})});
}

void Reader::op_make_range(const std::string&) {
  AttrDict d = parse_dict();
  auto start = d.find("start"), end = d.find("end");
  if (start == d.end() || end == d.end() || start->second.kind != AttrVal::Kind::Int ||
      end->second.kind != AttrVal::Kind::Int)
    malformed("tt.make_range needs integer attributes start and end");
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  set_results({make1(Opcode::Arange, {}, t, {Attr::of_int(start->second.i), Attr::of_int(end->second.i)})});
}

void Reader::op_shape(const std::string& name) {
  std::vector<ValueId> ops = operand_list();
  size_t want = (name == "tt.join" || name == "tt.cat") ? 2 : 1;
  if (ops.size() != want) malformed("'" + name + "' takes " + std::to_string(want) + " operand(s)");
  // tt.reshape's flags: allow_reorder (any element order will do; Tri keeps row-major order,
  // which is one of them) and efficient_layout (a layout hint).
  while (c_.eat_word("allow_reorder") || c_.eat_word("efficient_layout")) {
  }
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  parse_type();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId t = parse_type();
  if (name == "tt.split") {
    OpId o = make(Opcode::Split, ops, {t, t});
    set_results({f_->ops[o].results[0], f_->ops[o].results[1]});
    return;
  }
  Opcode code = name == "tt.splat" ? Opcode::Splat
                : name == "tt.broadcast" ? Opcode::Broadcast
                : name == "tt.reshape"   ? Opcode::Reshape
                : name == "tt.join"      ? Opcode::Join
                                         : Opcode::Cat;
  set_results({make1(code, ops, t)});
}

void Reader::op_expand_dims(const std::string&) {
  ValueId a = operand();
  AttrDict d = parse_dict();
  auto axis = d.find("axis");
  if (axis == d.end() || axis->second.kind != AttrVal::Kind::Int) malformed("tt.expand_dims needs an integer axis");
  c_.expect(':', "':' before the types");
  parse_type();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId t = parse_type();
  set_results({make1(Opcode::ExpandDims, {a}, t, {Attr::of_int(axis->second.i)})});
}

void Reader::op_trans(const std::string&) {
  ValueId a = operand();
  AttrDict d = parse_dict();
  auto order = d.find("order");
  if (order == d.end() || order->second.kind != AttrVal::Kind::Ints) malformed("tt.trans needs order = array<i32: ...>");
  c_.expect(':', "':' before the types");
  parse_type();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId t = parse_type();
  set_results({make1(Opcode::Permute, {a}, t, {Attr::of_ints(order->second.ints)})});
}

void Reader::op_addptr(const std::string&) {
  ValueId p = operand();
  c_.expect(',', "','");
  ValueId o = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  TypeId t = parse_type();
  c_.expect(',', "',' between the types");
  parse_type();
  set_results({make1(Opcode::AddPtr, {p, o}, t)});
}

// ---------------------------------------------------------------- memory

std::string modifier_word(const AttrVal& v, bool eviction) {
  if (v.kind == AttrVal::Kind::Word) return v.s;
  if (v.kind == AttrVal::Kind::Int) {
    static const char* cache[] = {"?", "none", "ca", "cg", "wb", "cs", "wt", "cv"};
    static const char* evict[] = {"?", "evict_normal", "evict_first", "evict_last"};
    if (eviction) return v.i >= 1 && v.i <= 3 ? evict[v.i] : "?";
    return v.i >= 1 && v.i <= 7 ? cache[v.i] : "?";
  }
  return "?";
}


void Reader::op_load(const std::string&) {
  std::vector<ValueId> ops = operand_list();
  if (ops.empty() || ops.size() > 3) malformed("tt.load takes a pointer, a mask and an other value");
  AttrDict attrs;
  while (c_.peek() == '{' || c_.peek_ident()) {
    if (c_.peek() == '{') {
      AttrDict d = parse_dict();
      attrs.insert(d.begin(), d.end());
    } else {
      std::string k = c_.ident("an attribute");
      AttrVal v;
      if (c_.eat('=')) v = parse_attr_value();
      attrs[k] = v;
    }
  }
  c_.expect(':', "':' before the type");
  TypeId pt = parse_type();
  std::string cache = "none", evict = "evict_normal";
  bool vol = false;
  for (const auto& [k, v] : attrs) {
    if (k == "cachePolicy" && v.kind == AttrVal::Kind::Dict) {
      auto cm = v.dict.find("cache_modifier"), ev = v.dict.find("eviction_policy");
      if (cm != v.dict.end()) cache = modifier_word(cm->second, false);
      if (ev != v.dict.end()) evict = modifier_word(ev->second, true);
    } else if (k == "cache" || k == "cacheModifier") {
      cache = modifier_word(v, false);
    } else if (k == "evict" || k == "evictionPolicy") {
      evict = modifier_word(v, true);
    } else if (k == "isVolatile") {
      vol = v.kind == AttrVal::Kind::Unit || ((v.kind == AttrVal::Kind::Bool || v.kind == AttrVal::Kind::Int) && v.i);
    } else if (k == "boundaryCheck" || k == "padding") {
      unsupported("tt.load with " + k + " (block pointers) has no Tri counterpart");
    }
  }
  if (!m_->types.is_block(pt) && !m_->types.is_ptr(pt)) malformed("tt.load's type is not a pointer or a block of them");
  TypeId pe = elem_scalar_type(pt);
  if (!m_->types.is_ptr(pe)) malformed("tt.load's type is not a pointer or a block of them");
  TypeId rt = m_->types.with_elem(pt, m_->types.get(pe).pointee);
  std::vector<ValueId> operands = {ops[0], ops.size() > 1 ? ops[1] : kNoValue, ops.size() > 2 ? ops[2] : kNoValue};
  std::string e = evict.rfind("evict_", 0) == 0 ? evict.substr(6) : evict;
  set_results({make1(Opcode::Load, operands, rt,
                     {enum_attr(Opcode::Load, "cache", cache), enum_attr(Opcode::Load, "evict", e),
                      Attr::of_bool(vol)})});
}

void Reader::op_store(const std::string&) {
  std::vector<ValueId> ops = operand_list();
  if (ops.size() < 2 || ops.size() > 3) malformed("tt.store takes a pointer, a value and a mask");
  AttrDict attrs;
  while (c_.peek() == '{' || c_.peek_ident()) {
    if (c_.peek() == '{') {
      AttrDict d = parse_dict();
      attrs.insert(d.begin(), d.end());
    } else {
      std::string k = c_.ident("an attribute");
      AttrVal v;
      if (c_.eat('=')) v = parse_attr_value();
      attrs[k] = v;
    }
  }
  c_.expect(':', "':' before the type");
  parse_type();
  std::string cache = "none", evict = "evict_normal";
  for (const auto& [k, v] : attrs) {
    if (k == "cachePolicy" && v.kind == AttrVal::Kind::Dict) {
      auto cm = v.dict.find("cache_modifier"), ev = v.dict.find("eviction_policy");
      if (cm != v.dict.end()) cache = modifier_word(cm->second, false);
      if (ev != v.dict.end()) evict = modifier_word(ev->second, true);
    } else if (k == "cache" || k == "cacheModifier") {
      cache = modifier_word(v, false);
    } else if (k == "evict" || k == "evictionPolicy") {
      evict = modifier_word(v, true);
    } else if (k == "boundaryCheck") {
      unsupported("tt.store with boundaryCheck (block pointers) has no Tri counterpart");
    }
  }
  std::string e = evict.rfind("evict_", 0) == 0 ? evict.substr(6) : evict;
  make(Opcode::Store, {ops[0], ops[1], ops.size() > 2 ? ops[2] : kNoValue}, {},
       {enum_attr(Opcode::Store, "cache", cache), enum_attr(Opcode::Store, "evict", e)});
}

void Reader::op_atomic_rmw(const std::string&) {
  std::string kind = c_.ident("an atomic kind");
  c_.expect(',', "','");
  std::string sem = c_.ident("a memory order");
  c_.expect(',', "','");
  std::string scope = c_.ident("a scope");
  c_.expect(',', "','");
  std::vector<ValueId> ops = operand_list();
  if (ops.size() < 2 || ops.size() > 3) malformed("tt.atomic_rmw takes a pointer, a value and a mask");
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  parse_type_list();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId t = parse_type();
  std::string k = kind == "fadd" ? "add" : kind == "exch" ? "xchg" : kind;
  set_results({make1(Opcode::Atomic, {ops[0], ops[1], ops.size() > 2 ? ops[2] : kNoValue}, t,
                     {enum_attr(Opcode::Atomic, "kind", k), enum_attr(Opcode::Atomic, "order", sem),
                      enum_attr(Opcode::Atomic, "scope", scope)})});
}

void Reader::op_atomic_cas(const std::string&) {
  std::string sem = c_.ident("a memory order");
  c_.expect(',', "','");
  std::string scope = c_.ident("a scope");
  c_.expect(',', "','");
  std::vector<ValueId> ops = operand_list();
  if (ops.size() != 3) malformed("tt.atomic_cas takes a pointer, a compare value and a new value");
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  parse_type_list();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId t = parse_type();
  set_results({make1(Opcode::AtomicCas, {ops[0], ops[1], ops[2], kNoValue}, t,
                     {enum_attr(Opcode::AtomicCas, "order", sem), enum_attr(Opcode::AtomicCas, "scope", scope)})});
}

// ---------------------------------------------------------------- dot, extern calls, fp_to_fp

void Reader::op_dot(const std::string&) {
  ValueId a = operand();
  c_.expect(',', "','");
  ValueId b = operand();
  c_.expect(',', "','");
  ValueId acc = operand();
  std::string precision = "ieee";
  while (c_.eat(',')) {
    std::string k = c_.ident("a tt.dot attribute");
    c_.expect('=', "'='");
    AttrVal v = parse_attr_value();
    if (k == "inputPrecision") precision = v.kind == AttrVal::Kind::Word ? v.s : "?";
  }
  int64_t imprecise = 0;  // maxNumImpreciseAcc: how many products f8 wgmma may sum imprecisely
  if (c_.peek() == '{') {
    const AttrDict d = parse_dict();
    auto it = d.find("maxNumImpreciseAcc");
    if (it != d.end() && it->second.kind == AttrVal::Kind::Int) imprecise = it->second.i;
  }
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  TypeId ta = parse_type();
  c_.expect('*', "'*' between the operand types");
  parse_type();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId t = parse_type();
  // Triton's input precision only matters for f32 inputs: tf32 rounds them to tf32 first (Tri's
  // precision=tf32); ieee, tf32x3, bf16x3 and bf16x6 are read as ieee (exact f32 products, at least
  // as accurate as the emulations they name).
  Scalar sa;
  bool f32_inputs = m_->types.elem_scalar(ta, &sa) && sa == Scalar::F32;
  std::string p = f32_inputs && precision == "tf32" ? "tf32" : "ieee";
  // f8 inputs that Triton lets accumulate imprecisely over at least the block's K (no promotion
  // to a separate f32 sum inside the dot: its default, 2^30) are Tri's precision=fast, which
  // allows the same (sm_90's f8 wgmma); a smaller bound is read as ieee.
  const ir::TypeData& tad = m_->types.get(ta);
  const bool f8_inputs = m_->types.elem_scalar(ta, &sa) && (sa == Scalar::F8E4M3 || sa == Scalar::F8E5M2);
  if (f8_inputs && tad.kind == ir::TypeKind::Block && !tad.dims.empty() && !tad.dims.back().symbolic &&
      imprecise >= tad.dims.back().value)
    p = "fast";
  if (precision != "tf32" && precision != "ieee" && precision != "tf32x3" && precision != "bf16x3" &&
      precision != "bf16x6")
    unsupported("tt.dot with inputPrecision = " + precision + " is not imported");
  Scalar sc;
  if (m_->types.elem_scalar(t, &sc) && (sc == Scalar::F16 || sc == Scalar::BF16))
    unsupported("tt.dot with a " + std::string(scalar_name(sc)) +
                " accumulator: Tri's dot accumulates 16-bit float inputs in f32 only (use out_dtype=tl.float32)");
  set_results({make1(Opcode::Dot, {a, b, acc}, t, {enum_attr(Opcode::Dot, "precision", p)})});
}

void Reader::op_fp_to_fp(const std::string&) {
  ValueId a = operand();
  std::string rounding;
  if (c_.eat(',')) {
    c_.expect_word("rounding", "'rounding'");
    c_.expect('=', "'='");
    rounding = c_.ident("a rounding mode");
  }
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  TypeId from = parse_type();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId to = parse_type();
  Scalar sf, st;
  if (!m_->types.elem_scalar(from, &sf) || !m_->types.elem_scalar(to, &st) || !is_float(sf) || !is_float(st))
    malformed("tt.fp_to_fp converts between float types");
  int bf = scalar_bits(sf), bt = scalar_bits(st);
  if (rounding.empty()) rounding = "rtne";
  if (rounding != "rtne" && rounding != "rtz") unsupported("tt.fp_to_fp with rounding = " + rounding);
  ValueId v = a;
  if (bf == bt && sf != st) {
    // f16 <-> bf16: through f32 (exact), then rounded.
    v = make1(Opcode::FPExt, {v}, m_->types.with_elem(from, scalar(Scalar::F32)));
    v = make1(Opcode::FPTrunc, {v}, to, {enum_attr(Opcode::FPTrunc, "rounding", rounding)});
  } else if (bf < bt) {
    v = make1(Opcode::FPExt, {v}, to);
  } else if (bf > bt) {
    v = make1(Opcode::FPTrunc, {v}, to, {enum_attr(Opcode::FPTrunc, "rounding", rounding)});
  } else {
    v = make1(Opcode::Bitcast, {v}, to);  // the same type: a no-op
  }
  set_results({v});
}

// ---------------------------------------------------------------- calls and debugging

void Reader::op_call(const std::string&) {
  std::string callee = c_.symbol_ref("a callee (@name)");
  c_.expect('(', "'(' opening the call's arguments");
  std::vector<ValueId> args = operand_list();
  c_.expect(')', "')' closing the call's arguments");
  skip_trailing_attrs();
  c_.expect(':', "':' before the call's type");
  parse_type_list();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  std::vector<TypeId> rts = parse_type_list();
  OpId o = make(Opcode::Call, args, rts, {Attr::of_func(tri_func_name(callee))});
  set_results(f_->ops[o].results);
}

void Reader::op_return(const std::string&) {
  std::vector<ValueId> vals = operand_list();
  if (!vals.empty()) {
    c_.expect(':', "':' before the returned types");
    parse_type_list();
  }
  make(Opcode::Return, vals, {});
}

void Reader::op_assert(const std::string&) {
  ValueId cond = operand();
  std::string msg;
  if (c_.eat(',')) msg = c_.string_lit("the assert's message");
  // Triton 2.x/3.0 also printed the file, function and line; the op's location says the same.
  while (c_.eat(',')) {
    if (c_.peek_string()) {
      c_.string_lit("a string");
    } else {
      c_.number("a line number");
    }
  }
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  parse_type();
  make(Opcode::Assert, {cond, kNoValue}, {}, {Attr::of_str(msg)});
}

void Reader::op_assume(const std::string&) {
  // llvm.intr.assume %c : i1 (tl.assume): a fact for axis info, like Tri's assume.
  ValueId cond = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  Scalar s;
  if (m_->types.is_block(t) || !m_->types.elem_scalar(t, &s) || s != Scalar::I1)
    unsupported("llvm.intr.assume of a value that is not an i1 scalar");
  make(Opcode::Assume, {cond}, {});
}

void Reader::op_print(const std::string&) {
  std::string prefix = c_.string_lit("the print's prefix");
  AttrDict d;
  if (c_.peek() == '{') d = parse_dict();
  auto hex = d.find("hex");
  if (hex != d.end() && hex->second.kind == AttrVal::Kind::Bool && hex->second.i)
    unsupported("tt.print with hex=True: Tri's print writes decimal values");
  std::vector<ValueId> vals;
  if (c_.eat(':')) {
    vals = operand_list();
    if (!vals.empty()) {
      c_.expect(':', "':' before the printed types");
      parse_type_list();
    }
  }
  // Triton's prefix starts with a space it adds itself (" x: "); Tri prints the prefix as given.
  if (!prefix.empty() && prefix[0] == ' ') prefix.erase(0, 1);
  std::vector<ValueId> operands = vals;
  operands.push_back(kNoValue);
  make(Opcode::Print, operands, {}, {Attr::of_str(prefix)});
}

void Reader::op_barrier(const std::string&) {
  // tl.debug_barrier(): `ttg.barrier all` (Triton 3.9) or `gpu.barrier` (earlier 3.x). The
  // memory spaces Triton names (all, local, global) are all the same to Tri's debug_barrier.
  while (c_.eat_word("all") || c_.eat_word("local") || c_.eat_word("global") || c_.eat_word("shared") || c_.eat('|')) {
  }
  skip_trailing_attrs();
  make(Opcode::DebugBarrier, {}, {});
}

void Reader::op_grid_dependency(const std::string&) {
  // tl.extra.cuda.gdc_wait / gdc_launch_dependents (Triton 3.9): programmatic dependent launch.
  // Tri does not launch kernels as dependents of others, and without that both are no-ops.
  skip_trailing_attrs();
}

// ---------------------------------------------------------------- clamp, gather, unsplat, asm

ValueId Reader::const_i32(int64_t v) { return cst_int(scalar(Scalar::I32), v); }

ValueId Reader::filler(TypeId t) {
  Scalar s;
  if (m_->types.elem_scalar(t, &s)) return is_float(s) ? cst_float(t, 0.0) : cst_int(t, 0);
  ValueId p = make1(Opcode::IntToPtr, {cst_int(scalar(Scalar::I64), 0)}, elem_scalar_type(t));
  return m_->types.is_block(t) ? make1(Opcode::Splat, {p}, t) : p;
}

void Reader::op_clampf(const std::string&) {
  // tt.clampf %x, %lo, %hi, propagateNan = none|all : T
  ValueId x = operand();
  c_.expect(',', "','");
  ValueId lo = operand();
  c_.expect(',', "','");
  ValueId hi = operand();
  std::string prop = "none";
  if (c_.eat(',')) {
    c_.expect_word("propagateNan", "'propagateNan'");
    c_.expect('=', "'='");
    prop = c_.ident("none or all");
  }
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  if (prop != "none" && prop != "all") unsupported("tt.clampf with propagateNan = " + prop);
  // Triton lowers clampf to minnum(maxnum(x, lo), hi) (NaN in x gives lo) or, with
  // propagate_nan=ALL, to minimum(maximum(x, lo), hi) (NaN in x gives NaN): fmin/fmax with
  // nan=ignore or nan=propagate.
  Attr nan = enum_attr(Opcode::FMax, "nan", prop == "all" ? "propagate" : "ignore");
  ValueId v = make1(Opcode::FMax, {x, lo}, t, {nan});
  set_results({make1(Opcode::FMin, {v, hi}, t, {nan})});
}

void Reader::op_gather(const std::string&) {
  // tt.gather %src[%idx] {axis = A : i32} : (tensor<S x E>, tensor<I x iN>) -> tensor<I x E>
  ValueId src = operand();
  c_.expect('[', "'['");
  ValueId idx = operand();
  c_.expect(']', "']'");
  AttrDict d = parse_dict();
  c_.expect(':', "':' before the types");
  parse_type_list();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId rt = parse_type();
  auto ax = d.find("axis");
  if (ax == d.end() || ax->second.kind != AttrVal::Kind::Int) malformed("tt.gather needs an integer axis");
  TypeId st = f_->type_of(src), it = f_->type_of(idx);
  Scalar ss, is;
  if (!m_->types.is_block(st) || !m_->types.is_block(it) || !m_->types.elem_scalar(it, &is) || !is_int(is) ||
      is == Scalar::I1)
    malformed("tt.gather takes a tensor and a tensor of integer indices");
  if (!m_->types.elem_scalar(st, &ss)) unsupported("tt.gather of pointers is not imported");
  std::vector<Dim> sdims = m_->types.get(st).dims, idims = m_->types.get(it).dims;
  int r = static_cast<int>(sdims.size());
  int64_t a = ax->second.i;
  if (a < 0 || a >= r || static_cast<int>(idims.size()) != r || rt != m_->types.with_elem(it, scalar(ss)))
    malformed("tt.gather's types do not fit its axis");
  for (int k = 0; k < r; ++k)
    if (k != a && sdims[k] != idims[k]) malformed("tt.gather's index has another shape than its source off the axis");
  if (r + 1 > kMaxBlockRank)
    unsupported("tt.gather of a rank-4 tensor: the importer gathers through a block of one more dimension, and Tri's "
                "blocks have rank 1 to 4");
  // out[i] = src[i with i[a] := idx[i]], as an or-reduction over the K candidates of the axis of
  // one-hot selections of src's bits (exact for every value, -0.0 and NaN payloads included;
  // indices outside [0, K), whose result Triton leaves undefined, give 0).
  int64_t K = sdims[a].value;
  Scalar cs = scalar_bits(is) < 32 ? Scalar::I32 : is;
  if (cs != is) idx = make1(Opcode::SExt, {idx}, m_->types.with_elem(it, scalar(cs)));
  std::vector<Dim> full = idims;
  full.push_back(Dim::lit(K));
  std::vector<Dim> col = idims;
  col.push_back(Dim::lit(1));
  TypeId full_c = m_->types.block(full, scalar(cs));
  ValueId ie = make1(Opcode::ExpandDims, {idx}, m_->types.block(col, scalar(cs)), {Attr::of_int(r)});
  ie = make1(Opcode::Broadcast, {ie}, full_c);
  ValueId kr = make1(Opcode::Arange, {}, m_->types.block({Dim::lit(K)}, scalar(Scalar::I32)),
                     {Attr::of_int(0), Attr::of_int(K)});
  if (cs != Scalar::I32) kr = make1(Opcode::SExt, {kr}, m_->types.block({Dim::lit(K)}, scalar(cs)));
  std::vector<Dim> row(r, Dim::lit(1));
  row.push_back(Dim::lit(K));
  kr = make1(Opcode::Reshape, {kr}, m_->types.block(row, scalar(cs)));
  kr = make1(Opcode::Broadcast, {kr}, full_c);
  ValueId hit = make1(Opcode::Cmp, {ie, kr}, m_->types.block(full, scalar(Scalar::I1)), {enum_attr(Opcode::Cmp, "pred", "eq")});
  Scalar bs = ss;
  if (is_float(ss)) {
    int bits = scalar_bits(ss);
    bs = bits == 64 ? Scalar::I64 : bits == 32 ? Scalar::I32 : bits == 16 ? Scalar::I16 : Scalar::I8;
    src = make1(Opcode::Bitcast, {src}, m_->types.with_elem(st, scalar(bs)));
  }
  // src with axis a moved last, then a dimension of 1 at a: <.. x 1 (at a) x .. x K>.
  std::vector<int64_t> order;
  std::vector<Dim> moved;
  for (int k = 0; k < r; ++k)
    if (k != a) order.push_back(k), moved.push_back(sdims[k]);
  order.push_back(a);
  moved.push_back(sdims[a]);
  if (a != r - 1) src = make1(Opcode::Permute, {src}, m_->types.block(moved, scalar(bs)), {Attr::of_ints(order)});
  std::vector<Dim> expanded = moved;
  expanded.insert(expanded.begin() + a, Dim::lit(1));
  src = make1(Opcode::ExpandDims, {src}, m_->types.block(expanded, scalar(bs)), {Attr::of_int(a)});
  TypeId full_b = m_->types.block(full, scalar(bs));
  src = make1(Opcode::Broadcast, {src}, full_b);
  ValueId pick = make1(Opcode::Select, {hit, src, cst_int(full_b, 0)}, full_b);
  ValueId v = make1(Opcode::Reduce, {pick}, m_->types.with_elem(it, scalar(bs)),
                    {Attr::of_int(r), enum_attr(Opcode::Reduce, "kind", "or")});
  if (bs != ss) v = make1(Opcode::Bitcast, {v}, rt);
  set_results({v});
}

void Reader::op_unsplat(const std::string&) {
  // tt.unsplat %t : tensor<1xT> (an `if` on a one-element tensor): the element, as a scalar.
  ValueId x = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the type");
  TypeId t = parse_type();
  if (!m_->types.is_block(t) || f_->type_of(x) != t || m_->types.num_elements(t) != 1)
    malformed("tt.unsplat takes a tensor of one element");
  TypeId e = elem_scalar_type(t);
  Scalar s;
  if (!m_->types.elem_scalar(t, &s)) unsupported("tt.unsplat of a pointer is not imported");
  if (m_->types.rank(t) > 1) x = make1(Opcode::Reshape, {x}, m_->types.block({Dim::lit(1)}, e));
  // A reduction whose combine region keeps its first operand: the one element, bit for bit.
  OpId o = make(Opcode::Reduce, {x}, {e}, {Attr::of_int(0), Attr::none()});
  BlockId saved = b_->insertion_block();
  BlockId region = b_->add_region(o, {e, e});
  b_->set_insertion_block(region);
  make(Opcode::Yield, {f_->blocks[region].args[0]}, {});
  b_->set_insertion_block(saved);
  set_results({f_->ops[o].results[0]});
}

void Reader::op_inline_asm(const std::string&) {
  // tt.elementwise_inline_asm "asm" {constraints = "...", packed_element = N : i32, pure = B} %a, ... : Ts -> Rs
  std::string asm_text = c_.string_lit("the asm text");
  AttrDict d = parse_dict();
  std::vector<ValueId> args = operand_list();
  c_.expect(':', "':' before the types");
  if (!args.empty()) parse_type_list();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  std::vector<TypeId> rts = parse_type_list();
  auto cons = d.find("constraints");
  if (cons == d.end() || cons->second.kind != AttrVal::Kind::Str) malformed("tt.elementwise_inline_asm needs constraints");
  auto pack = d.find("packed_element");
  auto pure = d.find("pure");
  int64_t packed = pack != d.end() && pack->second.kind == AttrVal::Kind::Int ? pack->second.i : 1;
  bool is_pure = pure == d.end() || (pure->second.kind == AttrVal::Kind::Bool && pure->second.i);
  // Tri's inline_asm: the same PTX, run by the GPU backend only (interp and cpu refuse it).
  OpId o = make(Opcode::InlineAsm, args, rts,
                {Attr::of_str(asm_text), Attr::of_str(cons->second.s), Attr::of_bool(is_pure), Attr::of_int(packed)});
  set_results(f_->ops[o].results);
}

void Reader::op_atomic_load_store(const std::string& name) {
  // tt.atomic_load acquire, gpu, %p, %mask : (P, M) -> T
  // tt.atomic_store release, gpu, %p, %v, %mask : P
  // tt.atomic_poll acquire, gpu, %p, %expected [timeout %t] : P, T -> R      (Triton 3.9)
  std::string sem = c_.ident("a memory order");
  c_.expect(',', "','");
  std::string scope = c_.ident("a scope");
  c_.expect(',', "','");
  std::vector<ValueId> ops = operand_list();
  bool timeout = c_.eat_word("timeout");
  if (timeout) operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  parse_type_list();
  TypeId rt = kNoType;
  if (c_.eat_punct("->")) rt = parse_type();
  size_t want = name == "tt.atomic_store" ? 3 : 2;
  if (ops.size() != want) malformed("'" + name + "' takes " + std::to_string(want) + " operands");
  TypeId pt = f_->type_of(ops[0]);
  TypeId pe = elem_scalar_type(pt);
  if (!m_->types.is_ptr(pe)) malformed("'" + name + "' needs pointers");
  TypeId et = m_->types.get(pe).pointee;
  Scalar es;
  m_->types.elem_scalar(et, &es);
  int bits = scalar_bits(es);
  if (bits != 32 && bits != 64)
    unsupported("'" + name + "' on " + scalar_name(es) + ": the importer makes it an atomic of 32 or 64 bits");
  Attr order = enum_attr(Opcode::Atomic, "order", sem), sc = enum_attr(Opcode::Atomic, "scope", scope);
  ValueId mask = name == "tt.atomic_poll" ? kNoValue : ops.back();
  // An atomic load is an atomic or with 0 (it returns the value and writes it back unchanged);
  // floats go through an integer view of the same bits.
  auto atomic_read = [&](ValueId ptrs, ValueId m) {
    TypeId ity = scalar(bits == 32 ? Scalar::I32 : Scalar::I64);
    TypeId vt = m_->types.with_elem(pt, et);
    ValueId p = ptrs;
    if (is_float(es)) p = make1(Opcode::Bitcast, {p}, m_->types.with_elem(pt, m_->types.ptr(ity)));
    TypeId iv = m_->types.with_elem(pt, ity);
    ValueId v = make1(Opcode::Atomic, {p, cst_int(iv, 0), m}, iv, {enum_attr(Opcode::Atomic, "kind", "or"), order, sc});
    return is_float(es) ? make1(Opcode::Bitcast, {v}, vt) : v;
  };
  if (name == "tt.atomic_store") {
    // An atomic store is an exchange whose old value is not used.
    make(Opcode::Atomic, {ops[0], ops[1], mask}, {m_->types.with_elem(pt, et)},
         {enum_attr(Opcode::Atomic, "kind", "xchg"), order, sc});
    return;
  }
  if (name == "tt.atomic_load") {
    set_results({atomic_read(ops[0], mask)});
    return;
  }
  // tt.atomic_poll: spin until every lane holds the expected value, then true.
  if (timeout) unsupported("tt.atomic_poll with a timeout: Tri has no clock to time it out by");
  if (rt == kNoType) malformed("tt.atomic_poll needs a result type");
  ValueId expected = ops[1];
  OpId w = make(Opcode::While, {}, {});
  BlockId saved = b_->insertion_block();
  BlockId before = b_->add_region(w, {});
  b_->set_insertion_block(before);
  ValueId v = atomic_read(ops[0], kNoValue);
  ValueId ne = make1(Opcode::Cmp, {v, expected}, m_->types.with_elem(pt, scalar(Scalar::I1)),
                     {enum_attr(Opcode::Cmp, "pred", "ne")});
  if (m_->types.is_block(pt)) {
    TypeId flat = m_->types.block({Dim::lit(m_->types.num_elements(pt))}, scalar(Scalar::I1));
    if (m_->types.rank(pt) > 1) ne = make1(Opcode::Reshape, {ne}, flat);
    ne = make1(Opcode::Reduce, {ne}, scalar(Scalar::I1), {Attr::of_int(0), enum_attr(Opcode::Reduce, "kind", "or")});
  }
  make(Opcode::Condition, {ne}, {});
  BlockId after = b_->add_region(w, {});
  b_->set_insertion_block(after);
  make(Opcode::Yield, {}, {});
  b_->set_insertion_block(saved);
  set_results({cst_int(rt, 1)});
}

// ---------------------------------------------------------------- regions

void Reader::op_reduce_scan(const std::string& name) {
  // "tt.reduce"(%a, %b) <{axis = 0 : i32}> ({ ^bb0(...): ... tt.reduce.return ... }) : (Ts) -> Rs
  c_.expect('(', "'(' opening the operands");
  std::vector<ValueId> srcs = operand_list();
  c_.expect(')', "')' closing the operands");
  if (srcs.empty()) malformed("'" + name + "' needs at least one operand");
  AttrDict props;
  if (c_.eat('<')) {
    props = parse_dict();  // properties: <{axis = 0 : i32, reverse = false}>
    c_.expect('>', "'>' closing the properties");
  } else if (c_.peek() == '{') {
    props = parse_dict();  // older printers: an attribute dictionary
  }
  auto axis = props.find("axis");
  if (axis == props.end() || axis->second.kind != AttrVal::Kind::Int) malformed("'" + name + "' needs an integer axis");
  bool reverse = false;
  auto rev = props.find("reverse");
  if (rev != props.end() && rev->second.kind == AttrVal::Kind::Bool) reverse = rev->second.i != 0;

  bool scan = name == "tt.scan";
  // The op comes first (so that the region's ops nest inside it); its result types are read from
  // the text after the region, so they are patched in below.
  std::vector<Attr> attrs = {Attr::of_int(axis->second.i), Attr::none()};
  if (scan) attrs.push_back(Attr::of_bool(reverse));
  Current mine = cur_;
  OpId o = make(scan ? Opcode::Scan : Opcode::Reduce, srcs, {}, attrs);
  mine.made = cur_.made;
  c_.expect('(', "'(' opening the region list");
  c_.expect('{', "'{' opening the combine region");
  push_scope();
  std::vector<std::string> names;
  std::vector<TypeId> types;
  parse_block_header(&names, &types);
  BlockId blk = b_->add_region(o, types);
  for (size_t i = 0; i < names.size(); ++i) define(names[i], f_->blocks[blk].args[i]);
  parse_ops_until_brace(blk, false);
  pop_scope();
  cur_ = mine;
  c_.expect(')', "')' closing the region list");
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  parse_type_list();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  std::vector<TypeId> rts = parse_type_list();
  for (uint32_t i = 0; i < rts.size(); ++i) {
    ValueId v = b_->new_value(rts[i], o, kNoBlock, i);
    f_->ops[o].results.push_back(v);
  }
  set_results(f_->ops[o].results);
}

void Reader::op_for(const std::string&) {
  // scf.for %iv = %lo to %hi step %s [iter_args(%a = %x, ...) -> (Ts)] : T { ... }
  std::string iv = c_.value_ref("the induction variable");
  c_.expect('=', "'='");
  ValueId lo = operand();
  c_.expect_word("to", "'to'");
  ValueId hi = operand();
  c_.expect_word("step", "'step'");
  ValueId step = operand();
  std::vector<std::string> iter_names;
  std::vector<ValueId> inits;
  std::vector<TypeId> rts;
  if (c_.eat_word("iter_args")) {
    c_.expect('(', "'(' after iter_args");
    if (!c_.eat(')')) {
      do {
        iter_names.push_back(c_.value_ref("a loop-carried value"));
        c_.expect('=', "'='");
        inits.push_back(operand());
      } while (c_.eat(','));
      c_.expect(')', "')' closing iter_args");
    }
    if (!c_.eat_punct("->")) c_.fail_expected("'->'");
    rts = parse_type_list();
    if (rts.size() != inits.size()) malformed("scf.for has " + std::to_string(inits.size()) + " iter_args but " +
                                              std::to_string(rts.size()) + " result types");
  }
  TypeId ivt;
  if (c_.eat(':')) {
    ivt = parse_type();
  } else {
    unsupported("scf.for over the index type (no ': i32' or ': i64'): the index type has no Tri counterpart");
  }
  std::vector<ValueId> operands = {lo, hi, step};
  operands.insert(operands.end(), inits.begin(), inits.end());
  Current mine = cur_;
  OpId o = make(Opcode::For, operands, rts);
  // Triton's software pipeliner issues a later iteration's loads before the stores of earlier
  // ones in any loop: its kernels may not pass values between iterations through memory, which
  // loads_ahead says (docs/ir.md), so Tri's pipeliner may do the same.
  f_->ops[o].attrs[ir::op_info(Opcode::For).attr_index("loads_ahead")] = Attr::of_bool(true);
  mine.made = cur_.made;
  std::vector<TypeId> arg_types = {ivt};
  arg_types.insert(arg_types.end(), rts.begin(), rts.end());
  c_.expect('{', "'{' opening the loop body");
  push_scope();
  BlockId blk = b_->add_region(o, arg_types);
  define(iv, f_->blocks[blk].args[0]);
  for (size_t i = 0; i < iter_names.size(); ++i) define(iter_names[i], f_->blocks[blk].args[i + 1]);
  parse_ops_until_brace(blk, true);
  pop_scope();
  skip_trailing_attrs();  // {tt.num_stages = 4 : i32} and the other loop hints of tl.range
  cur_ = mine;
  set_results(f_->ops[o].results);
}

void Reader::op_if(const std::string&) {
  // scf.if %c [-> (Ts)] { ... } [else { ... }]
  ValueId cond = operand();
  std::vector<TypeId> rts;
  if (c_.eat_punct("->")) rts = parse_type_list();
  Current mine = cur_;
  OpId o = make(Opcode::If, {cond}, rts);
  mine.made = cur_.made;
  c_.expect('{', "'{' opening the then region");
  push_scope();
  BlockId then_b = b_->add_region(o, {});
  parse_ops_until_brace(then_b, true);
  pop_scope();
  if (c_.eat_word("else")) {
    c_.expect('{', "'{' opening the else region");
    push_scope();
    BlockId else_b = b_->add_region(o, {});
    parse_ops_until_brace(else_b, true);
    pop_scope();
  }
  skip_trailing_attrs();
  cur_ = mine;
  set_results(f_->ops[o].results);
}

void Reader::op_while(const std::string&) {
  // scf.while (%a = %x, ...) : (Ts) -> (Rs) { ... scf.condition(%c) %v : Rs } do { ^bb0(...): ... }
  std::vector<std::string> names;
  std::vector<ValueId> inits;
  // `scf.while : () -> () {` has no initial values and no parenthesis.
  if (c_.eat('(') && !c_.eat(')')) {
    do {
      names.push_back(c_.value_ref("a loop value"));
      c_.expect('=', "'='");
      inits.push_back(operand());
    } while (c_.eat(','));
    c_.expect(')', "')'");
  }
  c_.expect(':', "':' before the while's types");
  std::vector<TypeId> its = parse_type_list();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  std::vector<TypeId> rts = parse_type_list();
  if (its.size() != inits.size()) malformed("scf.while's types do not match its initial values");
  Current mine = cur_;
  OpId o = make(Opcode::While, inits, rts);
  mine.made = cur_.made;
  c_.expect('{', "'{' opening the before region");
  push_scope();
  BlockId before = b_->add_region(o, its);
  if (c_.peek() == '^') {
    // A printed header names the arguments again; the names from the op's header are used.
    std::vector<std::string> n2;
    std::vector<TypeId> t2;
    parse_block_header(&n2, &t2);
    if (n2.size() == names.size()) names = n2;
  }
  for (size_t i = 0; i < names.size(); ++i) define(names[i], f_->blocks[before].args[i]);
  parse_ops_until_brace(before, false);
  pop_scope();
  c_.expect_word("do", "'do' before the after region");
  c_.expect('{', "'{' opening the after region");
  push_scope();
  std::vector<std::string> an;
  std::vector<TypeId> at;
  if (c_.peek() == '^') parse_block_header(&an, &at);
  BlockId after = b_->add_region(o, rts);
  if (!an.empty() && an.size() != rts.size()) malformed("scf.while's after region has the wrong number of arguments");
  for (size_t i = 0; i < an.size(); ++i) define(an[i], f_->blocks[after].args[i]);
  parse_ops_until_brace(after, true);
  pop_scope();
  skip_trailing_attrs();
  cur_ = mine;
  set_results(f_->ops[o].results);
}

void Reader::op_yield(const std::string&) {
  std::vector<ValueId> vals = operand_list();
  if (!vals.empty()) {
    c_.expect(':', "':' before the yielded types");
    parse_type_list();
  }
  make(Opcode::Yield, vals, {});
}

void Reader::op_condition(const std::string&) {
  c_.expect('(', "'(' after scf.condition");
  ValueId cond = operand();
  c_.expect(')', "')'");
  std::vector<ValueId> vals = operand_list();
  if (!vals.empty()) {
    c_.expect(':', "':' before the types");
    parse_type_list();
  }
  std::vector<ValueId> operands = {cond};
  operands.insert(operands.end(), vals.begin(), vals.end());
  make(Opcode::Condition, operands, {});
}

}  // namespace tri::import
