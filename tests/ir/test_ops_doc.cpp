// Keeps the op reference in docs/ir.md ("## Ops") and the op table in src/ir/ops.def in step:
// every op of the table has an entry there, and every entry there names an op of the table, so
// adding, renaming or removing an op without its documentation fails here.
//
// An entry is a list item that starts with the op's name in bold code ("- **`load`** ...") or a
// table row that starts with it ("| `add` | ...").
#include <string>

#include "ir/op_info.h"
#include "test_main.h"

using namespace tri::ir;

namespace {

// The "## Ops" section of docs/ir.md: from its heading to the next level-2 heading.
std::string ops_section() {
  std::string doc = tri_test::read_file(tri_test::source_path("docs/ir.md"));
  size_t start = doc.find("\n## Ops\n");
  if (start == std::string::npos) return std::string();
  size_t end = doc.find("\n## ", start + 1);
  return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The op names the section documents, in order of appearance (a name may appear twice, which
// documented_once catches).
std::vector<std::string> documented_ops(const std::string& section) {
  std::vector<std::string> names;
  std::istringstream lines(section);
  std::string line;
  while (std::getline(lines, line)) {
    std::string rest;
    if (line.rfind("- **`", 0) == 0) rest = line.substr(5);
    else if (line.rfind("| `", 0) == 0) rest = line.substr(3);
    else continue;
    size_t tick = rest.find('`');
    if (tick == std::string::npos) continue;
    names.push_back(rest.substr(0, tick));
  }
  return names;
}

}  // namespace

static void section_exists(void** state) {
  std::string section = ops_section();
  assert_false(section.empty());
  // The checklist for adding an op lives at the end of the section.
  assert_true(section.find("\n### Adding an op\n") != std::string::npos);
}

static void every_op_is_documented(void** state) {
  std::vector<std::string> names = documented_ops(ops_section());
  std::set<std::string> documented(names.begin(), names.end());
  for (uint32_t i = 0; i < kNumOpcodes; ++i) {
    const OpInfo& info = op_info(static_cast<Opcode>(i));
    if (!documented.count(info.name)) fail_msg("op '%s' has no entry in docs/ir.md's Ops section", info.name.c_str());
  }
}

static void every_entry_is_an_op(void** state) {
  for (const std::string& name : documented_ops(ops_section())) {
    Opcode code;
    if (!opcode_from_name(name, &code)) fail_msg("docs/ir.md documents '%s', which ops.def does not have", name.c_str());
  }
}

static void documented_once(void** state) {
  std::set<std::string> seen;
  for (const std::string& name : documented_ops(ops_section())) {
    if (!seen.insert(name).second) fail_msg("docs/ir.md documents '%s' twice", name.c_str());
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(section_exists),
      cmocka_unit_test(every_op_is_documented),
      cmocka_unit_test(every_entry_is_an_op),
      cmocka_unit_test(documented_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
