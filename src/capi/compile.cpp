// Compiling kernels: tri_kernel_compile (a module's cache of compiled kernels in front of
// compile(): the disk cache, the passes, the target), tri_kernel_to_text and tri_kernel_code, and
// TRI_DUMP. The compiler half only (libtri).
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "base/clock.h"
#include "capi/compiled.h"
#include "capi/handles.h"
#include "ir/text.h"
#include "passes/pipeline.h"
#include "target/target.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

namespace tri::capi {

using namespace ir;

std::string CompileRequest::describe(const ir::Function& k, bool gpu) const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  for (const auto& [name, v] : constexprs) {
    if (v.kind != Attr::Kind::Float) {
      add(name + "=" + std::to_string(v.i));
      continue;
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%g", v.f);
    add(name + "=" + buf);
  }
  if (gpu) {
    add("warps=" + std::to_string(options.num_warps));
    if (options.num_stages) add("stages=" + std::to_string(options.num_stages));
  }
  std::string facts;
  auto fact = [&](uint32_t param, const std::string& what) {
    const std::string name = param < k.params.size() ? "%" + k.params[param].name : "%" + std::to_string(param);
    facts += (facts.empty() ? "" : ", ") + name + " " + what;
  };
  for (const auto& [param, f] : this->facts) {
    if (f.first) fact(param, "aligned to " + std::to_string(f.first));
    if (f.second) fact(param, "divisible by " + std::to_string(f.second));
  }
  for (uint32_t i = 0; i < 32; ++i)
    if (equal_one >> i & 1) fact(i, "= 1");
  if (!facts.empty()) s += (s.empty() ? "" : "; ") + facts;
  return s.empty() ? "-" : s;
}

namespace {

// TRI_DUMP=ir,llvm,asm,ptx,cubin (any of them) writes those stages of every kernel compiled to
// TRI_DUMP_DIR (default ./tri-dump) as <kernel>.<target>.<n>.{tri,ll,s,ptx,cubin}: the
// specialized IR, the optimized LLVM IR (cpu, cuda), the host assembly (cpu), the PTX and the
// driver's cubin (cuda, where a driver made one). A stage the target does not make is skipped.
void dump_stages(const Compiled& c, const std::string& name) {
  const char* what = std::getenv("TRI_DUMP");
  if (!what || !*what) return;
  const char* dir_env = std::getenv("TRI_DUMP_DIR");
  std::string dir = dir_env && *dir_env ? dir_env : "tri-dump";
  ::mkdir(dir.c_str(), 0777);
  static std::atomic<int> counter{0};
  std::string base = dir + "/" + name + "." + std::string(c.target->name()) + "." + std::to_string(counter++);
  std::string stages = std::string(",") + what + ",";
  auto write = [&](const char* stage, const char* ext, const std::string& text) {
    if (stages.find(std::string(",") + stage + ",") == std::string::npos || text.empty()) return;
    if (FILE* f = std::fopen((base + ext).c_str(), "wb")) {
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
  };
  write("ir", ".tri", ir::print_text(*c.ir));
  write("llvm", ".ll", c.exe->code("llvm"));
  write("asm", ".s", c.exe->code("asm"));
  write("ptx", ".ptx", c.exe->code("ptx"));
  write("cubin", ".cubin", c.exe->code("cubin"));
}

bool is_wait(Opcode c) { return c == Opcode::Wait; }

}  // namespace

std::vector<ParamSig> param_sigs(const Module& m, const Function& k) {
  std::vector<ParamSig> out;
  for (const Param& p : k.params) {
    const bool is_ptr = m.types.is_ptr(p.type);
    TypeId scalar = is_ptr ? m.types.get(p.type).pointee : p.type;
    out.push_back(make_sig(p.name, is_ptr, m.types.get(scalar).scalar));
  }
  return out;
}

Status prepare(const Module& m, const std::string& name, const CompileRequest& req, const target::Target& t,
               const CancelToken& cancel, std::unique_ptr<Module>* out) {
  std::vector<passes::ConstexprBinding> values;
  for (const auto& [n, v] : req.constexprs) values.push_back({n, v});
  std::vector<passes::ArgFacts> facts;
  for (const auto& [param, f] : req.facts) facts.push_back({param, f.first, f.second});
  for (uint32_t i = 0; i < 32; ++i)
    if (req.equal_one >> i & 1) facts.push_back({i, 0, 0, true});
  passes::PipelineOptions popt;
  popt.num_stages = req.options.num_stages ? req.options.num_stages : t.default_num_stages();
  popt.cancel = cancel;
  return passes::prepare_kernel(m, name, values, facts, popt, out);
}

Status compile(const Module& m, const std::string& name, const CompileRequest& req, std::shared_ptr<Compiled>* out,
               const std::function<void(const std::string&)>& timing_sink, cache::DiskCache* disk,
               const CancelToken& cancel) {
  target::CompileOptions options = req.options;
  options.cancel = cancel;
  auto cancelled = [&] { return Status(Code::Cancelled, "the compile of kernel @" + name + " was cancelled"); };
  if (cancel.requested()) return cancelled();
  const target::Target* t = target::find(req.target);
  if (!t)
    return Status(Code::Unsupported, "target \"" + req.target + "\" is not available in this build (available: " +
                                         target::names() + ")");
  // Each timing line names the specialization, so the lines of a tune's many compiles say which
  // config they are ("kernel @mm: passes 1.2 ms [BM=64, BN=64, warps=4]").
  std::function<void(const std::string&)> timing;
  if (timing_sink) {
    const Function* fn = m.find(name);
    const std::string what = fn ? req.describe(*fn, t->uses_stream()) : std::string("-");
    const std::string suffix = what == "-" ? std::string() : " [" + what + "]";
    timing = [&timing_sink, suffix](const std::string& line) { timing_sink(line + suffix); };
  }
  options.timing = timing;

  auto c = std::make_shared<Compiled>();
  c->target = t;
  c->req = req;  // compile_with_disk describes it in the entry
  // TRI_DUMP wants every stage of a compile, which a kernel read from the disk has not got.
  const char* dump = std::getenv("TRI_DUMP");
  const bool use_disk = disk && !(dump && *dump);
  if (dump && *dump) options.keep_code = true;
  cache::Key front;
  // What a variant of the kernel is compiled with (capi/variants.cpp), and whether it waits.
  auto finish = [&](Compiled* c) {
    c->source = &m;
    c->name = name;
    c->req = req;
    c->disk = disk;
    c->waits = c->ir && ir::find_op(*c->ir, c->kernel(), &is_wait, nullptr) != ir::kNoOp;
    c->compile_variant = [&m, name, disk](const CompileRequest& r, std::shared_ptr<Compiled>* made) {
      return compile(m, name, r, made, nullptr, disk);
    };
  };
  if (use_disk && try_front(*disk, m, name, req, *t, options, c.get(), &front)) {
    finish(c.get());
    *out = std::move(c);
    return Status::ok();
  }
  const auto passes_start = std::chrono::steady_clock::now();
  TRI_RETURN_IF_ERROR(prepare(m, name, req, *t, cancel, &c->ir));
  if (timing) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ": passes %.2f ms",
                  ms_since(passes_start));
    timing("kernel @" + name + buf);
  }

  const Function& k = c->kernel();
  c->params = param_sigs(*c->ir, k);
  if (cancel.requested()) return cancelled();

  if (use_disk) {
    cache::Key entry;
    entry.hi = entry.lo = 0;
    TRI_RETURN_IF_ERROR(compile_with_disk(*disk, c.get(), *t, options, &entry));
    if (entry.hi || entry.lo) remember_front(*disk, front, entry, *c->ir);
  } else
    TRI_RETURN_IF_ERROR(t->compile(*c->ir, k, options, &c->exe));
  dump_stages(*c, name);
  finish(c.get());
  *out = std::move(c);
  return Status::ok();
}

}  // namespace tri::capi

extern "C" {

TRI_API tri_result tri_kernel_compile(tri_module* module, const char* name, const tri_compile_options* options,
                                      tri_kernel** out_kernel) {
  TRI_CHECK_ARG(module);
  TRI_CHECK_ARG(name);
  TRI_CHECK_ARG(out_kernel);
  return guard([&] {
    static const tri_compile_options kDefaults;
    const capi::CompileRequest& req = (options ? *options : kDefaults).req;
    // Taken now: a tri_context_cancel made while this call waits or compiles stops it.
    const CancelToken cancel = capi::cancel_token(module->context);
    std::shared_ptr<capi::Compiled> compiled;
    // A package's module: the package's code when it holds this specialization, else a compile of
    // the package's IR.
    if (module->package) {
      bool found = false;
      Status st = capi::package_kernel(module, name, req, &compiled, &found);
      if (!st.is_ok()) {
        module->context->log(TRI_LOG_ERROR, st.message());
        return set_error(st);
      }
      if (found) {
        *out_kernel = new tri_kernel{module, std::move(compiled)};
        capi::module_retain(module);
        return TRI_OK;
      }
      if (!module->ir) {
        const std::string has = capi::package_entries(module, name);
        return set_error(Code::NotFound, "tri_kernel_compile: " + module->name + " holds no @" + name +
                                             " for this request and not the IR to compile it" +
                                             (has.empty() ? std::string() : " (it has @" + std::string(name) + " for: " + has + ")"));
      }
    }
    bool made = false;
    Status st = module->kernels.get(
        req.key(name),
        [&](std::shared_ptr<capi::Compiled>* out) {
          tri_context* ctx = module->context;
          made = true;
          return capi::compile(
              *module->ir, name, req, out, [ctx](const std::string& m) { ctx->log(TRI_LOG_DEBUG, m); },
              capi::context_disk_cache(ctx), cancel);
        },
        &compiled);
    if (!st.is_ok()) {
      module->context->log(TRI_LOG_ERROR, st.message());
      return set_error(st);
    }
    // Said after the cache's lock and in-flight mark are gone: the sink may compile again.
    if (made) {
      const std::string what = req.describe(compiled->kernel(), compiled->target->uses_stream());
      module->context->log(TRI_LOG_DEBUG, "compiled kernel @" + std::string(name) + " for target \"" + req.target +
                                              "\"" + (what == "-" ? std::string() : " [" + what + "]"));
    }
    auto* k = new tri_kernel{module, std::move(compiled)};
    capi::module_retain(module);
    *out_kernel = k;
    return TRI_OK;
  });
}

TRI_API tri_result tri_kernel_to_text(const tri_kernel* kernel, tri_blob** out_text) {
  TRI_CHECK_ARG(kernel);
  TRI_CHECK_ARG(out_text);
  return guard([&] {
    if (!kernel->compiled->ir)
      return set_error(Code::NotFound, "tri_kernel_to_text: the kernel @" + kernel->compiled->name +
                                           " comes from a package, which holds its code, not its IR");
    return capi::make_blob(kernel->module->context, ir::print_text(*kernel->compiled->ir), "tri_kernel_to_text",
                           out_text);
  });
}

namespace {

// Whether `kind` is one of the kinds a Target::code_kinds text lists ("llvm (...), asm (...)").
bool makes_kind(std::string_view kinds, std::string_view kind) {
  for (size_t at = 0; at < kinds.size();) {
    size_t end = kinds.find_first_of(" ,", at);
    if (end == std::string_view::npos) end = kinds.size();
    if (kinds.substr(at, end - at) == kind) return true;
    at = kinds.find(", ", end);
    if (at == std::string_view::npos) break;
    at += 2;
  }
  return false;
}

}  // namespace

TRI_API tri_result tri_kernel_code(const tri_kernel* kernel, const char* kind, tri_blob** out_code) {
  TRI_CHECK_ARG(kernel);
  TRI_CHECK_ARG(kind);
  TRI_CHECK_ARG(out_code);
  return guard([&] {
    const capi::Compiled& c = *kernel->compiled;
    std::string code = c.exe->code(kind);
    if (code.empty() && (c.from_disk || c.target->keeps_code_on_request()) && makes_kind(c.target->code_kinds(), kind)) {
      // What a compile keeps is what launches need (and a kernel read from the disk cache has
      // its payload only): the other stages come from compiling it again, in memory, keeping
      // them, once per kernel.
      std::shared_ptr<const target::Executable> shown;
      {
        std::lock_guard<std::mutex> lock(c.mu_);
        if (!c.with_code) {
          target::CompileOptions o = c.req.options;
          o.keep_code = true;
          std::shared_ptr<const target::Executable> fresh;
          if (c.target->compile(*c.ir, c.kernel(), o, &fresh).is_ok()) c.with_code = std::move(fresh);
        }
        shown = c.with_code;
      }
      if (shown) code = shown->code(kind);
    }
    if (code.empty()) {
      const std::string_view kinds = c.target->code_kinds();
      return set_error(Code::NotFound, std::string("tri_kernel_code: target \"") + std::string(c.target->name()) +
                                           "\" made no code of kind '" + kind + "' for this kernel (" +
                                           (kinds.empty() ? std::string("it makes none to show")
                                                          : "it makes: " + std::string(kinds)) +
                                           ")");
    }
    return capi::make_blob(kernel->module->context, code, "tri_kernel_code", out_code);
  });
}

}  // extern "C"
