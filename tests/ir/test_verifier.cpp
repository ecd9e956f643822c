// Unit tests of the IR verifier on modules built with ir::Builder: realistic kernels (vector add,
// softmax, a tiled matmul, and a kernel that uses every other op) must verify, and each rule has
// a module that breaks only that rule and must fail with exactly that rule's message. Each case is
// its own cmocka test so a failure names the rule.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/limits.h"
#include "ir/verifier.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;

namespace {

constexpr ValueId N = kNoValue;  // an absent optional operand

Attr I(int64_t v) { return Attr::of_int(v); }
Attr F(double v) { return Attr::of_float(v); }
Attr S(const std::string& name) { return Attr::of_sym(name); }
Attr Str(const std::string& s) { return Attr::of_str(s); }
Attr Ints(std::vector<int64_t> v) { return Attr::of_ints(std::move(v)); }
Attr none() { return Attr::none(); }

// The index of `word` in an enum attribute of an op, as an attribute.
Attr en(Opcode op, const char* attr, const char* word) {
  const OpInfo& info = op_info(op);
  const AttrSpec& spec = info.attrs[info.attr_index(attr)];
  for (size_t i = 0; i < spec.enum_values.size(); ++i)
    if (spec.enum_values[i] == word) return Attr::of_enum(static_cast<int64_t>(i));
  fail_msg("no enum word %s for %s", word, attr);
  return Attr::none();
}

Constexpr cx(const std::string& name, Scalar type, Attr def = Attr::none()) {
  Constexpr c;
  c.name = name;
  c.type = type;
  c.default_value = def;
  return c;
}

// Builds one module; every helper appends to the current function at the insertion block.
struct Fx {
  std::unique_ptr<Module> m = std::make_unique<Module>();
  Function* f = nullptr;
  std::unique_ptr<Builder> b;
  TypeId i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8;

  Fx() {
    m->source_name = "t.tri";
    TypeTable& t = m->types;
    i1 = t.scalar(Scalar::I1);
    i8 = t.scalar(Scalar::I8);
    i16 = t.scalar(Scalar::I16);
    i32 = t.scalar(Scalar::I32);
    i64 = t.scalar(Scalar::I64);
    f16 = t.scalar(Scalar::F16);
    bf16 = t.scalar(Scalar::BF16);
    f32 = t.scalar(Scalar::F32);
    f64 = t.scalar(Scalar::F64);
    f8 = t.scalar(Scalar::F8E4M3);
  }

  TypeId ptr(TypeId t) { return m->types.ptr(t); }
  // A block type; `dims` is comma-separated, each a number or a constexpr name: "BM,64".
  TypeId blk(const std::string& dims, TypeId e) {
    std::vector<Dim> ds;
    size_t start = 0;
    while (start <= dims.size()) {
      size_t end = dims.find(',', start);
      if (end == std::string::npos) end = dims.size();
      std::string d = dims.substr(start, end - start);
      if (!d.empty() && (isdigit(static_cast<unsigned char>(d[0])) || d[0] == '-'))
        ds.push_back(Dim::lit(std::stoll(d)));
      else
        ds.push_back(Dim::name(m->intern(d)));
      start = end + 1;
    }
    return m->types.block(ds, e);
  }

  Function* func(const std::string& name, bool kernel, std::vector<std::pair<std::string, TypeId>> params,
                 std::vector<TypeId> results, std::vector<Constexpr> cxs) {
    auto fn = std::make_unique<Function>();
    fn->name = name;
    fn->is_kernel = kernel;
    fn->results = std::move(results);
    fn->constexprs = std::move(cxs);
    f = fn.get();
    m->functions.push_back(std::move(fn));
    b = std::make_unique<Builder>(m.get(), f);
    std::vector<TypeId> types;
    for (auto& p : params) types.push_back(p.second);
    f->body = b->create_block(types);
    for (size_t i = 0; i < params.size(); ++i) {
      Param p;
      p.name = params[i].first;
      p.type = params[i].second;
      p.value = f->blocks[f->body].args[i];
      f->values[p.value].name = p.name;
      f->params.push_back(p);
    }
    b->set_insertion_block(f->body);
    return f;
  }
  Function* kernel(const std::string& name, std::vector<std::pair<std::string, TypeId>> params = {},
                   std::vector<Constexpr> cxs = {}) {
    return func(name, true, std::move(params), {}, std::move(cxs));
  }
  Function* device(const std::string& name, std::vector<std::pair<std::string, TypeId>> params,
                   std::vector<TypeId> results) {
    return func(name, false, std::move(params), std::move(results), {});
  }
  // Switches to building (more of) an existing function.
  void resume(Function* fn, BlockId at) {
    f = fn;
    b = std::make_unique<Builder>(m.get(), f);
    b->set_insertion_block(at);
  }

  ValueId p(size_t i) const { return f->params[i].value; }
  OpId op(Opcode code, std::vector<ValueId> operands, std::vector<TypeId> results = {}, std::vector<Attr> attrs = {}) {
    return b->create(code, operands, results, std::move(attrs));
  }
  ValueId v(Opcode code, std::vector<ValueId> operands, TypeId result, std::vector<Attr> attrs = {}) {
    return b->create1(code, operands, result, std::move(attrs));
  }
  ValueId res(OpId o, size_t i = 0) const { return f->ops[o].results[i]; }
  ValueId ci(int64_t value, TypeId t) { return v(Opcode::Const, {}, t, {I(value)}); }
  ValueId cf(double value, TypeId t) { return v(Opcode::Const, {}, t, {F(value)}); }
  ValueId splat(ValueId s, TypeId t) { return v(Opcode::Splat, {s}, t); }
  ValueId arange(int64_t n) { return v(Opcode::Arange, {}, blk(std::to_string(n), i32), {I(0), I(n)}); }
  void ret(std::vector<ValueId> vals = {}) { op(Opcode::Return, vals); }
  void yield(std::vector<ValueId> vals = {}) { op(Opcode::Yield, vals); }
  BlockId region(OpId o, std::vector<TypeId> args = {}) { return b->add_region(o, args); }
  void in(BlockId blk) { b->set_insertion_block(blk); }
  BlockId body() const { return f->body; }
  ValueId arg(BlockId blk, size_t i) const { return f->blocks[blk].args[i]; }
  void name(ValueId val, const std::string& n) { f->values[val].name = n; }
  bool is_float(TypeId t) const {
    Scalar e;
    return m->types.elem_scalar(t, &e) && ir::is_float(e);
  }

  // A kernel @k(%x: ptr<f32>) whose body the test fills, for rules about single ops.
  void simple() { kernel("k", {{"x", ptr(f32)}}); }
};

// A rule case: builds a module and states the exact message verify() must give, or "" when the
// module must verify.
struct Case {
  const char* name;
  std::function<void(Fx&)> build;
  std::string expect;
  Code code = Code::Verify;
};

std::vector<Case>& cases() {
  static std::vector<Case> all;
  return all;
}

void run_case(void** state) {
  const Case& c = *static_cast<const Case*>(*state);
  Fx fx;
  c.build(fx);
  Status st = verify(*fx.m);
  if (c.expect.empty()) {
    if (!st.is_ok()) fail_msg("case %s: expected success, got: %s", c.name, st.message().c_str());
    return;
  }
  std::string want = c.expect.rfind("t.tri:", 0) == 0 ? c.expect : "t.tri: error: " + c.expect;
  if (st.is_ok()) fail_msg("case %s: expected \"%s\", but the module verified", c.name, want.c_str());
  if (st.message() != want || st.code() != c.code)
    fail_msg("case %s:\n  expected [%s] %s\n  got      [%s] %s", c.name, code_name(c.code), want.c_str(),
             code_name(st.code()), st.message().c_str());
}

#define OK(name_, ...) cases().push_back(Case{name_, [](Fx & fx) __VA_ARGS__, ""})
#define BAD(name_, msg_, ...) cases().push_back(Case{name_, [](Fx & fx) __VA_ARGS__, msg_})

// ------------------------------------------------------------------------------------------------
// Realistic kernels that must verify.

// out[i] = x[i] + y[i], with a symbolic BLOCK (docs/ir.md's example).
void build_vadd(Fx& fx) {
  Function* f = fx.kernel("vadd", {{"x", fx.ptr(fx.f32)}, {"y", fx.ptr(fx.f32)}, {"out", fx.ptr(fx.f32)}, {"n", fx.i32}},
                          {cx("BLOCK", Scalar::I32, I(1024))});
  for (int i = 0; i < 3; ++i) f->params[i].align = 16;
  f->params[3].divisible = 16;
  f->params[0].noalias = true;
  TypeId bi = fx.blk("BLOCK", fx.i32), bf = fx.blk("BLOCK", fx.f32), bp = fx.blk("BLOCK", fx.ptr(fx.f32));
  TypeId bm = fx.blk("BLOCK", fx.i1);
  ValueId pid = fx.v(Opcode::ProgramId, {}, fx.i32, {I(0)});
  ValueId bs = fx.v(Opcode::Const, {}, fx.i32, {S("BLOCK")});
  ValueId start = fx.v(Opcode::Mul, {pid, bs}, fx.i32);
  ValueId range = fx.v(Opcode::Arange, {}, bi, {I(0), S("BLOCK")});
  ValueId offs = fx.v(Opcode::Add, {fx.splat(start, bi), range}, bi);
  ValueId mask = fx.v(Opcode::Cmp, {offs, fx.splat(fx.p(3), bi)}, bm, {en(Opcode::Cmp, "pred", "slt")});
  ValueId xp = fx.v(Opcode::AddPtr, {fx.splat(fx.p(0), bp), offs}, bp);
  ValueId yp = fx.v(Opcode::AddPtr, {fx.splat(fx.p(1), bp), offs}, bp);
  ValueId op = fx.v(Opcode::AddPtr, {fx.splat(fx.p(2), bp), offs}, bp);
  ValueId xv = fx.v(Opcode::Load, {xp, mask, N}, bf);
  ValueId yv = fx.v(Opcode::Load, {yp, mask, N}, bf, {en(Opcode::Load, "cache", "cg")});
  ValueId sum = fx.v(Opcode::Add, {xv, yv}, bf);
  fx.op(Opcode::Store, {op, sum, mask});
  fx.ret();
}

// One row per program: y = softmax(x) over a row of n <= 256 elements.
void build_softmax(Fx& fx) {
  fx.kernel("softmax", {{"x", fx.ptr(fx.f32)}, {"y", fx.ptr(fx.f32)}, {"n", fx.i32}});
  TypeId bi = fx.blk("256", fx.i32), bf = fx.blk("256", fx.f32), bp = fx.blk("256", fx.ptr(fx.f32));
  ValueId row = fx.v(Opcode::ProgramId, {}, fx.i32, {I(0)});
  ValueId base = fx.v(Opcode::Mul, {row, fx.p(2)}, fx.i32);
  ValueId cols = fx.arange(256);
  ValueId offs = fx.v(Opcode::Add, {fx.splat(base, bi), cols}, bi);
  ValueId mask = fx.v(Opcode::Cmp, {cols, fx.splat(fx.p(2), bi)}, fx.blk("256", fx.i1), {en(Opcode::Cmp, "pred", "slt")});
  ValueId xp = fx.v(Opcode::AddPtr, {fx.splat(fx.p(0), bp), offs}, bp);
  ValueId ninf = fx.cf(-INFINITY, bf);
  ValueId xv = fx.v(Opcode::Load, {xp, mask, ninf}, bf);
  ValueId mx = fx.v(Opcode::Reduce, {xv}, fx.f32, {I(0), en(Opcode::Reduce, "kind", "max")});
  ValueId e = fx.v(Opcode::Exp, {fx.v(Opcode::Sub, {xv, fx.splat(mx, bf)}, bf)}, bf);
  ValueId s = fx.v(Opcode::Reduce, {e}, fx.f32, {I(0), en(Opcode::Reduce, "kind", "sum")});
  ValueId r = fx.v(Opcode::FDiv, {e, fx.splat(s, bf)}, bf);
  ValueId yp = fx.v(Opcode::AddPtr, {fx.splat(fx.p(1), bp), offs}, bp);
  fx.op(Opcode::Store, {yp, r, mask});
  fx.ret();
}

// C[BM x BN] = A[BM x K] @ B[K x BN] tile by tile, f16 in, f32 accumulate, symbolic tile sizes.
void build_matmul(Fx& fx) {
  fx.kernel("matmul", {{"a", fx.ptr(fx.f16)}, {"b", fx.ptr(fx.f16)}, {"c", fx.ptr(fx.f32)}, {"K", fx.i32}, {"N", fx.i32}},
            {cx("BM", Scalar::I32, I(64)), cx("BN", Scalar::I32, I(64)), cx("BK", Scalar::I32, I(32))});
  TypeId rm_t = fx.blk("BM", fx.i32), rn_t = fx.blk("BN", fx.i32), rk_t = fx.blk("BK", fx.i32);
  TypeId a_i = fx.blk("BM,BK", fx.i32), b_i = fx.blk("BK,BN", fx.i32), c_i = fx.blk("BM,BN", fx.i32);
  TypeId a_p = fx.blk("BM,BK", fx.ptr(fx.f16)), b_p = fx.blk("BK,BN", fx.ptr(fx.f16));
  TypeId c_p = fx.blk("BM,BN", fx.ptr(fx.f32)), acc_t = fx.blk("BM,BN", fx.f32);
  ValueId pm = fx.v(Opcode::ProgramId, {}, fx.i32, {I(0)});
  ValueId pn = fx.v(Opcode::ProgramId, {}, fx.i32, {I(1)});
  ValueId bm = fx.v(Opcode::Const, {}, fx.i32, {S("BM")});
  ValueId bn = fx.v(Opcode::Const, {}, fx.i32, {S("BN")});
  ValueId rm = fx.v(Opcode::Add, {fx.v(Opcode::Arange, {}, rm_t, {I(0), S("BM")}),
                                  fx.splat(fx.v(Opcode::Mul, {pm, bm}, fx.i32), rm_t)}, rm_t);
  ValueId rn = fx.v(Opcode::Add, {fx.v(Opcode::Arange, {}, rn_t, {I(0), S("BN")}),
                                  fx.splat(fx.v(Opcode::Mul, {pn, bn}, fx.i32), rn_t)}, rn_t);
  ValueId rk = fx.v(Opcode::Arange, {}, rk_t, {I(0), S("BK")});
  // a + rm[:, None] * K + rk[None, :]
  ValueId rm2 = fx.v(Opcode::ExpandDims, {rm}, fx.blk("BM,1", fx.i32), {I(1)});
  ValueId rmk = fx.v(Opcode::Mul, {rm2, fx.splat(fx.p(3), fx.blk("BM,1", fx.i32))}, fx.blk("BM,1", fx.i32));
  ValueId rk_row = fx.v(Opcode::ExpandDims, {rk}, fx.blk("1,BK", fx.i32), {I(0)});
  ValueId a_off = fx.v(Opcode::Add, {fx.v(Opcode::Broadcast, {rmk}, a_i), fx.v(Opcode::Broadcast, {rk_row}, a_i)}, a_i);
  ValueId a_ptr = fx.v(Opcode::AddPtr, {fx.splat(fx.p(0), a_p), a_off}, a_p);
  // b + rk[:, None] * N + rn[None, :]
  ValueId rk_col = fx.v(Opcode::ExpandDims, {rk}, fx.blk("BK,1", fx.i32), {I(1)});
  ValueId rkn = fx.v(Opcode::Mul, {rk_col, fx.splat(fx.p(4), fx.blk("BK,1", fx.i32))}, fx.blk("BK,1", fx.i32));
  ValueId rn_row = fx.v(Opcode::ExpandDims, {rn}, fx.blk("1,BN", fx.i32), {I(0)});
  ValueId b_off = fx.v(Opcode::Add, {fx.v(Opcode::Broadcast, {rkn}, b_i), fx.v(Opcode::Broadcast, {rn_row}, b_i)}, b_i);
  ValueId b_ptr = fx.v(Opcode::AddPtr, {fx.splat(fx.p(1), b_p), b_off}, b_p);
  ValueId zero = fx.cf(0.0, acc_t);
  ValueId c0 = fx.ci(0, fx.i32);
  ValueId step = fx.v(Opcode::Const, {}, fx.i32, {S("BK")});
  ValueId b_step = fx.v(Opcode::Mul, {step, fx.p(4)}, fx.i32);
  OpId loop = fx.op(Opcode::For, {c0, fx.p(3), step, zero, a_ptr, b_ptr}, {acc_t, a_p, b_p});
  BlockId body = fx.region(loop, {fx.i32, acc_t, a_p, b_p});
  fx.in(body);
  ValueId av = fx.v(Opcode::Load, {fx.arg(body, 2), N, N}, fx.blk("BM,BK", fx.f16));
  ValueId bv = fx.v(Opcode::Load, {fx.arg(body, 3), N, N}, fx.blk("BK,BN", fx.f16));
  ValueId acc = fx.v(Opcode::Dot, {av, bv, fx.arg(body, 1)}, acc_t);
  ValueId a_next = fx.v(Opcode::AddPtr, {fx.arg(body, 2), fx.splat(step, a_i)}, a_p);
  ValueId b_next = fx.v(Opcode::AddPtr, {fx.arg(body, 3), fx.splat(b_step, b_i)}, b_p);
  fx.yield({acc, a_next, b_next});
  fx.in(fx.body());
  // c + rm[:, None] * N + rn[None, :]
  ValueId rmn = fx.v(Opcode::Mul, {rm2, fx.splat(fx.p(4), fx.blk("BM,1", fx.i32))}, fx.blk("BM,1", fx.i32));
  ValueId c_off = fx.v(Opcode::Add, {fx.v(Opcode::Broadcast, {rmn}, c_i), fx.v(Opcode::Broadcast, {rn_row}, c_i)}, c_i);
  ValueId c_ptr = fx.v(Opcode::AddPtr, {fx.splat(fx.p(2), c_p), c_off}, c_p);
  fx.op(Opcode::Store, {c_ptr, fx.res(loop), N});
  fx.ret();
}

// Everything else: region reductions and scans over tuples, while, if with results, calls of a
// device function that uses the caller's constexprs, atomics, casts, shape ops, hints, debugging.
void build_everything(Fx& fx) {
  // A device function whose block size is the calling kernel's constexpr.
  Function* dev = fx.device("scale", {{"v", fx.blk("BLOCK", fx.f32)}, {"s", fx.f32}}, {fx.blk("BLOCK", fx.f32)});
  {
    ValueId sv = fx.v(Opcode::Splat, {fx.p(1)}, fx.blk("BLOCK", fx.f32));
    ValueId r = fx.v(Opcode::Mul, {fx.p(0), sv}, fx.blk("BLOCK", fx.f32));
    ValueId idx = fx.v(Opcode::Arange, {}, fx.blk("BLOCK", fx.i32), {I(0), S("BLOCK")});
    (void)idx;
    fx.ret({r});
  }
  (void)dev;
  fx.kernel("everything", {{"x", fx.ptr(fx.f32)}, {"cnt", fx.ptr(fx.i32)}, {"n", fx.i32}, {"h", fx.ptr(fx.f16)}},
            {cx("BLOCK", Scalar::I32, I(128)), cx("EVEN", Scalar::I1, Attr::of_bool(true)),
             cx("EPS", Scalar::F32, F(1e-5))});
  TypeId bi = fx.blk("BLOCK", fx.i32), bf = fx.blk("BLOCK", fx.f32), bp = fx.blk("BLOCK", fx.ptr(fx.f32));
  ValueId idx = fx.v(Opcode::Arange, {}, bi, {I(0), S("BLOCK")});
  ValueId xp = fx.v(Opcode::AddPtr, {fx.splat(fx.p(0), bp), idx}, bp);
  ValueId xs = fx.v(Opcode::Load, {xp, N, N}, bf, {none(), none(), Attr::of_bool(true)});
  // argmax as a tuple reduction with a user combine region
  OpId red = fx.op(Opcode::Reduce, {xs, idx}, {fx.f32, fx.i32}, {I(0)});
  BlockId comb = fx.region(red, {fx.f32, fx.i32, fx.f32, fx.i32});
  fx.in(comb);
  ValueId gt = fx.v(Opcode::FCmp, {fx.arg(comb, 0), fx.arg(comb, 2)}, fx.i1, {en(Opcode::FCmp, "pred", "ogt")});
  ValueId v2 = fx.v(Opcode::Select, {gt, fx.arg(comb, 0), fx.arg(comb, 2)}, fx.f32);
  ValueId i2 = fx.v(Opcode::Select, {gt, fx.arg(comb, 1), fx.arg(comb, 3)}, fx.i32);
  fx.yield({v2, i2});
  fx.in(fx.body());
  ValueId am = fx.v(Opcode::Reduce, {xs}, fx.i32, {I(0), en(Opcode::Reduce, "kind", "argmax")});
  (void)am;
  // cumulative sum, reversed, with a combine region; and a builtin scan
  OpId sc = fx.op(Opcode::Scan, {xs}, {bf}, {I(0), none(), Attr::of_bool(true)});
  BlockId sreg = fx.region(sc, {fx.f32, fx.f32});
  fx.in(sreg);
  fx.yield({fx.v(Opcode::Add, {fx.arg(sreg, 0), fx.arg(sreg, 1)}, fx.f32)});
  fx.in(fx.body());
  ValueId cum = fx.v(Opcode::Scan, {idx}, bi, {I(0), en(Opcode::Scan, "kind", "sum")});
  // a call into the device function
  ValueId two = fx.cf(2.0, fx.f32);
  OpId call = fx.op(Opcode::Call, {xs, two}, {bf}, {Attr::of_func("scale")});
  ValueId scaled = fx.res(call);
  // if with results; the condition is a constexpr
  ValueId even = fx.v(Opcode::Const, {}, fx.i1, {S("EVEN")});
  OpId ifo = fx.op(Opcode::If, {even}, {bf});
  BlockId then_b = fx.region(ifo), else_b = fx.region(ifo);
  fx.in(then_b);
  fx.yield({scaled});
  fx.in(else_b);
  ValueId eps = fx.v(Opcode::Const, {}, bf, {S("EPS")});
  fx.yield({fx.v(Opcode::Add, {xs, eps}, bf)});
  fx.in(fx.body());
  ValueId chosen = fx.res(ifo);
  // while i < n: i = i * 2
  ValueId one = fx.ci(1, fx.i32);
  OpId wh = fx.op(Opcode::While, {one}, {fx.i32});
  BlockId before = fx.region(wh, {fx.i32}), after = fx.region(wh, {fx.i32});
  fx.in(before);
  ValueId lt = fx.v(Opcode::Cmp, {fx.arg(before, 0), fx.p(2)}, fx.i1, {en(Opcode::Cmp, "pred", "slt")});
  fx.op(Opcode::Condition, {lt, fx.arg(before, 0)});
  fx.in(after);
  fx.yield({fx.v(Opcode::Shl, {fx.arg(after, 0), one}, fx.i32)});
  fx.in(fx.body());
  // if without results and without an else region
  ValueId big = fx.v(Opcode::Cmp, {fx.res(wh), fx.p(2)}, fx.i1, {en(Opcode::Cmp, "pred", "sgt")});
  OpId if2 = fx.op(Opcode::If, {big});
  fx.in(fx.region(if2));
  fx.op(Opcode::Atomic, {fx.p(1), one, N}, {fx.i32}, {en(Opcode::Atomic, "kind", "add")});
  fx.yield();
  fx.in(fx.body());
  // atomics on blocks, with masks
  TypeId bci = fx.blk("BLOCK", fx.ptr(fx.i32));
  ValueId cp = fx.v(Opcode::AddPtr, {fx.splat(fx.p(1), bci), idx}, bci);
  ValueId m = fx.v(Opcode::Cmp, {idx, fx.splat(fx.p(2), bi)}, fx.blk("BLOCK", fx.i1), {en(Opcode::Cmp, "pred", "slt")});
  fx.op(Opcode::Atomic, {cp, cum, m}, {bi}, {en(Opcode::Atomic, "kind", "xor"), en(Opcode::Atomic, "order", "relaxed")});
  fx.op(Opcode::AtomicCas, {cp, cum, idx, m}, {bi});
  fx.op(Opcode::Atomic, {xp, chosen, N}, {bf}, {en(Opcode::Atomic, "kind", "max")});
  // casts
  ValueId h = fx.v(Opcode::FPTrunc, {chosen}, fx.blk("BLOCK", fx.f16), {en(Opcode::FPTrunc, "rounding", "rtz")});
  ValueId back = fx.v(Opcode::FPExt, {h}, bf);
  ValueId asint = fx.v(Opcode::Bitcast, {back}, bi);
  ValueId wide = fx.v(Opcode::SExt, {asint}, fx.blk("BLOCK", fx.i64));
  ValueId narrow = fx.v(Opcode::Trunc, {wide}, fx.blk("BLOCK", fx.i16));
  ValueId uz = fx.v(Opcode::ZExt, {narrow}, bi);
  ValueId fl = fx.v(Opcode::SIToFP, {uz}, bf);
  ValueId ui = fx.v(Opcode::FPToUI, {fl}, fx.blk("BLOCK", fx.i8));
  ValueId wide_f = fx.v(Opcode::UIToFP, {ui}, fx.blk("BLOCK", fx.f64));
  fx.v(Opcode::FPToSI, {wide_f}, fx.blk("BLOCK", fx.i64));
  fx.v(Opcode::NumPrograms, {}, fx.i32, {I(2)});
  ValueId pint = fx.v(Opcode::PtrToInt, {fx.p(3)}, fx.i64);
  ValueId hptr = fx.v(Opcode::IntToPtr, {pint}, fx.ptr(fx.f16));
  ValueId as_i16p = fx.v(Opcode::Bitcast, {hptr}, fx.ptr(fx.i16));
  (void)as_i16p;
  // shape ops on concrete blocks
  ValueId r16 = fx.arange(16);
  ValueId sq = fx.v(Opcode::Reshape, {fx.arange(64)}, fx.blk("8,8", fx.i32));
  ValueId tr = fx.v(Opcode::Permute, {sq}, fx.blk("8,8", fx.i32), {Ints({1, 0})});
  ValueId j = fx.v(Opcode::Join, {tr, sq}, fx.blk("8,8,2", fx.i32));
  OpId sp = fx.op(Opcode::Split, {j}, {fx.blk("8,8", fx.i32), fx.blk("8,8", fx.i32)});
  (void)sp;
  ValueId ct = fx.v(Opcode::Cat, {r16, r16}, fx.blk("32", fx.i32));
  ValueId ct2 = fx.v(Opcode::ExpandDims, {ct}, fx.blk("32,1", fx.i32), {I(1)});
  ValueId bc = fx.v(Opcode::Broadcast, {ct2}, fx.blk("32,4", fx.i32));
  ValueId rs = fx.v(Opcode::Reduce, {bc}, fx.blk("32", fx.i32), {I(1), en(Opcode::Reduce, "kind", "xor")});
  (void)rs;
  // a batched i8 dot
  ValueId qa = fx.ci(1, fx.blk("2,16,32", fx.i8));
  ValueId qb = fx.ci(2, fx.blk("2,32,16", fx.i8));
  ValueId qacc = fx.ci(0, fx.blk("2,16,16", fx.i32));
  fx.v(Opcode::Dot, {qa, qb, qacc}, fx.blk("2,16,16", fx.i32));
  // f32 dot with tf32
  ValueId fa = fx.cf(1.0, fx.blk("16,16", fx.f32));
  fx.v(Opcode::Dot, {fa, fa, fa}, fx.blk("16,16", fx.f32), {en(Opcode::Dot, "precision", "tf32")});
  // hints, math, debugging, escape hatches
  ValueId hint = fx.v(Opcode::MultipleOf, {idx}, bi, {Ints({16})});
  ValueId cont = fx.v(Opcode::MaxContiguous, {hint}, bi, {Ints({16})});
  (void)cont;
  ValueId pos = fx.v(Opcode::Cmp, {fx.p(2), fx.ci(0, fx.i32)}, fx.i1, {en(Opcode::Cmp, "pred", "sgt")});
  fx.op(Opcode::Assume, {pos});
  ValueId at2 = fx.v(Opcode::MathCall, {xs, xs}, bf, {Str("atan2")});
  ValueId e1 = fx.v(Opcode::MathCall, {at2}, bf, {Str("expm1")});
  ValueId fm = fx.v(Opcode::FMax, {e1, xs}, bf, {en(Opcode::FMax, "nan", "ignore")});
  fx.v(Opcode::Fma, {fm, fm, fm}, bf);
  fx.op(Opcode::Print, {fm, idx, m}, {}, {Str("fm: ")});
  fx.op(Opcode::Print, {N}, {}, {Str("hello")});
  fx.op(Opcode::Assert, {m, m}, {}, {Str("in range")});
  fx.op(Opcode::DebugBarrier, {});
  fx.op(Opcode::InlineAsm, {idx, idx}, {bi}, {Str("add.s32 $0, $1, $2;"), Str("=r,r,r"), Attr::of_bool(true), I(1)});
  fx.op(Opcode::Store, {xp, fl, N}, {}, {en(Opcode::Store, "cache", "wt")});
  fx.ret();
}

void register_ok() {
  OK("ok_vadd", { build_vadd(fx); });
  OK("ok_softmax", { build_softmax(fx); });
  OK("ok_matmul", { build_matmul(fx); });
  OK("ok_everything", { build_everything(fx); });
  OK("ok_all_kernels_in_one_module", {
    build_vadd(fx);
    build_softmax(fx);
    build_matmul(fx);
  });
  // A device function no kernel calls may name constexprs freely: they mean nothing yet.
  OK("ok_uncalled_device_function_names_are_unresolved", {
    fx.device("f", {{"v", fx.blk("ANY", fx.f32)}}, {fx.blk("ANY", fx.f32)});
    fx.ret({fx.p(0)});
  });
  // A device function reached through another is resolved in the kernel at the top.
  OK("ok_constexpr_resolved_through_two_calls", {
    fx.device("inner", {}, {fx.blk("B", fx.i32)});
    fx.ret({fx.v(Opcode::Arange, {}, fx.blk("B", fx.i32), {I(0), S("B")})});
    fx.device("outer", {}, {fx.blk("B", fx.i32)});
    fx.ret({fx.res(fx.op(Opcode::Call, {}, {fx.blk("B", fx.i32)}, {Attr::of_func("inner")}))});
    fx.kernel("k", {}, {cx("B", Scalar::I64)});
    fx.op(Opcode::Call, {}, {fx.blk("B", fx.i32)}, {Attr::of_func("outer")});
    fx.ret();
  });
  // A call a pass unlinked from its block is dead: it makes no recursion.
  OK("ok_dead_call_is_ignored", {
    fx.device("f", {}, {});
    OpId c = fx.op(Opcode::Call, {}, {}, {Attr::of_func("f")});
    fx.f->blocks[fx.body()].ops.clear();
    (void)c;
    fx.ret();
  });
  // Every generic elementwise op of the table on operands of its class, scalar and block.
  OK("ok_every_elementwise_op", {
    fx.simple();
    for (uint32_t i = 0; i < kNumOpcodes; ++i) {
      const OpInfo& info = op_info(static_cast<Opcode>(i));
      if (info.rule != OpRule::EwNum && info.rule != OpRule::EwInt && info.rule != OpRule::EwFloat) continue;
      if (info.code == Opcode::MathCall) continue;  // named functions, covered by ok_everything
      std::vector<TypeId> types;
      if (info.rule != OpRule::EwFloat) types = {fx.i32, fx.blk("16", fx.i8), fx.i1};
      if (info.rule != OpRule::EwInt) {
        types.push_back(fx.f32);
        types.push_back(fx.blk("4,4", fx.bf16));
      }
      for (TypeId t : types) {
        ValueId a = fx.is_float(t) ? fx.cf(1, t) : fx.ci(1, t);
        std::vector<ValueId> operands(info.operands.size(), a);
        fx.v(info.code, operands, t);
      }
    }
    fx.ret();
  });
  OK("ok_const_int_into_float_and_bool", {
    fx.simple();
    fx.ci(3, fx.f16);
    fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(false)});
    fx.ci(-1, fx.i8);
    fx.ci(255, fx.i8);
    fx.cf(NAN, fx.blk("4", fx.bf16));
    fx.ret();
  });
  OK("ok_scalar_ops_and_expand_dims_of_scalar", {
    fx.simple();
    ValueId a = fx.ci(3, fx.i32);
    fx.v(Opcode::ExpandDims, {a}, fx.blk("1", fx.i32), {I(0)});
    fx.v(Opcode::Join, {a, a}, fx.blk("2", fx.i32));
    fx.op(Opcode::Split, {fx.arange(2)}, {fx.i32, fx.i32});
    fx.ret();
  });
}

// ------------------------------------------------------------------------------------------------
// Module and function rules.

void register_function_rules() {
  BAD("function_defined_twice", "t.tri:7:1: error: function @k is defined twice", {
    fx.simple();
    fx.ret();
    fx.simple();
    fx.f->loc = Loc{7, 1};
    fx.ret();
  });
  BAD("kernel_with_results", "kernel @k has results; a kernel returns nothing", {
    fx.simple();
    fx.f->results.push_back(fx.i32);
    fx.ret();
  });
  BAD("device_function_with_constexprs", "device function @f declares constexprs; only kernels have them", {
    fx.device("f", {}, {});
    fx.f->constexprs.push_back(cx("B", Scalar::I32));
    fx.ret();
  });
  BAD("constexpr_declared_twice", "constexpr B is declared twice", {
    fx.kernel("k", {}, {cx("B", Scalar::I32), cx("B", Scalar::I64)});
    fx.ret();
  });
  BAD("constexpr_default_float_for_int", "constexpr B of type i32 has default 1.5, which is not a value of that type", {
    fx.kernel("k", {}, {cx("B", Scalar::I32, F(1.5))});
    fx.ret();
  });
  BAD("constexpr_default_out_of_range", "constexpr B of type i8 has default 300, which is not a value of that type", {
    fx.kernel("k", {}, {cx("B", Scalar::I8, I(300))});
    fx.ret();
  });
  BAD("constexpr_default_int_for_bool", "constexpr E of type i1 has default 2, which is not a value of that type", {
    fx.kernel("k", {}, {cx("E", Scalar::I1, I(2))});
    fx.ret();
  });
  BAD("kernel_block_param",
      "parameter %v of @k has type <128 x f32>; kernel parameters are scalars or pointers", {
        fx.kernel("k", {{"v", fx.blk("128", fx.f32)}});
        fx.ret();
      });
  BAD("param_pointer_to_pointer", "parameter %p of @k has type ptr<ptr<f32>>, whose pointee ptr<f32> is not a scalar", {
    fx.kernel("k", {{"p", fx.ptr(fx.ptr(fx.f32))}});
    fx.ret();
  });
  BAD("param_align_on_integer", "parameter %n of @k has 'align' but is not a pointer", {
    fx.kernel("k", {{"n", fx.i32}});
    fx.f->params[0].align = 16;
    fx.ret();
  });
  BAD("param_align_not_power_of_two", "parameter %p of @k has align=12, expected a power of two", {
    fx.kernel("k", {{"p", fx.ptr(fx.f32)}});
    fx.f->params[0].align = 12;
    fx.ret();
  });
  BAD("param_divisible_on_float", "parameter %s of @k has 'divisible' but is not an integer", {
    fx.kernel("k", {{"s", fx.f32}});
    fx.f->params[0].divisible = 16;
    fx.ret();
  });
  BAD("param_noalias_on_integer", "parameter %n of @k has 'noalias' but is not a pointer", {
    fx.kernel("k", {{"n", fx.i64}});
    fx.f->params[0].noalias = true;
    fx.ret();
  });
  BAD("device_result_bad_type", "result 0 of @f has type <3 x f32>, whose dimension 3 is not a power of two", {
    fx.device("f", {}, {fx.blk("3", fx.f32)});
    fx.ret();
  });
  BAD("body_without_return", "t.tri:4:3: error: body of @k ends with 'store'; it must end with 'return'", {
    fx.simple();
    OpId s = fx.op(Opcode::Store, {fx.p(0), fx.cf(1.0, fx.f32), N});
    fx.f->ops[s].loc = Loc{4, 3};
  });
  BAD("empty_body", "t.tri:1:1: error: body of @k is empty; it must end with 'return'", {
    fx.simple();
    fx.f->loc = Loc{1, 1};
  });
  BAD("kernel_returns_value", "'return' returns 1 value; kernel @k returns nothing", {
    fx.simple();
    fx.ret({fx.ci(0, fx.i32)});
  });
  BAD("device_return_count", "'return' returns 0 values, expected 1 for the results of @f", {
    fx.device("f", {}, {fx.i32});
    fx.ret();
  });
  BAD("device_return_type", "'return' value 0 has type f32, expected i32 for result 0 of @f", {
    fx.device("f", {}, {fx.i32});
    fx.ret({fx.cf(0, fx.f32)});
  });
  BAD("value_name_defined_twice", "value name %a is defined twice", {
    fx.simple();
    fx.name(fx.ci(1, fx.i32), "a");
    fx.name(fx.ci(2, fx.i32), "a");
    fx.ret();
  });
  BAD("use_before_definition", "'add' uses %b before its definition", {
    fx.simple();
    ValueId a = fx.ci(1, fx.i32);
    OpId add = fx.op(Opcode::Add, {a, a}, {fx.i32});
    ValueId bv = fx.ci(2, fx.i32);
    fx.name(bv, "b");
    fx.f->ops[add].operands[1] = bv;
    fx.ret();
  });
  BAD("use_of_value_from_closed_region",
      "'neg' uses %inner, which is defined in a region that does not enclose it", {
        fx.simple();
        ValueId t = fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)});
        OpId i = fx.op(Opcode::If, {t});
        fx.in(fx.region(i));
        ValueId inner = fx.ci(1, fx.i32);
        fx.name(inner, "inner");
        fx.yield();
        fx.in(fx.body());
        fx.v(Opcode::Neg, {inner}, fx.i32);
        fx.ret();
      });
  BAD("use_of_sibling_region_value",
      "'neg' uses %then_v, which is defined in a region that does not enclose it", {
        fx.simple();
        ValueId t = fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)});
        OpId i = fx.op(Opcode::If, {t});
        BlockId th = fx.region(i), el = fx.region(i);
        fx.in(th);
        ValueId tv = fx.ci(1, fx.i32);
        fx.name(tv, "then_v");
        fx.yield();
        fx.in(el);
        fx.v(Opcode::Neg, {tv}, fx.i32);
        fx.yield();
        fx.in(fx.body());
        fx.ret();
      });
  BAD("op_uses_its_own_result_in_region", "'neg' uses %r before its definition", {
    fx.simple();
    ValueId t = fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)});
    OpId i = fx.op(Opcode::If, {t}, {fx.i32});
    fx.name(fx.res(i), "r");
    BlockId th = fx.region(i), el = fx.region(i);
    fx.in(th);
    fx.yield({fx.v(Opcode::Neg, {fx.res(i)}, fx.i32)});
    fx.in(el);
    fx.yield({fx.ci(0, fx.i32)});
    fx.in(fx.body());
    fx.ret();
  });
  cases().push_back(Case{"nesting_too_deep",
                         [](Fx& fx) {
                           fx.simple();
                           ValueId t = fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)});
                           std::vector<BlockId> blocks;
                           for (int d = 0; d <= kMaxNesting; ++d) {
                             OpId i = fx.op(Opcode::If, {t});
                             BlockId r = fx.region(i);
                             blocks.push_back(r);
                             fx.in(r);
                           }
                           for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
                             fx.in(*it);
                             fx.yield();
                           }
                           fx.in(fx.body());
                           fx.ret();
                         },
                         "regions nested deeper than 64", Code::LimitExceeded});
}

// ------------------------------------------------------------------------------------------------
// Generic op rules: slots, counts, attributes, types.

void register_generic_rules() {
  BAD("located_message", "t.tri:12:9: error: 'add' operands have types <128 x f32> and <256 x f32>", {
    fx.simple();
    ValueId a = fx.cf(1, fx.blk("128", fx.f32));
    ValueId bv = fx.cf(1, fx.blk("256", fx.f32));
    OpId o = fx.op(Opcode::Add, {a, bv}, {fx.blk("128", fx.f32)});
    fx.f->ops[o].loc = Loc{12, 9};
    fx.ret();
  });
  BAD("too_many_operands", "'add' takes 2 operands, got 3", {
    fx.simple();
    ValueId a = fx.ci(1, fx.i32);
    fx.v(Opcode::Add, {a, a, a}, fx.i32);
    fx.ret();
  });
  BAD("too_many_positional_operands", "'load' takes 1 positional operand, got 2", {
    fx.simple();
    fx.v(Opcode::Load, {fx.p(0), fx.p(0), N, N}, fx.f32);
    fx.ret();
  });
  BAD("optional_entries_missing", "'load' has 1 operand entry; its 2 optional slots need one entry each", {
    fx.simple();
    fx.v(Opcode::Load, {fx.p(0)}, fx.f32);
    fx.ret();
  });
  BAD("required_operand_empty", "'neg' has an empty operand 0", {
    fx.simple();
    fx.v(Opcode::Neg, {N}, fx.f32);
    fx.ret();
  });
  BAD("variadic_plus_needs_one", "'reduce' needs at least one value for 'srcs'", {
    fx.simple();
    fx.op(Opcode::Reduce, {}, {}, {I(0), en(Opcode::Reduce, "kind", "sum")});
    fx.ret();
  });
  BAD("too_few_operands_with_variadic", "'for' takes at least 3 operands, got 2", {
    fx.simple();
    ValueId a = fx.ci(0, fx.i32);
    OpId o = fx.op(Opcode::For, {a, a});
    fx.in(fx.region(o, {fx.i32}));
    fx.yield();
    fx.in(fx.body());
    fx.ret();
  });
  BAD("wrong_result_count", "'add' has 2 results, expected 1", {
    fx.simple();
    ValueId a = fx.ci(1, fx.i32);
    fx.op(Opcode::Add, {a, a}, {fx.i32, fx.i32});
    fx.ret();
  });
  BAD("region_count_fixed", "'for' has 0 regions, expected 1", {
    fx.simple();
    ValueId a = fx.ci(0, fx.i32);
    fx.op(Opcode::For, {a, a, a});
    fx.ret();
  });
  BAD("region_count_range", "'if' has 0 regions, expected 1 or 2", {
    fx.simple();
    fx.op(Opcode::If, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})});
    fx.ret();
  });
  BAD("region_on_op_without_regions", "'add' has 1 region, expected 0", {
    fx.simple();
    ValueId a = fx.ci(1, fx.i32);
    OpId o = fx.op(Opcode::Add, {a, a}, {fx.i32});
    fx.in(fx.region(o));
    fx.yield();
    fx.in(fx.body());
    fx.ret();
  });
  BAD("missing_attribute", "'program_id' needs attribute 'axis'", {
    fx.simple();
    fx.v(Opcode::ProgramId, {}, fx.i32);
    fx.ret();
  });
  BAD("attribute_kind", "'program_id' attribute 'axis' must be an integer or a constexpr name, got a string", {
    fx.simple();
    fx.v(Opcode::ProgramId, {}, fx.i32, {Str("x")});
    fx.ret();
  });
  BAD("attribute_kind_bool", "'scan' attribute 'reverse' must be a bool, got an integer", {
    fx.simple();
    fx.v(Opcode::Scan, {fx.arange(16)}, fx.blk("16", fx.i32), {I(0), en(Opcode::Scan, "kind", "sum"), I(1)});
    fx.ret();
  });
  BAD("enum_index_out_of_range",
      "'cmp' attribute 'pred' has enum index 12, expected one of eq|ne|slt|sle|sgt|sge|ult|ule|ugt|uge", {
        fx.simple();
        ValueId a = fx.ci(1, fx.i32);
        fx.v(Opcode::Cmp, {a, a}, fx.i1, {Attr::of_enum(12)});
        fx.ret();
      });
  BAD("sym_not_a_constexpr", "'arange' attribute 'end' names N, which is not a constexpr of kernel @k", {
    fx.simple();
    fx.v(Opcode::Arange, {}, fx.blk("16", fx.i32), {I(0), S("N")});
    fx.ret();
  });
  BAD("sym_float_constexpr_in_int_attr",
      "'program_id' attribute 'axis' names A, which is a constexpr of type f32, not an integer", {
        fx.kernel("k", {}, {cx("A", Scalar::F32)});
        fx.v(Opcode::ProgramId, {}, fx.i32, {S("A")});
        fx.ret();
      });
  BAD("sym_unresolved_in_calling_kernel",
      "'arange' attribute 'end' names BLOCK, which is not a constexpr of kernel @k2 (which calls @f)", {
        fx.device("f", {}, {});
        fx.v(Opcode::Arange, {}, fx.blk("16", fx.i32), {I(0), S("BLOCK")});
        fx.ret();
        fx.kernel("k1", {}, {cx("BLOCK", Scalar::I32)});
        fx.op(Opcode::Call, {}, {}, {Attr::of_func("f")});
        fx.ret();
        fx.kernel("k2", {}, {});
        fx.op(Opcode::Call, {}, {}, {Attr::of_func("f")});
        fx.ret();
      });
  BAD("sym_wrong_type_in_calling_kernel",
      "'const' result has type <B x f32>, whose dimension B is a constexpr of type i1 in kernel @k (which calls @f), "
      "not an integer",
      {
        fx.device("f", {}, {});
        fx.op(Opcode::Const, {}, {fx.blk("B", fx.f32)}, {F(0)});
        fx.ret();
        fx.kernel("k", {}, {cx("B", Scalar::I1)});
        fx.op(Opcode::Call, {}, {}, {Attr::of_func("f")});
        fx.ret();
      });
  BAD("type_rank_too_high", "'const' result has type <2 x 2 x 2 x 2 x 2 x f32>, whose rank 5 is not 1 to 4", {
    fx.simple();
    fx.cf(0, fx.blk("2,2,2,2,2", fx.f32));
    fx.ret();
  });
  BAD("type_dim_not_power_of_two", "'const' result has type <4 x 6 x f32>, whose dimension 6 is not a power of two", {
    fx.simple();
    fx.cf(0, fx.blk("4,6", fx.f32));
    fx.ret();
  });
  BAD("type_dim_zero", "'const' result has type <0 x f32>, whose dimension 0 is not a power of two", {
    fx.simple();
    fx.cf(0, fx.blk("0", fx.f32));
    fx.ret();
  });
  BAD("type_dim_too_large", "'const' result has type <2097152 x f32>, whose dimension 2097152 exceeds the limit 1048576", {
    fx.simple();
    fx.cf(0, fx.blk("2097152", fx.f32));
    fx.ret();
  });
  BAD("type_symbolic_dim_undeclared", "'const' result has type <BLOCK x f32>, whose dimension BLOCK is not a constexpr of kernel @k", {
    fx.simple();
    fx.cf(0, fx.blk("BLOCK", fx.f32));
    fx.ret();
  });
  BAD("type_symbolic_dim_float", "'const' result has type <S x f32>, whose dimension S is a constexpr of type f64, not an integer", {
    fx.kernel("k", {}, {cx("S", Scalar::F64)});
    fx.cf(0, fx.blk("S", fx.f32));
    fx.ret();
  });
  BAD("type_block_of_pointer_to_pointer",
      "'const' result has type <4 x ptr<ptr<f32>>>, whose element ptr<ptr<f32>> is not a pointer to a scalar", {
        fx.simple();
        fx.ci(0, fx.blk("4", fx.ptr(fx.ptr(fx.f32))));
        fx.ret();
      });
}

// ------------------------------------------------------------------------------------------------
// The elementwise and cast rules.

void register_elementwise_rules() {
  BAD("ew_shapes_differ", "'add' operands have types <128 x f32> and <256 x f32>", {
    fx.simple();
    fx.v(Opcode::Add, {fx.cf(1, fx.blk("128", fx.f32)), fx.cf(1, fx.blk("256", fx.f32))}, fx.blk("128", fx.f32));
    fx.ret();
  });
  BAD("ew_int_on_floats", "'sdiv' operands have type <128 x f32>, expected integers", {
    fx.simple();
    ValueId a = fx.cf(1, fx.blk("128", fx.f32));
    fx.v(Opcode::SDiv, {a, a}, fx.blk("128", fx.f32));
    fx.ret();
  });
  BAD("ew_float_on_ints", "'exp' operand has type i32, expected floats", {
    fx.simple();
    fx.v(Opcode::Exp, {fx.ci(1, fx.i32)}, fx.i32);
    fx.ret();
  });
  BAD("ew_num_on_pointers", "'add' operands have type ptr<f32>, expected integers or floats", {
    fx.simple();
    fx.v(Opcode::Add, {fx.p(0), fx.p(0)}, fx.ptr(fx.f32));
    fx.ret();
  });
  BAD("ew_result_type", "'mul' result has type i64, expected i32", {
    fx.simple();
    ValueId a = fx.ci(1, fx.i32);
    fx.v(Opcode::Mul, {a, a}, fx.i64);
    fx.ret();
  });
  BAD("ew_fma_operands", "'fma' operands have types f32 and f16", {
    fx.simple();
    ValueId a = fx.cf(1, fx.f32);
    fx.v(Opcode::Fma, {a, fx.cf(1, fx.f16), a}, fx.f32);
    fx.ret();
  });
  BAD("math_call_unknown_name", "'math_call' attribute 'name' is \"sinc\", which is not a math function of Tri", {
    fx.simple();
    fx.v(Opcode::MathCall, {fx.cf(1, fx.f32)}, fx.f32, {Str("sinc")});
    fx.ret();
  });
  BAD("math_call_arity", "'math_call' \"atan2\" takes 2 operands, got 1", {
    fx.simple();
    fx.v(Opcode::MathCall, {fx.cf(1, fx.f32)}, fx.f32, {Str("atan2")});
    fx.ret();
  });
  BAD("math_call_integer_operands", "'math_call' operands have type i32, expected floats", {
    fx.simple();
    ValueId a = fx.ci(1, fx.i32);
    fx.v(Opcode::MathCall, {a, a}, fx.i32, {Str("hypot")});
    fx.ret();
  });
  BAD("cast_shape", "'sitofp' result has type <64 x f32>, expected the shape of its operand <128 x i32>", {
    fx.simple();
    fx.v(Opcode::SIToFP, {fx.arange(128)}, fx.blk("64", fx.f32));
    fx.ret();
  });
  BAD("trunc_to_wider", "'trunc' casts an integer to a narrower integer, not i32 to i64", {
    fx.simple();
    fx.v(Opcode::Trunc, {fx.ci(1, fx.i32)}, fx.i64);
    fx.ret();
  });
  BAD("zext_to_narrower", "'zext' casts an integer to a wider integer, not i32 to i16", {
    fx.simple();
    fx.v(Opcode::ZExt, {fx.ci(1, fx.i32)}, fx.i16);
    fx.ret();
  });
  BAD("sext_of_float", "'sext' casts an integer to a wider integer, not f16 to i32", {
    fx.simple();
    fx.v(Opcode::SExt, {fx.cf(1, fx.f16)}, fx.i32);
    fx.ret();
  });
  BAD("fptrunc_same_width", "'fptrunc' casts a float to a narrower float, not f16 to bf16", {
    fx.simple();
    fx.v(Opcode::FPTrunc, {fx.cf(1, fx.f16)}, fx.bf16);
    fx.ret();
  });
  BAD("fpext_to_narrower", "'fpext' casts a float to a wider float, not f32 to f16", {
    fx.simple();
    fx.v(Opcode::FPExt, {fx.cf(1, fx.f32)}, fx.f16);
    fx.ret();
  });
  BAD("fptosi_of_int", "'fptosi' casts a float to an integer, not i32 to i64", {
    fx.simple();
    fx.v(Opcode::FPToSI, {fx.ci(1, fx.i32)}, fx.i64);
    fx.ret();
  });
  BAD("uitofp_to_int", "'uitofp' casts an integer to a float, not i32 to i64", {
    fx.simple();
    fx.v(Opcode::UIToFP, {fx.ci(1, fx.i32)}, fx.i64);
    fx.ret();
  });
  BAD("bitcast_width", "'bitcast' casts between types of one bit width, or between pointers, not i32 to f64", {
    fx.simple();
    fx.v(Opcode::Bitcast, {fx.ci(1, fx.i32)}, fx.f64);
    fx.ret();
  });
  BAD("bitcast_pointer_to_int", "'bitcast' casts between types of one bit width, or between pointers, not ptr<f32> to i64", {
    fx.simple();
    fx.v(Opcode::Bitcast, {fx.p(0)}, fx.i64);
    fx.ret();
  });
  BAD("ptrtoint_to_i32", "'ptrtoint' casts a pointer to i64, not ptr<f32> to i32", {
    fx.simple();
    fx.v(Opcode::PtrToInt, {fx.p(0)}, fx.i32);
    fx.ret();
  });
  BAD("inttoptr_from_i32", "'inttoptr' casts i64 to a pointer, not i32 to ptr<f32>", {
    fx.simple();
    fx.v(Opcode::IntToPtr, {fx.ci(0, fx.i32)}, fx.ptr(fx.f32));
    fx.ret();
  });
}

// ------------------------------------------------------------------------------------------------
// Custom rules: program, constants, shapes, pointers, memory, comparisons.

void register_custom_rules() {
  BAD("program_id_axis_range", "'program_id' attribute 'axis' is 3, expected 0, 1 or 2", {
    fx.simple();
    fx.v(Opcode::ProgramId, {}, fx.i32, {I(3)});
    fx.ret();
  });
  BAD("num_programs_result_type", "'num_programs' result has type i64, expected i32", {
    fx.simple();
    fx.v(Opcode::NumPrograms, {}, fx.i64, {I(0)});
    fx.ret();
  });
  BAD("const_float_into_int", "'const' value 1.5 does not fit type i32", {
    fx.simple();
    fx.cf(1.5, fx.i32);
    fx.ret();
  });
  BAD("const_int_out_of_range", "'const' value 300 does not fit type i8", {
    fx.simple();
    fx.ci(300, fx.blk("4", fx.i8));
    fx.ret();
  });
  BAD("const_bool_into_float", "'const' value true does not fit type f32", {
    fx.simple();
    fx.v(Opcode::Const, {}, fx.f32, {Attr::of_bool(true)});
    fx.ret();
  });
  BAD("const_pointer_result", "'const' result has type ptr<f32>, expected an integer or float scalar or block", {
    fx.simple();
    fx.ci(0, fx.ptr(fx.f32));
    fx.ret();
  });
  BAD("const_sym_float_into_int",
      "'const' attribute 'value' names EPS, which is a constexpr of type f32 and does not fit type i32", {
        fx.kernel("k", {}, {cx("EPS", Scalar::F32)});
        fx.v(Opcode::Const, {}, fx.i32, {S("EPS")});
        fx.ret();
      });
  BAD("arange_result_elem", "'arange' result has type <16 x i64>, expected a 1-D block of i32", {
    fx.simple();
    fx.v(Opcode::Arange, {}, fx.blk("16", fx.i64), {I(0), I(16)});
    fx.ret();
  });
  BAD("arange_empty", "'arange' end 4 must be greater than start 4", {
    fx.simple();
    fx.v(Opcode::Arange, {}, fx.blk("1", fx.i32), {I(4), I(4)});
    fx.ret();
  });
  BAD("arange_count", "'arange' range [0, 64) has 64 elements, result type <128 x i32> has 128", {
    fx.simple();
    fx.v(Opcode::Arange, {}, fx.blk("128", fx.i32), {I(0), I(64)});
    fx.ret();
  });
  BAD("arange_past_i32", "'arange' end 4294967296 is past the range of i32", {
    fx.simple();
    fx.v(Opcode::Arange, {}, fx.blk("16", fx.i32), {I(0), I(int64_t(1) << 32)});
    fx.ret();
  });
  BAD("splat_of_block", "'splat' operand has type <4 x i32>, expected a scalar or a pointer", {
    fx.simple();
    fx.splat(fx.arange(4), fx.blk("4,4", fx.i32));
    fx.ret();
  });
  BAD("splat_elem", "'splat' result has type <4 x f16>, expected a block of f32", {
    fx.simple();
    fx.splat(fx.cf(1, fx.f32), fx.blk("4", fx.f16));
    fx.ret();
  });
  BAD("broadcast_dim", "'broadcast' cannot broadcast <4 x 8 x f32> to <4 x 16 x f32>: dimension 1 is 8, expected 1 or 16", {
    fx.simple();
    fx.v(Opcode::Broadcast, {fx.cf(0, fx.blk("4,8", fx.f32))}, fx.blk("4,16", fx.f32));
    fx.ret();
  });
  BAD("broadcast_rank", "'broadcast' result has type <4 x 4 x f32>, expected a block of f32 of rank 1 ('broadcast' keeps the rank: add dimensions of size 1 with 'expand_dims[axis=A]' first, then broadcast them)", {
    fx.simple();
    fx.v(Opcode::Broadcast, {fx.cf(0, fx.blk("1", fx.f32))}, fx.blk("4,4", fx.f32));
    fx.ret();
  });
  BAD("broadcast_symbolic_names_differ",
      "'broadcast' cannot broadcast <A x f32> to <B x f32>: dimension 0 is A, expected 1 or B", {
        fx.kernel("k", {}, {cx("A", Scalar::I32), cx("B", Scalar::I32)});
        fx.v(Opcode::Broadcast, {fx.cf(0, fx.blk("A", fx.f32))}, fx.blk("B", fx.f32));
        fx.ret();
      });
  BAD("broadcast_of_scalar", "'broadcast' operand has type f32, expected a block ('splat' makes blocks of scalars)", {
    fx.simple();
    fx.v(Opcode::Broadcast, {fx.cf(0, fx.f32)}, fx.blk("4", fx.f32));
    fx.ret();
  });
  BAD("expand_dims_axis", "'expand_dims' attribute 'axis' is 2, expected 0 or 1", {
    fx.simple();
    fx.v(Opcode::ExpandDims, {fx.arange(4)}, fx.blk("4,1", fx.i32), {I(2)});
    fx.ret();
  });
  BAD("expand_dims_result", "'expand_dims' result has type <4 x 1 x i32>, expected <1 x 4 x i32>", {
    fx.simple();
    fx.v(Opcode::ExpandDims, {fx.arange(4)}, fx.blk("4,1", fx.i32), {I(0)});
    fx.ret();
  });
  BAD("expand_dims_rank_4", "'expand_dims' operand has type <2 x 2 x 2 x 2 x i32>, whose rank is already 4", {
    fx.simple();
    fx.v(Opcode::ExpandDims, {fx.ci(0, fx.blk("2,2,2,2", fx.i32))}, fx.blk("2,2,2,2", fx.i32), {I(0)});
    fx.ret();
  });
  BAD("reshape_count", "'reshape' cannot reshape <8 x 8 x f32> (64 elements) to <32 x f32> (32 elements)", {
    fx.simple();
    fx.v(Opcode::Reshape, {fx.cf(0, fx.blk("8,8", fx.f32))}, fx.blk("32", fx.f32));
    fx.ret();
  });
  BAD("reshape_elem", "'reshape' result has type <64 x i32>, expected a block of f32", {
    fx.simple();
    fx.v(Opcode::Reshape, {fx.cf(0, fx.blk("8,8", fx.f32))}, fx.blk("64", fx.i32));
    fx.ret();
  });
  BAD("permute_not_permutation", "'permute' attribute 'order' is [0, 0], expected a permutation of [0, 1] for <4 x 8 x f32>", {
    fx.simple();
    fx.v(Opcode::Permute, {fx.cf(0, fx.blk("4,8", fx.f32))}, fx.blk("8,4", fx.f32), {Ints({0, 0})});
    fx.ret();
  });
  BAD("permute_result", "'permute' result has type <4 x 8 x f32>, expected <8 x 4 x f32>", {
    fx.simple();
    fx.v(Opcode::Permute, {fx.cf(0, fx.blk("4,8", fx.f32))}, fx.blk("4,8", fx.f32), {Ints({1, 0})});
    fx.ret();
  });
  BAD("join_operands", "'join' operands have types <4 x f32> and <4 x f16>", {
    fx.simple();
    fx.v(Opcode::Join, {fx.cf(0, fx.blk("4", fx.f32)), fx.cf(0, fx.blk("4", fx.f16))}, fx.blk("4,2", fx.f32));
    fx.ret();
  });
  BAD("join_result", "'join' result has type <2 x 4 x f32>, expected <4 x 2 x f32>", {
    fx.simple();
    ValueId a = fx.cf(0, fx.blk("4", fx.f32));
    fx.v(Opcode::Join, {a, a}, fx.blk("2,4", fx.f32));
    fx.ret();
  });
  BAD("split_last_dim", "'split' operand has type <2 x 4 x f32>, expected a block whose last dimension is 2", {
    fx.simple();
    fx.op(Opcode::Split, {fx.cf(0, fx.blk("2,4", fx.f32))}, {fx.blk("2", fx.f32), fx.blk("2", fx.f32)});
    fx.ret();
  });
  BAD("split_result", "'split' result 1 has type <8 x f16>, expected <8 x f32>", {
    fx.simple();
    fx.op(Opcode::Split, {fx.cf(0, fx.blk("8,2", fx.f32))}, {fx.blk("8", fx.f32), fx.blk("8", fx.f16)});
    fx.ret();
  });
  BAD("cat_trailing_dims", "'cat' operands have types <4 x 8 x f32> and <4 x 4 x f32>, which differ in dimension 1", {
    fx.simple();
    fx.v(Opcode::Cat, {fx.cf(0, fx.blk("4,8", fx.f32)), fx.cf(0, fx.blk("4,4", fx.f32))}, fx.blk("8,8", fx.f32));
    fx.ret();
  });
  BAD("cat_dim0_sum", "'cat' result has type <16 x f32>, whose dimension 0 is not 4 + 4", {
    fx.simple();
    ValueId a = fx.cf(0, fx.blk("4", fx.f32));
    fx.v(Opcode::Cat, {a, a}, fx.blk("16", fx.f32));
    fx.ret();
  });
  BAD("cat_of_scalars", "'cat' operands have types f32 and f32, expected blocks of one rank and element type", {
    fx.simple();
    ValueId a = fx.cf(0, fx.f32);
    fx.v(Opcode::Cat, {a, a}, fx.blk("2", fx.f32));
    fx.ret();
  });
  BAD("addptr_not_pointer", "'addptr' pointer has type i64, expected a pointer or a block of pointers", {
    fx.simple();
    ValueId a = fx.ci(0, fx.i64);
    fx.v(Opcode::AddPtr, {a, fx.ci(1, fx.i32)}, fx.i64);
    fx.ret();
  });
  BAD("addptr_float_offset", "'addptr' offset has type f32, expected integers of the shape of ptr<f32>", {
    fx.simple();
    fx.v(Opcode::AddPtr, {fx.p(0), fx.cf(1, fx.f32)}, fx.ptr(fx.f32));
    fx.ret();
  });
  BAD("addptr_offset_shape", "'addptr' offset has type <4 x i32>, expected integers of the shape of <8 x ptr<f32>>", {
    fx.simple();
    TypeId bp = fx.blk("8", fx.ptr(fx.f32));
    fx.v(Opcode::AddPtr, {fx.splat(fx.p(0), bp), fx.arange(4)}, bp);
    fx.ret();
  });
  BAD("addptr_result", "'addptr' result has type ptr<f16>, expected ptr<f32>", {
    fx.simple();
    fx.v(Opcode::AddPtr, {fx.p(0), fx.ci(1, fx.i64)}, fx.ptr(fx.f16));
    fx.ret();
  });
  BAD("load_not_pointer", "'load' pointer has type i64, expected a pointer or a block of pointers", {
    fx.simple();
    fx.v(Opcode::Load, {fx.ci(0, fx.i64), N, N}, fx.f32);
    fx.ret();
  });
  BAD("load_mask_shape", "'load' mask has type <4 x i1>, expected <8 x i1> (the shape of the pointer)", {
    fx.simple();
    TypeId bp = fx.blk("8", fx.ptr(fx.f32));
    ValueId m = fx.v(Opcode::Const, {}, fx.blk("4", fx.i1), {Attr::of_bool(true)});
    fx.v(Opcode::Load, {fx.splat(fx.p(0), bp), m, N}, fx.blk("8", fx.f32));
    fx.ret();
  });
  BAD("load_mask_not_i1", "'load' mask has type i32, expected i1 (the shape of the pointer)", {
    fx.simple();
    fx.v(Opcode::Load, {fx.p(0), fx.ci(1, fx.i32), N}, fx.f32);
    fx.ret();
  });
  BAD("load_other_type", "'load' other has type f16, expected f32", {
    fx.simple();
    fx.v(Opcode::Load, {fx.p(0), N, fx.cf(0, fx.f16)}, fx.f32);
    fx.ret();
  });
  BAD("load_result_type", "'load' result has type f32, expected <8 x f32>", {
    fx.simple();
    TypeId bp = fx.blk("8", fx.ptr(fx.f32));
    fx.v(Opcode::Load, {fx.splat(fx.p(0), bp), N, N}, fx.f32);
    fx.ret();
  });
  BAD("store_value_type", "'store' value has type <8 x f16>, expected <8 x f32>", {
    fx.simple();
    TypeId bp = fx.blk("8", fx.ptr(fx.f32));
    fx.op(Opcode::Store, {fx.splat(fx.p(0), bp), fx.cf(0, fx.blk("8", fx.f16)), N});
    fx.ret();
  });
  BAD("store_mask_shape", "'store' mask has type <8 x i1>, expected i1 (the shape of the pointer)", {
    fx.simple();
    ValueId m = fx.v(Opcode::Const, {}, fx.blk("8", fx.i1), {Attr::of_bool(true)});
    fx.op(Opcode::Store, {fx.p(0), fx.cf(0, fx.f32), m});
    fx.ret();
  });
  BAD("atomic_and_on_float", "'atomic' kind=and needs integer elements, got f32", {
    fx.simple();
    fx.op(Opcode::Atomic, {fx.p(0), fx.cf(1, fx.f32), N}, {fx.f32}, {en(Opcode::Atomic, "kind", "and")});
    fx.ret();
  });
  BAD("atomic_umax_on_float", "'atomic' kind=umax needs integer elements, got f32", {
    fx.simple();
    fx.op(Opcode::Atomic, {fx.p(0), fx.cf(1, fx.f32), N}, {fx.f32}, {en(Opcode::Atomic, "kind", "umax")});
    fx.ret();
  });
  BAD("atomic_result_type", "'atomic' result has type i32, expected f32", {
    fx.simple();
    fx.op(Opcode::Atomic, {fx.p(0), fx.cf(1, fx.f32), N}, {fx.i32}, {en(Opcode::Atomic, "kind", "add")});
    fx.ret();
  });
  BAD("atomic_missing_kind", "'atomic' needs attribute 'kind'", {
    fx.simple();
    fx.op(Opcode::Atomic, {fx.p(0), fx.cf(1, fx.f32), N}, {fx.f32});
    fx.ret();
  });
  BAD("atomic_value_type", "'atomic' value has type i32, expected f32", {
    fx.simple();
    fx.op(Opcode::Atomic, {fx.p(0), fx.ci(1, fx.i32), N}, {fx.i32}, {en(Opcode::Atomic, "kind", "xchg")});
    fx.ret();
  });
  BAD("atomic_cas_cmp_type", "'atomic_cas' cmp has type f32, expected i32", {
    fx.kernel("k", {{"c", fx.ptr(fx.i32)}});
    fx.op(Opcode::AtomicCas, {fx.p(0), fx.cf(0, fx.f32), fx.ci(1, fx.i32), N}, {fx.i32});
    fx.ret();
  });
  // Distributed ops (docs/distributed.md): a ring exchange with every op, then their misuses.
  OK("distributed_ring", {
    fx.kernel("k", {{"buf", fx.ptr(fx.f32)}, {"sig", fx.ptr(fx.i32)}, {"sig64", fx.ptr(fx.i64)}});
    ValueId me = fx.v(Opcode::Rank, {}, fx.i32);
    ValueId n = fx.v(Opcode::NumRanks, {}, fx.i32);
    ValueId one = fx.ci(1, fx.i32);
    ValueId next = fx.v(Opcode::SRem, {fx.v(Opcode::Add, {me, one}, fx.i32), n}, fx.i32);
    TypeId bp = fx.blk("64", fx.ptr(fx.f32));
    ValueId ptrs = fx.v(Opcode::AddPtr, {fx.splat(fx.p(0), bp), fx.arange(64)}, bp);
    ValueId x = fx.cf(2, fx.blk("64", fx.f32));
    ValueId m = fx.v(Opcode::Const, {}, fx.blk("64", fx.i1), {Attr::of_bool(true)});
    fx.op(Opcode::Put, {ptrs, x, next, m, fx.p(1), one});
    fx.op(Opcode::Put, {ptrs, x, next, N, N, N});
    fx.op(Opcode::Notify, {fx.p(2), fx.ci(2, fx.i64), next}, {}, {en(Opcode::Notify, "kind", "add")});
    ValueId t = fx.v(Opcode::Wait, {fx.p(1), one, N}, fx.i32, {en(Opcode::Wait, "cmp", "ge")});
    TypeId sb = fx.blk("4", fx.ptr(fx.i32));
    fx.v(Opcode::Wait, {fx.splat(fx.p(1), sb), one, N}, fx.i32);
    ValueId ready = fx.v(Opcode::ConsumeToken, {ptrs, t}, bp);
    ValueId peer = fx.v(Opcode::SymmAt, {ready, next}, bp);
    fx.v(Opcode::Get, {peer, me, m, x}, fx.blk("64", fx.f32));
    fx.v(Opcode::Get, {fx.p(2), me, N, N}, fx.i64);
    fx.ret();
  });
  BAD("symm_at_rank_type", "'symm_at' rank has type i64, expected i32", {
    fx.simple();
    fx.v(Opcode::SymmAt, {fx.p(0), fx.ci(0, fx.i64)}, fx.ptr(fx.f32));
    fx.ret();
  });
  BAD("wait_on_floats", "'wait' pointer has type ptr<f32>, expected ptr<i32> or ptr<i64> or a block of them (signals)", {
    fx.simple();
    fx.v(Opcode::Wait, {fx.p(0), fx.cf(1, fx.f32), N}, fx.i32);
    fx.ret();
  });
  BAD("notify_value_type", "'notify' value has type i64, expected i32", {
    fx.kernel("k", {{"s", fx.ptr(fx.i32)}});
    fx.op(Opcode::Notify, {fx.p(0), fx.ci(1, fx.i64), fx.ci(0, fx.i32)});
    fx.ret();
  });
  BAD("put_signal_value_alone", "'put' has a signal_value but no signal; write both or neither", {
    fx.simple();
    fx.op(Opcode::Put, {fx.p(0), fx.cf(1, fx.f32), fx.ci(0, fx.i32), N, N, fx.ci(1, fx.i32)});
    fx.ret();
  });
  BAD("consume_token_result", "'consume_token' result has type ptr<i32>, expected ptr<f32>", {
    fx.simple();
    fx.v(Opcode::ConsumeToken, {fx.p(0), fx.ci(0, fx.i32)}, fx.ptr(fx.i32));
    fx.ret();
  });
  BAD("cmp_on_floats", "'cmp' operands have type f32, expected integers or pointers ('fcmp' compares floats)", {
    fx.simple();
    ValueId a = fx.cf(0, fx.f32);
    fx.v(Opcode::Cmp, {a, a}, fx.i1, {en(Opcode::Cmp, "pred", "eq")});
    fx.ret();
  });
  BAD("fcmp_on_ints", "'fcmp' operands have type <4 x i32>, expected floats ('cmp' compares integers)", {
    fx.simple();
    ValueId a = fx.arange(4);
    fx.v(Opcode::FCmp, {a, a}, fx.blk("4", fx.i1), {en(Opcode::FCmp, "pred", "olt")});
    fx.ret();
  });
  BAD("cmp_result", "'cmp' result has type <4 x i32>, expected <4 x i1>", {
    fx.simple();
    ValueId a = fx.arange(4);
    fx.v(Opcode::Cmp, {a, a}, fx.blk("4", fx.i32), {en(Opcode::Cmp, "pred", "eq")});
    fx.ret();
  });
  BAD("cmp_operands_differ", "'cmp' operands have types i32 and i64", {
    fx.simple();
    fx.v(Opcode::Cmp, {fx.ci(0, fx.i32), fx.ci(0, fx.i64)}, fx.i1, {en(Opcode::Cmp, "pred", "eq")});
    fx.ret();
  });
  BAD("select_condition_shape", "'select' condition has type i1, expected <4 x i1>", {
    fx.simple();
    ValueId c = fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)});
    ValueId a = fx.arange(4);
    fx.v(Opcode::Select, {c, a, a}, fx.blk("4", fx.i32));
    fx.ret();
  });
  BAD("select_operands_differ", "'select' operands have types i32 and f32", {
    fx.simple();
    ValueId c = fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)});
    fx.v(Opcode::Select, {c, fx.ci(0, fx.i32), fx.cf(0, fx.f32)}, fx.i32);
    fx.ret();
  });
}

// ------------------------------------------------------------------------------------------------
// Reductions, scans, dot.

void register_reduce_dot_rules() {
  BAD("reduce_axis_range", "'reduce' attribute 'axis' is 1, expected 0", {
    fx.simple();
    fx.v(Opcode::Reduce, {fx.arange(16)}, fx.i32, {I(1), en(Opcode::Reduce, "kind", "sum")});
    fx.ret();
  });
  BAD("reduce_result_shape", "'reduce' result has type <8 x f32>, expected <4 x f32>", {
    fx.simple();
    fx.v(Opcode::Reduce, {fx.cf(0, fx.blk("4,8", fx.f32))}, fx.blk("8", fx.f32), {I(1), en(Opcode::Reduce, "kind", "max")});
    fx.ret();
  });
  BAD("reduce_1d_gives_scalar", "'reduce' result has type <1 x f32>, expected f32", {
    fx.simple();
    fx.v(Opcode::Reduce, {fx.cf(0, fx.blk("16", fx.f32))}, fx.blk("1", fx.f32), {I(0), en(Opcode::Reduce, "kind", "sum")});
    fx.ret();
  });
  BAD("reduce_argmax_gives_i32", "'reduce' result has type f32, expected i32", {
    fx.simple();
    fx.v(Opcode::Reduce, {fx.cf(0, fx.blk("16", fx.f32))}, fx.f32, {I(0), en(Opcode::Reduce, "kind", "argmax")});
    fx.ret();
  });
  BAD("reduce_xor_on_floats", "'reduce' kind=xor needs integer elements, got f32", {
    fx.simple();
    fx.v(Opcode::Reduce, {fx.cf(0, fx.blk("16", fx.f32))}, fx.f32, {I(0), en(Opcode::Reduce, "kind", "xor")});
    fx.ret();
  });
  BAD("reduce_of_scalar", "'reduce' operand 0 has type f32, expected a block of integers or floats", {
    fx.simple();
    fx.v(Opcode::Reduce, {fx.cf(0, fx.f32)}, fx.f32, {I(0), en(Opcode::Reduce, "kind", "sum")});
    fx.ret();
  });
  BAD("reduce_of_pointers", "'reduce' operand 0 has type <4 x ptr<f32>>, expected a block of integers or floats", {
    fx.simple();
    TypeId bp = fx.blk("4", fx.ptr(fx.f32));
    fx.v(Opcode::Reduce, {fx.splat(fx.p(0), bp)}, fx.ptr(fx.f32), {I(0), en(Opcode::Reduce, "kind", "max")});
    fx.ret();
  });
  BAD("reduce_operand_shapes", "'reduce' operand 1 has type <8 x i32>, expected the shape of <16 x f32>", {
    fx.simple();
    OpId r = fx.op(Opcode::Reduce, {fx.cf(0, fx.blk("16", fx.f32)), fx.arange(8)}, {fx.f32, fx.i32}, {I(0)});
    BlockId c = fx.region(r, {fx.f32, fx.i32, fx.f32, fx.i32});
    fx.in(c);
    fx.yield({fx.arg(c, 0), fx.arg(c, 1)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("reduce_kind_and_region", "'reduce' has both attribute 'kind' and a combine region", {
    fx.simple();
    OpId r = fx.op(Opcode::Reduce, {fx.arange(16)}, {fx.i32}, {I(0), en(Opcode::Reduce, "kind", "sum")});
    BlockId c = fx.region(r, {fx.i32, fx.i32});
    fx.in(c);
    fx.yield({fx.arg(c, 0)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("reduce_neither_kind_nor_region", "'reduce' needs attribute 'kind' or a combine region", {
    fx.simple();
    fx.v(Opcode::Reduce, {fx.arange(16)}, fx.i32, {I(0)});
    fx.ret();
  });
  BAD("reduce_kind_with_tuple", "'reduce' with kind=sum takes 1 operand, got 2", {
    fx.simple();
    ValueId a = fx.arange(16);
    fx.op(Opcode::Reduce, {a, a}, {fx.i32, fx.i32}, {I(0), en(Opcode::Reduce, "kind", "sum")});
    fx.ret();
  });
  BAD("reduce_region_arg_count", "'reduce' combine region has 2 arguments, expected 4 (two per operand)", {
    fx.simple();
    ValueId a = fx.arange(16);
    OpId r = fx.op(Opcode::Reduce, {a, a}, {fx.i32, fx.i32}, {I(0)});
    BlockId c = fx.region(r, {fx.i32, fx.i32});
    fx.in(c);
    fx.yield({fx.arg(c, 0), fx.arg(c, 1)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("reduce_region_arg_type", "'reduce' combine region argument %b has type f32, expected i32 (the element type of operand 0)", {
    fx.simple();
    OpId r = fx.op(Opcode::Reduce, {fx.arange(16)}, {fx.i32}, {I(0)});
    BlockId c = fx.region(r, {fx.i32, fx.f32});
    fx.name(fx.arg(c, 1), "b");
    fx.in(c);
    fx.yield({fx.arg(c, 0)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("reduce_yield_type", "'yield' value 0 has type f32, expected i32 for the enclosing 'reduce'", {
    fx.simple();
    OpId r = fx.op(Opcode::Reduce, {fx.arange(16)}, {fx.i32}, {I(0)});
    BlockId c = fx.region(r, {fx.i32, fx.i32});
    fx.in(c);
    fx.yield({fx.cf(0, fx.f32)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("reduce_yield_count", "'yield' gives 1 value, expected 2 for the enclosing 'reduce'", {
    fx.simple();
    ValueId a = fx.arange(16);
    OpId r = fx.op(Opcode::Reduce, {a, a}, {fx.i32, fx.i32}, {I(0)});
    BlockId c = fx.region(r, {fx.i32, fx.i32, fx.i32, fx.i32});
    fx.in(c);
    fx.yield({fx.arg(c, 0)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("reduce_result_count", "'reduce' has 1 result, expected 2 (one per operand)", {
    fx.simple();
    ValueId a = fx.arange(16);
    OpId r = fx.op(Opcode::Reduce, {a, a}, {fx.i32}, {I(0)});
    BlockId c = fx.region(r, {fx.i32, fx.i32, fx.i32, fx.i32});
    fx.in(c);
    fx.yield({fx.arg(c, 0), fx.arg(c, 1)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("scan_result_shape", "'scan' result has type i32, expected <16 x i32>", {
    fx.simple();
    fx.v(Opcode::Scan, {fx.arange(16)}, fx.i32, {I(0), en(Opcode::Scan, "kind", "sum")});
    fx.ret();
  });
  BAD("scan_axis_range", "'scan' attribute 'axis' is -1, expected 0 or 1", {
    fx.simple();
    fx.v(Opcode::Scan, {fx.ci(0, fx.blk("4,4", fx.i32))}, fx.blk("4,4", fx.i32), {I(-1), en(Opcode::Scan, "kind", "sum")});
    fx.ret();
  });
  BAD("dot_rank", "'dot' operand 'a' has type <16 x f16>, expected a 2-D or batched 3-D block", {
    fx.simple();
    ValueId a = fx.cf(0, fx.blk("16", fx.f16));
    fx.v(Opcode::Dot, {a, a, fx.cf(0, fx.blk("16", fx.f32))}, fx.blk("16", fx.f32));
    fx.ret();
  });
  BAD("dot_b_rank", "'dot' operand 'b' has type <2 x 16 x 16 x f16>, expected a block of rank 2 like 'a'", {
    fx.simple();
    fx.v(Opcode::Dot, {fx.cf(0, fx.blk("16,16", fx.f16)), fx.cf(0, fx.blk("2,16,16", fx.f16)), fx.cf(0, fx.blk("16,16", fx.f32))},
         fx.blk("16,16", fx.f32));
    fx.ret();
  });
  BAD("dot_inner_dim", "'dot' operands <16 x 32 x f16> and <64 x 16 x f16> differ in the inner dimension (32 and 64)", {
    fx.simple();
    fx.v(Opcode::Dot, {fx.cf(0, fx.blk("16,32", fx.f16)), fx.cf(0, fx.blk("64,16", fx.f16)), fx.cf(0, fx.blk("16,16", fx.f32))},
         fx.blk("16,16", fx.f32));
    fx.ret();
  });
  BAD("dot_batch_dim", "'dot' operands <2 x 16 x 16 x f16> and <4 x 16 x 16 x f16> differ in the batch dimension", {
    fx.simple();
    fx.v(Opcode::Dot, {fx.cf(0, fx.blk("2,16,16", fx.f16)), fx.cf(0, fx.blk("4,16,16", fx.f16)), fx.cf(0, fx.blk("2,16,16", fx.f32))},
         fx.blk("2,16,16", fx.f32));
    fx.ret();
  });
  BAD("dot_acc_shape", "'dot' accumulator has type <16 x 16 x f32>, expected <16 x 32 x f32> for f16 inputs", {
    fx.simple();
    fx.v(Opcode::Dot, {fx.cf(0, fx.blk("16,16", fx.f16)), fx.cf(0, fx.blk("16,32", fx.f16)), fx.cf(0, fx.blk("16,16", fx.f32))},
         fx.blk("16,16", fx.f32));
    fx.ret();
  });
  BAD("dot_f16_accumulator", "'dot' accumulator has type <16 x 16 x f16>, expected <16 x 16 x f32> for f16 inputs", {
    fx.simple();
    ValueId a = fx.cf(0, fx.blk("16,16", fx.f16));
    fx.v(Opcode::Dot, {a, a, a}, fx.blk("16,16", fx.f16));
    fx.ret();
  });
  BAD("dot_i8_accumulator", "'dot' accumulator has type <16 x 16 x f32>, expected <16 x 16 x i32> for i8 inputs", {
    fx.simple();
    ValueId a = fx.ci(0, fx.blk("16,16", fx.i8));
    fx.v(Opcode::Dot, {a, a, fx.cf(0, fx.blk("16,16", fx.f32))}, fx.blk("16,16", fx.f32));
    fx.ret();
  });
  BAD("dot_input_type", "'dot' inputs have element type f64, expected f16, bf16, f8e4m3, f8e5m2, f32 or i8", {
    fx.simple();
    ValueId a = fx.cf(0, fx.blk("16,16", fx.f64));
    fx.v(Opcode::Dot, {a, a, a}, fx.blk("16,16", fx.f64));
    fx.ret();
  });
  BAD("dot_mixed_inputs", "'dot' operands 'a' and 'b' have element types f16 and bf16", {
    fx.simple();
    ValueId c = fx.cf(0, fx.blk("16,16", fx.f32));
    fx.v(Opcode::Dot, {fx.cf(0, fx.blk("16,16", fx.f16)), fx.cf(0, fx.blk("16,16", fx.bf16)), c}, fx.blk("16,16", fx.f32));
    fx.ret();
  });
  BAD("dot_tf32_on_f16", "'dot' precision=tf32 needs f32 inputs, got f16", {
    fx.simple();
    ValueId a = fx.cf(0, fx.blk("16,16", fx.f16));
    ValueId c = fx.cf(0, fx.blk("16,16", fx.f32));
    fx.v(Opcode::Dot, {a, a, c}, fx.blk("16,16", fx.f32), {en(Opcode::Dot, "precision", "tf32")});
    fx.ret();
  });
  BAD("dot_result", "'dot' result has type <16 x 16 x f16>, expected <16 x 16 x f32>", {
    fx.simple();
    ValueId a = fx.cf(0, fx.blk("16,16", fx.f16));
    ValueId c = fx.cf(0, fx.blk("16,16", fx.f32));
    fx.v(Opcode::Dot, {a, a, c}, fx.blk("16,16", fx.f16));
    fx.ret();
  });
  OK("ok_dot_f8", {
    fx.simple();
    ValueId a = fx.cf(0, fx.blk("16,16", fx.f8));
    ValueId c = fx.cf(0, fx.blk("16,16", fx.f32));
    fx.v(Opcode::Dot, {a, a, c}, fx.blk("16,16", fx.f32));
    fx.ret();
  });
}

// ------------------------------------------------------------------------------------------------
// Control flow, terminators, calls.

// for %c0, %c4, %c1, inits... with a body of `args` that yields `yields`; the test edits it.
OpId simple_for(Fx& fx, std::vector<ValueId> inits, std::vector<TypeId> results, std::vector<TypeId> args,
                std::function<std::vector<ValueId>(BlockId)> body) {
  ValueId lo = fx.ci(0, fx.i32), hi = fx.ci(4, fx.i32), step = fx.ci(1, fx.i32);
  std::vector<ValueId> ops = {lo, hi, step};
  ops.insert(ops.end(), inits.begin(), inits.end());
  OpId o = fx.op(Opcode::For, ops, results);
  BlockId b = fx.region(o, args);
  fx.in(b);
  fx.yield(body(b));
  fx.in(fx.body());
  return o;
}

void register_control_rules() {
  BAD("for_bounds_float", "'for' lower bound has type f32, expected a scalar integer", {
    fx.simple();
    ValueId a = fx.cf(0, fx.f32);
    OpId o = fx.op(Opcode::For, {a, a, a});
    fx.in(fx.region(o, {fx.f32}));
    fx.yield();
    fx.in(fx.body());
    fx.ret();
  });
  BAD("for_bounds_types_differ", "'for' bounds and step have types i32, i64 and i32, expected one type", {
    fx.simple();
    ValueId a = fx.ci(0, fx.i32);
    OpId o = fx.op(Opcode::For, {a, fx.ci(4, fx.i64), a});
    fx.in(fx.region(o, {fx.i32}));
    fx.yield();
    fx.in(fx.body());
    fx.ret();
  });
  BAD("for_result_count", "'for' has 0 results, expected 1 (one per initial value)", {
    fx.simple();
    ValueId x = fx.cf(0, fx.f32);
    simple_for(fx, {x}, {}, {fx.i32, fx.f32}, [&](BlockId b) { return std::vector<ValueId>{fx.arg(b, 1)}; });
    fx.ret();
  });
  BAD("for_result_type", "'for' result 0 has type f16, expected f32 (the type of initial value 0)", {
    fx.simple();
    ValueId x = fx.cf(0, fx.f32);
    simple_for(fx, {x}, {fx.f16}, {fx.i32, fx.f32}, [&](BlockId b) { return std::vector<ValueId>{fx.arg(b, 1)}; });
    fx.ret();
  });
  BAD("for_region_arg_count",
      "'for' region has 1 argument, expected 2 (the induction variable and 1 carried value)", {
        fx.simple();
        ValueId x = fx.cf(0, fx.f32);
        simple_for(fx, {x}, {fx.f32}, {fx.i32}, [&](BlockId) { return std::vector<ValueId>{}; });
        fx.ret();
      });
  BAD("for_induction_type", "'for' induction variable %i has type i64, expected i32 (the type of the bounds)", {
    fx.simple();
    OpId o = simple_for(fx, {}, {}, {fx.i64}, [&](BlockId) { return std::vector<ValueId>{}; });
    fx.name(fx.f->blocks[fx.f->ops[o].regions[0]].args[0], "i");
    fx.ret();
  });
  BAD("for_carried_type", "'for' region argument %acc has type f16, expected f32 (the type of initial value 0)", {
    fx.simple();
    ValueId x = fx.cf(0, fx.f32);
    OpId o = simple_for(fx, {x}, {fx.f32}, {fx.i32, fx.f16}, [&](BlockId b) { return std::vector<ValueId>{fx.arg(b, 1)}; });
    fx.name(fx.f->blocks[fx.f->ops[o].regions[0]].args[1], "acc");
    fx.ret();
  });
  BAD("for_yield_type", "'yield' value 0 has type i32, expected f32 for the enclosing 'for'", {
    fx.simple();
    ValueId x = fx.cf(0, fx.f32);
    simple_for(fx, {x}, {fx.f32}, {fx.i32, fx.f32}, [&](BlockId b) { return std::vector<ValueId>{fx.arg(b, 0)}; });
    fx.ret();
  });
  BAD("for_yield_count", "'yield' gives 0 values, expected 1 for the enclosing 'for'", {
    fx.simple();
    ValueId x = fx.cf(0, fx.f32);
    simple_for(fx, {x}, {fx.f32}, {fx.i32, fx.f32}, [&](BlockId) { return std::vector<ValueId>{}; });
    fx.ret();
  });
  BAD("if_condition_type", "'if' condition has type i32, expected i1", {
    fx.simple();
    OpId o = fx.op(Opcode::If, {fx.ci(1, fx.i32)});
    fx.in(fx.region(o));
    fx.yield();
    fx.in(fx.body());
    fx.ret();
  });
  BAD("if_condition_block", "'if' condition has type <4 x i1>, expected i1", {
    fx.simple();
    OpId o = fx.op(Opcode::If, {fx.v(Opcode::Const, {}, fx.blk("4", fx.i1), {Attr::of_bool(true)})});
    fx.in(fx.region(o));
    fx.yield();
    fx.in(fx.body());
    fx.ret();
  });
  BAD("if_results_need_else", "'if' with results needs an else region", {
    fx.simple();
    OpId o = fx.op(Opcode::If, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})}, {fx.i32});
    fx.in(fx.region(o));
    fx.yield({fx.ci(1, fx.i32)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("if_region_args", "'if' region 1 has 1 argument, expected none", {
    fx.simple();
    OpId o = fx.op(Opcode::If, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})});
    fx.in(fx.region(o));
    fx.yield();
    fx.in(fx.region(o, {fx.i32}));
    fx.yield();
    fx.in(fx.body());
    fx.ret();
  });
  BAD("if_yield_type", "'yield' value 0 has type f32, expected i32 for the enclosing 'if'", {
    fx.simple();
    OpId o = fx.op(Opcode::If, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})}, {fx.i32});
    fx.in(fx.region(o));
    fx.yield({fx.ci(1, fx.i32)});
    fx.in(fx.region(o));
    fx.yield({fx.cf(1, fx.f32)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("if_without_results_yields_values", "'yield' gives 1 value, expected 0 for the enclosing 'if'", {
    fx.simple();
    OpId o = fx.op(Opcode::If, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})});
    fx.in(fx.region(o));
    fx.yield({fx.ci(1, fx.i32)});
    fx.in(fx.body());
    fx.ret();
  });

  // while %init { ^(%a): condition %c, %a } { ^(%b): yield %b } with parts the test breaks.
  struct W {
    static OpId build(Fx& fx, TypeId init_t, TypeId before_t, TypeId res_t, TypeId after_t, bool cond_i1,
                      bool yield_in_before = false) {
      ValueId init = init_t == fx.f32 ? fx.cf(0, fx.f32) : fx.ci(0, init_t);
      OpId w = fx.op(Opcode::While, {init}, {res_t});
      BlockId before = fx.region(w, {before_t}), after = fx.region(w, {after_t});
      fx.name(fx.arg(before, 0), "a");
      fx.name(fx.arg(after, 0), "b");
      fx.in(before);
      ValueId c = cond_i1 ? fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)}) : fx.ci(1, fx.i32);
      if (yield_in_before)
        fx.yield({fx.arg(before, 0)});
      else
        fx.op(Opcode::Condition, {c, fx.arg(before, 0)});
      fx.in(after);
      fx.yield({fx.arg(after, 0)});
      fx.in(fx.body());
      return w;
    }
  };
  OK("ok_while", {
    fx.simple();
    W::build(fx, fx.i32, fx.i32, fx.i32, fx.i32, true);
    fx.ret();
  });
  BAD("while_before_arg_type", "'while' first region argument %a has type i64, expected i32 (the type of initial value 0)", {
    fx.simple();
    W::build(fx, fx.i32, fx.i64, fx.i32, fx.i32, true);
    fx.ret();
  });
  BAD("while_after_arg_type", "'while' second region argument %b has type i64, expected i32 (the type of result 0)", {
    fx.simple();
    W::build(fx, fx.i32, fx.i32, fx.i32, fx.i64, true);
    fx.ret();
  });
  BAD("while_condition_type", "'condition' condition has type i32, expected i1", {
    fx.simple();
    W::build(fx, fx.i32, fx.i32, fx.i32, fx.i32, false);
    fx.ret();
  });
  BAD("while_condition_values", "'condition' value 0 has type i32, expected f32 for result 0 of the enclosing 'while'", {
    fx.simple();
    W::build(fx, fx.i32, fx.i32, fx.f32, fx.f32, true);
    fx.ret();
  });
  BAD("while_yield_in_first_region", "'yield' cannot end the first region of 'while'; it ends with 'condition'", {
    fx.simple();
    W::build(fx, fx.i32, fx.i32, fx.i32, fx.i32, true, true);
    fx.ret();
  });
  BAD("while_after_yield_type", "'yield' value 0 has type f32, expected i32 for the enclosing 'while'", {
    fx.simple();
    // The loop's results are f32 (what the condition passes) but it carries i32.
    ValueId init = fx.ci(0, fx.i32);
    OpId w = fx.op(Opcode::While, {init}, {fx.f32});
    BlockId before = fx.region(w, {fx.i32}), after = fx.region(w, {fx.f32});
    fx.in(before);
    fx.op(Opcode::Condition, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)}), fx.cf(0, fx.f32)});
    fx.in(after);
    fx.yield({fx.arg(after, 0)});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("condition_outside_while", "'condition' can only end the first region of a 'while'", {
    fx.simple();
    OpId o = fx.op(Opcode::If, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})});
    fx.in(fx.region(o));
    fx.op(Opcode::Condition, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})});
    fx.in(fx.body());
    fx.ret();
  });
  BAD("yield_in_function_body", "'yield' cannot end a function body; it ends with 'return'", {
    fx.simple();
    fx.yield();
  });
  BAD("return_in_region", "'return' must end the function body, not a region of 'if'", {
    fx.simple();
    OpId o = fx.op(Opcode::If, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})});
    fx.in(fx.region(o));
    fx.ret();
    fx.in(fx.body());
    fx.ret();
  });
  BAD("terminator_not_last", "'return' must be the last op of its region", {
    fx.simple();
    fx.ret();
    fx.ci(0, fx.i32);
    fx.ret();
  });
  BAD("region_without_terminator", "region of 'if' ends with 'const'; it must end with 'yield'", {
    fx.simple();
    OpId o = fx.op(Opcode::If, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})});
    fx.in(fx.region(o));
    fx.ci(0, fx.i32);
    fx.in(fx.body());
    fx.ret();
  });
  BAD("empty_region", "region 1 of 'while' is empty; it must end with 'yield'", {
    fx.simple();
    OpId w = fx.op(Opcode::While, {}, {});
    BlockId before = fx.region(w);
    fx.region(w);
    fx.in(before);
    fx.op(Opcode::Condition, {fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})});
    fx.in(fx.body());
    fx.ret();
  });

  BAD("call_undefined", "'call' callee @nope is not defined", {
    fx.simple();
    fx.op(Opcode::Call, {}, {}, {Attr::of_func("nope")});
    fx.ret();
  });
  BAD("call_kernel", "'call' callee @k is a kernel; only device functions can be called", {
    fx.simple();
    fx.ret();
    fx.kernel("k2");
    fx.op(Opcode::Call, {}, {}, {Attr::of_func("k")});
    fx.ret();
  });
  BAD("call_arg_count", "'call' passes 0 arguments, @f takes 1", {
    fx.device("f", {{"a", fx.i32}}, {});
    fx.ret();
    fx.simple();
    fx.op(Opcode::Call, {}, {}, {Attr::of_func("f")});
    fx.ret();
  });
  BAD("call_arg_type", "'call' argument 0 has type f32, expected i32 (parameter %a of @f)", {
    fx.device("f", {{"a", fx.i32}}, {});
    fx.ret();
    fx.simple();
    fx.op(Opcode::Call, {fx.cf(0, fx.f32)}, {}, {Attr::of_func("f")});
    fx.ret();
  });
  BAD("call_result_count", "'call' has 0 results, @f returns 1", {
    fx.device("f", {}, {fx.i32});
    fx.ret({fx.ci(0, fx.i32)});
    fx.simple();
    fx.op(Opcode::Call, {}, {}, {Attr::of_func("f")});
    fx.ret();
  });
  BAD("call_result_type", "'call' result 0 has type i64, expected i32 (result 0 of @f)", {
    fx.device("f", {}, {fx.i32});
    fx.ret({fx.ci(0, fx.i32)});
    fx.simple();
    fx.op(Opcode::Call, {}, {fx.i64}, {Attr::of_func("f")});
    fx.ret();
  });
  BAD("call_self_recursion", "t.tri:3:3: error: 'call' of @f is recursive: @f -> @f", {
    fx.device("f", {}, {});
    OpId c = fx.op(Opcode::Call, {}, {}, {Attr::of_func("f")});
    fx.f->ops[c].loc = Loc{3, 3};
    fx.ret();
  });
  BAD("call_mutual_recursion", "'call' of @f is recursive: @f -> @g -> @f", {
    fx.device("f", {}, {});
    fx.op(Opcode::Call, {}, {}, {Attr::of_func("g")});
    fx.ret();
    fx.device("g", {}, {});
    fx.op(Opcode::Call, {}, {}, {Attr::of_func("f")});
    fx.ret();
    fx.simple();
    fx.op(Opcode::Call, {}, {}, {Attr::of_func("f")});
    fx.ret();
  });
}

// ------------------------------------------------------------------------------------------------
// Debugging ops, hints, escape hatches.

void register_misc_rules() {
  BAD("print_mask_shape", "'print' mask has type <8 x i1>, expected <4 x i1> (the shape of value 0)", {
    fx.simple();
    ValueId m = fx.v(Opcode::Const, {}, fx.blk("8", fx.i1), {Attr::of_bool(true)});
    fx.op(Opcode::Print, {fx.arange(4), m}, {}, {Str("v")});
    fx.ret();
  });
  BAD("print_mask_elem", "'print' mask has type <4 x i32>, expected i1 elements", {
    fx.simple();
    ValueId a = fx.arange(4);
    fx.op(Opcode::Print, {a, a});
    fx.ret();
  });
  BAD("assert_condition", "'assert' condition has type <4 x i32>, expected i1 or a block of i1", {
    fx.simple();
    fx.op(Opcode::Assert, {fx.arange(4), N});
    fx.ret();
  });
  BAD("assert_mask_shape", "'assert' mask has type i1, expected <4 x i1> (the shape of the condition)", {
    fx.simple();
    ValueId c = fx.v(Opcode::Const, {}, fx.blk("4", fx.i1), {Attr::of_bool(true)});
    fx.op(Opcode::Assert, {c, fx.v(Opcode::Const, {}, fx.i1, {Attr::of_bool(true)})});
    fx.ret();
  });
  BAD("assume_condition", "'assume' condition has type i32, expected i1 or a block of i1", {
    fx.simple();
    fx.op(Opcode::Assume, {fx.ci(1, fx.i32)});
    fx.ret();
  });
  BAD("multiple_of_count", "'multiple_of' attribute 'values' is [16], expected 2 values for <4 x 4 x i32>", {
    fx.simple();
    TypeId t = fx.blk("4,4", fx.i32);
    fx.v(Opcode::MultipleOf, {fx.ci(0, t)}, t, {Ints({16})});
    fx.ret();
  });
  BAD("multiple_of_positive", "'multiple_of' attribute 'values' is [0], expected positive values", {
    fx.simple();
    fx.v(Opcode::MultipleOf, {fx.ci(0, fx.i32)}, fx.i32, {Ints({0})});
    fx.ret();
  });
  BAD("max_contiguous_float", "'max_contiguous' operand has type <4 x f32>, expected integers or pointers", {
    fx.simple();
    TypeId t = fx.blk("4", fx.f32);
    fx.v(Opcode::MaxContiguous, {fx.cf(0, t)}, t, {Ints({4})});
    fx.ret();
  });
  BAD("max_contiguous_result", "'max_contiguous' result has type <4 x i64>, expected <4 x i32>", {
    fx.simple();
    fx.v(Opcode::MaxContiguous, {fx.arange(4)}, fx.blk("4", fx.i64), {Ints({4})});
    fx.ret();
  });
  BAD("inline_asm_empty", "'inline_asm' attribute 'asm' is empty", {
    fx.simple();
    fx.op(Opcode::InlineAsm, {}, {fx.i32}, {Str(""), Str("=r")});
    fx.ret();
  });
  BAD("inline_asm_pack", "'inline_asm' attribute 'pack' is 3, expected a power of two", {
    fx.simple();
    fx.op(Opcode::InlineAsm, {}, {fx.i32}, {Str("mov.b32 $0, 0;"), Str("=r"), none(), I(3)});
    fx.ret();
  });
  BAD("inline_asm_shapes", "'inline_asm' mixes the shapes of <4 x i32> and <8 x i32>", {
    fx.simple();
    fx.op(Opcode::InlineAsm, {fx.arange(4)}, {fx.blk("8", fx.i32)}, {Str("mov.b32 $0, $1;"), Str("=r,r")});
    fx.ret();
  });
  BAD("inline_asm_pointer_result", "'inline_asm' result 0 has type ptr<f32>, expected integers or floats", {
    fx.simple();
    fx.op(Opcode::InlineAsm, {}, {fx.ptr(fx.f32)}, {Str("mov.b64 $0, 0;"), Str("=l")});
    fx.ret();
  });
  BAD("inline_asm_pack_divides", "'inline_asm' attribute 'pack' is 4, which does not divide the 2 elements of <2 x i8>", {
    fx.simple();
    TypeId t = fx.blk("2", fx.i8);
    fx.op(Opcode::InlineAsm, {fx.ci(0, t)}, {t}, {Str("mov.b32 $0, $1;"), Str("=r,r"), none(), I(4)});
    fx.ret();
  });
}

}  // namespace

// Every op of the table verifies in at least one of the passing cases, so no Custom rule is
// missing a case and none rejects all uses.
void every_op_has_a_passing_use(void** state) {
  std::vector<bool> seen(kNumOpcodes, false);
  for (const Case& c : cases()) {
    if (!c.expect.empty()) continue;
    Fx fx;
    c.build(fx);
    if (!verify(*fx.m).is_ok()) continue;
    for (const auto& f : fx.m->functions)
      for (const BlockData& b : f->blocks)
        for (OpId o : b.ops) seen[static_cast<size_t>(f->ops[o].code)] = true;
  }
  std::string missing;
  for (uint32_t i = 0; i < kNumOpcodes; ++i)
    if (!seen[i]) missing += " " + op_info(static_cast<Opcode>(i)).name;
  if (!missing.empty()) fail_msg("ops with no passing use:%s", missing.c_str());
}

int main(void) {
  register_ok();
  register_function_rules();
  register_generic_rules();
  register_elementwise_rules();
  register_custom_rules();
  register_reduce_dot_rules();
  register_control_rules();
  register_misc_rules();
  std::vector<CMUnitTest> tests;
  for (Case& c : cases()) tests.push_back(CMUnitTest{c.name, run_case, nullptr, nullptr, &c});
  tests.push_back(CMUnitTest{"every_op_has_a_passing_use", every_op_has_a_passing_use, nullptr, nullptr, nullptr});
  return _cmocka_run_group_tests("verifier", tests.data(), tests.size(), nullptr, nullptr);
}
