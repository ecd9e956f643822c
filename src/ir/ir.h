// The in-memory IR: modules, functions, blocks, ops and values.
//
// Semantics (the full text is docs/ir.md; these are the rules code in this tree relies on):
//  - SPMD: a kernel runs as a grid of program instances; each instance works on whole blocks.
//  - SSA: every value is defined once, by an op result or a block argument, and is visible in
//    the rest of its block and in regions nested there. Names are scoped the same way: no two
//    values visible at one point share a name, but sibling regions may reuse one.
//  - Control flow is structured: for / if / while ops own regions; every region is one block
//    that ends with its terminator (yield, condition or return).
//  - Constexpr parameters stay symbolic (in types and attributes) until specialization.
//
// Storage follows Cranelift: a Function owns tables of values, ops and blocks, and refers to them
// by typed 32-bit ids. Types live in the Module's TypeTable; names in its symbol table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "ir/op_info.h"
#include "ir/types.h"

namespace tri::ir {

using ValueId = uint32_t;
using OpId = uint32_t;
using BlockId = uint32_t;

constexpr ValueId kNoValue = ~0u;
constexpr OpId kNoOp = ~0u;
constexpr BlockId kNoBlock = ~0u;

// An attribute value. `kind` says which member holds it; Sym is a constexpr name (allowed where
// the op table says int or num), resolved to Int/Float/Bool by specialization.
struct Attr {
  enum class Kind : uint8_t { None, Int, Float, Bool, Str, Func, Ints, Enum, Sym };
  Kind kind = Kind::None;
  int64_t i = 0;               // Int, Bool (0/1), Enum (index into the spec's values)
  double f = 0;                // Float
  std::string s;               // Str, Func (name without '@'), Sym (constexpr name)
  std::vector<int64_t> ints;   // Ints

  bool present() const { return kind != Kind::None; }
  static Attr none() { return Attr{}; }
  static Attr of_int(int64_t v) { Attr a; a.kind = Kind::Int; a.i = v; return a; }
  static Attr of_float(double v) { Attr a; a.kind = Kind::Float; a.f = v; return a; }
  static Attr of_bool(bool v) { Attr a; a.kind = Kind::Bool; a.i = v; return a; }
  static Attr of_str(std::string v) { Attr a; a.kind = Kind::Str; a.s = std::move(v); return a; }
  static Attr of_func(std::string v) { Attr a; a.kind = Kind::Func; a.s = std::move(v); return a; }
  static Attr of_ints(std::vector<int64_t> v) { Attr a; a.kind = Kind::Ints; a.ints = std::move(v); return a; }
  static Attr of_enum(int64_t index) { Attr a; a.kind = Kind::Enum; a.i = index; return a; }
  static Attr of_sym(std::string name) { Attr a; a.kind = Kind::Sym; a.s = std::move(name); return a; }
  bool operator==(const Attr& o) const {
    return kind == o.kind && i == o.i && (f == o.f || (f != f && o.f != o.f)) && s == o.s && ints == o.ints;
  }
};

struct ValueData {
  TypeId type = kNoType;
  std::string name;         // as written in text (without '%'); may be empty
  OpId def_op = kNoOp;      // the defining op, or kNoOp for a block argument
  BlockId def_block = kNoBlock;  // for block arguments
  uint32_t index = 0;       // result index, or argument index
};

struct OpData {
  Opcode code{};
  Loc loc;
  // One entry per operand, in slot order: required slots, then the variadic slot's values, then
  // optional slots (kNoValue when absent). See Function::operand / Function::variadic.
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  std::vector<Attr> attrs;        // one per attribute of the op's spec, in spec order
  std::vector<BlockId> regions;   // each region is one block
  BlockId parent = kNoBlock;      // the block holding this op
};

struct BlockData {
  std::vector<ValueId> args;
  std::vector<OpId> ops;
  OpId parent_op = kNoOp;  // the op owning this region, or kNoOp for a function body
  Loc loc;
};

enum class ParamKind : uint8_t { Value, Constexpr };

// A runtime parameter of a kernel or function.
struct Param {
  std::string name;
  TypeId type = kNoType;
  uint32_t align = 0;       // pointer alignment in bytes the caller guarantees (0: none said)
  uint32_t divisible = 0;   // integer divisibility the caller guarantees (0: none said)
  bool noalias = false;
  ValueId value = kNoValue; // the entry block argument
  Loc loc;
};

// A constexpr parameter: a name that stays symbolic until specialization.
struct Constexpr {
  std::string name;
  Scalar type = Scalar::I32;  // i1, an integer or a float type
  Attr default_value;         // None when there is no default
  Loc loc;
};

class Module;

class Function {
 public:
  std::string name;
  bool is_kernel = true;
  std::vector<Param> params;
  std::vector<Constexpr> constexprs;  // kernels only
  std::vector<TypeId> results;        // device functions only
  BlockId body = kNoBlock;
  Loc loc;

  std::vector<ValueData> values;
  std::vector<OpData> ops;
  std::vector<BlockData> blocks;

  const ValueData& value(ValueId v) const { return values[v]; }
  const OpData& op(OpId o) const { return ops[o]; }
  const BlockData& block(BlockId b) const { return blocks[b]; }
  OpData& op(OpId o) { return ops[o]; }
  BlockData& block(BlockId b) { return blocks[b]; }
  TypeId type_of(ValueId v) const { return values[v].type; }

  // The operand in slot `slot` of a non-variadic slot (kNoValue when an optional one is absent).
  ValueId operand(OpId o, int slot) const;
  // The values block b's terminator passes on: a yield's or return's operands, a condition's
  // after its flag; none for an empty block or another terminator.
  std::vector<ValueId> passed_on(BlockId b) const;
  // The values of the op's variadic slot.
  std::vector<ValueId> variadic(OpId o) const;
  // Named lookups, for readability at call sites: operand(o, "mask").
  ValueId operand(OpId o, std::string_view slot) const;
  const Attr& attr(OpId o, std::string_view name) const;

  int constexpr_index(std::string_view n) const;
  int param_index(std::string_view n) const;
};

class Module {
 public:
  std::string source_name;  // used in diagnostics
  TypeTable types;
  std::vector<std::string> symbols;  // interned names (constexpr names in types)
  std::vector<std::unique_ptr<Function>> functions;

  SymId intern(const std::string& name);
  // A type as IR text: "i32", "ptr<f16>", "<BM x 64 x f32>".
  std::string type_str(TypeId t) const;
  Function* find(std::string_view name);
  const Function* find(std::string_view name) const;
};

// The op of `f`, or of a device function `f` calls (directly or through others), for which
// `pred` holds first in a walk of the bodies; kNoOp (and *where untouched) when there is none.
// *where receives the function holding it. Calls to functions the module lacks are skipped.
OpId find_op(const Module& m, const Function& f, bool (*pred)(Opcode), const Function** where);
// The ops of docs/distributed.md: rank, num_ranks, symm_at, wait, consume_token, notify, put, get.
bool is_distributed_op(Opcode code);

// Builds ops into a function. It keeps the op table's slot discipline (see OpData::operands) so
// that code which creates IR never depends on how operands are stored.
class Builder {
 public:
  Builder(Module* m, Function* f) : m_(m), f_(f) {}

  Function* function() const { return f_; }
  Module* module() const { return m_; }

  // Creates a new empty block (a function body or a region) with arguments of these types.
  BlockId create_block(const std::vector<TypeId>& arg_types, OpId parent_op = kNoOp);
  void set_insertion_block(BlockId b) { block_ = b; }
  BlockId insertion_block() const { return block_; }

  // Creates an op at the end of the insertion block. `operands` are given in slot order as
  // OpData::operands describes; `attrs` may be shorter than the spec (the rest are absent).
  OpId create(Opcode code, const std::vector<ValueId>& operands, const std::vector<TypeId>& result_types,
              std::vector<Attr> attrs = {}, Loc loc = {});
  // Convenience: the first result of an op created as above.
  ValueId create1(Opcode code, const std::vector<ValueId>& operands, TypeId result_type,
                  std::vector<Attr> attrs = {}, Loc loc = {});
  // Adds an (empty) region to an op and returns its block.
  BlockId add_region(OpId op, const std::vector<TypeId>& arg_types);

  ValueId new_value(TypeId t, OpId def_op, BlockId def_block, uint32_t index);

 private:
  Module* m_;
  Function* f_;
  BlockId block_ = kNoBlock;
};

}  // namespace tri::ir
