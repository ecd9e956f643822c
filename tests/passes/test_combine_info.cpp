// combine_is_commutative on the combine regions of reduce ops written in IR text.
#include <memory>
#include <string>

#include "ir/text.h"
#include "ir/verifier.h"
#include "passes/combine_info.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;

namespace {

// Whether the region of the first reduce in `body` is commutative (the body sees %x: <64 x f32>,
// %i: <64 x i32> and %s: f32).
bool commutative(const std::string& body) {
  const std::string text =
      "kernel @k(%s: f32, %p: ptr<f32>) {\n  %x = splat %s : <64 x f32>\n"
      "  %i = arange[start=0, end=64] : <64 x i32>\n" + body + "  return\n}\n";
  std::unique_ptr<Module> m;
  Status st = parse_text(text, "t.tri", &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  st = verify(*m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  const Function& f = *m->functions[0];
  for (const OpData& op : f.ops)
    if (op.code == Opcode::Reduce && !op.regions.empty()) return passes::combine_is_commutative(f, op.regions[0]);
  fail_msg("no reduce with a region");
  return false;
}

void single_commutative_ops(void**) {
  assert_true(commutative(R"(
  %r = reduce[axis=0] %x {
  ^(%a: f32, %b: f32):
    %c = add %a, %b : f32
    yield %c
  } : f32
)"));
  assert_true(commutative(R"(
  %r = reduce[axis=0] %x {
  ^(%a: f32, %b: f32):
    %c = fmax[nan=ignore] %b, %a : f32
    yield %c
  } : f32
)"));
  // max(a, b) * s + (a + b): symmetric once the commutative operands are ordered.
  assert_true(commutative(R"(
  %r = reduce[axis=0] %x {
  ^(%a: f32, %b: f32):
    %m = fmax %a, %b : f32
    %t = mul %m, %s : f32
    %u = add %b, %a : f32
    %c = add %t, %u : f32
    yield %c
  } : f32
)"));
}

void order_dependent_regions(void**) {
  // a - b, and "keep the left side": associative or not, not commutative.
  assert_false(commutative(R"(
  %r = reduce[axis=0] %x {
  ^(%a: f32, %b: f32):
    %c = sub %a, %b : f32
    yield %c
  } : f32
)"));
  assert_false(commutative(R"(
  %r = reduce[axis=0] %x {
  ^(%a: f32, %b: f32):
    yield %a
  } : f32
)"));
  // A (value, index) argmax that breaks ties on the index is commutative only by reasoning
  // about values; the text check answers false (sound, not complete).
  assert_false(commutative(R"(
  %r, %ri = reduce[axis=0] %x, %i {
  ^(%a: f32, %ai: i32, %b: f32, %bi: i32):
    %gt = fcmp[pred=ogt] %a, %b : i1
    %eq = fcmp[pred=oeq] %a, %b : i1
    %lt = cmp[pred=slt] %ai, %bi : i1
    %tie = and %eq, %lt : i1
    %take = or %gt, %tie : i1
    %v = select %take, %a, %b : f32
    %vi = select %take, %ai, %bi : i32
    yield %v, %vi
  } : f32, i32
)"));
}

void tuples_of_commutative_ops(void**) {
  assert_true(commutative(R"(
  %r, %ri = reduce[axis=0] %x, %i {
  ^(%a: f32, %ai: i32, %b: f32, %bi: i32):
    %v = add %a, %b : f32
    %vi = smax %ai, %bi : i32
    yield %v, %vi
  } : f32, i32
)"));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(single_commutative_ops),
      cmocka_unit_test(order_dependent_regions),
      cmocka_unit_test(tuples_of_commutative_ops),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
