// A compiled kernel: one specialization of one kernel for one target, and the launch path that
// turns C API arguments into backend arguments. tri_kernel handles share these (a module caches
// them by specialization key, so compiling the same thing twice returns the same object).
#pragma once

#include <atomic>
#include <condition_variable>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/launch.h"
#include "base/status.h"
#include "cache/key.h"
#include "ir/ir.h"
#include "package/package.h"
#include "passes/specialize.h"
#include "tri/tri.h"

#include "target/target.h"

namespace tri::cache {
class DiskCache;
}

namespace tri::capi {

// What tri_compile_options holds, in a form that makes a stable cache key.
struct CompileRequest {
  std::string target = "cpu";
  target::CompileOptions options;
  std::map<std::string, ir::Attr> constexprs;          // by name: last set wins
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> facts;  // param -> (align, divisible)
  uint32_t equal_one = 0;  // runtime integer parameters known to be 1, by bit (launch variants)
  // Launch-time specialization (variants.cpp): classify arguments at each launch and use (or
  // compile once) the variant for their classes; off runs the kernel as compiled.
  // Unset: the target's default (on for "cuda", off for "cpu"; tri.h).
  enum class Spec { Default, On, Off } specialize_at_launch = Spec::Default;
  uint32_t max_variants = 8;
  // Runtime parameters (the first 32) whose class never selects a variant, by bit.
  uint32_t unclassed = 0;

  std::string key(const std::string& kernel) const;
  // What the compile was specialized for, for people ("BLOCK=256, warps=8; %x aligned to 16"):
  // the constexprs by name, warps and stages on a GPU target, the argument facts of a launch
  // variant (parameters named from `k`, the kernel's runtime parameters in order). Kept in the
  // disk cache entry (tri_cache_list).
  std::string describe(const ir::Function& k, bool gpu) const;
};

struct ParamSig {
  std::string name;
  bool is_ptr = false;
  ir::Scalar dtype = ir::Scalar::I32;  // the scalar's type, or the pointee's
  // For the warm launch path (Compiled::encode_and_classify): the tri_arg kind and dtype this
  // parameter takes, and for an integer the mask of its width (0 for floats and pointers).
  int32_t want_kind = 0, want_dtype = 0;
  uint64_t int_mask = 0;
};

// The two class bits of one argument (its encoded bits) for launch-time specialization:
// pointers 1 when aligned to 16 bytes; integers (not i1) 3 when equal to 1, 2 when a nonzero
// multiple of 16; else 0.
inline uint64_t arg_class(const ParamSig& p, uint64_t bits) {
  if (p.is_ptr) return bits % 16 == 0 ? 1 : 0;
  if (!p.int_mask || p.dtype == ir::Scalar::I1) return 0;
  return bits == 1 ? 3 : bits != 0 && bits % 16 == 0 ? 2 : 0;
}

class Compiled {
 public:
  ~Compiled();

  std::unique_ptr<ir::Module> ir;  // specialized and canonicalized; the kernel is functions[0]
  const target::Target* target = nullptr;
  std::vector<ParamSig> params;
  // What the target made. Declared after `ir`, which it may refer to, so it is destroyed first.
  std::shared_ptr<const target::Executable> exe;

  // ---- launch-time specialization (variants.cpp)
  // Where a variant is compiled from: the source module (kept alive by every tri_kernel that
  // holds this object), the kernel's name and the request it was compiled with.
  const ir::Module* source = nullptr;
  std::string name;
  CompileRequest req;
  cache::DiskCache* disk = nullptr;  // the context's (it outlives every kernel), or null
  bool from_disk = false;            // exe was loaded from a disk cache entry, not compiled here
  // The same kernel compiled again with CompileOptions::keep_code, when tri_kernel_code asked
  // for code `exe` does not keep (made on the first such call, under mu_).
  mutable std::shared_ptr<const target::Executable> with_code;
  bool waits = false;                // the kernel waits on signals: its programs must all run at once
  // Compiles the variant for a request (variant_request of this one's); set by compile() for a
  // kernel compiled here, empty for a package's (which never compiles).
  std::function<Status(const CompileRequest&, std::shared_ptr<Compiled>*)> compile_variant;
  // A package's variants of this kernel by their argument classes (capi/package.cpp). A launch
  // whose classes have no variant of their own runs the one with the most facts its arguments
  // satisfy (this object, the package's variant without facts, at the least).
  std::vector<std::pair<uint64_t, std::shared_ptr<Compiled>>> prebuilt;
  // The argument classes of a launch: two bits per runtime parameter (the first 32): bit 0 a
  // pointer aligned to 16 bytes, bit 1 an integer divisible by 16.
  uint64_t classify(const ArgValue* args, size_t n) const;
  // Whether launches class their arguments at all (the target specializes at launch and the
  // request did not turn it off).
  bool classes_at_launch() const;
  // encode_args's fast path for tri_launch (per-parameter masks, no messages), then classify:
  // false when an argument does not match its parameter (encode_args then says how).
  bool encode_and_classify(const tri_arg* args, uint32_t n, ArgValue* out, uint64_t* key) const;
  // The variant for `key` (this object for key 0 or when specialization is off); compiles it
  // on first use (once, whatever the threads), or returns this object when the variant budget
  // is spent or the variant fails to compile. `log` receives one line per new variant.
  const Compiled* variant(uint64_t key, const std::function<void(const std::string&)>& log) const;
  // The variant for `key` when it exists already (this object for key 0), else null: the warm
  // launch path, without a lock, an allocation or a std::function.
  const Compiled* find_variant(uint64_t key) const {
    if (key == 0) return this;
    for (const Variant& v : variants_) {
      const Compiled* c = v.compiled.load(std::memory_order_acquire);
      if (!c) return nullptr;
      if (v.key.load(std::memory_order_relaxed) == key) return c;
    }
    return nullptr;
  }

  // variant()'s work under mu_; `note` receives the line to log once the lock is released.
  const Compiled* variant_locked(uint64_t key, std::string* note) const;
  // Takes `made`, compiled elsewhere from variant_request(req, params, key), as the variant for
  // `key` (tri_tune compiles its trial kernels so); false when `key` has a variant already or
  // the budget is spent (`made` is then dropped).
  bool adopt_variant(uint64_t key, std::shared_ptr<Compiled> made, const std::string& why) const;
  // Publishes `made` in slot `slot` (the first free one); mu_ is held.
  void publish_locked(int slot, uint64_t key, std::shared_ptr<Compiled> made, const std::string& why) const;

  struct Variant {
    std::atomic<uint64_t> key{0};
    std::atomic<const Compiled*> compiled{nullptr};
    std::string reason;  // why it was made; written before `compiled` is published
  };
  // The variants made so far as JSON (docs/capi.md "Variants"); takes the kernel's mutex.
  std::string variants_json() const;
  static constexpr int kMaxVariants = 16;
  mutable Variant variants_[kMaxVariants];
  mutable std::vector<std::shared_ptr<Compiled>> owned_;  // the variants, guarded by mu_
  mutable std::mutex mu_;

  const ir::Function& kernel() const { return *ir->functions[0]; }
};

// Prepares and compiles kernel `name` of `m` as `req` says. `timing`, when set, receives the
// target's per-stage compile times (capi logs them at TRI_LOG_DEBUG). With `disk` (on), the
// target's code comes from the disk cache when it holds it, and is stored there when it did not
// (compile_with_disk). Once `cancel` is requested the compile stops at its next stage boundary
// with Code::Cancelled (target::CompileOptions::cancel says which boundaries).
Status compile(const ir::Module& m, const std::string& name, const CompileRequest& req,
               std::shared_ptr<Compiled>* out, const std::function<void(const std::string&)>& timing = nullptr,
               cache::DiskCache* disk = nullptr, const CancelToken& cancel = CancelToken());

// compile()'s preparation of the kernel: specialized on the request's constexprs and facts,
// canonicalized and pipelined for target `t`, verified.
Status prepare(const ir::Module& m, const std::string& name, const CompileRequest& req, const target::Target& t,
               const CancelToken& cancel, std::unique_ptr<ir::Module>* out);

// The disk-cache step of compile() (disk_cache.cpp): sets c->exe from the entry of c's key, or
// compiles with `t` (once across processes: the others wait and read the entry) and stores it.
// A cache problem never fails the compile; it is logged and the kernel compiled in memory.
Status compile_with_disk(cache::DiskCache& disk, Compiled* c, const target::Target& t,
                         const target::CompileOptions& options, cache::Key* out_key = nullptr);

// The request's shortcut to the disk cache (disk_cache.cpp): a file <cache dir>/front/<key> keyed
// by what the preparation of a kernel depends on (the source module, the kernel's name, the
// request, the target, what it compiles for, Tri's build), holding the prepared IR and the key
// of its entry, so that a compile that finds both skips preparing the kernel and keying it.
// try_front sets c->ir and c->exe and returns true when it could; remember_front writes the file.
// The file is sealed with the cache's MAC and names its own request key, so a shortcut copied
// under another request's name or written by anything but Tri is ignored (docs/cache.md).
bool try_front(cache::DiskCache& disk, const ir::Module& m, const std::string& name, const CompileRequest& req,
               const target::Target& t, const target::CompileOptions& options, Compiled* c, cache::Key* front_key);
void remember_front(cache::DiskCache& disk, const cache::Key& front_key, const cache::Key& entry,
                    const ir::Module& prepared);

// A runtime parameter's signature: its tri_arg kind and dtype, and an integer's width mask.
ParamSig make_sig(const std::string& name, bool is_ptr, ir::Scalar dtype);
// The runtime parameters of kernel `k` of `m` as launches see them; of a package's function.
std::vector<ParamSig> param_sigs(const ir::Module& m, const ir::Function& k);
std::vector<ParamSig> param_sigs(const package::Function& f);

// The request a launch variant for the argument classes `key` is compiled with: `base` with
// specialization off and the facts the classes give (16-byte alignment, divisibility by 16,
// equal to 1).
CompileRequest variant_request(const CompileRequest& base, const std::vector<ParamSig>& params, uint64_t key);

// Checks the arguments against the kernel's signature and encodes them (base/launch.h). `out`
// has room for n values.
Status encode_args(const Compiled& c, const tri_arg* args, uint32_t n, ArgValue* out);

// Compiles each key once, even when several threads ask at the same time; later requests for a
// key get the same object. Failed compiles are not remembered. A compile of a key that the
// calling thread is already compiling (a log callback re-entering) is refused with
// Code::InvalidArgument instead of waiting for itself.
//
// Memory: the cache holds the `capacity` most recently used specializations (compiled or looked
// up); older ones are dropped, and live on only while a kernel handle holds them (a lookup of
// such a key still finds them through a weak reference). Entries whose object died are swept.
class CompileCache {
 public:
  static constexpr size_t kDefaultCapacity = 64;

  Status get(const std::string& key, const std::function<Status(std::shared_ptr<Compiled>*)>& make,
             std::shared_ptr<Compiled>* out);
  void set_capacity(size_t n);

 private:
  struct Entry {
    std::shared_ptr<Compiled> strong;  // set while among the `capacity_` most recently used
    std::weak_ptr<Compiled> weak;
    std::list<std::string>::iterator lru;  // valid while strong is set
  };
  // Makes `e` (of `key`) the most recently used, holding `c`; drops what passes the capacity
  // into `dropped` (released by the caller after the lock).
  void touch(const std::string& key, Entry& e, std::shared_ptr<Compiled> c,
             std::vector<std::shared_ptr<Compiled>>* dropped);

  std::mutex mu_;
  std::condition_variable cv_;
  size_t capacity_ = kDefaultCapacity;
  std::map<std::string, Entry> done_;
  std::list<std::string> lru_;  // keys whose entry holds its object, most recent first
  std::map<std::string, std::thread::id> in_flight_;  // the thread compiling each key
};

}  // namespace tri::capi
