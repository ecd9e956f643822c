// Binding named arguments to a kernel's parameters, compiling and launching it on host buffers
// (see kernel_runner.h).
#include "kernel_runner.h"

#include "device_memory.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

#include "base/did_you_mean.h"

namespace tri_tool {

const char* const kHostTargets[] = {"interp", "cpu"};
const int kNumHostTargets = sizeof(kHostTargets) / sizeof(kHostTargets[0]);

Session::Session() {
  tri_context_options* opts = nullptr;
  if (tri_context_options_create(&opts) != TRI_OK) return;
  tri_context_options_set_log(opts, &Session::on_log, this, TRI_LOG_INFO);
  if (tri_context_create(opts, TRI_VERSION_NUMBER, &ctx_) != TRI_OK) ctx_ = nullptr;
  tri_context_options_destroy(opts);
}

Session::~Session() { tri_context_destroy(ctx_); }

void Session::on_log(void* user, int32_t level, const char* message) {
  auto* s = static_cast<Session*>(user);
  std::lock_guard<std::mutex> lock(s->mu_);
  if (s->handler_) {
    s->handler_(level, message);
  } else {
    s->log_.emplace_back(message);
  }
}

std::vector<std::string> Session::take_log() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  out.swap(log_);
  return out;
}

tri_module* Session::load(const std::string& bytes, const std::string& source_name, std::string* error) const {
  tri_module* m = nullptr;
  if (tri_module_create(ctx_, bytes.data(), bytes.size(), source_name.c_str(), &m) != TRI_OK) {
    *error = last_error();
    return nullptr;
  }
  return m;
}

bool kernel_params(const tri_module* module, const std::string& kernel, std::vector<ParamInfo>* out,
                   std::string* error) {
  uint32_t index = 0, count = 0;
  int32_t kind = 0;
  if (tri_module_find_function(module, kernel.c_str(), &index) != TRI_OK ||
      tri_module_function_kind(module, index, &kind) != TRI_OK || kind != TRI_FUNCTION_KERNEL) {
    // Name the kernels there are (the nearest first), so the next try is the right one.
    std::vector<std::string> kernels;
    uint32_t n = 0;
    tri_module_function_count(module, &n);
    for (uint32_t i = 0; i < n; ++i) {
      const char* name = nullptr;
      int32_t k = 0;
      if (tri_module_function_kind(module, i, &k) == TRI_OK && k == TRI_FUNCTION_KERNEL &&
          tri_module_function_name(module, i, &name) == TRI_OK)
        kernels.push_back(name);
    }
    std::string list;
    for (const std::string& k : kernels) list += (list.empty() ? "@" : ", @") + k;
    *error = "no kernel named '@" + kernel + "' in the module" + tri::did_you_mean(tri::nearest(kernel, kernels), "@") +
             (kernels.empty() ? "; it has no kernels" : "; its kernels: " + list);
    return false;
  }
  if (tri_module_param_count(module, index, &count) != TRI_OK) {
    *error = last_error();
    return false;
  }
  out->clear();
  for (uint32_t p = 0; p < count; ++p) {
    ParamInfo info;
    const char* name = nullptr;
    const char* text = nullptr;
    int32_t pkind = 0;
    if (tri_module_param_name(module, index, p, &name) != TRI_OK ||
        tri_module_param_kind(module, index, p, &pkind) != TRI_OK ||
        tri_module_param_type(module, index, p, &info.type_kind, &info.dtype, &text) != TRI_OK) {
      *error = last_error();
      return false;
    }
    info.name = name;
    info.constexpr_param = pkind == TRI_PARAM_CONSTEXPR;
    info.type_text = text;
    out->push_back(std::move(info));
  }
  return true;
}

bool target_present(tri_context* ctx, const std::string& target) {
  static const char kProbe[] = "kernel @tri_target_probe() {\n  return\n}\n";
  // The probe compiles in a context of its own without the disk cache, so the user's cache
  // (tri cache ls) holds only the user's kernels. `ctx` stands in where that context fails.
  tri_context_options* copts = nullptr;
  tri_context* own = nullptr;
  if (tri_context_options_create(&copts) == TRI_OK && tri_context_options_set_cache_dir(copts, "") == TRI_OK &&
      tri_context_create(copts, TRI_VERSION_NUMBER, &own) == TRI_OK)
    ctx = own;
  tri_context_options_destroy(copts);
  tri_compile_options* opts = nullptr;
  bool present = tri_compile_options_create(&opts) == TRI_OK &&
                 tri_compile_options_set_target(opts, target.c_str()) == TRI_OK;
  tri_module* m = nullptr;
  if (present && tri_module_create(ctx, kProbe, sizeof kProbe - 1, "probe", &m) == TRI_OK) {
    tri_kernel* k = nullptr;
    tri_result r = tri_kernel_compile(m, "tri_target_probe", opts, &k);
    present = r != TRI_ERROR_UNSUPPORTED;
    tri_kernel_destroy(k);
  }
  tri_module_destroy(m);
  tri_compile_options_destroy(opts);
  tri_context_destroy(own);
  return present;
}

namespace {

bool fail(LaunchOutcome* o, tri_result code, const std::string& stage, const std::string& message) {
  o->code = code;
  o->stage = stage;
  o->message = message;
  return false;
}

}  // namespace

// Sets one constexpr from its text, by the type the kernel declares for it.
bool set_constexpr(tri_compile_options* opts, const ParamInfo& p, const std::string& text, std::string* error) {
  uint64_t bits = 0;
  if (!parse_element(text, p.dtype, &bits, error)) {
    *error = "constexpr " + p.name + ": " + *error;
    return false;
  }
  tri_result r;
  if (dtype_is_float(p.dtype)) {
    r = tri_compile_options_set_constexpr_float(opts, p.name.c_str(), float_bits_to_double(p.dtype, bits));
  } else {
    int64_t v = p.dtype == TRI_DTYPE_I1 ? int64_t(bits & 1) : bits_to_signed(p.dtype, bits);
    r = tri_compile_options_set_constexpr_int(opts, p.name.c_str(), v);
  }
  if (r != TRI_OK) {
    *error = last_error();
    return false;
  }
  return true;
}

bool set_constexprs(tri_compile_options* opts, const std::vector<ParamInfo>& params, const std::string& kernel,
                    const std::vector<ConstInput>& consts, std::string* error) {
  for (const ConstInput& c : consts) {
    const ParamInfo* p = nullptr;
    for (const ParamInfo& q : params)
      if (q.constexpr_param && q.name == c.name) p = &q;
    if (!p) {
      *error = "kernel @" + kernel + " has no constexpr named '" + c.name + "'";
      return false;
    }
    if (!set_constexpr(opts, *p, c.text, error)) return false;
  }
  return true;
}

bool launch_kernel(tri_module* module, const LaunchRequest& req, LaunchOutcome* out) {
  *out = LaunchOutcome();
  std::vector<ParamInfo> params;
  std::string err;
  if (!kernel_params(module, req.kernel, &params, &err)) return fail(out, TRI_ERROR_NOT_FOUND, "bind", err);

  // Bind constexprs.
  tri_compile_options* opts = nullptr;
  if (tri_compile_options_create(&opts) != TRI_OK) return fail(out, TRI_ERROR_OUT_OF_MEMORY, "compile", last_error());
  struct OptsGuard {
    tri_compile_options* o;
    ~OptsGuard() { tri_compile_options_destroy(o); }
  } guard{opts};
  if (tri_compile_options_set_target(opts, req.target.c_str()) != TRI_OK)
    return fail(out, TRI_ERROR_INVALID_ARGUMENT, "compile", last_error());
  if (req.checked && tri_compile_options_set_checked(opts, 1) != TRI_OK)
    return fail(out, TRI_ERROR_INVALID_ARGUMENT, "compile", last_error());
  for (const ConstInput& c : req.consts) {
    const ParamInfo* p = nullptr;
    for (const ParamInfo& q : params)
      if (q.constexpr_param && q.name == c.name) p = &q;
    if (!p) {
      std::string names;
      for (const ParamInfo& q : params)
        if (q.constexpr_param) names += (names.empty() ? "" : ", ") + q.name;
      return fail(out, TRI_ERROR_SPECIALIZE, "bind",
                  "kernel @" + req.kernel + " has no constexpr '" + c.name + "' (it has: " +
                      (names.empty() ? std::string("none") : names) + ")");
    }
    if (!set_constexpr(opts, *p, c.text, &err)) return fail(out, TRI_ERROR_SPECIALIZE, "bind", err);
  }

  // Bind runtime arguments by name, in parameter order.
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < req.args.size(); ++i) {
    if (by_name.count(req.args[i].name))
      return fail(out, TRI_ERROR_LAUNCH_ARGS, "bind", "argument %" + req.args[i].name + " given twice");
    by_name[req.args[i].name] = i;
  }
  out->buffers.resize(req.args.size());
  for (size_t i = 0; i < req.args.size(); ++i)
    if (!req.args[i].is_scalar) out->buffers[i] = req.args[i].buffer;
  // An argument no parameter has is named first (with the nearest parameter): a misspelled name
  // would otherwise show only as the parameter it was meant for, "missing".
  std::vector<std::string> runtime;
  for (const ParamInfo& p : params)
    if (!p.constexpr_param) runtime.push_back(p.name);
  for (const ArgInput& a : req.args)
    if (std::find(runtime.begin(), runtime.end(), a.name) == runtime.end())
      return fail(out, TRI_ERROR_LAUNCH_ARGS, "bind",
                  "kernel @" + req.kernel + " has no runtime parameter %" + a.name +
                      tri::did_you_mean(tri::nearest(a.name, runtime), "%"));
  std::vector<tri_arg> args;
  std::vector<bool> used(req.args.size(), false);
  for (const ParamInfo& p : params) {
    if (p.constexpr_param) continue;
    auto it = by_name.find(p.name);
    if (it == by_name.end())
      return fail(out, TRI_ERROR_LAUNCH_ARGS, "bind", "missing argument %" + p.name + ": " + p.type_text);
    const ArgInput& a = req.args[it->second];
    used[it->second] = true;
    tri_arg arg;
    std::memset(&arg, 0, sizeof arg);
    arg.dtype = a.dtype;
    if (p.type_kind == TRI_TYPE_POINTER) {
      if (a.is_scalar || a.dtype != p.dtype)
        return fail(out, TRI_ERROR_LAUNCH_ARGS, "bind",
                    "argument %" + p.name + " is " + p.type_text + " but was given " +
                        (a.is_scalar ? std::string("a scalar ") + dtype_name(a.dtype)
                                     : "a buffer of " + describe_shape(a.dtype, a.buffer.shape())));
      HostBuffer& b = out->buffers[it->second];
      arg.kind = TRI_TYPE_POINTER;
      arg.value.p = b.data();
      arg.extent = b.byte_size();
    } else if (p.type_kind == TRI_TYPE_SCALAR) {
      if (!a.is_scalar || a.dtype != p.dtype)
        return fail(out, TRI_ERROR_LAUNCH_ARGS, "bind",
                    "argument %" + p.name + " is " + p.type_text + " but was given " +
                        (a.is_scalar ? std::string("a scalar ") + dtype_name(a.dtype) : std::string("a buffer")));
      arg.kind = TRI_TYPE_SCALAR;
      if (dtype_is_float(a.dtype)) {
        arg.value.f = float_bits_to_double(a.dtype, a.scalar_bits);
      } else {
        arg.value.i = bits_to_signed(a.dtype, a.scalar_bits);
      }
    } else {
      return fail(out, TRI_ERROR_LAUNCH_ARGS, "bind", "parameter %" + p.name + " has block type " + p.type_text);
    }
    args.push_back(arg);
  }
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      return fail(out, TRI_ERROR_LAUNCH_ARGS, "bind",
                  "kernel @" + req.kernel + " has no runtime parameter %" + req.args[i].name);

  using Clock = std::chrono::steady_clock;
  tri_kernel* kernel = nullptr;
  auto t0 = Clock::now();
  tri_result r = tri_kernel_compile(module, req.kernel.c_str(), opts, &kernel);
  out->compile_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (r != TRI_OK) return fail(out, r, "compile", last_error());
  // On the GPU the buffers live in device memory for the launches (device_memory.h); each
  // launch is waited for, so its time is the kernel's.
  const bool gpu = req.target == "cuda";
  std::vector<uint64_t> dev(out->buffers.size(), 0);
  if (gpu) {
    std::string why;
    if (!device_init(&why)) {
      tri_kernel_destroy(kernel);
      return fail(out, TRI_ERROR_UNSUPPORTED, "launch", why);
    }
    size_t a = 0;
    for (const ParamInfo& p : params) {
      if (p.constexpr_param) continue;
      if (p.type_kind == TRI_TYPE_POINTER) {
        size_t i = by_name[p.name];
        HostBuffer& b = out->buffers[i];
        dev[i] = device_upload(b.data(), b.byte_size());
        args[a].value.p = reinterpret_cast<const void*>(static_cast<uintptr_t>(dev[i]));
      }
      ++a;
    }
  }
  std::string launch_err;
  for (int i = 0; i < std::max(req.repeat, 1); ++i) {
    auto t1 = Clock::now();
    r = tri_launch(kernel, req.grid[0], req.grid[1], req.grid[2], nullptr, args.data(),
                   static_cast<uint32_t>(args.size()));
    if (r != TRI_OK) {
      launch_err = last_error();
    } else if (gpu && !device_sync(&launch_err)) {
      r = TRI_ERROR_RUNTIME;
    }
    out->launch_times.push_back(std::chrono::duration<double>(Clock::now() - t1).count());
    if (r != TRI_OK) break;
  }
  if (gpu)
    for (size_t i = 0; i < dev.size(); ++i)
      if (dev[i]) device_download_free(dev[i], out->buffers[i].data(), out->buffers[i].byte_size());
  out->launch_seconds = out->launch_times.front();
  tri_kernel_destroy(kernel);
  if (r != TRI_OK) return fail(out, r, "launch", launch_err);
  return true;
}

bool read_file(const std::string& path, std::string* out, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  out->clear();
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) out->append(chunk, n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) *error = path + ": read error";
  return !bad;
}

}  // namespace tri_tool
