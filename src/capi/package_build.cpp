// Building packages (tri_package_builder_*; docs/aot.md): each kernel added is prepared as
// tri_kernel_compile prepares it, once per variant (the argument classes TRI_PACKAGE_* ask for),
// and compiled by its target for every machine asked for (target.h: compile_package); finish
// writes the package (src/package) with the module's reflection and, unless left out, its IR.
// tri_package_builder_add_tuned adds the winners of a tuning store (docs/tune.md's results: an
// export file or a cache directory's tune/) as entries marked tuned, which tri_module_kernel
// prefers for a request that leaves the tuned values unset (capi/package.cpp).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include "base/file.h"
#include "capi/handles.h"
#include "ir/binary.h"
#include "target/target.h"
#include "tune/tune.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

struct tri_package_builder {
  tri_module* module = nullptr;  // holds a reference
  bool with_ir = true;
  std::vector<package::Kernel> kernels;
};

namespace {

std::vector<std::string> split_machines(const char* list) {
  std::vector<std::string> out;
  std::stringstream ss(list ? list : "");
  std::string m;
  while (std::getline(ss, m, ','))
    if (!m.empty()) out.push_back(m);
  return out;
}

// The classes of the variants `flags` asks for: every pointer aligned to 16; and every integer
// (not i1) a multiple of 16 too. Parameters past the first 32, or not classed, have none.
std::vector<uint64_t> variant_classes(const std::vector<capi::ParamSig>& sigs, uint32_t unclassed, uint32_t flags) {
  std::vector<uint64_t> keys{0};
  uint64_t aligned = 0, divisible = 0;
  for (size_t i = 0; i < sigs.size() && i < 32; ++i) {
    if (unclassed >> i & 1) continue;
    if (sigs[i].is_ptr) aligned |= uint64_t(1) << (2 * i);
    else if (sigs[i].int_mask && sigs[i].dtype != ir::Scalar::I1) divisible |= uint64_t(2) << (2 * i);
  }
  if ((flags & TRI_PACKAGE_ALIGNED) && aligned) keys.push_back(aligned);
  if ((flags & TRI_PACKAGE_DIVISIBLE) && (aligned | divisible) && (aligned | divisible) != keys.back())
    keys.push_back(aligned | divisible);
  return keys;
}

Status add(tri_package_builder* b, const std::string& name, const capi::CompileRequest& req, const char* machines,
           uint32_t flags, const std::string& note = std::string()) {
  tri_module* module = b->module;
  const ir::Function* fn = module->ir->find(name);
  if (!fn || !fn->is_kernel) return Status(Code::NotFound, "the module has no kernel @" + name);
  const target::Target* t = target::find(req.target);
  if (!t) return Status(Code::Unsupported, "target \"" + req.target + "\" is not in this build");
  std::vector<std::string> list = split_machines(machines);
  if (list.empty()) list = t->default_machines();
  if (list.empty()) return Status(Code::Unsupported, "target \"" + req.target + "\" makes no packages (use cuda or cpu)");
  package::Kernel k;
  k.name = name;
  k.target = req.target;
  k.num_warps = req.options.num_warps;
  k.num_stages = req.options.num_stages;
  k.note = note;
  for (const ir::Constexpr& c : fn->constexprs) {
    package::Constexpr pc;
    pc.name = c.name;
    auto it = req.constexprs.find(c.name);
    const ir::Attr& v = it != req.constexprs.end() ? it->second : c.default_value;
    pc.is_default = it == req.constexprs.end();
    if (!v.present()) return Status(Code::InvalidArgument, "constexpr " + c.name + " of @" + name + " has no value: set it");
    pc.is_float = v.kind == ir::Attr::Kind::Float;
    pc.i = v.i;
    pc.f = v.f;
    k.constexprs.push_back(pc);
  }
  for (const auto& [param, f] : req.facts) k.facts.push_back(package::Fact{param, f.first, f.second});
  k.equal_one = req.equal_one;
  const std::vector<capi::ParamSig> sigs = capi::param_sigs(*module->ir, *fn);
  const CancelToken cancel = capi::cancel_token(module->context);
  for (uint64_t key : variant_classes(sigs, req.unclassed, flags)) {
    const capi::CompileRequest r = key ? capi::variant_request(req, sigs, key) : req;
    std::unique_ptr<ir::Module> prepared;
    TRI_RETURN_IF_ERROR(capi::prepare(*module->ir, name, r, *t, cancel, &prepared));
    const ir::Function& kernel = *prepared->functions[0];
    if (key == 0)
      k.waits = ir::find_op(*prepared, kernel, [](ir::Opcode c) { return c == ir::Opcode::Wait; }, nullptr) != ir::kNoOp;
    package::Variant v;
    v.classes = key;
    target::CompileOptions options = r.options;
    options.cancel = cancel;
    std::vector<std::string> notes;
    TRI_RETURN_IF_ERROR(t->compile_package(*prepared, kernel, options, list, &v.payloads, &notes));
    if (key == 0)
      for (const std::string& n : notes) module->context->log(TRI_LOG_WARNING, "kernel @" + name + ": " + n);
    k.variants.push_back(std::move(v));
  }
  b->kernels.push_back(std::move(k));
  return Status::ok();
}

constexpr uint64_t kMaxStoreFileBytes = uint64_t(1) << 30;

// The results of a tuning store: an export file ({"tri_tune": 1, "results": [...]}), one result's
// file, or a directory of result files (a cache directory: its tune/ folder). Each text is
// checked by tune::from_json; a damaged one is an error naming it.
Status read_store(const std::string& path, std::vector<tune::Result>* out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Status(Code::Io, "cannot read the tuning store " + path);
  std::vector<std::pair<std::string, std::string>> texts;  // (where, JSON)
  if (S_ISDIR(st.st_mode)) {
    std::string dir = path;
    struct stat sub;
    if (::stat((path + "/tune").c_str(), &sub) == 0 && S_ISDIR(sub.st_mode)) dir = path + "/tune";
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) names.push_back(n);
      }
      ::closedir(d);
    } else {
      return Status(Code::Io, "cannot list the tuning store " + dir);
    }
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      std::string text;
      TRI_RETURN_IF_ERROR(read_user_file(dir + "/" + n, kMaxStoreFileBytes, "tri_package_builder_add_tuned", &text));
      texts.emplace_back(dir + "/" + n, std::move(text));
    }
  } else {
    std::string text;
    TRI_RETURN_IF_ERROR(read_user_file(path, kMaxStoreFileBytes, "tri_package_builder_add_tuned", &text));
    std::vector<std::string> parts;
    if (text.find("\"tri_tune\"") != std::string::npos) {
      Status split = tune::split_export(text, &parts);
      if (!split) return Status(split.code(), path + ": " + split.message());
    } else {
      parts.push_back(text);
    }
    for (size_t i = 0; i < parts.size(); ++i)
      texts.emplace_back(path + (parts.size() > 1 ? ", result " + std::to_string(i) : std::string()), parts[i]);
  }
  for (const auto& [where, text] : texts) {
    tune::Result r;
    Status parsed = tune::from_json(text, &r);
    if (!parsed) return Status(parsed.code(), where + ": " + parsed.message());
    out->push_back(std::move(r));
  }
  return Status::ok();
}

// Adds the winner of every result of `store` for a kernel of the module and for `target` (any
// package target when empty). Results of another Tri version, and results whose winner did not
// run, are skipped and logged; the same config of a kernel and target is added once. Results for
// larger key values come first (tri_module_kernel takes the first tuned entry that fits).
Status add_tuned(tri_package_builder* b, const std::string& store, const std::string& target, const char* machines,
                 uint32_t flags, uint32_t* added) {
  std::vector<tune::Result> results;
  TRI_RETURN_IF_ERROR(read_store(store, &results));
  tri_context* ctx = b->module->context;
  const std::string version = std::to_string(TRI_VERSION_MAJOR) + "." + std::to_string(TRI_VERSION_MINOR) + "." +
                              std::to_string(TRI_VERSION_PATCH);
  std::stable_sort(results.begin(), results.end(), [](const tune::Result& a, const tune::Result& b) {
    std::vector<int64_t> va, vb;
    for (const auto& kv : a.key_values) va.push_back(kv.second);
    for (const auto& kv : b.key_values) vb.push_back(kv.second);
    return va > vb;
  });
  std::vector<std::string> done;
  for (const tune::Result& r : results) {
    const ir::Function* fn = b->module->ir->find(r.kernel);
    if (!fn || !fn->is_kernel) continue;  // another module's kernel
    if ((!target.empty() && r.target != target) || (r.target != "cuda" && r.target != "cpu")) continue;
    const std::string what = "the tuning result for @" + r.kernel + " on " + r.target + " (key " + r.key.substr(0, 8) + ")";
    if (r.version != version) {
      ctx->log(TRI_LOG_WARNING, "tri_package_builder_add_tuned: " + what + " was made by Tri " + r.version + ", not " +
                                    version + ": skipped");
      continue;
    }
    if (r.best < 0 || size_t(r.best) >= r.configs.size() || size_t(r.best) >= r.trials.size() ||
        r.trials[r.best].status != 0 || !r.trials[r.best].measured) {
      ctx->log(TRI_LOG_WARNING, "tri_package_builder_add_tuned: " + what + " has no measured winner: skipped");
      continue;
    }
    const tune::Config& c = r.configs[r.best];
    const std::string id = r.kernel + "|" + r.target + "|" + tune::config_text(c);
    if (std::find(done.begin(), done.end(), id) != done.end()) continue;
    done.push_back(id);
    capi::CompileRequest req;
    req.target = r.target;
    req.options.num_warps = c.num_warps;
    req.options.num_stages = c.num_stages;
    for (const auto& [name, value] : c.constexprs) req.constexprs[name] = ir::Attr::of_int(value);
    std::string note = "tuned: config " + std::to_string(r.best) + " of " + std::to_string(r.configs.size()) + " (" +
                       tune::config_text(c) + ")";
    for (size_t i = 0; i < r.key_values.size(); ++i)
      note += std::string(i ? ", " : " for ") + r.key_values[i].first + "=" + std::to_string(r.key_values[i].second);
    Status st = add(b, r.kernel, req, machines, flags, note);
    if (!st) return Status(st.code(), what + ": " + st.message());
    ++*added;
  }
  return Status::ok();
}

}  // namespace

extern "C" {

TRI_API tri_result tri_package_builder_create(tri_module* module, uint32_t flags, tri_package_builder** out_builder) {
  TRI_CHECK_ARG(module);
  TRI_CHECK_ARG(out_builder);
  return guard([&] {
    if (tri_result r = capi::module_ir(module, "tri_package_builder_create")) return r;
    auto* b = new tri_package_builder();
    b->module = module;
    b->with_ir = !(flags & TRI_PACKAGE_NO_IR);
    capi::module_retain(module);
    *out_builder = b;
    return TRI_OK;
  });
}

TRI_API tri_result tri_package_builder_add(tri_package_builder* builder, const char* name,
                                           const tri_compile_options* options, const char* machines,
                                           uint32_t variants) {
  TRI_CHECK_ARG(builder);
  TRI_CHECK_ARG(name);
  return guard([&] {
    static const tri_compile_options kDefaults;
    Status st = add(builder, name, (options ? *options : kDefaults).req, machines, variants);
    if (!st.is_ok()) {
      st = Status(st.code(), "tri_package_builder_add: @" + std::string(name) + ": " + st.message());
      builder->module->context->log(TRI_LOG_ERROR, st.message());
    }
    return set_error(st);
  });
}

TRI_API tri_result tri_package_builder_add_tuned(tri_package_builder* builder, const char* store, const char* target,
                                                 const char* machines, uint32_t variants, uint32_t* out_added) {
  TRI_CHECK_ARG(builder);
  TRI_CHECK_ARG(store);
  return guard([&] {
    uint32_t added = 0;
    Status st = add_tuned(builder, store, target ? target : "", machines, variants, &added);
    if (!st.is_ok()) {
      st = Status(st.code(), "tri_package_builder_add_tuned: " + st.message());
      builder->module->context->log(TRI_LOG_ERROR, st.message());
    } else if (out_added) {
      *out_added = added;
    }
    return set_error(st);
  });
}

TRI_API tri_result tri_package_builder_finish(tri_package_builder* builder, tri_blob** out_package) {
  TRI_CHECK_ARG(builder);
  TRI_CHECK_ARG(out_package);
  return guard([&] {
    const tri_module* m = builder->module;
    package::Package p;
    p.producer = "tri " + std::to_string(TRI_VERSION_MAJOR) + "." + std::to_string(TRI_VERSION_MINOR) + "." +
                 std::to_string(TRI_VERSION_PATCH);
    p.name = m->ir->source_name;
    if (builder->with_ir) p.ir = ir::write_binary(*m->ir);
    p.functions = capi::describe_module(*m->ir);
    p.kernels = builder->kernels;
    std::string bytes;
    Status st = package::write(p, &bytes);
    if (!st.is_ok()) return set_error(st);
    return capi::make_blob(m->context, bytes, "tri_package_builder_finish", out_package);
  });
}

TRI_API void tri_package_builder_destroy(tri_package_builder* builder) {
  if (!builder) return;
  tri_module* m = builder->module;
  delete builder;
  capi::module_release(m);
}

}  // extern "C"
