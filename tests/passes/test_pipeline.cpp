// Specialization and canonicalization, checked on IR text: each case gives a module, the
// constexpr values, and the expected canonical text of the specialized kernel (compared after
// both sides go through the printer, so only meaning and order matter, not spacing).
#include <memory>
#include <string>
#include <vector>

#include "ir/text.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;
using namespace tri::passes;

static std::unique_ptr<Module> parse_ok(const std::string& text) {
  std::unique_ptr<Module> m;
  Status st = parse_text(text, "t.tri", &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  st = verify(*m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return m;
}

static std::string canon(const std::string& text) {
  std::unique_ptr<Module> m;
  Status st = parse_text(text, "expected.tri", &m);
  if (!st.is_ok()) fail_msg("expected text does not parse: %s", st.message().c_str());
  return print_text(*m);
}

static Status prepare(const Module& m, const std::vector<ConstexprBinding>& values, std::unique_ptr<Module>* out,
                      const std::vector<ArgFacts>& facts = {}) {
  PipelineOptions opt;
  opt.verify_each = true;
  return prepare_kernel(m, "k", values, facts, opt, out);
}

static void expect_error(const Status& st, Code code, const char* text) {
  if (st.is_ok()) fail_msg("expected an error containing '%s'", text);
  if (st.message().find(text) == std::string::npos) fail_msg("message '%s' lacks '%s'", st.message().c_str(), text);
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(code));
}

static const char* kBlockKernel = R"(
kernel @k(%x: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 128, SCALE: f32 = 2.0) {
  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %s = const[value=SCALE] : <BLOCK x f32>
  %xb = splat %x : <BLOCK x ptr<f32>>
  %p = addptr %xb, %r : <BLOCK x ptr<f32>>
  %v = load %p : <BLOCK x f32>
  %w = mul %v, %s : <BLOCK x f32>
  store %p, %w
  return
}
)";

static void specializes_types_and_attributes(void** state) {
  auto m = parse_ok(kBlockKernel);
  std::unique_ptr<Module> s;
  Status st = prepare(*m, {{"BLOCK", Attr::of_int(64)}}, &s);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  std::string want = canon(R"(
kernel @k(%x: ptr<f32>, %n: i32) constexpr(BLOCK: i32 = 64, SCALE: f32 = 2.0) {
  %r = arange[start=0, end=64] : <64 x i32>
  %s = const[value=2.0] : <64 x f32>
  %xb = splat %x : <64 x ptr<f32>>
  %p = addptr %xb, %r : <64 x ptr<f32>>
  %v = load %p : <64 x f32>
  %w = mul %v, %s : <64 x f32>
  store %p, %w
  return
}
)");
  assert_string_equal(print_text(*s).c_str(), want.c_str());
  // The source module is untouched.
  assert_true(print_text(*m).find("<BLOCK x f32>") != std::string::npos);
}

static void reports_bad_bindings(void** state) {
  auto m = parse_ok(kBlockKernel);
  std::unique_ptr<Module> s;
  expect_error(prepare(*m, {{"BLOK", Attr::of_int(64)}}, &s), Code::Specialize,
               "kernel @k has no constexpr 'BLOK' (its constexprs: BLOCK, SCALE)");
  expect_error(prepare(*m, {{"BLOCK", Attr::of_int(100)}}, &s), Code::Specialize,
               "constexpr 'BLOCK' is used as a block dimension, so it must be a power of two");
  expect_error(prepare(*m, {{"BLOCK", Attr::of_float(64.0)}}, &s), Code::Specialize,
               "constexpr 'BLOCK' of kernel @k is i32, but the value given");
  expect_error(prepare(*m, {{"BLOCK", Attr::of_int(64)}, {"BLOCK", Attr::of_int(32)}}, &s), Code::Specialize,
               "given twice");
  expect_error(prepare(*m, {}, &s, {{0, 3, 0}}), Code::Specialize, "needs a pointer parameter and a power of two");
  expect_error(prepare(*m, {}, &s, {{7, 16, 0}}), Code::Specialize, "argument facts for parameter 7");
  auto none = parse_ok("kernel @k(%x: ptr<f32>) constexpr(N: i32) {\n  return\n}\n");
  expect_error(prepare(*none, {}, &s), Code::Specialize, "kernel @k needs a value for constexpr 'N'");
  expect_error(prepare_kernel(*m, "nope", {}, {}, {}, &s), Code::NotFound, "no kernel named @nope");
}

static void facts_are_recorded(void** state) {
  auto m = parse_ok(kBlockKernel);
  std::unique_ptr<Module> s;
  Status st = prepare(*m, {}, &s, {{0, 16, 0}, {1, 0, 16}});
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  assert_int_equal(s->functions[0]->params[0].align, 16);
  assert_int_equal(s->functions[0]->params[1].divisible, 16);
}

static const char* kCausalKernel = R"(
kernel @k(%x: ptr<f32>) constexpr(CAUSAL: i1 = false) {
  %c = const[value=CAUSAL] : i1
  %one = const[value=1.0] : f32
  %two = const[value=2.0] : f32
  %v = if %c {
    yield %one
  } {
    yield %two
  } : f32
  store %x, %v
  return
}
)";

static void folds_if_on_constexpr(void** state) {
  auto m = parse_ok(kCausalKernel);
  std::unique_ptr<Module> s;
  Status st = prepare(*m, {{"CAUSAL", Attr::of_int(1)}}, &s);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  std::string want = canon(R"(
kernel @k(%x: ptr<f32>) constexpr(CAUSAL: i1 = true) {
  %one = const[value=1.0] : f32
  store %x, %one
  return
}
)");
  assert_string_equal(print_text(*s).c_str(), want.c_str());
  st = prepare(*m, {}, &s);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  assert_true(print_text(*s).find("store %x, %two") != std::string::npos);
}

static void folds_integer_constants_and_cse(void** state) {
  auto m = parse_ok(R"(
kernel @k(%x: ptr<i32>, %n: i32) constexpr(B: i32 = 8) {
  %b = const[value=B] : i32
  %two = const[value=2] : i32
  %b2 = mul %b, %two : i32
  %a1 = add %n, %b2 : i32
  %a2 = add %n, %b2 : i32
  %s = add %a1, %a2 : i32
  %dead = mul %s, %s : i32
  store %x, %s
  return
}
)");
  std::unique_ptr<Module> s;
  Status st = prepare(*m, {}, &s);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  std::string want = canon(R"(
kernel @k(%x: ptr<i32>, %n: i32) constexpr(B: i32 = 8) {
  %b2 = const[value=16] : i32
  %a1 = add %n, %b2 : i32
  %s = add %a1, %a1 : i32
  store %x, %s
  return
}
)");
  assert_string_equal(print_text(*s).c_str(), want.c_str());
}

static void reports_rules_that_need_values(void** state) {
  auto m = parse_ok(R"(
kernel @k(%x: ptr<f32>) constexpr(A: i32 = 4, B: i32 = 8) {
  %v = const[value=0.0] : <A x f32>
  %w = reshape %v : <B x f32>
  %xb = splat %x : <B x ptr<f32>>
  store %xb, %w
  return
}
)");
  std::unique_ptr<Module> s;
  Status st = prepare(*m, {}, &s);
  expect_error(st, Code::Verify, "specialized with A=4, B=8");
  st = prepare(*m, {{"A", Attr::of_int(8)}}, &s);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
}

static void device_functions_follow_the_kernel(void** state) {
  auto m = parse_ok(R"(
func @twice(%v: <B x f32>) -> (<B x f32>) {
  %w = add %v, %v : <B x f32>
  return %w
}

kernel @k(%x: ptr<f32>) constexpr(B: i32 = 4) {
  %r = arange[start=0, end=B] : <B x i32>
  %xb = splat %x : <B x ptr<f32>>
  %p = addptr %xb, %r : <B x ptr<f32>>
  %v = load %p : <B x f32>
  %w = call[callee=@twice] %v : <B x f32>
  store %p, %w
  return
}
)");
  std::unique_ptr<Module> s;
  Status st = prepare(*m, {{"B", Attr::of_int(16)}}, &s);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  assert_int_equal(s->functions.size(), 2);
  assert_string_equal(s->functions[0]->name.c_str(), "k");
  assert_true(print_text(*s).find("func @twice(%v: <16 x f32>) -> (<16 x f32>)") != std::string::npos);
}

// A K loop of dot whose operand loads run an iteration ahead at num_stages 2 (pipeline_loads.h):
// the first loads before the loop masked by "the loop runs", the next ones at the end of the
// body masked by "there is a next iteration", carried as two more loop values.
static const char* kKLoop = R"(
kernel @k(%a: ptr<f16>, %b: ptr<f16>, %c: ptr<f32>, %K: i32) {
  %ri = arange[start=0, end=16] : <16 x i32>
  %row = expand_dims[axis=1] %ri : <16 x 1 x i32>
  %col = expand_dims[axis=0] %ri : <1 x 16 x i32>
  %s16 = const[value=16] : <16 x 1 x i32>
  %roff = mul %row, %s16 : <16 x 1 x i32>
  %rb = broadcast %roff : <16 x 16 x i32>
  %cb = broadcast %col : <16 x 16 x i32>
  %off = add %rb, %cb : <16 x 16 x i32>
  %ab = splat %a : <16 x 16 x ptr<f16>>
  %bb = splat %b : <16 x 16 x ptr<f16>>
  %pa0 = addptr %ab, %off : <16 x 16 x ptr<f16>>
  %pb0 = addptr %bb, %off : <16 x 16 x ptr<f16>>
  %acc0 = const[value=0.0] : <16 x 16 x f32>
  %c0 = const[value=0] : i32
  %c16 = const[value=16] : i32
  %step = const[value=256] : <16 x 16 x i32>
  %acc, %pa_end, %pb_end = for %c0, %K, %c16, %acc0, %pa0, %pb0 {
  ^(%k: i32, %acc_in: <16 x 16 x f32>, %pa: <16 x 16 x ptr<f16>>, %pb: <16 x 16 x ptr<f16>>):
    %kv = splat %k : <16 x 16 x i32>
    %kk = add %kv, %cb : <16 x 16 x i32>
    %Kv = splat %K : <16 x 16 x i32>
    %m = cmp[pred=slt] %kk, %Kv : <16 x 16 x i1>
    %x = load %pa, mask=%m : <16 x 16 x f16>
    %y = load %pb : <16 x 16 x f16>
    %acc_out = dot %x, %y, %acc_in : <16 x 16 x f32>
    %pa2 = addptr %pa, %step : <16 x 16 x ptr<f16>>
    %pb2 = addptr %pb, %step : <16 x 16 x ptr<f16>>
    yield %acc_out, %pa2, %pb2
  } : <16 x 16 x f32>, <16 x 16 x ptr<f16>>, <16 x 16 x ptr<f16>>
  %cb2 = splat %c : <16 x 16 x ptr<f32>>
  %pc = addptr %cb2, %off : <16 x 16 x ptr<f32>>
  store %pc, %acc
  return
}
)";

static std::string prepare_stages(const std::string& text, int stages) {
  std::unique_ptr<Module> m = parse_ok(text);
  PipelineOptions opt;
  opt.verify_each = true;
  opt.num_stages = stages;
  std::unique_ptr<Module> s;
  Status st = prepare_kernel(*m, "k", {}, {}, opt, &s);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return print_text(*s);
}

static int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

static void pipelines_loads_that_feed_dot(void**) {
  const std::string one = prepare_stages(kKLoop, 1), two = prepare_stages(kKLoop, 2);
  assert_int_equal(count(one, "= load "), 2);
  assert_int_equal(count(two, "= load "), 4);  // two before the loop, two at the end of the body
  // Five carried values: acc, the two pointers, the two loaded tiles.
  assert_true(two.find("%acc, %pa_end, %pb_end, %") != std::string::npos);
  size_t body = two.find("= for ");
  assert_true(body != std::string::npos);
  // The first loads come before the loop, masked by "the loop runs" (0 < K and 16 > 0).
  assert_true(two.find("cmp[pred=slt] %c0, %K") < body);
  // The next ones are masked by "k + 16 < K and k + 16 > k"; the unmasked load of %pb gets that as its mask.
  assert_true(two.find("cmp[pred=sgt]", body) != std::string::npos);
  assert_int_equal(count(two.substr(body), "mask="), 2);
  // Three stages: two iterations' loads before the loop, one per load in the body, two tiles
  // carried per load: the loop takes lo, hi, step and seven inits.
  const std::string three = prepare_stages(kKLoop, 3);
  body = three.find("= for ");
  assert_int_equal(count(three.substr(0, body), "= load "), 4);
  assert_int_equal(count(three.substr(body), "= load "), 2);
  assert_true(three.find("%acc, %pa_end, %pb_end, %") != std::string::npos);
  assert_int_equal(count(three.substr(body, three.find("\n", body) - body), ", %"), 9);
}

static void leaves_loops_with_stores_alone(void**) {
  std::string text = kKLoop;
  const std::string yield = "    yield %acc_out, %pa2, %pb2";
  text.replace(text.find(yield), yield.size(),
               "    %cs = splat %c : <16 x 16 x ptr<f32>>\n    %cp = addptr %cs, %off : <16 x 16 x ptr<f32>>\n"
               "    store %cp, %acc_out\n" + yield);
  assert_int_equal(count(prepare_stages(text, 2), "= load "), 2);
}

// for[loads_ahead=true]: the iterations pass nothing through memory, so the loads of the next
// iteration may come before this one's store, and the loop with a store is pipelined like the
// plain K loop (fla's chunked kernels store a state per chunk while loading the next tiles).
static void pipelines_across_stores_when_loads_ahead(void**) {
  std::string text = kKLoop;
  const std::string yield = "    yield %acc_out, %pa2, %pb2";
  text.replace(text.find(yield), yield.size(),
               "    %cs = splat %c : <16 x 16 x ptr<f32>>\n    %cp = addptr %cs, %off : <16 x 16 x ptr<f32>>\n"
               "    store %cp, %acc_out\n" + yield);
  const std::string loop = "= for %c0, %K";
  text.replace(text.find(loop), loop.size(), "= for[loads_ahead=true] %c0, %K");
  const std::string two = prepare_stages(text, 2);
  assert_int_equal(count(two, "= load "), 4);
  assert_int_equal(count(two, "store "), 2);
}

// Only a dot's operands are loaded stages - 1 iterations ahead. Another tile of the body is
// loaded one iteration ahead (held in registers, more stages would multiply them); a row used
// only spread over the block (`v[None, :]`, attention backward's m and Di) stays in place.
static void pipelines_dot_operands_deepest(void**) {
  std::string text = kKLoop;
  const std::string dot = "    %acc_out = dot %x, %y, %acc_in : <16 x 16 x f32>\n";
  text.replace(text.find(dot), dot.size(),
               "    %acc_dot = dot %x, %y, %acc_in : <16 x 16 x f32>\n"
               "    %cs = splat %c : <16 x 16 x ptr<f32>>\n    %cp = addptr %cs, %off : <16 x 16 x ptr<f32>>\n"
               "    %z = load %cp : <16 x 16 x f32>\n"
               "    %rs = splat %c : <16 x ptr<f32>>\n    %rp = addptr %rs, %ri : <16 x ptr<f32>>\n"
               "    %v = load %rp : <16 x f32>\n"
               "    %ve = expand_dims[axis=0] %v : <1 x 16 x f32>\n    %vb = broadcast %ve : <16 x 16 x f32>\n"
               "    %zv = add %z, %vb : <16 x 16 x f32>\n"
               "    %acc_out = add %acc_dot, %zv : <16 x 16 x f32>\n");
  const std::string three = prepare_stages(text, 3);
  const size_t body = three.find("= for ");
  // Before the loop: two iterations of each dot operand, one of the tile, none of the row.
  assert_int_equal(count(three.substr(0, body), "= load "), 5);
  // In the body: the next iteration's loads of all three, and the row where it was.
  assert_int_equal(count(three.substr(body), "= load "), 4);
  assert_true(three.find("<16 x f32>", body) != std::string::npos);
}

// A wait in the K loop (each K step's tiles arrive from a peer, signalled per step): the loads
// that read them must stay after the wait, so the loop is not pipelined.
static void leaves_loops_with_waits_alone(void**) {
  std::string text = kKLoop;
  text.replace(text.find("kernel @k(%a: ptr<f16>, %b: ptr<f16>, %c: ptr<f32>, %K: i32)"),
               std::string("kernel @k(%a: ptr<f16>, %b: ptr<f16>, %c: ptr<f32>, %K: i32)").size(),
               "kernel @k(%a: ptr<f16>, %b: ptr<f16>, %c: ptr<f32>, %K: i32, %sig: ptr<i32>)");
  const std::string load = "    %x = load %pa, mask=%m : <16 x 16 x f16>";
  text.replace(text.find(load), load.size(),
               "    %t = wait[cmp=ge] %sig, %k : i32\n    %pat = consume_token %pa, %t : <16 x 16 x ptr<f16>>\n"
               "    %x = load %pat, mask=%m : <16 x 16 x f16>");
  const std::string out = prepare_stages(text, 2);
  assert_int_equal(count(out, "= load "), 2);
  // The wait and the token survive canonicalization, and the load still reads through the token.
  assert_int_equal(count(out, "= wait"), 1);
  assert_true(out.find("= load %pat") != std::string::npos);
}

// DCE keeps a wait whose token is unused, and notify/put/get (effects); CSE merges neither two
// waits nor two gets of the same address (another rank may write in between), but does merge
// the pure rank and num_ranks.
static void distributed_ops_keep_their_effects(void**) {
  auto m = parse_ok(R"(
kernel @k(%p: ptr<f32>, %sig: ptr<i32>, %out: ptr<f32>) {
  %one = const[value=1] : i32
  %r1 = rank : i32
  %r2 = rank : i32
  %t1 = wait %sig, %one : i32
  %t2 = wait %sig, %one : i32
  %dead = consume_token %p, %t1 : ptr<f32>
  %g1 = get %p, %r1 : f32
  %g2 = get %p, %r2 : f32
  %unused = get %p, %r1 : f32
  notify %sig, %one, %r2
  %s = add %g1, %g2 : f32
  store %out, %s
  return
}
)");
  std::unique_ptr<Module> s;
  Status st = prepare(*m, {}, &s);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  const std::string out = print_text(*s);
  assert_int_equal(count(out, "= rank"), 1);
  assert_int_equal(count(out, "= wait"), 2);
  assert_int_equal(count(out, "= get"), 3);
  assert_int_equal(count(out, "notify"), 1);
  assert_int_equal(count(out, "consume_token"), 0);  // pure and unused
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pipelines_loads_that_feed_dot),
      cmocka_unit_test(leaves_loops_with_stores_alone),
      cmocka_unit_test(pipelines_across_stores_when_loads_ahead),
      cmocka_unit_test(pipelines_dot_operands_deepest),
      cmocka_unit_test(leaves_loops_with_waits_alone),
      cmocka_unit_test(distributed_ops_keep_their_effects),
      cmocka_unit_test(specializes_types_and_attributes),
      cmocka_unit_test(reports_bad_bindings),
      cmocka_unit_test(facts_are_recorded),
      cmocka_unit_test(folds_if_on_constexpr),
      cmocka_unit_test(folds_integer_constants_and_cse),
      cmocka_unit_test(reports_rules_that_need_values),
      cmocka_unit_test(device_functions_follow_the_kernel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
