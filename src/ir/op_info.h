// Structured view of the op table in ops.def.
//
// ops.def writes each op's operands, attributes and regions as short spec strings so that the
// table stays one readable line per op; this file turns them into OpInfo records once, at first
// use. Everything that needs to know an op's shape (printer, parser, binary format, verifier,
// interpreter) asks op_info(code) instead of hard-coding it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tri::ir {

enum class Opcode : uint16_t {
#define TRI_OP(Id, ...) Id,
#include "ir/ops.def"
#undef TRI_OP
};

constexpr uint32_t kNumOpcodes = 0
#define TRI_OP(...) +1
#include "ir/ops.def"
#undef TRI_OP
    ;

// The verifier's typing rule for an op (ops.def's Rule column).
enum class OpRule : uint8_t {
  EwNum,    // elementwise; operands and result have one type, int or float elements
  EwInt,    // the same with integer elements
  EwFloat,  // the same with float elements
  Cast,     // one operand; result has the operand's shape and another element type
  Custom,   // checked by hand in verifier.cpp
};

enum OpFlag : uint32_t {
  Pure = 1u << 0,  // no side effects
  Term = 1u << 1,  // terminates its region
};

enum class SlotKind : uint8_t { Required, Optional, Variadic, Variadic1 };

struct OperandSlot {
  std::string name;
  SlotKind kind;
};

enum class AttrKind : uint8_t { Int, Num, Bool, Str, Func, Ints, Enum };

struct AttrSpec {
  std::string name;
  AttrKind kind;
  std::vector<std::string> enum_values;  // for Enum
  bool optional = false;                 // `?` or has a default
  bool has_default = false;
  std::string default_text;              // the default as written in ops.def (`none`, `false`, `""`, `1`)
};

struct OpInfo {
  Opcode code;
  std::string name;
  std::vector<OperandSlot> operands;
  int num_results;  // -1: variable
  int min_regions, max_regions;
  std::vector<AttrSpec> attrs;
  OpRule rule;
  uint32_t flags;

  // Index of the attribute / operand slot with this name, or -1.
  int attr_index(std::string_view n) const;
  int slot_index(std::string_view n) const;
  bool is_pure() const { return flags & Pure; }
  bool is_terminator() const { return flags & Term; }
  // Number of leading slots that are Required (they come first in every op's operand list).
  int num_required() const;
  // True when some slot is variadic.
  bool has_variadic() const;
};

const OpInfo& op_info(Opcode code);
// Finds an op by its text name; returns false when there is none.
bool opcode_from_name(std::string_view name, Opcode* out);

}  // namespace tri::ir
