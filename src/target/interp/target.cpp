// The reference interpreter as a target ("interp"): compiling keeps the specialized IR, launching
// interprets it. Checked mode is an option of this target only.
#include <set>

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
    opt.cancel = env.cancel;
    opt.memory_limit = env.interp_memory_limit;
    opt.team = env.team;
    return run(m_, k_, grid, args, nargs, opt);
  }

 private:
  const ir::Module& m_;
  const ir::Function& k_;
  bool checked_;
};

// The ops this target cannot run, refused at compile rather than at launch: inline_asm, in the
// kernel or in any device function it calls.
Status check_runnable(const ir::Module& m, const ir::Function& f, ir::BlockId b,
                      std::set<const ir::Function*>* seen) {
  for (ir::OpId o : f.block(b).ops) {
    const ir::OpData& op = f.op(o);
    if (op.code == ir::Opcode::InlineAsm)
      return error_at(Code::Unsupported, m.source_name, op.loc,
                      "inline_asm in @" + f.name + " runs only on GPU targets; the \"interp\" target cannot "
                      "compile it (use target \"cuda\", or keep the asm out of this kernel)");
    if (op.code == ir::Opcode::Call) {
      const ir::Function* callee = m.find(f.attr(o, "callee").s);
      if (callee && seen->insert(callee).second) TRI_RETURN_IF_ERROR(check_runnable(m, *callee, callee->body, seen));
    }
    for (ir::BlockId r : op.regions) TRI_RETURN_IF_ERROR(check_runnable(m, f, r, seen));
  }
  return Status::ok();
}

class InterpTarget final : public target::Target {
 public:
  std::string_view name() const override { return "interp"; }
  Status compile(const ir::Module& m, const ir::Function& kernel, const target::CompileOptions& options,
                 std::shared_ptr<const target::Executable>* out) const override {
    std::set<const ir::Function*> seen{&kernel};
    TRI_RETURN_IF_ERROR(check_runnable(m, kernel, kernel.body, &seen));
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
