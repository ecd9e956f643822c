// Autotuning through the C API: tri_tune_space_*, tri_tune, tri_tune_export / _import and
// tri_tune_stat (docs/tune.md).
//
// Why this driver is in capi and not in src/tune: a tuning run compiles candidates through the
// module's compile cache and launches them through kernel handles, and both live here; the rules
// it applies (the key's fields, which buffers to restore, the median, the tie rule, the JSON of
// a result) are src/tune's, which depends on nothing above ir and cache.
//
// Flow of one call: key -> a result the context holds (imported, or made earlier) -> a result
// file in <cache dir>/tune/<key>.json -> (frozen: config 0) -> compile every config at once on
// the context's pool -> launch each config alone (warm-up, then the repetitions, the written
// buffers restored before every launch) -> choose -> store. The chosen kernel goes back compiled.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

#include "base/file.h"
#include "cache/key.h"
#include "capi/handles.h"
#include "cuda/driver.h"
#include "passes/specialize.h"
#include "target/target.h"
#include "tune/filter.h"
#include "tune/prune.h"
#include "tune/tune.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

struct tri_tune_space {
  std::vector<tune::Config> configs;
  std::vector<uint32_t> key;
  bool bucket = false;
  uint32_t repetitions = 10;
  tri_tune_stage_fn stage_fn = nullptr;  // tri_tune_space_set_progress
  void* stage_user = nullptr;
};

namespace {

// The compiles of a tuning run as they finish, reported on the thread that called tri_tune: a
// config is done when its `per_config` tasks (its kernel, and its launch variant) are.
class CompileReport {
 public:
  CompileReport(size_t configs, int per_config) : left_(configs, per_config), per_config_(per_config) {}
  void reset() {
    std::lock_guard<std::mutex> lock(mu_);
    std::fill(left_.begin(), left_.end(), per_config_);
    done_.clear();
    reported_ = 0;
  }
  // A task of config i finished (any thread); `whole`: all of them at once (a pruned config).
  void finish(size_t i, bool whole = false) {
    if (left_.empty()) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (left_[i] <= 0) return;
    if (--left_[i] > 0 && !whole) return;
    left_[i] = 0;
    done_.push_back(i);
    cv_.notify_one();
  }
  // Reports what finished and was not reported yet.
  template <typename Say>
  void drain(const Say& say) {
    std::vector<size_t> now;
    {
      std::lock_guard<std::mutex> lock(mu_);
      now.assign(done_.begin() + reported_, done_.end());
      reported_ = done_.size();
    }
    for (size_t i : now) say(i, static_cast<uint32_t>(++said_));
  }
  // Runs `work` (the pool's run) on a thread of its own and reports from this one as configs
  // finish; without a thread, runs it here and reports at the end.
  template <typename Work, typename Say>
  Status run_reporting(const Work& work, const Say& say) {
    Status st;
    bool over = false;
    std::thread runner;
    try {
      runner = std::thread([&] {
        Status s = work();
        std::lock_guard<std::mutex> lock(mu_);
        st = s;
        over = true;
        cv_.notify_one();
      });
    } catch (const std::system_error&) {
      st = work();
      drain(say);
      return st;
    }
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return over || reported_ < done_.size(); });
        if (over && reported_ == done_.size()) break;
      }
      drain(say);
    }
    runner.join();
    return st;
  }
 private:
  std::vector<int> left_;
  const int per_config_;
  std::vector<size_t> done_;
  size_t reported_ = 0, said_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
};

// tri_dtype numbers the scalar types as ir::Scalar does.
const char* dtype_text(int32_t d) {
  return d >= 0 && d < ir::kNumScalars ? ir::scalar_name(static_cast<ir::Scalar>(d)) : "?";
}

std::string version_text() {
  return std::to_string(TRI_VERSION_MAJOR) + "." + std::to_string(TRI_VERSION_MINOR) + "." +
         std::to_string(TRI_VERSION_PATCH);
}

// A key argument's value as its type reads it (tri_arg uses the low bits).
int64_t int_value(const tri_arg& a) {
  switch (a.dtype) {
    case TRI_DTYPE_I1: return a.value.i & 1;
    case TRI_DTYPE_I8: return static_cast<int8_t>(a.value.i);
    case TRI_DTYPE_I16: return static_cast<int16_t>(a.value.i);
    case TRI_DTYPE_I32: return static_cast<int32_t>(a.value.i);
    default: return a.value.i;
  }
}

// Bounds on the files read: one result (tune/<key>.json) and an export (tri_tune_import).
constexpr uint64_t kMaxResultFileBytes = uint64_t(256) << 20;
constexpr uint64_t kMaxExportFileBytes = uint64_t(1) << 30;

// Whether a stored or imported result was made for these configs, in this order (the key covers
// the space, so only a damaged, copied or hand-made file differs); a result that names another
// config is never used: its config might not compile or might not be the caller's to run.
bool same_configs(const std::vector<tune::Config>& space, const tune::Result& r) {
  if (r.configs.size() != space.size()) return false;
  for (size_t i = 0; i < space.size(); ++i)
    if (tune::config_text(space[i]) != tune::config_text(r.configs[i])) return false;
  return true;
}

// A result for `key` from the context's memory, then from its cache directory (tune/<key>.json,
// read under the cache's rules: a regular file of this user's, no link followed, bounded);
// false when none (or an unusable one, which is logged and ignored: the key is tuned again).
// *imported says which kind it was.
bool find_result(tri_context* c, const std::string& key, const std::vector<tune::Config>& space, tune::Result* out,
                 bool* imported) {
  std::string json;
  bool from_memory = false;
  {
    std::lock_guard<std::mutex> lock(c->tune_mu);
    auto it = c->tune_results.find(key);
    if (it != c->tune_results.end()) {
      json = it->second.first;
      *imported = it->second.second;
      from_memory = true;
    }
  }
  if (!from_memory) {
    std::string why;
    if (!capi::context_disk_cache(c)->read_aux("tune", key + ".json", kMaxResultFileBytes, &json, &why)) {
      if (!why.empty()) c->log(TRI_LOG_WARNING, "tri_tune: ignoring the stored result tune/" + key + ".json: " + why);
      return false;
    }
    *imported = false;
  }
  tune::Result r;
  Status st = tune::from_json(json, &r);
  if (st.is_ok() && (r.key != key || !same_configs(space, r)))
    st = Status(Code::CorruptBinary, "it is for another key or space");
  if (!st.is_ok()) {
    c->log(TRI_LOG_WARNING, "tri_tune: ignoring the stored result " + key + ": " + st.message());
    return false;
  }
  *out = std::move(r);
  return true;
}

// An imported result with the portable key `pkey` (same kernel, space, key values and Tri) made
// on another device; false when none.
bool find_other_device(tri_context* c, const std::string& pkey, const std::vector<tune::Config>& space,
                       tune::Result* out) {
  std::lock_guard<std::mutex> lock(c->tune_mu);
  for (const auto& kv : c->tune_results) {
    if (!kv.second.second) continue;
    tune::Result r;
    if (tune::from_json(kv.second.first, &r).is_ok() && r.portable_key == pkey && same_configs(space, r)) {
      *out = std::move(r);
      return true;
    }
  }
  return false;
}

void store_result(tri_context* c, const tune::Result& r) {
  std::string json = tune::to_json(r, "stored");
  {
    std::lock_guard<std::mutex> lock(c->tune_mu);
    c->tune_results[r.key] = {json, false};
  }
  cache::DiskCache* d = capi::context_disk_cache(c);
  if (!d->enabled()) return;
  if (!d->write_aux("tune", r.key + ".json", json))
    c->log(TRI_LOG_WARNING, "tri_tune: could not write the result file " + d->dir() + "/tune/" + r.key + ".json");
}

tri_compile_options config_options(const tri_compile_options* base, const tune::Config& cfg) {
  tri_compile_options o;
  if (base) o = *base;
  for (const auto& kv : cfg.constexprs) o.req.constexprs[kv.first] = ir::Attr::of_int(kv.second);
  o.req.options.num_warps = cfg.num_warps;
  o.req.options.num_stages = cfg.num_stages;
  return o;
}

struct KernelSet {
  std::vector<tri_kernel*> k;
  ~KernelSet() {
    for (tri_kernel* x : k) tri_kernel_destroy(x);
  }
};

}  // namespace

extern "C" {

TRI_API tri_result tri_tune_space_create(tri_tune_space** out_space) {
  return guard([&] {
    TRI_CHECK_ARG(out_space);
    *out_space = new tri_tune_space();
    return TRI_OK;
  });
}

TRI_API void tri_tune_space_destroy(tri_tune_space* space) { delete space; }

TRI_API tri_result tri_tune_space_add_config(tri_tune_space* space, const char* const* names, const int64_t* values,
                                             uint32_t count, int32_t num_warps, int32_t num_stages,
                                             uint32_t* out_index) {
  TRI_CHECK_ARG(space);
  return guard([&] {
    if (count && (!names || !values))
      return set_error(Code::InvalidArgument, "tri_tune_space_add_config: names or values is NULL with count " +
                                                  std::to_string(count));
    if (num_warps < 1 || num_warps > 32 || (num_warps & (num_warps - 1)))
      return set_error(Code::InvalidArgument, "tri_tune_space_add_config: " + std::to_string(num_warps) +
                                                  " warps; use 1, 2, 4, 8, 16 or 32");
    if (num_stages < 0 || num_stages > 8)
      return set_error(Code::InvalidArgument, "tri_tune_space_add_config: " + std::to_string(num_stages) +
                                                  " stages; 0 (the target's default) and 1 to 8 are supported");
    tune::Config c;
    for (uint32_t i = 0; i < count; ++i) {
      if (!names[i] || !*names[i])
        return set_error(Code::InvalidArgument,
                         "tri_tune_space_add_config: constexpr name " + std::to_string(i) + " is NULL or empty");
      c.constexprs.emplace_back(names[i], values[i]);
    }
    c.num_warps = num_warps;
    c.num_stages = num_stages;
    space->configs.push_back(std::move(c));
    if (out_index) *out_index = static_cast<uint32_t>(space->configs.size() - 1);
    return TRI_OK;
  });
}

TRI_API tri_result tri_tune_space_add_product(tri_tune_space* space, const char* const* names,
                                              const int64_t* const* values, const uint32_t* counts,
                                              uint32_t num_names, const int32_t* warps, uint32_t num_warps_values,
                                              const int32_t* stages, uint32_t num_stages_values,
                                              const char* filter, uint32_t* out_added) {
  TRI_CHECK_ARG(space);
  return guard([&] {
    const char* fn = "tri_tune_space_add_product: ";
    if (num_names && (!names || !values || !counts))
      return set_error(Code::InvalidArgument, std::string(fn) + "names, values or counts is NULL with num_names " +
                                                  std::to_string(num_names));
    std::vector<std::string> cnames;
    uint64_t total = 1;
    for (uint32_t i = 0; i < num_names; ++i) {
      if (!names[i] || !*names[i])
        return set_error(Code::InvalidArgument, std::string(fn) + "name " + std::to_string(i) + " is NULL or empty");
      if (counts[i] == 0 || !values[i])
        return set_error(Code::InvalidArgument, std::string(fn) + "constexpr '" + names[i] + "' has no values");
      cnames.push_back(names[i]);
      total *= counts[i];
      if (total > 4096) break;
    }
    const int32_t default_warps = 4, default_stages = 0;
    if (!warps || num_warps_values == 0) warps = &default_warps, num_warps_values = 1;
    if (!stages || num_stages_values == 0) stages = &default_stages, num_stages_values = 1;
    for (uint32_t i = 0; i < num_warps_values; ++i)
      if (warps[i] < 1 || warps[i] > 32 || (warps[i] & (warps[i] - 1)))
        return set_error(Code::InvalidArgument, std::string(fn) + std::to_string(warps[i]) +
                                                    " warps; use 1, 2, 4, 8, 16 or 32");
    for (uint32_t i = 0; i < num_stages_values; ++i)
      if (stages[i] < 0 || stages[i] > 4)
        return set_error(Code::InvalidArgument, std::string(fn) + std::to_string(stages[i]) +
                                                    " stages; 0 (the target's default) and 1 to 8 are supported");
    total *= uint64_t(num_warps_values) * num_stages_values;
    if (total + space->configs.size() > 4096)
      return set_error(Code::LimitExceeded, std::string(fn) + "the product has " + std::to_string(total) +
                                                " configs and the space " + std::to_string(space->configs.size()) +
                                                "; a space holds at most 4096 (narrow the lists, or filter)");
    tune::Filter keep;
    if (filter && *filter) {
      Status st = tune::Filter::parse(filter, cnames, &keep);
      if (!st.is_ok()) return set_error(st.code(), fn + st.message());
    }
    std::vector<tune::Config> made;
    std::vector<uint32_t> at(num_names, 0);  // the odometer: the last name turns fastest
    for (uint64_t k = 0; k < total / (uint64_t(num_warps_values) * num_stages_values); ++k) {
      for (uint32_t w = 0; w < num_warps_values; ++w)
        for (uint32_t st_i = 0; st_i < num_stages_values; ++st_i) {
          tune::Config c;
          for (uint32_t i = 0; i < num_names; ++i) c.constexprs.emplace_back(cnames[i], values[i][at[i]]);
          c.num_warps = warps[w];
          c.num_stages = stages[st_i];
          int64_t v = 1;
          Status st = keep.eval(c, &v);
          if (!st.is_ok()) return set_error(st.code(), fn + st.message());
          if (v) made.push_back(std::move(c));
        }
      for (uint32_t i = num_names; i-- > 0;) {
        if (++at[i] < counts[i]) break;
        at[i] = 0;
      }
    }
    space->configs.insert(space->configs.end(), made.begin(), made.end());
    if (out_added) *out_added = static_cast<uint32_t>(made.size());
    return TRI_OK;
  });
}

TRI_API tri_result tri_tune_space_count(const tri_tune_space* space, uint32_t* out_count) {
  TRI_CHECK_ARG(space);
  TRI_CHECK_ARG(out_count);
  *out_count = static_cast<uint32_t>(space->configs.size());
  return TRI_OK;
}

TRI_API tri_result tri_tune_space_value(const tri_tune_space* space, uint32_t index, const char* name,
                                        int64_t* out_value) {
  TRI_CHECK_ARG(space);
  TRI_CHECK_ARG(name);
  TRI_CHECK_ARG(out_value);
  return guard([&] {
    if (index >= space->configs.size())
      return set_error(Code::InvalidArgument, "tri_tune_space_value: config " + std::to_string(index) +
                                                  " of a space of " + std::to_string(space->configs.size()));
    const tune::Config& c = space->configs[index];
    const std::string n = name;
    if (n == "warps") return *out_value = c.num_warps, TRI_OK;
    if (n == "stages") return *out_value = c.num_stages, TRI_OK;
    for (const auto& kv : c.constexprs)
      if (kv.first == n) return *out_value = kv.second, TRI_OK;
    return set_error(Code::NotFound, "tri_tune_space_value: config " + std::to_string(index) + " (" +
                                         tune::config_text(c) + ") has no value named '" + n + "'");
  });
}

TRI_API tri_result tri_tune_space_set_key(tri_tune_space* space, const uint32_t* params, uint32_t count,
                                          int32_t bucket) {
  TRI_CHECK_ARG(space);
  if (count && !params)
    return set_error(Code::InvalidArgument, "tri_tune_space_set_key: params is NULL with count " + std::to_string(count));
  return guard([&] {
    space->key.assign(params, params + count);
    space->bucket = bucket != 0;
    return TRI_OK;
  });
}

TRI_API tri_result tri_tune_space_set_progress(tri_tune_space* space, tri_tune_stage_fn fn, void* user) {
  TRI_CHECK_ARG(space);
  space->stage_fn = fn;
  space->stage_user = user;
  return TRI_OK;
}

TRI_API tri_result tri_tune_space_set_repetitions(tri_tune_space* space, uint32_t repetitions) {
  TRI_CHECK_ARG(space);
  if (repetitions < 1 || repetitions > 10000)
    return set_error(Code::InvalidArgument, "tri_tune_space_set_repetitions: " + std::to_string(repetitions) +
                                                " repetitions; 1 to 10000 are allowed");
  space->repetitions = repetitions;
  return TRI_OK;
}

TRI_API tri_result tri_tune(tri_module* module, const char* name, const tri_compile_options* options,
                            const tri_tune_space* space, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                            void* stream, const tri_arg* args, uint32_t num_args, uint32_t flags,
                            tri_tune_progress_fn progress, tri_tune_grid_fn grid_fn, void* user,
                            tri_kernel** out_kernel, tri_blob** out_result) {
  TRI_CHECK_ARG(module);
  TRI_CHECK_ARG(name);
  TRI_CHECK_ARG(space);
  TRI_CHECK_ARG(out_kernel);
  if (num_args && !args) return set_error(Code::InvalidArgument, "tri_tune: args is NULL with num_args above 0");
  return guard([&]() -> tri_result {
    tri_context* ctx = module->context;
    const size_t n = space->configs.size();
    if (n == 0) return set_error(Code::InvalidArgument, "tri_tune: the space has no config");
    const ir::Function* fn = nullptr;
    for (const auto& f : module->ir->functions)
      if (f->name == name && f->is_kernel) fn = f.get();
    if (!fn) return set_error(Code::NotFound, std::string("tri_tune: the module has no kernel @") + name);
    if (num_args != fn->params.size())
      return set_error(Code::LaunchArgs, std::string("tri_tune: kernel @") + name + " takes " +
                                             std::to_string(fn->params.size()) + " runtime arguments, not " +
                                             std::to_string(num_args));
    static const tri_compile_options kDefaults;
    const capi::CompileRequest& req = (options ? *options : kDefaults).req;
    const target::Target* t = target::find(req.target);
    if (!t) return set_error(Code::Unsupported, "tri_tune: target \"" + req.target + "\" is not in this build");
    if (stream && !t->uses_stream())
      return set_error(Code::InvalidArgument, "tri_tune: a stream was given for target \"" + req.target +
                                                  "\", which runs on the host (pass NULL)");

    // ---- the key
    tune::Result res;
    res.kernel = name;
    res.target = req.target;
    res.version = version_text();
    res.configs = space->configs;
    Status st = t->cache_identity(*module->ir, *fn, req.options, &res.device);
    if (!st.is_ok()) return set_error(st);
    if (res.device.empty()) res.device = "host";
    if (t->uses_stream()) {  // the identity names the architecture; two GPU models may share one
      const cuda::DeviceInfo* d = nullptr;
      st = cuda::current_device(&d);
      if (!st.is_ok()) return set_error(st);
      res.device = d->name + "; " + res.device;
    }
    for (uint32_t p : space->key) {
      if (p >= num_args || args[p].kind != TRI_TYPE_SCALAR || args[p].dtype > TRI_DTYPE_I64)
        return set_error(Code::InvalidArgument, "tri_tune: key parameter " + std::to_string(p) +
                                                    (p < num_args ? " (%" + fn->params[p].name + ")" : std::string()) +
                                                    " is not an integer scalar argument");
      int64_t v = int_value(args[p]);
      res.key_values.emplace_back(fn->params[p].name, space->bucket ? tune::bucket_pow2(v) : v);
    }
    for (uint32_t i = 0; i < num_args; ++i)
      res.dtypes.push_back(args[i].kind == TRI_TYPE_POINTER ? std::string("ptr<") + dtype_text(args[i].dtype) + ">"
                                                            : std::string(dtype_text(args[i].dtype)));
    // The key, and the portable key: the same without the device.
    std::string space_text = space->bucket ? "bucket;" : "exact;";
    for (uint32_t p : space->key) space_text += std::to_string(p) + ",";
    for (const tune::Config& c : space->configs) space_text += ";" + tune::config_text(c);
    std::string key_text;
    for (const auto& kv : res.key_values) key_text += kv.first + "=" + std::to_string(kv.second) + ";";
    for (const std::string& d : res.dtypes) key_text += d + ",";
    const std::string module_text = ir::print_text(*module->ir);
    auto make_key = [&](bool with_device) {
      cache::KeyBuilder kb;
      kb.add("what", "tri tune result 1").add("module", module_text).add("kernel", res.kernel);
      kb.add("options", req.key(name)).add("target", res.target).add("tri", res.version);
      if (with_device) kb.add("device", res.device);
      kb.add("space", space_text).add("key", key_text);
      return kb.finish().hex();
    };
    res.key = make_key(true);
    res.portable_key = make_key(false);
    std::string what = std::string("tri_tune: @") + name + " (key " + res.key.substr(0, 8) + ")";

    // The classes of these arguments (capi/variants.cpp): on a target that specializes at launch,
    // a launch with them runs the variant for them, so that is what gets compiled for the trials
    // and handed to the chosen kernel. 0: no variant (host targets, or no facts to use).
    uint64_t classes = 0;
    std::vector<capi::ParamSig> sigs = capi::param_sigs(*module->ir, *fn);
    {
      capi::Compiled probe;
      probe.target = t;
      probe.req = config_options(options, res.configs[0]).req;
      probe.params = sigs;
      std::vector<ArgValue> encoded(num_args ? num_args : 1);
      if (!probe.encode_and_classify(args, num_args, encoded.data(), &classes)) classes = 0;  // launches will say why
    }
    // Config i's kernel, and (with classes) its variant for them: the kernel then leaves the
    // driver's JIT to a launch that needs it, since launches with these arguments run the variant.
    auto compile_kernel = [&](size_t i, tune::Trial* tr) -> tri_kernel* {
      tri_compile_options o = config_options(options, res.configs[i]);
      if (classes) o.req.options.defer_native = true;
      tri_kernel* k = nullptr;
      tri_result rc = tri_kernel_compile(module, name, &o, &k);
      if (rc == TRI_OK) return k;
      tr->status = rc;
      tr->error = capi::last_error();
      return nullptr;
    };
    auto compile_variant = [&](size_t i, tune::Trial* tr) -> tri_kernel* {
      tri_compile_options o = config_options(options, res.configs[i]);
      o.req = capi::variant_request(o.req, sigs, classes);
      tri_kernel* k = nullptr;
      tri_result rc = tri_kernel_compile(module, name, &o, &k);
      if (rc == TRI_OK) return k;
      tr->status = rc;
      tr->error = capi::last_error();
      return nullptr;
    };

    // ---- a result known already, one of another device, or frozen
    tune::Result known;
    bool imported = false;
    const char* source = nullptr;
    if (!(flags & TRI_TUNE_RETUNE) && find_result(ctx, res.key, space->configs, &known, &imported)) {
      res.trials = std::move(known.trials);
      res.best = known.best;
      source = imported ? "imported" : "stored";
      ctx->tune_stored.fetch_add(1);
    } else if (!(flags & TRI_TUNE_RETUNE) && find_other_device(ctx, res.portable_key, space->configs, &known)) {
      ctx->tune_other_device.fetch_add(1);
      const bool use = flags & TRI_TUNE_USE_OTHER_DEVICE;
      std::string note = what + ": the imported result for this key was made on \"" + known.device + "\", not on \"" +
                         res.device + "\" (config " + std::to_string(known.best) + ", " +
                         tune::config_text(known.configs[known.best]) + ")";
      if (use) {
        ctx->log(TRI_LOG_WARNING, note + "; using it, as TRI_TUNE_USE_OTHER_DEVICE asks");
        res.trials = known.trials;
        res.best = known.best;
        source = "other device";
      } else {
        ctx->log(TRI_LOG_WARNING, note + (flags & TRI_TUNE_FROZEN ? "; not used (frozen: config 0 instead; "
                                                                    "TRI_TUNE_USE_OTHER_DEVICE would use it)"
                                                                  : "; tuning here instead (TRI_TUNE_USE_OTHER_DEVICE "
                                                                    "would use it)"));
      }
    }
    if (!source && (flags & TRI_TUNE_FROZEN)) {
      res.trials.assign(n, tune::Trial());
      res.best = 0;
      source = "default";
      ctx->tune_defaults.fetch_add(1);
      ctx->log(TRI_LOG_WARNING, what + ": frozen and no result for this key; using config 0 (" +
                                    tune::config_text(res.configs[0]) + ")");
    }
    tri_kernel* known_kernel = nullptr;
    if (source) {
      // The kernel and its variant at once (each is a disk read when it was compiled before).
      // The variant's thread also loads its module into the caller's context, so the first
      // launch finds it there.
      tune::Trial kt, vt;
      tri_kernel* v = nullptr;
      std::thread other;
      cuda::CUcontext caller = nullptr;
      const cuda::Api* drv = nullptr;
      if (t->uses_stream() && cuda::driver(&drv).is_ok()) drv->cuCtxGetCurrent(&caller);
      auto variant_job = [&] {
        v = compile_variant(res.best, &vt);
        if (v && caller) {
          cuda::ContextGuard g(drv, caller);
          if (g.status().is_ok()) (void)v->compiled->exe->preload();  // a failure shows at the launch
        }
      };
      if (classes) {
        try {
          other = std::thread(variant_job);
        } catch (const std::system_error&) {
          variant_job();
        }
      }
      tri_kernel* k = compile_kernel(res.best, &kt);
      if (other.joinable()) other.join();
      if (v && k) k->compiled->adopt_variant(classes, v->compiled, "made by tri_tune for the arguments it was given");
      tri_kernel_destroy(v);
      // A known result whose config does not compile here (a hand-made file, another
      // device's choice) is not the caller's problem: the key is tuned again.
      const bool retry = !k && std::strcmp(source, "default") != 0 && kt.status != TRI_ERROR_CANCELLED;
      if (retry) {
        ctx->log(TRI_LOG_WARNING, what + ": the " + source + " result's config " + std::to_string(res.best) + " (" +
                                      tune::config_text(res.configs[res.best]) + ") does not compile (" + kt.error +
                                      "); tuning again");
        source = nullptr;
      }
      if (!k && !retry) return set_error(static_cast<Code>(kt.status), kt.error);
      known_kernel = k;
    }
    if (source) {
      tri_kernel* k = known_kernel;
      if (out_result) {
        tri_result rc = capi::make_blob(ctx, tune::to_json(res, source), "tri_tune", out_result);
        if (rc != TRI_OK) {
          tri_kernel_destroy(k);
          return rc;
        }
      }
      *out_kernel = k;
      return TRI_OK;
    }
    // GPU targets are timed with CUDA events on the caller's stream (the driver's clock, not the
    // host's), with a 256 MB memset between repetitions so that no trial finds its inputs in L2.
    const bool gpu = t->uses_stream();
    const cuda::Api* api = nullptr;
    if (gpu) {
      st = cuda::driver(&api);
      if (!st.is_ok()) return set_error(st);
    }
    auto cu = [&](cuda::CUresult r, const char* call) -> Status { return cuda::check(r, call); };

    // ---- written buffers, saved now and restored before every launch. On the GPU the copy is a
    // device buffer restored by a stream-ordered device copy (a host copy when memory is short).
    cuda::CUstream cs = static_cast<cuda::CUstream>(stream);
    std::vector<bool> written = tune::written_params(*fn);
    struct Saved {
      uint32_t arg;
      std::string host;          // the host copy (host targets, or no device memory left)
      cuda::CUdeviceptr dev = 0; // the device copy
    };
    std::vector<Saved> saved;
    struct FreeSaved {
      const cuda::Api*& api;
      std::vector<Saved>& s;
      ~FreeSaved() {
        for (const Saved& x : s)
          if (x.dev) api->cuMemFree(x.dev);
      }
    } free_saved{api, saved};
    for (uint32_t i = 0; i < num_args; ++i) {
      if (!written[i] || args[i].kind != TRI_TYPE_POINTER || !args[i].value.p) continue;
      if (args[i].extent == 0)
        return set_error(Code::InvalidArgument, what + ": argument " + std::to_string(i) + " (%" + fn->params[i].name +
                                                    ") is written by the kernel and its extent is 0: give the "
                                                    "buffer's size so that trials can restore it");
      Saved sv{i, std::string(), 0};
      if (gpu) {
        auto src = reinterpret_cast<cuda::CUdeviceptr>(args[i].value.p);
        if (api->cuMemAlloc(&sv.dev, args[i].extent) == 0) {
          st = cu(api->cuMemcpyDtoDAsync(sv.dev, src, args[i].extent, cs), "cuMemcpyDtoDAsync");
        } else {
          sv.dev = 0;
          sv.host.resize(args[i].extent);
          st = cu(api->cuStreamSynchronize(cs), "cuStreamSynchronize");
          if (st.is_ok()) st = cu(api->cuMemcpyDtoH(sv.host.data(), src, sv.host.size()), "cuMemcpyDtoH");
        }
        if (!st.is_ok()) {
          saved.push_back(std::move(sv));
          return set_error(st);
        }
      } else {
        sv.host.assign(static_cast<const char*>(args[i].value.p), args[i].extent);
      }
      saved.push_back(std::move(sv));
    }
    auto restore = [&] {
      for (const Saved& s : saved) {
        if (!gpu) {
          std::memcpy(const_cast<void*>(args[s.arg].value.p), s.host.data(), s.host.size());
          continue;
        }
        auto dst = reinterpret_cast<cuda::CUdeviceptr>(args[s.arg].value.p);
        if (s.dev) {
          api->cuMemcpyDtoDAsync(dst, s.dev, args[s.arg].extent, cs);
        } else {
          api->cuStreamSynchronize(cs);
          api->cuMemcpyHtoD(dst, s.host.data(), s.host.size());
        }
      }
    };
    cuda::CUevent ev0 = nullptr, ev1 = nullptr;
    cuda::CUdeviceptr flush = 0;
    const size_t flush_bytes = size_t(256) << 20;
    if (gpu) {
      st = cu(api->cuEventCreate(&ev0, 0), "cuEventCreate");
      if (st.is_ok()) st = cu(api->cuEventCreate(&ev1, 0), "cuEventCreate");
      if (st.is_ok() && api->cuMemAlloc(&flush, flush_bytes) != 0) flush = 0;  // no flush when memory is short
      if (!st.is_ok()) return set_error(st);
    }
    struct Events {
      const cuda::Api* api;
      cuda::CUevent a, b;
      cuda::CUdeviceptr f;
      ~Events() {
        if (!api) return;
        if (a) api->cuEventDestroy(a);
        if (b) api->cuEventDestroy(b);
        if (f) api->cuMemFree(f);
      }
    } events{api, ev0, ev1, flush};

    const auto t_start = std::chrono::steady_clock::now();
    // ---- prune: a config whose specialized IR already needs more than one program of the target
    // can have (threads, shared memory, registers: lower bounds, tune/prune.h) is not compiled.
    res.trials.assign(n, tune::Trial());
    std::vector<bool> pruned(n, false);
    target::ResourceLimits rl;
    if (t->resource_limits(req.options, &rl).is_ok() &&
        (rl.max_threads || rl.max_shared_bytes || rl.registers_per_program || rl.max_registers_per_thread)) {
      tune::Limits lim{rl.max_threads, rl.max_shared_bytes, rl.registers_per_program, rl.max_registers_per_thread,
                       rl.tensor_cores};
      for (size_t i = 0; i < n; ++i) {
        const tune::Config& c = res.configs[i];
        std::vector<passes::ConstexprBinding> values;
        for (const auto& kv : req.constexprs) values.push_back({kv.first, kv.second});
        for (const auto& kv : c.constexprs) values.push_back({kv.first, ir::Attr::of_int(kv.second)});
        std::unique_ptr<ir::Module> spec;
        if (!passes::specialize(*module->ir, name, values, {}, &spec).is_ok()) continue;  // the compile says why
        std::string why = tune::prune_reason(tune::estimate(*spec, *spec->functions[0], c.num_warps, lim), lim,
                                             c.num_warps);
        if (why.empty()) continue;
        pruned[i] = true;
        res.trials[i].status = TRI_ERROR_LIMIT_EXCEEDED;
        res.trials[i].error = "pruned before compiling: " + why;
        ctx->tune_pruned.fetch_add(1);
        ctx->log(TRI_LOG_WARNING, what + ": config " + std::to_string(i) + " (" + tune::config_text(c) + ") " +
                                      res.trials[i].error);
      }
    }

    // ---- compile every config at once. A target that specializes at launch would compile each
    // config twice, once as the kernel and once more, alone, at its first launch, as the variant
    // for these arguments' classes. So the variants the trials launch are compiled here too, all
    // in one batch with the kernels, and the chosen config's variant is handed to its kernel.
    KernelSet ks, trial_ks;  // the kernels, and the variants the trials launch
    ks.k.assign(n, nullptr);
    if (classes) trial_ks.k.assign(n, nullptr);
    std::vector<tune::Trial> kernel_trials(n);  // a kernel that fails where its variant compiled
    auto compile_one = [&](uint64_t task) {
      const size_t i = task % n;
      if (pruned[i]) return;
      try {
        if (task < n)
          ks.k[i] = compile_kernel(i, &kernel_trials[i]);
        else
          trial_ks.k[i] = compile_variant(i, &res.trials[i]);
      } catch (...) {
        (task < n ? kernel_trials[i] : res.trials[i]).status = TRI_ERROR_INTERNAL;
        (task < n ? kernel_trials[i] : res.trials[i]).error = "internal error while compiling";
      }
    };
    const uint64_t tasks = classes ? 2 * n : n;
    // With a stage callback, each config is reported as its last task finishes, on this thread:
    // the pool's run waits on a thread of its own while this one reports.
    CompileReport report(space->stage_fn ? n : 0, classes ? 2 : 1);
    for (size_t i = 0; i < n; ++i)
      if (pruned[i]) report.finish(i, true);
    auto compile_task = [&](uint64_t task) {
      compile_one(task);
      report.finish(task % n);
    };
    auto stage_status = [&](size_t i) {
      return pruned[i] ? res.trials[i].status
             : !ks.k[i] ? kernel_trials[i].status
                        : res.trials[i].status;
    };
    auto say = [&](size_t i, uint32_t done) {
      space->stage_fn(space->stage_user, TRI_TUNE_STAGE_COMPILE, static_cast<uint32_t>(i), done,
                      static_cast<uint32_t>(n), stage_status(i), 0);
    };
    ThreadPool* pool = nullptr;
    if (tasks > 1 && capi::context_pool(ctx, &pool).is_ok() && pool->size() > 0) {
      if (space->stage_fn) {
        st = report.run_reporting([&] { return pool->run(tasks, compile_task); }, say);
      } else {
        st = pool->run(tasks, compile_one);
      }
      if (!st.is_ok()) pool = nullptr;
    } else {
      pool = nullptr;
    }
    if (!pool) {
      report.reset();
      for (size_t i = 0; i < n; ++i)
        if (pruned[i]) report.finish(i, true);
      for (uint64_t i = 0; i < tasks; ++i) compile_task(i);
      if (space->stage_fn) report.drain(say);
    }
    // A config runs when both its kernel and (with classes) its variant compiled; the kernel's
    // error is the one reported, as a launch of it would meet that first.
    std::vector<tri_kernel*> trial_kernel(n, nullptr);
    for (size_t i = 0; i < n; ++i) {
      if (!ks.k[i] && !pruned[i]) {
        res.trials[i].status = kernel_trials[i].status;
        res.trials[i].error = kernel_trials[i].error;
      }
      if (res.trials[i].status == TRI_OK) trial_kernel[i] = classes ? trial_ks.k[i] : ks.k[i];
    }

    const auto t_compiled = std::chrono::steady_clock::now();
    // ---- benchmark one at a time
    for (size_t i = 0; i < n; ++i) {
      tune::Trial& tr = res.trials[i];
      if (trial_kernel[i]) {
        uint32_t grid[3] = {grid_x, grid_y, grid_z};
        if (grid_fn) grid_fn(user, static_cast<uint32_t>(i), grid);
        ctx->tune_trials.fetch_add(1);
        for (uint32_t r = 0; r <= space->repetitions; ++r) {  // r == 0 is the warm-up
          restore();
          double ns = 0;
          tri_result rc = TRI_OK;
          if (gpu) {
            if (flush) api->cuMemsetD32Async(flush, static_cast<unsigned>(r), flush_bytes / 4, cs);
            api->cuEventRecord(ev0, cs);
            rc = tri_launch(trial_kernel[i], grid[0], grid[1], grid[2], stream, args, num_args);
            api->cuEventRecord(ev1, cs);
            float ms = 0;
            if (rc == TRI_OK) {
              Status es = cu(api->cuEventSynchronize(ev1), "cuEventSynchronize");
              if (es.is_ok()) es = cu(api->cuEventElapsedTime(&ms, ev0, ev1), "cuEventElapsedTime");
              if (!es.is_ok()) {
                rc = set_error(es);
              }
            }
            ns = double(ms) * 1e6;
          } else {
            auto t0 = std::chrono::steady_clock::now();
            rc = tri_launch(trial_kernel[i], grid[0], grid[1], grid[2], stream, args, num_args);
            auto t1 = std::chrono::steady_clock::now();
            ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
          }
          if (rc != TRI_OK) {
            tr.status = rc;
            tr.error = capi::last_error();
            tr.times_ns.clear();
            break;
          }
          if (r > 0) tr.times_ns.push_back(ns);
        }
        if (tr.status == TRI_OK) {
          tr.measured = true;
          tr.median_ns = tune::median(tr.times_ns);
        }
      }
      if (tr.status != TRI_OK && !pruned[i])
        ctx->log(TRI_LOG_WARNING, what + ": config " + std::to_string(i) + " (" + tune::config_text(res.configs[i]) +
                                      ") skipped: " + tr.error);
      if (progress) progress(user, static_cast<uint32_t>(i), static_cast<uint32_t>(n), tr.status, tr.median_ns);
      if (space->stage_fn)
        space->stage_fn(space->stage_user, TRI_TUNE_STAGE_BENCHMARK, static_cast<uint32_t>(i),
                        static_cast<uint32_t>(i + 1), static_cast<uint32_t>(n), tr.status, tr.median_ns);
    }
    restore();
    if (gpu) api->cuStreamSynchronize(cs);  // the restoring copies finish before their sources are freed

    int best = tune::choose(res.trials);
    if (best < 0)
      return set_error(static_cast<Code>(res.trials[0].status),
                       what + ": no config compiled and ran; config 0 (" + tune::config_text(res.configs[0]) +
                           "): " + res.trials[0].error);
    res.best = best;
    store_result(ctx, res);
    char line[64];
    std::snprintf(line, sizeof line, "%.3f us", res.trials[best].median_ns / 1e3);
    const auto ms = [](std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
      return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
    };
    ctx->log(TRI_LOG_INFO, what + ": chose config " + std::to_string(best) + " (" +
                               tune::config_text(res.configs[best]) + "), median " + line + ", of " +
                               std::to_string(n) + " configs; " + std::to_string(tasks) + " compiles in " +
                               ms(t_start, t_compiled) + " ms on " + std::to_string(pool ? pool->size() : 1) +
                               " threads, benchmark " + ms(t_compiled, std::chrono::steady_clock::now()) + " ms");
    if (out_result) {
      tri_result rc = capi::make_blob(ctx, tune::to_json(res, "benchmark"), "tri_tune", out_result);
      if (rc != TRI_OK) return rc;
    }
    if (classes) {
      tri_kernel* v = trial_ks.k[best];
      ks.k[best]->compiled->adopt_variant(classes, v->compiled, "made by tri_tune for the arguments it was given");
    }
    *out_kernel = ks.k[best];
    ks.k[best] = nullptr;
    return TRI_OK;
  });
}

TRI_API tri_result tri_tune_export(tri_context* context, const char* path, uint32_t* out_count) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(path);
  return guard([&] {
    std::map<std::string, std::string> all;  // by key: sorted, so the file is the same every time
    cache::DiskCache* d = capi::context_disk_cache(context);
    for (const std::string& f : d->names_aux("tune")) {
      cache::Key k;
      if (f.size() != 37 || f.compare(32, 5, ".json") != 0 || !cache::parse_key_hex(f.substr(0, 32), &k)) continue;
      std::string json, why;
      tune::Result r;
      if (d->read_aux("tune", f, kMaxResultFileBytes, &json, &why) && tune::from_json(json, &r).is_ok() &&
          r.key == f.substr(0, 32))
        all[r.key] = json;
      else if (!why.empty())
        context->log(TRI_LOG_WARNING, "tri_tune_export: skipping tune/" + f + ": " + why);
    }
    {
      std::lock_guard<std::mutex> lock(context->tune_mu);
      for (const auto& kv : context->tune_results) all[kv.first] = kv.second.first;
    }
    std::vector<std::string> results;
    for (auto& kv : all) results.push_back(kv.second);
    Status ws = write_user_file(path, tune::join_export(results), "tri_tune_export");
    if (!ws.is_ok()) return set_error(ws);
    if (out_count) *out_count = static_cast<uint32_t>(results.size());
    return TRI_OK;
  });
}

TRI_API tri_result tri_tune_import(tri_context* context, const char* path, uint32_t* out_imported) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(path);
  return guard([&] {
    std::string text;
    Status read = read_user_file(path, kMaxExportFileBytes, "tri_tune_import", &text);
    if (!read.is_ok()) return set_error(read);
    std::vector<std::string> parts;
    Status st = tune::split_export(text, &parts);
    if (!st.is_ok()) return set_error(st.code(), std::string("tri_tune_import: ") + path + ": " + st.message());
    std::vector<tune::Result> rs(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      st = tune::from_json(parts[i], &rs[i]);
      if (!st.is_ok())
        return set_error(st.code(), std::string("tri_tune_import: ") + path + ": result " + std::to_string(i) + ": " +
                                        st.message());
    }
    std::string here = version_text();
    for (const tune::Result& r : rs)
      if (r.version != here)
        context->log(TRI_LOG_WARNING, "tri_tune_import: the result for @" + r.kernel + " (key " + r.key.substr(0, 8) +
                                          ") was made by Tri " + r.version + ", not " + here +
                                          ": it will not be used");
    {
      std::lock_guard<std::mutex> lock(context->tune_mu);
      for (size_t i = 0; i < rs.size(); ++i) context->tune_results[rs[i].key] = {tune::to_json(rs[i], "imported"), true};
    }
    if (out_imported) *out_imported = static_cast<uint32_t>(rs.size());
    return TRI_OK;
  });
}

TRI_API tri_result tri_tune_stat(tri_context* context, int32_t stat, uint64_t* out_value) {
  TRI_CHECK_ARG(context);
  TRI_CHECK_ARG(out_value);
  switch (stat) {
    case TRI_TUNE_STAT_TRIALS: *out_value = context->tune_trials.load(); return TRI_OK;
    case TRI_TUNE_STAT_STORED: *out_value = context->tune_stored.load(); return TRI_OK;
    case TRI_TUNE_STAT_DEFAULTS: *out_value = context->tune_defaults.load(); return TRI_OK;
    case TRI_TUNE_STAT_PRUNED: *out_value = context->tune_pruned.load(); return TRI_OK;
    case TRI_TUNE_STAT_OTHER_DEVICE: *out_value = context->tune_other_device.load(); return TRI_OK;
    default:
      return set_error(Code::InvalidArgument, "tri_tune_stat: " + std::to_string(stat) + " is not a TRI_TUNE_STAT_* value");
  }
}

}  // extern "C"
