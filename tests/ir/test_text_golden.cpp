// Data-driven tests of the IR text format.
//  - tests/golden/text/NAME.tri (any spelling: comments, odd spacing, defaults written out) must
//    print as NAME.expected, the canonical form; print(parse(x)) must be a fixed point, and every
//    .expected must itself be canonical. Together the .expected files use every op of ops.def.
//  - tests/golden/fmt/NAME.tri, printed with its comments (TextComments), must give NAME.expected,
//    which must itself print unchanged with its comments: what `tri fmt` writes is a fixed point.
//  - tests/golden/parse_fail/NAME.tri must fail to parse with the message on its first line,
//    `// expect: NAME.tri:3:9: error: ...`, and the code on an optional second line
//    `// code: LimitExceeded` (Parse when absent). The source name is the file name.
// Set TRI_UPDATE_GOLDEN=1 to rewrite the .expected files from the printer (then review the diff).
#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "golden.h"
#include "ir/text.h"
#include "test_main.h"

using namespace tri;
using namespace tri::ir;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}

}  // namespace

static void text_goldens(void** state) {
  std::vector<fs::path> inputs = tri_test::golden_files("tests/golden/text", ".tri");
  if (inputs.size() < 10) fail_msg("expected the golden inputs under tests/golden/text, found %zu", inputs.size());
  bool update = std::getenv("TRI_UPDATE_GOLDEN") != nullptr;
  int failures = 0;
  for (const fs::path& in : inputs) {
    std::string name = in.filename().string();
    std::unique_ptr<Module> m;
    Status st = parse_text(tri_test::read_file(in.string()), name, &m);
    if (!st) {
      print_error("%s: %s\n", name.c_str(), st.message().c_str());
      ++failures;
      continue;
    }
    std::string once = print_text(*m);
    fs::path exp_path = in;
    exp_path.replace_extension(".expected");
    if (update) write_file(exp_path, once);
    std::string expected = tri_test::read_file(exp_path.string());
    if (once != expected) {
      print_error("%s: printed text differs from %s:\n%s\n", name.c_str(), exp_path.filename().c_str(), once.c_str());
      ++failures;
    }
    std::unique_ptr<Module> m2;
    st = parse_text(once, name, &m2);
    if (!st || print_text(*m2) != once) {
      print_error("%s: print(parse(x)) is not a fixed point\n", name.c_str());
      ++failures;
    }
    std::unique_ptr<Module> m3;
    st = parse_text(expected, exp_path.filename().string(), &m3);
    if (!st || print_text(*m3) != expected) {
      print_error("%s: not canonical\n", exp_path.filename().c_str());
      ++failures;
    }
  }
  assert_int_equal(failures, 0);
}

static void fmt_goldens(void** state) {
  std::vector<fs::path> inputs = tri_test::golden_files("tests/golden/fmt", ".tri");
  if (inputs.size() < 2) fail_msg("expected the golden inputs under tests/golden/fmt, found %zu", inputs.size());
  bool update = std::getenv("TRI_UPDATE_GOLDEN") != nullptr;
  int failures = 0;
  auto fmt = [&](const std::string& text, const std::string& name, std::string* out) {
    std::unique_ptr<Module> m;
    TextComments comments;
    Status st = parse_text(text, name, &m, &comments);
    if (!st) {
      print_error("%s: %s\n", name.c_str(), st.message().c_str());
      ++failures;
      return false;
    }
    *out = print_text(*m, &comments);
    return true;
  };
  for (const fs::path& in : inputs) {
    std::string name = in.filename().string();
    std::string once, twice, again;
    if (!fmt(tri_test::read_file(in.string()), name, &once)) continue;
    fs::path exp_path = in;
    exp_path.replace_extension(".expected");
    if (update) write_file(exp_path, once);
    std::string expected = tri_test::read_file(exp_path.string());
    if (once != expected) {
      print_error("%s: printed text differs from %s:\n%s\n", name.c_str(), exp_path.filename().c_str(), once.c_str());
      ++failures;
    }
    if (fmt(once, name, &twice) && twice != once) {
      print_error("%s: fmt of fmt differs:\n%s\n", name.c_str(), twice.c_str());
      ++failures;
    }
    if (fmt(expected, exp_path.filename().string(), &again) && again != expected) {
      print_error("%s: not a fixed point of fmt\n", exp_path.filename().c_str());
      ++failures;
    }
  }
  assert_int_equal(failures, 0);
}

// Every comment of every example, text golden and run file survives printing, in order.
static void fmt_keeps_every_comment(void** state) {
  int files = 0;
  for (const char* dir : {"examples", "tests/golden/text", "tests/golden/fmt", "tests/run"}) {
    for (const fs::path& in : tri_test::golden_files(dir, ".tri")) {
      std::string text = tri_test::read_file(in.string());
      std::unique_ptr<Module> m;
      TextComments comments;
      Status st = parse_text(text, in.filename().string(), &m, &comments);
      if (!st) fail_msg("%s", st.message().c_str());
      std::string printed = print_text(*m, &comments);
      // The comments of a text, in order, without the spaces around them.
      auto comments_of = [](const std::string& t) {
        std::vector<std::string> out;
        size_t pos = 0;
        while ((pos = t.find("//", pos)) != std::string::npos) {
          size_t end = t.find('\n', pos);
          if (end == std::string::npos) end = t.size();
          std::string c = t.substr(pos, end - pos);
          while (!c.empty() && (c.back() == ' ' || c.back() == '\r')) c.pop_back();
          out.push_back(c);
          pos = end;
        }
        return out;
      };
      if (comments_of(printed) != comments_of(text))
        fail_msg("%s: the comments printed differ from those written:\n%s", in.string().c_str(), printed.c_str());
      ++files;
    }
  }
  if (files < 20) fail_msg("expected at least 20 files with comments, found %d", files);
}

static void goldens_cover_every_op(void** state) {
  std::set<Opcode> seen;
  for (const fs::path& p : tri_test::golden_files("tests/golden/text", ".expected")) {
    std::unique_ptr<Module> m;
    Status st = parse_text(tri_test::read_file(p.string()), p.filename().string(), &m);
    if (!st) fail_msg("%s", st.message().c_str());
    for (const auto& f : m->functions)
      for (const OpData& op : f->ops) seen.insert(op.code);
  }
  std::string missing;
  for (uint32_t i = 0; i < kNumOpcodes; ++i)
    if (!seen.count(static_cast<Opcode>(i))) missing += " " + op_info(static_cast<Opcode>(i)).name;
  if (!missing.empty()) fail_msg("ops in no golden .expected file:%s", missing.c_str());
}

static void parse_failures(void** state) {
  std::vector<fs::path> inputs = tri_test::golden_files("tests/golden/parse_fail", ".tri");
  if (inputs.size() < 25) fail_msg("expected at least 25 must-fail inputs, found %zu", inputs.size());
  int failures = 0;
  for (const fs::path& in : inputs) {
    std::string name = in.filename().string();
    std::string text = tri_test::read_file(in.string());
    tri_test::Expectation e = tri_test::read_expectation(text, Code::Parse);
    if (!e.error.empty()) fail_msg("%s: %s", name.c_str(), e.error.c_str());
    const std::string& want = e.message;
    Code want_code = e.code;
    std::unique_ptr<Module> m;
    Status st = parse_text(text, name, &m);
    if (st.is_ok()) {
      print_error("%s: parsed, expected: %s\n", name.c_str(), want.c_str());
      ++failures;
    } else if (st.message() != want || st.code() != want_code) {
      print_error("%s:\n  got  (%s) %s\n  want (%s) %s\n", name.c_str(), code_name(st.code()), st.message().c_str(),
                  code_name(want_code), want.c_str());
      ++failures;
    }
  }
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(text_goldens),
      cmocka_unit_test(fmt_goldens),
      cmocka_unit_test(fmt_keeps_every_comment),
      cmocka_unit_test(goldens_cover_every_op),
      cmocka_unit_test(parse_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
