// contract_fma: rewrites each qualifying add/sub in place into an fma (a neg, when the pattern
// needs one, is inserted just before it); the mul it absorbed stays for its other uses, if any.
#include "passes/contract_fma.h"

#include <algorithm>

#include "passes/rewrite.h"

namespace tri::passes {
namespace {

using ir::Opcode;
using ir::ValueId;

class Contractor {
 public:
  Contractor(ir::Module& m, ir::Function& f) : m_(m), f_(f), uses_(use_counts(f)) {}

  bool run() {
    std::vector<ir::OpId> candidates;
    walk_ops(f_, f_.body, [&](ir::OpId o) {
      const Opcode c = f_.op(o).code;
      if (c == Opcode::Add || c == Opcode::Sub) candidates.push_back(o);
    });
    bool changed = false;
    for (ir::OpId o : candidates) changed |= contract(o);
    return changed;
  }

 private:
  bool is_f32_or_f64(ValueId v) const {
    ir::Scalar s;
    return m_.types.elem_scalar(f_.type_of(v), &s) && (s == ir::Scalar::F32 || s == ir::Scalar::F64);
  }

  // The mul defining v when it sits in block b (where this op is), else kNoOp.
  ir::OpId mul_in_block(ValueId v, ir::BlockId b) const {
    const ir::OpId d = f_.value(v).def_op;
    if (d == ir::kNoOp || f_.op(d).code != Opcode::Mul || f_.op(d).parent != b) return ir::kNoOp;
    return d;
  }

  // A neg of v inserted right before op `before`.
  ValueId neg_before(ValueId v, ir::OpId before) {
    ir::Builder b(&m_, &f_);
    const ir::BlockId blk = f_.op(before).parent;
    b.set_insertion_block(blk);
    const ValueId r = b.create1(Opcode::Neg, {v}, f_.type_of(v), {}, f_.op(before).loc);
    std::vector<ir::OpId>& ops = f_.block(blk).ops;
    const ir::OpId made = ops.back();
    ops.pop_back();
    ops.insert(std::find(ops.begin(), ops.end(), before), made);
    uses_.resize(f_.values.size(), 0);
    uses_[v] += 1;
    uses_[r] = 1;
    return r;
  }

  bool contract(ir::OpId o) {
    ir::OpData& op = f_.op(o);
    const ValueId x = op.operands[0], y = op.operands[1];
    if (!is_f32_or_f64(op.results[0])) return false;
    const bool sub = op.code == Opcode::Sub;
    // NVPTX fuses aggressively (LLVM's enableAggressiveFMAFusion): a mul with other uses is
    // contracted too, and stays for them; of two muls, the one with fewer uses is taken (the
    // first on a tie).
    const ir::OpId mx = mul_in_block(x, op.parent), my = mul_in_block(y, op.parent);
    if (mx == ir::kNoOp && my == ir::kNoOp) return false;
    const bool mul_first = mx != ir::kNoOp && (my == ir::kNoOp || uses_[x] <= uses_[y]);
    const ir::OpId m = mul_first ? mx : my;
    ValueId a = f_.op(m).operands[0], b = f_.op(m).operands[1];
    ValueId c = mul_first ? y : x;
    if (sub && mul_first) c = neg_before(c, o);   // a*b - c = fma(a, b, -c)
    if (sub && !mul_first) a = neg_before(a, o);  // c - a*b = fma(-a, b, c)
    ir::OpData& op2 = f_.op(o);  // neg_before may have grown the op table
    op2.code = Opcode::Fma;
    op2.operands = {a, b, c};
    op2.attrs.clear();
    uses_[f_.op(m).results[0]] -= 1;
    uses_[a] += 1;
    uses_[b] += 1;
    return true;
  }

  ir::Module& m_;
  ir::Function& f_;
  std::vector<uint32_t> uses_;
};

}  // namespace

bool contract_fma(ir::Module& m, ir::Function& f) { return Contractor(m, f).run(); }

}  // namespace tri::passes
