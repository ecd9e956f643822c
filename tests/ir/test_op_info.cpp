// Walks every row of ops.def and checks that its spec strings say something coherent: names are
// unique and found by name, slots are ordered required -> variadic -> optional, enum attributes
// have values, and defaults are legal for their kind.
#include <set>
#include <string>

#include "ir/op_info.h"
#include "test_main.h"

using namespace tri::ir;

static void every_op_is_found_by_name(void** state) {
  std::set<std::string> names;
  for (uint32_t i = 0; i < kNumOpcodes; ++i) {
    const OpInfo& info = op_info(static_cast<Opcode>(i));
    assert_int_equal(static_cast<uint32_t>(info.code), i);
    assert_true(names.insert(info.name).second);
    Opcode found;
    assert_true(opcode_from_name(info.name, &found));
    assert_int_equal(static_cast<uint32_t>(found), i);
  }
  Opcode unused;
  assert_false(opcode_from_name("no_such_op", &unused));
}

static void slots_are_ordered(void** state) {
  for (uint32_t i = 0; i < kNumOpcodes; ++i) {
    const OpInfo& info = op_info(static_cast<Opcode>(i));
    int phase = 0;  // 0 required, 1 variadic, 2 optional
    int variadics = 0;
    for (const OperandSlot& s : info.operands) {
      int p = s.kind == SlotKind::Required ? 0 : s.kind == SlotKind::Optional ? 2 : 1;
      if (p == 1) ++variadics;
      if (p < phase) fail_msg("op '%s': operand slots out of order", info.name.c_str());
      phase = p;
    }
    assert_true(variadics <= 1);
    assert_true(info.min_regions <= info.max_regions);
  }
}

static void attrs_are_well_formed(void** state) {
  for (uint32_t i = 0; i < kNumOpcodes; ++i) {
    const OpInfo& info = op_info(static_cast<Opcode>(i));
    for (const AttrSpec& a : info.attrs) {
      assert_false(a.name.empty());
      if (a.kind == AttrKind::Enum) {
        assert_true(a.enum_values.size() >= 2);
        if (a.has_default) {
          bool found = false;
          for (const std::string& v : a.enum_values) found |= v == a.default_text;
          if (!found) fail_msg("op '%s': default of '%s' is not one of its values", info.name.c_str(), a.name.c_str());
        }
      }
      if (a.kind == AttrKind::Bool && a.has_default)
        assert_true(a.default_text == "true" || a.default_text == "false");
    }
  }
}

static void terminators_have_no_results(void** state) {
  for (uint32_t i = 0; i < kNumOpcodes; ++i) {
    const OpInfo& info = op_info(static_cast<Opcode>(i));
    if (info.is_terminator()) assert_int_equal(info.num_results, 0);
  }
  assert_true(op_info(Opcode::Yield).is_terminator());
  assert_false(op_info(Opcode::Store).is_pure());
  assert_true(op_info(Opcode::Add).is_pure());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_op_is_found_by_name),
      cmocka_unit_test(slots_are_ordered),
      cmocka_unit_test(attrs_are_well_formed),
      cmocka_unit_test(terminators_have_no_results),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
