// Types of Tri's block IR, interned in a per-module table.
//
// A type is a scalar (i1 i8 i16 i32 i64 f16 bf16 f32 f64 f8e4m3 f8e5m2), a pointer to global
// memory `ptr<T>`, or a block `<d0 x d1 x ... x E>` of 1 to 4 dimensions whose element E is a
// scalar or a pointer. A dimension is a power-of-two integer or the name of a constexpr of the
// kernel (`<BLOCK x f32>`); names become integers when the kernel is specialized.
//
// Types are compared by id: equal ids mean equal types within one module.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tri::ir {

using TypeId = uint32_t;
using SymId = uint32_t;  // index into Module::symbols (interned names)

constexpr TypeId kNoType = ~0u;
constexpr int kMaxBlockRank = 4;

enum class Scalar : uint8_t { I1, I8, I16, I32, I64, F16, BF16, F32, F64, F8E4M3, F8E5M2 };
constexpr int kNumScalars = 11;

const char* scalar_name(Scalar s);
bool scalar_from_name(const std::string& name, Scalar* out);
int scalar_bits(Scalar s);
inline bool is_int(Scalar s) { return s <= Scalar::I64; }
inline bool is_float(Scalar s) { return s >= Scalar::F16; }

// A block dimension: a non-negative integer, or a constexpr name.
struct Dim {
  int64_t value = 0;       // meaningful when !symbolic
  SymId sym = 0;           // meaningful when symbolic
  bool symbolic = false;
  static Dim lit(int64_t v) { return Dim{v, 0, false}; }
  static Dim name(SymId s) { return Dim{0, s, true}; }
  bool operator==(const Dim& o) const {
    return symbolic == o.symbolic && (symbolic ? sym == o.sym : value == o.value);
  }
  bool operator!=(const Dim& o) const { return !(*this == o); }
};

enum class TypeKind : uint8_t { Scalar, Ptr, Block };

struct TypeData {
  TypeKind kind = TypeKind::Scalar;
  Scalar scalar = Scalar::I32;  // for Scalar
  TypeId pointee = kNoType;     // for Ptr: a scalar type
  TypeId elem = kNoType;        // for Block: a scalar or pointer type
  std::vector<Dim> dims;        // for Block: 1..kMaxBlockRank dims
};

class TypeTable {
 public:
  TypeTable();
  TypeId scalar(Scalar s);
  TypeId ptr(TypeId pointee);
  TypeId block(const std::vector<Dim>& dims, TypeId elem);
  // The element type of a block, or the type itself.
  TypeId elem_of(TypeId t) const;
  // The same shape as `shape_of` (a block or a scalar) with another element type.
  TypeId with_elem(TypeId shape_of, TypeId elem);

  const TypeData& get(TypeId t) const { return types_[t]; }
  size_t size() const { return types_.size(); }

  bool is_block(TypeId t) const { return get(t).kind == TypeKind::Block; }
  bool is_ptr(TypeId t) const { return get(t).kind == TypeKind::Ptr; }
  bool is_scalar(TypeId t) const { return get(t).kind == TypeKind::Scalar; }
  // Element scalar kind of a scalar type or a block of scalars; false for pointers.
  bool elem_scalar(TypeId t, Scalar* out) const;
  int rank(TypeId t) const { return is_block(t) ? static_cast<int>(get(t).dims.size()) : 0; }
  // True when no dim is symbolic.
  bool is_concrete(TypeId t) const;
  // Number of elements of a concrete block (1 for non-blocks).
  int64_t num_elements(TypeId t) const;

 private:
  TypeId intern(TypeData d);
  std::vector<TypeData> types_;
  std::unordered_map<std::string, TypeId> index_;
};

}  // namespace tri::ir
