// contract_fma on IR text: each case gives a kernel and the canonical text expected after the
// pass and dce (the muls it absorbed are dead), compared through the printer.
#include <memory>
#include <string>

#include "ir/text.h"
#include "ir/verifier.h"
#include "passes/contract_fma.h"
#include "passes/dce.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;

namespace {

std::unique_ptr<Module> parse_ok(const std::string& text) {
  std::unique_ptr<Module> m;
  Status st = parse_text(text, "t.tri", &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  st = verify(*m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return m;
}

// Runs the pass on `in` and compares with `want` (both through the printer); `changed` is what
// the pass must return.
void expect(const char* in, const char* want, bool changed) {
  auto m = parse_ok(in);
  Function& f = *m->functions[0];
  const bool did = passes::contract_fma(*m, f);
  passes::dce(f);
  Status st = verify(*m);
  if (!st.is_ok()) fail_msg("after contract_fma: %s", st.message().c_str());
  if (did != changed) fail_msg("contract_fma returned %d, expected %d", did, changed);
  auto w = parse_ok(want);
  const std::string got = print_text(*m), expected = print_text(*w);
  if (got != expected) fail_msg("got:\n%s\nexpected:\n%s", got.c_str(), expected.c_str());
}

void add_of_mul_becomes_fma(void**) {
  expect(R"(
kernel @k(%a: f32, %b: f32, %c: f32, %p: ptr<f32>) {
  %m = mul %a, %b : f32
  %s = add %c, %m : f32
  %m2 = mul %a, %c : f32
  %t = add %m2, %s : f32
  store %p, %t
  return
})",
         R"(
kernel @k(%a: f32, %b: f32, %c: f32, %p: ptr<f32>) {
  %s = fma %a, %b, %c : f32
  %t = fma %a, %c, %s : f32
  store %p, %t
  return
})",
         true);
}

void sub_of_mul_negates_the_other_side(void**) {
  expect(R"(
kernel @k(%xs: f32, %ys: f32, %zs: f32, %p: ptr<f32>) {
  %x = splat %xs : <64 x f32>
  %y = splat %ys : <64 x f32>
  %z = splat %zs : <64 x f32>
  %m = mul %x, %y : <64 x f32>
  %d = sub %m, %z : <64 x f32>
  %m2 = mul %x, %z : <64 x f32>
  %e = sub %d, %m2 : <64 x f32>
  %pb = splat %p : <64 x ptr<f32>>
  %r = arange[start=0, end=64] : <64 x i32>
  %pp = addptr %pb, %r : <64 x ptr<f32>>
  store %pp, %e
  return
})",
         R"(
kernel @k(%xs: f32, %ys: f32, %zs: f32, %p: ptr<f32>) {
  %x = splat %xs : <64 x f32>
  %y = splat %ys : <64 x f32>
  %z = splat %zs : <64 x f32>
  %0 = neg %z : <64 x f32>
  %d = fma %x, %y, %0 : <64 x f32>
  %1 = neg %x : <64 x f32>
  %e = fma %1, %z, %d : <64 x f32>
  %pb = splat %p : <64 x ptr<f32>>
  %r = arange[start=0, end=64] : <64 x i32>
  %pp = addptr %pb, %r : <64 x ptr<f32>>
  store %pp, %e
  return
})",
         true);
}

// A mul used twice is fused into both adds (NVPTX's aggressive fusion, which Triton's code gets)
// and stays for a use that is no add; of two muls the one with fewer uses is fused (the other
// keeps its rounded value for its other use).
void mul_used_twice_fuses_into_each_add(void**) {
  expect(R"(
kernel @k(%a: f32, %b: f32, %c: f32, %p: ptr<f32>) {
  %m = mul %a, %b : f32
  %s = add %m, %a : f32
  %t = add %m, %b : f32
  %u = add %s, %t : f32
  store %p, %u
  store %p, %m
  %x = mul %a, %c : f32
  %y = mul %b, %c : f32
  %z = add %x, %y : f32
  store %p, %z
  store %p, %x
  return
})",
         R"(
kernel @k(%a: f32, %b: f32, %c: f32, %p: ptr<f32>) {
  %m = mul %a, %b : f32
  %s = fma %a, %b, %a : f32
  %t = fma %a, %b, %b : f32
  %u = add %s, %t : f32
  store %p, %u
  store %p, %m
  %x = mul %a, %c : f32
  %z = fma %b, %c, %x : f32
  store %p, %z
  store %p, %x
  return
})",
         true);
}

// Integers, f16 and a mul from another block are left.
void what_stays(void**) {
  const char* text = R"(
kernel @k(%a: f32, %b: f32, %i: i32, %h: f16, %p: ptr<f32>, %q: ptr<i32>, %r: ptr<f16>, %n: i32) {
  %mi = mul %i, %i : i32
  %si = add %mi, %i : i32
  store %q, %si
  %mh = mul %h, %h : f16
  %sh = add %mh, %h : f16
  store %r, %sh
  %c0 = const[value=0] : i32
  %c1 = const[value=1] : i32
  %mo = mul %a, %a : f32
  %acc = for %c0, %n, %c1, %b {
  ^(%it: i32, %x: f32):
    %y = add %x, %mo : f32
    yield %y
  } : f32
  store %p, %acc
  return
})";
  expect(text, text, false);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(add_of_mul_becomes_fma),
      cmocka_unit_test(sub_of_mul_negates_the_other_side),
      cmocka_unit_test(mul_used_twice_fuses_into_each_add),
      cmocka_unit_test(what_stays),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
