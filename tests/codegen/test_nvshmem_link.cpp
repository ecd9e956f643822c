// NVSHMEM's device library linked into kernels with distributed ops (codegen/nvptx/
// nvshmem_link.h). Without the library: a kernel without distributed ops links nothing, and a
// missing or non-bitcode library is refused with a message naming the file and TRI_NVSHMEM_BC.
// With the library (TRI_NVSHMEM_BC: the nvidia-nvshmem wheel's lib/libnvshmem_device.bc), the
// distributed examples compiled for sm_80 and sm_90a hold NVSHMEM's device state as visible
// globals (what nvshmemx_cumodule_init fills), read it for the peers' addresses, call none of
// the library's functions (inlined) and assemble with ptxas; otherwise that case prints
// "skipped: no NVSHMEM device library" and CTest reports the test as skipped.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "codegen/nvptx/lower.h"
#include "ir/text.h"
#include "passes/pipeline.h"
#include "test_main.h"

namespace fs = std::filesystem;

namespace {

tri::Status compile(const std::string& file, const std::string& kernel, int sm, bool sm_a, const std::string& library,
                    std::string* ptx, tri::codegen::nvptx::KernelInfo* info) {
  std::unique_ptr<tri::ir::Module> m, spec;
  tri::Status st = tri::ir::parse_text(tri_test::read_file(file), file, &m);
  if (!st.is_ok()) return st;
  st = tri::passes::prepare_kernel(*m, kernel, {}, {}, tri::passes::PipelineOptions{}, &spec);
  if (!st.is_ok()) return st;
  tri::codegen::nvptx::GpuOptions opt;
  opt.sm = sm;
  opt.sm_a = sm_a;
  opt.nvshmem_device_library = library;
  return tri::codegen::nvptx::compile_ptx(*spec, *spec->functions[0], opt, ptx, info);
}

void test_errors_name_the_file(void** state) {
  std::string ptx;
  tri::codegen::nvptx::KernelInfo info;
  // No distributed op: nothing to link, so not even a missing file matters.
  tri::Status st = compile("examples/vector_add.tri", "vector_add", 80, false, "/nonexistent/x.bc", &ptx, &info);
  assert_true(st.is_ok());
  assert_false(info.nvshmem);
  st = compile("examples/allgather_gemm.tri", "allgather_gemm", 80, false, "/nonexistent/x.bc", &ptx, &info);
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::Unsupported));
  assert_true(st.message().find("/nonexistent/x.bc") != std::string::npos);
  assert_true(st.message().find("TRI_NVSHMEM_BC") != std::string::npos);
  // A file that is not bitcode.
  fs::path junk = fs::temp_directory_path() / "tri_test_not_bitcode.bc";
  FILE* f = std::fopen(junk.string().c_str(), "w");
  std::fputs("not bitcode\n", f);
  std::fclose(f);
  st = compile("examples/allgather_gemm.tri", "allgather_gemm", 80, false, junk.string(), &ptx, &info);
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::Unsupported));
  assert_true(st.message().find("not bitcode") != std::string::npos);
  fs::remove(junk);
}

std::string ptxas_path() {
  for (const char* p : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (fs::exists(p)) return p;
  return std::system("command -v ptxas >/dev/null 2>&1") == 0 ? "ptxas" : std::string();
}

void test_examples_link_the_library(void** state) {
  const char* lib = std::getenv("TRI_NVSHMEM_BC");
  if (!lib || !*lib || !fs::exists(lib)) {
    std::printf("skipped: no NVSHMEM device library (set TRI_NVSHMEM_BC to the nvidia-nvshmem-cu13 wheel's "
                "lib/libnvshmem_device.bc)\n");
    skip();
  }
  const std::string ptxas = ptxas_path();
  struct Case {
    const char* file;
    const char* kernel;
  } cases[] = {{"examples/allgather_gemm.tri", "allgather_gemm"},
               {"examples/gemm_reduce_scatter.tri", "gemm_reduce_scatter"},
               {"bench/dist/ag_gemm.tri", "ag_gemm"}};
  for (const Case& c : cases)
    for (int sm : {80, 90}) {
      std::string ptx;
      tri::codegen::nvptx::KernelInfo info;
      tri::Status st = compile(c.file, c.kernel, sm, sm == 90, lib, &ptx, &info);
      if (!st.is_ok()) std::printf("%s: %s\n", c.file, st.message().c_str());
      assert_true(st.is_ok());
      assert_true(info.nvshmem);
      // The state NVSHMEM fills at module load, visible to cuModuleGetGlobal, and read.
      assert_true(ptx.find(".visible .const .align 8 .b8 nvshmemi_device_state_d[") != std::string::npos);
      assert_true(ptx.find(".visible .const .align 4 .b8 nvshmemi_device_lib_version_d[") != std::string::npos);
      assert_true(ptx.find("[nvshmemi_device_state_d+") != std::string::npos);
      // nvshmem_ptr inlined: no function of the library is left, and no call to one.
      assert_true(ptx.find("nvshmem_ptr") == std::string::npos);
      assert_true(ptx.find(".func nvshmem") == std::string::npos);
      if (ptxas.empty()) continue;
      fs::path out = fs::temp_directory_path() / ("tri_nvshmem_" + std::string(c.kernel) + std::to_string(sm) + ".ptx");
      FILE* f = std::fopen(out.string().c_str(), "w");
      std::fwrite(ptx.data(), 1, ptx.size(), f);
      std::fclose(f);
      const std::string cmd = ptxas + " -arch=sm_" + std::to_string(sm) + (sm == 90 ? "a " : " ") + out.string() +
                              " -o /dev/null";
      const int rc = std::system(cmd.c_str());
      if (rc != 0) std::printf("ptxas rejected %s (kept)\n", out.string().c_str());
      assert_int_equal(rc, 0);
      fs::remove(out);
    }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors_name_the_file),
      cmocka_unit_test(test_examples_link_the_library),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
