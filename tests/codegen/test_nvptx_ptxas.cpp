// Every example kernel (examples/*.tri: sm_80 with 4 warps, sm_90 with 1, 4 and 8) and every
// executable IR file (tests/run/*.tri: sm_80 and sm_90, 4 warps) compiled to PTX, and the PTX
// checked by NVIDIA's
// assembler (`ptxas -arch=sm_XX`); and kernels in f32, f64 and f16 that apply every math op and
// math_call function (the GPU math library linked in); and the tensor-core examples as an H100
// launch compiles them, checked for wgmma serialization, spills and a cp.async prologue. A PTX
// that ptxas rejects fails the test, with ptxas's message
// and the PTX kept under the build directory. Without ptxas the test prints
// "skipped: no ptxas" and is reported as skipped.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "codegen/nvptx/lower.h"
#include "golden.h"
#include "ir/text.h"
#include "passes/pipeline.h"
#include "test_main.h"

namespace fs = std::filesystem;

namespace {

std::string ptxas_path() {
  for (const char* p : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (fs::exists(p)) return p;
  if (std::system("command -v ptxas >/dev/null 2>&1") == 0) return "ptxas";
  return std::string();
}

std::string out_dir() {
  const char* b = std::getenv("TRI_BUILD_DIR");
  fs::path d = fs::path(b ? b : ".") / "ptxas-check";
  fs::create_directories(d);
  return d.string();
}

int failures = 0;
int checked = 0;

// Compiles every kernel of `file` (constexpr defaults) and assembles the PTX.
void check_file(const fs::path& file, const std::string& ptxas, bool all_warps) {
  std::string text = tri_test::read_file(file.string());
  std::unique_ptr<tri::ir::Module> m;
  tri::Status st = tri::ir::parse_text(text, file.filename().string(), &m);
  if (!st.is_ok()) return;  // must-fail inputs are other tests' business
  for (const auto& f : m->functions) {
    if (!f->is_kernel) continue;
    bool defaults = true;
    for (const auto& c : f->constexprs) defaults = defaults && c.default_value.present();
    if (!defaults) continue;
    std::unique_ptr<tri::ir::Module> spec;
    st = tri::passes::prepare_kernel(*m, f->name, {}, {}, tri::passes::PipelineOptions{}, &spec);
    if (!st.is_ok()) continue;
    for (int sm : {80, 90})
      for (int warps : {1, 4, 8}) {
        if (warps != 4 && (sm != 90 || !all_warps)) continue;
        tri::codegen::nvptx::GpuOptions opt;
        opt.sm = sm;
        opt.num_warps = warps;
        std::string ptx;
        tri::codegen::nvptx::KernelInfo info;
        st = tri::codegen::nvptx::compile_ptx(*spec, *spec->functions[0], opt, &ptx, &info);
        std::string tag = file.stem().string() + "." + f->name + ".sm" + std::to_string(sm) + ".w" + std::to_string(warps);
        if (!st.is_ok()) {
          if (st.code() == tri::Code::Unsupported) {
            std::printf("note: %s: %s\n", tag.c_str(), st.message().c_str());
            continue;
          }
          std::printf("FAIL %s: %s\n", tag.c_str(), st.message().c_str());
          ++failures;
          continue;
        }
        std::string ptx_file = out_dir() + "/" + tag + ".ptx";
        FILE* out = std::fopen(ptx_file.c_str(), "w");
        std::fwrite(ptx.data(), 1, ptx.size(), out);
        std::fclose(out);
        std::string cmd = ptxas + " -arch=sm_" + std::to_string(sm) + " -o /dev/null " + ptx_file + " > " + ptx_file +
                          ".log 2>&1";
        ++checked;
        if (std::system(cmd.c_str()) != 0) {
          std::printf("FAIL %s: ptxas rejected %s:\n%s\n", tag.c_str(), ptx_file.c_str(),
                      tri_test::read_file(ptx_file + ".log").c_str());
          ++failures;
        }
      }
  }
}

// One kernel per float type that applies every math op and every math_call name (ir/math_fns.def)
// to a loaded block: the GPU math library (src/codegen/mathlib) linked in, inlined, assembled.
std::string all_math_kernel(const std::string& ty) {
  std::string b = "<128 x " + ty + ">";
  std::string t = "kernel @all_math_" + ty + "(%x: ptr<" + ty + ">, %out: ptr<" + ty + ">) {\n";
  t += "  %r = arange[start=0, end=128] : <128 x i32>\n";
  t += "  %xb = splat %x : <128 x ptr<" + ty + ">>\n  %xp = addptr %xb, %r : <128 x ptr<" + ty + ">>\n";
  t += "  %v = load %xp : " + b + "\n  %acc0 = add %v, %v : " + b + "\n";
  int n = 0;
  auto add = [&](const std::string& expr) {
    t += "  %m" + std::to_string(n) + " = " + expr + " : " + b + "\n";
    t += "  %acc" + std::to_string(n + 1) + " = add %acc" + std::to_string(n) + ", %m" + std::to_string(n) + " : " + b + "\n";
    ++n;
  };
  for (const char* op : {"exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf", "sqrt", "rsqrt"})
    add(std::string(op) + " %v");
  add("pow %v, %acc0");
  add("frem %v, %acc0");
#define TRI_MATH_FN(name, arity) \
  add(std::string("math_call[name=\"") + #name + "\"] %v" + (arity == 2 ? ", %acc0" : ""));
#include "ir/math_fns.def"
#undef TRI_MATH_FN
  t += "  %ob = splat %out : <128 x ptr<" + ty + ">>\n  %op = addptr %ob, %r : <128 x ptr<" + ty + ">>\n";
  t += "  store %op, %acc" + std::to_string(n) + "\n  return\n}\n";
  return t;
}

void test_ptxas_all_math(void** state) {
  std::string ptxas = ptxas_path();
  if (ptxas.empty()) {
    std::printf("skipped: no ptxas\n");
    skip();
  }
  fs::path dir = out_dir();
  for (const char* ty : {"f32", "f64", "f16"}) {
    fs::path file = dir / (std::string("all_math_") + ty + ".tri");
    std::string text = all_math_kernel(ty);
    FILE* out = std::fopen(file.string().c_str(), "w");
    std::fwrite(text.data(), 1, text.size(), out);
    std::fclose(out);
    int before_checked = checked, before_failures = failures;
    std::unique_ptr<tri::ir::Module> m;
    tri::Status st = tri::ir::parse_text(text, file.filename().string(), &m);
    if (!st.is_ok()) std::printf("%s\n", st.message().c_str());
    assert_true(st.is_ok());
    check_file(file, ptxas, false);
    std::printf("%s: %d PTX files assembled, %d failures\n", file.string().c_str(), checked - before_checked,
                failures - before_failures);
    assert_int_equal(checked - before_checked, 2);  // sm_80 and sm_90: compiled, not refused
  }
  assert_int_equal(failures, 0);
}

void test_ptxas(void** state) {
  std::string ptxas = ptxas_path();
  if (ptxas.empty()) {
    std::printf("skipped: no ptxas\n");
    skip();
  }
  for (const char* dir : {"examples", "tests/run"})
    for (const fs::path& p : tri_test::golden_files(dir, ".tri")) check_file(p, ptxas, std::string(dir) == "examples");
  std::printf("%d PTX files assembled, %d failures\n", checked, failures);
  assert_true(checked > 0);
  assert_int_equal(failures, 0);
}

// The tensor-core examples as a launch on an H100 compiles them (sm_90a, 16-byte-aligned
// pointers, sizes and leading strides divisible by 16, unit strides equal to 1) at the benchmark's
// configurations: ptxas must not serialize their wgmma (C7510: a call or a register hazard in the
// kernel) nor spill, and the pipeline's first tiles must go by cp.async (a commit group per tile
// and stage before the loop's first wait). bench/results/tensor-cores-2026-11-27.md measured these.
struct TcCase {
  const char* file;
  const char* kernel;
  std::vector<tri::passes::ConstexprBinding> consts;
  std::vector<tri::passes::ArgFacts> facts;
  int prologue_groups;
};

void test_ptxas_tensor_core_kernels(void** state) {
  std::string ptxas = ptxas_path();
  if (ptxas.empty()) {
    std::printf("skipped: no ptxas\n");
    skip();
  }
  using tri::ir::Attr;
  using tri::passes::ArgFacts;
  // matmul_leaky_relu: a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn.
  const std::vector<ArgFacts> mm_facts = {{0, 16, 0, false}, {1, 16, 0, false}, {2, 16, 0, false}, {3, 0, 16, false},
                                          {4, 0, 16, false}, {5, 0, 16, false}, {6, 0, 16, false}, {7, 0, 0, true},
                                          {8, 0, 16, false}, {9, 0, 0, true},   {10, 0, 16, false}, {11, 0, 0, true}};
  // flash_attention: q, k, v, o, sm_scale, stride_z, stride_h, stride_s, stride_d, H, n_ctx.
  const std::vector<ArgFacts> fa_facts = {{0, 16, 0, false}, {1, 16, 0, false}, {2, 16, 0, false}, {3, 16, 0, false},
                                          {5, 0, 16, false}, {6, 0, 16, false}, {7, 0, 16, false}, {8, 0, 0, true},
                                          {10, 0, 16, false}};
  const TcCase cases[] = {
      {"examples/matmul_leaky_relu.tri", "matmul_leaky_relu",
       {{"BM", Attr::of_int(128)}, {"BN", Attr::of_int(256)}, {"BK", Attr::of_int(64)}, {"GROUP_M", Attr::of_int(8)}},
       mm_facts, 4},
      {"examples/flash_attention.tri", "flash_attention",
       {{"BLOCK_M", Attr::of_int(128)}, {"BLOCK_N", Attr::of_int(128)}, {"HEAD_DIM", Attr::of_int(128)}},
       fa_facts, 4},
  };
  for (const TcCase& c : cases) {
    std::unique_ptr<tri::ir::Module> m;
    const std::string text = tri_test::read_file(tri_test::source_path(c.file));
    assert_true(tri::ir::parse_text(text, c.file, &m).is_ok());
    tri::passes::PipelineOptions po;
    po.num_stages = 3;
    std::unique_ptr<tri::ir::Module> spec;
    tri::Status st = tri::passes::prepare_kernel(*m, c.kernel, c.consts, c.facts, po, &spec);
    if (!st.is_ok()) fail_msg("%s: %s", c.kernel, st.message().c_str());
    tri::codegen::nvptx::GpuOptions opt;
    opt.sm = 90;
    opt.sm_a = true;
    opt.num_warps = 8;
    std::string ptx;
    tri::codegen::nvptx::KernelInfo info;
    st = tri::codegen::nvptx::compile_ptx(*spec, *spec->find(c.kernel), opt, &ptx, &info);
    if (!st.is_ok()) fail_msg("%s: %s", c.kernel, st.message().c_str());
    const std::string ptx_file = out_dir() + "/tc." + c.kernel + ".sm90a.ptx";
    FILE* out = std::fopen(ptx_file.c_str(), "w");
    std::fwrite(ptx.data(), 1, ptx.size(), out);
    std::fclose(out);
    const std::string cmd = ptxas + " -v -arch=sm_90a -o /dev/null " + ptx_file + " > " + ptx_file + ".log 2>&1";
    const int rc = std::system(cmd.c_str());
    const std::string log = tri_test::read_file(ptx_file + ".log");
    std::printf("%s: %s", c.kernel, log.substr(log.find("Used") == std::string::npos ? 0 : log.find("Used")).c_str());
    if (rc != 0) fail_msg("%s: ptxas rejected %s:\n%s", c.kernel, ptx_file.c_str(), log.c_str());
    if (log.find("C7510") != std::string::npos) fail_msg("%s: ptxas serializes its wgmma:\n%s", c.kernel, log.c_str());
    if (log.find(" 0 bytes spill stores") == std::string::npos) fail_msg("%s: spills:\n%s", c.kernel, log.c_str());
    assert_true(ptx.find("wgmma.mma_async") != std::string::npos);
    const size_t first_wait = ptx.find("cp.async.wait_group");
    assert_true(first_wait != std::string::npos);
    int groups = 0;
    for (size_t at = ptx.find("cp.async.commit_group"); at < first_wait; at = ptx.find("cp.async.commit_group", at + 1))
      ++groups;
    if (groups != c.prologue_groups)
      fail_msg("%s: %d cp.async groups before the loop, expected %d (one per tile and stage)", c.kernel, groups,
               c.prologue_groups);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_ptxas_all_math), cmocka_unit_test(test_ptxas),
                                     cmocka_unit_test(test_ptxas_tensor_core_kernels)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
