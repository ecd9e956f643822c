// Autotuning through the C API: tri_tune_space_*, tri_tune, tri_tune_export / _import,
// tri_tune_stat and tri_tune_plot (docs/tune.md).
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
#include "passes/specialize.h"
#include "target/target.h"
#include "tune/filter.h"
#include "tune/plot.h"
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

// One tri_tune call, phase by phase: check the call, make the key, find a known result (and
// compile its config), or save the written buffers, prune, compile every config, benchmark them,
// choose and store.
class TuneCall {
 public:
  TuneCall(tri_module* module, const char* name, const tri_compile_options* options, const tri_tune_space* space,
           const uint32_t grid[3], void* stream, const tri_arg* args, uint32_t num_args, uint32_t flags,
           tri_tune_progress_fn progress, tri_tune_grid_fn grid_fn, void* user)
      : module_(module), ctx_(module->context), name_(name), options_(options), space_(space),
        grid_{grid[0], grid[1], grid[2]}, stream_(stream), args_(args), num_args_(num_args), flags_(flags),
        progress_(progress), grid_fn_(grid_fn), user_(user), n_(space->configs.size()) {}

  tri_result run(tri_kernel** out_kernel, tri_blob** out_result) {
    tri_result rc = check();
    if (rc == TRI_OK) rc = make_key();
    if (rc != TRI_OK) return rc;
    classify();
    bool done = false;
    rc = use_known_result(out_kernel, out_result, &done);
    if (rc != TRI_OK || done) return rc;
    rc = save_buffers();
    if (rc != TRI_OK) return rc;
    const auto t_start = std::chrono::steady_clock::now();
    std::vector<bool> pruned = prune();
    KernelSet ks, trial_ks;  // the kernels, and the variants the trials launch
    std::vector<tri_kernel*> trial_kernel = compile_all(pruned, &ks, &trial_ks);
    const auto t_compiled = std::chrono::steady_clock::now();
    benchmark(trial_kernel, pruned);
    return choose(ks, trial_ks, t_start, t_compiled, out_kernel, out_result);
  }

 private:
  // ---- the call's arguments, its kernel and its target
  tri_result check() {
    if (tri_result r = capi::module_ir(module_, "tri_tune")) return r;
    if (n_ == 0) return set_error(Code::InvalidArgument, "tri_tune: the space has no config");
    for (const auto& f : module_->ir->functions)
      if (f->name == name_ && f->is_kernel) fn_ = f.get();
    if (!fn_) return set_error(Code::NotFound, std::string("tri_tune: the module has no kernel @") + name_);
    if (num_args_ != fn_->params.size())
      return set_error(Code::LaunchArgs, std::string("tri_tune: kernel @") + name_ + " takes " +
                                             std::to_string(fn_->params.size()) + " runtime arguments, not " +
                                             std::to_string(num_args_));
    static const tri_compile_options kDefaults;
    req_ = &(options_ ? *options_ : kDefaults).req;
    t_ = target::find(req_->target);
    if (!t_) return set_error(Code::Unsupported, "tri_tune: target \"" + req_->target + "\" is not in this build");
    if (stream_ && !t_->uses_stream())
      return set_error(Code::InvalidArgument, "tri_tune: a stream was given for target \"" + req_->target +
                                                  "\", which runs on the host (pass NULL)");
    return TRI_OK;
  }

  // ---- the key, and the portable key: the same without the device
  tri_result make_key() {
    const tri_arg* args = args_;
    res_.kernel = name_;
    res_.target = req_->target;
    res_.version = version_text();
    res_.configs = space_->configs;
    Status st = t_->cache_identity(*module_->ir, *fn_, req_->options, &res_.device);
    if (!st.is_ok()) return set_error(st);
    if (res_.device.empty()) res_.device = "host";
    if (t_->uses_stream()) {  // the identity names the architecture; two GPU models may share one
      target::DeviceInfo d;
      st = t_->current_device(&d);
      if (!st.is_ok()) return set_error(st);
      res_.device = d.name + "; " + res_.device;
    }
    for (uint32_t p : space_->key) {
      if (p >= num_args_ || args[p].kind != TRI_TYPE_SCALAR || args[p].dtype > TRI_DTYPE_I64)
        return set_error(Code::InvalidArgument, "tri_tune: key parameter " + std::to_string(p) +
                                                    (p < num_args_ ? " (%" + fn_->params[p].name + ")" : std::string()) +
                                                    " is not an integer scalar argument");
      int64_t v = int_value(args[p]);
      res_.key_values.emplace_back(fn_->params[p].name, space_->bucket ? tune::bucket_pow2(v) : v);
    }
    for (uint32_t i = 0; i < num_args_; ++i)
      res_.dtypes.push_back(args[i].kind == TRI_TYPE_POINTER ? std::string("ptr<") + dtype_text(args[i].dtype) + ">"
                                                             : std::string(dtype_text(args[i].dtype)));
    std::string space_text = space_->bucket ? "bucket;" : "exact;";
    for (uint32_t p : space_->key) space_text += std::to_string(p) + ",";
    for (const tune::Config& c : space_->configs) space_text += ";" + tune::config_text(c);
    std::string key_text;
    for (const auto& kv : res_.key_values) key_text += kv.first + "=" + std::to_string(kv.second) + ";";
    for (const std::string& d : res_.dtypes) key_text += d + ",";
    const std::string module_text = ir::print_text(*module_->ir);
    auto key = [&](bool with_device) {
      cache::KeyBuilder kb;
      kb.add("what", "tri tune result 1").add("module", module_text).add("kernel", res_.kernel);
      kb.add("options", req_->key(name_)).add("target", res_.target).add("tri", res_.version);
      if (with_device) kb.add("device", res_.device);
      kb.add("space", space_text).add("key", key_text);
      return kb.finish().hex();
    };
    res_.key = key(true);
    res_.portable_key = key(false);
    what_ = std::string("tri_tune: @") + name_ + " (key " + res_.key.substr(0, 8) + ")";
    return TRI_OK;
  }

  // ---- the classes of these arguments (capi/variants.cpp): on a target that specializes at
  // launch, a launch with them runs the variant for them, so that is what gets compiled for the
  // trials and handed to the chosen kernel. 0: no variant (host targets, or no facts to use).
  void classify() {
    sigs_ = capi::param_sigs(*module_->ir, *fn_);
    capi::Compiled probe;
    probe.target = t_;
    probe.req = config_options(options_, res_.configs[0]).req;
    probe.params = sigs_;
    std::vector<ArgValue> encoded(num_args_ ? num_args_ : 1);
    if (!probe.encode_and_classify(args_, num_args_, encoded.data(), &classes_)) classes_ = 0;  // launches will say why
  }

  // Config i's kernel, and (with classes) its variant for them: the kernel then leaves the
  // driver's JIT to a launch that needs it, since launches with these arguments run the variant.
  tri_kernel* compile_kernel(size_t i, tune::Trial* tr) {
    tri_compile_options o = config_options(options_, res_.configs[i]);
    if (classes_) o.req.options.defer_native = true;
    return compile(o, tr);
  }
  tri_kernel* compile_variant(size_t i, tune::Trial* tr) {
    tri_compile_options o = config_options(options_, res_.configs[i]);
    o.req = capi::variant_request(o.req, sigs_, classes_);
    return compile(o, tr);
  }
  tri_kernel* compile(const tri_compile_options& o, tune::Trial* tr) {
    tri_kernel* k = nullptr;
    tri_result rc = tri_kernel_compile(module_, name_, &o, &k);
    if (rc == TRI_OK) return k;
    tr->status = rc;
    tr->error = capi::last_error();
    return nullptr;
  }

  // ---- a result known already, one of another device, or frozen: its config's kernel is the
  // answer (*done), unless that config does not compile here and the key is tuned again.
  tri_result use_known_result(tri_kernel** out_kernel, tri_blob** out_result, bool* done) {
    tune::Result known;
    bool imported = false;
    const char* source = nullptr;
    if (!(flags_ & TRI_TUNE_RETUNE) && find_result(ctx_, res_.key, space_->configs, &known, &imported)) {
      res_.trials = std::move(known.trials);
      res_.best = known.best;
      source = imported ? "imported" : "stored";
      ctx_->tune_stored.fetch_add(1);
    } else if (!(flags_ & TRI_TUNE_RETUNE) && find_other_device(ctx_, res_.portable_key, space_->configs, &known)) {
      ctx_->tune_other_device.fetch_add(1);
      const bool use = flags_ & TRI_TUNE_USE_OTHER_DEVICE;
      std::string note = what_ + ": the imported result for this key was made on \"" + known.device +
                         "\", not on \"" + res_.device + "\" (config " + std::to_string(known.best) + ", " +
                         tune::config_text(known.configs[known.best]) + ")";
      if (use) {
        ctx_->log(TRI_LOG_WARNING, note + "; using it, as TRI_TUNE_USE_OTHER_DEVICE asks");
        res_.trials = known.trials;
        res_.best = known.best;
        source = "other device";
      } else {
        ctx_->log(TRI_LOG_WARNING, note + (flags_ & TRI_TUNE_FROZEN ? "; not used (frozen: config 0 instead; "
                                                                      "TRI_TUNE_USE_OTHER_DEVICE would use it)"
                                                                    : "; tuning here instead (TRI_TUNE_USE_OTHER_DEVICE "
                                                                      "would use it)"));
      }
    }
    if (!source && (flags_ & TRI_TUNE_FROZEN)) {
      res_.trials.assign(n_, tune::Trial());
      res_.best = 0;
      source = "default";
      ctx_->tune_defaults.fetch_add(1);
      ctx_->log(TRI_LOG_WARNING, what_ + ": frozen and no result for this key; using config 0 (" +
                                     tune::config_text(res_.configs[0]) + ")");
    }
    if (!source) return TRI_OK;
    // The kernel and its variant at once (each is a disk read when it was compiled before). The
    // variant's thread also loads its module in the caller's place (its CUDA context), so the
    // first launch finds it there.
    tune::Trial kt, vt;
    tri_kernel* v = nullptr;
    std::thread other;
    void* caller = t_->current_place();
    auto variant_job = [&] {
      v = compile_variant(res_.best, &vt);
      if (v && caller) (void)v->compiled->exe->preload(caller);  // a failure shows at the launch
    };
    if (classes_) {
      try {
        other = std::thread(variant_job);
      } catch (const std::system_error&) {
        variant_job();
      }
    }
    tri_kernel* k = compile_kernel(res_.best, &kt);
    if (other.joinable()) other.join();
    if (v && k) k->compiled->adopt_variant(classes_, v->compiled, "made by tri_tune for the arguments it was given");
    tri_kernel_destroy(v);
    // A known result whose config does not compile here (a hand-made file, another device's
    // choice) is not the caller's problem: the key is tuned again.
    const bool retry = !k && std::strcmp(source, "default") != 0 && kt.status != TRI_ERROR_CANCELLED;
    if (retry) {
      ctx_->log(TRI_LOG_WARNING, what_ + ": the " + source + " result's config " + std::to_string(res_.best) + " (" +
                                     tune::config_text(res_.configs[res_.best]) + ") does not compile (" + kt.error +
                                     "); tuning again");
      return TRI_OK;
    }
    if (!k) return set_error(static_cast<Code>(kt.status), kt.error);
    if (out_result) {
      tri_result rc = capi::make_blob(ctx_, tune::to_json(res_, source), "tri_tune", out_result);
      if (rc != TRI_OK) {
        tri_kernel_destroy(k);
        return rc;
      }
    }
    *out_kernel = k;
    *done = true;
    return TRI_OK;
  }

  // ---- the target's bench on the caller's stream (target.h: GPU targets time with events on it
  // and evict their cache before each run), and the written buffers, saved now and restored
  // before every launch.
  tri_result save_buffers() {
    Status st = t_->make_bench(stream_, &bench_);
    if (!st.is_ok()) return set_error(st);
    std::vector<bool> written = tune::written_params(*fn_);
    for (uint32_t i = 0; i < num_args_; ++i) {
      const tri_arg& a = args_[i];
      if (!written[i] || a.kind != TRI_TYPE_POINTER || !a.value.p) continue;
      if (a.extent == 0)
        return set_error(Code::InvalidArgument, what_ + ": argument " + std::to_string(i) + " (%" +
                                                    fn_->params[i].name + ") is written by the kernel and its extent "
                                                    "is 0: give the buffer's size so that trials can restore it");
      st = bench_->save(const_cast<void*>(a.value.p), a.extent);
      if (!st.is_ok()) return set_error(st);
    }
    return TRI_OK;
  }

  // ---- prune: a config whose specialized IR already needs more than one program of the target
  // can have (threads, shared memory, registers: lower bounds, tune/prune.h) is not compiled.
  std::vector<bool> prune() {
    res_.trials.assign(n_, tune::Trial());
    std::vector<bool> pruned(n_, false);
    target::ResourceLimits rl;
    if (!t_->resource_limits(req_->options, &rl).is_ok() ||
        !(rl.max_threads || rl.max_shared_bytes || rl.registers_per_program || rl.max_registers_per_thread))
      return pruned;
    tune::Limits lim{rl.max_threads, rl.max_shared_bytes, rl.registers_per_program, rl.max_registers_per_thread,
                     rl.tensor_cores};
    for (size_t i = 0; i < n_; ++i) {
      const tune::Config& c = res_.configs[i];
      std::vector<passes::ConstexprBinding> values;
      for (const auto& kv : req_->constexprs) values.push_back({kv.first, kv.second});
      for (const auto& kv : c.constexprs) values.push_back({kv.first, ir::Attr::of_int(kv.second)});
      std::unique_ptr<ir::Module> spec;
      if (!passes::specialize(*module_->ir, name_, values, {}, &spec).is_ok()) continue;  // the compile says why
      std::string why =
          tune::prune_reason(tune::estimate(*spec, *spec->functions[0], c.num_warps, lim), lim, c.num_warps);
      if (why.empty()) continue;
      pruned[i] = true;
      res_.trials[i].status = TRI_ERROR_LIMIT_EXCEEDED;
      res_.trials[i].error = "pruned before compiling: " + why;
      ctx_->tune_pruned.fetch_add(1);
      ctx_->log(TRI_LOG_WARNING, what_ + ": config " + std::to_string(i) + " (" + tune::config_text(c) + ") " +
                                     res_.trials[i].error);
    }
    return pruned;
  }

  // ---- compile every config at once. A target that specializes at launch would compile each
  // config twice, once as the kernel and once more, alone, at its first launch, as the variant
  // for these arguments' classes. So the variants the trials launch are compiled here too, all
  // in one batch with the kernels, and the chosen config's variant is handed to its kernel.
  // Returns the kernel each config's trials launch (null: it does not run).
  std::vector<tri_kernel*> compile_all(const std::vector<bool>& pruned, KernelSet* ks, KernelSet* trial_ks) {
    ks->k.assign(n_, nullptr);
    if (classes_) trial_ks->k.assign(n_, nullptr);
    std::vector<tune::Trial> kernel_trials(n_);  // a kernel that fails where its variant compiled
    auto compile_one = [&](uint64_t task) {
      const size_t i = task % n_;
      if (pruned[i]) return;
      try {
        if (task < n_)
          ks->k[i] = compile_kernel(i, &kernel_trials[i]);
        else
          trial_ks->k[i] = compile_variant(i, &res_.trials[i]);
      } catch (...) {
        (task < n_ ? kernel_trials[i] : res_.trials[i]).status = TRI_ERROR_INTERNAL;
        (task < n_ ? kernel_trials[i] : res_.trials[i]).error = "internal error while compiling";
      }
    };
    tasks_ = classes_ ? 2 * n_ : n_;
    // With a stage callback, each config is reported as its last task finishes, on this thread:
    // the pool's run waits on a thread of its own while this one reports.
    CompileReport report(space_->stage_fn ? n_ : 0, classes_ ? 2 : 1);
    for (size_t i = 0; i < n_; ++i)
      if (pruned[i]) report.finish(i, true);
    auto compile_task = [&](uint64_t task) {
      compile_one(task);
      report.finish(task % n_);
    };
    auto stage_status = [&](size_t i) {
      return pruned[i] ? res_.trials[i].status : !ks->k[i] ? kernel_trials[i].status : res_.trials[i].status;
    };
    auto say = [&](size_t i, uint32_t done) {
      space_->stage_fn(space_->stage_user, TRI_TUNE_STAGE_COMPILE, static_cast<uint32_t>(i), done,
                       static_cast<uint32_t>(n_), stage_status(i), 0);
    };
    pool_ = nullptr;
    if (tasks_ > 1 && capi::context_pool(ctx_, &pool_).is_ok() && pool_->size() > 0) {
      Status st = space_->stage_fn ? report.run_reporting([&] { return pool_->run(tasks_, compile_task); }, say)
                                   : pool_->run(tasks_, compile_one);
      if (!st.is_ok()) pool_ = nullptr;
    } else {
      pool_ = nullptr;
    }
    if (!pool_) {
      report.reset();
      for (size_t i = 0; i < n_; ++i)
        if (pruned[i]) report.finish(i, true);
      for (uint64_t i = 0; i < tasks_; ++i) compile_task(i);
      if (space_->stage_fn) report.drain(say);
    }
    // A config runs when both its kernel and (with classes) its variant compiled; the kernel's
    // error is the one reported, as a launch of it would meet that first.
    std::vector<tri_kernel*> trial_kernel(n_, nullptr);
    for (size_t i = 0; i < n_; ++i) {
      if (!ks->k[i] && !pruned[i]) {
        res_.trials[i].status = kernel_trials[i].status;
        res_.trials[i].error = kernel_trials[i].error;
      }
      if (res_.trials[i].status == TRI_OK) trial_kernel[i] = classes_ ? trial_ks->k[i] : ks->k[i];
    }
    return trial_kernel;
  }

  // ---- benchmark one config at a time: a warm-up, then the repetitions, the written buffers
  // restored before each
  void benchmark(const std::vector<tri_kernel*>& trial_kernel, const std::vector<bool>& pruned) {
    for (size_t i = 0; i < n_; ++i) {
      tune::Trial& tr = res_.trials[i];
      if (trial_kernel[i]) {
        uint32_t grid[3] = {grid_[0], grid_[1], grid_[2]};
        if (grid_fn_) grid_fn_(user_, static_cast<uint32_t>(i), grid);
        ctx_->tune_trials.fetch_add(1);
        for (uint32_t r = 0; r <= space_->repetitions; ++r) {  // r == 0 is the warm-up
          bench_->restore();
          double ns = 0;
          Status ran = bench_->time(
              r,
              [&] {
                tri_result rc = tri_launch(trial_kernel[i], grid[0], grid[1], grid[2], stream_, args_, num_args_);
                return rc == TRI_OK ? Status::ok() : Status(static_cast<Code>(rc), capi::last_error());
              },
              &ns);
          if (!ran.is_ok()) {
            tr.status = static_cast<tri_result>(ran.code());
            tr.error = ran.message();
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
        ctx_->log(TRI_LOG_WARNING, what_ + ": config " + std::to_string(i) + " (" +
                                       tune::config_text(res_.configs[i]) + ") skipped: " + tr.error);
      if (progress_) progress_(user_, static_cast<uint32_t>(i), static_cast<uint32_t>(n_), tr.status, tr.median_ns);
      if (space_->stage_fn)
        space_->stage_fn(space_->stage_user, TRI_TUNE_STAGE_BENCHMARK, static_cast<uint32_t>(i),
                         static_cast<uint32_t>(i + 1), static_cast<uint32_t>(n_), tr.status, tr.median_ns);
    }
    bench_->restore();
    bench_->finish();  // the restoring copies finish before their sources are freed
  }

  // ---- choose, store, and hand the chosen kernel back (with its variant for these arguments)
  tri_result choose(KernelSet& ks, KernelSet& trial_ks, std::chrono::steady_clock::time_point t_start,
                    std::chrono::steady_clock::time_point t_compiled, tri_kernel** out_kernel, tri_blob** out_result) {
    int best = tune::choose(res_.trials);
    if (best < 0)
      return set_error(static_cast<Code>(res_.trials[0].status),
                       what_ + ": no config compiled and ran; config 0 (" + tune::config_text(res_.configs[0]) +
                           "): " + res_.trials[0].error);
    res_.best = best;
    store_result(ctx_, res_);
    char line[64];
    std::snprintf(line, sizeof line, "%.3f us", res_.trials[best].median_ns / 1e3);
    const auto ms = [](std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
      return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
    };
    ctx_->log(TRI_LOG_INFO, what_ + ": chose config " + std::to_string(best) + " (" +
                                tune::config_text(res_.configs[best]) + "), median " + line + ", of " +
                                std::to_string(n_) + " configs; " + std::to_string(tasks_) + " compiles in " +
                                ms(t_start, t_compiled) + " ms on " + std::to_string(pool_ ? pool_->size() : 1) +
                                " threads, benchmark " + ms(t_compiled, std::chrono::steady_clock::now()) + " ms");
    if (out_result) {
      tri_result rc = capi::make_blob(ctx_, tune::to_json(res_, "benchmark"), "tri_tune", out_result);
      if (rc != TRI_OK) return rc;
    }
    if (classes_) {
      tri_kernel* v = trial_ks.k[best];
      ks.k[best]->compiled->adopt_variant(classes_, v->compiled, "made by tri_tune for the arguments it was given");
    }
    *out_kernel = ks.k[best];
    ks.k[best] = nullptr;
    return TRI_OK;
  }

  tri_module* const module_;
  tri_context* const ctx_;
  const char* const name_;
  const tri_compile_options* const options_;
  const tri_tune_space* const space_;
  const uint32_t grid_[3];
  void* const stream_;
  const tri_arg* const args_;
  const uint32_t num_args_;
  const uint32_t flags_;
  const tri_tune_progress_fn progress_;
  const tri_tune_grid_fn grid_fn_;
  void* const user_;
  const size_t n_;  // configs

  const ir::Function* fn_ = nullptr;
  const capi::CompileRequest* req_ = nullptr;
  const target::Target* t_ = nullptr;
  tune::Result res_;
  std::string what_;  // "tri_tune: @name (key 1234abcd)", for messages
  uint64_t classes_ = 0;
  std::vector<capi::ParamSig> sigs_;
  std::unique_ptr<target::Bench> bench_;
  uint64_t tasks_ = 0;            // compiles
  ThreadPool* pool_ = nullptr;    // that ran them, or null
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
    const uint32_t grid[3] = {grid_x, grid_y, grid_z};
    TuneCall call(module, name, options, space, grid, stream, args, num_args, flags, progress, grid_fn, user);
    return call.run(out_kernel, out_result);
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

TRI_API tri_result tri_tune_plot(const void* result, size_t size, const char* title, tri_blob** out_svg) {
  TRI_CHECK_ARG(result);
  TRI_CHECK_ARG(out_svg);
  return guard([&] {
    if (size > kMaxResultFileBytes)
      return set_error(Code::LimitExceeded, "tri_tune_plot: a result of " + std::to_string(size) +
                                                " bytes; a result file holds at most 256 MiB");
    tune::Result r;
    Status st = tune::from_json(std::string(static_cast<const char*>(result), size), &r);
    std::string svg;
    if (st.is_ok()) st = tune::plot_svg(r, title ? title : "", &svg);
    if (!st.is_ok()) return set_error(st.code(), "tri_tune_plot: " + st.message());
    return capi::make_blob(nullptr, svg, "tri_tune_plot", out_svg);
  });
}

}  // extern "C"
