// Line info in the PTX (GpuOptions::line_info): the `.file` directive names the IR source, and
// the instructions of each op are preceded by a `.loc` with that op's line and column, so ncu
// and compute-sanitizer show the user's IR lines. Needs no GPU and no ptxas.
#include <memory>
#include <regex>
#include <set>
#include <string>

#include "codegen/nvptx/lower.h"
#include "golden.h"
#include "ir/text.h"
#include "passes/pipeline.h"
#include "test_main.h"

namespace {

std::string compile(const std::string& file, bool line_info, const std::string& source_name = "") {
  std::string text = tri_test::read_file(file);
  std::unique_ptr<tri::ir::Module> m, spec;
  tri::Status st = tri::ir::parse_text(text, source_name.empty() ? file : source_name, &m);
  assert_true(st.is_ok());
  st = tri::passes::prepare_kernel(*m, m->functions[0]->name, {}, {}, tri::passes::PipelineOptions{}, &spec);
  assert_true(st.is_ok());
  tri::codegen::nvptx::GpuOptions opt;
  opt.line_info = line_info;
  std::string ptx;
  tri::codegen::nvptx::KernelInfo info;
  st = tri::codegen::nvptx::compile_ptx(*spec, *spec->functions[0], opt, &ptx, &info);
  if (!st.is_ok()) std::printf("%s\n", st.message().c_str());
  assert_true(st.is_ok());
  return ptx;
}

// vector_add.tri: the masked loads are on line 21 (column 3), the store on line 26.
void test_loads_and_stores_carry_their_lines(void** state) {
  std::string ptx = compile("examples/vector_add.tri", true);
  assert_true(ptx.find(".file\t1 \"examples/vector_add.tri\"") != std::string::npos);
  // Every ld.global / st.global is attributed to the line of a load / store op.
  std::regex loc("^\\s*\\.loc\\s+1\\s+(\\d+)\\s+(\\d+)");
  int line = -1;
  std::set<int> load_lines, store_lines;
  size_t pos = 0;
  while (pos < ptx.size()) {
    size_t end = ptx.find('\n', pos);
    if (end == std::string::npos) end = ptx.size();
    std::string l = ptx.substr(pos, end - pos);
    std::smatch mt;
    if (std::regex_search(l, mt, loc)) line = std::stoi(mt[1]);
    if (l.find("ld.global") != std::string::npos) load_lines.insert(line);
    if (l.find("st.global") != std::string::npos) store_lines.insert(line);
    pos = end + 1;
  }
  assert_true(load_lines == (std::set<int>{21, 22}));
  assert_true(store_lines == (std::set<int>{26}));
}

// A source name PTX cannot quote (the conformance suite names modules after their cases) is
// written with those characters replaced, and ptxas accepts the result.
void test_source_name_with_quotes(void** state) {
  std::string ptx = compile("examples/vector_add.tri", true, "case / math_call[name=\"round\"]\\x\n");
  assert_true(ptx.find(".file\t1 \"case / math_call[name=_round_]_x_\"") != std::string::npos);
}

void test_off_means_no_directives(void** state) {
  std::string ptx = compile("examples/vector_add.tri", false);
  assert_true(ptx.find(".loc") == std::string::npos);
  assert_true(ptx.find(".file") == std::string::npos);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_loads_and_stores_carry_their_lines),
                                     cmocka_unit_test(test_source_name_with_quotes),
                                     cmocka_unit_test(test_off_means_no_directives)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
