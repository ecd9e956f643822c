// From the lowered LLVM module to PTX text: LLVM's O3 pipeline with the NVPTX target machine
// for the chosen architecture and PTX version, then NVPTX's assembly printer. No CUDA toolkit is
// involved: PTX for any architecture is made on any machine.
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>

#include "base/clock.h"
#include "codegen/llvm_options.h"
#include "codegen/nvptx/lower.h"
#include "codegen/nvptx/narrow_compares.h"
#include "codegen/nvptx/nvshmem_link.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tri::codegen::nvptx {
namespace {

void init_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // Shared (and const, local) addresses in 32-bit registers, as the hardware takes them: with
    // 64-bit pointers every shared access pays a widening and a 64-bit add (the lowering's data
    // layout, lower.cpp, says the same). The option is LLVM's own, set once in Tri's private
    // copy of LLVM.
    std::lock_guard<std::mutex> lock(codegen_pipeline_mutex());
    set_llvm_bool_option("nvptx-short-ptr", true);
  });
}

std::string arch_name(const GpuOptions& opt) { return "sm_" + std::to_string(opt.sm) + (opt.sm_a ? "a" : ""); }

Status make_tm(const GpuOptions& opt, std::unique_ptr<llvm::TargetMachine>* out) {
  init_nvptx();
  std::string err;
  const std::string triple = "nvptx64-nvidia-cuda";
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!t) return Status(Code::Internal, "the NVPTX target is missing from this build: " + err);
  llvm::TargetOptions to;
  // No contraction of a*b+c: the IR's arithmetic rounds each op (fma is its own op).
  to.AllowFPOpFusion = llvm::FPOpFusion::Strict;
  std::string features = "+ptx" + std::to_string(opt.ptx_version);
  out->reset(t->createTargetMachine(triple, arch_name(opt), features, to, std::nullopt, std::nullopt,
                                    llvm::CodeGenOptLevel::Aggressive));
  if (!*out) return Status(Code::Unsupported, "LLVM cannot make an NVPTX target for " + arch_name(opt));
  return Status::ok();
}

}  // namespace

Status emit_ptx(llvm::Module& mod, const GpuOptions& opt, std::string* ptx, std::string* llvm_ir, double* ms) {
  std::unique_ptr<llvm::TargetMachine> tm;
  TRI_RETURN_IF_ERROR(make_tm(opt, &tm));
  mod.setDataLayout(tm->createDataLayout());
  auto t0 = std::chrono::steady_clock::now();
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassInstrumentationCallbacks pic;
    skip_passes_once_cancelled(pic, opt.cancel);
    llvm::PassBuilder pb(tm.get(), llvm::PipelineTuningOptions(), std::nullopt, &pic);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    // sm_90 compares bf16 in the type (setp.bf16): widened bf16 compares narrow back to it,
    // after each InstCombine (which moves selects of widened values below the widening).
    if (opt.sm >= 90)
      pb.registerPeepholeEPCallback([](llvm::FunctionPassManager& fpm, llvm::OptimizationLevel) {
        fpm.addPass(NarrowBf16Compares());
      });
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(mod, mam);
  }
  if (opt.cancel.requested()) return Status(Code::Cancelled, "the compile was cancelled before code generation");
  if (ms) ms[0] = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  if (llvm_ir) {
    llvm::raw_string_ostream os(*llvm_ir);
    mod.print(os, nullptr);
  }
  llvm::SmallString<0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  {
    // No loop strength reduction: on the tensor-core loops it rewrites each cp.async source
    // pointer as a shared induction variable plus a per-copy offset, one IMAD.WIDE per copy,
    // whose three register reads stall dispatch while wgmma holds the register file (ncu:
    // 20% of the matmul's stall samples against Triton's 7%, on those IMAD.WIDEs); with each
    // pointer advanced by its own 64-bit add, f16 4096^3 went 671 -> 720 TFLOP/s on the H100.
    std::lock_guard<std::mutex> lock(codegen_pipeline_mutex());
    const bool old = set_llvm_bool_option("disable-lsr", true);
    const bool failed = tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile);
    set_llvm_bool_option("disable-lsr", old);
    if (failed) return Status(Code::Internal, "the NVPTX target cannot emit assembly");
  }
  if (ms) ms[1] = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  pm.run(mod);
  ptx->assign(buf.begin(), buf.end());
  if (ms) ms[2] = ms_since(t0);
  return Status::ok();
}

Status compile_ptx(const ir::Module& m, const ir::Function& kernel, const GpuOptions& opt, std::string* ptx,
                   KernelInfo* info, std::string* llvm_ir, std::string* times) {
  auto t0 = std::chrono::steady_clock::now();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod;
  TRI_RETURN_IF_ERROR(lower_kernel(m, kernel, opt, ctx, &mod, info));
  if (info->nvshmem) TRI_RETURN_IF_ERROR(link_nvshmem_device(*mod, opt.nvshmem_device_library, info->name));
  double lower_ms = ms_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  double ms[3] = {0, 0, 0};
  GpuOptions emit = opt;
  emit.ptx_version = std::max(opt.ptx_version, info->min_ptx_version);
  TRI_RETURN_IF_ERROR(emit_ptx(*mod, emit, ptx, llvm_ir, ms));
  if (times) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "lower %.2f ms, opt+ptx %.2f ms (O3 %.2f, print %.2f, NVPTX codegen %.2f)", lower_ms,
                  ms_since(t1), ms[0], ms[1], ms[2]);
    *times = buf;
  }
  return Status::ok();
}

}  // namespace tri::codegen::nvptx
