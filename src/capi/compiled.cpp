#include "capi/compiled.h"

#include <cstring>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "base/clock.h"
#include "interp/numeric.h"
#include "ir/text.h"
#include "passes/pipeline.h"

namespace tri::capi {

using namespace ir;

Compiled::~Compiled() = default;

std::string CompileRequest::key(const std::string& kernel) const {
  std::string k = kernel;
  k += "|" + target;
  k += options.checked ? "|checked" : "";
  k += "|w" + std::to_string(options.num_warps) + "|" + options.arch + "|ptx" + std::to_string(options.ptx_version);
  k += "|s" + std::to_string(options.num_stages) + (options.defer_native ? "|deferred" : "");
  k += specialize_at_launch == Spec::Default ? "|spec-default" : specialize_at_launch == Spec::On ? "|spec" : "|nospec";
  k += std::to_string(max_variants) + "/" + std::to_string(unclassed);
  for (const auto& [name, v] : constexprs) {
    k += "|" + name + "=";
    if (v.kind == Attr::Kind::Float) {
      uint64_t bits;
      std::memcpy(&bits, &v.f, 8);
      k += "f" + std::to_string(bits);
    } else {
      k += "i" + std::to_string(v.i);
    }
  }
  for (const auto& [param, f] : facts) k += "|%" + std::to_string(param) + ":" + std::to_string(f.first) + "," + std::to_string(f.second);
  if (equal_one) k += "|ones" + std::to_string(equal_one);
  return k;
}

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

}  // namespace

namespace {

ParamSig make_sig(const std::string& name, bool is_ptr, Scalar dtype) {
  ParamSig s;
  s.name = name;
  s.is_ptr = is_ptr;
  s.dtype = dtype;
  s.want_kind = s.is_ptr ? TRI_TYPE_POINTER : TRI_TYPE_SCALAR;
  s.want_dtype = static_cast<int32_t>(s.dtype);
  if (!s.is_ptr && ir::is_int(s.dtype)) {
    const int w = scalar_bits(s.dtype);
    s.int_mask = w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
  }
  return s;
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

std::vector<ParamSig> param_sigs(const package::Function& f) {
  std::vector<ParamSig> out;
  for (const package::Param& p : f.params)
    if (p.kind == TRI_PARAM_VALUE && p.dtype >= 0 && p.dtype < kNumScalars)
      out.push_back(make_sig(p.name, p.type_kind == TRI_TYPE_POINTER, static_cast<Scalar>(p.dtype)));
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

namespace {

const char* dtype_name(int32_t d) {
  // tri_dtype numbers the scalar types as ir::Scalar does.
  return d >= 0 && d < kNumScalars ? scalar_name(static_cast<Scalar>(d)) : "an unknown dtype";
}

// A scalar argument's bits (base/launch.h): integers truncated to their width, floats rounded
// to their format exactly as the interpreter rounds (one definition of every float format).
uint64_t encode_scalar(Scalar s, const tri_arg& a) {
  if (is_float(s)) return interp::encode_float(static_cast<long double>(a.value.f), s);
  return interp::trunc_bits(static_cast<uint64_t>(a.value.i), scalar_bits(s));
}

}  // namespace

bool Compiled::encode_and_classify(const tri_arg* args, uint32_t n, ArgValue* out, uint64_t* key) const {
  // The classes of classify(), in the same pass (the warm launch path: one loop over the
  // arguments, no second one).
  const uint32_t classed = classes_at_launch() ? ~req.unclassed : 0;
  uint64_t k = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const ParamSig& p = params[i];
    const tri_arg& a = args[i];
    if (a.kind != p.want_kind || a.dtype != p.want_dtype) return false;
    if (p.is_ptr) {
      out[i].bits = reinterpret_cast<uintptr_t>(a.value.p);
      out[i].extent = a.extent;
    } else {
      out[i].bits = p.int_mask ? static_cast<uint64_t>(a.value.i) & p.int_mask : encode_scalar(p.dtype, a);
      out[i].extent = 0;
    }
    if (i < 32 && (classed >> i & 1)) k |= arg_class(p, out[i].bits) << (2 * i);
  }
  *key = k;
  return true;
}

Status encode_args(const Compiled& c, const tri_arg* args, uint32_t n, ArgValue* out) {
  const std::string& kname = c.name;
  if (n != c.params.size())
    return Status(Code::LaunchArgs, "kernel @" + kname + " takes " + std::to_string(c.params.size()) +
                                        " runtime arguments, but " + std::to_string(n) + " were given");
  if (n && !args) return Status(Code::InvalidArgument, "tri_launch: args is NULL but num_args is " + std::to_string(n));
  for (uint32_t i = 0; i < n; ++i) {
    const ParamSig& p = c.params[i];
    const tri_arg& a = args[i];
    auto mismatch = [&](const std::string& what) {
      std::string expected = p.is_ptr ? std::string("ptr<") + scalar_name(p.dtype) + ">" : scalar_name(p.dtype);
      return Status(Code::LaunchArgs, "argument " + std::to_string(i) + " (%" + p.name + ") of kernel @" + kname +
                                          " is " + expected + ", but " + what);
    };
    int32_t want_kind = p.is_ptr ? TRI_TYPE_POINTER : TRI_TYPE_SCALAR;
    if (a.kind != want_kind)
      return mismatch(a.kind == TRI_TYPE_POINTER ? "a pointer was given"
                      : a.kind == TRI_TYPE_SCALAR ? "a scalar was given"
                                                  : "the argument's kind is " + std::to_string(a.kind));
    if (a.dtype != static_cast<int32_t>(p.dtype))
      return mismatch(std::string(p.is_ptr ? "a pointer to " : "") + dtype_name(a.dtype) + " was given");
    if (p.is_ptr) {
      out[i].bits = reinterpret_cast<uintptr_t>(a.value.p);
      out[i].extent = a.extent;
    } else {
      out[i].bits = encode_scalar(p.dtype, a);
      out[i].extent = 0;
    }
  }
  return Status::ok();
}

Status CompileCache::get(const std::string& key, const std::function<Status(std::shared_ptr<Compiled>*)>& make,
                         std::shared_ptr<Compiled>* out) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      auto it = done_.find(key);
      if (it != done_.end()) {
        std::shared_ptr<Compiled> c = it->second.strong ? it->second.strong : it->second.weak.lock();
        if (c) {
          std::vector<std::shared_ptr<Compiled>> dropped;
          touch(key, it->second, c, &dropped);
          *out = std::move(c);
          lock.unlock();
          return Status::ok();  // `dropped` is released here, without the lock
        }
        done_.erase(it);  // dropped, and no handle kept it alive
      }
      auto busy = in_flight_.find(key);
      if (busy == in_flight_.end()) break;
      if (busy->second == std::this_thread::get_id())
        return Status(Code::InvalidArgument, "tri_kernel_compile: this thread is already compiling this kernel with "
                                             "these options (a callback called back into the compile); compile it "
                                             "outside the callback");
      cv_.wait(lock);  // another thread compiles this key; take its result (or try after its failure)
    }
    in_flight_[key] = std::this_thread::get_id();
  }
  std::shared_ptr<Compiled> c;
  Status st;
  try {
    st = make(&c);
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      in_flight_.erase(key);
    }
    cv_.notify_all();
    throw;
  }
  std::vector<std::shared_ptr<Compiled>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(key);
    if (st.is_ok()) touch(key, done_[key], c, &dropped);
  }
  cv_.notify_all();
  dropped.clear();
  if (st.is_ok()) *out = std::move(c);
  return st;
}

void CompileCache::touch(const std::string& key, Entry& e, std::shared_ptr<Compiled> c,
                         std::vector<std::shared_ptr<Compiled>>* dropped) {
  if (e.strong) lru_.erase(e.lru);
  e.weak = c;
  e.strong.reset();
  if (capacity_ > 0) {
    e.strong = std::move(c);
    lru_.push_front(key);
    e.lru = lru_.begin();
  }
  while (lru_.size() > capacity_) {
    Entry& old = done_.at(lru_.back());
    dropped->push_back(std::move(old.strong));
    old.strong.reset();
    lru_.pop_back();
  }
  // Sweep keys whose object is gone, once they outnumber the held ones well.
  if (done_.size() > 2 * capacity_ + 64) {
    for (auto it = done_.begin(); it != done_.end();) {
      if (!it->second.strong && it->second.weak.expired())
        it = done_.erase(it);
      else
        ++it;
    }
  }
}

void CompileCache::set_capacity(size_t n) {
  std::vector<std::shared_ptr<Compiled>> dropped;
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = n;
  while (lru_.size() > capacity_) {
    Entry& old = done_.at(lru_.back());
    dropped.push_back(std::move(old.strong));
    old.strong.reset();
    lru_.pop_back();
  }
}

}  // namespace tri::capi
