// Packages through the C API (docs/aot.md): tri_module_load_package reads one (src/package) into a
// module whose reflection is the package's, and tri_module_kernel gives the kernel the package
// holds for a specialization request, its variants loaded for this machine by their target
// (target.h: load_package picks the GPU's cubin or PTX, the CPU's best x86-64 level). Nothing here
// compiles: the library without a compiler (libtri_rt) is built from this file too. The full
// library also reads the package's IR, so that tri_kernel_compile compiles what the package lacks.
#include <cstdio>
#include <cstring>

#include "capi/handles.h"
#include "target/target.h"
#ifndef TRI_RUNTIME_ONLY
#include "ir/binary.h"
#include "ir/verifier.h"
#endif

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

namespace tri::capi {

// Whether `k` holds a tuned config (tri_package_builder_add_tuned).
static bool is_tuned(const package::Kernel& k) { return k.note.compare(0, 6, "tuned:") == 0; }

namespace {

std::string constexpr_text(const package::Constexpr& c) {
  return c.name + "=" + (c.is_float ? std::to_string(c.f) : std::to_string(c.i));
}

// What an entry was built for, for messages: "BLOCK=1024, cpu, 4 warps".
std::string entry_text(const package::Kernel& k) {
  std::string s;
  for (const package::Constexpr& c : k.constexprs) s += constexpr_text(c) + ", ";
  return s + k.target + ", " + std::to_string(k.num_warps) + " warps" +
         (k.num_stages ? ", " + std::to_string(k.num_stages) + " stages" : std::string()) +
         (k.facts.empty() && !k.equal_one ? std::string() : ", with argument facts");
}

// Whether entry `k` is what `req` asks of kernel `name`: the same target, warps, stages and
// facts, every constexpr the request sets at the entry's value, and the others at their defaults.
// A tuned entry also answers a request that leaves its values unset: warps at the default (4),
// stages at 0, and the constexprs the request does not name at whatever the tuning chose.
bool matches(const package::Kernel& k, const std::string& name, const CompileRequest& req, bool tuned) {
  const target::CompileOptions defaults;
  if (k.name != name || k.target != req.target || req.options.checked || k.equal_one != req.equal_one ||
      k.facts.size() != req.facts.size())
    return false;
  if (tuned ? (req.options.num_warps != k.num_warps && req.options.num_warps != defaults.num_warps) ||
                  (req.options.num_stages != k.num_stages && req.options.num_stages != defaults.num_stages)
            : k.num_warps != req.options.num_warps || k.num_stages != req.options.num_stages)
    return false;
  for (const package::Fact& f : k.facts) {
    auto it = req.facts.find(f.param);
    if (it == req.facts.end() || it->second.first != f.align || it->second.second != f.divisible) return false;
  }
  size_t named = 0;
  for (const package::Constexpr& c : k.constexprs) {
    auto it = req.constexprs.find(c.name);
    if (it == req.constexprs.end()) {
      if (!c.is_default && !tuned) return false;
      continue;
    }
    ++named;
    const ir::Attr& v = it->second;
    if ((v.kind == ir::Attr::Kind::Float) != c.is_float) return false;
    if (c.is_float ? !(v.f == c.f) : v.i != c.i) return false;
  }
  return named == req.constexprs.size();
}

// The Compiled of a package's entry: every variant's executable for this machine; the one without
// argument facts is the kernel, the others its prebuilt variants.
Status load_entry(tri_module* module, const package::Kernel& k, const CompileRequest& req,
                  std::shared_ptr<Compiled>* out) {
  const target::Target* t = target::find(k.target);
  if (!t)
    return Status(Code::Unsupported, "the package's kernel @" + k.name + " is for target \"" + k.target +
                                         "\", which this build does not have (it has " + target::names() + ")");
  const package::Function* fn = nullptr;
  for (const package::Function& f : module->package->functions)
    if (f.name == k.name) fn = &f;
  if (!fn) return Status(Code::CorruptBinary, module->name + ": the package has no reflection of kernel @" + k.name);
  const std::vector<ParamSig> sigs = param_sigs(*fn);
  const std::string what = "kernel @" + k.name + " (" + entry_text(k) + ") of " + module->name;
  // What the entry was built for (a tuned entry answers requests that leave its values unset).
  CompileRequest built = req;
  built.options.num_warps = k.num_warps;
  built.options.num_stages = k.num_stages;
  for (const package::Constexpr& c : k.constexprs)
    built.constexprs[c.name] = c.is_float ? ir::Attr::of_float(c.f) : ir::Attr::of_int(c.i);
  std::shared_ptr<Compiled> base;
  std::vector<std::pair<uint64_t, std::shared_ptr<Compiled>>> others;
  std::string first_note;
  for (const package::Variant& v : k.variants) {
    auto c = std::make_shared<Compiled>();
    c->target = t;
    c->params = sigs;
    c->name = k.name;
    c->req = built;
    c->waits = k.waits;
    std::string note;
    TRI_RETURN_IF_ERROR(t->load_package(v.payloads, what, &c->exe, &note));
    if (first_note.empty()) first_note = note;
    if (v.classes == 0 && !base)
      base = std::move(c);
    else
      others.emplace_back(v.classes, std::move(c));
  }
  if (!base) return Status(Code::CorruptBinary, what + ": the package has no variant of it without argument facts");
  if (!first_note.empty()) module->context->log(TRI_LOG_WARNING, first_note);
  base->prebuilt = std::move(others);
  *out = std::move(base);
  return Status::ok();
}

}  // namespace

Status package_kernel(tri_module* module, const std::string& name, const CompileRequest& req,
                      std::shared_ptr<Compiled>* out, bool* found) {
  *found = false;
  // A tuned entry that fits comes first (the package was made to run it), then the exact one.
  const package::Kernel* k = nullptr;
  for (const package::Kernel& e : module->package->kernels)
    if (!k && is_tuned(e) && matches(e, name, req, true)) k = &e;
  for (const package::Kernel& e : module->package->kernels)
    if (!k && matches(e, name, req, false)) k = &e;
  if (!k) return Status::ok();
  *found = true;
  return module->kernels.get(
      "package|" + req.key(name), [&](std::shared_ptr<Compiled>* made) { return load_entry(module, *k, req, made); },
      out);
}

std::string package_entries(const tri_module* module, const std::string& name) {
  std::string s;
  for (const package::Kernel& k : module->package->kernels)
    if (k.name == name) s += (s.empty() ? "" : "; ") + entry_text(k);
  return s;
}

}  // namespace tri::capi

extern "C" {

TRI_API tri_result tri_module_load_package(tri_context* context, const void* data, size_t size, const char* name,
                                           tri_module** out_module) {
  tri_result r = guard([&]() -> tri_result {
    TRI_CHECK_ARG(context);
    TRI_CHECK_ARG(out_module);
    if (!data && size) return set_error(Code::InvalidArgument, "tri_module_load_package: data is NULL");
    const std::string what = name ? name : "<package>";
    auto p = std::make_shared<package::Package>();
    Status st = package::read(data, size, what, p.get());
    if (!st) return set_error(st);
    tri_module* m = nullptr;
    st = capi::new_module(context, p->functions, "tri_module_load_package", &m);
    if (!st) return set_error(st);
    m->name = what;
#ifndef TRI_RUNTIME_ONLY
    // The full library keeps the module's IR, to compile what the package does not hold.
    if (!p->ir.empty()) {
      st = ir::read_binary(p->ir.data(), p->ir.size(), what, &m->ir);
      if (st) st = ir::verify(*m->ir);
      if (!st) {
        capi::module_release(m);
        return set_error(st.code(), what + ": the package's IR: " + st.message());
      }
    }
#endif
    m->package = std::move(p);
    *out_module = m;
    return TRI_OK;
  });
  if (r != TRI_OK && context) context->log(TRI_LOG_ERROR, capi::last_error());
  return r;
}

TRI_API tri_result tri_module_kernel(tri_module* module, const char* name, const tri_compile_options* options,
                                     tri_kernel** out_kernel) {
  TRI_CHECK_ARG(module);
  TRI_CHECK_ARG(name);
  TRI_CHECK_ARG(out_kernel);
  return guard([&] {
    if (!module->package)
      return set_error(Code::InvalidArgument, "tri_module_kernel: the module was not loaded from a package "
                                              "(tri_module_load_package); compile its kernels with tri_kernel_compile");
    static const tri_compile_options kDefaults;
    const capi::CompileRequest& req = (options ? *options : kDefaults).req;
    std::shared_ptr<capi::Compiled> compiled;
    bool found = false;
    Status st = capi::package_kernel(module, name, req, &compiled, &found);
    if (st && !found) {
      const std::string has = capi::package_entries(module, name);
      st = Status(Code::NotFound, "tri_module_kernel: " + module->name + " has no @" + name + " for this request (" +
                                      req.target + ", " + std::to_string(req.options.num_warps) + " warps); " +
                                      (has.empty() ? "it has no kernel of that name"
                                                   : "it has @" + std::string(name) + " for: " + has));
    }
    if (!st) {
      module->context->log(TRI_LOG_ERROR, st.message());
      return set_error(st);
    }
    *out_kernel = new tri_kernel{module, std::move(compiled)};
    capi::module_retain(module);
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_package_info(const tri_module* module, tri_blob** out_json) {
  TRI_CHECK_ARG(module);
  TRI_CHECK_ARG(out_json);
  return guard([&] {
    if (!module->package)
      return set_error(Code::InvalidArgument, "tri_module_package_info: the module was not loaded from a package");
    const package::Package& p = *module->package;
    auto q = [](const std::string& s) {
      std::string r = "\"";
      for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        if (static_cast<unsigned char>(c) >= 0x20) r += c;
      }
      return r + "\"";
    };
    std::string j = "{\"schema\": 1, \"producer\": " + q(p.producer) + ", \"name\": " + q(p.name) +
                    ", \"ir\": " + (p.ir.empty() ? "false" : "true") + ", \"kernels\": [";
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      const package::Kernel& k = p.kernels[i];
      j += std::string(i ? ", " : "") + "{\"name\": " + q(k.name) + ", \"target\": " + q(k.target) +
           ", \"num_warps\": " + std::to_string(k.num_warps) + ", \"num_stages\": " + std::to_string(k.num_stages) +
           ", \"constexprs\": {";
      for (size_t c = 0; c < k.constexprs.size(); ++c)
        j += std::string(c ? ", " : "") + q(k.constexprs[c].name) + ": " +
             (k.constexprs[c].is_float ? std::to_string(k.constexprs[c].f) : std::to_string(k.constexprs[c].i));
      j += "}";
      if (!k.note.empty()) j += ", \"note\": " + q(k.note);
      j += ", \"tuned\": " + std::string(capi::is_tuned(k) ? "true" : "false") + ", \"variants\": [";
      for (size_t v = 0; v < k.variants.size(); ++v) {
        char key[24];
        std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(k.variants[v].classes));
        j += std::string(v ? ", " : "") + "{\"classes\": \"" + key + "\", \"code\": [";
        for (size_t c = 0; c < k.variants[v].payloads.size(); ++c) {
          const package::Payload& pl = k.variants[v].payloads[c];
          j += std::string(c ? ", " : "") + "{\"machine\": " + q(pl.machine) + ", \"kind\": " + q(pl.kind) +
               ", \"bytes\": " + std::to_string(pl.bytes.size()) + "}";
        }
        j += "]}";
      }
      j += "]}";
    }
    return capi::make_blob(module->context, j + "]}", "tri_module_package_info", out_json);
  });
}

}  // extern "C"
