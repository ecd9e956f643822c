// Lower bounds of a config's needs (prune.h).
#include "tune/prune.h"

#include <algorithm>
#include <vector>

#include "ir/op_info.h"

namespace tri::tune {

namespace {

std::string shape_text(const ir::Module& m, ir::TypeId t) {
  const ir::TypeData& d = m.types.get(t);
  std::string s = "<";
  for (const ir::Dim& dim : d.dims) s += std::to_string(dim.value) + " x ";
  ir::Scalar e = ir::Scalar::I32;
  m.types.elem_scalar(t, &e);
  return s + (m.types.is_ptr(d.elem) ? std::string("ptr") : std::string(ir::scalar_name(e))) + ">";
}

std::string value_text(const ir::Module& m, const ir::Function& f, ir::ValueId v) {
  const ir::ValueData& vd = f.values[v];
  std::string s = vd.name.empty() ? std::string("a value") : "%" + vd.name;
  if (vd.def_op != ir::kNoOp) {
    const ir::OpData& op = f.ops[vd.def_op];
    s += " = " + ir::op_info(op.code).name;
    if (op.loc.known()) s += " at " + std::to_string(op.loc.line) + ":" + std::to_string(op.loc.col);
  }
  return s + ", " + shape_text(m, vd.type);
}

// Bytes of one element: pointers are 8, i1 counts as a byte.
int64_t elem_bytes(const ir::Module& m, ir::TypeId t) {
  const ir::TypeData& d = m.types.get(t);
  if (m.types.is_ptr(d.elem)) return 8;
  ir::Scalar s = ir::Scalar::I32;
  m.types.elem_scalar(t, &s);
  return std::max(1, ir::scalar_bits(s) / 8);
}

// The values `v`'s data comes from: an op's operands; for the results and block arguments of
// for, while and if, the matching init and yielded value only; for other ops with regions
// (combine regions), every operand and everything their regions pass on.
void sources(const ir::Function& f, ir::ValueId v, std::vector<ir::ValueId>* out) {
  const ir::ValueData& vd = f.values[v];
  auto at = [&](const std::vector<ir::ValueId>& vals, size_t i) {
    if (i < vals.size()) out->push_back(vals[i]);
  };
  if (vd.def_op != ir::kNoOp) {
    const ir::OpData& op = f.ops[vd.def_op];
    switch (op.code) {
      case ir::Opcode::For:  // operands: lo, hi, step, inits
        at(op.operands, vd.index + 3);
        if (!op.regions.empty()) at(f.passed_on(op.regions[0]), vd.index);
        return;
      case ir::Opcode::If:
        for (ir::BlockId b : op.regions) at(f.passed_on(b), vd.index);
        return;
      case ir::Opcode::While:
        if (!op.regions.empty()) at(f.passed_on(op.regions[0]), vd.index);
        return;
      default:
        out->insert(out->end(), op.operands.begin(), op.operands.end());
        for (ir::BlockId b : op.regions) {
          std::vector<ir::ValueId> p = f.passed_on(b);
          out->insert(out->end(), p.begin(), p.end());
        }
        return;
    }
  }
  if (vd.def_block == ir::kNoBlock) return;  // a parameter
  const ir::OpId owner = f.blocks[vd.def_block].parent_op;
  if (owner == ir::kNoOp) return;
  const ir::OpData& op = f.ops[owner];
  if (op.code == ir::Opcode::For) {
    if (vd.index == 0) {  // the induction variable
      at(op.operands, 0), at(op.operands, 1), at(op.operands, 2);
    } else {
      at(op.operands, vd.index + 2);
      at(f.passed_on(vd.def_block), vd.index - 1);
    }
  } else if (op.code == ir::Opcode::While && op.regions.size() == 2) {
    if (vd.def_block == op.regions[0]) {  // before: the inits, and what the after region yields
      at(op.operands, vd.index);
      at(f.passed_on(op.regions[1]), vd.index);
    } else {  // after: what the condition passes on
      at(f.passed_on(op.regions[0]), vd.index);
    }
  } else {
    out->insert(out->end(), op.operands.begin(), op.operands.end());
  }
}

// The values whose data may reach a dot's a or b operand.
std::vector<bool> feeds_dot_operands(const ir::Function& f) {
  std::vector<bool> feeds(f.values.size(), false);
  std::vector<ir::ValueId> work;
  auto mark = [&](ir::ValueId v) {
    if (v != ir::kNoValue && !feeds[v]) {
      feeds[v] = true;
      work.push_back(v);
    }
  };
  for (const ir::OpData& op : f.ops)
    if (op.code == ir::Opcode::Dot && op.operands.size() >= 2) {
      mark(op.operands[0]);
      mark(op.operands[1]);
    }
  std::vector<ir::ValueId> src;
  while (!work.empty()) {
    ir::ValueId v = work.back();
    work.pop_back();
    src.clear();
    sources(f, v, &src);
    for (ir::ValueId u : src) mark(u);
  }
  return feeds;
}

}  // namespace

Needs estimate(const ir::Module& m, const ir::Function& f, int num_warps, const Limits& limits) {
  Needs n;
  n.threads = int64_t(num_warps) * 32;
  // Registers: the block values a loop carries are live together across its back edge, each
  // spread over the program's threads in 32-bit registers. Left out: tiles on their way to a
  // dot's operands (a pipelined tile may live in shared memory) and blocks of pointers (kept as
  // a base and offsets). Values that are not carried need not be live all at once.
  std::vector<bool> feeds = feeds_dot_operands(f);
  for (const ir::OpData& op : f.ops) {
    if (op.code != ir::Opcode::For && op.code != ir::Opcode::While) continue;
    if (op.regions.empty()) continue;
    const ir::BlockData& body = f.blocks[op.regions.front()];  // for: iv and carried; while: carried
    int64_t regs = 0;
    std::string why;
    for (ir::ValueId v : body.args) {
      ir::TypeId t = f.values[v].type;
      if (!m.types.is_block(t) || !m.types.is_concrete(t) || feeds[v] || m.types.is_ptr(m.types.get(t).elem)) continue;
      int64_t bytes = m.types.num_elements(t) * elem_bytes(m, t);
      regs += (bytes + 4 * n.threads - 1) / (4 * n.threads);
      why += (why.empty() ? "" : " and ") + value_text(m, f, v);
    }
    if (regs > n.registers) {
      n.registers = regs;
      n.registers_why = "the block values the loop" +
                        (op.loc.known() ? " at " + std::to_string(op.loc.line) + ":" + std::to_string(op.loc.col) : "") +
                        " carries (" + why + ")";
    }
  }
  if (limits.tensor_cores) {
    for (const ir::OpData& op : f.ops) {
      if (op.code != ir::Opcode::Dot || op.operands.size() < 2) continue;
      ir::Scalar s = ir::Scalar::F32;
      if (!m.types.elem_scalar(f.values[op.operands[0]].type, &s) || (s != ir::Scalar::F16 && s != ir::Scalar::BF16))
        continue;
      int64_t bytes = 0;
      for (int i = 0; i < 2; ++i) {
        ir::TypeId t = f.values[op.operands[i]].type;
        if (m.types.is_concrete(t)) bytes += m.types.num_elements(t) * elem_bytes(m, t);
      }
      if (bytes > n.shared_bytes) {
        n.shared_bytes = bytes;
        n.shared_why = "the operand tiles of " + value_text(m, f, op.results[0]);
      }
    }
  }
  return n;
}

std::string prune_reason(const Needs& n, const Limits& l, int num_warps) {
  const std::string at = std::to_string(num_warps) + " warps";
  if (l.max_threads && n.threads > l.max_threads)
    return at + " are " + std::to_string(n.threads) + " threads, more than the " + std::to_string(l.max_threads) +
           " a program can have";
  if (l.max_shared_bytes && n.shared_bytes > l.max_shared_bytes)
    return "needs at least " + std::to_string(n.shared_bytes) + " bytes of shared memory for " + n.shared_why +
           ", more than the " + std::to_string(l.max_shared_bytes) + " a program can have";
  int64_t per_thread = l.max_registers_per_thread;
  if (l.registers_per_program && n.threads) {
    int64_t share = l.registers_per_program / n.threads;
    per_thread = per_thread ? std::min(per_thread, share) : share;
  }
  if (per_thread && n.registers > per_thread)
    return "needs at least " + std::to_string(n.registers) + " registers per thread for " + n.registers_why +
           ", more than the " + std::to_string(per_thread) + " a thread can have at " + at;
  return std::string();
}

}  // namespace tri::tune
