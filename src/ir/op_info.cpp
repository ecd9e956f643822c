// Parses ops.def's spec strings into OpInfo records, once. A malformed spec is a bug in ops.def
// and is caught by tests/ir/test_op_info.cpp, which walks every row.
#include "ir/op_info.h"

#include <cassert>
#include <cstdlib>
#include <unordered_map>

namespace tri::ir {
namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] == '(') ++depth;
    if (i < s.size() && s[i] == ')') --depth;
    if (i == s.size() || (s[i] == sep && depth == 0)) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::vector<OperandSlot> parse_operands(std::string_view spec) {
  std::vector<OperandSlot> slots;
  for (std::string& s : split(spec, ',')) {
    SlotKind kind = SlotKind::Required;
    char last = s.back();
    if (last == '?') kind = SlotKind::Optional;
    if (last == '*') kind = SlotKind::Variadic;
    if (last == '+') kind = SlotKind::Variadic1;
    if (kind != SlotKind::Required) s.pop_back();
    slots.push_back({s, kind});
  }
  return slots;
}

std::vector<AttrSpec> parse_attrs(std::string_view spec) {
  std::vector<AttrSpec> attrs;
  for (std::string& s : split(spec, ',')) {
    AttrSpec a;
    size_t colon = s.find(':');
    a.name = s.substr(0, colon);
    std::string kind = s.substr(colon + 1);
    size_t eq = kind.find('=');
    if (eq != std::string::npos) {
      a.optional = a.has_default = true;
      a.default_text = kind.substr(eq + 1);
      kind.resize(eq);
    } else if (!kind.empty() && kind.back() == '?') {
      a.optional = true;
      kind.pop_back();
    }
    if (kind.rfind("enum(", 0) == 0) {
      a.kind = AttrKind::Enum;
      a.enum_values = split(std::string_view(kind).substr(5, kind.size() - 6), '|');
    } else if (kind == "int") {
      a.kind = AttrKind::Int;
    } else if (kind == "num") {
      a.kind = AttrKind::Num;
    } else if (kind == "bool") {
      a.kind = AttrKind::Bool;
    } else if (kind == "str") {
      a.kind = AttrKind::Str;
    } else if (kind == "func") {
      a.kind = AttrKind::Func;
    } else if (kind == "ints") {
      a.kind = AttrKind::Ints;
    } else {
      assert(!"ops.def: unknown attribute kind");
      std::abort();
    }
    attrs.push_back(std::move(a));
  }
  return attrs;
}

void parse_regions(std::string_view spec, int* lo, int* hi) {
  size_t dash = spec.find('-');
  *lo = std::atoi(std::string(spec.substr(0, dash)).c_str());
  *hi = dash == std::string_view::npos ? *lo : std::atoi(std::string(spec.substr(dash + 1)).c_str());
}

struct Table {
  std::vector<OpInfo> infos;
  std::unordered_map<std::string, Opcode> by_name;

  Table() {
    infos.reserve(kNumOpcodes);
#define TRI_OP(Id, Name, Operands, Results, Regions, Attrs, Rule, Flags)                    \
  {                                                                                         \
    OpInfo info;                                                                            \
    info.code = Opcode::Id;                                                                 \
    info.name = Name;                                                                       \
    info.operands = parse_operands(Operands);                                               \
    info.num_results = std::string_view(Results) == "*" ? -1 : std::atoi(Results);          \
    parse_regions(Regions, &info.min_regions, &info.max_regions);                           \
    info.attrs = parse_attrs(Attrs);                                                        \
    info.rule = OpRule::Rule;                                                               \
    info.flags = Flags;                                                                     \
    by_name.emplace(info.name, info.code);                                                  \
    infos.push_back(std::move(info));                                                       \
  }
#include "ir/ops.def"
#undef TRI_OP
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

int OpInfo::attr_index(std::string_view n) const {
  for (size_t i = 0; i < attrs.size(); ++i)
    if (attrs[i].name == n) return static_cast<int>(i);
  return -1;
}

int OpInfo::slot_index(std::string_view n) const {
  for (size_t i = 0; i < operands.size(); ++i)
    if (operands[i].name == n) return static_cast<int>(i);
  return -1;
}

int OpInfo::num_required() const {
  int n = 0;
  while (n < static_cast<int>(operands.size()) && operands[n].kind == SlotKind::Required) ++n;
  return n;
}

bool OpInfo::has_variadic() const {
  for (const OperandSlot& s : operands)
    if (s.kind == SlotKind::Variadic || s.kind == SlotKind::Variadic1) return true;
  return false;
}

const OpInfo& op_info(Opcode code) { return table().infos[static_cast<size_t>(code)]; }

bool opcode_from_name(std::string_view name, Opcode* out) {
  const auto& m = table().by_name;
  auto it = m.find(std::string(name));
  if (it == m.end()) return false;
  *out = it->second;
  return true;
}

}  // namespace tri::ir
