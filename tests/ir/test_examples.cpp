// The example kernels (examples/*.tri) are the first real workloads and the IR's showcase: each
// must parse, verify, print to a canonical form that is a fixed point of print(parse(.)), and be
// written in that form already (comments and line breaks aside).
// One test per file, so a failure names the example; a missing example fails too, since the
// set of examples is what the backends' conformance and benchmark suites are built on.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "ir/text.h"
#include "ir/verifier.h"
#include "test_main.h"

using namespace tri::ir;

namespace {

// The examples that must exist (others in the folder are checked as well).
const char* const kRequired[] = {"vector_add", "gelu",   "softmax",  "layernorm", "matmul_leaky_relu",
                                 "flash_attention", "cumsum", "histogram", "argmax"};

std::vector<std::string>& example_paths() {
  static std::vector<std::string> paths;
  return paths;
}

// Parses and verifies `text`, failing the test with the diagnostic when either step fails.
std::unique_ptr<Module> parse_and_verify(const std::string& text, const std::string& name) {
  std::unique_ptr<Module> m;
  tri::Status st = parse_text(text, name, &m);
  if (!st.is_ok()) fail_msg("parse: %s", st.message().c_str());
  st = verify(*m);
  if (!st.is_ok()) fail_msg("verify: %s", st.message().c_str());
  return m;
}

// The text with `//` comments removed (outside strings) and every run of whitespace made one
// space: what is left of an example once layout is set aside.
std::string without_comments_and_layout(const std::string& text) {
  std::string out;
  bool in_string = false, pending_space = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!in_string && c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      pending_space = true;
      continue;
    }
    if (!in_string && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
      pending_space = true;
      continue;
    }
    if (pending_space && !out.empty()) out += ' ';
    pending_space = false;
    out += c;
    if (c == '"') in_string = !in_string;
    if (in_string && c == '\\' && i + 1 < text.size()) out += text[++i];
  }
  return out;
}

void example_round_trips(void** state) {
  const std::string& path = *static_cast<const std::string*>(*state);
  std::string name = std::filesystem::path(path).filename().string();
  std::string text = tri_test::read_file(path);
  assert_false(text.empty());

  std::unique_ptr<Module> m = parse_and_verify(text, name);
  // Each example is one kernel named after its file, which is how bindings and benchmarks find it.
  std::string stem = std::filesystem::path(path).stem().string();
  assert_int_equal(m->functions.size(), 1);
  const Function* f = m->find(stem);
  if (f == nullptr) fail_msg("%s: no kernel named @%s", name.c_str(), stem.c_str());
  assert_true(f->is_kernel);

  std::string printed = print_text(*m);
  std::unique_ptr<Module> again = parse_and_verify(printed, name + " (printed)");
  std::string reprinted = print_text(*again);
  if (printed != reprinted) {
    fail_msg("%s: print(parse(print(x))) differs from print(x):\n--- first\n%s\n--- second\n%s", name.c_str(),
             printed.c_str(), reprinted.c_str());
  }
  // The examples are written in canonical form (what `tri fmt` prints) apart from their comments
  // and the line breaks in long signatures, so they read the way the printer writes IR.
  std::string source = without_comments_and_layout(text);
  std::string canonical = without_comments_and_layout(printed);
  if (source != canonical) {
    size_t at = 0;
    while (at < source.size() && at < canonical.size() && source[at] == canonical[at]) ++at;
    size_t from = at < 60 ? 0 : at - 60;
    fail_msg("%s: not in canonical form; first difference after \"%s\":\n  source:    \"%s\"\n  canonical: \"%s\"",
             name.c_str(), source.substr(from, at - from).c_str(), source.substr(at, 60).c_str(),
             canonical.substr(at, 60).c_str());
  }
}

void all_required_examples_exist(void** state) {
  for (const char* req : kRequired) {
    std::string want = std::string(req) + ".tri";
    bool found = std::any_of(example_paths().begin(), example_paths().end(), [&](const std::string& p) {
      return std::filesystem::path(p).filename() == want;
    });
    if (!found) fail_msg("examples/%s is missing", want.c_str());
  }
}

}  // namespace

int main(void) {
  std::filesystem::path dir(tri_test::source_path("examples"));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".tri") example_paths().push_back(entry.path().string());
  }
  std::sort(example_paths().begin(), example_paths().end());

  std::vector<std::string> names;  // cmocka keeps pointers to the test names
  names.reserve(example_paths().size());
  std::vector<CMUnitTest> tests;
  tests.push_back(cmocka_unit_test(all_required_examples_exist));
  for (std::string& p : example_paths()) {
    names.push_back(std::filesystem::path(p).filename().string());
    CMUnitTest t = cmocka_unit_test_prestate(example_round_trips, &p);
    t.name = names.back().c_str();
    tests.push_back(t);
  }
  return _cmocka_run_group_tests("examples", tests.data(), tests.size(), NULL, NULL);
}
