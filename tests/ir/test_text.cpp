// Unit tests of the IR text parser and printer: float and string spelling, operand slot layout,
// attribute kinds, value names and visibility, locations, nesting limits, and robustness against
// arbitrary bytes. Golden files (test_text_golden.cpp) cover every op and the error messages.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/limits.h"
#include "ir/text.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;

namespace {

std::unique_ptr<Module> parse_ok(const std::string& text) {
  std::unique_ptr<Module> m;
  Status st = parse_text(text, "t.tri", &m);
  if (!st) fail_msg("unexpected parse error: %s\n--- input:\n%s", st.message().c_str(), text.c_str());
  return m;
}

Status parse_status(const std::string& text) {
  std::unique_ptr<Module> m;
  Status st = parse_text(text, "t.tri", &m);
  if (st.is_ok() && !m) fail_msg("parse succeeded without a module");
  if (!st.is_ok() && m) fail_msg("parse failed but produced a module");
  return st;
}

// print(parse(text)) is a fixed point; returns the canonical text.
std::string canonical(const std::string& text) {
  std::string once = print_text(*parse_ok(text));
  std::string twice = print_text(*parse_ok(once));
  if (once != twice) fail_msg("printer not stable:\n%s\n--- vs\n%s", once.c_str(), twice.c_str());
  return once;
}

void expect_text(const std::string& got, const std::string& want) {
  if (got != want) fail_msg("got:\n%s\n--- want:\n%s", got.c_str(), want.c_str());
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A kernel whose body is `ops` (each line indented by the caller).
std::string kernel(const std::string& params, const std::string& ops) {
  return "kernel @k(" + params + ") {\n" + ops + "}\n";
}

}  // namespace

static void float_round_trip(void** state) {
  struct Case {
    double v;
    const char* text;
  };
  const Case cases[] = {
      {0.1, "0.1"},
      {1e-45, "1e-45"},
      {-0.0, "-0.0"},
      {0.0, "0.0"},
      {1.0, "1.0"},
      {1024.0, "1024.0"},
      {100.0, "100.0"},
      {1e30, "1e+30"},
      {-2.5, "-2.5"},
      {3.4028234663852886e38, "3.4028234663852886e+38"},
      {5e-324, "5e-324"},
      {std::numeric_limits<double>::max(), "1.7976931348623157e+308"},
      {HUGE_VAL, "inf"},
      {-HUGE_VAL, "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
  };
  Module m;
  m.functions.push_back(std::make_unique<Function>());
  Function* f = m.functions.back().get();
  f->name = "k";
  Builder b(&m, f);
  f->body = b.create_block({});
  b.set_insertion_block(f->body);
  TypeId f64 = m.types.scalar(Scalar::F64);
  for (const Case& c : cases) b.create1(Opcode::Const, {}, f64, {Attr::of_float(c.v)});
  b.create(Opcode::Return, {}, {});
  std::string text = print_text(m);
  for (const Case& c : cases) {
    std::string want = std::string("[value=") + c.text + "] : f64";
    if (text.find(want) == std::string::npos) fail_msg("'%s' missing from:\n%s", want.c_str(), text.c_str());
  }
  std::unique_ptr<Module> back = parse_ok(text);
  const Function& g = *back->functions[0];
  const std::vector<OpId>& ops = g.block(g.body).ops;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const Attr& a = g.attr(ops[i], "value");
    assert_int_equal(static_cast<int>(a.kind), static_cast<int>(Attr::Kind::Float));
    if (std::isnan(cases[i].v)) {
      assert_true(std::isnan(a.f));
    } else if (!same_bits(a.f, cases[i].v)) {
      fail_msg("%s read back as %.17g", cases[i].text, a.f);
    }
  }
  expect_text(print_text(*back), text);
}

static void float_literal_forms(void** state) {
  std::unique_ptr<Module> m = parse_ok(kernel("",
                                              "  %a = const[value=1.] : f32\n"
                                              "  %b = const[value=2E3] : f32\n"
                                              "  %c = const[value=-1.5e-3] : f32\n"
                                              "  %d = const[value=-inf] : f32\n"
                                              "  %e = const[value=nan] : f32\n"
                                              "  %f = const[value=7] : f32\n"
                                              "  %g = const[value=true] : i1\n"
                                              "  %h = const[value=N] : i32\n"
                                              "  return\n"));
  const Function& f = *m->functions[0];
  const std::vector<OpId>& ops = f.block(f.body).ops;
  assert_true(f.attr(ops[0], "value") == Attr::of_float(1.0));
  assert_true(f.attr(ops[1], "value") == Attr::of_float(2000.0));
  assert_true(f.attr(ops[2], "value") == Attr::of_float(-1.5e-3));
  assert_true(f.attr(ops[3], "value") == Attr::of_float(-HUGE_VAL));
  assert_true(std::isnan(f.attr(ops[4], "value").f));
  assert_true(f.attr(ops[5], "value") == Attr::of_int(7));
  assert_true(f.attr(ops[6], "value") == Attr::of_bool(true));
  assert_true(f.attr(ops[7], "value") == Attr::of_sym("N"));
  // An int attribute does not take a float; a float past the double range is an error.
  Status st = parse_status(kernel("", "  %a = program_id[axis=1.5] : i32\n  return\n"));
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(Code::Parse));
  st = parse_status(kernel("", "  %a = const[value=1e400] : f64\n  return\n"));
  expect_text(st.message(), "t.tri:2:20: error: float literal '1e400' out of range");
}

static void integer_literals(void** state) {
  std::unique_ptr<Module> m = parse_ok(kernel("",
                                              "  %a = const[value=0x10] : i32\n"
                                              "  %b = const[value=-9223372036854775808] : i64\n"
                                              "  %c = const[value=9223372036854775807] : i64\n"
                                              "  %d = const[value=0xffffffffffffffff] : i64\n"
                                              "  %e = const[value=-0x8000000000000000] : i64\n"
                                              "  return\n"));
  const Function& f = *m->functions[0];
  const std::vector<OpId>& ops = f.block(f.body).ops;
  assert_true(f.attr(ops[0], "value") == Attr::of_int(16));
  assert_true(f.attr(ops[1], "value") == Attr::of_int(INT64_MIN));
  assert_true(f.attr(ops[2], "value") == Attr::of_int(INT64_MAX));
  assert_true(f.attr(ops[3], "value") == Attr::of_int(-1));
  assert_true(f.attr(ops[4], "value") == Attr::of_int(INT64_MIN));
  std::string text = canonical(print_text(*m));
  assert_non_null(strstr(text.c_str(), "[value=-9223372036854775808] : i64"));
  const char* bad[] = {"9223372036854775808", "-9223372036854775809", "0x10000000000000000",
                       "-0x8000000000000001", "99999999999999999999999999"};
  for (const char* b : bad) {
    Status st = parse_status(kernel("", std::string("  %a = const[value=") + b + "] : i64\n  return\n"));
    expect_text(st.message(), std::string("t.tri:2:20: error: integer literal '") + b + "' out of range");
  }
}

static void string_escapes(void** state) {
  std::string src = kernel("%c: i1",
                           "  print[prefix=\"q\\\"b\\\\s\\nn\\tt\\01\\ff\\7Fraw\ttab\"] %c\n"
                           "  return\n");
  std::unique_ptr<Module> m = parse_ok(src);
  const Function& f = *m->functions[0];
  const Attr& a = f.attr(f.block(f.body).ops[0], "prefix");
  assert_int_equal(static_cast<int>(a.kind), static_cast<int>(Attr::Kind::Str));
  expect_text(a.s, std::string("q\"b\\s\nn\tt\x01\xff\x7fraw\ttab"));
  std::string text = canonical(src);
  assert_non_null(strstr(text.c_str(), "print[prefix=\"q\\\"b\\\\s\\nn\\tt\\01\\ff\\7fraw\\ttab\"] %c\n"));

  // Raw newlines, NUL bytes and invalid UTF-8 are string content.
  std::string raw = "  assert[msg=\"a\nb";
  raw += '\0';
  raw += "\xc3\x28\"] %c\n  return\n";
  m = parse_ok(kernel("%c: i1", raw));
  const Function& g = *m->functions[0];
  expect_text(g.attr(g.block(g.body).ops[0], "msg").s, std::string("a\nb\0\xc3\x28", 6));
  text = canonical(print_text(*m));
  assert_non_null(strstr(text.c_str(), "assert[msg=\"a\\nb\\00\\c3(\"] %c"));
  // The op after the raw newline is on the next line.
  assert_int_equal(g.op(g.block(g.body).ops[1]).loc.line, 4);

  Status st = parse_status(kernel("%c: i1", "  print[prefix=\"abc\\q\"] %c\n  return\n"));
  expect_text(st.message(), "t.tri:2:20: error: bad escape '\\q' in string");
  st = parse_status(kernel("%c: i1", "  print[prefix=\"abc\\4\"] %c\n  return\n"));
  expect_text(st.message(), "t.tri:2:20: error: bad escape '\\4' in string");
  st = parse_status("kernel @k(%c: i1) {\n  print[prefix=\"abc");
  expect_text(st.message(), "t.tri:2:16: error: unterminated string");
  st = parse_status("kernel @k(%c: i1) {\n  print[prefix=\"abc\\");
  expect_text(st.message(), "t.tri:2:16: error: unterminated string");
}

static void slot_layout(void** state) {
  std::unique_ptr<Module> m = parse_ok(
      kernel("%p: <4 x ptr<f32>>, %m: <4 x i1>, %z: <4 x f32>, %c: i32",
             "  %a = load %p, other=%z : <4 x f32>\n"
             "  %b = load %p, other=%z, mask=%m : <4 x f32>\n"
             "  %s, %t = for %c, %c, %c, %a, %b {\n"
             "  ^(%i: i32, %x: <4 x f32>, %y: <4 x f32>):\n"
             "    yield %x, %y\n"
             "  } : <4 x f32>, <4 x f32>\n"
             "  print %a, %b, mask=%m\n"
             "  print\n"
             "  return\n"));
  const Function& f = *m->functions[0];
  const std::vector<OpId>& ops = f.block(f.body).ops;
  ValueId p = f.params[0].value, mk = f.params[1].value, z = f.params[2].value;
  // load: ptr, then mask?, other? (kNoValue when absent)
  assert_int_equal(f.op(ops[0]).operands.size(), 3);
  assert_int_equal(f.operand(ops[0], "ptr"), p);
  assert_int_equal(f.operand(ops[0], "mask"), kNoValue);
  assert_int_equal(f.operand(ops[0], "other"), z);
  assert_int_equal(f.operand(ops[1], "mask"), mk);
  assert_int_equal(f.operand(ops[1], "other"), z);
  // for: lo, hi, step, then the inits
  assert_int_equal(f.op(ops[2]).operands.size(), 5);
  assert_int_equal(f.variadic(ops[2]).size(), 2);
  assert_int_equal(f.variadic(ops[2])[0], f.op(ops[0]).results[0]);
  assert_int_equal(f.op(ops[2]).regions.size(), 1);
  assert_int_equal(f.block(f.op(ops[2]).regions[0]).args.size(), 3);
  assert_int_equal(f.op(ops[2]).results.size(), 2);
  // print: values*, mask?
  assert_int_equal(f.variadic(ops[3]).size(), 2);
  assert_int_equal(f.operand(ops[3], "mask"), mk);
  assert_int_equal(f.op(ops[4]).operands.size(), 1);
  assert_int_equal(f.operand(ops[4], "mask"), kNoValue);
  // Canonical order of named operands is slot order.
  std::string text = canonical(print_text(*m));
  assert_non_null(strstr(text.c_str(), "%b = load %p, mask=%m, other=%z : <4 x f32>\n"));
  assert_non_null(strstr(text.c_str(), "  print\n  return\n"));
}

static void operands_versus_next_results(void** state) {
  // An op that may have no operands, followed by an op with results: those names are results.
  std::unique_ptr<Module> m = parse_ok(
      kernel("%x: <4 x f32>",
             "  debug_barrier\n  %a, %b = split %x : <2 x f32>, <2 x f32>\n  print\n  %c = add %a, %b : <2 x f32>\n"
             "  print mask=%x\n  return\n"));
  const Function& f = *m->functions[0];
  const std::vector<OpId>& ops = f.block(f.body).ops;
  assert_int_equal(ops.size(), 6);
  assert_int_equal(f.op(ops[0]).operands.size(), 0);
  assert_int_equal(f.op(ops[1]).results.size(), 2);
  assert_int_equal(f.op(ops[2]).operands.size(), 1);  // just the absent mask
  assert_int_equal(f.operand(ops[4], "mask"), f.params[0].value);
}

static void attributes(void** state) {
  std::string src = kernel(
      "%p: <4 x ptr<f32>>, %v: <4 x f32>",
      "  %a = load[cache=none, evict=last, volatile] %p : <4 x f32>\n"
      "  %b = load[volatile=false, cache=cg] %p : <4 x f32>\n"
      "  %c = atomic[kind=add, scope=gpu, order=relaxed] %p, %v : <4 x f32>\n"
      "  %d = permute[order=[0]] %v : <4 x f32>\n"
      "  %e = multiple_of[values=[]] %v : <4 x f32>\n"
      "  %f, %g = inline_asm[asm=\"mov\", constraints=\"=r\", pure=true, pack=1] %v : <4 x f32>, <4 x f32>\n"
      "  %h = inline_asm[asm=\"x\", constraints=\"\", pure=false, pack=P] %v : <4 x f32>\n"
      "  %i = scan[axis=0, kind=sum, reverse] %v : <4 x f32>\n"
      "  %j = call[callee=@g] %v : <4 x f32>\n"
      "  return\n");
  std::unique_ptr<Module> m = parse_ok(src);
  const Function& f = *m->functions[0];
  const std::vector<OpId>& ops = f.block(f.body).ops;
  // Written defaults are kept as written; absent attributes stay none.
  assert_true(f.attr(ops[0], "cache") == Attr::of_enum(0));
  assert_true(f.attr(ops[0], "evict") == Attr::of_enum(2));
  assert_true(f.attr(ops[0], "volatile") == Attr::of_bool(true));
  assert_true(f.attr(ops[1], "volatile") == Attr::of_bool(false));
  assert_false(f.attr(ops[1], "evict").present());
  assert_true(f.attr(ops[2], "kind") == Attr::of_enum(0));
  assert_true(f.attr(ops[3], "order") == Attr::of_ints({0}));
  assert_true(f.attr(ops[4], "values") == Attr::of_ints({}));
  assert_true(f.attr(ops[6], "pack") == Attr::of_sym("P"));
  assert_true(f.attr(ops[7], "reverse") == Attr::of_bool(true));
  assert_true(f.attr(ops[8], "callee") == Attr::of_func("g"));
  std::string text = canonical(src);
  assert_non_null(strstr(text.c_str(), "%a = load[evict=last, volatile=true] %p : <4 x f32>\n"));
  assert_non_null(strstr(text.c_str(), "%b = load[cache=cg] %p : <4 x f32>\n"));
  assert_non_null(strstr(text.c_str(), "%c = atomic[kind=add, order=relaxed] %p, %v : <4 x f32>\n"));
  assert_non_null(strstr(text.c_str(), "%e = multiple_of[values=[]] %v"));
  assert_non_null(strstr(text.c_str(), "%f, %g = inline_asm[asm=\"mov\", constraints=\"=r\"] %v"));
  assert_non_null(strstr(text.c_str(), "inline_asm[asm=\"x\", constraints=\"\", pure=false, pack=P] %v"));
  assert_non_null(strstr(text.c_str(), "%i = scan[axis=0, kind=sum, reverse=true] %v"));
  assert_non_null(strstr(text.c_str(), "%j = call[callee=@g] %v"));
}

static void params_and_constexprs(void** state) {
  std::string src =
      "kernel @k(%x: ptr<f16> {noalias, divisible=8, align=16}, %n: i32 {divisible=16})\n"
      "    constexpr(A: i32 = -3, B: i1 = true, C: f32 = 2, D: f64, E: i64 = 0x20, F: f16 = -inf) {\n"
      "  return\n}\n"
      "func @g() -> () {\n  return\n}\n"
      "func @h(%a: <BM x 4 x f32>) -> (f32, <BM x 4 x f32>) {\n  return\n}\n";
  std::unique_ptr<Module> m = parse_ok(src);
  assert_int_equal(m->functions.size(), 3);
  const Function& k = *m->functions[0];
  assert_true(k.is_kernel);
  assert_int_equal(k.params.size(), 2);
  assert_int_equal(k.params[0].align, 16);
  assert_int_equal(k.params[0].divisible, 8);
  assert_true(k.params[0].noalias);
  assert_int_equal(k.params[1].divisible, 16);
  assert_int_equal(k.params[0].value, k.block(k.body).args[0]);
  assert_int_equal(k.constexprs.size(), 6);
  assert_true(k.constexprs[0].default_value == Attr::of_int(-3));
  assert_true(k.constexprs[1].default_value == Attr::of_bool(true));
  assert_true(k.constexprs[2].default_value == Attr::of_float(2.0));
  assert_false(k.constexprs[3].default_value.present());
  assert_true(k.constexprs[4].default_value == Attr::of_int(32));
  assert_true(k.constexprs[5].default_value == Attr::of_float(-HUGE_VAL));
  assert_int_equal(static_cast<int>(k.constexprs[5].type), static_cast<int>(Scalar::F16));
  const Function& h = *m->functions[2];
  assert_false(h.is_kernel);
  assert_int_equal(h.results.size(), 2);
  const TypeData& t = m->types.get(h.results[1]);
  assert_int_equal(t.dims.size(), 2);
  assert_true(t.dims[0].symbolic);
  assert_string_equal(m->symbols[t.dims[0].sym].c_str(), "BM");
  assert_int_equal(t.dims[1].value, 4);
  expect_text(canonical(src),
              "kernel @k(%x: ptr<f16> {align=16, divisible=8, noalias}, %n: i32 {divisible=16})\n"
              "    constexpr(A: i32 = -3, B: i1 = true, C: f32 = 2.0, D: f64, E: i64 = 32, F: f16 = -inf) {\n"
              "  return\n}\n\n"
              "func @g() {\n  return\n}\n\n"
              "func @h(%a: <BM x 4 x f32>) -> (f32, <BM x 4 x f32>) {\n  return\n}\n");
  Status st = parse_status("kernel @k() constexpr(A: i32 = 1.5) {\n  return\n}\n");
  expect_text(st.message(), "t.tri:1:32: error: expected an integer (the default of constexpr 'A': i32), found '1.5'");
  st = parse_status("kernel @k() constexpr(A: i1 = 1) {\n  return\n}\n");
  expect_text(st.message(), "t.tri:1:31: error: expected true or false (the default of constexpr 'A': i1), found '1'");
  st = parse_status("kernel @k() constexpr(A: i32, A: i64) {\n  return\n}\n");
  expect_text(st.message(), "t.tri:1:31: error: constexpr 'A' declared twice");
}

static void types(void** state) {
  std::string src = kernel(
      "%a: <4x8xf32>, %b: <BM x 0x10 x bf16>, %c: <2x ptr<i8>>, %d: <1 x 2 x 4 x 8 x f8e4m3>, %e: ptr<f8e5m2>",
      "  return\n");
  expect_text(canonical(src),
              "kernel @k(%a: <4 x 8 x f32>, %b: <BM x 16 x bf16>, %c: <2 x ptr<i8>>, %d: <1 x 2 x 4 x 8 x f8e4m3>,\n"
              "          %e: ptr<f8e5m2>) {\n  return\n}\n");
  struct Bad {
    const char* type;
    const char* msg;
  };
  const Bad bad[] = {
      {"<f32>", "1:15: error: block type needs at least one dimension"},
      {"<1 x 2 x 4 x 8 x 16 x f32>", "1:15: error: block type has more than 4 dimensions"},
      {"ptr<ptr<f32>>", "1:19: error: expected a scalar type, found 'ptr'"},
      {"<4 x <4 x f32>>", "1:20: error: expected a block dimension or element type, found '<'"},
      {"<4 x 8 f32>", "1:22: error: expected 'x' in block type, found 'f32'"},
      {"<4 x f32", "1:23: error: unexpected end of input, expected '>'"},
      {"i7", "1:15: error: expected a type, found 'i7'"},
      {"<2097152 x f32>", "1:16: error: block dimension 2097152 is larger than kMaxDim (1048576)"},
  };
  for (const Bad& b : bad) {
    Status st = parse_status(std::string("kernel @k(%a: ") + b.type);
    expect_text(st.message(), std::string("t.tri:") + b.msg);
  }
  Status st = parse_status("kernel @k(%a: <2097152 x f32>) {\n  return\n}\n");
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(Code::LimitExceeded));
}

static void names(void** state) {
  // Builder-made values get generated names that avoid the names already written.
  Module m;
  m.functions.push_back(std::make_unique<Function>());
  Function* f = m.functions.back().get();
  f->name = "k";
  Builder b(&m, f);
  TypeId i32 = m.types.scalar(Scalar::I32);
  f->body = b.create_block({i32, i32});
  b.set_insertion_block(f->body);
  Param p0;
  p0.name = "0";
  p0.type = i32;
  p0.value = f->block(f->body).args[0];
  Param p1;  // no name
  p1.type = i32;
  p1.value = f->block(f->body).args[1];
  f->params = {p0, p1};
  ValueId a = b.create1(Opcode::Add, {p0.value, p1.value}, i32);
  ValueId c = b.create1(Opcode::Mul, {a, a}, i32);
  f->values[c].name = "2";
  ValueId d = b.create1(Opcode::Sub, {c, a}, i32);
  f->values[d].name = "bad name";  // not a valid value name: replaced
  ValueId e = b.create1(Opcode::Neg, {d}, i32);
  f->values[e].name = "2";  // duplicate: the second one is renamed
  b.create(Opcode::Return, {e}, {});
  std::string text = print_text(m);
  expect_text(text,
              "kernel @k(%0: i32, %1: i32) {\n"
              "  %3 = add %0, %1 : i32\n"
              "  %2 = mul %3, %3 : i32\n"
              "  %4 = sub %2, %3 : i32\n"
              "  %5 = neg %4 : i32\n"
              "  return %5\n"
              "}\n");
  expect_text(canonical(text), text);
  // Names as written are kept, dots and digits included.
  std::string src = kernel("%x.1: i32, %_: i32", "  %007 = add %x.1, %_ : i32\n  return %007\n");
  expect_text(canonical(src), src);
}

static void builder_module_prints_and_reparses(void** state) {
  Module m;
  m.functions.push_back(std::make_unique<Function>());
  Function* f = m.functions.back().get();
  f->name = "sum";
  TypeId i32 = m.types.scalar(Scalar::I32);
  TypeId f32 = m.types.scalar(Scalar::F32);
  TypeId pf32 = m.types.ptr(f32);
  SymId blk = m.intern("BLOCK");
  TypeId vi32 = m.types.block({Dim::name(blk)}, i32);
  TypeId vf32 = m.types.block({Dim::name(blk)}, f32);
  TypeId vp = m.types.block({Dim::name(blk)}, pf32);
  TypeId vi1 = m.types.block({Dim::name(blk)}, m.types.scalar(Scalar::I1));
  Builder b(&m, f);
  f->body = b.create_block({pf32, i32, pf32});
  const char* pnames[] = {"x", "n", "out"};
  for (int i = 0; i < 3; ++i) {
    Param p;
    p.name = pnames[i];
    p.type = f->type_of(f->block(f->body).args[i]);
    p.value = f->block(f->body).args[i];
    if (i != 1) p.align = 16;
    f->params.push_back(p);
  }
  Constexpr ce;
  ce.name = "BLOCK";
  ce.default_value = Attr::of_int(256);
  f->constexprs.push_back(ce);
  b.set_insertion_block(f->body);
  ValueId x = f->params[0].value, n = f->params[1].value, out = f->params[2].value;
  ValueId r = b.create1(Opcode::Arange, {}, vi32, {Attr::of_int(0), Attr::of_sym("BLOCK")});
  ValueId nv = b.create1(Opcode::Splat, {n}, vi32);
  ValueId mask = b.create1(Opcode::Cmp, {r, nv}, vi1, {Attr::of_enum(2)});
  ValueId xb = b.create1(Opcode::Splat, {x}, vp);
  ValueId xp = b.create1(Opcode::AddPtr, {xb, r}, vp);
  ValueId zero = b.create1(Opcode::Const, {}, f32, {Attr::of_float(0)});
  ValueId zv = b.create1(Opcode::Splat, {zero}, vf32);
  ValueId v = b.create1(Opcode::Load, {xp, mask, zv}, vf32);
  OpId red = b.create(Opcode::Reduce, {v}, {f32}, {Attr::of_int(0)});
  BlockId body = b.add_region(red, {f32, f32});
  b.set_insertion_block(body);
  ValueId s = b.create1(Opcode::Add, {f->block(body).args[0], f->block(body).args[1]}, f32);
  b.create(Opcode::Yield, {s}, {});
  b.set_insertion_block(f->body);
  b.create(Opcode::Store, {out, f->op(red).results[0], kNoValue}, {});
  b.create(Opcode::Return, {}, {});
  std::string text = print_text(m);
  expect_text(text,
              "kernel @sum(%x: ptr<f32> {align=16}, %n: i32, %out: ptr<f32> {align=16})\n"
              "    constexpr(BLOCK: i32 = 256) {\n"
              "  %0 = arange[start=0, end=BLOCK] : <BLOCK x i32>\n"
              "  %1 = splat %n : <BLOCK x i32>\n"
              "  %2 = cmp[pred=slt] %0, %1 : <BLOCK x i1>\n"
              "  %3 = splat %x : <BLOCK x ptr<f32>>\n"
              "  %4 = addptr %3, %0 : <BLOCK x ptr<f32>>\n"
              "  %5 = const[value=0.0] : f32\n"
              "  %6 = splat %5 : <BLOCK x f32>\n"
              "  %7 = load %4, mask=%2, other=%6 : <BLOCK x f32>\n"
              "  %8 = reduce[axis=0] %7 {\n"
              "  ^(%9: f32, %10: f32):\n"
              "    %11 = add %9, %10 : f32\n"
              "    yield %11\n"
              "  } : f32\n"
              "  store %out, %8\n"
              "  return\n"
              "}\n");
  std::unique_ptr<Module> back = parse_ok(text);
  expect_text(print_text(*back), text);
  const Function& g = *back->functions[0];
  assert_int_equal(g.ops.size(), f->ops.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    assert_int_equal(static_cast<int>(g.ops[i].code), static_cast<int>(f->ops[i].code));
    assert_int_equal(g.ops[i].operands.size(), f->ops[i].operands.size());
    assert_int_equal(g.ops[i].attrs.size(), f->ops[i].attrs.size());
    for (size_t k = 0; k < g.ops[i].attrs.size(); ++k) assert_true(g.ops[i].attrs[k] == f->ops[i].attrs[k]);
  }
}

static void locations(void** state) {
  std::string src =
      "// header\n"
      "kernel @k(%x: i32,\n"
      "          %y: i32) constexpr(B: i32) {\n"
      "  %a = add %x, %y : i32\n"
      "  %c = if %x {\n"
      "    yield %a\n"
      "  } : i32\n"
      "  return\n"
      "}\n";
  std::unique_ptr<Module> m = parse_ok(src);
  const Function& f = *m->functions[0];
  assert_int_equal(f.loc.line, 2);
  assert_int_equal(f.loc.col, 1);
  assert_int_equal(f.params[1].loc.line, 3);
  assert_int_equal(f.params[1].loc.col, 11);
  assert_int_equal(f.constexprs[0].loc.line, 3);
  assert_int_equal(f.constexprs[0].loc.col, 30);
  assert_int_equal(f.block(f.body).loc.line, 3);
  assert_int_equal(f.block(f.body).loc.col, 38);
  const OpData& add = f.op(f.block(f.body).ops[0]);
  assert_int_equal(add.loc.line, 4);
  assert_int_equal(add.loc.col, 8);
  const OpData& iff = f.op(f.block(f.body).ops[1]);
  assert_int_equal(f.block(iff.regions[0]).loc.line, 5);
  assert_int_equal(f.block(iff.regions[0]).loc.col, 14);
  assert_int_equal(f.op(f.block(iff.regions[0]).ops[0]).loc.line, 6);
  assert_int_equal(f.op(f.block(iff.regions[0]).ops[0]).loc.col, 5);
  assert_string_equal(m->source_name.c_str(), "t.tri");
}

static void visibility(void** state) {
  // Outer values are visible in nested regions; a region's values end with it.
  std::string ok = kernel("%c: i1, %x: i32",
                          "  %a = add %x, %x : i32\n"
                          "  %r = if %c {\n"
                          "    %b = add %a, %x : i32\n"
                          "    %s = if %c {\n"
                          "      %d = add %b, %a : i32\n"
                          "      yield %d\n"
                          "    } : i32\n"
                          "    yield %s\n"
                          "  } {\n"
                          "    yield %a\n"
                          "  } : i32\n"
                          "  return\n");
  parse_ok(ok);
  Status st = parse_status(kernel("%c: i1, %x: i32",
                                  "  %r = if %c {\n    %b = add %x, %x : i32\n    yield %b\n  } : i32\n"
                                  "  %q = add %b, %x : i32\n  return\n"));
  expect_text(st.message(), "t.tri:6:12: error: value '%b' is not visible here (defined at 3:5)");
  // A result is defined after its op's regions: the op cannot use it inside.
  st = parse_status(kernel("%c: i1", "  %r = if %c {\n    yield %r\n  } : i1\n  return\n"));
  expect_text(st.message(), "t.tri:3:11: error: undefined value '%r'");
  // Names are scoped by region: a name inside a region ends with it, so the op's result (defined
  // after its regions) may take it, and so may a sibling region; the printer keeps them all.
  std::string reuse = kernel("%c: i1, %n: i32",
                             "  %r = if %c {\n    %r = add %c, %c : i1\n    yield %r\n  } {\n"
                             "    %r = sub %c, %c : i1\n    yield %r\n  } : i1\n"
                             "  %s = for %n, %n, %n, %r {\n  ^(%i: i32, %acc: i1):\n    yield %acc\n  } : i1\n"
                             "  %t = for %n, %n, %n, %s {\n  ^(%i: i32, %acc: i1):\n    yield %acc\n  } : i1\n"
                             "  return\n");
  expect_text(canonical(reuse), reuse);
  // A name visible from an enclosing region cannot be defined again (no shadowing) ...
  st = parse_status(kernel("%c: i1",
                           "  %a = add %c, %c : i1\n  if %c {\n    %a = add %c, %c : i1\n    yield\n  }\n  return\n"));
  expect_text(st.message(),
              "t.tri:4:5: error: value '%a' shadows the value of that name defined at 2:3 in an enclosing region: "
              "give it another name");
  // ... nor twice in one region.
  st = parse_status(kernel("%c: i1",
                           "  if %c {\n    %a = add %c, %c : i1\n    %a = add %c, %c : i1\n    yield\n  }\n  return\n"));
  expect_text(st.message(),
              "t.tri:4:5: error: value '%a' defined twice (first at 3:5): give the second one another name");
  // Names are per function.
  parse_ok("kernel @a(%x: i32) {\n  return\n}\nkernel @b(%x: i32) {\n  return\n}\n");
}

static void scoped_names_in_built_modules(void** state) {
  // A module made by Builder (or a pass) may give a nested value the name of a visible one: the
  // printer renames the inner one so that the text reads back; sibling regions keep their names.
  Module m;
  m.functions.push_back(std::make_unique<Function>());
  Function* f = m.functions.back().get();
  f->name = "k";
  Builder b(&m, f);
  TypeId i32 = m.types.scalar(Scalar::I32);
  f->body = b.create_block({i32});
  Param p;
  p.name = "c";
  p.type = i32;
  p.value = f->block(f->body).args[0];
  f->params = {p};
  b.set_insertion_block(f->body);
  ValueId a = b.create1(Opcode::Neg, {p.value}, i32);
  f->values[a].name = "a";
  OpId ifop = b.create(Opcode::If, {p.value}, {});
  for (int r = 0; r < 2; ++r) {
    BlockId blk = b.add_region(ifop, {});
    b.set_insertion_block(blk);
    ValueId x = b.create1(Opcode::Neg, {a}, i32);
    f->values[x].name = r == 0 ? "a" : "x";  // the first shadows %a
    ValueId y = b.create1(Opcode::Neg, {x}, i32);
    f->values[y].name = "y";  // the same name in both regions
    b.create(Opcode::Yield, {}, {});
  }
  b.set_insertion_block(f->body);
  b.create(Opcode::Return, {}, {});
  std::string text = print_text(m);
  expect_text(text,
              "kernel @k(%c: i32) {\n"
              "  %a = neg %c : i32\n"
              "  if %c {\n"
              "    %0 = neg %a : i32\n"
              "    %y = neg %0 : i32\n"
              "    yield\n"
              "  } {\n"
              "    %x = neg %a : i32\n"
              "    %y = neg %x : i32\n"
              "    yield\n"
              "  }\n"
              "  return\n"
              "}\n");
  expect_text(canonical(text), text);
}

// Comments anywhere whitespace may be: every one is printed once, and printing is a fixed point.
static void comments_anywhere(void** state) {
  const std::string base = tri_test::read_file(tri_test::source_path("tests/golden/fmt/comments.tri"));
  std::vector<size_t> spots;  // whitespace positions outside comments
  bool in_comment = false;
  for (size_t i = 0; i < base.size(); ++i) {
    if (base[i] == '\n') in_comment = false;
    else if (base.compare(i, 2, "//") == 0) in_comment = true;
    if (!in_comment && (base[i] == ' ' || base[i] == '\n')) spots.push_back(i);
  }
  std::mt19937 rng(8);
  auto fmt = [](const std::string& text, std::string* out) {
    std::unique_ptr<Module> m;
    TextComments comments;
    Status st = parse_text(text, "t.tri", &m, &comments);
    if (!st) return st;
    *out = print_text(*m, &comments);
    return Status::ok();
  };
  for (int iter = 0; iter < 1000; ++iter) {
    std::string text = base;
    int n = 1 + static_cast<int>(rng() % 3);
    std::vector<size_t> at;
    for (int k = 0; k < n; ++k) at.push_back(spots[rng() % spots.size()]);
    std::sort(at.rbegin(), at.rend());
    std::vector<std::string> marks;
    for (size_t k = 0; k < at.size(); ++k) {
      std::string mark = "mark" + std::to_string(iter) + "_" + std::to_string(k);
      marks.push_back(mark);
      // A comment must end its line: a trailing one before the text's own newline, or a new line.
      text.insert(at[k], base[at[k]] == '\n' ? " // " + mark : "\n// " + mark + "\n");
    }
    std::string once, twice;
    Status st = fmt(text, &once);
    if (!st) fail_msg("comments broke the parse: %s\n%s", st.message().c_str(), text.c_str());
    for (const std::string& mark : marks) {
      size_t first = once.find(mark);
      if (first == std::string::npos || once.find(mark, first + 1) != std::string::npos)
        fail_msg("comment %s printed %s:\n%s", mark.c_str(), first == std::string::npos ? "never" : "twice",
                 once.c_str());
    }
    st = fmt(once, &twice);
    if (!st || twice != once)
      fail_msg("fmt of fmt differs (%s):\n%s\n--- vs\n%s\n--- from\n%s", st.message().c_str(), once.c_str(),
               twice.c_str(), text.c_str());
  }
}

static std::string nested_ifs(int depth) {
  std::string s = "kernel @k(%c: i1) {\n";
  for (int i = 0; i < depth; ++i) s += "if %c {\n";
  for (int i = 0; i < depth; ++i) s += "yield\n}\n";
  return s + "return\n}\n";
}

static void deep_nesting(void** state) {
  std::unique_ptr<Module> m = parse_ok(nested_ifs(kMaxNesting));
  std::string text = canonical(print_text(*m));
  Status st = parse_status(nested_ifs(kMaxNesting + 1));
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(Code::LimitExceeded));
  expect_text(st.message(), "t.tri:66:7: error: regions nested deeper than kMaxNesting (64)");
  // Far past the limit: stops at the limit, no stack overflow.
  std::string deep = "kernel @k(%c: i1) {\n";
  for (int i = 0; i < 100000; ++i) deep += "if %c {";
  st = parse_status(deep);
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(Code::LimitExceeded));
  // Bare open braces and brackets are plain syntax errors.
  st = parse_status("kernel @k(%c: i1) {\n" + std::string(100000, '{'));
  expect_text(st.message(), "t.tri:2:1: error: expected an op or '}', found '{'");
  st = parse_status(std::string(100000, '{'));
  expect_text(st.message(), "t.tri:1:1: error: expected 'kernel' or 'func', found '{'");
  st = parse_status("kernel @k(%a: " + std::string(100000, '<'));
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(Code::Parse));
  st = parse_status("kernel @k(%a: i1) {\n %x = permute[order=" + std::string(100000, '[') + "]] %a : i1\n}\n");
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(Code::Parse));
}

static void empty_and_tokens(void** state) {
  std::unique_ptr<Module> m = parse_ok("");
  assert_int_equal(m->functions.size(), 0);
  // An empty module prints as a comment (0 bytes would not read back) that parses to one.
  expect_text(print_text(*m), "// empty module\n");
  assert_int_equal(parse_ok(print_text(*m))->functions.size(), 0);
  m = parse_ok("  // only a comment\n\n");
  assert_int_equal(m->functions.size(), 0);
  Status st = parse_status(std::string("kernel @k() {\n  \x01"));
  expect_text(st.message(), "t.tri:2:3: error: unexpected byte 0x01");
  st = parse_status(std::string("kernel @k() {\n  ", 16) + std::string(1, '\0'));
  expect_text(st.message(), "t.tri:2:3: error: unexpected byte 0x00");
  st = parse_status("kernel @k() {\n  # x");
  expect_text(st.message(), "t.tri:2:3: error: unexpected character '#'");
  st = parse_status("kernel @k() {\n  % = add");
  expect_text(st.message(), "t.tri:2:3: error: expected a value name after '%'");
  st = parse_status("kernel @1k() {}");
  expect_text(st.message(), "t.tri:1:8: error: expected a function name after '@'");
  st = parse_status("kernel @k() {\n  return\n");
  expect_text(st.message(), "t.tri:3:1: error: unexpected end of input, expected an op or '}'");
  st = parse_status("kernel @k() {\n  return\n}\nfunc @k() {\n  return\n}\n");
  expect_text(st.message(), "t.tri:4:6: error: function '@k' defined twice");
  std::unique_ptr<Module> unused;
  st = parse_text("x", "", &unused);
  expect_text(st.message(), "<input>:1:1: error: expected 'kernel' or 'func', found 'x'");
}

static void arbitrary_bytes(void** state) {
  // Mutations of a valid module: parsing must not crash, and whatever parses prints stably.
  const std::string base = kernel(
      "%x: ptr<f32> {align=16}, %n: i32",
      "  %pid = program_id[axis=0] : i32\n"
      "  %r = arange[start=0, end=128] : <128 x i32>\n"
      "  %p = splat %x : <128 x ptr<f32>>\n"
      "  %q = addptr %p, %r : <128 x ptr<f32>>\n"
      "  %m = cmp[pred=slt] %r, %r : <128 x i1>\n"
      "  %v = load %q, mask=%m : <128 x f32>\n"
      "  %s = reduce[axis=0, kind=sum] %v : f32\n"
      "  %c = const[value=1.5e3] : f32\n"
      "  %t = for %n, %n, %n, %s {\n"
      "  ^(%i: i32, %a: f32):\n"
      "    %b = add %a, %c : f32\n"
      "    yield %b\n"
      "  } : f32\n"
      "  print[prefix=\"s=\\n\"] %t\n"
      "  return\n");
  std::mt19937 rng(12345);
  const char alphabet[] = "%@{}[]()<>:,=^-x0123456789abcdefiptr\"\\ \n\t/.\0\xff";
  int parsed = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string s = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % (s.size() + 1);
      switch (rng() % 4) {
        case 0: if (pos < s.size()) s.erase(pos, 1 + rng() % 8); break;
        case 1: s.insert(pos, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
        case 2: if (pos < s.size()) s[pos] = static_cast<char>(rng() & 0xff); break;
        case 3: s.resize(pos); break;
      }
    }
    std::unique_ptr<Module> m;
    Status st = parse_text(s, "fuzz", &m);
    if (!st.is_ok()) {
      assert_true(st.code() == Code::Parse || st.code() == Code::LimitExceeded);
      assert_true(st.message().rfind("fuzz", 0) == 0);
      continue;
    }
    ++parsed;
    std::string once = print_text(*m);
    std::unique_ptr<Module> m2;
    Status st2 = parse_text(once, "fuzz", &m2);
    if (!st2) fail_msg("printed text does not parse: %s\n%s", st2.message().c_str(), once.c_str());
    std::string twice = print_text(*m2);
    if (once != twice) fail_msg("unstable:\n%s\n---\n%s", once.c_str(), twice.c_str());
  }
  assert_true(parsed > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float_round_trip),
      cmocka_unit_test(float_literal_forms),
      cmocka_unit_test(integer_literals),
      cmocka_unit_test(string_escapes),
      cmocka_unit_test(slot_layout),
      cmocka_unit_test(operands_versus_next_results),
      cmocka_unit_test(attributes),
      cmocka_unit_test(params_and_constexprs),
      cmocka_unit_test(types),
      cmocka_unit_test(names),
      cmocka_unit_test(builder_module_prints_and_reparses),
      cmocka_unit_test(locations),
      cmocka_unit_test(visibility),
      cmocka_unit_test(scoped_names_in_built_modules),
      cmocka_unit_test(comments_anywhere),
      cmocka_unit_test(deep_nesting),
      cmocka_unit_test(empty_and_tokens),
      cmocka_unit_test(arbitrary_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
