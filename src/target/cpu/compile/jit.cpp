// compile_cpu: lower -> verify -> O3 (new pass manager, host CPU) -> object file -> ORC LLJIT,
// which links it with the runtime's symbols into a CpuKernel (kernel.h runs it).
#include "target/cpu/compile/jit.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <mutex>

#include "base/clock.h"
#include "codegen/cpu/lower.h"
#include "codegen/llvm_options.h"
#include "target/cpu/runtime.h"

namespace tri::cpu {
namespace {

void init_native_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string take_message(llvm::Error e) { return llvm::toString(std::move(e)); }

struct Built {
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> mod;
  RuntimeSites sites;
  uint64_t stack_bytes = 0;
};

Status make_jtmb(const CpuCompileOptions& opts, std::unique_ptr<llvm::orc::JITTargetMachineBuilder>* out) {
  init_native_target();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return Status(Code::Unsupported, "cannot target the host CPU: " + take_message(jtmb.takeError()));
  if (!opts.cpu.empty()) {
    // A named CPU (a package's x86-64 level) brings its own features: none of the host's.
    jtmb->setCPU(opts.cpu);
    jtmb->setFeatures(opts.features);
  } else if (!opts.features.empty()) {
    llvm::SubtargetFeatures f(opts.features);
    jtmb->setFeatures(f.getString());
  }
  int lvl = std::clamp(opts.opt_level, 0, 3);
  static const llvm::CodeGenOptLevel levels[] = {llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
                                                 llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  jtmb->setCodeGenOptLevel(levels[lvl]);
  // What LLJIT sets for JITLink on ELF: the object files we emit ourselves must match.
  if (jtmb->getTargetTriple().isOSBinFormatELF()) {
    jtmb->setRelocationModel(llvm::Reloc::PIC_);
    jtmb->setCodeModel(llvm::CodeModel::Small);
  }
  *out = std::make_unique<llvm::orc::JITTargetMachineBuilder>(std::move(*jtmb));
  return Status::ok();
}

Status build(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts,
             llvm::orc::JITTargetMachineBuilder& jtmb, Built* out) {
  auto tm = jtmb.createTargetMachine();
  if (!tm) return Status(Code::Unsupported, "cannot create a target machine: " + take_message(tm.takeError()));
  out->ctx = std::make_unique<llvm::LLVMContext>();
  codegen::cpu::LoweredKernel lk;
  TRI_RETURN_IF_ERROR(codegen::cpu::lower_kernel(m, kernel, *out->ctx, &lk));
  llvm::Module& mod = *lk.module;
  mod.setDataLayout((*tm)->createDataLayout());
  mod.setTargetTriple((*tm)->getTargetTriple().str());
  std::string cpu = (*tm)->getTargetCPU().str();
  std::string features = (*tm)->getTargetFeatureString().str();
  for (llvm::Function& f : mod) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", cpu);
    if (!features.empty()) f.addFnAttr("target-features", features);
  }
  {
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(mod, &os)) {
      std::string text;
      llvm::raw_string_ostream ts(text);
      mod.print(ts, nullptr);
      return Status(Code::Internal, "cpu backend made invalid LLVM IR for kernel '" + kernel.name + "': " + os.str() +
                                        "\n" + ts.str());
    }
  }
  if (opts.cancel.requested()) return Status(Code::Cancelled, "the compile of kernel @" + kernel.name + " was cancelled");
  const int lvl = std::clamp(opts.opt_level, 0, 3);
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = lvl >= 2;
  pto.SLPVectorization = lvl >= 2;
  // LLVM's runtime unroller is off: the lowering's loops are already vectorized and interleaved,
  // and unrolling them again tripled the compile time of a softmax for no speed (measured);
  // the lowering asks for full unrolling of its tiny innermost loops itself.
  pto.LoopUnrolling = false;
  pto.LoopInterleaving = lvl >= 2;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks pic;
  codegen::skip_passes_once_cancelled(pic, opts.cancel);
  llvm::PassBuilder pb(tm->get(), pto, std::nullopt, &pic);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel levels[] = {llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
                                                   llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::ModulePassManager mpm =
      lvl == 0 ? pb.buildO0DefaultPipeline(levels[0]) : pb.buildPerModuleDefaultPipeline(levels[lvl]);
  mpm.run(mod, mam);
  if (opts.cancel.requested()) return Status(Code::Cancelled, "the compile of kernel @" + kernel.name + " was cancelled");
  out->mod = std::move(lk.module);
  out->sites = std::move(lk.sites);
  out->stack_bytes = lk.stack_bytes;
  out->tm = std::move(*tm);
  return Status::ok();
}

std::string module_text(const llvm::Module& mod) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mod.print(os, nullptr);
  return os.str();
}

}  // namespace

Status compile_cpu_object(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts,
                          CpuObject* out) {
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb;
  TRI_RETURN_IF_ERROR(make_jtmb(opts, &jtmb));
  Built built;
  TRI_RETURN_IF_ERROR(build(m, kernel, opts, *jtmb, &built));
  CpuObject o;
  o.name = kernel.name;
  o.num_params = kernel.params.size();
  o.sites = std::move(built.sites);
  o.stack_bytes = built.stack_bytes;
  if (opts.keep_llvm_ir) o.llvm_ir = module_text(*built.mod);
  if (opts.cancel.requested()) return Status(Code::Cancelled, "the compile of kernel @" + kernel.name + " was cancelled");
  // Code generation changes the module it runs on, so the assembly is made from a copy, taken
  // before the object file is; a compile that does not ask for it pays nothing.
  std::unique_ptr<llvm::Module> for_asm = opts.keep_asm ? llvm::CloneModule(*built.mod) : nullptr;
  auto emit = [&](llvm::Module& mod, llvm::CodeGenFileType type, std::string* out) {
    llvm::SmallVector<char, 0> buf;
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    {
      std::lock_guard<std::mutex> lock(codegen::codegen_pipeline_mutex());  // LLVM's options as set by default
      if (built.tm->addPassesToEmitFile(pm, os, nullptr, type))
        return Status(Code::Unsupported, std::string("LLVM cannot emit ") +
                                             (type == llvm::CodeGenFileType::ObjectFile ? "an object file" : "assembly") +
                                             " for the host CPU");
    }
    pm.run(mod);
    out->assign(buf.data(), buf.size());
    return Status::ok();
  };
  TRI_RETURN_IF_ERROR(emit(*built.mod, llvm::CodeGenFileType::ObjectFile, &o.object));
  if (for_asm) TRI_RETURN_IF_ERROR(emit(*for_asm, llvm::CodeGenFileType::AssemblyFile, &o.assembly));
  *out = std::move(o);
  return Status::ok();
}

Status load_cpu_object(CpuObject obj, const CpuCompileOptions& opts, std::unique_ptr<CpuKernel>* out,
                       double compile_ms) {
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb;
  TRI_RETURN_IF_ERROR(make_jtmb(opts, &jtmb));
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).setNumCompileThreads(0).create();
  if (!jit) return Status(Code::Compile, "cannot start the JIT: " + take_message(jit.takeError()));
  llvm::orc::SymbolMap syms;
  for (const HostSymbol& hs : host_symbols()) {
    syms[(*jit)->mangleAndIntern(hs.name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(hs.address), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (llvm::Error e = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(syms))))
    return Status(Code::Compile, "cannot define the runtime symbols: " + take_message(std::move(e)));
  auto mb = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(obj.object.data(), obj.object.size()),
                                                 "tri-kernel-" + obj.name);
  if (llvm::Error e = (*jit)->addObjectFile(std::move(mb)))
    return Status(Code::Compile, "cannot add kernel '" + obj.name + "' to the JIT: " + take_message(std::move(e)));
  auto sym = (*jit)->lookup(kEntryFn);
  if (!sym)
    return Status(Code::Compile, "cannot link kernel '" + obj.name + "': " + take_message(sym.takeError()));
  CpuCode code;
  code.name = obj.name;
  code.num_params = obj.num_params;
  code.entry = sym->toPtr<EntryFn>();
  code.sites = std::move(obj.sites);
  code.stack_bytes = obj.stack_bytes;
  code.keep = std::shared_ptr<llvm::orc::LLJIT>(std::move(*jit));  // the session owns the code
  CpuBuild build;
  build.object = std::move(obj.object);
  build.llvm_ir = std::move(obj.llvm_ir);
  build.assembly = std::move(obj.assembly);
  build.compile_ms = compile_ms;
  *out = std::make_unique<CpuKernel>(std::move(code), std::move(build));
  return Status::ok();
}

std::string cpu_identity(const CpuCompileOptions& opts) {
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb;
  if (!make_jtmb(opts, &jtmb).is_ok()) return std::string();
  std::string s = "llvm " LLVM_VERSION_STRING "; " + jtmb->getTargetTriple().str() + "; cpu " + jtmb->getCPU() +
                  "; features " + jtmb->getFeatures().getString() + "; opt " +
                  std::to_string(std::clamp(opts.opt_level, 0, 3));
  return s;
}

Status compile_cpu(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts,
                   std::unique_ptr<CpuKernel>* out) {
  auto t0 = std::chrono::steady_clock::now();
  CpuObject obj;
  TRI_RETURN_IF_ERROR(compile_cpu_object(m, kernel, opts, &obj));
  return load_cpu_object(std::move(obj), opts, out, ms_since(t0));
}

Status compile_cpu(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts,
                   std::shared_ptr<const CpuKernel>* out) {
  std::unique_ptr<CpuKernel> k;
  TRI_RETURN_IF_ERROR(compile_cpu(m, kernel, opts, &k));
  *out = std::move(k);
  return Status::ok();
}

Status cpu_llvm_ir(const ir::Module& m, const ir::Function& kernel, const CpuCompileOptions& opts, std::string* out) {
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb;
  TRI_RETURN_IF_ERROR(make_jtmb(opts, &jtmb));
  Built built;
  TRI_RETURN_IF_ERROR(build(m, kernel, opts, *jtmb, &built));
  *out = module_text(*built.mod);
  return Status::ok();
}

}  // namespace tri::cpu
