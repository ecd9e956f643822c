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

// The entry of `op` in the Ops section (its table row or list item), or "".
static std::string entry_of(const std::string& section, const std::string& op) {
  std::istringstream lines(section);
  std::string line, entry;
  bool in = false;
  while (std::getline(lines, line)) {
    bool starts = line.rfind("| `" + op + "` |", 0) == 0 || line.rfind("- **`" + op + "`**", 0) == 0;
    if (starts) in = true;
    else if (in && (line.rfind("- **`", 0) == 0 || line.rfind("|", 0) == 0 || line.empty())) break;
    if (in) entry += line + "\n";
  }
  return entry;
}

// Where Tri and Triton differ on NaN (issue 8), the docs say so next to the ops, and every example
// that takes a float max or min says which behaviour it relies on.
static void nan_difference_from_triton_is_stated(void** state) {
  std::string section = ops_section();
  for (const char* op : {"fmax", "fmin", "reduce"}) {
    std::string e = entry_of(section, op);
    if (e.empty()) fail_msg("no entry for '%s'", op);
    if (e.find("Triton") == std::string::npos || e.find("NaN") == std::string::npos)
      fail_msg("docs/ir.md's entry for '%s' does not state how its NaN handling differs from Triton's:\n%s", op,
               e.c_str());
  }
  int examples = 0;
  for (const char* name : {"softmax.tri", "flash_attention.tri"}) {
    std::string text = tri_test::read_file(tri_test::source_path((std::string("examples/") + name).c_str()));
    if (text.find("kind=max") == std::string::npos && text.find("fmax") == std::string::npos)
      fail_msg("examples/%s no longer takes a max: update this test", name);
    std::istringstream lines(text);
    std::string line;
    bool said = false;
    while (std::getline(lines, line))
      said = said || (line.find("//") != std::string::npos && line.find("NaN") != std::string::npos &&
                      line.find("Triton") != std::string::npos);
    if (!said) fail_msg("examples/%s takes a max but no comment says how it treats NaN (vs Triton)", name);
    ++examples;
  }
  assert_int_equal(examples, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(section_exists),
      cmocka_unit_test(every_op_is_documented),
      cmocka_unit_test(every_entry_is_an_op),
      cmocka_unit_test(documented_once),
      cmocka_unit_test(nan_difference_from_triton_is_stated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
