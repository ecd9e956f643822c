// Tensor descriptors in TTIR (tl.make_tensor_descriptor, a TensorDescriptor kernel argument,
// desc.load / store / gather / scatter / atomic_*), lowered at import to pointer arithmetic with
// the descriptor's bounds as masks, so that they run on every target (docs/import.md,
// "Tensor descriptors").
//
// A descriptor is a base pointer, a shape (i32 per dimension) and strides (i64, in elements; the
// last is 1, as it is for TMA, whose innermost dimension is contiguous by definition). Loading
// the block at offsets [o0, o1, ...] reads element [i0, i1, ...] at base + sum_d (o_d + i_d) *
// stride_d where 0 <= o_d + i_d < shape_d for every d, and gives zero (NaN with
// padding_option="nan") elsewhere; a store writes only the elements in bounds; a reduction is an
// atomic per element in bounds. No descriptor value exists in Tri's IR: the reader keeps each
// one as a placeholder value that only the tt.descriptor_* ops may use (Reader::use refuses any
// other use), and makes the address arithmetic at each access.
//
// Where TMA would hook in: the accesses made here are plain masked loads and stores over the
// block; an `ir` op for a descriptor access (or a pass recognizing these accesses on a
// 16-byte-aligned base with one contiguous dimension) is where a later change turns them into
// cp.async.bulk.tensor on sm_90.
#include <algorithm>
#include <cmath>

#include "import/triton/ttir_reader.h"
#include "ir/limits.h"

namespace tri::import {

using namespace tri::ir;

void Reader::parse_desc_type_body(Desc* d) {
  // <tensor<16x32xf32>> (Triton 3.6) or <16x32xf32> (3.9); integer elements may say their
  // signedness (ui32, si64).
  Loc at = c_.loc();
  c_.expect('<', "'<' opening the descriptor type");
  bool wrapped = c_.eat_word("tensor");
  if (wrapped) c_.expect('<', "'<' after tensor");
  d->block.clear();
  while (c_.peek_number()) {
    uint64_t n = c_.uint("a dimension");
    if (n == 0 || n > static_cast<uint64_t>(kMaxDim))
      unsupported_at(at, "a tensor descriptor block dimension of " + std::to_string(n));
    d->block.push_back(static_cast<int64_t>(n));
    if (c_.peek() != 'x') c_.fail_expected("'x' after a dimension");
    c_.eat('x');
  }
  if (d->block.empty()) c_.fail(at, "a tensor descriptor without a block shape");
  if (d->block.size() > static_cast<size_t>(kMaxBlockRank))
    unsupported_at(at, "a tensor descriptor of rank " + std::to_string(d->block.size()) +
                           " (Tri's blocks have rank 1 to 4)");
  std::string w = c_.ident("an element type");
  d->is_unsigned = w.rfind("ui", 0) == 0;
  if (w.rfind("ui", 0) == 0 || w.rfind("si", 0) == 0) w = w.substr(1);
  Scalar s;
  if (!mlir_scalar_type(w, &s)) unsupported_at(at, "a tensor descriptor of element type '" + w + "'");
  d->elem = scalar(s);
  if (c_.peek() == ',') unsupported_at(c_.loc(), "a tensor descriptor with an encoding (TTGIR, not TTIR)");
  if (wrapped) c_.expect('>', "'>' closing tensor<");
  c_.expect('>', "'>' closing the descriptor type");
}

std::vector<ValueId> Reader::bracketed_operands(const char* what) {
  c_.expect('[', what);
  std::vector<ValueId> out = operand_list();
  c_.expect(']', "']'");
  return out;
}

void Reader::skip_desc_type() {
  c_.expect('!', "'!tt.tensordesc'");
  c_.ident("!tt.tensordesc");
  Desc ty;
  parse_desc_type_body(&ty);
}

const Desc& Reader::desc_operand() {
  Loc at = c_.loc();
  std::string n = c_.value_ref("a tensor descriptor (%name)");
  desc_use_ = true;
  ValueId v = use(n, at);
  desc_use_ = false;
  auto it = descs_.find(v);
  if (it == descs_.end()) c_.fail(at, "%" + n + " is not a tensor descriptor");
  return it->second;
}

void Reader::bind_descriptor_params(const std::vector<std::string>& names, const std::vector<int>& desc_params,
                                    const std::vector<Desc>& descs, Loc fn_at) {
  // Triton's frontend writes a TensorDescriptor argument as the descriptor followed by its shape
  // (i32 each) and strides (i64 each); the launcher passes the same values twice, once inside
  // the CUtensorMap. Here the descriptor's own parameter becomes its base pointer.
  for (size_t k = 0; k < desc_params.size(); ++k) {
    int i = desc_params[k];
    Desc d = descs[k];
    size_t rank = d.block.size();
    bool ok = static_cast<size_t>(i) + 2 * rank < f_->params.size();
    for (size_t j = 0; ok && j < rank; ++j) {
      ok = f_->params[i + 1 + j].type == scalar(Scalar::I32) && f_->params[i + 1 + rank + j].type == scalar(Scalar::I64);
      ok = ok && !descs_.count(f_->params[i + 1 + j].value);
    }
    if (!ok)
      unsupported_at(fn_at, "tensor descriptor parameter %" + names[i] + " is not followed by its shape (" +
                                std::to_string(rank) + " x i32) and strides (" + std::to_string(rank) +
                                " x i64), as Triton's frontend writes a TensorDescriptor argument");
    d.base = f_->params[i].value;
    for (size_t j = 0; j < rank; ++j) {
      d.shape.push_back(f_->params[i + 1 + j].value);
      d.strides.push_back(f_->params[i + 1 + rank + j].value);
    }
    if (f_->is_kernel) {
      // What Triton's TensorDescriptor asserts on the host (and TMA requires): a 16-byte aligned
      // base and strides of whole 16-byte units but the last. Checked mode checks them.
      f_->params[i].align = 16;
      Scalar es;
      m_->types.elem_scalar(d.elem, &es);
      int bytes = scalar_bits(es) / 8;
      if (bytes > 0 && bytes <= 16)
        for (size_t j = 0; j + 1 < rank; ++j) f_->params[i + 1 + rank + j].divisible = static_cast<uint32_t>(16 / bytes);
    }
    ValueId placeholder = b_->new_value(f_->params[i].type, kNoOp, kNoBlock, 0);
    descs_.emplace(placeholder, std::move(d));
    scopes_.back()[names[i]] = placeholder;
  }
  if (std::find(structured_.begin(), structured_.end(), f_) == structured_.end()) structured_.push_back(f_);
}

void Reader::op_make_descriptor(const std::string&) {
  // tt.make_tensor_descriptor %base, [%s0, %s1], [%t0, %t1] [{padding = 2 : i32}] : <f32>, <tensor<...>>
  ValueId base = operand();
  c_.expect(',', "','");
  std::vector<ValueId> shape = bracketed_operands("'[' opening the shape");
  c_.expect(',', "','");
  std::vector<ValueId> strides = bracketed_operands("'[' opening the strides");
  AttrDict attrs;
  if (c_.peek() == '{') attrs = parse_dict();
  c_.expect(':', "':' before the types");
  if (c_.peek() != '<') c_.fail_expected("'<' (the base pointer's type)");
  c_.skip_balanced();
  c_.expect(',', "','");
  Desc d;
  parse_desc_type_body(&d);
  size_t rank = d.block.size();
  if (f_->type_of(base) != m_->types.ptr(d.elem))
    malformed("the base of tt.make_tensor_descriptor is not a pointer to its elements");
  if (shape.size() != rank || strides.size() != rank)
    malformed("tt.make_tensor_descriptor has " + std::to_string(shape.size()) + " sizes and " +
              std::to_string(strides.size()) + " strides for a block of rank " + std::to_string(rank));
  for (ValueId v : shape)
    if (f_->type_of(v) != scalar(Scalar::I32)) malformed("a tensor descriptor's shape is i32 scalars");
  for (ValueId v : strides)
    if (f_->type_of(v) != scalar(Scalar::I64)) malformed("a tensor descriptor's strides are i64 scalars");
  auto pad = attrs.find("padding");
  if (pad != attrs.end()) {
    if (pad->second.kind != AttrVal::Kind::Int || (pad->second.i != 1 && pad->second.i != 2))
      unsupported("tt.make_tensor_descriptor with a padding option other than zero (1) and nan (2)");
    d.nan_padding = pad->second.i == 2;
  }
  // What a descriptor promises (TMA requires it, and Triton's tl.make_tensor_descriptor documents
  // it): a 16-byte aligned base and strides of whole 16-byte units but the last. Stated as
  // checked multiple_of facts, so that an access through the descriptor moves 16 bytes at a time
  // (without them a row stride loaded from memory gave 2-byte accesses: the grouped GEMM
  // tutorial ran 48x slower than Triton's) and checked mode reports a descriptor that breaks them.
  Scalar es;
  m_->types.elem_scalar(d.elem, &es);
  const int bytes = scalar_bits(es) / 8;
  base = make1(Opcode::MultipleOf, {base}, f_->type_of(base), {Attr::of_ints({16}), Attr::of_bool(true)});
  if (bytes > 0 && bytes < 16)
    for (size_t j = 0; j + 1 < rank; ++j)
      strides[j] = make1(Opcode::MultipleOf, {strides[j]}, f_->type_of(strides[j]),
                         {Attr::of_ints({16 / bytes}), Attr::of_bool(true)});
  d.base = base;
  d.shape = shape;
  d.strides = strides;
  ValueId placeholder = b_->new_value(f_->type_of(base), kNoOp, kNoBlock, 0);
  descs_.emplace(placeholder, std::move(d));
  if (std::find(structured_.begin(), structured_.end(), f_) == structured_.end()) structured_.push_back(f_);
  set_results({placeholder});
}

void Reader::desc_addresses(const Desc& d, const std::vector<ValueId>& coords, const std::vector<int64_t>& shape,
                            ValueId* ptrs, ValueId* mask) {
  size_t r = shape.size();
  std::vector<Dim> full;
  for (int64_t n : shape) full.push_back(Dim::lit(n));
  TypeId i64 = scalar(Scalar::I64);
  // A 1-D value along dimension k, as the full shape (broadcast along the others).
  auto place = [&](ValueId v, size_t k) {
    if (r == 1) return v;
    TypeId vt = f_->type_of(v);
    TypeId e = elem_scalar_type(vt);
    std::vector<Dim> one(r, Dim::lit(1));
    one[k] = full[k];
    v = make1(Opcode::Reshape, {v}, m_->types.block(one, e));
    return make1(Opcode::Broadcast, {v}, m_->types.block(full, e));
  };
  ValueId offset = kNoValue, in = kNoValue;
  for (size_t k = 0; k < r; ++k) {
    ValueId c = coords[k];
    TypeId ct = f_->type_of(c);
    Scalar cs;
    m_->types.elem_scalar(ct, &cs);
    TypeId flag = m_->types.with_elem(ct, scalar(Scalar::I1));
    ValueId lim = d.shape[k];
    if (cs == Scalar::I64) lim = make1(Opcode::SExt, {lim}, i64);
    ValueId lo = make1(Opcode::Cmp, {c, cst_int(ct, 0)}, flag, {enum_attr(Opcode::Cmp, "pred", "sge")});
    ValueId hi = make1(Opcode::Cmp, {c, make1(Opcode::Splat, {lim}, ct)}, flag, {enum_attr(Opcode::Cmp, "pred", "slt")});
    ValueId ok = make1(Opcode::And, {lo, hi}, flag);
    TypeId ct64 = m_->types.with_elem(ct, i64);
    ValueId off = cs == Scalar::I64 ? c : make1(Opcode::SExt, {c}, ct64);
    if (k + 1 < r) off = make1(Opcode::Mul, {off, make1(Opcode::Splat, {d.strides[k]}, ct64)}, ct64);
    off = place(off, k);
    ok = place(ok, k);
    offset = offset == kNoValue ? off : make1(Opcode::Add, {offset, off}, f_->type_of(off));
    in = in == kNoValue ? ok : make1(Opcode::And, {in, ok}, f_->type_of(ok));
  }
  TypeId pblock = m_->types.block(full, f_->type_of(d.base));
  *ptrs = make1(Opcode::AddPtr, {make1(Opcode::Splat, {d.base}, pblock), offset}, pblock);
  *mask = in;
}

void Reader::op_descriptor_load(const std::string&) {
  // tt.descriptor_load %d[%o0, %o1] [{attrs}] : !tt.tensordesc<...> -> tensor<...>
  Desc d = desc_operand();
  std::vector<ValueId> offs = bracketed_operands("'[' opening the offsets");
  AttrDict attrs;
  if (c_.peek() == '{') attrs = parse_dict();
  c_.expect(':', "':' before the types");
  skip_desc_type();
  if (!c_.eat_punct("->")) c_.fail_expected("'->'");
  TypeId rt = parse_type();
  std::vector<ValueId> coords = desc_block_coords(d, offs);
  std::vector<Dim> dims;
  for (int64_t n : d.block) dims.push_back(Dim::lit(n));
  if (rt != m_->types.block(dims, d.elem)) malformed("tt.descriptor_load's result is not the descriptor's block");
  ValueId ptrs, mask;
  desc_addresses(d, coords, d.block, &ptrs, &mask);
  ValueId other = d.nan_padding ? cst_float(rt, NAN) : filler(rt);
  std::string cache = "none", evict = "normal";
  for (const auto& [k, v] : attrs) {
    if (k == "cache") cache = modifier_word(v, false);
    if (k == "evict") evict = modifier_word(v, true);
  }
  if (evict.rfind("evict_", 0) == 0) evict = evict.substr(6);
  set_results({make1(Opcode::Load, {ptrs, mask, other}, rt,
                     {enum_attr(Opcode::Load, "cache", cache), enum_attr(Opcode::Load, "evict", evict),
                      Attr::of_bool(false)})});
}

std::vector<ValueId> Reader::desc_block_coords(const Desc& d, const std::vector<ValueId>& offs) {
  if (offs.size() != d.block.size())
    malformed("'" + cur_.name + "' has " + std::to_string(offs.size()) + " offsets for a descriptor of rank " +
              std::to_string(d.block.size()));
  std::vector<ValueId> coords;
  for (size_t k = 0; k < offs.size(); ++k) {
    if (f_->type_of(offs[k]) != scalar(Scalar::I32)) malformed("a tensor descriptor's offsets are i32 scalars");
    TypeId bt = m_->types.block({Dim::lit(d.block[k])}, scalar(Scalar::I32));
    ValueId range = make1(Opcode::Arange, {}, bt, {Attr::of_int(0), Attr::of_int(d.block[k])});
    coords.push_back(make1(Opcode::Add, {make1(Opcode::Splat, {offs[k]}, bt), range}, bt));
  }
  return coords;
}

void Reader::op_descriptor_store(const std::string& name) {
  // tt.descriptor_store %d[%o0, %o1], %v : !tt.tensordesc<...>, tensor<...>
  // tt.descriptor_reduce add, %d[%o0, %o1], %v : !tt.tensordesc<...>, tensor<...>
  std::string kind;
  if (name == "tt.descriptor_reduce") {
    kind = c_.ident("a reduction kind");
    c_.expect(',', "','");
  }
  Desc d = desc_operand();
  std::vector<ValueId> offs = bracketed_operands("'[' opening the offsets");
  c_.expect(',', "','");
  ValueId value = operand();
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  skip_desc_type();
  c_.expect(',', "','");
  parse_type();
  std::vector<Dim> dims;
  for (int64_t n : d.block) dims.push_back(Dim::lit(n));
  if (f_->type_of(value) != m_->types.block(dims, d.elem)) malformed("'" + name + "' stores a value that is not the descriptor's block");
  std::vector<ValueId> coords = desc_block_coords(d, offs);
  ValueId ptrs, mask;
  desc_addresses(d, coords, d.block, &ptrs, &mask);
  if (kind.empty()) {
    make(Opcode::Store, {ptrs, value, mask}, {});
    return;
  }
  // A TMA reduction is an atomic read-modify-write per element (relaxed; Triton waits for the
  // whole bulk operation before the kernel goes on).
  Scalar es;
  m_->types.elem_scalar(d.elem, &es);
  std::string k = kind;
  if ((kind == "min" || kind == "max") && is_int(es) && d.is_unsigned) k = "u" + kind;
  if (k != "add" && k != "min" && k != "max" && k != "umin" && k != "umax" && k != "and" && k != "or" && k != "xor")
    unsupported("tt.descriptor_reduce " + kind + " is not imported");
  make(Opcode::Atomic, {ptrs, value, mask}, {f_->type_of(value)},
       {enum_attr(Opcode::Atomic, "kind", k), enum_attr(Opcode::Atomic, "order", "relaxed"),
        enum_attr(Opcode::Atomic, "scope", "gpu")});
}

// Rows x_offsets[r] and columns y + [0, BN) of a 2-D descriptor whose block is 1 x BN.
void Reader::op_descriptor_gather(const std::string& name) {
  // tt.descriptor_gather %d[%rows, %y] : (!tt.tensordesc<1xBN>, tensor<Rxi32>, i32) -> tensor<RxBN>
  // tt.descriptor_scatter %d[%rows, %y], %v : !tt.tensordesc<1xBN>, tensor<Rxi32>, i32, tensor<RxBN>
  Desc d = desc_operand();
  c_.expect('[', "'['");
  ValueId rows = operand();
  c_.expect(',', "','");
  ValueId y = operand();
  c_.expect(']', "']'");
  ValueId value = kNoValue;
  bool scatter = name == "tt.descriptor_scatter";
  if (scatter) {
    c_.expect(',', "','");
    value = operand();
  }
  skip_trailing_attrs();
  c_.expect(':', "':' before the types");
  bool paren = c_.eat('(');
  skip_desc_type();
  while (c_.eat(',')) parse_type();
  if (paren) c_.expect(')', "')'");
  TypeId rt = kNoType;
  if (!scatter) {
    if (!c_.eat_punct("->")) c_.fail_expected("'->'");
    rt = parse_type();
  }
  TypeId rows_t = f_->type_of(rows);
  Scalar rs;
  if (d.block.size() != 2 || d.block[0] != 1 || !m_->types.is_block(rows_t) || m_->types.rank(rows_t) != 1 ||
      !m_->types.elem_scalar(rows_t, &rs) || (rs != Scalar::I32 && rs != Scalar::I64) ||
      f_->type_of(y) != scalar(Scalar::I32))
    malformed("'" + name + "' takes a 2-D descriptor of one row, a 1-D tensor of row offsets and an i32 column offset");
  int64_t R = m_->types.get(rows_t).dims[0].value, BN = d.block[1];
  TypeId vt = m_->types.block({Dim::lit(R), Dim::lit(BN)}, d.elem);
  if ((!scatter && rt != vt) || (scatter && f_->type_of(value) != vt))
    malformed("'" + name + "''s tensor is not rows x the descriptor's block width");
  TypeId bt = m_->types.block({Dim::lit(BN)}, scalar(Scalar::I32));
  ValueId cols = make1(Opcode::Add, {make1(Opcode::Splat, {y}, bt),
                                     make1(Opcode::Arange, {}, bt, {Attr::of_int(0), Attr::of_int(BN)})},
                       bt);
  ValueId ptrs, mask;
  desc_addresses(d, {rows, cols}, {R, BN}, &ptrs, &mask);
  if (scatter) {
    make(Opcode::Store, {ptrs, value, mask}, {});
    return;
  }
  ValueId other = d.nan_padding ? cst_float(vt, NAN) : filler(vt);
  set_results({make1(Opcode::Load, {ptrs, mask, other}, vt)});
}

void Reader::op_descriptor_scatter(const std::string& name) { op_descriptor_gather(name); }

}  // namespace tri::import
