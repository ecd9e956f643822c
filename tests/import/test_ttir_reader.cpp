// Unit tests of the TTIR reader (src/import/triton): telling TTIR from Tri's text, error
// messages for unsupported ops, libdevice functions and types and for malformed text (each naming
// the TTIR line and column, and the Python line when there is one), locations, and that no
// prefix of a real fixture crashes the reader.
#include <memory>
#include <string>

#include "import/triton/ttir.h"
#include "ir/limits.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "test_main.h"

using namespace tri;

namespace {

std::string fixture(const std::string& name) {
  std::string text = tri_test::read_file(tri_test::source_path("tests/import/ttir/" + name + ".ttir"));
  if (text.empty()) fail_msg("cannot read fixture %s", name.c_str());
  return text;
}

Status import(const std::string& text, std::unique_ptr<ir::Module>* m) { return import::import_ttir(text, "t.ttir", m); }

void replace_once(std::string* s, const std::string& from, const std::string& to) {
  size_t at = s->find(from);
  if (at == std::string::npos) fail_msg("the fixture has no '%s'", from.c_str());
  s->replace(at, from.size(), to);
}

// 1-based line of the first occurrence of `what` in `text`.
int line_of(const std::string& text, const std::string& what) {
  size_t at = text.find(what);
  if (at == std::string::npos) fail_msg("no '%s' in the text", what.c_str());
  int line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  return line;
}

void expect_error(const Status& st, Code code, const std::string& starts, const std::string& contains) {
  if (st.is_ok()) fail_msg("expected an error starting '%s'", starts.c_str());
  if (st.code() != code) fail_msg("expected code %s, got %s: %s", code_name(code), code_name(st.code()), st.message().c_str());
  if (st.message().rfind(starts, 0) != 0)
    fail_msg("the message does not start with '%s': %s", starts.c_str(), st.message().c_str());
  if (st.message().find(contains) == std::string::npos)
    fail_msg("the message does not contain '%s': %s", contains.c_str(), st.message().c_str());
}

void test_detection(void**) {
  auto is = [](const std::string& s) { return import::looks_like_ttir(s.data(), s.size()); };
  assert_true(is("module {\n}"));
  assert_true(is("  // a comment\n#loc = loc(\"a.py\":1:1)\nmodule {}"));
  assert_true(is("module attributes {\"ttg.num-warps\" = 4 : i32} {"));
  assert_true(is("tt.func public @k() {"));
  assert_true(is(fixture("vadd")));
  assert_false(is("kernel @vadd(%x: ptr<f32>) {\n  return\n}"));
  assert_false(is("// module\nfunc @f() -> () {"));
  assert_false(is("modules"));
  assert_false(is(""));
  assert_false(is("   \n// only a comment"));
}

void test_all_fixtures_verify(void**) {
  for (const char* name : {"vadd", "softmax", "layer_norm_fwd", "matmul", "gelu", "reduce_scan", "atomics", "attn_fwd",
                           "control", "checked_sqrt", "dropout", "layer_norm_bwd_dx", "layer_norm_bwd_dwdb",
                           "matmul_tf32", "early_exit", "clipped_window", "descriptor", "descriptor_gather",
                           "descriptor_arg", "gather_clamp", "libdevice"}) {
    std::unique_ptr<ir::Module> m;
    Status st = import(fixture(name), &m);
    if (!st) fail_msg("%s: %s", name, st.message().c_str());
    st = ir::verify(*m);
    if (!st) fail_msg("%s does not verify: %s", name, st.message().c_str());
    // The imported module's canonical text reads back to the same text.
    std::string t1 = ir::print_text(*m);
    std::unique_ptr<ir::Module> m2;
    st = ir::parse_text(t1, "printed", &m2);
    if (!st) fail_msg("%s: the printed import does not parse: %s", name, st.message().c_str());
    assert_string_equal(ir::print_text(*m2).c_str(), t1.c_str());
  }
}

void test_locations(void**) {
  std::unique_ptr<ir::Module> m;
  assert_true(import(fixture("vadd"), &m).is_ok());
  assert_string_equal(m->source_name.c_str(), "tests/import/kernels.py");
  const ir::Function* f = m->find("add_kernel");
  assert_non_null(f);
  assert_true(f->is_kernel);
  assert_int_equal(f->loc.line, 12);  // `def add_kernel(...)` (Triton locates the function there)
  assert_int_equal(f->params[0].align, 16);
  assert_int_equal(f->params[3].divisible, 0);
  {
    // tt.divisibility on an integer argument becomes its divisible fact.
    std::string text = fixture("vadd");
    replace_once(&text, "%n: i32 loc(", "%n: i32 {tt.divisibility = 16 : i32} loc(");
    std::unique_ptr<ir::Module> m2;
    assert_true(import(text, &m2).is_ok());
    assert_int_equal(m2->find("add_kernel")->params[3].divisible, 16);
    assert_int_equal(m2->find("add_kernel")->params[3].align, 0);
    assert_true(ir::print_text(*m2).find("%n: i32 {divisible=16}") != std::string::npos);
  }
  int loads = 0;
  for (const ir::OpData& op : f->ops) {
    if (op.code != ir::Opcode::Load) continue;
    // x = tl.load(...) on line 16, y = tl.load(...) on line 17, both at column 9.
    assert_int_equal(op.loc.line, 16 + loads);
    assert_int_equal(op.loc.col, 9);
    ++loads;
  }
  assert_int_equal(loads, 2);
  // Code inlined from Triton's library (tl.sum in standard.py) is located at the user's call.
  assert_true(import(fixture("softmax"), &m).is_ok());
  f = m->find("softmax_kernel");
  for (const ir::OpData& op : f->ops)
    if (op.code == ir::Opcode::Reduce) assert_true(op.loc.line == 31 || op.loc.line == 33);

  // Without locations, ops are located at their TTIR lines and the module keeps the TTIR's name.
  std::string text = fixture("vadd"), bare;
  for (size_t i = 0; i < text.size();) {
    size_t at = text.find(" loc(", i);
    if (at == std::string::npos) {
      bare += text.substr(i);
      break;
    }
    bare += text.substr(i, at - i);
    int depth = 0;
    size_t j = at + 4;
    for (; j < text.size(); ++j) {
      if (text[j] == '(') ++depth;
      if (text[j] == ')' && --depth == 0) break;
    }
    i = j + 1;
  }
  std::string no_aliases;
  for (size_t i = 0; i < bare.size();) {
    size_t eol = bare.find('\n', i);
    if (eol == std::string::npos) eol = bare.size();
    if (bare[i] != '#') no_aliases += bare.substr(i, eol - i) + "\n";
    i = eol + 1;
  }
  Status st = import(no_aliases, &m);
  if (!st) fail_msg("%s", st.message().c_str());
  assert_string_equal(m->source_name.c_str(), "t.ttir");
  f = m->find("add_kernel");
  for (const ir::OpData& op : f->ops)
    if (op.code == ir::Opcode::Load) {
      assert_int_equal(op.loc.line, line_of(no_aliases, "tt.load"));
      break;
    }
}

void test_dot_precision(void**) {
  // tf32 is kept for f32 inputs and dropped (ieee, the default, not printed) for f16 inputs.
  std::unique_ptr<ir::Module> m;
  assert_true(import(fixture("matmul_tf32"), &m).is_ok());
  assert_true(ir::print_text(*m).find("= dot[precision=tf32] ") != std::string::npos);
  assert_true(import(fixture("matmul"), &m).is_ok());
  std::string t = ir::print_text(*m);
  assert_true(t.find("= dot %") != std::string::npos);
  assert_true(t.find("precision") == std::string::npos);
  // An f16 accumulator (out_dtype=tl.float16) is refused with the reason.
  std::string text = fixture("attn_fwd");
  size_t at = text.find("inputPrecision = tf32 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>");
  assert_true(at != std::string::npos);
  text.replace(text.find("-> tensor<16x16xf32>", at), 20, "-> tensor<16x16xf16>");
  expect_error(import(text, &m), Code::Unsupported, "t.ttir:", "tt.dot with a f16 accumulator");
}

void test_dot_f8_imprecise_accumulation(void**) {
  // Triton's f8 dot with maxNumImpreciseAcc at least the block's K (its default, 2^30: no
  // promotion inside the dot) is precision=fast; a bound below K asks for promotion: ieee.
  std::unique_ptr<ir::Module> m;
  std::string text = tri_test::read_file(tri_test::source_path("tests/corpus/tutorials/ttir/matmul_fp8.ttir"));
  assert_false(text.empty());
  assert_true(import(text, &m).is_ok());
  assert_true(ir::print_text(*m).find("= dot[precision=fast] ") != std::string::npos);
  replace_once(&text, "maxNumImpreciseAcc = 1073741824", "maxNumImpreciseAcc = 32");
  assert_true(import(text, &m).is_ok());
  assert_true(ir::print_text(*m).find("precision=fast") == std::string::npos);
}

void test_bitcast_arrow(void**) {
  // tt.bitcast writes its types as `A -> B` (arith casts write `A to B`): both import.
  const std::string text = R"(module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<i32>) {
    %v = tt.load %x : !tt.ptr<f32>
    %b = tt.bitcast %v : f32 -> i32
    %c = arith.bitcast %b : i32 to f32
    %d = tt.bitcast %c : f32 -> i32
    tt.store %y, %d : !tt.ptr<i32>
    tt.return
  }
}
)";
  std::unique_ptr<ir::Module> m;
  Status st = import(text, &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  std::string t = ir::print_text(*m);
  assert_true(t.find("bitcast") != std::string::npos);
  assert_true(ir::verify(*m).is_ok());
}

void test_unknown_op(void**) {
  std::string text = fixture("vadd");
  replace_once(&text, "arith.addf %x_6", "arith.frobnicate %x_6");
  int line = line_of(text, "arith.frobnicate");
  std::unique_ptr<ir::Module> m;
  expect_error(import(text, &m), Code::Unsupported, "t.ttir:" + std::to_string(line) + ":5: error: ",
               "op 'arith.frobnicate' is not supported by the TTIR importer");
  // The Python line of `x + y` comes with it.
  expect_error(import(text, &m), Code::Unsupported, "t.ttir:", "(from tests/import/kernels.py:18:");
  // A known gap says why.
  text = fixture("vadd");
  replace_once(&text, "%2 = arith.addf %x_6, %y_8 : tensor<64xf32>",
               "%h = tt.histogram %offs_3 : tensor<64xi32> -> tensor<8xi32> loc(#loc10)\n"
               "    %2 = arith.addf %x_6, %y_8 : tensor<64xf32>");
  expect_error(import(text, &m), Code::Unsupported, "t.ttir:", "op 'tt.histogram' is not supported by the TTIR importer: Tri has no histogram op");
}

void test_unknown_libdevice(void**) {
  std::string text = fixture("gelu");
  replace_once(&text, "__nv_tanhf", "__nv_frobf");
  int line = line_of(text, "__nv_frobf");
  std::unique_ptr<ir::Module> m;
  expect_error(import(text, &m), Code::Unsupported, "t.ttir:" + std::to_string(line) + ":5: error: ",
               "libdevice function '__nv_frobf' has no Tri counterpart");
  expect_error(import(text, &m), Code::Unsupported, "t.ttir:", "(from tests/import/kernels.py:120:");
  // A libdevice function Tri has under another op: __nv_powf -> pow, __nv_atan2f -> math_call.
  text = fixture("gelu");
  replace_once(&text, "symbol = \"__nv_tanhf\"", "symbol = \"__nv_log1pf\"");
  Status st = import(text, &m);
  if (!st) fail_msg("%s", st.message().c_str());
  assert_true(ir::print_text(*m).find("math_call[name=\"log1p\"]") != std::string::npos);
}

void test_unsupported_types(void**) {
  std::unique_ptr<ir::Module> m;
  std::string text = fixture("vadd");
  replace_once(&text, "%x_ptr: !tt.ptr<f32>", "%x_ptr: !tt.ptr<f8E4M3FNUZ>");
  expect_error(import(text, &m), Code::Unsupported, "t.ttir:" + std::to_string(line_of(text, "f8E4M3FNUZ")) + ":",
               "type 'f8E4M3FNUZ' has no Tri counterpart");
  text = fixture("vadd");
  replace_once(&text, "%x_ptr: !tt.ptr<f32>", "%x_ptr: !tt.ptr<tensor<16x16xf32>>");
  expect_error(import(text, &m), Code::Unsupported, "t.ttir:" + std::to_string(line_of(text, "tt.ptr<tensor")) + ":",
               "block pointer");
  text = fixture("vadd");
  replace_once(&text, "tensor<64xi32> loc(#loc18)", "tensor<2x2x2x2x4xi32> loc(#loc18)");
  expect_error(import(text, &m), Code::Unsupported, "t.ttir:", "a tensor of rank 5");
}

void test_malformed(void**) {
  std::unique_ptr<ir::Module> m;
  std::string text = fixture("vadd");
  replace_once(&text, "arith.addf %x_6, %y_8", "arith.addf %x_6, %nothere");
  int line = line_of(text, "%nothere");
  expect_error(import(text, &m), Code::Parse, "t.ttir:" + std::to_string(line) + ":", "use of undefined value %nothere");
  text = fixture("vadd");
  replace_once(&text, "arith.addf %x_6, %y_8 :", "arith.addf %x_6, %y_8");
  expect_error(import(text, &m), Code::Parse, "t.ttir:", "expected ':' before the type");
  text = fixture("vadd");
  replace_once(&text, "#loc11 = ", "#loc99 = ");
  // In file:line:col form, at the alias's first use (issue 29, point 13).
  expect_error(import(text, &m), Code::Parse, "t.ttir:" + std::to_string(line_of(text, "#loc11)")) + ":",
               "location alias #loc11 is used but never defined");
  expect_error(import("module {\n  tt.func public @k() {\n    tt.return\n", &m), Code::Parse, "t.ttir:4:",
               "expected '}' closing a region");
  expect_error(import("module {\n}\n", &m), Code::Parse, "t.ttir: error: ", "no tt.func");
  expect_error(import("module { tt.func public @k() { %0 = \"tt.frob\"() : () -> () tt.return } }", &m),
               Code::Unsupported, "t.ttir:1:", "generic form");
}

// A kernel around `body` (TTIR ops), with arguments for the snippets below.
std::string kernel_with(const std::string& body) {
  return "module {\n  tt.func public @k(%x: !tt.ptr<f32>, %i: !tt.ptr<i32>, %n: i32, %f: f32) {\n" + body +
         "    tt.return\n  }\n}\n";
}

std::string imported(const std::string& text) {
  std::unique_ptr<ir::Module> m;
  Status st = import(text, &m);
  if (!st) fail_msg("%s", st.message().c_str());
  st = ir::verify(*m);
  if (!st) fail_msg("the import does not verify: %s", st.message().c_str());
  return ir::print_text(*m);
}

// tl.multiple_of / tl.max_contiguous: TTIR carries them as attributes of the op that makes the
// value (the persistent-matmul tutorial's `tl.where(offs < M, offs, 0)`); they become
// multiple_of and max_contiguous of its result, so the loads through it are vectorized.
void test_value_hints(void**) {
  std::string body =
      "    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>\n"
      "    %ns = tt.splat %n : i32 -> tensor<128xi32>\n"
      "    %z = arith.constant dense<0> : tensor<128xi32>\n"
      "    %c = arith.cmpi slt, %r, %ns : tensor<128xi32>\n"
      "    %o = arith.select %c, %r, %z {tt.contiguity = dense<128> : tensor<1xi32>, "
      "tt.divisibility = dense<128> : tensor<1xi32>} : tensor<128xi1>, tensor<128xi32>\n"
      "    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>\n"
      "    %p = tt.addptr %xs, %o : tensor<128x!tt.ptr<f32>>, tensor<128xi32>\n"
      "    %v = tt.load %p : tensor<128x!tt.ptr<f32>>\n"
      "    tt.store %p, %v : tensor<128x!tt.ptr<f32>>\n";
  const std::string out = imported(kernel_with(body));
  assert_true(out.find("multiple_of[values=[128], checked=false]") != std::string::npos);
  assert_true(out.find("max_contiguous[values=[128], checked=false]") != std::string::npos);
}

void test_descriptor_syntax(void**) {
  // Triton 3.6 writes the block type as a tensor (`!tt.tensordesc<tensor<8x32xf32>>`), 3.9
  // without (`!tt.tensordesc<8x32xf32>`); both, with integer elements that say their sign.
  for (const char* ty : {"tensor<8x32xf32>", "8x32xf32"}) {
    std::string t(ty);
    std::string body = "    %c1 = arith.constant 1 : i64\n    %c0 = arith.constant 0 : i32\n"
                       "    %s = arith.extsi %n : i32 to i64\n"
                       "    %d = tt.make_tensor_descriptor %x, [%n, %n], [%s, %c1] : <f32>, <" + t + ">\n"
                       "    %v = tt.descriptor_load %d[%c0, %c0] : !tt.tensordesc<" + t + "> -> tensor<8x32xf32>\n"
                       "    tt.descriptor_store %d[%c0, %c0], %v : !tt.tensordesc<" + t + ">, tensor<8x32xf32>\n"
                       "    tt.descriptor_reduce max, %d[%c0, %c0], %v : !tt.tensordesc<" + t + ">, tensor<8x32xf32>\n";
    std::string out = imported(kernel_with(body));
    assert_true(out.find("= load %") != std::string::npos);
    assert_true(out.find("atomic[kind=max, order=relaxed]") != std::string::npos);
    // What a descriptor promises, as checked facts (the printer leaves checked=true out): a
    // 16-byte aligned base, and f32 rows of a whole number of 16-byte units.
    assert_true(out.find("multiple_of[values=[16]] %x") != std::string::npos);
    assert_true(out.find("multiple_of[values=[4]] %s") != std::string::npos);
  }
  // ui32 elements: min and max reductions compare unsigned.
  std::string body = "    %c1 = arith.constant 1 : i64\n    %c0 = arith.constant 0 : i32\n"
                     "    %d = tt.make_tensor_descriptor %i, [%n], [%c1] : <i32>, <tensor<64xui32>>\n"
                     "    %v = tt.descriptor_load %d[%c0] : !tt.tensordesc<tensor<64xui32>> -> tensor<64xi32>\n"
                     "    tt.descriptor_reduce min, %d[%c0], %v : !tt.tensordesc<tensor<64xui32>>, tensor<64xi32>\n";
  assert_true(imported(kernel_with(body)).find("atomic[kind=umin, order=relaxed]") != std::string::npos);
  // A TensorDescriptor argument as Triton 3.6 names its shape and strides (3.9 writes
  // %xd.shape.0 ...): the descriptor's parameter becomes its base pointer, with the alignment
  // Triton's TensorDescriptor asserts.
  std::string text = "module {\n  tt.func public @k(%xd: !tt.tensordesc<tensor<16x32xf32>>, %xd_0: i32, %xd_1: i32, "
                     "%xd_2: i64, %xd_3: i64) {\n    %c0 = arith.constant 0 : i32\n"
                     "    %v = tt.descriptor_load %xd[%c0, %c0] : !tt.tensordesc<tensor<16x32xf32>> -> tensor<16x32xf32>\n"
                     "    tt.descriptor_store %xd[%c0, %c0], %v : !tt.tensordesc<tensor<16x32xf32>>, tensor<16x32xf32>\n"
                     "    tt.return\n  }\n}\n";
  std::string out = imported(text);
  assert_true(out.find("kernel @k(%xd: ptr<f32> {align=16}, %xd_0: i32, %xd_1: i32, %xd_2: i64 {divisible=4}, "
                       "%xd_3: i64)") != std::string::npos);
}

void test_descriptors_per_function(void**) {
  // A descriptor's placeholder is a value id of its function: a later function's value of the
  // same id is an ordinary value.
  std::string kernel_a = "  tt.func public @a(%x: !tt.ptr<f32>, %n: i32) {\n    %c1 = arith.constant 1 : i64\n"
                         "    %d = tt.make_tensor_descriptor %x, [%n], [%c1] : <f32>, <64xf32>\n    tt.return\n  }\n";
  std::string kernel_b = "  tt.func public @b(%x: !tt.ptr<f32>, %n: i32) {\n";
  for (int i = 0; i < 12; ++i) kernel_b += "    %v" + std::to_string(i) + " = arith.addi %n, %n : i32\n";
  for (int i = 0; i < 12; ++i) kernel_b += "    %w" + std::to_string(i) + " = arith.addi %v" + std::to_string(i) + ", %n : i32\n";
  kernel_b += "    tt.return\n  }\n";
  imported("module {\n" + kernel_a + kernel_b + "}\n");
}

void test_refused_with_location(void**) {
  // Each class of what the importer refuses names the TTIR op, its line and column, and why.
  std::unique_ptr<ir::Module> m;
  auto at = [](int line, int col) { return "t.ttir:" + std::to_string(line) + ":" + std::to_string(col) + ": error: "; };
  // An unknown op, and a known one Tri lacks.
  expect_error(import(kernel_with("    %h = tt.frobnicate %n : i32\n"), &m), Code::Unsupported, at(3, 5),
               "op 'tt.frobnicate' is not supported by the TTIR importer");
  expect_error(import(kernel_with("    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>\n"
                                  "    %h = tt.histogram %r : tensor<64xi32> -> tensor<8xi32>\n"),
                      &m),
               Code::Unsupported, at(4, 5), "op 'tt.histogram' is not supported by the TTIR importer: Tri has no histogram op");
  // An attribute value Tri has no counterpart for.
  expect_error(import(kernel_with("    %y = tt.clampf %f, %f, %f, propagateNan = some : f32\n"), &m), Code::Unsupported,
               at(3, 5), "tt.clampf with propagateNan = some");
  expect_error(import(kernel_with("    %c1 = arith.constant 1 : i64\n"
                                  "    %d = tt.make_tensor_descriptor %x, [%n], [%c1] {padding = 3 : i32} : <f32>, <64xf32>\n"),
                      &m),
               Code::Unsupported, at(4, 5), "a padding option other than zero (1) and nan (2)");
  expect_error(import(kernel_with("    %c1 = arith.constant 1 : i64\n    %c0 = arith.constant 0 : i32\n"
                                  "    %d = tt.make_tensor_descriptor %i, [%n], [%c1] : <i32>, <64xi32>\n"
                                  "    %v = tt.descriptor_load %d[%c0] : !tt.tensordesc<64xi32> -> tensor<64xi32>\n"
                                  "    tt.descriptor_reduce inc, %d[%c0], %v : !tt.tensordesc<64xi32>, tensor<64xi32>\n"),
                      &m),
               Code::Unsupported, at(7, 5), "tt.descriptor_reduce inc is not imported");
  expect_error(import(kernel_with("    %c3 = arith.constant 3 : i32\n    %c9 = arith.constant 9 : i64\n"
                                  "    %ok = tt.atomic_poll acquire, gpu, %i, %c3 timeout %c9 : !tt.ptr<i32>, i32 -> i1\n"),
                      &m),
               Code::Unsupported, at(5, 5), "tt.atomic_poll with a timeout");
  expect_error(import(kernel_with("    %y = tt.extern_elementwise %f {libname = \"\", libpath = \"\", pure = true, "
                                  "symbol = \"__nv_erfinvf\"} : (f32) -> f32\n"),
                      &m),
               Code::Unsupported, at(3, 5), "libdevice function '__nv_erfinvf' has no Tri counterpart");
  // Types: a descriptor of rank 5, a gather that would need rank 5, a descriptor passed on.
  expect_error(import(kernel_with("    %c1 = arith.constant 1 : i64\n"
                                  "    %d = tt.make_tensor_descriptor %x, [%n, %n, %n, %n, %n], [%c1, %c1, %c1, %c1, %c1] "
                                  ": <f32>, <2x2x2x2x16xf32>\n"),
                      &m),
               Code::Unsupported, at(4, 97), "a tensor descriptor of rank 5 (Tri's blocks have rank 1 to 4) (in 'tt.make_tensor_descriptor')");
  expect_error(import(kernel_with("    %s = tt.splat %f : f32 -> tensor<2x2x2x4xf32>\n"
                                  "    %j = tt.splat %n : i32 -> tensor<2x2x2x4xi32>\n"
                                  "    %g = tt.gather %s[%j] {axis = 3 : i32} : (tensor<2x2x2x4xf32>, tensor<2x2x2x4xi32>) "
                                  "-> tensor<2x2x2x4xf32>\n"),
                      &m),
               Code::Unsupported, at(5, 5), "tt.gather of a rank-4 tensor");
  expect_error(import(kernel_with("    %c1 = arith.constant 1 : i64\n"
                                  "    %d = tt.make_tensor_descriptor %x, [%n], [%c1] : <f32>, <64xf32>\n"
                                  "    %e = arith.select %true, %d, %d : !tt.tensordesc<64xf32>\n"),
                      &m),
               Code::Parse, at(5, 23), "use of undefined value %true");
  expect_error(import(kernel_with("    %c1 = arith.constant 1 : i64\n    %t = arith.constant true\n"
                                  "    %d = tt.make_tensor_descriptor %x, [%n], [%c1] : <f32>, <64xf32>\n"
                                  "    %e = arith.select %t, %d, %d : !tt.tensordesc<64xf32>\n"),
                      &m),
               Code::Unsupported, at(6, 27), "tensor descriptor %d used by 'arith.select'");
  expect_error(import("module {\n  tt.func private @f(%d: !tt.tensordesc<64xf32>) {\n    tt.return\n  }\n}\n", &m),
               Code::Unsupported, at(2, 3), "tensor descriptor parameter %d is not followed by its shape");
  expect_error(import(kernel_with("    %c1 = arith.constant 1 : i64\n"
                                  "    %d = tt.make_tensor_descriptor %x, [%n], [%c1] : <f32>, <64xf8E4M3FNUZ>\n"),
                      &m),
               Code::Unsupported, at(4, 61), "a tensor descriptor of element type 'f8E4M3FNUZ' (in 'tt.make_tensor_descriptor')");
  // Inline PTX imports (GPU only); a dot on microscaling formats does not.
  std::string asm_text = imported(kernel_with("    %y = tt.elementwise_inline_asm \"mov.b32 $0, $1;\" {constraints = "
                                              "\"=r,r\", packed_element = 1 : i32, pure = true} %f : f32 -> f32\n"));
  assert_true(asm_text.find("inline_asm[asm=\"mov.b32 $0, $1;\", constraints=\"=r,r\"] %f : f32") != std::string::npos);
}

void test_prefixes_never_crash(void**) {
  // Every prefix of a real fixture (at a stride, and around each line start) either imports or
  // fails with a located error of a reader's code; never a crash or another code.
  for (const char* name : {"control", "reduce_scan", "early_exit", "descriptor_gather"}) {
    std::string text = fixture(name);
    for (size_t n = 0; n < text.size(); n += (n % 97 == 0 ? 1 : 13)) {
      std::unique_ptr<ir::Module> m;
      Status st = import(text.substr(0, n), &m);
      if (st.is_ok()) {
        Status v = ir::verify(*m);
        assert_true(v.is_ok() || v.code() == Code::Verify);
        continue;
      }
      if (st.code() != Code::Parse && st.code() != Code::Unsupported && st.code() != Code::LimitExceeded)
        fail_msg("%s[:%zu]: unexpected code %s: %s", name, n, code_name(st.code()), st.message().c_str());
      if (st.message().rfind("t.ttir", 0) != 0) fail_msg("%s[:%zu]: message without the source: %s", name, n, st.message().c_str());
    }
  }
}

// One nesting limit for TTIR and Tri's text (issue 29, point 12): 64 nested loops are read by
// both, 65 by neither.
std::string nested_ttir(int loops) {
  std::string text = "module {\n  tt.func public @k(%n: i32) {\n    %c0 = arith.constant 0 : i32\n"
                     "    %c1 = arith.constant 1 : i32\n";
  for (int i = 0; i < loops; ++i) text += "scf.for %i" + std::to_string(i) + " = %c0 to %n step %c1 : i32 {\n";
  for (int i = 0; i < loops; ++i) text += "}\n";
  return text + "tt.return\n  }\n}\n";
}

std::string nested_tri(int loops) {
  std::string text = "kernel @k(%n: i32) {\n  %c0 = const[value=0] : i32\n  %c1 = const[value=1] : i32\n";
  for (int i = 0; i < loops; ++i) text += "for %c0, %n, %c1 {\n^(%i" + std::to_string(i) + ": i32):\n";
  for (int i = 0; i < loops; ++i) text += "yield\n}\n";
  return text + "return\n}\n";
}

void test_one_nesting_limit(void**) {
  std::unique_ptr<ir::Module> m;
  Status st = import(nested_ttir(ir::kMaxNesting), &m);
  if (!st.is_ok()) fail_msg("64 nested scf.for: %s", st.message().c_str());
  assert_true(ir::verify(*m).is_ok());
  expect_error(import(nested_ttir(ir::kMaxNesting + 1), &m), Code::LimitExceeded, "t.ttir:", "kMaxNesting");
  std::unique_ptr<ir::Module> t;
  st = ir::parse_text(nested_tri(ir::kMaxNesting), "t.tri", &t);
  if (!st.is_ok()) fail_msg("64 nested for: %s", st.message().c_str());
  st = ir::parse_text(nested_tri(ir::kMaxNesting + 1), "t.tri", &t);
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(Code::LimitExceeded));
}

void test_nesting_limit(void**) {
  std::string text = "module {\n  tt.func public @k(%c: i1) {\n";
  for (int i = 0; i < 80; ++i) text += "scf.if %c {\n";
  for (int i = 0; i < 80; ++i) text += "}\n";
  text += "tt.return\n  }\n}\n";
  std::unique_ptr<ir::Module> m;
  expect_error(import(text, &m), Code::LimitExceeded, "t.ttir:", "kMaxNesting");
  // Types and attributes nested without end are refused before the stack runs out.
  std::string deep = "module {\n  tt.func public @k(%p: ";
  for (int i = 0; i < 100000; ++i) deep += "!tt.ptr<";
  expect_error(import(deep, &m), Code::Parse, "t.ttir:2:", "types nested more than 16 deep");
  deep = "module attributes {a = ";
  for (int i = 0; i < 100000; ++i) deep += "#x<a = ";
  expect_error(import(deep, &m), Code::Parse, "t.ttir:1:", "attributes nested more than 16 deep");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_detection),         cmocka_unit_test(test_all_fixtures_verify),
      cmocka_unit_test(test_locations),         cmocka_unit_test(test_unknown_op),
      cmocka_unit_test(test_dot_precision), cmocka_unit_test(test_dot_f8_imprecise_accumulation),     cmocka_unit_test(test_bitcast_arrow),
      cmocka_unit_test(test_unknown_libdevice), cmocka_unit_test(test_unsupported_types),
      cmocka_unit_test(test_malformed),         cmocka_unit_test(test_prefixes_never_crash),
      cmocka_unit_test(test_nesting_limit),     cmocka_unit_test(test_descriptor_syntax),
      cmocka_unit_test(test_value_hints),
      cmocka_unit_test(test_refused_with_location), cmocka_unit_test(test_descriptors_per_function),
      cmocka_unit_test(test_one_nesting_limit),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
