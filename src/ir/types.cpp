#include "ir/types.h"

#include <cassert>
#include <cstdint>

namespace tri::ir {
namespace {

const char* const kScalarNames[kNumScalars] = {"i1",  "i8",   "i16", "i32", "i64",    "f16",
                                               "bf16", "f32", "f64", "f8e4m3", "f8e5m2"};
const int kScalarBits[kNumScalars] = {1, 8, 16, 32, 64, 16, 16, 32, 64, 8, 8};

// A byte string that identifies a TypeData, for interning.
std::string key_of(const TypeData& d) {
  std::string k;
  k.push_back(static_cast<char>(d.kind));
  k.push_back(static_cast<char>(d.scalar));
  auto put32 = [&](uint32_t v) { k.append(reinterpret_cast<const char*>(&v), 4); };
  put32(d.pointee);
  put32(d.elem);
  for (const Dim& dim : d.dims) {
    k.push_back(dim.symbolic ? 's' : 'n');
    int64_t v = dim.symbolic ? dim.sym : dim.value;
    k.append(reinterpret_cast<const char*>(&v), 8);
  }
  return k;
}

}  // namespace

const char* scalar_name(Scalar s) { return kScalarNames[static_cast<int>(s)]; }

bool scalar_from_name(const std::string& name, Scalar* out) {
  for (int i = 0; i < kNumScalars; ++i) {
    if (name == kScalarNames[i]) {
      *out = static_cast<Scalar>(i);
      return true;
    }
  }
  return false;
}

int scalar_bits(Scalar s) { return kScalarBits[static_cast<int>(s)]; }

TypeTable::TypeTable() {
  // Scalars get the first ids, in enum order, so scalar(s) == static_cast<TypeId>(s).
  for (int i = 0; i < kNumScalars; ++i) {
    TypeData d;
    d.kind = TypeKind::Scalar;
    d.scalar = static_cast<Scalar>(i);
    intern(d);
  }
}

TypeId TypeTable::intern(TypeData d) {
  std::string k = key_of(d);
  auto it = index_.find(k);
  if (it != index_.end()) return it->second;
  TypeId id = static_cast<TypeId>(types_.size());
  types_.push_back(std::move(d));
  index_.emplace(std::move(k), id);
  return id;
}

TypeId TypeTable::scalar(Scalar s) { return static_cast<TypeId>(s); }

TypeId TypeTable::ptr(TypeId pointee) {
  TypeData d;
  d.kind = TypeKind::Ptr;
  d.pointee = pointee;
  return intern(d);
}

TypeId TypeTable::block(const std::vector<Dim>& dims, TypeId elem) {
  assert(!is_block(elem));
  TypeData d;
  d.kind = TypeKind::Block;
  d.elem = elem;
  d.dims = dims;
  return intern(d);
}

TypeId TypeTable::elem_of(TypeId t) const { return is_block(t) ? get(t).elem : t; }

TypeId TypeTable::with_elem(TypeId shape_of, TypeId elem) {
  if (!is_block(shape_of)) return elem;
  std::vector<Dim> dims = get(shape_of).dims;
  return block(dims, elem);
}

bool TypeTable::elem_scalar(TypeId t, Scalar* out) const {
  const TypeData& d = get(elem_of(t));
  if (d.kind != TypeKind::Scalar) return false;
  *out = d.scalar;
  return true;
}

bool TypeTable::is_concrete(TypeId t) const {
  if (!is_block(t)) return true;
  for (const Dim& d : get(t).dims)
    if (d.symbolic) return false;
  return true;
}

int64_t TypeTable::num_elements(TypeId t) const {
  if (!is_block(t)) return 1;
  // Saturates instead of wrapping: a type the verifier has not yet refused (over
  // kMaxBlockElements) may be asked for its count.
  int64_t n = 1;
  for (const Dim& d : get(t).dims) {
    if (d.value <= 0) return 0;
    if (__builtin_mul_overflow(n, d.value, &n)) return INT64_MAX;
  }
  return n;
}

}  // namespace tri::ir
