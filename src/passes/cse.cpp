#include "passes/cse.h"

#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

#include "passes/rewrite.h"

namespace tri::passes {
namespace {

using namespace ir;

// What makes two pure ops interchangeable.
struct Key {
  Opcode code;
  std::vector<ValueId> operands;
  std::vector<TypeId> result_types;
  std::vector<Attr> attrs;

  bool operator<(const Key& o) const {
    if (code != o.code) return code < o.code;
    if (operands != o.operands) return operands < o.operands;
    if (result_types != o.result_types) return result_types < o.result_types;
    if (attrs.size() != o.attrs.size()) return attrs.size() < o.attrs.size();
    for (size_t i = 0; i < attrs.size(); ++i) {
      const Attr& a = attrs[i];
      const Attr& b = o.attrs[i];
      if (a == b) continue;
      // Any strict order will do; NaN floats compare by bits so the order stays strict.
      auto bits = [](double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; };
      return std::make_tuple(a.kind, a.i, bits(a.f), a.s, a.ints) <
             std::make_tuple(b.kind, b.i, bits(b.f), b.s, b.ints);
    }
    return false;
  }
};

class Cse {
 public:
  explicit Cse(Function& f) : f_(f) {}

  bool run() {
    visit(f_.body, {});
    replace_uses(f_, repl_);
    return !repl_.empty();
  }

 private:
  using Scope = std::map<Key, std::vector<ValueId>>;

  // `outer` holds the ops available from enclosing blocks; copied so sibling regions do not see
  // each other's ops.
  void visit(BlockId b, Scope outer) {
    for (OpId o : f_.block(b).ops) {
      OpData& op = f_.op(o);
      for (ValueId& v : op.operands)
        if (v != kNoValue) v = resolve(v);
      for (BlockId r : op.regions) visit(r, outer);
      if (!op_info(op.code).is_pure() || !op.regions.empty() || op.results.empty()) continue;
      Key k{op.code, op.operands, {}, op.attrs};
      for (ValueId v : op.results) k.result_types.push_back(f_.type_of(v));
      auto it = outer.find(k);
      if (it == outer.end()) {
        outer.emplace(std::move(k), op.results);
        continue;
      }
      for (size_t i = 0; i < op.results.size(); ++i) repl_[op.results[i]] = it->second[i];
    }
  }

  ValueId resolve(ValueId v) const {
    for (auto it = repl_.find(v); it != repl_.end(); it = repl_.find(v)) v = it->second;
    return v;
  }

  Function& f_;
  std::unordered_map<ValueId, ValueId> repl_;
};

}  // namespace

bool cse(Function& f) { return Cse(f).run(); }

}  // namespace tri::passes
