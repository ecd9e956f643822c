// The CPU backend as a target ("cpu"): LLVM ORC JIT for the host, program instances on the
// context's thread pool (jit/cpu_kernel.h).
#include "base/thread_pool.h"
#include "jit/cpu_kernel.h"
#include "target/target.h"

namespace tri::jit {
namespace {

class CpuExecutable final : public target::Executable {
 public:
  explicit CpuExecutable(std::shared_ptr<const CpuKernel> k) : k_(std::move(k)) {}

  Status launch(const Grid& grid, const ArgValue* args, size_t nargs, const target::LaunchEnv& env) const override {
    static const PrintSink kNoPrint;
    ThreadPool* pool = nullptr;
    if (env.pool) TRI_RETURN_IF_ERROR(env.pool(env.pool_user, &pool));
    return k_->run(grid, args, nargs, pool, env.print ? *env.print : kNoPrint, env.cancel);
  }
  std::string code(std::string_view kind) const override { return kind == "llvm" ? k_->llvm_ir() : std::string(); }

 private:
  std::shared_ptr<const CpuKernel> k_;
};

class CpuTarget final : public target::Target {
 public:
  std::string_view name() const override { return "cpu"; }
  Status compile(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
                 std::shared_ptr<const target::Executable>* out) const override {
    if (options.checked)
      return Status(Code::Unsupported, "checked mode runs on the \"interp\" target only; compile with target \"interp\"");
    std::shared_ptr<const CpuKernel> k;
    TRI_RETURN_IF_ERROR(compile_cpu(m, kernel, CpuCompileOptions{}, &k));
    *out = std::make_shared<CpuExecutable>(std::move(k));
    return Status::ok();
  }
};

}  // namespace

const target::Target* cpu_target() {
  static const CpuTarget t;
  return &t;
}

}  // namespace tri::jit
