// compile_cpu: lower -> verify -> O3 (new pass manager, host CPU) -> ORC LLJIT; and the launch
// loop over the thread pool.
#include "jit/cpu_kernel.h"

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

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "base/clock.h"
#include "base/team.h"
#include "codegen/cpu/lower.h"
#include "codegen/llvm_options.h"
#include "jit/cpu_runtime.h"

namespace tri::jit {
namespace {

using codegen::cpu::EntryFn;
using codegen::cpu::RuntimeSites;

void init_native_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string take_message(llvm::Error e) { return llvm::toString(std::move(e)); }

// Block buffers up to this size per instance may run on the caller's stack (see run()).
constexpr uint64_t kCallerStackBytes = 64 << 10;

// The instances of a launch run with IEEE defaults whatever the host thread set (a game engine
// may have turned on flush-to-zero): round to nearest, denormals kept, exceptions masked.
class FpEnvGuard {
 public:
#if defined(__x86_64__) || defined(__i386__)
  FpEnvGuard() : saved_(_mm_getcsr()) { _mm_setcsr(0x1f80); }
  ~FpEnvGuard() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

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
  if (!opts.cpu.empty()) jtmb->setCPU(opts.cpu);
  if (!opts.features.empty()) {
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

struct CpuKernel::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  EntryFn entry = nullptr;
  RuntimeSites sites;
  std::string name;
  size_t num_params = 0;
  std::string ir;
  std::string assembly;
  double compile_ms = 0;
  uint64_t stack_bytes = 0;
  std::string object;
};

CpuKernel::CpuKernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CpuKernel::~CpuKernel() = default;

const std::string& CpuKernel::name() const { return impl_->name; }
size_t CpuKernel::num_params() const { return impl_->num_params; }
const std::string& CpuKernel::llvm_ir() const { return impl_->ir; }
const std::string& CpuKernel::assembly() const { return impl_->assembly; }
double CpuKernel::compile_ms() const { return impl_->compile_ms; }
uint64_t CpuKernel::stack_bytes() const { return impl_->stack_bytes; }
const std::string& CpuKernel::object() const { return impl_->object; }
const codegen::cpu::RuntimeSites& CpuKernel::sites() const { return impl_->sites; }

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

Status load_cpu_object(CpuObject obj, const CpuCompileOptions& opts, std::unique_ptr<CpuKernel>* out) {
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb;
  TRI_RETURN_IF_ERROR(make_jtmb(opts, &jtmb));
  auto impl = std::make_unique<CpuKernel::Impl>();
  impl->name = obj.name;
  impl->num_params = obj.num_params;
  impl->sites = std::move(obj.sites);
  impl->stack_bytes = obj.stack_bytes;
  impl->ir = std::move(obj.llvm_ir);
  impl->assembly = std::move(obj.assembly);
  impl->object = std::move(obj.object);

  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).setNumCompileThreads(0).create();
  if (!jit) return Status(Code::Compile, "cannot start the JIT: " + take_message(jit.takeError()));
  llvm::orc::SymbolMap syms;
  for (const HostSymbol& hs : host_symbols()) {
    syms[(*jit)->mangleAndIntern(hs.name)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(hs.address), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (llvm::Error e = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(syms))))
    return Status(Code::Compile, "cannot define the runtime symbols: " + take_message(std::move(e)));
  auto mb = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(impl->object.data(), impl->object.size()),
                                                 "tri-kernel-" + impl->name);
  if (llvm::Error e = (*jit)->addObjectFile(std::move(mb)))
    return Status(Code::Compile, "cannot add kernel '" + impl->name + "' to the JIT: " + take_message(std::move(e)));
  auto sym = (*jit)->lookup(codegen::cpu::kEntryFn);
  if (!sym)
    return Status(Code::Compile, "cannot link kernel '" + impl->name + "': " + take_message(sym.takeError()));
  impl->entry = sym->toPtr<EntryFn>();
  impl->jit = std::move(*jit);
  out->reset(new CpuKernel(std::move(impl)));
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
  std::unique_ptr<CpuKernel> k;
  TRI_RETURN_IF_ERROR(load_cpu_object(std::move(obj), opts, &k));
  k->impl_->compile_ms = ms_since(t0);
  *out = std::move(k);
  return Status::ok();
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

Status CpuKernel::run(const Grid& grid, const ArgValue* args, size_t nargs, ThreadPool* pool,
                      const PrintSink& print, const CancelToken& cancel, const TeamLaunch* team,
                      bool coresident) const {
  const Impl& k = *impl_;
  if (nargs != k.num_params)
    return Status(Code::LaunchArgs, "kernel '" + k.name + "' takes " + std::to_string(k.num_params) +
                                        " arguments, got " + std::to_string(nargs));
  if (nargs > 0 && !args) return Status(Code::InvalidArgument, "launch arguments are NULL");
  const uint64_t count = grid.count();
  if (count == 0) return Status::ok();
  std::vector<uint64_t> bits(nargs);
  for (size_t i = 0; i < nargs; ++i) bits[i] = args[i].bits;
  LaunchState ls;
  static const std::atomic<uint64_t> kNeverCancelled{0};
  const std::atomic<uint64_t>* counter = cancel.counter ? cancel.counter : &kNeverCancelled;
  static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t), "the generated code reads the counter as an i64");
  ls.cancel.counter = reinterpret_cast<const uint64_t*>(counter);
  ls.cancel.seen = cancel.counter ? cancel.seen : 0;
  assert(static_cast<void*>(&ls.cancel) == static_cast<void*>(&ls) && "the generated code reads it at offset 0");
  auto cancelled = [&] {
    return Status(Code::Cancelled, "the launch of kernel '" + k.name + "' was cancelled (tri_context_cancel)");
  };
  if (cancel.requested()) return cancelled();
  ls.sites = &k.sites;
  ls.print = &print;
  ls.grid = grid;
  assert(reinterpret_cast<char*>(&ls.team) - reinterpret_cast<char*>(&ls) == codegen::cpu::kTeamHeadOffset);
  if (team) {
    ls.team_launch = team;
    ls.team.rank = team->rank;
    ls.team.num_ranks = team->num_ranks;
    if (team->heap_bases) {
      ls.team.heap_base = team->heap_bases[team->rank];
      ls.team.heap_bytes = team->heap_bytes;
      ls.team.bases = team->heap_bases;
    }
  }
  EntryFn entry = k.entry;
  if (coresident) {
    if (count > kMaxCoresidentPrograms)
      return Status(Code::LimitExceeded,
                    "kernel '" + k.name + "' waits on signals, so its " + std::to_string(count) +
                        " program instances must all run at once, and the host targets run at most " +
                        std::to_string(kMaxCoresidentPrograms) + "; use a smaller grid");
    // Each instance on its own thread, with room for its block buffers and the runtime's calls.
    const size_t stack = static_cast<size_t>(std::max<uint64_t>(k.stack_bytes + (uint64_t(4) << 20), uint64_t(8) << 20));
    Status started = run_coresident(
        count, stack,
        [&](uint64_t id) {
          FpEnvGuard fp;
          if (entry(bits.data(), &ls, grid.x, grid.y, grid.z, id, id + 1) != 0) {
            std::lock_guard<std::mutex> lock(ls.mu);
            if (!ls.failed) ls.cancelled.store(true, std::memory_order_relaxed);
          }
        },
        &ls.stop);
    if (ls.failed) return ls.failure;
    if (!started.is_ok()) return started;
    if (ls.cancelled.load(std::memory_order_relaxed)) return cancelled();
    return Status::ok();
  }
  // Kernels with small frames also run on the calling thread (any thread's stack holds them),
  // which spares a launch of one chunk the wake-up of a worker.
  const bool caller_joins = k.stack_bytes <= kCallerStackBytes;
  if (!pool && caller_joins) {
    FpEnvGuard fp;
    const int32_t rc = entry(bits.data(), &ls, grid.x, grid.y, grid.z, 0, count);
    if (ls.failed) return ls.failure;
    return rc != 0 ? cancelled() : Status::ok();
  }
  std::unique_ptr<ThreadPool> own;
  if (!pool) {
    own = std::make_unique<ThreadPool>(1);
    if (own->size() == 0) return Status(Code::OutOfMemory, "cannot start a thread for the launch: " + own->start_error());
    pool = own.get();
  }
  // Enough chunks per worker to balance uneven instances, few enough to amortize the hand-out.
  uint64_t chunks = std::min<uint64_t>(count, uint64_t(pool->size() + (caller_joins ? 1 : 0)) * 16);
  const uint64_t per = (count + chunks - 1) / chunks;
  chunks = (count + per - 1) / per;
  Status ran = pool->run(
      chunks,
      [&](uint64_t c) {
        if (ls.stop.load(std::memory_order_relaxed)) return;
        if (cancel.requested()) {
          ls.cancelled.store(true, std::memory_order_relaxed);
          return;
        }
        uint64_t begin = c * per, end = std::min(count, begin + per);
        FpEnvGuard fp;
        // 1 without a recorded failure: the instance stopped for a cancel.
        if (entry(bits.data(), &ls, grid.x, grid.y, grid.z, begin, end) != 0) {
          std::lock_guard<std::mutex> lock(ls.mu);
          if (!ls.failed) ls.cancelled.store(true, std::memory_order_relaxed);
        }
      },
      caller_joins);
  if (!ran.is_ok()) return ran;
  if (ls.failed) return ls.failure;
  if (ls.cancelled.load(std::memory_order_relaxed)) return cancelled();
  return Status::ok();
}

}  // namespace tri::jit
