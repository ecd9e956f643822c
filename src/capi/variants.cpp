// Launch-time specialization, Triton's without its cost: each launch classes its arguments
// (pointers aligned to 16 bytes, integers divisible by 16) with a few bit tests and runs the
// variant compiled for those classes, so a kernel compiled once gets 16-byte vector accesses
// wherever the caller's buffers allow them. Lookups are lock-free (a fixed table of atomics);
// a new variant is compiled once under the kernel's mutex while other launches of it wait.
#include <cstring>

#include "capi/compiled.h"

namespace tri::capi {

uint64_t Compiled::classify(const ArgValue* args, size_t n) const {
  if (!req.specialize_at_launch || !target->specializes_at_launch()) return 0;
  uint64_t key = 0;
  const size_t m = std::min<size_t>(n, 32);
  for (size_t i = 0; i < m; ++i) {
    const ParamSig& p = params[i];
    if (p.is_ptr) {
      if (args[i].bits % 16 == 0) key |= uint64_t(1) << (2 * i);
    } else if (ir::is_int(p.dtype) && p.dtype != ir::Scalar::I1) {
      if (args[i].bits != 0 && args[i].bits % 16 == 0) key |= uint64_t(2) << (2 * i);
    }
  }
  return key;
}

namespace {

std::string describe(const Compiled& c, uint64_t key) {
  std::string s;
  for (size_t i = 0; i < c.params.size() && i < 32; ++i) {
    uint64_t bits = key >> (2 * i) & 3;
    if (!bits) continue;
    s += (s.empty() ? "" : ", ") + std::string("%") + c.params[i].name + (bits & 1 ? " aligned to 16" : " divisible by 16");
  }
  return s.empty() ? "no facts" : s;
}

}  // namespace

const Compiled* Compiled::variant(uint64_t key, const std::function<void(const std::string&)>& log) const {
  if (key == 0) return this;
  for (const Variant& v : variants_) {
    const Compiled* c = v.compiled.load(std::memory_order_acquire);
    if (!c) break;
    if (v.key.load(std::memory_order_relaxed) == key) return c;
  }
  // The log is called after the lock is released: a log callback may launch this kernel again.
  std::string note;
  const Compiled* picked = variant_locked(key, &note);
  if (log && !note.empty()) log(note);
  return picked;
}

const Compiled* Compiled::variant_locked(uint64_t key, std::string* note) const {
  const std::function<void(const std::string&)> log = [note](const std::string& m) { *note = m; };
  std::lock_guard<std::mutex> lock(mu_);
  int used = 0;
  for (; used < kMaxVariants; ++used) {
    const Compiled* c = variants_[used].compiled.load(std::memory_order_acquire);
    if (!c) break;
    if (variants_[used].key.load(std::memory_order_relaxed) == key) return c;
  }
  if (used >= static_cast<int>(std::min<uint32_t>(req.max_variants, kMaxVariants))) {
    if (log) log("kernel @" + name + ": no more variants (" + std::to_string(used) + " made); " + describe(*this, key) +
                 " runs the kernel as compiled");
    return this;
  }
  CompileRequest r = req;
  r.specialize_at_launch = false;
  for (size_t i = 0; i < params.size() && i < 32; ++i) {
    uint64_t bits = key >> (2 * i) & 3;
    auto& f = r.facts[static_cast<uint32_t>(i)];
    if (bits & 1) f.first = std::max<uint32_t>(f.first, 16);
    if (bits & 2) f.second = f.second ? f.second : 16;
  }
  std::shared_ptr<Compiled> made;
  Status st = compile(*source, name, r, &made);
  if (!st.is_ok()) {
    if (log) log("kernel @" + name + ": the variant for " + describe(*this, key) + " did not compile (" + st.message() +
                 "); running the kernel as compiled");
    return this;
  }
  if (log) log("kernel @" + name + ": new variant for " + describe(*this, key));
  made->source = source;
  made->name = name;
  made->req = r;
  owned_.push_back(made);
  variants_[used].key.store(key, std::memory_order_relaxed);
  variants_[used].compiled.store(made.get(), std::memory_order_release);
  return made.get();
}

}  // namespace tri::capi
