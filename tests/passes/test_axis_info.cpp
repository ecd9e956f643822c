// Axis info (passes/axis_info.h), checked two ways. First, the facts the GPU backend depends on,
// on the patterns it meets (vector add, masks, 2-D tiles, loop-carried pointers, hints), as exact
// vectors. Second, soundness: each kernel of a table is instrumented with a `print` of every
// integer and pointer value, run by the reference interpreter in checked mode (which also checks
// the kernels' own hints and assumes), and every fact the analysis claims is checked against every
// lane of every printed snapshot, loop iterations included. A rule that claims too much fails
// there, with the value, the dimension and the lane.
#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "passes/axis_info.h"
#include "passes/pipeline.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;
using namespace tri::passes;

namespace {

std::unique_ptr<Module> parse_ok(const std::string& text) {
  std::unique_ptr<Module> m;
  Status st = parse_text(text, "t.tri", &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  st = verify(*m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return m;
}

// Kernel @k of `text`, specialized with these constexpr values through the real pipeline.
std::unique_ptr<Module> prepare(const std::string& text, const std::vector<ConstexprBinding>& values) {
  auto m = parse_ok(text);
  std::unique_ptr<Module> out;
  PipelineOptions opt;
  opt.verify_each = true;
  Status st = prepare_kernel(*m, "k", values, {}, opt, &out);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return out;
}

ValueId named(const Function& f, const std::string& name) {
  for (ValueId v = 0; v < f.values.size(); ++v)
    if (f.values[v].name == name) return v;
  fail_msg("no value %%%s", name.c_str());
  return kNoValue;
}

std::string vec_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void expect_info_in(const AxisInfoAnalysis& a, const Function& f, const std::string& name, std::vector<int64_t> c,
                    std::vector<int64_t> d, std::vector<int64_t> k) {
  const AxisInfo& i = a.get(f, named(f, name));
  if (i.contiguity != c || i.divisibility != d || i.constancy != k)
    fail_msg("%%%s: contiguity %s divisibility %s constancy %s, expected %s %s %s", name.c_str(),
             vec_str(i.contiguity).c_str(), vec_str(i.divisibility).c_str(), vec_str(i.constancy).c_str(),
             vec_str(c).c_str(), vec_str(d).c_str(), vec_str(k).c_str());
}

void expect_info(const AxisInfoAnalysis& a, const Function& f, const std::string& name, std::vector<int64_t> c,
                 std::vector<int64_t> d, std::vector<int64_t> k) {
  expect_info_in(a, f, name, c, d, k);
}

const char* kVectorAdd = R"(
kernel @k(%x: ptr<f32> {align=16}, %out: ptr<f32> {align=16}, %n: i32 {divisible=16}, %m: i32)
    constexpr(BLOCK: i32 = 1024) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=BLOCK] : i32
  %start = mul %pid, %bs : i32
  %range = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %startv = splat %start : <BLOCK x i32>
  %offs = add %startv, %range : <BLOCK x i32>
  %nv = splat %n : <BLOCK x i32>
  %mask = cmp[pred=slt] %offs, %nv : <BLOCK x i1>
  %mv = splat %m : <BLOCK x i32>
  %mask_m = cmp[pred=slt] %offs, %mv : <BLOCK x i1>
  %xb = splat %x : <BLOCK x ptr<f32>>
  %xp = addptr %xb, %offs : <BLOCK x ptr<f32>>
  %ob = splat %out : <BLOCK x ptr<f32>>
  %op = addptr %ob, %offs : <BLOCK x ptr<f32>>
  %xv = load %xp, mask=%mask : <BLOCK x f32>
  store %op, %xv, mask=%mask_m
  return
}
)";

void arange_and_constants(void**) {
  auto m = parse_ok(R"(
kernel @k() {
  %r = arange[start=0, end=128] : <128 x i32>
  %r8 = arange[start=8, end=24] : <16 x i32>
  %z = const[value=0] : <4 x i32>
  %c12 = const[value=12] : i32
  %cm = const[value=-64] : i64
  return
}
)");
  const Function& f = *m->functions[0];
  AxisInfoAnalysis a(*m, f);
  expect_info(a, f, "r", {128}, {kMaxDivisibility}, {1});
  expect_info(a, f, "r8", {16}, {8}, {1});
  expect_info(a, f, "z", {1}, {kMaxDivisibility}, {4});
  expect_info(a, f, "c12", {1}, {4}, {1});
  expect_info(a, f, "cm", {1}, {64}, {1});
  assert_true(a.get(named(f, "c12")).constant == 12);
}

void vector_add_pattern(void**) {
  auto m = prepare(kVectorAdd, {{"BLOCK", Attr::of_int(1024)}});
  const Function& f = *m->functions[0];
  AxisInfoAnalysis a(*m, f);
  expect_info(a, f, "offs", {1024}, {1024}, {1});
  expect_info(a, f, "xp", {1024}, {16}, {1});
  expect_info(a, f, "op", {1024}, {16}, {1});
  // n is divisible by 16: the mask is constant on runs of 16; m is not known to be: runs of 1.
  expect_info(a, f, "mask", {1}, {1}, {16});
  expect_info(a, f, "mask_m", {1}, {1}, {1});
}

void tile_2d_pointers(void**) {
  auto m = parse_ok(R"(
kernel @k(%base: ptr<f16> {align=16}, %stride: i32 {divisible=16}, %odd: i32) {
  %rows = arange[start=0, end=16] : <16 x i32>
  %cols = arange[start=0, end=64] : <64 x i32>
  %r2 = expand_dims[axis=1] %rows : <16 x 1 x i32>
  %sv = splat %stride : <16 x 1 x i32>
  %rs = mul %r2, %sv : <16 x 1 x i32>
  %rsb = broadcast %rs : <16 x 64 x i32>
  %c2 = expand_dims[axis=0] %cols : <1 x 64 x i32>
  %cb = broadcast %c2 : <16 x 64 x i32>
  %off = add %rsb, %cb : <16 x 64 x i32>
  %bb = splat %base : <16 x 64 x ptr<f16>>
  %p = addptr %bb, %off : <16 x 64 x ptr<f16>>
  %t = permute[order=[1, 0]] %p : <64 x 16 x ptr<f16>>
  %ov = splat %odd : <16 x 1 x i32>
  %ro = mul %r2, %ov : <16 x 1 x i32>
  %rob = broadcast %ro : <16 x 64 x i32>
  %off2 = add %rob, %cb : <16 x 64 x i32>
  %p2 = addptr %bb, %off2 : <16 x 64 x ptr<f16>>
  return
}
)");
  const Function& f = *m->functions[0];
  AxisInfoAnalysis a(*m, f);
  expect_info(a, f, "rsb", {1, 1}, {16, 16}, {1, 64});
  expect_info(a, f, "cb", {1, 64}, {1, kMaxDivisibility}, {16, 1});
  expect_info(a, f, "off", {1, 64}, {1, 16}, {1, 1});
  expect_info(a, f, "p", {1, 64}, {2, 16}, {1, 1});
  expect_info(a, f, "t", {64, 1}, {16, 2}, {1, 1});
  // With a stride of unknown divisibility each row start is only element-aligned.
  expect_info(a, f, "p2", {1, 64}, {2, 2}, {1, 1});
}

const char* kLoop = R"(
kernel @k(%x: ptr<f32> {align=16}, %k: i32 {divisible=4}, %k1: i32, %n: i32) {
  %r = arange[start=0, end=64] : <64 x i32>
  %xb = splat %x : <64 x ptr<f32>>
  %p0 = addptr %xb, %r : <64 x ptr<f32>>
  %q0 = addptr %xb, %r : <64 x ptr<f32>>
  %c0 = const[value=0] : i32
  %c1 = const[value=1] : i32
  %c4 = const[value=4] : i32
  %zero = const[value=0.0] : <64 x f32>
  %pf, %qf, %acc = for %c0, %n, %c4, %p0, %q0, %zero {
  ^(%i: i32, %p: <64 x ptr<f32>>, %q: <64 x ptr<f32>>, %a: <64 x f32>):
    %v = load %p : <64 x f32>
    %a2 = add %a, %v : <64 x f32>
    %kv = splat %k : <64 x i32>
    %p2 = addptr %p, %kv : <64 x ptr<f32>>
    %k1v = splat %k1 : <64 x i32>
    %q2 = addptr %q, %k1v : <64 x ptr<f32>>
    yield %p2, %q2, %a2
  } : <64 x ptr<f32>>, <64 x ptr<f32>>, <64 x f32>
  store %pf, %acc
  return
}
)";

void loop_pointer_increment(void**) {
  auto m = parse_ok(kLoop);
  const Function& f = *m->functions[0];
  AxisInfoAnalysis a(*m, f);
  expect_info(a, f, "p", {64}, {16}, {1});
  expect_info(a, f, "p2", {64}, {16}, {1});
  expect_info(a, f, "pf", {64}, {16}, {1});
  // An increment of unknown divisibility keeps contiguity but only element alignment.
  expect_info(a, f, "q", {64}, {4}, {1});
  expect_info(a, f, "qf", {64}, {4}, {1});
  expect_info(a, f, "i", {1}, {4}, {1});
}

void hints(void**) {
  auto m = parse_ok(R"(
kernel @k(%x: ptr<i32> {align=64}) {
  %r = arange[start=0, end=64] : <64 x i32>
  %xb = splat %x : <64 x ptr<i32>>
  %xp = addptr %xb, %r : <64 x ptr<i32>>
  %v = load %xp : <64 x i32>
  %m = multiple_of[values=[16]] %v : <64 x i32>
  %mc = max_contiguous[values=[16]] %m : <64 x i32>
  %c = max_contiguous[values=[8]] %v : <64 x i32>
  %cm = multiple_of[values=[8]] %c : <64 x i32>
  %s = load %x : i32
  %sm = multiple_of[values=[24]] %s : i32
  return
}
)");
  const Function& f = *m->functions[0];
  AxisInfoAnalysis a(*m, f);
  expect_info(a, f, "v", {1}, {1}, {1});
  // multiple_of alone speaks of lanes 0, 16, 32, ...: nothing to say of every lane yet.
  expect_info(a, f, "m", {1}, {1}, {1});
  expect_info(a, f, "mc", {16}, {16}, {1});
  expect_info(a, f, "c", {8}, {1}, {1});
  expect_info(a, f, "cm", {8}, {8}, {1});
  expect_info(a, f, "sm", {1}, {8}, {1});
}

void broadcast_and_permute(void**) {
  auto m = parse_ok(R"(
kernel @k(%n: i32 {divisible=8}) {
  %r = arange[start=32, end=40] : <8 x i32>
  %e = expand_dims[axis=0] %r : <1 x 8 x i32>
  %b = broadcast %e : <4 x 8 x i32>
  %t = permute[order=[1, 0]] %b : <8 x 4 x i32>
  %nv = splat %n : <4 x 8 x i32>
  %s = add %b, %nv : <4 x 8 x i32>
  %rs = reshape %s : <32 x i32>
  return
}
)");
  const Function& f = *m->functions[0];
  AxisInfoAnalysis a(*m, f);
  expect_info(a, f, "b", {1, 8}, {1, 32}, {4, 1});
  expect_info(a, f, "t", {8, 1}, {32, 1}, {1, 4});
  expect_info(a, f, "s", {1, 8}, {1, 8}, {4, 1});
  expect_info(a, f, "rs", {1}, {1}, {1});
}

// ---- soundness

struct Snapshot {
  ValueId v;
  std::vector<uint64_t> lanes;
  std::vector<bool> defined;
};

int64_t pow2_cap(int w) { return w >= 62 ? int64_t(1) << 62 : int64_t(1) << w; }

struct Counts {
  long snapshots = 0;
  long nontrivial = 0;  // facts checked that say more than (1, 1, 1)
};

// Checks every fact of `info` against one snapshot of a value of type `t`.
void check_snapshot(const Module& m, const Function& f, const std::string& case_name, const AxisInfo& info,
                    const Snapshot& s, Counts* counts) {
  const TypeTable& types = m.types;
  const TypeId t = f.type_of(s.v);
  std::vector<int64_t> shape;
  if (types.is_block(t))
    for (const Dim& d : types.get(t).dims) shape.push_back(d.value);
  else
    shape = {1};
  const TypeId e = types.elem_of(t);
  const bool is_ptr = types.is_ptr(e);
  int w = 64;
  uint64_t step = 1;
  if (is_ptr) {
    Scalar ps = types.get(types.get(e).pointee).scalar;
    step = ps == Scalar::I1 ? 1 : scalar_bits(ps) / 8;
  } else {
    w = scalar_bits(types.get(e).scalar);
  }
  const uint64_t wmask = w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (static_cast<int64_t>(s.lanes.size()) != n)
    fail_msg("%s: %%%s printed %zu lanes, expected %" PRId64, case_name.c_str(), f.value(s.v).name.c_str(),
             s.lanes.size(), n);
  if (info.rank() != static_cast<int>(shape.size()))
    fail_msg("%s: %%%s has facts of rank %d for a value of rank %zu", case_name.c_str(), f.value(s.v).name.c_str(),
             info.rank(), shape.size());
  ++counts->snapshots;
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  auto bad = [&](const char* what, size_t d, int64_t i) {
    fail_msg("%s: %%%s (%s) claims %s along dimension %zu (contiguity %s, divisibility %s, constancy %s), which lane %" PRId64
             " breaks (value %" PRId64 ")",
             case_name.c_str(), f.value(s.v).name.c_str(), m.type_str(t).c_str(), what, d,
             vec_str(info.contiguity).c_str(), vec_str(info.divisibility).c_str(), vec_str(info.constancy).c_str(), i,
             static_cast<int64_t>(s.lanes[i]));
  };
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t c = info.contiguity[d], k = info.constancy[d], dv = info.divisibility[d];
    if (c > 1 || k > 1 || dv > 1) ++counts->nontrivial;
    if (c < 1 || k < 1 || dv < 1 || c > shape[d] || k > shape[d] || (c & (c - 1)) || (k & (k - 1)) || (dv & (dv - 1)))
      bad("a malformed fact", d, 0);
    const uint64_t dmask = dv >= pow2_cap(w) ? wmask : static_cast<uint64_t>(dv - 1);
    for (int64_t i = 0; i < n; ++i) {
      if (!s.defined[i]) continue;
      const int64_t pos = (i / stride[d]) % shape[d];
      const int64_t prev = i - stride[d];
      if (pos % c == 0) {
        if (s.lanes[i] & dmask) bad("divisibility", d, i);
      } else if (s.defined[prev] && ((s.lanes[i] - s.lanes[prev] - step) & wmask) != 0) {
        bad("contiguity", d, i);
      }
      if (pos % k != 0 && s.defined[prev] && ((s.lanes[i] ^ s.lanes[prev]) & wmask) != 0) bad("constancy", d, i);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!s.defined[i]) continue;
    if (info.constant && ((s.lanes[i] ^ static_cast<uint64_t>(*info.constant)) & wmask) != 0) bad("a constant", 0, i);
    if (info.nonneg && static_cast<int64_t>(s.lanes[i]) < 0) bad("nonneg", 0, i);
  }
}

bool is_combine_region(const Function& f, BlockId b) {
  const OpId p = f.block(b).parent_op;
  return p != kNoOp && (f.op(p).code == Opcode::Reduce || f.op(p).code == Opcode::Scan);
}

// Adds `print[prefix="vID:"] %v` after the definition of every integer or pointer value of f.
void instrument(Module& m, Function& f) {
  const size_t nvalues = f.values.size();
  Builder b(&m, &f);
  for (ValueId v = 0; v < nvalues; ++v) {
    const TypeId e = m.types.elem_of(f.type_of(v));
    Scalar sc;
    const bool wanted = m.types.is_ptr(e) || (m.types.elem_scalar(e, &sc) && is_int(sc));
    if (!wanted) continue;
    const ValueData& vd = f.value(v);
    const BlockId blk = vd.def_op == kNoOp ? vd.def_block : f.op(vd.def_op).parent;
    if (blk == kNoBlock || is_combine_region(f, blk)) continue;
    b.set_insertion_block(blk);
    std::vector<Attr> attrs(op_info(Opcode::Print).attrs.size());
    attrs[op_info(Opcode::Print).attr_index("prefix")] = Attr::of_str("v" + std::to_string(v) + ":");
    const OpId p = b.create(Opcode::Print, {v, kNoValue}, {}, attrs);
    std::vector<OpId>& ops = f.block(blk).ops;
    ops.pop_back();
    size_t at = 0;
    if (vd.def_op != kNoOp) at = std::find(ops.begin(), ops.end(), vd.def_op) - ops.begin() + 1;
    ops.insert(ops.begin() + at, p);
  }
}

// One host buffer per pointer argument: 64 KiB, 4 KiB-aligned, i32 lanes holding their index.
struct Buffers {
  std::vector<void*> bufs;
  ~Buffers() {
    for (void* p : bufs) std::free(p);
  }
  ArgValue ptr() {
    void* p = std::aligned_alloc(4096, 65536);
    for (int i = 0; i < 65536 / 4; ++i) static_cast<int32_t*>(p)[i] = i;
    bufs.push_back(p);
    return ArgValue{reinterpret_cast<uint64_t>(p), 65536};
  }
};

struct SoundCase {
  const char* name;
  const char* text;
  Grid grid;
  std::vector<int64_t> ints;  // the integer arguments, in order; pointer arguments get buffers
};

// The values whose facts rest on the signed-dividend assumption and that it did not hold for in
// this run: the results of sdiv and srem whose dividend had a negative lane, and everything
// computed from them (through operands, into the regions of the ops that use them, and out of
// a region through its yield).
std::vector<bool> assumption_broken(const Function& f, const std::vector<Snapshot>& snaps) {
  std::vector<bool> negative(f.values.size(), false), out(f.values.size(), false);
  for (const Snapshot& s : snaps)
    for (size_t i = 0; i < s.lanes.size(); ++i)
      if (s.defined[i] && static_cast<int64_t>(s.lanes[i]) < 0) negative[s.v] = true;
  for (const OpData& op : f.ops)
    if ((op.code == Opcode::SDiv || op.code == Opcode::SRem) && negative[op.operands[0]])
      for (ValueId r : op.results) out[r] = true;
  for (bool changed = true; changed;) {
    changed = false;
    auto taint = [&](ValueId v) {
      if (v != kNoValue && !out[v]) out[v] = changed = true;
    };
    for (const OpData& op : f.ops) {
      bool any = false;
      for (ValueId v : op.operands) any = any || (v != kNoValue && out[v]);
      if (!any) continue;
      for (ValueId r : op.results) taint(r);
      for (BlockId b : op.regions)
        for (ValueId a : f.block(b).args) taint(a);
      if (op.code == Opcode::Yield && op.parent != kNoBlock) {
        const OpId owner = f.block(op.parent).parent_op;
        if (owner == kNoOp) continue;
        for (ValueId r : f.op(owner).results) taint(r);
        for (BlockId b : f.op(owner).regions)
          for (ValueId a : f.block(b).args) taint(a);
      }
    }
  }
  return out;
}

// Analyses kernel f of m, instruments it, runs it on `args` and checks every snapshot.
void run_and_check(Module& m, Function& f, const std::string& name, Grid grid, const std::vector<ArgValue>& args,
                   bool checked, Counts* counts) {
  std::vector<AxisInfo> facts;
  {
    AxisInfoAnalysis a(m, f);
    for (ValueId v = 0; v < f.values.size(); ++v) facts.push_back(a.get(v));
  }
  instrument(m, f);
  Status st = verify(m);
  if (!st.is_ok()) fail_msg("%s: instrumented kernel: %s", name.c_str(), st.message().c_str());
  std::vector<std::string> messages;
  interp::Options opt;
  opt.checked = checked;
  opt.print = [&](const std::string& s) { messages.push_back(s); };
  st = interp::run(m, f, grid, args.data(), args.size(), opt);
  if (!st.is_ok()) fail_msg("%s: %s", name.c_str(), st.message().c_str());
  assert_true(!messages.empty());
  std::vector<Snapshot> snaps;
  for (const std::string& msg : messages) {
    Snapshot s;
    s.v = static_cast<ValueId>(std::stoul(msg.substr(1)));
    const bool is_ptr = m.types.is_ptr(m.types.elem_of(f.type_of(s.v)));
    size_t pos = 0;
    while (pos < msg.size()) {
      size_t end = msg.find('\n', pos);
      if (end == std::string::npos) end = msg.size();
      const std::string line = msg.substr(pos, end - pos);
      const std::string tok = line.substr(line.rfind(": ") + 2);
      const bool def = tok != "undef";
      s.defined.push_back(def);
      s.lanes.push_back(!def    ? 0
                        : is_ptr ? std::strtoull(tok.c_str(), nullptr, 16)
                                 : static_cast<uint64_t>(std::strtoll(tok.c_str(), nullptr, 10)));
      pos = end + 1;
    }
    snaps.push_back(std::move(s));
  }
  // The signed-dividend assumption (axis_info.h): facts that depend on an sdiv or srem whose
  // dividend was negative in some lane of this run are not checked.
  const std::vector<bool> skip = assumption_broken(f, snaps);
  for (const Snapshot& s : snaps)
    if (!skip[s.v]) check_snapshot(m, f, name, facts[s.v], s, counts);
}

void check_sound(const SoundCase& sc, Counts* counts, bool checked = true) {
  auto m = parse_ok(sc.text);
  Function& f = *m->find("k");
  Buffers buffers;
  std::vector<ArgValue> args;
  size_t next_int = 0;
  for (const Param& p : f.params) {
    if (m->types.is_ptr(p.type)) {
      args.push_back(buffers.ptr());
    } else {
      if (next_int >= sc.ints.size()) fail_msg("%s: too few integer arguments", sc.name);
      args.push_back(ArgValue{static_cast<uint64_t>(sc.ints[next_int++]), 0});
    }
  }
  run_and_check(*m, f, sc.name, sc.grid, args, checked, counts);
}

const SoundCase kCases[] = {
    {"vector add with masks", R"(
kernel @k(%x: ptr<f32> {align=16}, %n: i32 {divisible=16}, %m: i32) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=64] : i32
  %start = mul %pid, %bs : i32
  %r = arange[start=0, end=64] : <64 x i32>
  %sv = splat %start : <64 x i32>
  %offs = add %sv, %r : <64 x i32>
  %nv = splat %n : <64 x i32>
  %mv = splat %m : <64 x i32>
  %m1 = cmp[pred=slt] %offs, %nv : <64 x i1>
  %m2 = cmp[pred=slt] %offs, %mv : <64 x i1>
  %m3 = cmp[pred=sgt] %nv, %offs : <64 x i1>
  %m4 = cmp[pred=sle] %offs, %nv : <64 x i1>
  %m5 = cmp[pred=uge] %offs, %nv : <64 x i1>
  %c15 = const[value=15] : <64 x i32>
  %c16 = const[value=16] : <64 x i32>
  %m6 = cmp[pred=sle] %offs, %c15 : <64 x i1>
  %m7 = cmp[pred=sgt] %offs, %c16 : <64 x i1>
  %m8 = cmp[pred=sge] %c16, %offs : <64 x i1>
  %m9 = cmp[pred=eq] %offs, %nv : <64 x i1>
  %xb = splat %x : <64 x ptr<f32>>
  %xp = addptr %xb, %offs : <64 x ptr<f32>>
  %v = load %xp, mask=%m1 : <64 x f32>
  %mz = zext %m1 : <64 x i32>
  return
}
)",
     {3, 1, 1},
     {96, 70}},
    {"division, remainder, shifts and masks", R"(
kernel @k(%n: i32) {
  %pid = program_id[axis=0] : i32
  %c64 = const[value=64] : i32
  %st = mul %pid, %c64 : i32
  %sv = splat %st : <64 x i32>
  %r = arange[start=0, end=64] : <64 x i32>
  %offs = add %sv, %r : <64 x i32>
  %c4 = const[value=4] : <64 x i32>
  %c6 = const[value=6] : <64 x i32>
  %c8 = const[value=8] : <64 x i32>
  %c12 = const[value=12] : <64 x i32>
  %c7 = const[value=7] : <64 x i32>
  %cm8 = const[value=-8] : <64 x i32>
  %c2 = const[value=2] : <64 x i32>
  %c3 = const[value=3] : <64 x i32>
  %z = const[value=0] : <64 x i32>
  %q1 = udiv %offs, %c4 : <64 x i32>
  %q2 = sdiv %r, %c6 : <64 x i32>
  %q3 = sdiv %offs, %c4 : <64 x i32>
  %r1 = urem %offs, %c8 : <64 x i32>
  %r2 = srem %r, %c12 : <64 x i32>
  %r3 = urem %r, %c12 : <64 x i32>
  %sh1 = shl %r, %c3 : <64 x i32>
  %sh2 = lshr %offs, %c2 : <64 x i32>
  %neg = sub %z, %r : <64 x i32>
  %sh3 = ashr %neg, %c2 : <64 x i32>
  %q4 = sdiv %neg, %c4 : <64 x i32>
  %r4 = srem %neg, %c4 : <64 x i32>
  %a1 = and %offs, %c7 : <64 x i32>
  %a2 = and %offs, %cm8 : <64 x i32>
  %o1 = or %sh1, %c3 : <64 x i32>
  %x1 = xor %offs, %c8 : <64 x i32>
  %mn = smin %offs, %c12 : <64 x i32>
  %mx = umax %sh1, %c8 : <64 x i32>
  %ng = neg %sh1 : <64 x i32>
  %ab = abs %neg : <64 x i32>
  %m2 = mul %offs, %c8 : <64 x i32>
  %nv = splat %n : <64 x i32>
  %d2 = sub %offs, %nv : <64 x i32>
  %d3 = sub %nv, %r : <64 x i32>
  %qd = udiv %d2, %c4 : <64 x i32>
  %big = const[value=2147483632] : <64 x i32>
  %wr = add %big, %r : <64 x i32>
  %wrs = sext %wr : <64 x i64>
  %wrz = zext %wr : <64 x i64>
  %wrt = trunc %offs : <64 x i8>
  %wrts = sext %wrt : <64 x i16>
  return
}
)",
     {3, 1, 1},
     {5}},
    {"2-D tiles, shapes and casts", R"(
kernel @k(%base: ptr<f16> {align=16}, %stride: i32 {divisible=16}, %odd: i32) {
  %pid = program_id[axis=0] : i32
  %rows = arange[start=0, end=8] : <8 x i32>
  %cols = arange[start=0, end=16] : <16 x i32>
  %r2 = expand_dims[axis=1] %rows : <8 x 1 x i32>
  %sv = splat %stride : <8 x 1 x i32>
  %rs = mul %r2, %sv : <8 x 1 x i32>
  %rsb = broadcast %rs : <8 x 16 x i32>
  %c2 = expand_dims[axis=0] %cols : <1 x 16 x i32>
  %cb = broadcast %c2 : <8 x 16 x i32>
  %off = add %rsb, %cb : <8 x 16 x i32>
  %bb = splat %base : <8 x 16 x ptr<f16>>
  %p = addptr %bb, %off : <8 x 16 x ptr<f16>>
  %t = permute[order=[1, 0]] %p : <16 x 8 x ptr<f16>>
  %rsh = reshape %off : <128 x i32>
  %ov = splat %odd : <8 x 1 x i32>
  %ro = mul %r2, %ov : <8 x 1 x i32>
  %rob = broadcast %ro : <8 x 16 x i32>
  %off2 = add %rob, %cb : <8 x 16 x i32>
  %p2 = addptr %bb, %off2 : <8 x 16 x ptr<f16>>
  %j = join %off, %off2 : <8 x 16 x 2 x i32>
  %s1, %s2 = split %j : <8 x 16 x i32>, <8 x 16 x i32>
  %ct = cat %off, %off2 : <16 x 16 x i32>
  %w = sext %off : <8 x 16 x i64>
  %wz = zext %off : <8 x 16 x i64>
  %tr = trunc %off : <8 x 16 x i8>
  %tr16 = trunc %off : <8 x 16 x i16>
  %p3 = addptr %bb, %w : <8 x 16 x ptr<f16>>
  %p4 = addptr %bb, %tr : <8 x 16 x ptr<f16>>
  %pi = ptrtoint %p : <8 x 16 x i64>
  %ip = inttoptr %pi : <8 x 16 x ptr<i8>>
  %bc = bitcast %p : <8 x 16 x ptr<i16>>
  %bc32 = bitcast %p : <8 x 16 x ptr<f32>>
  %pidv = splat %pid : <8 x 16 x i32>
  %sv2 = const[value=2] : <8 x 16 x i32>
  %par = urem %pidv, %sv2 : <8 x 16 x i32>
  return
}
)",
     {2, 1, 1},
     {32, 5}},
    {"loops and branches", R"(
kernel @k(%x: ptr<f32> {align=16}, %k: i32 {divisible=4}, %k1: i32, %n: i32) {
  %pid = program_id[axis=0] : i32
  %r = arange[start=0, end=32] : <32 x i32>
  %xb = splat %x : <32 x ptr<f32>>
  %p0 = addptr %xb, %r : <32 x ptr<f32>>
  %c0 = const[value=0] : i32
  %c1 = const[value=1] : i32
  %c2 = const[value=2] : i32
  %c3 = const[value=3] : i32
  %zero = const[value=0.0] : <32 x f32>
  %pf, %qf, %of, %acc = for %c1, %n, %c3, %p0, %p0, %r, %zero {
  ^(%i: i32, %p: <32 x ptr<f32>>, %q: <32 x ptr<f32>>, %o: <32 x i32>, %a: <32 x f32>):
    %v = load %p : <32 x f32>
    %a2 = add %a, %v : <32 x f32>
    %kv = splat %k : <32 x i32>
    %p2 = addptr %p, %kv : <32 x ptr<f32>>
    %k1v = splat %k1 : <32 x i32>
    %q2 = addptr %q, %k1v : <32 x ptr<f32>>
    %iv = splat %i : <32 x i32>
    %o2 = add %o, %iv : <32 x i32>
    yield %p2, %q2, %o2, %a2
  } : <32 x ptr<f32>>, <32 x ptr<f32>>, <32 x i32>, <32 x f32>
  %par = and %pid, %c1 : i32
  %odd = cmp[pred=eq] %par, %c1 : i1
  %sel = if %odd {
    %c8 = const[value=8] : <32 x i32>
    %y = add %r, %c8 : <32 x i32>
    yield %y
  } {
    %c24 = const[value=24] : <32 x i32>
    %y2 = add %r, %c24 : <32 x i32>
    yield %y2
  } : <32 x i32>
  %w = while %c1 {
  ^(%x0: i32):
    %go = cmp[pred=slt] %x0, %n : i1
    condition %go, %x0
  } {
  ^(%y0: i32):
    %y1 = mul %y0, %c2 : i32
    yield %y1
  } : i32
  // An assume about a loop-carried value holds in the body, not for the value the loop returns.
  %c16 = const[value=16] : i32
  %c15 = const[value=15] : i32
  %uf = for %c0, %c1, %c1, %c16 {
  ^(%j: i32, %u: i32):
    %ulow = and %u, %c15 : i32
    %uok = cmp[pred=eq] %ulow, %c0 : i1
    assume %uok
    %u1 = add %u, %c1 : i32
    yield %u1
  } : i32
  return
}
)",
     {2, 1, 1},
     {8, 3, 20}},
    {"hints, assumes, selects and calls", R"(
func @twice(%a: <16 x i32>) -> (<16 x i32>) {
  %b = add %a, %a : <16 x i32>
  %ra = arange[start=16, end=32] : <16 x i32>
  return %b
}

kernel @k(%x: ptr<i32> {align=64}, %n2: i32, %a: i32) {
  %pid = program_id[axis=0] : i32
  %r = arange[start=0, end=16] : <16 x i32>
  %xb = splat %x : <16 x ptr<i32>>
  %xp = addptr %xb, %r : <16 x ptr<i32>>
  %v = load %xp : <16 x i32>
  %m = multiple_of[values=[16]] %v : <16 x i32>
  %mc = max_contiguous[values=[16]] %m : <16 x i32>
  %c = max_contiguous[values=[4]] %v : <16 x i32>
  %cm = multiple_of[values=[4]] %c : <16 x i32>
  %p1 = addptr %xb, %mc : <16 x ptr<i32>>
  %c16 = const[value=16] : i32
  %c0 = const[value=0] : i32
  %rem = srem %n2, %c16 : i32
  %ok = cmp[pred=eq] %rem, %c0 : i1
  assume %ok
  %pos = cmp[pred=sge] %a, %c0 : i1
  assume %pos
  %av = splat %a : <16 x i32>
  %ar = add %av, %r : <16 x i32>
  %c4 = const[value=4] : <16 x i32>
  %aq = sdiv %av, %c4 : <16 x i32>
  %nv = splat %n2 : <16 x i32>
  %off = add %nv, %r : <16 x i32>
  %pn = addptr %xb, %off : <16 x ptr<i32>>
  %lt = cmp[pred=slt] %r, %c4 : <16 x i1>
  %sel = select %lt, %off, %ar : <16 x i32>
  %pidv = splat %pid : <16 x i32>
  %cond = cmp[pred=sgt] %pidv, %c4 : <16 x i1>
  %sel2 = select %cond, %off, %r : <16 x i32>
  %dbl = call[callee=@twice] %off : <16 x i32>
  %h = load %pn : <16 x i32>
  %h2 = multiple_of[values=[1]] %h : <16 x i32>
  return
}
)",
     {2, 1, 1},
     {48, 7}},
};

void assumes_and_device_functions(void**) {
  auto m = parse_ok(kCases[4].text);
  const Function& f = *m->find("k");
  AxisInfoAnalysis a(*m, f);
  expect_info(a, f, "n2", {1}, {16}, {1});
  expect_info(a, f, "pn", {16}, {64}, {1});
  assert_true(a.get(named(f, "a")).nonneg);
  assert_false(a.get(named(f, "n2")).nonneg);
  expect_info(a, f, "dbl", {1}, {1}, {1});
  // The device function is analysed with conservative parameters.
  const Function& g = *m->find("twice");
  expect_info_in(a, g, "a", {1}, {1}, {1});
  expect_info_in(a, g, "ra", {16}, {16}, {1});
}

void assume_in_loop_body(void**) {
  auto m = parse_ok(kCases[3].text);
  const Function& f = *m->find("k");
  AxisInfoAnalysis a(*m, f);
  expect_info(a, f, "u", {1}, {16}, {1});
  expect_info(a, f, "uf", {1}, {1}, {1});
}

void facts_hold_on_every_lane(void**) {
  Counts counts;
  for (const SoundCase& sc : kCases) check_sound(sc, &counts);
  // The table must exercise real claims, not only (1, 1, 1).
  assert_true(counts.snapshots > 100);
  assert_true(counts.nontrivial > 100);
}

// Triton's tutorial wraps the edge tiles with signed remainders of signed quotients whose sign
// no rule can prove: `(pid_n * BN + arange) % N` with pid_n = (pid % G) / S. Under the signed
// dividend assumption (axis_info.h) the runs of 16 that N's divisibility allows stay runs, as in
// Triton's analysis, and the quotient by a positive constant keeps its constancy; every fact
// is also checked against the lanes (assumption_broken exempts nothing here: all >= 0).
void signed_wrap_keeps_runs(void**) {
  const char* text = R"(
kernel @k(%x: ptr<f16> {align=16}, %N: i32 {divisible=16}, %g: i32, %s: i32) {
  %pid = program_id[axis=0] : i32
  %pg = srem %pid, %g : i32
  %pid_n = sdiv %pg, %s : i32
  %c128 = const[value=128] : i32
  %n0 = mul %pid_n, %c128 : i32
  %r = arange[start=0, end=128] : <128 x i32>
  %n0v = splat %n0 : <128 x i32>
  %rn = add %n0v, %r : <128 x i32>
  %Nv = splat %N : <128 x i32>
  %rn_w = srem %rn, %Nv : <128 x i32>
  %c4 = const[value=4] : <128 x i32>
  %q = sdiv %rn, %c4 : <128 x i32>
  %xb = splat %x : <128 x ptr<f16>>
  %xp = addptr %xb, %rn_w : <128 x ptr<f16>>
  return
}
)";
  auto m = parse_ok(text);
  Function& f = *m->find("k");
  {
    AxisInfoAnalysis a(*m, f);
    expect_info(a, f, "rn_w", {16}, {16}, {1});
    expect_info(a, f, "xp", {16}, {16}, {1});
    expect_info(a, f, "q", {1}, {1}, {4});
  }
  Counts counts;
  check_sound({"signed wrap", text, {12, 1, 1}, {48, 6, 2}}, &counts);
  assert_true(counts.nontrivial > 0);
}

// A reshape that only inserts size-1 dimensions (the TTIR of a tensor descriptor's offsets:
// `rows[:, None]`) keeps the facts of the other dimension, as expand_dims does, so a tile's
// columns stay contiguous and its loads vectorized; a real reshape keeps only lane facts.
void unit_reshape_keeps_facts(void**) {
  const char* text = R"(
kernel @k(%x: ptr<f16> {align=16}, %n: i32 {divisible=16}) {
  %r = arange[start=0, end=64] : <64 x i32>
  %cols = reshape %r : <1 x 64 x i32>
  %colsb = broadcast %cols : <16 x 64 x i32>
  %rows16 = arange[start=0, end=16] : <16 x i32>
  %rows = reshape %rows16 : <16 x 1 x i32>
  %nv = splat %n : <16 x 1 x i32>
  %ro = mul %rows, %nv : <16 x 1 x i32>
  %rob = broadcast %ro : <16 x 64 x i32>
  %off = add %rob, %colsb : <16 x 64 x i32>
  %flat = reshape %off : <1024 x i32>
  %xb = splat %x : <16 x 64 x ptr<f16>>
  %xp = addptr %xb, %off : <16 x 64 x ptr<f16>>
  return
}
)";
  auto m = parse_ok(text);
  Function& f = *m->find("k");
  {
    // As expand_dims gives: a size-1 dimension's divisibility is that of every element (1 here).
    AxisInfoAnalysis a(*m, f);
    expect_info(a, f, "cols", {1, 64}, {1, kMaxDivisibility}, {1, 1});
    expect_info(a, f, "rows", {16, 1}, {kMaxDivisibility, 1}, {1, 1});
    expect_info(a, f, "xp", {1, 64}, {2, 16}, {1, 1});
    expect_info(a, f, "flat", {1}, {1}, {1});  // a real reshape: lane facts only
  }
  Counts counts;
  check_sound({"unit reshape", text, {1, 1, 1}, {32}}, &counts);
}

// The tiled matmul of examples/ (grouped program ids, 2-D pointer tiles, a K loop advancing
// pointers, edge masks), specialized with argument facts, run in checked mode on real matrices.
void matmul_example_is_sound(void**) {
  const std::string path = tri_test::source_path("examples/matmul_leaky_relu.tri");
  const std::string text = tri_test::read_file(path);
  if (text.empty()) fail_msg("cannot read %s", path.c_str());
  auto src = parse_ok(text);
  const int M = 70, N = 48, K = 48;
  std::unique_ptr<Module> m;
  PipelineOptions opt;
  opt.verify_each = true;
  // a, b, c aligned to 16 bytes; N, stride_am = K, stride_bn = K, stride_cm = N: multiples of 16.
  Status st = prepare_kernel(*src, "matmul_leaky_relu",
                             {{"BM", Attr::of_int(32)}, {"BN", Attr::of_int(16)}, {"BK", Attr::of_int(16)},
                              {"GROUP_M", Attr::of_int(2)}, {"ALPHA", Attr::of_float(0.01)}},
                             {{0, 16, 0}, {1, 16, 0}, {2, 16, 0}, {4, 0, 16}, {6, 0, 16}, {9, 0, 16}, {10, 0, 16}}, opt, &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  Function& f = *m->find("matmul_leaky_relu");
  {
    AxisInfoAnalysis a(*m, f);
    // Row offsets of A are multiples of stride_am (16 elements); the K step of the pointers is
    // BK * stride_ak with stride_ak unknown, so the loop keeps only element alignment.
    expect_info(a, f, "a_row_off", {1, 1}, {16, 16}, {1, 1});
    expect_info(a, f, "rm", {32}, {32}, {1});
    // rn % N with N divisible by 16 (Triton's wrapping of the edge columns): runs of 16 stay.
    expect_info(a, f, "rn_b", {16}, {16}, {1});
  }
  Buffers buffers;
  std::vector<ArgValue> args = {buffers.ptr(), buffers.ptr(), buffers.ptr()};
  for (int64_t v : {M, N, K, K, 1, 1, K, N, 1}) args.push_back(ArgValue{static_cast<uint64_t>(v), 0});
  for (size_t i = 0; i < 3; ++i) args[i].extent = 2 * 70 * 48;
  Grid g;
  g.x = ((M + 31) / 32) * ((N + 15) / 16);
  Counts counts;
  run_and_check(*m, f, "matmul_leaky_relu", g, args, true, &counts);
  assert_true(counts.nontrivial > 100);
}

// Every kernel of examples/, specialized with its defaults: the analysis meets reductions,
// scans, dots, while loops and calls, and every fact it states is well formed.
void examples_are_well_formed(void**) {
  const char* names[] = {"argmax", "cumsum", "flash_attention", "gelu", "histogram", "layernorm",
                         "matmul_leaky_relu", "softmax", "vector_add"};
  long nontrivial = 0;
  for (const char* name : names) {
    const std::string text = tri_test::read_file(tri_test::source_path(std::string("examples/") + name + ".tri"));
    if (text.empty()) fail_msg("cannot read examples/%s.tri", name);
    auto src = parse_ok(text);
    std::unique_ptr<Module> m;
    Status st = prepare_kernel(*src, name, {}, {}, {}, &m);
    if (!st.is_ok()) fail_msg("%s: %s", name, st.message().c_str());
    AxisInfoAnalysis a(*m, *m->functions[0]);  // the kernel, and the device functions it calls
    for (const auto& fp : m->functions) {
      const Function& f = *fp;
      for (ValueId v = 0; v < f.values.size(); ++v) {
        const AxisInfo& i = a.get(f, v);
        const TypeId t = f.type_of(v);
        const size_t rank = m->types.is_block(t) ? m->types.get(t).dims.size() : 1;
        if (static_cast<size_t>(i.rank()) != rank || i.divisibility.size() != rank || i.constancy.size() != rank)
          fail_msg("%s: %%%s has facts of rank %d", name, f.value(v).name.c_str(), i.rank());
        for (size_t d = 0; d < rank; ++d) {
          const int64_t n = m->types.is_block(t) ? m->types.get(t).dims[d].value : 1;
          for (int64_t x : {i.contiguity[d], i.constancy[d], i.divisibility[d]})
            if (x < 1 || (x & (x - 1))) fail_msg("%s: %%%s has a fact %" PRId64 " that is not a power of two", name,
                                                 f.value(v).name.c_str(), x);
          if (i.contiguity[d] > n || i.constancy[d] > n)
            fail_msg("%s: %%%s has a run longer than its dimension", name, f.value(v).name.c_str());
          if (i.contiguity[d] > 1 && i.constancy[d] > 1)
            fail_msg("%s: %%%s is both contiguous and constant along %zu", name, f.value(v).name.c_str(), d);
          if (i.contiguity[d] > 1 || i.constancy[d] > 1) ++nontrivial;
        }
      }
    }
  }
  assert_true(nontrivial > 50);
}

// Random integer kernels over arange, program ids, parameters and constants, 1-D and 2-D, with
// a loop-carried value, checked the same way: the rules meet operands they were not written for.
void random_kernels_are_sound(void**) {
  std::mt19937 rng(12345);
  const char* binops[] = {"add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "udiv", "sdiv", "urem",
                          "srem", "smin", "smax", "umin", "umax"};
  const char* preds[] = {"slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge", "eq", "ne"};
  const int consts[] = {0, 1, 2, 3, 4, 7, 8, 12, 16, 31, 32, -1, -8, -16, 64};
  Counts counts;
  for (int trial = 0; trial < 80; ++trial) {
    const bool two_d = trial % 2 == 1;
    const std::string T = two_d ? "<4 x 8 x i32>" : "<32 x i32>";
    const std::string T1 = two_d ? "<4 x 8 x i1>" : "<32 x i1>";
    std::string body;
    std::vector<std::string> vals;
    auto pick = [&]() { return vals[rng() % vals.size()]; };
    auto rand_start = [&]() { return std::to_string(static_cast<int>(rng() % 5) * 4); };
    body += "  %pid = program_id[axis=0] : i32\n";
    body += "  %pv = splat %pid : " + T + "\n";
    body += "  %nv = splat %n : " + T + "\n";
    vals = {"%pv", "%nv"};
    if (two_d) {
      const std::string a = rand_start(), b = rand_start();
      body += "  %ra = arange[start=" + a + ", end=" + std::to_string(std::stoi(a) + 4) + "] : <4 x i32>\n";
      body += "  %re = expand_dims[axis=1] %ra : <4 x 1 x i32>\n";
      body += "  %rb = broadcast %re : " + T + "\n";
      body += "  %ca = arange[start=" + b + ", end=" + std::to_string(std::stoi(b) + 8) + "] : <8 x i32>\n";
      body += "  %ce = expand_dims[axis=0] %ca : <1 x 8 x i32>\n";
      body += "  %cb = broadcast %ce : " + T + "\n";
      vals.push_back("%rb");
      vals.push_back("%cb");
    } else {
      const std::string a = rand_start();
      body += "  %r = arange[start=" + a + ", end=" + std::to_string(std::stoi(a) + 32) + "] : " + T + "\n";
      vals.push_back("%r");
    }
    for (int i = 0; i < 4; ++i) {
      const std::string name = "%k" + std::to_string(i);
      body += "  " + name + " = const[value=" + std::to_string(consts[rng() % 15]) + "] : " + T + "\n";
      vals.push_back(name);
    }
    for (int i = 0; i < 14; ++i) {
      const std::string name = "%t" + std::to_string(i);
      const int kind = static_cast<int>(rng() % 12);
      if (kind < 7) {
        body += "  " + name + " = " + binops[rng() % 17] + " " + pick() + ", " + pick() + " : " + T + "\n";
      } else if (kind < 9) {
        const std::string c = name + "c";
        body += "  " + c + " = cmp[pred=" + preds[rng() % 10] + "] " + pick() + ", " + pick() + " : " + T1 + "\n";
        body += "  " + name + " = select " + c + ", " + pick() + ", " + pick() + " : " + T + "\n";
      } else if (kind < 10 && two_d) {
        const std::string t = name + "p";
        body += "  " + t + " = permute[order=[1, 0]] " + pick() + " : <8 x 4 x i32>\n";
        body += "  " + name + " = permute[order=[1, 0]] " + t + " : " + T + "\n";
      } else if (kind < 11) {
        // A loop-carried value: three iterations of x = x op step.
        const std::string init = pick(), step = pick();
        const char* op = kind % 2 ? "add" : binops[rng() % 17];
        body += "  " + name + " = for %lo, %hi, %one, " + init + " {\n  ^(" + name + "i: i32, " + name + "x: " + T +
                "):\n    " + name + "y = " + op + " " + name + "x, " + step + " : " + T + "\n    yield " + name +
                "y\n  } : " + T + "\n";
      } else {
        const std::string c = name + "m";
        body += "  " + c + " = multiple_of[values=" + std::string(two_d ? "[1, 1]" : "[1]") + "] " + pick() + " : " + T +
                "\n";
        body += "  " + name + " = add " + c + ", " + pick() + " : " + T + "\n";
      }
      vals.push_back(name);
    }
    const std::string P = two_d ? "<4 x 8 x ptr<i32>>" : "<32 x ptr<i32>>";
    body += "  %xb = splat %x : " + P + "\n";
    body += "  %xp = addptr %xb, " + pick() + " : " + P + "\n";
    const std::string text =
        "kernel @k(%x: ptr<i32> {align=16}, %n: i32 {divisible=8}) {\n  %lo = const[value=0] : i32\n"
        "  %hi = const[value=3] : i32\n  %one = const[value=1] : i32\n" +
        body + "  return\n}\n";
    const std::string name = "random kernel " + std::to_string(trial) + ":\n" + text;
    // Unchecked: random divisors may be zero (an unspecified value, still a value to check).
    check_sound({name.c_str(), text.c_str(), {3, 1, 1}, {static_cast<int64_t>(8 * (rng() % 9))}}, &counts, false);
  }
  assert_true(counts.nontrivial > 1000);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(arange_and_constants),
      cmocka_unit_test(vector_add_pattern),
      cmocka_unit_test(tile_2d_pointers),
      cmocka_unit_test(loop_pointer_increment),
      cmocka_unit_test(hints),
      cmocka_unit_test(broadcast_and_permute),
      cmocka_unit_test(assumes_and_device_functions),
      cmocka_unit_test(assume_in_loop_body),
      cmocka_unit_test(facts_hold_on_every_lane),
      cmocka_unit_test(signed_wrap_keeps_runs),
      cmocka_unit_test(unit_reshape_keeps_facts),
      cmocka_unit_test(matmul_example_is_sound),
      cmocka_unit_test(examples_are_well_formed),
      cmocka_unit_test(random_kernels_are_sound),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
