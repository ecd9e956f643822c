// Unstructured control flow in TTIR (src/import/triton/ttir_cfg.cpp): regions of several blocks
// joined by cf.br / cf.cond_br, as Triton writes early returns and MLIR's inliner writes helpers
// with several returns. Small TTIR snippets cover each shape (an early return, returns in both
// branches, joins with block arguments reached from several levels, a join selected among
// several, a device function with several returns called in a loop, the same successor on both
// edges, straight-line chains, blocks out of order in the text) and run through the public API on
// the interpreter (checked mode) and the CPU backend against C references, over enough programs
// that every path runs. The shapes that cannot be structured, and malformed graphs, are errors
// naming the TTIR line.
#include <algorithm>
#include <string>
#include <vector>

#include "tri/tri.h"
#include "ttir_run_util.h"

namespace {

// Runs kernel @k of `text` on every target with one i32 output per program (and the extra
// scalar arguments), and compares the outputs with `want` (kSentinel-like -777 where a program
// stores nothing).
void run_and_compare(const char* name, const std::string& text, uint32_t programs, const std::vector<int32_t>& want,
                     std::vector<tri_arg> extra = {}) {
  for (const char* t : kTargets) {
    Buffer out = buffer(std::vector<int32_t>(programs + kGuard, -777), TRI_DTYPE_I32);
    std::vector<tri_arg> args = {ptr_arg(out)};
    args.insert(args.end(), extra.begin(), extra.end());
    if (!launch_text(text, name, "k", t, programs, 1, args)) continue;
    for (uint32_t i = 0; i < programs; ++i)
      if (out.as<int32_t>()[i] != want[i])
        fail_msg("%s [%s]: program %u wrote %d, expected %d", name, t, i, out.as<int32_t>()[i], want[i]);
    expect_guard(name, t, out.as<int32_t>(), programs, int32_t{-777});
  }
}

// The module's canonical text (tri_module_create verifies it; the text must read back to itself).
std::string imported_text(const std::string& text) {
  tri_module* m = nullptr;
  if (tri_module_create(g_ctx, text.data(), text.size(), "t.ttir", &m) != TRI_OK) fail_msg("%s", last_error().c_str());
  tri_blob* b = nullptr;
  assert_int_equal(tri_module_to_text(m, &b), TRI_OK);
  std::string t1(static_cast<const char*>(tri_blob_data(b)), tri_blob_size(b));
  tri_blob_destroy(b);
  tri_module_destroy(m);
  if (tri_module_create(g_ctx, t1.data(), t1.size(), "printed", &m) != TRI_OK)
    fail_msg("the printed import does not parse: %s\n%s", last_error().c_str(), t1.c_str());
  assert_int_equal(tri_module_to_text(m, &b), TRI_OK);
  assert_string_equal(std::string(static_cast<const char*>(tri_blob_data(b)), tri_blob_size(b)).c_str(), t1.c_str());
  tri_blob_destroy(b);
  tri_module_destroy(m);
  return t1;
}

void expect_error(const std::string& text, tri_result code, const std::string& starts, const std::string& contains) {
  tri_module* m = nullptr;
  tri_result r = tri_module_create(g_ctx, text.data(), text.size(), "t.ttir", &m);
  if (r == TRI_OK) {
    tri_module_destroy(m);
    fail_msg("expected an error containing '%s'", contains.c_str());
  }
  std::string msg = last_error();
  if (r != code) fail_msg("expected %s, got %s: %s", tri_result_name(code), tri_result_name(r), msg.c_str());
  if (msg.rfind(starts, 0) != 0) fail_msg("the message does not start with '%s': %s", starts.c_str(), msg.c_str());
  if (msg.find(contains) == std::string::npos) fail_msg("the message does not contain '%s': %s", contains.c_str(), msg.c_str());
}

// `if pid >= n: return` at the top of a kernel (liger-kernel's `if row_idx >= n_rows: return`).

void test_early_return(void**) {
  std::vector<int32_t> want(8, -777);
  for (int i = 0; i < 5; ++i) want[i] = 2 * i;
  run_and_compare("early_return", snippet("early_return"), 8, want, {i32_arg(5)});
  // The rest of the kernel is the else of the if that returns; one return ends the kernel.
  std::string t = imported_text(snippet("early_return"));
  assert_true(t.find("if %c {\n    yield\n  } {\n") != std::string::npos);
  size_t first = t.find("return"), last = t.rfind("return");
  assert_true(first != std::string::npos && first == last);
}

// Joins with block arguments reached from two levels, selected among several (the `if`s yield
// which join comes next), a join after joins, and a return taken inside a join.

void test_joins(void**) {
  std::vector<int32_t> want(8);
  for (int pid = 0; pid < 8; ++pid) {
    bool a = pid & 1, b = pid & 2, d = pid & 4;
    bool to3 = a ? b : d;  // ^bb3 (else ^bb4) with v
    int v = a ? (b ? 10 : 20) : (d ? 30 : 40);
    want[pid] = to3 ? v + 1 : (b ? 2 * v + 1 : 2 * v);
  }
  run_and_compare("joins", snippet("joins"), 8, want);
  std::string t = imported_text(snippet("joins"));
  // The joins are selected by an i32 the ifs yield (one `cmp eq` per join dispatched).
  assert_true(t.find("cmp[pred=eq]") != std::string::npos);
}

// A device function with several returns (the shape MLIR's inliner leaves when it cannot inline
// a multi-block helper into a loop body), both successors of one cond_br being the same block
// with other arguments, called from scf.for.

void test_function_returns(void**) {
  const int n = 4;
  std::vector<int32_t> want(7);
  for (int pid = 0; pid < 7; ++pid) {
    int acc = 0;
    for (int i = 0; i < n; ++i) {
      int a = pid - 3, b = i - 1;
      acc += a <= 0 ? 7 : (b > 0 ? a - b : b - a);
    }
    want[pid] = acc;
  }
  run_and_compare("function_returns", snippet("function_returns"), 7, want, {i32_arg(n)});
  std::string t = imported_text(snippet("function_returns"));
  assert_true(t.find("func @f(%a: i32, %b: i32) -> (i32)") != std::string::npos);
}

// Straight lines of cf.br, blocks written in another order than they run, a value of a
// dominating block used two blocks later, and a block that no path reaches (dropped).

void test_chain(void**) {
  std::vector<int32_t> want(4);
  for (int pid = 0; pid < 4; ++pid) want[pid] = (pid + 5) * (pid + 5) + pid + 5;
  run_and_compare("chain", snippet("chain"), 4, want);
  std::string t = imported_text(snippet("chain"));
  assert_true(t.find(" if ") == std::string::npos);  // no branch: one straight line
  assert_true(t.find("%dead") == std::string::npos);
}

// An early return inside a loop's helper: a function whose every path returns a value, and
// branches nested three deep.

void test_nested_returns(void**) {
  std::vector<int32_t> want(8);
  for (int pid = 0; pid < 8; ++pid) want[pid] = (pid & 1) ? 1 : (pid & 2) ? 2 : (pid & 4) ? -777 : 4;
  run_and_compare("nested_returns", snippet("nested_returns"), 8, want);
}

// ---------------------------------------------------------------- what is refused

std::string kernel_with(const std::string& body) {
  return "module {\n  tt.func public @k(%out: !tt.ptr<i32>, %c: i1, %n: i32) {\n" + body + "  }\n}\n";
}

void test_errors(void**) {
  // A loop made of branches (Triton never writes one: its loops are scf.for / scf.while).
  expect_error(kernel_with("    cf.br ^bb1\n  ^bb1:\n    cf.cond_br %c, ^bb1, ^bb2\n  ^bb2:\n    tt.return\n"),
               TRI_ERROR_UNSUPPORTED, "t.ttir:5:5: error: ", "a loop made of branches (^bb1 branches back to ^bb1)");
  // A branch to a block the region does not define.
  expect_error(kernel_with("    cf.br ^bb7\n  ^bb1:\n    tt.return\n"), TRI_ERROR_PARSE, "t.ttir:3:11: error: ",
               "a branch to ^bb7, which is not defined in the region");
  // Block arguments that do not match.
  expect_error(kernel_with("    cf.br ^bb1(%n, %n : i32, i32)\n  ^bb1(%x: i32):\n    tt.return\n"), TRI_ERROR_PARSE,
               "t.ttir:3:5: error: ", "passes 2 value(s); the block takes 1");
  expect_error(kernel_with("    cf.br ^bb1(%c : i1)\n  ^bb1(%x: i32):\n    tt.return\n"), TRI_ERROR_PARSE,
               "t.ttir:3:5: error: ", "passes a i1 for an argument of type i32");
  // An op after the branch that ends a block; a block without a terminator; a condition that is
  // not an i1; a label defined twice.
  expect_error(kernel_with("    cf.br ^bb1\n    tt.return\n  ^bb1:\n    tt.return\n"), TRI_ERROR_PARSE, "t.ttir:4:5: error: ",
               "an op after the branch");
  expect_error(kernel_with("    cf.br ^bb1\n  ^bb1:\n    %x = arith.addi %n, %n : i32\n"), TRI_ERROR_PARSE,
               "t.ttir:4:3: error: ", "^bb1 does not end with a terminator");
  expect_error(kernel_with("    cf.cond_br %n, ^bb1, ^bb1\n  ^bb1:\n    tt.return\n"), TRI_ERROR_PARSE,
               "t.ttir:3:16: error: ", "cf.cond_br's condition is not an i1 scalar");
  expect_error(kernel_with("    cf.br ^bb1\n  ^bb1:\n    tt.return\n  ^bb1:\n    tt.return\n"), TRI_ERROR_PARSE,
               "t.ttir:6:3: error: ", "block ^bb1 is defined twice");
  // A value of a block no path reaches, used by one that runs.
  expect_error(kernel_with("    cf.br ^bb2\n  ^bb1:\n    %d = arith.addi %n, %n : i32\n    cf.br ^bb2\n  ^bb2:\n"
                           "    %e = arith.addi %d, %n : i32\n    tt.return\n"),
               TRI_ERROR_PARSE, "t.ttir:", "a value defined in a block that no path reaches is used (%d)");
  // Other cf ops are named.
  expect_error(kernel_with("    cf.switch %n : i32, [default: ^bb1]\n  ^bb1:\n    tt.return\n"), TRI_ERROR_UNSUPPORTED,
               "t.ttir:3:5: error: ", "op 'cf.switch' is not supported by the TTIR importer");
}

void test_limits(void**) {
  // 70 early returns, each inside the else of the one before: more nesting than kMaxNesting.
  std::string body;
  for (int i = 0; i < 70; ++i)
    body += "    cf.cond_br %c, ^r" + std::to_string(i) + ", ^n" + std::to_string(i) + "\n  ^r" + std::to_string(i) +
            ":\n    tt.return\n  ^n" + std::to_string(i) + ":\n";
  body += "    tt.return\n";
  expect_error(kernel_with(body), TRI_ERROR_LIMIT_EXCEEDED, "t.ttir:", "kMaxNesting");
  // More blocks than one region may have.
  body.clear();
  for (int i = 0; i < 1100; ++i) body += "    cf.br ^b" + std::to_string(i) + "\n  ^b" + std::to_string(i) + ":\n";
  body += "    tt.return\n";
  expect_error(kernel_with(body), TRI_ERROR_LIMIT_EXCEEDED, "t.ttir:", "a region of more than 1024 blocks");
  // A long straight line below the limit structures without deep recursion.
  body.clear();
  for (int i = 0; i < 1000; ++i) body += "    cf.br ^b" + std::to_string(i) + "\n  ^b" + std::to_string(i) + ":\n";
  body += "    tt.return\n";
  imported_text(kernel_with(body));
}

}  // namespace

int main(void) {
  if (tri_context_create(nullptr, TRI_VERSION_NUMBER, &g_ctx) != TRI_OK) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_early_return), cmocka_unit_test(test_joins),  cmocka_unit_test(test_function_returns),
      cmocka_unit_test(test_chain),        cmocka_unit_test(test_nested_returns), cmocka_unit_test(test_errors),
      cmocka_unit_test(test_limits),
  };
  int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  tri_context_destroy(g_ctx);
  return rc;
}
