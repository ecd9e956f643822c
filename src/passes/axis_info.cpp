// Axis info analysis (the rules and their definitions are in axis_info.h): one forward walk over
// a kernel's regions, iterating loop-carried values to a fixpoint, then the device functions it
// calls with conservative parameters.
#include "passes/axis_info.h"

#include "base/launch.h"

#include <algorithm>
#include <set>

namespace tri::passes {

using namespace ir;

AxisInfo AxisInfo::conservative(int rank) {
  AxisInfo a;
  a.contiguity.assign(rank, 1);
  a.divisibility.assign(rank, 1);
  a.constancy.assign(rank, 1);
  return a;
}

int64_t AxisInfo::lane_divisibility() const {
  int64_t best = 1;
  for (int d = 0; d < rank(); ++d)
    if (contiguity[d] == 1) best = std::max(best, divisibility[d]);
  if (constant && rank() > 0) best = std::max(best, divisibility[0]);
  return best;
}

namespace {

// The largest power of two dividing x (the cap for 0 and past it).
int64_t lowbit(uint64_t x) {
  if (x == 0) return kMaxDivisibility;
  uint64_t b = x & (~x + 1);
  return b >= static_cast<uint64_t>(kMaxDivisibility) ? kMaxDivisibility : static_cast<int64_t>(b);
}

int log2_of(int64_t p) {
  int k = 0;
  while ((int64_t(1) << k) < p) ++k;
  return k;
}

// Divisibility valid at the starts of aligned runs of g lanes along d (g a power of two).
int64_t div_at(const AxisInfo& x, int d, int64_t g) {
  int64_t own = g < x.contiguity[d] ? std::min(x.divisibility[d], g) : x.divisibility[d];
  return std::max(own, x.lane_divisibility());
}

// The join of a and b along d (a fact that holds for either).
void join_dim(const AxisInfo& a, const AxisInfo& b, int d, AxisInfo* out) {
  int64_t c = std::min(a.contiguity[d], b.contiguity[d]);
  out->contiguity[d] = c;
  out->divisibility[d] = std::min(div_at(a, d, c), div_at(b, d, c));
  out->constancy[d] = std::min(a.constancy[d], b.constancy[d]);
}

AxisInfo join(const AxisInfo& a, const AxisInfo& b) {
  AxisInfo out = AxisInfo::conservative(a.rank());
  for (int d = 0; d < a.rank(); ++d) join_dim(a, b, d, &out);
  if (a.constant && b.constant && *a.constant == *b.constant) out.constant = a.constant;
  out.nonneg = a.nonneg && b.nonneg;
  return out;
}

// Integer facts for an assume: every lane divisible by `div`, or nonneg.
struct Fact {
  int64_t div = 1;
  bool nonneg = false;
};

class Analyzer {
 public:
  Analyzer(const Module& m, std::map<const Function*, std::vector<AxisInfo>>* infos) : m_(m), types_(m.types), infos_(infos) {}

  void analyze(const Function& f, bool seed_params) {
    if (infos_->count(&f)) return;
    std::vector<AxisInfo>& info = (*infos_)[&f];
    info.resize(f.values.size());
    for (ValueId v = 0; v < f.values.size(); ++v) info[v] = AxisInfo::conservative(static_cast<int>(shape(f, v).size()));
    Fn fn{&f, &info, {}};
    collect_facts(fn);
    for (const Param& p : f.params) {
      AxisInfo a = AxisInfo::conservative(1);
      if (seed_params) {
        if (types_.is_ptr(p.type) && p.align > 0) a.divisibility[0] = lowbit(p.align);
        if (!types_.is_ptr(p.type) && p.divisible > 0 && is_int_type(p.type)) a.divisibility[0] = lowbit(p.divisible);
      }
      set(fn, p.value, a);
    }
    run_block(fn, f.body);
    std::vector<const Function*> callees;
    for (const OpData& op : f.ops)
      if (op.code == Opcode::Call)
        if (const Function* g = m_.find(op.attrs[0].s)) callees.push_back(g);
    for (const Function* g : callees) analyze(*g, false);
  }

 private:
  struct Fn {
    const Function* f;
    std::vector<AxisInfo>* info;
    std::map<ValueId, Fact> facts;
  };

  // ---- types

  std::vector<int64_t> shape(const Function& f, ValueId v) const {
    TypeId t = f.type_of(v);
    if (!types_.is_block(t)) return {1};
    std::vector<int64_t> s;
    for (const Dim& d : types_.get(t).dims) s.push_back(d.symbolic ? 1 : d.value);
    return s;
  }
  bool elem_is_ptr(TypeId t) const { return types_.is_ptr(types_.elem_of(t)); }
  bool is_int_type(TypeId t) const {
    Scalar s;
    return types_.elem_scalar(t, &s) && is_int(s);
  }
  int width(TypeId t) const {
    Scalar s;
    if (types_.elem_scalar(t, &s)) return scalar_bits(s);
    return 64;
  }
  // Bytes of one pointee element of a pointer (or block of pointers) type.
  int64_t elem_bytes(TypeId t) const {
    TypeId p = types_.elem_of(t);
    if (!types_.is_ptr(p)) return 1;
    Scalar s = types_.get(types_.get(p).pointee).scalar;
    return s == Scalar::I1 ? 1 : scalar_bits(s) / 8;
  }
  // v wrapped to width w: sign-extended (i1 stays 0/1).
  static int64_t wrap(int w, uint64_t v) {
    if (w >= 64) return static_cast<int64_t>(v);
    uint64_t mask = (uint64_t(1) << w) - 1;
    v &= mask;
    if (w > 1 && (v >> (w - 1))) v |= ~mask;
    return static_cast<int64_t>(v);
  }
  static uint64_t unsigned_of(int w, int64_t v) {
    return w >= 64 ? static_cast<uint64_t>(v) : static_cast<uint64_t>(v) & ((uint64_t(1) << w) - 1);
  }

  // ---- facts

  AxisInfo from_constant(const std::vector<int64_t>& s, int w, int64_t value) const {
    AxisInfo a = AxisInfo::conservative(static_cast<int>(s.size()));
    int64_t v = wrap(w, static_cast<uint64_t>(value));
    for (size_t d = 0; d < s.size(); ++d) {
      a.constancy[d] = s[d];
      a.divisibility[d] = lowbit(unsigned_of(w, v));
    }
    a.constant = v;
    a.nonneg = v >= 0;
    return a;
  }

  const AxisInfo& get(const Fn& fn, ValueId v) const { return (*fn.info)[v]; }

  void set(Fn& fn, ValueId v, AxisInfo a) {
    const std::vector<int64_t> s = shape(*fn.f, v);
    if (a.rank() != static_cast<int>(s.size())) a = AxisInfo::conservative(static_cast<int>(s.size()));
    for (size_t d = 0; d < s.size(); ++d) {
      a.contiguity[d] = std::clamp<int64_t>(a.contiguity[d], 1, s[d]);
      a.constancy[d] = std::clamp<int64_t>(a.constancy[d], 1, s[d]);
      a.divisibility[d] = std::clamp<int64_t>(a.divisibility[d], 1, kMaxDivisibility);
    }
    auto it = fn.facts.find(v);
    if (it != fn.facts.end()) {
      for (auto& dv : a.divisibility) dv = std::max(dv, it->second.div);
      a.nonneg = a.nonneg || it->second.nonneg;
    }
    if (!is_int_type(fn.f->type_of(v)) || width(fn.f->type_of(v)) == 1) a.nonneg = false;
    if (!is_int_type(fn.f->type_of(v))) {
      a.constant.reset();
      a.nonneg = false;
    }
    (*fn.info)[v] = std::move(a);
  }

  // A constant integer value of v known from its definition alone (const, or a splat of one).
  std::optional<int64_t> syntactic_const(const Function& f, ValueId v) const {
    const ValueData& vd = f.value(v);
    if (vd.def_op == kNoOp) return std::nullopt;
    const OpData& op = f.op(vd.def_op);
    if (op.code == Opcode::Splat || op.code == Opcode::Broadcast) return syntactic_const(f, op.operands[0]);
    if (op.code != Opcode::Const || !is_int_type(vd.type)) return std::nullopt;
    const Attr& a = op.attrs[0];
    if (a.kind != Attr::Kind::Int && a.kind != Attr::Kind::Bool) return std::nullopt;
    return wrap(width(vd.type), static_cast<uint64_t>(a.i));
  }

  BlockId def_block(const Function& f, ValueId v) const {
    const ValueData& vd = f.value(v);
    return vd.def_op == kNoOp ? vd.def_block : f.op(vd.def_op).parent;
  }

  void add_fact(Fn& fn, ValueId x, BlockId where, Fact fact) {
    if (def_block(*fn.f, x) != where) return;
    Fact& have = fn.facts[x];
    have.div = std::max(have.div, fact.div);
    have.nonneg = have.nonneg || fact.nonneg;
  }

  // Facts from `assume cond` in block `where` (the patterns listed in axis_info.h).
  void facts_of_cond(Fn& fn, ValueId c, BlockId where, int depth) {
    const Function& f = *fn.f;
    if (depth > 8) return;
    const ValueData& cd = f.value(c);
    if (cd.def_op == kNoOp) return;
    const OpData& op = f.op(cd.def_op);
    if (op.code == Opcode::And) {
      facts_of_cond(fn, op.operands[0], where, depth + 1);
      facts_of_cond(fn, op.operands[1], where, depth + 1);
      return;
    }
    if (op.code != Opcode::Cmp) return;
    static const char* const kPreds[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
    const std::string pred = kPreds[op.attrs[0].i];
    ValueId l = op.operands[0], r = op.operands[1];
    if (!is_int_type(f.type_of(l))) return;
    if (pred == "eq") {
      for (int side = 0; side < 2; ++side) {
        ValueId x = side ? r : l, z = side ? l : r;
        auto zc = syntactic_const(f, z);
        if (!zc || *zc != 0) continue;
        const ValueData& xd = f.value(x);
        if (xd.def_op == kNoOp) continue;
        const OpData& xo = f.op(xd.def_op);
        const int w = width(xd.type);
        auto q = xo.code == Opcode::SRem || xo.code == Opcode::URem || xo.code == Opcode::And
                     ? syntactic_const(f, xo.operands[1])
                     : std::nullopt;
        if (!q) continue;
        uint64_t uq = unsigned_of(w, *q);
        if (xo.code == Opcode::And) {
          // x & (2^p - 1) == 0: the low p bits are zero.
          if (uq == 0 || ((uq + 1) & uq) != 0) continue;
          uint64_t p2 = uq + 1;
          add_fact(fn, xo.operands[0], where, {p2 == 0 ? kMaxDivisibility : lowbit(p2), false});
        } else if (uq != 0) {
          add_fact(fn, xo.operands[0], where, {lowbit(xo.code == Opcode::SRem ? static_cast<uint64_t>(*q) : uq), false});
        }
      }
      return;
    }
    // x >= c (c >= 0) or x > c (c >= -1), signed, either order.
    auto rc = syntactic_const(f, r), lc = syntactic_const(f, l);
    if (rc && ((pred == "sge" && *rc >= 0) || (pred == "sgt" && *rc >= -1))) add_fact(fn, l, where, {1, true});
    if (lc && ((pred == "sle" && *lc >= 0) || (pred == "slt" && *lc >= -1))) add_fact(fn, r, where, {1, true});
  }

  void collect_facts(Fn& fn) {
    const Function& f = *fn.f;
    for (OpId o = 0; o < f.ops.size(); ++o) {
      const OpData& op = f.op(o);
      if (op.code == Opcode::Assume && op.parent != kNoBlock) facts_of_cond(fn, op.operands[0], op.parent, 0);
    }
  }

  // ---- walking

  void run_block(Fn& fn, BlockId b) {
    for (OpId o : fn.f->block(b).ops) visit(fn, o);
  }

  void visit_for(Fn& fn, OpId o) {
    const Function& f = *fn.f;
    const OpData& op = f.op(o);
    const BlockData& body = f.block(op.regions[0]);
    const size_t n = op.operands.size() - 3;
    {
      AxisInfo iv = AxisInfo::conservative(1);
      iv.divisibility[0] = std::min(get(fn, op.operands[0]).lane_divisibility(), get(fn, op.operands[2]).lane_divisibility());
      set(fn, body.args[0], iv);
    }
    std::vector<AxisInfo> state;
    for (size_t i = 0; i < n; ++i) state.push_back(get(fn, op.operands[3 + i]));
    for (int iter = 0;; ++iter) {
      for (size_t i = 0; i < n; ++i) set(fn, body.args[1 + i], state[i]);
      run_block(fn, op.regions[0]);
      std::vector<ValueId> ys = f.passed_on(op.regions[0]);
      bool changed = false;
      for (size_t i = 0; i < n && i < ys.size(); ++i) {
        // Joined with the state, not the argument: assume facts raise the argument only.
        AxisInfo next = join(state[i], get(fn, ys[i]));
        if (iter >= 64) next = AxisInfo::conservative(next.rank());
        if (next != state[i]) changed = true;
        state[i] = next;
      }
      if (!changed) break;
    }
    // A result is an init or a yielded value; assume facts about the block arguments do not
    // carry over to it.
    std::vector<ValueId> ys = f.passed_on(op.regions[0]);
    for (size_t i = 0; i < op.results.size() && i < ys.size(); ++i)
      set(fn, op.results[i], join(get(fn, op.operands[3 + i]), get(fn, ys[i])));
  }

  void visit_while(Fn& fn, OpId o) {
    const Function& f = *fn.f;
    const OpData& op = f.op(o);
    const BlockData& before = f.block(op.regions[0]);
    const BlockData& after = f.block(op.regions[1]);
    std::vector<AxisInfo> state;
    for (ValueId v : op.operands) state.push_back(get(fn, v));
    for (int iter = 0;; ++iter) {
      for (size_t i = 0; i < before.args.size() && i < state.size(); ++i) set(fn, before.args[i], state[i]);
      run_block(fn, op.regions[0]);
      std::vector<ValueId> cs = f.passed_on(op.regions[0]);
      for (size_t i = 0; i < after.args.size() && i < cs.size(); ++i) set(fn, after.args[i], get(fn, cs[i]));
      run_block(fn, op.regions[1]);
      std::vector<ValueId> ys = f.passed_on(op.regions[1]);
      bool changed = false;
      for (size_t i = 0; i < before.args.size() && i < ys.size(); ++i) {
        AxisInfo next = join(state[i], get(fn, ys[i]));
        if (iter >= 64) next = AxisInfo::conservative(next.rank());
        if (next != state[i]) changed = true;
        state[i] = next;
      }
      if (!changed) {
        for (size_t i = 0; i < op.results.size() && i < cs.size(); ++i) set(fn, op.results[i], get(fn, cs[i]));
        break;
      }
    }
  }

  void visit_if(Fn& fn, OpId o) {
    const Function& f = *fn.f;
    const OpData& op = f.op(o);
    for (BlockId r : op.regions) run_block(fn, r);
    if (op.regions.size() < 2) return;
    std::vector<ValueId> a = f.passed_on(op.regions[0]), b = f.passed_on(op.regions[1]);
    for (size_t i = 0; i < op.results.size() && i < a.size() && i < b.size(); ++i)
      set(fn, op.results[i], join(get(fn, a[i]), get(fn, b[i])));
  }

  // ---- ops

  void visit(Fn& fn, OpId o) {
    const Function& f = *fn.f;
    const OpData& op = f.op(o);
    switch (op.code) {
      case Opcode::For: return visit_for(fn, o);
      case Opcode::While: return visit_while(fn, o);
      case Opcode::If: return visit_if(fn, o);
      default: break;
    }
    for (BlockId r : op.regions) {
      // Combine regions of reduce / scan: their arguments stay conservative.
      run_block(fn, r);
    }
    if (op.code == Opcode::Split) {
      const AxisInfo& x = get(fn, op.operands[0]);
      for (ValueId res : op.results) {
        if (x.rank() < 2) {
          set(fn, res, shapeless(x, shape(f, res)));
          continue;
        }
        AxisInfo a = x;
        a.contiguity.pop_back();
        a.divisibility.pop_back();
        a.constancy.pop_back();
        set(fn, res, a);
      }
      return;
    }
    if (op.results.size() != 1) return;
    const ValueId res = op.results[0];
    set(fn, res, compute(fn, o));
  }

  AxisInfo compute(Fn& fn, OpId o) {
    const Function& f = *fn.f;
    const OpData& op = f.op(o);
    const ValueId res = op.results[0];
    const TypeId rt = f.type_of(res);
    const std::vector<int64_t> s = shape(f, res);
    const int r = static_cast<int>(s.size());
    const int w = width(rt);
    AxisInfo out = AxisInfo::conservative(r);
    auto opnd = [&](int i) -> const AxisInfo& { return get(fn, op.operands[i]); };
    // Unspecialized IR (a constexpr name left in an attribute): nothing is known.
    for (const Attr& a : op.attrs)
      if (a.kind == Attr::Kind::Sym) return out;

    switch (op.code) {
      case Opcode::ProgramId:
      case Opcode::NumPrograms:
        out.nonneg = true;
        return out;
      case Opcode::Const: {
        const Attr& a = op.attrs[0];
        if (is_int_type(rt) && (a.kind == Attr::Kind::Int || a.kind == Attr::Kind::Bool)) return from_constant(s, w, a.i);
        for (int d = 0; d < r; ++d) out.constancy[d] = s[d];
        return out;
      }
      case Opcode::Arange: {
        const int64_t start = op.attrs[0].i;
        out.contiguity[0] = s[0];
        out.divisibility[0] = lowbit(static_cast<uint64_t>(start));
        out.nonneg = start >= 0;
        if (s[0] == 1) out.constant = start;
        return out;
      }
      case Opcode::Splat: {
        const AxisInfo& x = opnd(0);
        for (int d = 0; d < r; ++d) {
          out.constancy[d] = s[d];
          out.divisibility[d] = x.lane_divisibility();
        }
        out.constant = x.constant;
        out.nonneg = x.nonneg;
        return out;
      }
      case Opcode::Broadcast: {
        const AxisInfo& x = opnd(0);
        const std::vector<int64_t> xs = shape(f, op.operands[0]);
        out = x;
        for (int d = 0; d < r; ++d)
          if (xs[d] == 1 && s[d] != 1) {
            out.contiguity[d] = 1;
            out.constancy[d] = s[d];
            out.divisibility[d] = x.lane_divisibility();
          }
        return out;
      }
      case Opcode::ExpandDims: {
        const AxisInfo& x = opnd(0);
        if (!types_.is_block(f.type_of(op.operands[0]))) return shapeless(x, s);
        const int axis = static_cast<int>(op.attrs[0].i);
        out = x;
        out.contiguity.insert(out.contiguity.begin() + axis, 1);
        out.constancy.insert(out.constancy.begin() + axis, 1);
        out.divisibility.insert(out.divisibility.begin() + axis, x.lane_divisibility());
        return out;
      }
      case Opcode::Reshape: {
        // A reshape that only inserts or drops dimensions of size 1 (Triton writes x[:, None] of a
        // descriptor's offsets this way) keeps every fact of the other dimensions, as
        // expand_dims does; any other reshape keeps the shapeless ones.
        const AxisInfo& x = opnd(0);
        std::vector<int64_t> xs;
        if (types_.is_block(f.type_of(op.operands[0])))
          for (const auto& dim : types_.get(f.type_of(op.operands[0])).dims) xs.push_back(dim.value);
        std::vector<int> from, to;  // the positions of the dimensions larger than 1
        for (size_t d = 0; d < xs.size(); ++d)
          if (xs[d] != 1) from.push_back(static_cast<int>(d));
        for (size_t d = 0; d < s.size(); ++d)
          if (s[d] != 1) to.push_back(static_cast<int>(d));
        bool unit_only = from.size() == to.size() && x.rank() == static_cast<int>(xs.size());
        for (size_t i = 0; unit_only && i < from.size(); ++i) unit_only = xs[from[i]] == s[to[i]];
        if (!unit_only) return shapeless(x, s);
        out = AxisInfo::conservative(static_cast<int>(s.size()));
        for (size_t d = 0; d < s.size(); ++d) out.divisibility[d] = x.lane_divisibility();
        for (size_t i = 0; i < from.size(); ++i) {
          out.contiguity[to[i]] = x.contiguity[from[i]];
          out.divisibility[to[i]] = x.divisibility[from[i]];
          out.constancy[to[i]] = x.constancy[from[i]];
        }
        out.constant = x.constant;
        out.nonneg = x.nonneg;
        if (x.constant)
          for (size_t d = 0; d < s.size(); ++d) out.constancy[d] = s[d];
        return out;
      }
      case Opcode::Permute: {
        const AxisInfo& x = opnd(0);
        const std::vector<int64_t>& order = op.attrs[0].ints;
        out = x;
        for (int d = 0; d < r; ++d) {
          out.contiguity[d] = x.contiguity[order[d]];
          out.divisibility[d] = x.divisibility[order[d]];
          out.constancy[d] = x.constancy[order[d]];
        }
        return out;
      }
      case Opcode::Join: {
        const AxisInfo& a = opnd(0);
        const AxisInfo& b = opnd(1);
        if (!types_.is_block(f.type_of(op.operands[0]))) {
          out.divisibility[0] = std::min(a.lane_divisibility(), b.lane_divisibility());
          return out;
        }
        AxisInfo j = join(a, b);
        out = j;
        out.constant.reset();
        out.contiguity.push_back(1);
        out.constancy.push_back(1);
        out.divisibility.push_back(std::min(a.lane_divisibility(), b.lane_divisibility()));
        return out;
      }
      case Opcode::Cat: return join(opnd(0), opnd(1));
      case Opcode::AddPtr:
        // Offsets are sign-extended: a run that wraps around the offset type's range would not
        // be contiguous in memory. Like Triton, this assumes index arithmetic does not overflow
        // (axis_info.h says why the vector accesses stay correct even then).
        return addptr(opnd(0), opnd(1), elem_bytes(rt), r);
      case Opcode::Add:
      case Opcode::Sub:
      case Opcode::Mul:
        if (!is_int_type(rt)) return elementwise(fn, o, r);
        return arith(op.code, opnd(0), opnd(1), r, w);
      case Opcode::Neg:
      case Opcode::Abs: {
        if (!is_int_type(rt)) return elementwise(fn, o, r);
        const AxisInfo& x = opnd(0);
        for (int d = 0; d < r; ++d) {
          out.constancy[d] = x.constancy[d];
          out.divisibility[d] = x.lane_divisibility();
        }
        if (x.constant) return from_constant(s, w, op.code == Opcode::Neg ? -*x.constant : std::abs(*x.constant));
        return out;
      }
      case Opcode::SDiv:
      case Opcode::UDiv:
      case Opcode::SRem:
      case Opcode::URem:
        return divrem(op.code, opnd(0), opnd(1), s, w);
      case Opcode::Shl:
      case Opcode::LShr:
      case Opcode::AShr:
        return shift(op.code, opnd(0), opnd(1), s, w);
      case Opcode::And:
      case Opcode::Or:
      case Opcode::Xor:
      case Opcode::SMin:
      case Opcode::SMax:
      case Opcode::UMin:
      case Opcode::UMax:
        return bitwise(op.code, opnd(0), opnd(1), s, w);
      case Opcode::Cmp: return cmp(fn, o, r);
      case Opcode::Select: {
        const AxisInfo& c = opnd(0);
        const AxisInfo& a = opnd(1);
        const AxisInfo& b = opnd(2);
        if (c.constant) return *c.constant ? a : b;
        for (int d = 0; d < r; ++d) {
          const int64_t g = std::min({a.contiguity[d], b.contiguity[d], c.constancy[d]});
          out.contiguity[d] = g;
          out.divisibility[d] = std::min(div_at(a, d, g), div_at(b, d, g));
          out.constancy[d] = std::min({a.constancy[d], b.constancy[d], c.constancy[d]});
        }
        if (a.constant && b.constant && *a.constant == *b.constant) out.constant = a.constant;
        out.nonneg = a.nonneg && b.nonneg;
        return out;
      }
      case Opcode::Trunc: {
        const AxisInfo& x = opnd(0);
        out = x;
        out.nonneg = false;
        if (x.constant) return from_constant(s, w, *x.constant);
        out.constant.reset();
        return out;
      }
      case Opcode::ZExt:
      case Opcode::SExt: {
        const AxisInfo& x = opnd(0);
        const int sw = width(f.type_of(op.operands[0]));
        if (x.constant)
          return from_constant(s, w, op.code == Opcode::ZExt ? static_cast<int64_t>(unsigned_of(sw, *x.constant)) : *x.constant);
        out = x;
        for (int d = 0; d < r; ++d) {
          // Only runs that start on a multiple of their length cannot cross the wrap-around point.
          const int64_t g = std::min(x.contiguity[d], x.divisibility[d]);
          out.contiguity[d] = g;
          out.divisibility[d] = div_at(x, d, g);
        }
        out.nonneg = op.code == Opcode::ZExt ? sw < w : x.nonneg;
        return out;
      }
      case Opcode::Bitcast:
      case Opcode::PtrToInt:
      case Opcode::IntToPtr: {
        const TypeId st = f.type_of(op.operands[0]);
        const bool from_ptr = elem_is_ptr(st), to_ptr = elem_is_ptr(rt);
        const bool from_int = is_int_type(st), to_int = is_int_type(rt);
        if (!(from_ptr || from_int) || !(to_ptr || to_int)) return elementwise(fn, o, r);
        const AxisInfo& x = opnd(0);
        const int64_t step_from = from_ptr ? elem_bytes(st) : 1, step_to = to_ptr ? elem_bytes(rt) : 1;
        out = x;
        out.constant.reset();
        out.nonneg = false;
        if (from_int && to_int) return x;
        if (step_from != step_to)
          for (int d = 0; d < r; ++d) {
            out.contiguity[d] = 1;
            out.divisibility[d] = div_at(x, d, 1);
          }
        return out;
      }
      case Opcode::MultipleOf: {
        out = opnd(0);
        apply_multiple_of(op.attrs[0].ints, s, &out);
        return out;
      }
      case Opcode::MaxContiguous: {
        out = opnd(0);
        const std::vector<int64_t>& v = op.attrs[0].ints;
        for (int d = 0; d < r && d < static_cast<int>(v.size()); ++d) {
          if (v[d] < 1) continue;
          const int64_t c = v[d] >= s[d] ? s[d] : lowbit(static_cast<uint64_t>(v[d]));
          if (c > out.contiguity[d]) {
            out.contiguity[d] = c;
            out.constancy[d] = 1;
            out.constant.reset();
          }
        }
        // multiple_of right under it speaks of these (now longer) runs too.
        const ValueData& sd = f.value(op.operands[0]);
        if (sd.def_op != kNoOp && f.op(sd.def_op).code == Opcode::MultipleOf)
          apply_multiple_of(f.op(sd.def_op).attrs[0].ints, s, &out);
        return out;
      }
      case Opcode::ConsumeToken: return opnd(0);
      case Opcode::SymmAt: {
        // Every target's heaps start on kSymmetricHeapAlign bytes, so the shift to a peer's
        // copy keeps the runs and the alignment up to that.
        AxisInfo a = opnd(0);
        a.constant.reset();
        for (int64_t& d : a.divisibility) d = std::min<int64_t>(d, kSymmetricHeapAlign);
        return a;
      }
      case Opcode::Get:
      case Opcode::Wait:
      case Opcode::Load:
      case Opcode::Atomic:
      case Opcode::AtomicCas:
      case Opcode::Reduce:
      case Opcode::Scan:
      case Opcode::Dot:
      case Opcode::Call:
      case Opcode::InlineAsm:
        return out;
      default:
        return elementwise(fn, o, r);
    }
  }

  // Facts that survive a change of shape: every-lane divisibility, a known constant, nonneg.
  AxisInfo shapeless(const AxisInfo& x, const std::vector<int64_t>& s) const {
    AxisInfo out = AxisInfo::conservative(static_cast<int>(s.size()));
    for (size_t d = 0; d < s.size(); ++d) {
      out.divisibility[d] = x.lane_divisibility();
      if (x.constant) out.constancy[d] = s[d];
    }
    out.constant = x.constant;
    out.nonneg = x.nonneg;
    return out;
  }

  // Any other pure elementwise op: equal inputs give equal outputs.
  AxisInfo elementwise(Fn& fn, OpId o, int r) const {
    const Function& f = *fn.f;
    const OpData& op = f.op(o);
    AxisInfo out = AxisInfo::conservative(r);
    const OpInfo& info = op_info(op.code);
    if (!info.is_pure() || op.operands.empty()) return out;
    const TypeId rt = f.type_of(op.results[0]);
    const bool rblock = types_.is_block(rt);
    for (int d = 0; d < r; ++d) {
      int64_t k = rblock ? types_.get(rt).dims[d].value : 1;
      for (ValueId v : op.operands) {
        if (v == kNoValue) continue;
        const AxisInfo& a = get(fn, v);
        if (a.rank() != r) return AxisInfo::conservative(r);
        k = std::min(k, a.constancy[d]);
      }
      out.constancy[d] = k;
    }
    return out;
  }

  void apply_multiple_of(const std::vector<int64_t>& v, const std::vector<int64_t>& s, AxisInfo* out) const {
    for (size_t d = 0; d < s.size() && d < v.size(); ++d) {
      const int64_t n = v[d];
      if (n < 1) continue;
      const int64_t c = out->contiguity[d], k = out->constancy[d];
      // The run starts the hint speaks of (positions that are multiples of n) must include ours.
      const bool applies = n == 1 || c == s[d] || (c % n == 0) || (c == 1 && (k % n == 0 || k == s[d]));
      if (applies) out->divisibility[d] = std::max(out->divisibility[d], lowbit(static_cast<uint64_t>(n)));
    }
  }

  AxisInfo addptr(const AxisInfo& p, const AxisInfo& off, int64_t eb, int r) const {
    AxisInfo out = AxisInfo::conservative(r);
    for (int d = 0; d < r; ++d) {
      const int64_t c = std::max(std::min(p.contiguity[d], off.constancy[d]), std::min(p.constancy[d], off.contiguity[d]));
      out.contiguity[d] = c;
      const int64_t od = std::min(kMaxDivisibility, div_at(off, d, c) * eb);
      out.divisibility[d] = std::min(div_at(p, d, c), od);
      out.constancy[d] = std::min(p.constancy[d], off.constancy[d]);
    }
    return out;
  }

  std::optional<int64_t> fold(Opcode code, int64_t a, int64_t b, int w) const {
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (code) {
      case Opcode::Add: return wrap(w, ua + ub);
      case Opcode::Sub: return wrap(w, ua - ub);
      case Opcode::Mul: return wrap(w, ua * ub);
      case Opcode::And: return wrap(w, ua & ub);
      case Opcode::Or: return wrap(w, ua | ub);
      case Opcode::Xor: return wrap(w, ua ^ ub);
      default: return std::nullopt;
    }
  }

  AxisInfo arith(Opcode code, const AxisInfo& l, const AxisInfo& rr, int r, int w) const {
    std::vector<int64_t> s(r);
    AxisInfo out = AxisInfo::conservative(r);
    if (l.constant && rr.constant && w > 1) {
      // Both operands are uniform: the result is too (constancy = the smaller of theirs).
      for (int d = 0; d < r; ++d) s[d] = std::min(l.constancy[d], rr.constancy[d]);
      AxisInfo c = from_constant(s, w, *fold(code, *l.constant, *rr.constant, w));
      return c;
    }
    for (int d = 0; d < r; ++d) out.constancy[d] = std::min(l.constancy[d], rr.constancy[d]);
    if (code == Opcode::Mul) {
      for (int side = 0; side < 2; ++side) {
        const AxisInfo& k = side ? l : rr;  // the constant side
        const AxisInfo& x = side ? rr : l;
        if (k.constant && *k.constant == 1) return x;
        if (k.constant && *k.constant == 0) return k;
      }
      const int lg = std::min(30, log2_of(l.lane_divisibility()) + log2_of(rr.lane_divisibility()));
      for (int d = 0; d < r; ++d) out.divisibility[d] = int64_t(1) << lg;
      return out;
    }
    for (int d = 0; d < r; ++d) {
      int64_t c = std::min(l.contiguity[d], rr.constancy[d]);
      if (code == Opcode::Add) c = std::max(c, std::min(l.constancy[d], rr.contiguity[d]));
      out.contiguity[d] = c;
      out.divisibility[d] = std::min(div_at(l, d, c), div_at(rr, d, c));
    }
    return out;
  }

  AxisInfo divrem(Opcode code, const AxisInfo& l, const AxisInfo& rr, const std::vector<int64_t>& s, int w) const {
    const int r = static_cast<int>(s.size());
    AxisInfo out = AxisInfo::conservative(r);
    for (int d = 0; d < r; ++d) out.constancy[d] = std::min(l.constancy[d], rr.constancy[d]);
    const bool is_signed = code == Opcode::SDiv || code == Opcode::SRem;
    const bool is_div = code == Opcode::SDiv || code == Opcode::UDiv;
    if (!rr.constant) {
      // x % n with n the same in every lane and divisible by 2^p (Triton's `offs % N` wrapping
      // the rows of a tile): runs of x that start on a multiple of 2^p and stay within 2^p lanes
      // never cross a multiple of n, so they stay runs. For srem, x >= 0 (known, or the signed
      // dividend assumption in axis_info.h) keeps the result >= 0 whatever n's sign (n = 0 gives
      // an unspecified value, which these facts may describe).
      if (is_div || w <= 1) return out;
      for (int d = 0; d < r; ++d)
        if (rr.constancy[d] < s[d]) return out;
      int64_t pn = kMaxDivisibility;
      for (int d = 0; d < r; ++d) pn = std::min(pn, rr.divisibility[d]);
      out.nonneg = true;
      for (int d = 0; d < r; ++d) {
        const int64_t g = std::min({l.contiguity[d], l.divisibility[d], pn});
        out.contiguity[d] = g;
        out.divisibility[d] = std::min(div_at(l, d, g), pn);
      }
      return out;
    }
    const int64_t q = *rr.constant;
    const uint64_t uq = unsigned_of(w, q);
    if (uq == 0) return out;
    if (is_signed && q <= 0) return out;  // a dividend of unknown sign: see axis_info.h
    if (l.constant && !is_signed && w > 1) {
      const uint64_t ul = unsigned_of(w, *l.constant);
      std::vector<int64_t> k(out.constancy);
      return from_constant(k, w, static_cast<int64_t>(is_div ? ul / uq : ul % uq));
    }
    if (uq == 1) {
      if (is_div) return l;
      return from_constant(s, w, 0);
    }
    const int64_t pq = lowbit(uq);
    // q as a signed value is positive and at most INT_MAX in these cases: the results are < q.
    out.nonneg = is_signed ? true : (!is_div ? wrap(w, uq) > 0 : uq >= 2);
    if (w <= 1) return out;
    for (int d = 0; d < r; ++d) {
      const int64_t g = std::min({l.contiguity[d], l.divisibility[d], pq});
      if (is_div) {
        out.constancy[d] = std::max(out.constancy[d], g);
        // Each lane equals the quotient of its group's first lane.
        const int64_t m = div_at(l, d, g);
        out.divisibility[d] = (uq & (uq - 1)) == 0 && m >= static_cast<int64_t>(uq) ? m / static_cast<int64_t>(uq) : 1;
      } else {
        out.contiguity[d] = g;
        out.divisibility[d] = std::min(div_at(l, d, g), pq);
      }
    }
    return out;
  }

  AxisInfo shift(Opcode code, const AxisInfo& l, const AxisInfo& rr, const std::vector<int64_t>& s, int w) const {
    const int r = static_cast<int>(s.size());
    AxisInfo out = AxisInfo::conservative(r);
    for (int d = 0; d < r; ++d) out.constancy[d] = std::min(l.constancy[d], rr.constancy[d]);
    if (!rr.constant || w <= 1) return out;
    const uint64_t sh = unsigned_of(w, *rr.constant);
    if (sh >= static_cast<uint64_t>(w)) return out;
    if (sh == 0) return l;
    if (code == Opcode::Shl) {
      if (l.constant) return from_constant(out.constancy, w, wrap(w, static_cast<uint64_t>(*l.constant) << sh));
      const int lg = static_cast<int>(std::min<uint64_t>(30, log2_of(l.lane_divisibility()) + sh));
      for (int d = 0; d < r; ++d) out.divisibility[d] = int64_t(1) << lg;
      return out;
    }
    const int64_t p = sh >= 30 ? kMaxDivisibility : int64_t(1) << sh;
    for (int d = 0; d < r; ++d) {
      const int64_t g = std::min({l.contiguity[d], l.divisibility[d], p});
      out.constancy[d] = std::max(out.constancy[d], g);
      out.divisibility[d] = std::max<int64_t>(1, div_at(l, d, g) >> sh);
    }
    out.nonneg = code == Opcode::LShr ? true : l.nonneg;
    return out;
  }

  AxisInfo bitwise(Opcode code, const AxisInfo& l, const AxisInfo& rr, const std::vector<int64_t>& s, int w) const {
    const int r = static_cast<int>(s.size());
    AxisInfo out = AxisInfo::conservative(r);
    for (int d = 0; d < r; ++d) out.constancy[d] = std::min(l.constancy[d], rr.constancy[d]);
    if (l.constant && rr.constant && w > 1) {
      auto v = fold(code, *l.constant, *rr.constant, w);
      if (v) return from_constant(out.constancy, w, *v);
    }
    const int64_t dl = l.lane_divisibility(), dr = rr.lane_divisibility();
    switch (code) {
      case Opcode::And: {
        for (int d = 0; d < r; ++d) out.divisibility[d] = std::max(dl, dr);
        out.nonneg = l.nonneg || rr.nonneg;
        for (int side = 0; side < 2 && w > 1; ++side) {
          const AxisInfo& m = side ? l : rr;
          const AxisInfo& x = side ? rr : l;
          if (!m.constant) continue;
          const uint64_t um = unsigned_of(w, *m.constant);
          const uint64_t all = w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
          if (um == all) return x;
          if (um != 0 && ((um + 1) & um) == 0) {
            // x & (2^p - 1) is x urem 2^p.
            AxisInfo q = from_constant(s, w, static_cast<int64_t>(um + 1));
            AxisInfo res = divrem(Opcode::URem, x, q, s, w);
            return res;
          }
          const int64_t pm = lowbit(um);
          for (int d = 0; d < r; ++d) {
            // Adding less than pow2(M) to a multiple of it does not change the bits M keeps.
            const int64_t g = std::min({x.contiguity[d], x.divisibility[d], pm});
            out.constancy[d] = std::max(out.constancy[d], g);
          }
        }
        return out;
      }
      case Opcode::Or:
      case Opcode::Xor:
      case Opcode::SMin:
      case Opcode::SMax:
      case Opcode::UMin:
      case Opcode::UMax:
        for (int d = 0; d < r; ++d) out.divisibility[d] = std::min(dl, dr);
        if (code == Opcode::SMax || code == Opcode::UMin) out.nonneg = l.nonneg || rr.nonneg;
        else out.nonneg = l.nonneg && rr.nonneg;
        return out;
      default: return out;
    }
  }

  AxisInfo cmp(Fn& fn, OpId o, int r) const {
    const Function& f = *fn.f;
    const OpData& op = f.op(o);
    const AxisInfo& l = get(fn, op.operands[0]);
    const AxisInfo& rr = get(fn, op.operands[1]);
    AxisInfo out = AxisInfo::conservative(r);
    for (int d = 0; d < r; ++d) out.constancy[d] = std::min(l.constancy[d], rr.constancy[d]);
    const TypeId ot = f.type_of(op.operands[0]);
    if (!is_int_type(ot)) return out;
    const int w = width(ot);
    static const char* const kPreds[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
    const std::string pred = kPreds[op.attrs[0].i];
    if (pred == "eq" || pred == "ne") return out;
    for (int side = 0; side < 2; ++side) {
      const AxisInfo& v = side ? rr : l;
      const AxisInfo& b = side ? l : rr;
      // The predicate with v on the left.
      std::string p = pred;
      if (side) {
        const char* swap[][2] = {{"slt", "sgt"}, {"sle", "sge"}, {"sgt", "slt"}, {"sge", "sle"},
                                 {"ult", "ugt"}, {"ule", "uge"}, {"ugt", "ult"}, {"uge", "ule"}};
        for (auto& sw : swap)
          if (pred == sw[0]) {
            p = sw[1];
            break;
          }
      }
      const bool at_b = p == "slt" || p == "sge" || p == "ult" || p == "uge";  // changes between b-1 and b
      for (int d = 0; d < r; ++d) {
        if (v.contiguity[d] == 1) continue;
        int64_t bd;
        if (at_b) {
          bd = div_at(b, d, 1);
        } else {
          if (!b.constant) continue;
          bd = lowbit(unsigned_of(w, *b.constant + 1));
        }
        const int64_t g = std::min({v.contiguity[d], v.divisibility[d], b.constancy[d], bd});
        out.constancy[d] = std::max(out.constancy[d], g);
      }
    }
    return out;
  }

  const Module& m_;
  const TypeTable& types_;
  std::map<const Function*, std::vector<AxisInfo>>* infos_;
};

}  // namespace

AxisInfoAnalysis::AxisInfoAnalysis(const Module& m, const Function& f) : kernel_(&f) {
  Analyzer a(m, &infos_);
  a.analyze(f, true);
}

const AxisInfo& AxisInfoAnalysis::get(ValueId v) const { return get(*kernel_, v); }

const AxisInfo& AxisInfoAnalysis::get(const Function& g, ValueId v) const {
  auto it = infos_.find(&g);
  if (it == infos_.end() || v >= it->second.size()) return unknown_;
  return it->second[v];
}

}  // namespace tri::passes
