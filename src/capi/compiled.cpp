// Compiled kernels at run time (compiled.h): requests' keys, the runtime parameters' signatures,
// argument encoding and classes, and the module's cache of compiled kernels. Part of the runtime
// (libtri_rt too); compiling is capi/compile.cpp's.
#include "capi/compiled.h"

#include <cstring>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "interp/numeric.h"

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

std::vector<ParamSig> param_sigs(const package::Function& f) {
  std::vector<ParamSig> out;
  for (const package::Param& p : f.params)
    if (p.kind == TRI_PARAM_VALUE && p.dtype >= 0 && p.dtype < kNumScalars)
      out.push_back(make_sig(p.name, p.type_kind == TRI_TYPE_POINTER, static_cast<Scalar>(p.dtype)));
  return out;
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
