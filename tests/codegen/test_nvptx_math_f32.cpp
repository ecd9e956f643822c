// f32 math on the GPU computes in f32: for every math op and every math_call function
// (ir/math_fns.def), a kernel applying it to f32 (and f16, bf16, which compute in f32) is compiled
// to PTX for sm_90 with the math library linked in, and the PTX must hold no f64 register or
// instruction (`.f64`, `%fd`): GPUs run f64 at a fraction of f32's rate, and Triton's libdevice
// needs none for these. Also: pow with a constant exponent 2 or 3 (x**2 and libdevice's powif
// with a constant, as TTIR imports them) compiles to the multiplications alone. No GPU and no
// ptxas needed.
#include <memory>
#include <string>
#include <vector>

#include "codegen/nvptx/lower.h"
#include "ir/text.h"
#include "passes/pipeline.h"
#include "test_main.h"

namespace {

std::string compile(const std::string& text) {
  std::unique_ptr<tri::ir::Module> m, spec;
  tri::Status st = tri::ir::parse_text(text, "t.tri", &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  st = tri::passes::prepare_kernel(*m, m->functions[0]->name, {}, {}, tri::passes::PipelineOptions{}, &spec);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  tri::codegen::nvptx::GpuOptions opt;
  opt.sm = 90;
  opt.num_warps = 4;
  std::string ptx;
  tri::codegen::nvptx::KernelInfo info;
  st = tri::codegen::nvptx::compile_ptx(*spec, *spec->functions[0], opt, &ptx, &info);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return ptx;
}

// A kernel loading two blocks %x, %y of `ty`, computing %f by the IR lines `body` and storing it.
std::string kernel_body(const std::string& ty, const std::string& body) {
  std::string b = "<128 x " + ty + ">", p = "<128 x ptr<" + ty + ">>";
  return "kernel @k(%px: ptr<" + ty + ">, %py: ptr<" + ty + ">, %out: ptr<" + ty + ">) {\n" +
         "  %r = arange[start=0, end=128] : <128 x i32>\n" + "  %xb = splat %px : " + p + "\n" +
         "  %xp = addptr %xb, %r : " + p + "\n" + "  %yb = splat %py : " + p + "\n" + "  %yp = addptr %yb, %r : " + p +
         "\n" + "  %x = load %xp : " + b + "\n" + "  %y = load %yp : " + b + "\n" + body + "  %ob = splat %out : " + p +
         "\n" + "  %op = addptr %ob, %r : " + p + "\n" + "  store %op, %f\n  return\n}\n";
}

// The same with %f = `expr`.
std::string kernel(const std::string& ty, const std::string& expr) {
  return kernel_body(ty, "  %f = " + expr + " : <128 x " + ty + ">\n");
}

// The math expressions of the IR on %x (and %y for two-argument functions).
std::vector<std::string> math_exprs() {
  std::vector<std::string> e;
  for (const char* op : {"exp", "exp2", "exp2[subnormal=flush]", "log", "log2", "sin", "cos", "tanh", "erf", "sqrt",
                         "rsqrt", "exp[approx=true]", "sqrt[approx=true]"})
    e.push_back(std::string(op) + " %x");
  e.push_back("pow %x, %y");
  e.push_back("frem %x, %y");
#define TRI_MATH_FN(name, arity) e.push_back(std::string("math_call[name=\"") + #name + "\"] %x" + (arity == 2 ? ", %y" : ""));
#include "ir/math_fns.def"
#undef TRI_MATH_FN
  return e;
}

// PTX instructions (lines ending in ';' that are not declarations or directives).
int instructions(const std::string& ptx) {
  int n = 0;
  size_t at = 0;
  while (at < ptx.size()) {
    size_t end = ptx.find('\n', at);
    if (end == std::string::npos) end = ptx.size();
    std::string line = ptx.substr(at, end - at);
    at = end + 1;
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line.back() != ';') continue;
    if (line[b] == '.' || line[b] == '/' || line.compare(b, 4, "ret;") == 0) continue;
    ++n;
  }
  return n;
}

void test_no_f64_in_f32_math(void** state) {
  int bad = 0, checked = 0;
  for (const char* ty : {"f32", "f16", "bf16"}) {
    for (const std::string& e : math_exprs()) {
      std::string ptx = compile(kernel(ty, e));
      ++checked;
      size_t at = ptx.find(".f64");
      if (at == std::string::npos) at = ptx.find("%fd");
      if (at != std::string::npos) {
        size_t ls = ptx.rfind('\n', at) + 1, le = ptx.find('\n', at);
        std::printf("FAIL %s on %s: f64 in the PTX: %s\n", e.c_str(), ty, ptx.substr(ls, le - ls).c_str());
        ++bad;
      }
    }
  }
  std::printf("%d kernels checked, %d with f64\n", checked, bad);
  assert_int_equal(bad, 0);
}

void test_pow_constant_exponent_is_multiplication(void** state) {
  // x^2 is x * x and x^3 is x * x * x with the first product's residual (one fma): the
  // exponent folds into the library's short paths and nothing else remains.
  const std::string b = " : <128 x f32>\n";
  int m2 = instructions(compile(kernel("f32", "mul %x, %x")));
  int p2 = instructions(compile(kernel_body("f32", "  %c = const[value=2.0]" + b + "  %f = pow %x, %c" + b)));
  std::printf("pow(x, 2): %d PTX instructions, x * x: %d\n", p2, m2);
  assert_int_equal(p2, m2);
  std::string ptx3 = compile(kernel_body("f32", "  %c = const[value=3.0]" + b + "  %f = pow %x, %c" + b));
  int p3 = instructions(ptx3);
  std::printf("pow(x, 3): %d PTX instructions\n", p3);
  // the products, the range tests and a branch: far from the general pow's hundreds
  assert_true(p3 <= m2 + 16);
  assert_true(ptx3.find("div.") == std::string::npos && ptx3.find("sqrt") == std::string::npos);
  // a general exponent takes the whole function, so the comparison above means something
  int pn = instructions(compile(kernel("f32", "pow %x, %y")));
  std::printf("pow(x, y): %d PTX instructions\n", pn);
  assert_true(pn > m2 + 100);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_f64_in_f32_math),
                                     cmocka_unit_test(test_pow_constant_exponent_is_multiplication)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
