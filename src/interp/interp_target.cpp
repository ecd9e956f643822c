// The reference interpreter as a target ("interp"): compiling keeps the specialized IR, launching
// interprets it. Checked mode is an option of this target only.
#include "interp/interpreter.h"
#include "ir/ir.h"
#include "target/target.h"

namespace tri::interp {
namespace {

class InterpExecutable final : public target::Executable {
 public:
  // The module is owned by the caller of compile (capi::Compiled) and outlives this object.
  InterpExecutable(const ir::Module& m, const ir::Function& k, bool checked) : m_(m), k_(k), checked_(checked) {}

  Status launch(const Grid& grid, const ArgValue* args, size_t nargs, const target::LaunchEnv& env) const override {
    Options opt;
    opt.checked = checked_;
    if (env.print) opt.print = *env.print;
    return run(m_, k_, grid, args, nargs, opt);
  }

 private:
  const ir::Module& m_;
  const ir::Function& k_;
  bool checked_;
};

class InterpTarget final : public target::Target {
 public:
  std::string_view name() const override { return "interp"; }
  Status compile(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
                 std::shared_ptr<const target::Executable>* out) const override {
    *out = std::make_shared<InterpExecutable>(m, kernel, options.checked);
    return Status::ok();
  }
};

}  // namespace

const target::Target* interp_target() {
  static const InterpTarget t;
  return &t;
}

}  // namespace tri::interp
