// combine_is_commutative: each yielded value of the region is written as a canonical expression
// string twice, once with the arguments as they are and once with the two sides exchanged;
// equal strings for every value mean the region is commutative.
#include "passes/combine_info.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/op_info.h"

namespace tri::passes {
namespace {

using ir::Opcode;

bool commutative_op(const ir::Function& f, ir::OpId o) {
  const ir::OpData& op = f.op(o);
  switch (op.code) {
    case Opcode::Add: case Opcode::Mul: case Opcode::And: case Opcode::Or: case Opcode::Xor:
    case Opcode::SMin: case Opcode::SMax: case Opcode::UMin: case Opcode::UMax:
    case Opcode::FMin: case Opcode::FMax:
      return true;
    case Opcode::Cmp: case Opcode::FCmp: {
      const ir::OpInfo& info = ir::op_info(op.code);
      const int pi = info.attr_index("pred");
      if (pi < 0 || !op.attrs[pi].present()) return false;
      const std::string& p = info.attrs[pi].enum_values[op.attrs[pi].i];
      return p == "eq" || p == "ne" || p == "oeq" || p == "one" || p == "ueq" || p == "une" || p == "ord" ||
             p == "uno";
    }
    default:
      return false;
  }
}

// The canonical text of value v; `swap` exchanges the two sides' arguments.
class Canon {
 public:
  Canon(const ir::Function& f, ir::BlockId region, bool swap) : f_(f) {
    const auto& args = f.block(region).args;
    const size_t half = args.size() / 2;
    for (size_t i = 0; i < args.size(); ++i) {
      const size_t j = swap ? (i < half ? i + half : i - half) : i;
      memo_[args[i]] = "$" + std::to_string(j);
    }
    region_ = region;
  }
  // False when v depends on something this analysis does not read.
  bool text(ir::ValueId v, std::string* out) {
    auto it = memo_.find(v);
    if (it != memo_.end()) {
      *out = it->second;
      return true;
    }
    const ir::ValueData& vd = f_.value(v);
    if (vd.def_op == ir::kNoOp) {  // an argument of an enclosing block: a fixed value
      *out = "%" + std::to_string(v);
      return memo_[v] = *out, true;
    }
    const ir::OpData& op = f_.op(vd.def_op);
    const ir::OpInfo& info = ir::op_info(op.code);
    if (!info.is_pure() || !op.regions.empty()) return false;
    if (op.parent != region_) {  // defined outside the region: a fixed value
      *out = "%" + std::to_string(v);
      return memo_[v] = *out, true;
    }
    std::vector<std::string> xs;
    for (ir::ValueId x : op.operands) {
      std::string t;
      if (x == ir::kNoValue) t = "_";
      else if (!text(x, &t)) return false;
      xs.push_back(t);
    }
    if (commutative_op(f_, vd.def_op) && xs.size() == 2) std::sort(xs.begin(), xs.end());
    std::string s = info.name + "#" + std::to_string(vd.index) + "[";
    for (const ir::Attr& a : op.attrs)
      s += std::to_string(int(a.kind)) + ":" + std::to_string(a.i) + ":" + std::to_string(a.f) + ":" + a.s + ",";
    s += "](";
    for (const std::string& x : xs) s += x + ",";
    s += "):" + std::to_string(vd.type);
    return memo_[v] = s, *out = s, true;
  }

 private:
  const ir::Function& f_;
  ir::BlockId region_ = ir::kNoBlock;
  std::map<ir::ValueId, std::string> memo_;
};

}  // namespace

bool combine_is_commutative(const ir::Function& f, ir::BlockId region) {
  const ir::BlockData& bd = f.block(region);
  if (bd.args.empty() || bd.args.size() % 2 != 0) return false;
  for (ir::OpId o : bd.ops)
    if (!ir::op_info(f.op(o).code).is_pure() && !ir::op_info(f.op(o).code).is_terminator()) return false;
  Canon as_is(f, region, false), swapped(f, region, true);
  for (ir::ValueId v : f.passed_on(region)) {
    std::string x, y;
    if (!as_is.text(v, &x) || !swapped.text(v, &y) || x != y) return false;
  }
  return true;
}

}  // namespace tri::passes
