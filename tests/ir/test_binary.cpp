// Tests of the binary IR format (src/ir/binary.cpp, docs/format.md): lossless round trips of
// Builder-made modules, and a reader that rejects every kind of bad input with the right code
// and never crashes (truncation at every offset, every byte flipped, payload bytes changed behind
// a recomputed checksum, crafted huge counts, deep nesting, bad indices and names).
//
// Golden files: tests/golden/binary/vN/NAME.trib must read and print exactly NAME.tri, for every
// released version N; for the current version, parsing NAME.tri and writing must give NAME.trib
// byte for byte, so the format cannot drift silently. With TRI_UPDATE_GOLDEN=1 the test first
// adds the current version's missing files: NAME.tri for each source below (examples, text
// goldens) and NAME.trib for each NAME.tri. It never rewrites an existing file: golden files of a
// released version stay as they are. TRI_UPDATE_GOLDEN=printer is for a change of the text
// printer (reprint_golden_files).
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/binary.h"
#include "ir/ir.h"
#include "ir/limits.h"
#include "ir/text.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;
namespace fs = std::filesystem;

namespace {

constexpr int kCurrentVersion = 2;
const char* const kGoldenDir = "tests/golden/binary";

// Text files whose canonical form becomes a golden file of the current version, as PREFIX + stem.
struct GoldenSource {
  const char* dir;
  const char* prefix;
};
const GoldenSource kGoldenSources[] = {
    {"examples", "example_"}, {"tests/golden/text", "text_"}, {"tests/golden/verify_ok", "verify_ok_"}};

constexpr size_t kHeader = 28;

// Rewrites the header's payload size and checksum so that only the payload's content is tested.
void reseal(std::string* b) {
  uint64_t size = b->size() - kHeader;
  uint64_t sum = XXH3_64bits(b->data() + kHeader, size);
  for (int i = 0; i < 8; ++i) {
    (*b)[12 + i] = static_cast<char>((size >> (8 * i)) & 0xff);
    (*b)[20 + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
  }
}

void put_u(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A file around a hand-made payload, with a valid header and checksum.
std::string file_of(const std::string& payload, uint16_t version = 1) {
  std::string b("\x89TRI\r\n\x1a\n", 8);
  b.push_back(static_cast<char>(version & 0xff));
  b.push_back(static_cast<char>(version >> 8));
  b.append(18, '\0');
  b += payload;
  reseal(&b);
  return b;
}

Status read(const std::string& b, std::unique_ptr<Module>* m) { return read_binary(b.data(), b.size(), "t.trib", m); }

void expect_error(const std::string& b, Code code, const char* needle) {
  std::unique_ptr<Module> m;
  Status st = read(b, &m);
  if (st.code() != code || st.message().find(needle) == std::string::npos)
    fail_msg("expected %s with '%s', got %s: %s", code_name(code), needle, code_name(st.code()), st.message().c_str());
  assert_null(m.get());
}

// ---- structural comparison: walks two modules in parallel, mapping values by position.

struct Compare {
  Compare(const Module& x, const Module& y) : a(x), b(y) {}
  const Module& a;
  const Module& b;
  const Function* fa = nullptr;
  const Function* fb = nullptr;
  std::vector<ValueId> map;  // a's value -> b's value
  std::string diff;

  bool check(bool ok, const std::string& what) {
    if (!ok && diff.empty()) diff = what;
    return ok;
  }
  static bool same_loc(Loc x, Loc y) { return x.line == y.line && x.col == y.col; }

  void define(ValueId va, ValueId vb, const std::string& where) {
    const ValueData& x = fa->values[va];
    const ValueData& y = fb->values[vb];
    check(x.type == y.type, where + ": value type");
    check(x.name == y.name, where + ": value name '" + x.name + "' vs '" + y.name + "'");
    map[va] = vb;
  }
  void use(ValueId va, ValueId vb, const std::string& where) {
    if (va == kNoValue || vb == kNoValue) {
      check(va == vb, where + ": value presence");
      return;
    }
    check(map[va] == vb, where + ": operand refers to another value");
  }

  void block(BlockId ba, BlockId bb, const std::string& where) {
    const BlockData& x = fa->blocks[ba];
    const BlockData& y = fb->blocks[bb];
    check(same_loc(x.loc, y.loc), where + ": block loc");
    if (!check(x.args.size() == y.args.size(), where + ": block arg count")) return;
    for (size_t i = 0; i < x.args.size(); ++i) define(x.args[i], y.args[i], where + " arg " + std::to_string(i));
    if (!check(x.ops.size() == y.ops.size(), where + ": op count")) return;
    for (size_t i = 0; i < x.ops.size(); ++i) op(x.ops[i], y.ops[i], where + "/op" + std::to_string(i));
  }

  void op(OpId oa, OpId ob, const std::string& where) {
    const OpData& x = fa->ops[oa];
    const OpData& y = fb->ops[ob];
    if (!check(x.code == y.code, where + ": opcode")) return;
    std::string w = where + "(" + op_info(x.code).name + ")";
    check(same_loc(x.loc, y.loc), w + ": loc");
    if (check(x.operands.size() == y.operands.size(), w + ": operand count"))
      for (size_t i = 0; i < x.operands.size(); ++i) use(x.operands[i], y.operands[i], w + " operand");
    if (check(x.results.size() == y.results.size(), w + ": result count"))
      for (size_t i = 0; i < x.results.size(); ++i) define(x.results[i], y.results[i], w + " result");
    check(x.attrs == y.attrs, w + ": attrs");
    if (check(x.regions.size() == y.regions.size(), w + ": region count"))
      for (size_t i = 0; i < x.regions.size(); ++i) block(x.regions[i], y.regions[i], w + "/region" + std::to_string(i));
  }

  std::string run() {
    check(a.symbols == b.symbols, "symbols");
    if (check(a.types.size() == b.types.size(), "type count"))
      for (TypeId t = 0; t < a.types.size(); ++t) check(a.type_str(t) == b.type_str(t), "type " + std::to_string(t));
    if (!check(a.functions.size() == b.functions.size(), "function count")) return diff;
    for (size_t i = 0; i < a.functions.size(); ++i) {
      fa = a.functions[i].get();
      fb = b.functions[i].get();
      std::string w = "@" + fa->name;
      check(fa->name == fb->name, w + ": name");
      check(fa->is_kernel == fb->is_kernel, w + ": kind");
      check(same_loc(fa->loc, fb->loc), w + ": loc");
      check(fa->results == fb->results, w + ": results");
      if (check(fa->constexprs.size() == fb->constexprs.size(), w + ": constexpr count"))
        for (size_t k = 0; k < fa->constexprs.size(); ++k) {
          const Constexpr& x = fa->constexprs[k];
          const Constexpr& y = fb->constexprs[k];
          check(x.name == y.name && x.type == y.type && x.default_value == y.default_value && same_loc(x.loc, y.loc),
                w + ": constexpr " + x.name);
        }
      map.assign(fa->values.size(), kNoValue);
      block(fa->body, fb->body, w);
      if (check(fa->params.size() == fb->params.size(), w + ": param count"))
        for (size_t k = 0; k < fa->params.size(); ++k) {
          const Param& x = fa->params[k];
          const Param& y = fb->params[k];
          check(x.name == y.name && x.type == y.type && x.align == y.align && x.divisible == y.divisible &&
                    x.noalias == y.noalias && same_loc(x.loc, y.loc),
                w + ": param " + x.name);
          use(x.value, y.value, w + ": param value");
        }
    }
    return diff;
  }
};

std::string compare(const Module& a, const Module& b) { return Compare(a, b).run(); }

// The back-links of a module the reader made must agree with its tables.
void check_links(const Module& m) {
  for (const auto& f : m.functions) {
    assert_true(f->body < f->blocks.size());
    assert_int_equal(f->blocks[f->body].parent_op, kNoOp);
    for (BlockId b = 0; b < f->blocks.size(); ++b) {
      const BlockData& bd = f->blocks[b];
      for (uint32_t i = 0; i < bd.args.size(); ++i) {
        const ValueData& v = f->values[bd.args[i]];
        assert_int_equal(v.def_block, b);
        assert_int_equal(v.def_op, kNoOp);
        assert_int_equal(v.index, i);
      }
      for (OpId o : bd.ops) assert_int_equal(f->ops[o].parent, b);
    }
    for (OpId o = 0; o < f->ops.size(); ++o) {
      const OpData& d = f->ops[o];
      assert_int_equal(d.attrs.size(), op_info(d.code).attrs.size());
      for (uint32_t i = 0; i < d.results.size(); ++i) {
        const ValueData& v = f->values[d.results[i]];
        assert_int_equal(v.def_op, o);
        assert_int_equal(v.index, i);
      }
      for (BlockId r : d.regions) assert_int_equal(f->blocks[r].parent_op, o);
    }
  }
}

// ---- a module that uses every part of the IR

struct Locs {
  uint32_t n = 1;
  Loc next() { Loc l{n, n % 7 + 1}; ++n; return l; }
};

std::unique_ptr<Module> make_full_module() {
  auto m = std::make_unique<Module>();
  Locs L;
  TypeTable& T = m->types;
  SymId block_sym = m->intern("BLOCK");
  m->intern("UNUSED");  // symbols round-trip even when no type uses them
  SymId bm = m->intern("BM");
  TypeId i1 = T.scalar(Scalar::I1), i32 = T.scalar(Scalar::I32), f32 = T.scalar(Scalar::F32);
  TypeId pf32 = T.ptr(f32);
  TypeId bf = T.block({Dim::name(block_sym)}, f32);
  TypeId bi = T.block({Dim::name(block_sym)}, i32);
  TypeId bb = T.block({Dim::name(block_sym)}, i1);
  TypeId bp = T.block({Dim::name(block_sym)}, pf32);
  T.block({Dim::name(bm), Dim::lit(16), Dim::lit(2), Dim::lit(1)}, T.scalar(Scalar::F8E5M2));  // unused, rank 4
  T.ptr(T.scalar(Scalar::BF16));

  // func @dev(%a: <BLOCK x f32>) -> (<BLOCK x f32>)
  {
    auto f = std::make_unique<Function>();
    f->name = "dev";
    f->is_kernel = false;
    f->loc = L.next();
    f->results = {bf};
    Builder b(m.get(), f.get());
    f->body = b.create_block({bf});
    f->blocks[f->body].loc = L.next();
    f->values[f->blocks[f->body].args[0]].name = "a";
    f->params.push_back(Param{"a", bf, 0, 0, false, f->blocks[f->body].args[0], L.next()});
    b.set_insertion_block(f->body);
    ValueId neg = b.create1(Opcode::Neg, {f->blocks[f->body].args[0]}, bf, {}, L.next());
    b.create(Opcode::Return, {neg}, {}, {}, L.next());
    m->functions.push_back(std::move(f));
  }

  auto f = std::make_unique<Function>();
  Function* F = f.get();
  f->name = "k.all_of_it";
  f->is_kernel = true;
  f->loc = L.next();
  Attr d_block = Attr::of_int(1024), d_scale = Attr::of_float(0.5), d_flag = Attr::of_bool(true);
  f->constexprs = {Constexpr{"BLOCK", Scalar::I32, d_block, L.next()},
                   Constexpr{"SCALE", Scalar::F32, d_scale, L.next()},
                   Constexpr{"FLAG", Scalar::I1, d_flag, L.next()},
                   Constexpr{"BM", Scalar::I64, Attr::none(), L.next()}};
  Builder b(m.get(), F);
  f->body = b.create_block({pf32, i32, pf32});
  b.set_insertion_block(f->body);
  const char* pnames[] = {"x", "n", "out"};
  for (int i = 0; i < 3; ++i) {
    ValueId v = f->blocks[f->body].args[i];
    f->values[v].name = pnames[i];
    f->params.push_back(Param{pnames[i], f->values[v].type, i == 0 ? 16u : 0u, i == 1 ? 8u : 0u, i != 1, v, L.next()});
  }
  ValueId x = f->blocks[f->body].args[0], n = f->blocks[f->body].args[1], out = f->blocks[f->body].args[2];
  auto name = [&](ValueId v, const char* s) { F->values[v].name = s; return v; };

  ValueId pid = name(b.create1(Opcode::ProgramId, {}, i32, {Attr::of_int(0)}, L.next()), "pid");
  name(b.create1(Opcode::Const, {}, i32, {Attr::of_sym("BLOCK")}, L.next()), "bs");
  ValueId cf = name(b.create1(Opcode::Const, {}, f32, {Attr::of_float(-2.5e-300)}, L.next()), "cf");
  name(b.create1(Opcode::Const, {}, f32, {Attr::of_float(std::numeric_limits<double>::quiet_NaN())}, L.next()), "nan");
  ValueId ct = name(b.create1(Opcode::Const, {}, i1, {Attr::of_bool(true)}, L.next()), "t");
  ValueId cmin = name(b.create1(Opcode::Const, {}, i32, {Attr::of_int(INT64_MIN)}, L.next()), "");  // unnamed
  ValueId r = name(b.create1(Opcode::Arange, {}, bi, {Attr::of_int(0), Attr::of_sym("BLOCK")}, L.next()), "r");
  ValueId xs = name(b.create1(Opcode::Splat, {x}, bp, {}, L.next()), "xs");
  ValueId xp = name(b.create1(Opcode::AddPtr, {xs, r}, bp, {}, L.next()), "xp");
  ValueId nv = name(b.create1(Opcode::Splat, {n}, bi, {}, L.next()), "nv");
  ValueId mask = name(b.create1(Opcode::Cmp, {r, nv}, bb, {Attr::of_enum(2)}, L.next()), "mask");
  // load with no optional operand, with mask only, with mask and other; enum/bool attrs set
  name(b.create1(Opcode::Load, {xp, kNoValue, kNoValue}, bf, {}, L.next()), "v0");
  ValueId v1 = name(b.create1(Opcode::Load, {xp, mask, kNoValue}, bf,
                              {Attr::of_enum(2), Attr::none(), Attr::of_bool(true)}, L.next()), "v1");
  ValueId zero = name(b.create1(Opcode::Const, {}, bf, {Attr::of_float(0.0)}, L.next()), "zero");
  ValueId v2 = name(b.create1(Opcode::Load, {xp, mask, zero}, bf, {Attr::none(), Attr::of_enum(1)}, L.next()), "v2");
  name(b.create1(Opcode::Permute, {v2}, bf, {Attr::of_ints({0, -1, INT64_MAX, INT64_MIN})}, L.next()), "perm");
  name(b.create1(Opcode::MathCall, {v1, v2}, bf, {Attr::of_str("atan2")}, L.next()), "mc");
  name(b.create1(Opcode::MaxContiguous, {v2}, bf, {Attr::of_ints({})}, L.next()), "mcont");

  // for %c0, %n, %c1, %v1 { ^(%iv: i32, %acc: <BLOCK x f32>): ... yield } : <BLOCK x f32>
  ValueId c0 = name(b.create1(Opcode::Const, {}, i32, {Attr::of_int(0)}, L.next()), "c0");
  ValueId c1 = name(b.create1(Opcode::Const, {}, i32, {Attr::of_int(1)}, L.next()), "c1");
  OpId forop = b.create(Opcode::For, {c0, n, c1, v1}, {bf}, {}, L.next());
  name(F->ops[forop].results[0], "acc_out");
  BlockId fb = b.add_region(forop, {i32, bf});
  F->blocks[fb].loc = L.next();
  name(F->blocks[fb].args[0], "iv");
  ValueId acc = name(F->blocks[fb].args[1], "acc");
  b.set_insertion_block(fb);
  ValueId sum = name(b.create1(Opcode::Add, {acc, v2}, bf, {}, L.next()), "sum");
  // if %t { yield %sum } { yield %acc } : <BLOCK x f32>, nested in the loop
  OpId ifop = b.create(Opcode::If, {ct}, {bf}, {}, L.next());
  name(F->ops[ifop].results[0], "sel");
  BlockId then_b = b.add_region(ifop, {});
  b.set_insertion_block(then_b);
  b.create(Opcode::Yield, {sum}, {}, {}, L.next());
  BlockId else_b = b.add_region(ifop, {});
  b.set_insertion_block(else_b);
  b.create(Opcode::Yield, {acc}, {}, {}, L.next());
  b.set_insertion_block(fb);
  b.create(Opcode::Yield, {F->ops[ifop].results[0]}, {}, {}, L.next());
  b.set_insertion_block(F->body);

  // while %pid { ^(%w: i32): condition %t, %w } { ^(%w2: i32): yield %w2 } : i32
  OpId wh = b.create(Opcode::While, {pid}, {i32}, {}, L.next());
  name(F->ops[wh].results[0], "wres");
  BlockId w1 = b.add_region(wh, {i32});
  name(F->blocks[w1].args[0], "w");
  b.set_insertion_block(w1);
  b.create(Opcode::Condition, {ct, F->blocks[w1].args[0]}, {}, {}, L.next());
  BlockId w2 = b.add_region(wh, {i32});
  name(F->blocks[w2].args[0], "w2");
  b.set_insertion_block(w2);
  b.create(Opcode::Yield, {F->blocks[w2].args[0]}, {}, {}, L.next());
  b.set_insertion_block(F->body);

  // reduce over a tuple with a combine region; reduce with a builtin kind
  OpId red = b.create(Opcode::Reduce, {v1, r}, {f32, i32}, {Attr::of_int(0)}, L.next());
  name(F->ops[red].results[0], "rv");
  name(F->ops[red].results[1], "ri");
  BlockId rb = b.add_region(red, {f32, i32, f32, i32});
  const char* rn[] = {"a", "ai", "b", "bi"};
  for (int i = 0; i < 4; ++i) name(F->blocks[rb].args[i], rn[i]);
  b.set_insertion_block(rb);
  ValueId gt = name(b.create1(Opcode::FCmp, {F->blocks[rb].args[0], F->blocks[rb].args[2]}, i1,
                              {Attr::of_enum(4)}, L.next()), "gt");
  ValueId s1 = name(b.create1(Opcode::Select, {gt, F->blocks[rb].args[0], F->blocks[rb].args[2]}, f32, {}, L.next()), "s1");
  ValueId s2 = name(b.create1(Opcode::Select, {gt, F->blocks[rb].args[1], F->blocks[rb].args[3]}, i32, {}, L.next()), "s2");
  b.create(Opcode::Yield, {s1, s2}, {}, {}, L.next());
  b.set_insertion_block(F->body);
  name(b.create1(Opcode::Reduce, {v2}, f32, {Attr::of_int(0), Attr::of_enum(0)}, L.next()), "total");
  name(b.create1(Opcode::Scan, {v2}, bf, {Attr::of_sym("BM"), Attr::of_enum(1), Attr::of_bool(true)}, L.next()), "scan");

  ValueId called = name(b.create1(Opcode::Call, {v2}, bf, {Attr::of_func("dev")}, L.next()), "called");
  b.create(Opcode::Print, {v1, called, mask}, {}, {Attr::of_str("x: \"q\"\n\t\x01")}, L.next());
  b.create(Opcode::Print, {kNoValue}, {}, {}, L.next());
  b.create(Opcode::Assert, {ct, kNoValue}, {}, {Attr::of_str("")}, L.next());
  OpId asmop = b.create(Opcode::InlineAsm, {cf, cmin}, {f32, i32},
                        {Attr::of_str("mov.b32 $0, $1;"), Attr::of_str("=r,r"), Attr::of_bool(false), Attr::of_int(4)},
                        L.next());
  name(F->ops[asmop].results[0], "asm0");
  ValueId os = name(b.create1(Opcode::Splat, {out}, bp, {}, L.next()), "os");
  ValueId op = name(b.create1(Opcode::AddPtr, {os, r}, bp, {}, L.next()), "op");
  b.create(Opcode::Store, {op, F->ops[forop].results[0], mask}, {}, {Attr::of_enum(4), Attr::of_enum(0)}, L.next());
  b.create(Opcode::DebugBarrier, {}, {}, {}, L.next());
  b.create(Opcode::Return, {}, {}, {}, L.next());
  F->blocks[F->body].loc = L.next();
  m->functions.push_back(std::move(f));
  return m;
}

// A kernel of `depth` nested ifs.
std::unique_ptr<Module> make_nested(int depth) {
  auto m = std::make_unique<Module>();
  auto f = std::make_unique<Function>();
  f->name = "deep";
  Builder b(m.get(), f.get());
  f->body = b.create_block({});
  b.set_insertion_block(f->body);
  ValueId t = b.create1(Opcode::Const, {}, m->types.scalar(Scalar::I1), {Attr::of_bool(true)});
  for (int i = 0; i < depth; ++i) {
    OpId o = b.create(Opcode::If, {t}, {});
    BlockId r = b.add_region(o, {});
    b.set_insertion_block(r);
  }
  for (int i = depth; i >= 0; --i) {
    b.create(i == 0 ? Opcode::Return : Opcode::Yield, {}, {});
    if (i > 0) b.set_insertion_block(f->ops[f->blocks[b.insertion_block()].parent_op].parent);
  }
  m->functions.push_back(std::move(f));
  return m;
}

// ---- tests

void full_module_round_trips(void** state) {
  auto m = make_full_module();
  // A module without a source name reads back with the name given to the reader ...
  {
    std::string unnamed = write_binary(*m);
    std::unique_ptr<Module> back;
    Status st = read(unnamed, &back);
    if (!st) fail_msg("%s", st.message().c_str());
    assert_string_equal(back->source_name.c_str(), "t.trib");
  }
  // ... and one read from text keeps the text's name, which its locations refer to.
  m->source_name = "made.tri";
  std::string bytes = write_binary(*m);
  assert_true(is_binary(bytes.data(), bytes.size()));
  std::unique_ptr<Module> back;
  Status st = read(bytes, &back);
  if (!st) fail_msg("%s", st.message().c_str());
  assert_string_equal(back->source_name.c_str(), "made.tri");
  std::string d = compare(*m, *back);
  if (!d.empty()) fail_msg("round trip differs: %s", d.c_str());
  check_links(*back);
  // Built in definition order, so even the ids agree, and writing again gives the same bytes.
  for (size_t i = 0; i < m->functions.size(); ++i) {
    assert_int_equal(m->functions[i]->values.size(), back->functions[i]->values.size());
    assert_int_equal(m->functions[i]->ops.size(), back->functions[i]->ops.size());
    assert_int_equal(m->functions[i]->blocks.size(), back->functions[i]->blocks.size());
  }
  assert_true(write_binary(*back) == bytes);
}

void every_attr_kind_is_covered(void** state) {
  // Guards the test module above: if Attr grows a kind, it must be added there.
  auto m = make_full_module();
  std::set<int> kinds;
  for (const auto& f : m->functions) {
    for (const OpData& d : f->ops)
      for (const Attr& a : d.attrs) kinds.insert(static_cast<int>(a.kind));
    for (const Constexpr& c : f->constexprs) kinds.insert(static_cast<int>(c.default_value.kind));
  }
  assert_int_equal(kinds.size(), static_cast<int>(Attr::Kind::Sym) + 1);
}

void out_of_order_ids_are_renumbered(void** state) {
  // Regions added before their contents and an op left unlinked by a "pass": the file holds the
  // reachable IR in definition order, and it reads back equal up to numbering.
  auto m = std::make_unique<Module>();
  auto f = std::make_unique<Function>();
  Function* F = f.get();
  f->name = "k";
  Builder b(m.get(), F);
  TypeId i32 = m->types.scalar(Scalar::I32), i1 = m->types.scalar(Scalar::I1);
  f->body = b.create_block({i32});
  F->values[0].name = "p";
  f->params.push_back(Param{"p", i32, 0, 4, false, 0, {}});
  b.set_insertion_block(f->body);
  ValueId dead = b.create1(Opcode::Const, {}, i32, {Attr::of_int(7)});
  F->values[dead].name = "dead";
  ValueId t = b.create1(Opcode::Const, {}, i1, {Attr::of_bool(false)});
  F->values[t].name = "t";
  OpId ifop = b.create(Opcode::If, {t}, {i32});
  F->values[F->ops[ifop].results[0]].name = "r";
  BlockId then_b = b.add_region(ifop, {});
  BlockId else_b = b.add_region(ifop, {});
  b.set_insertion_block(else_b);
  ValueId e = b.create1(Opcode::Add, {0, 0}, i32);
  F->values[e].name = "e";
  b.create(Opcode::Yield, {e}, {});
  b.set_insertion_block(then_b);
  b.create(Opcode::Yield, {0}, {});
  b.set_insertion_block(f->body);
  b.create(Opcode::Return, {}, {});
  // unlink the dead const
  auto& ops = F->blocks[f->body].ops;
  ops.erase(ops.begin());
  m->functions.push_back(std::move(f));

  std::string bytes = write_binary(*m);
  std::unique_ptr<Module> back;
  assert_true(read(bytes, &back).is_ok());
  std::string d = compare(*m, *back);
  if (!d.empty()) fail_msg("round trip differs: %s", d.c_str());
  check_links(*back);
  const Function& g = *back->functions[0];
  assert_int_equal(g.ops.size(), F->ops.size() - 1);
  // definition order: then-block (1) before else-block (2), and the if's result after both
  assert_int_equal(g.ops[g.blocks[1].ops[0]].code, Opcode::Yield);
  assert_int_equal(g.blocks[2].parent_op, g.blocks[1].parent_op);
  assert_string_equal(g.values[g.values.size() - 2].name.c_str(), "e");
  assert_string_equal(g.values.back().name.c_str(), "r");
}

void deep_nesting_is_limited(void** state) {
  std::unique_ptr<Module> back;
  std::string ok = write_binary(*make_nested(kMaxNesting));
  Status st = read(ok, &back);
  if (!st) fail_msg("%s", st.message().c_str());
  check_links(*back);
  expect_error(write_binary(*make_nested(kMaxNesting + 1)), Code::LimitExceeded, "kMaxNesting");
  // Far deeper than the limit: the reader stops at the limit (it never recurses past it).
  expect_error(write_binary(*make_nested(1000)), Code::LimitExceeded, "nested deeper than 64");
}

void truncation_at_every_offset_fails(void** state) {
  std::string bytes = write_binary(*make_full_module());
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::unique_ptr<Module> m;
    Status st = read_binary(bytes.data(), len, "t.trib", &m);
    if (st.is_ok()) fail_msg("a file cut at %zu of %zu bytes was accepted", len, bytes.size());
    assert_true(st.code() == Code::CorruptBinary);
  }
  std::unique_ptr<Module> m;
  assert_int_equal(read_binary(nullptr, 0, "t", &m).code(), Code::CorruptBinary);
}

void flipping_any_byte_fails(void** state) {
  std::string bytes = write_binary(*make_full_module());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int mask : {0x01, 0x80, 0xff}) {
      std::string b = bytes;
      b[i] = static_cast<char>(b[i] ^ mask);
      std::unique_ptr<Module> m;
      Status st = read(b, &m);
      if (st.is_ok()) fail_msg("byte %zu ^ 0x%x was accepted", i, mask);
      if (i >= kHeader && st.message().find("checksum mismatch") == std::string::npos)
        fail_msg("payload byte %zu: %s", i, st.message().c_str());
    }
  }
}

// Changes payload bytes and recomputes the checksum, so the payload parser itself is what runs:
// it may accept (then the module must write and read back the same) or reject, never crash.
void changed_payload_never_crashes(void** state) {
  std::string bytes = write_binary(*make_full_module());
  int accepted = 0, rejected = 0;
  for (size_t i = kHeader; i < bytes.size(); ++i) {
    for (int v : {0x00, 0x01, 0x02, 0x7f, 0x80, 0xff}) {
      std::string b = bytes;
      if (static_cast<uint8_t>(b[i]) == v) continue;
      b[i] = static_cast<char>(v);
      reseal(&b);
      std::unique_ptr<Module> m;
      Status st = read(b, &m);
      if (!st) {
        ++rejected;
        assert_true(st.code() == Code::CorruptBinary || st.code() == Code::LimitExceeded);
        assert_true(st.message().rfind("t.trib: error: ", 0) == 0);
        continue;
      }
      ++accepted;
      check_links(*m);
      std::string again = write_binary(*m);
      std::unique_ptr<Module> m2;
      assert_true(read(again, &m2).is_ok());
      std::string d = compare(*m, *m2);
      if (!d.empty()) fail_msg("byte %zu = 0x%x: rewrite differs: %s", i, v, d.c_str());
      assert_true(write_binary(*m2) == again);
    }
  }
  // Both outcomes happen (a location or a name byte can change harmlessly).
  assert_true(accepted > 0);
  assert_true(rejected > 0);
}

void header_errors(void** state) {
  std::string bytes = write_binary(*make_full_module());
  std::string b = bytes;
  b[1] = 'X';
  expect_error(b, Code::CorruptBinary, "corrupt binary at byte 0: not a Tri binary module (bad magic)");
  expect_error("kernel @k() {\n  return\n}\n", Code::CorruptBinary, "bad magic");
  assert_false(is_binary("kernel", 6));
  assert_false(is_binary(bytes.data(), 7));

  b = bytes;
  b[8] = 7;  // version 7: refused before anything else is looked at, checksum included
  expect_error(b, Code::UnsupportedVersion,
               "t.trib: error: format version 7 is newer than this library reads (2); upgrade Tri");
  b = bytes;
  b[9] = 1;
  expect_error(b, Code::UnsupportedVersion, "format version 258 is newer");
  b = bytes;
  b[8] = 0;
  expect_error(b, Code::CorruptBinary, "format version 0 does not exist");
  b = bytes;
  b[10] = 4;
  expect_error(b, Code::CorruptBinary, "at byte 10: unknown flags 0x4");
  b = bytes + "x";
  expect_error(b, Code::CorruptBinary, "1 bytes after the end of the payload");
  b = bytes;
  b[25] ^= 1;
  expect_error(b, Code::CorruptBinary, "at byte 20: checksum mismatch");
  expect_error(bytes.substr(0, 20), Code::CorruptBinary, "truncated header: 20 bytes, the header takes 28");
  expect_error(bytes.substr(0, bytes.size() - 3), Code::CorruptBinary, "are present");
}

// Payload pieces for hand-made files: strings, symbols, types, functions.
std::string payload_with_function_body(const std::string& body_ops) {
  std::string p;
  put_u(&p, 2);                  // strings
  put_u(&p, 1); p += "k";
  put_u(&p, 6); p += "return";
  put_u(&p, 0);                  // symbols
  put_u(&p, kNumScalars);        // types: the scalars, as the writer writes them
  for (int i = 0; i < kNumScalars; ++i) {
    put_u(&p, 0);
    put_u(&p, i);
  }
  put_u(&p, 1);                  // functions
  put_u(&p, 0);                  // name "k"
  put_u(&p, 1);                  // kernel
  put_u(&p, 1); put_u(&p, 1);    // loc
  put_u(&p, 0);                  // results
  put_u(&p, 0);                  // constexprs
  put_u(&p, 0);                  // params
  put_u(&p, 0); put_u(&p, 0);    // body loc
  p += body_ops;
  return p;
}

std::string return_op() {
  std::string p;
  put_u(&p, 1);                 // "return"
  put_u(&p, 2); put_u(&p, 3);   // loc
  put_u(&p, 0);                 // operands
  put_u(&p, 0);                 // attrs
  put_u(&p, 0);                 // regions
  put_u(&p, 0);                 // results
  return p;
}

// The same kernel in version 2: the source name is the first string, and its index follows the
// string table.
std::string payload_v2_smallest(const std::string& source) {
  std::string p;
  put_u(&p, 3);                  // strings
  put_u(&p, source.size()); p += source;
  put_u(&p, 1); p += "k";
  put_u(&p, 6); p += "return";
  put_u(&p, 0);                  // the source: string 0
  put_u(&p, 0);                  // symbols
  put_u(&p, kNumScalars);
  for (int i = 0; i < kNumScalars; ++i) {
    put_u(&p, 0);
    put_u(&p, i);
  }
  put_u(&p, 1);                  // functions
  put_u(&p, 1);                  // name "k"
  put_u(&p, 1);                  // kernel
  put_u(&p, 1); put_u(&p, 1);    // loc
  put_u(&p, 0);                  // results
  put_u(&p, 0);                  // constexprs
  put_u(&p, 0);                  // params
  put_u(&p, 0); put_u(&p, 0);    // body loc
  put_u(&p, 1);                  // ops
  put_u(&p, 2);                  // "return"
  put_u(&p, 2); put_u(&p, 3);    // loc
  put_u(&p, 0); put_u(&p, 0); put_u(&p, 0); put_u(&p, 0);
  return p;
}

void hand_made_files(void** state) {
  // The smallest kernel in version 1, which the reader still reads (its source name is the
  // reader's), and which the writer writes as version 2.
  std::string body;
  put_u(&body, 1);
  body += return_op();
  std::string v1 = file_of(payload_with_function_body(body), 1);
  std::unique_ptr<Module> m;
  Status st = read(v1, &m);
  if (!st) fail_msg("%s", st.message().c_str());
  assert_int_equal(m->functions[0]->ops.size(), 1);
  assert_int_equal(m->functions[0]->ops[0].loc.line, 2);
  assert_string_equal(m->source_name.c_str(), "t.trib");
  assert_true(write_binary(*m) == file_of(payload_v2_smallest("t.trib"), 2));
  // Version 2 by hand: the stored name becomes the module's, for its diagnostics.
  std::string v2 = file_of(payload_v2_smallest("kernels/small.tri"), 2);
  st = read(v2, &m);
  if (!st) fail_msg("%s", st.message().c_str());
  assert_string_equal(m->source_name.c_str(), "kernels/small.tri");
  assert_true(write_binary(*m) == v2);
  // An empty stored name means none: the reader's name is used.
  st = read(file_of(payload_v2_smallest(""), 2), &m);
  if (!st) fail_msg("%s", st.message().c_str());
  assert_string_equal(m->source_name.c_str(), "t.trib");
  // A source index past the string table is corrupt, and named as such.
  std::string bad = payload_v2_smallest("x.tri");
  bad[1 + 1 + 5 + 1 + 1 + 1 + 6] = 9;  // the source field: string 9 of 3
  expect_error(file_of(bad, 2), Code::CorruptBinary, "corrupt binary at byte");
}

// The smallest records sit at the end of a file with nothing after them, so a count check that
// asked for more bytes per record than they take would refuse a valid file.
void smallest_records_pass_the_count_checks(void** state) {
  // functions: 3 empty ones and nothing else; ops: 5 debug_barriers ending the file
  for (int ops : {0, 5}) {
    auto m = std::make_unique<Module>();
    for (int i = 0; i < (ops ? 1 : 3); ++i) {
      auto f = std::make_unique<Function>();
      f->name = "f" + std::to_string(i);
      Builder b(m.get(), f.get());
      f->body = b.create_block({});  // an empty body parses (it does not verify)
      b.set_insertion_block(f->body);
      for (int k = 0; k < ops; ++k) b.create(Opcode::DebugBarrier, {}, {});
      m->functions.push_back(std::move(f));
    }
    std::string bytes = write_binary(*m);
    std::unique_ptr<Module> back;
    Status st = read(bytes, &back);
    if (!st) fail_msg("%s", st.message().c_str());
    std::string d = compare(*m, *back);
    if (!d.empty()) fail_msg("round trip differs: %s", d.c_str());
  }
}

void huge_counts_fail_fast(void** state) {
  // Each count is a lie behind a valid checksum: the count check itself must refuse it, before
  // anything is allocated.
  std::string p;
  put_u(&p, uint64_t(1) << 60);
  expect_error(file_of(p), Code::CorruptBinary,
               "corrupt binary at byte 28: string count 1152921504606846976 exceeds the 0 strings left in the input");

  std::string body;
  put_u(&body, 0xffffffffu);
  std::string f = file_of(payload_with_function_body(body));
  size_t at = f.size() - 5;
  expect_error(f, Code::CorruptBinary,
               ("t.trib: error: corrupt binary at byte " + std::to_string(at) +
                ": op count 4294967295 exceeds the 0 ops left in the input").c_str());

  body.clear();
  put_u(&body, 1);
  std::string op;
  put_u(&op, 1);
  put_u(&op, 2); put_u(&op, 3);
  put_u(&op, UINT64_MAX);  // operands
  body += op;
  expect_error(file_of(payload_with_function_body(body)), Code::CorruptBinary,
               "operand count 18446744073709551615 exceeds");

  // A string longer than the input, and one longer than kMaxStringBytes that is really there.
  p.clear();
  put_u(&p, 1);
  put_u(&p, 100);
  expect_error(file_of(p), Code::CorruptBinary, "string of 100 bytes runs past the end (0 left)");
  p.clear();
  put_u(&p, 1);
  put_u(&p, kMaxStringBytes + 1);
  p.append(kMaxStringBytes + 1, 'a');
  expect_error(file_of(p), Code::LimitExceeded, "kMaxStringBytes");

  // More functions than kMaxFunctions, with enough bytes behind the count to pass the room check.
  p.clear();
  put_u(&p, 0);
  put_u(&p, 0);
  put_u(&p, 0);
  put_u(&p, kMaxFunctions + 1);
  p.append((kMaxFunctions + 1) * 10, '\0');
  expect_error(file_of(p), Code::LimitExceeded, "65537 functions exceed the limit of 65536 (kMaxFunctions)");

  // More types than kMaxTypes, with room for them.
  p.clear();
  put_u(&p, 0);
  put_u(&p, 0);
  put_u(&p, kMaxTypes + 1);
  p.append((kMaxTypes + 1) * 2, '\0');
  expect_error(file_of(p), Code::LimitExceeded, "1048577 types exceed the limit of 1048576 (kMaxTypes)");

  // A dimension past kMaxDim.
  {
    auto m = std::make_unique<Module>();
    m->types.block({Dim::lit(kMaxDim + 1)}, m->types.scalar(Scalar::F32));
    expect_error(write_binary(*m), Code::LimitExceeded, "dimension 1048577 at byte");
  }

  // More types than there is room for.
  p.clear();
  put_u(&p, 0);
  put_u(&p, 0);
  put_u(&p, 1000);
  p.append(10, '\0');
  expect_error(file_of(p), Code::CorruptBinary, "type count 1000 exceeds the 5 types left");
}

void bad_indices_and_names(void** state) {
  // A forward reference (not valid IR; the writer still writes it, and the reader refuses it).
  {
    auto m = std::make_unique<Module>();
    auto f = std::make_unique<Function>();
    f->name = "k";
    Builder b(m.get(), f.get());
    TypeId i32 = m->types.scalar(Scalar::I32);
    f->body = b.create_block({});
    b.set_insertion_block(f->body);
    OpId add = b.create(Opcode::Add, {0, 0}, {i32});
    ValueId later = b.create1(Opcode::Const, {}, i32, {Attr::of_int(1)});
    f->ops[add].operands = {later, later};
    b.create(Opcode::Return, {}, {});
    m->functions.push_back(std::move(f));
    expect_error(write_binary(*m), Code::CorruptBinary, "value 1 is used before it is defined (0 values so far)");
  }
  auto mutate = [](const std::function<void(Module*)>& fn) {
    auto m = make_full_module();
    fn(m.get());
    return write_binary(*m);
  };
  auto first = [](Module* m, Opcode code) -> OpData& {
    Function& f = *m->functions[1];
    for (OpData& d : f.ops)
      if (d.code == code) return d;
    std::abort();
  };
  expect_error(mutate([&](Module* m) { first(m, Opcode::Add).operands.pop_back(); }), Code::CorruptBinary,
               "'add' has 1 operand entries, its slots need 2");
  expect_error(mutate([&](Module* m) { first(m, Opcode::Load).operands[0] = kNoValue; }), Code::CorruptBinary,
               "a required operand is absent");
  expect_error(mutate([&](Module* m) { first(m, Opcode::Load).operands.pop_back(); }), Code::CorruptBinary,
               "'load' has 2 operand entries, its slots need 3");
  expect_error(mutate([&](Module* m) { first(m, Opcode::For).operands.resize(2); }), Code::CorruptBinary,
               "its slots need at least 3");
  expect_error(mutate([&](Module* m) { first(m, Opcode::MathCall).operands.clear(); }), Code::CorruptBinary,
               "'math_call' has 0 operand entries, its slots need at least 1");
  expect_error(mutate([&](Module* m) { first(m, Opcode::ProgramId).attrs[0] = Attr::none(); }), Code::CorruptBinary,
               "'program_id' lacks its attribute 'axis'");
  // %sum is defined in the loop's region; the store after the loop cannot use it.
  expect_error(mutate([&](Module* m) { first(m, Opcode::Store).operands[1] = first(m, Opcode::Add).results[0]; }),
               Code::CorruptBinary, "is used outside the region that defines it");
  // A region cannot use the results of the op that owns it.
  expect_error(mutate([&](Module* m) { first(m, Opcode::Add).operands[1] = first(m, Opcode::For).results[0]; }),
               Code::CorruptBinary, "is used before it is defined");
  expect_error(mutate([&](Module* m) { m->functions[1]->values[5].name = "x"; }), Code::CorruptBinary,
               "value '%x' is defined twice in '@k.all_of_it'");
  expect_error(mutate([&](Module* m) { m->functions[0]->name = "k.all_of_it"; }), Code::CorruptBinary,
               "function '@k.all_of_it' appears twice");
  expect_error(mutate([&](Module* m) { m->functions[1]->results.push_back(0); }), Code::CorruptBinary,
               "kernel '@k.all_of_it' has results");
  expect_error(mutate([&](Module* m) { m->functions[0]->constexprs.push_back(Constexpr{"C", Scalar::I32, {}, {}}); }),
               Code::CorruptBinary, "device function '@dev' has constexprs");
  expect_error(mutate([&](Module* m) { m->functions[1]->constexprs[1].name = "BLOCK"; }), Code::CorruptBinary,
               "constexpr 'BLOCK' appears twice");
  expect_error(mutate([&](Module* m) { m->functions[1]->constexprs[0].default_value = Attr::of_float(1); }),
               Code::CorruptBinary, "the default of constexpr 'BLOCK' (i32) is not an int");
  expect_error(mutate([&](Module* m) { m->symbols[1] = "f32"; }), Code::CorruptBinary, "symbol 'f32' is a type's name");
  expect_error(mutate([&](Module* m) { m->functions[1]->constexprs[3].name = "inf"; }), Code::CorruptBinary,
               "'inf' cannot name a constexpr (it is a literal or a type)");
  expect_error(mutate([&](Module* m) { first(m, Opcode::Const).attrs[0] = Attr::of_sym("nan"); }), Code::CorruptBinary,
               "'nan' cannot name a constexpr");
  expect_error(mutate([&](Module* m) { first(m, Opcode::ProgramId).attrs[0] = Attr::of_str("0"); }),
               Code::CorruptBinary, "a string value for attribute 'axis' of 'program_id'");
  expect_error(mutate([&](Module* m) { first(m, Opcode::Cmp).attrs[0] = Attr::of_int(2); }), Code::CorruptBinary,
               "an int value for attribute 'pred' of 'cmp'");
  expect_error(mutate([&](Module* m) { first(m, Opcode::Cmp).attrs[0] = Attr::of_enum(99); }), Code::CorruptBinary,
               "'' is not a value of attribute 'pred' of 'cmp'");
  expect_error(mutate([&](Module* m) { first(m, Opcode::Load).attrs[2] = Attr::of_float(1); }), Code::CorruptBinary,
               "a float value for attribute 'volatile'");
  expect_error(mutate([&](Module* m) { first(m, Opcode::Call).attrs[0] = Attr::of_func("no good"); }),
               Code::CorruptBinary, "function 'no good' is not a NAME");
  expect_error(mutate([&](Module* m) { m->functions[1]->values[0].name = "x y"; }), Code::CorruptBinary,
               "value name 'x y' has a character outside");
  expect_error(mutate([&](Module* m) { m->symbols[1] = "BLOCK"; }), Code::CorruptBinary,
               "symbol 'BLOCK' appears twice");
  expect_error(mutate([&](Module* m) { m->functions[1]->constexprs[0].default_value = Attr::of_enum(0); }),
               Code::CorruptBinary, "an enum value for a constexpr default");
  expect_error(mutate([&](Module* m) { m->functions[1]->params[0].type = kNoType; }), Code::CorruptBinary,
               "is not in the table of");

  // Renaming an op in the string table (same length, checksum recomputed): the name is unknown.
  std::string bytes = write_binary(*make_full_module());
  size_t at = bytes.find("debug_barrier");
  assert_true(at != std::string::npos);
  bytes[at] = 'x';
  reseal(&bytes);
  expect_error(bytes, Code::CorruptBinary, "unknown op 'xebug_barrier'");
  // The same for an enum value's name.
  bytes = write_binary(*make_full_module());
  at = bytes.find("slt");
  assert_true(at != std::string::npos);
  bytes[at + 2] = 'x';
  reseal(&bytes);
  expect_error(bytes, Code::CorruptBinary, "'slx' is not a value of attribute 'pred' of 'cmp'");
}

std::vector<fs::path> files_in(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string first_difference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  size_t line = 1 + std::count(a.begin(), a.begin() + i, '\n');
  return "first difference at byte " + std::to_string(i) + " (line " + std::to_string(line) + "), sizes " +
         std::to_string(a.size()) + " and " + std::to_string(b.size());
}

std::unique_ptr<Module> parse_file(const fs::path& p) {
  std::unique_ptr<Module> m;
  Status st = parse_text(tri_test::read_file(p.string()), p.filename().string(), &m);
  if (!st) fail_msg("%s", st.message().c_str());
  return m;
}

void add_missing_golden_files() {
  fs::path dir = fs::path(tri_test::source_path(kGoldenDir)) / ("v" + std::to_string(kCurrentVersion));
  fs::create_directories(dir);
  for (const GoldenSource& src : kGoldenSources) {
    for (const fs::path& f : files_in(tri_test::source_path(src.dir), ".tri")) {
      fs::path target = dir / (src.prefix + f.stem().string() + ".tri");
      if (fs::exists(target)) continue;
      std::ofstream(target, std::ios::binary) << print_text(*parse_file(f));
      std::printf("added %s\n", target.string().c_str());
    }
  }
  for (const fs::path& f : files_in(dir, ".tri")) {
    fs::path target = fs::path(f).replace_extension(".trib");
    if (fs::exists(target)) continue;
    std::ofstream(target, std::ios::binary) << write_binary(*parse_file(f));
    std::printf("added %s\n", target.string().c_str());
  }
}

// TRI_UPDATE_GOLDEN=printer, after a change of the text printer (never of the format): each
// version's NAME.tri becomes the text its NAME.trib prints, and the current version's NAME.trib
// is written again from that text, whose source lines moved, once the new bytes are shown to
// hold the same IR (they print the same text). Released versions' .trib files stay as they are.
void reprint_golden_files() {
  for (int v = 1; v <= kCurrentVersion; ++v) {
    fs::path dir = fs::path(tri_test::source_path(kGoldenDir)) / ("v" + std::to_string(v));
    for (const fs::path& f : files_in(dir, ".trib")) {
      std::string bytes = tri_test::read_file(f.string());
      std::unique_ptr<Module> m;
      if (!read_binary(bytes.data(), bytes.size(), f.filename().string(), &m)) continue;  // the test says why
      const std::string text = print_text(*m);
      fs::path tri = fs::path(f).replace_extension(".tri");
      std::ofstream(tri, std::ios::binary) << text;
      if (v != kCurrentVersion) continue;
      const std::string again = write_binary(*parse_file(tri));
      std::unique_ptr<Module> back;
      if (!read_binary(again.data(), again.size(), f.filename().string(), &back) || print_text(*back) != text) {
        std::fprintf(stderr, "%s: the rewritten binary holds other IR; left as it was\n", f.string().c_str());
        continue;
      }
      if (again != bytes) {
        std::ofstream(f, std::ios::binary) << again;
        std::printf("rewrote %s (source lines moved)\n", f.string().c_str());
      }
    }
  }
}

// Every version's golden files read and print their text.
void golden_files_of_every_version_read(void** state) {
  int versions = 0, files = 0;
  for (int v = 1; v <= kCurrentVersion; ++v) {
    fs::path dir = fs::path(tri_test::source_path(kGoldenDir)) / ("v" + std::to_string(v));
    if (!fs::is_directory(dir)) fail_msg("%s is missing: golden files of released versions stay", dir.string().c_str());
    ++versions;
    for (const fs::path& f : files_in(dir, ".trib")) {
      ++files;
      fs::path tri = fs::path(f).replace_extension(".tri");
      if (!fs::exists(tri)) fail_msg("%s has no .tri", f.string().c_str());
      std::string bytes = tri_test::read_file(f.string());
      std::unique_ptr<Module> m;
      Status st = read_binary(bytes.data(), bytes.size(), f.filename().string(), &m);
      if (!st) fail_msg("%s", st.message().c_str());
      check_links(*m);
      std::string text = print_text(*m);
      std::string want = tri_test::read_file(tri.string());
      if (text != want) fail_msg("%s prints other text than %s: %s", f.string().c_str(), tri.filename().c_str(),
                                 first_difference(text, want).c_str());
    }
    for (const fs::path& f : files_in(dir, ".tri"))
      if (!fs::exists(fs::path(f).replace_extension(".trib")))
        fail_msg("%s has no .trib (TRI_UPDATE_GOLDEN=1 adds it)", f.string().c_str());
  }
  assert_int_equal(versions, kCurrentVersion);
  assert_true(files >= 10);
}

// The current version's files are exactly what the writer writes for their text.
void golden_files_are_what_the_writer_writes(void** state) {
  fs::path dir = fs::path(tri_test::source_path(kGoldenDir)) / ("v" + std::to_string(kCurrentVersion));
  int files = 0;
  for (const fs::path& f : files_in(dir, ".tri")) {
    ++files;
    std::string text = tri_test::read_file(f.string());
    std::unique_ptr<Module> m = parse_file(f);
    std::string printed = print_text(*m);
    if (printed != text)
      fail_msg("%s is not in canonical form: %s", f.string().c_str(), first_difference(printed, text).c_str());
    std::string bytes = write_binary(*m);
    std::string want = tri_test::read_file(fs::path(f).replace_extension(".trib").string());
    if (bytes != want)
      fail_msg("writing %s no longer gives its .trib (%s): the format changed; a change that old readers would "
               "misread needs a new version (docs/format.md)",
               f.string().c_str(), first_difference(bytes, want).c_str());
  }
  assert_true(files >= 10);
}

}  // namespace

int main(void) {
  const char* update = std::getenv("TRI_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") add_missing_golden_files();
  if (update && std::string(update) == "printer") reprint_golden_files();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(full_module_round_trips),
      cmocka_unit_test(every_attr_kind_is_covered),
      cmocka_unit_test(out_of_order_ids_are_renumbered),
      cmocka_unit_test(deep_nesting_is_limited),
      cmocka_unit_test(truncation_at_every_offset_fails),
      cmocka_unit_test(flipping_any_byte_fails),
      cmocka_unit_test(changed_payload_never_crashes),
      cmocka_unit_test(header_errors),
      cmocka_unit_test(hand_made_files),
      cmocka_unit_test(smallest_records_pass_the_count_checks),
      cmocka_unit_test(huge_counts_fail_fast),
      cmocka_unit_test(bad_indices_and_names),
      cmocka_unit_test(golden_files_of_every_version_read),
      cmocka_unit_test(golden_files_are_what_the_writer_writes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
