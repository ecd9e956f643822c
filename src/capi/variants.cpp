// Launch-time specialization, Triton's without its cost: each launch classes its arguments
// (pointers aligned to 16 bytes, integers divisible by 16) with a few bit tests and runs the
// variant compiled for those classes, so a kernel compiled once gets 16-byte vector accesses
// wherever the caller's buffers allow them. Lookups are lock-free (a fixed table of atomics);
// a new variant is compiled once under the kernel's mutex while other launches of it wait.
#include <cstdio>
#include <cstring>

#include "capi/compiled.h"

namespace tri::capi {

bool Compiled::classes_at_launch() const {
  const bool on = req.specialize_at_launch == CompileRequest::Spec::Default ? target->specializes_at_launch_by_default()
                                                                           : req.specialize_at_launch == CompileRequest::Spec::On;
  return on && target->specializes_at_launch();
}

uint64_t Compiled::classify(const ArgValue* args, size_t n) const {
  if (!classes_at_launch()) return 0;
  uint64_t key = 0;
  const size_t m = std::min<size_t>(n, 32);
  for (size_t i = 0; i < m; ++i)
    if (!(req.unclassed >> i & 1)) key |= arg_class(params[i], args[i].bits) << (2 * i);
  return key;
}

namespace {

// Two bits per argument: pointers 1 (aligned to 16); integers 2 (a nonzero multiple of 16) or
// 3 (equal to 1, which the variant compiles as the constant 1).
const char* class_name(uint64_t bits, bool is_ptr) {
  if (is_ptr) return bits & 1 ? "aligned to 16" : "not aligned to 16";
  if (bits == 3) return "equal to 1";
  if (bits == 2) return "divisible by 16";
  return "not divisible by 16";
}

std::string describe(const Compiled& c, uint64_t key) {
  std::string s;
  for (size_t i = 0; i < c.params.size() && i < 32; ++i) {
    uint64_t bits = key >> (2 * i) & 3;
    if (!bits) continue;
    s += (s.empty() ? "" : ", ") + std::string("%") + c.params[i].name + " " + class_name(bits, c.params[i].is_ptr);
  }
  return s.empty() ? "no facts" : s;
}

// Why the variant for `key` is new: the arguments whose class differs from the nearest variant
// already made (the kernel as compiled has key 0), as "argument 3 (%n) changed class: not
// divisible by 16 -> divisible by 16".
std::string reason(const Compiled& c, uint64_t key, const std::vector<uint64_t>& made) {
  uint64_t nearest = 0;
  int best = __builtin_popcountll(key);
  for (uint64_t k : made) {
    int d = __builtin_popcountll(k ^ key);
    if (d < best) best = d, nearest = k;
  }
  std::string s;
  for (size_t i = 0; i < c.params.size() && i < 32; ++i) {
    uint64_t was = nearest >> (2 * i) & 3, now = key >> (2 * i) & 3;
    if (was == now) continue;
    s += (s.empty() ? "" : "; ") + std::string("argument ") + std::to_string(i) + " (%" + c.params[i].name +
         ") changed class: " + class_name(was, c.params[i].is_ptr) + " -> " + class_name(now, c.params[i].is_ptr);
  }
  return s + (nearest ? " (from the variant for " + describe(c, nearest) + ")" : " (from the kernel as compiled)");
}

// Whether arguments of the classes `key` may run the variant compiled for `variant`: every
// parameter the variant assumes a class of has that class.
bool satisfies(uint64_t key, uint64_t variant) {
  for (int i = 0; i < 32; ++i) {
    const uint64_t v = variant >> (2 * i) & 3;
    if (v && v != (key >> (2 * i) & 3)) return false;
  }
  return true;
}

// How many parameters a variant assumes a class of.
int facts(uint64_t variant) {
  int n = 0;
  for (int i = 0; i < 32; ++i) n += (variant >> (2 * i) & 3) != 0;
  return n;
}

void json_string(std::string* out, const std::string& s) {
  *out += '"';
  for (char ch : s) {
    if (ch == '"' || ch == '\\') *out += '\\';
    *out += ch;
  }
  *out += '"';
}

}  // namespace

std::string Compiled::variants_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = "{\"schema\": 1, \"max_variants\": " + std::to_string(std::min<uint32_t>(req.max_variants, kMaxVariants)) +
                    ", \"variants\": [";
  for (int i = 0; i < kMaxVariants; ++i) {
    if (!variants_[i].compiled.load(std::memory_order_acquire)) break;
    uint64_t key = variants_[i].key.load(std::memory_order_relaxed);
    char hex[24];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
    out += i ? ", " : "";
    out += "{\"key\": \"" + std::string(hex) + "\", \"classes\": [";
    bool first = true;
    for (size_t p = 0; p < params.size() && p < 32; ++p) {
      uint64_t bits = key >> (2 * p) & 3;
      if (!bits) continue;
      out += first ? "" : ", ";
      first = false;
      out += "{\"param\": " + std::to_string(p) + ", \"name\": ";
      json_string(&out, params[p].name);
      out += ", \"class\": ";
      json_string(&out, class_name(bits, params[p].is_ptr));
      out += "}";
    }
    out += "], \"reason\": ";
    json_string(&out, variants_[i].reason);
    out += "}";
  }
  return out + "]}";
}

const Compiled* Compiled::variant(uint64_t key, const std::function<void(const std::string&)>& log) const {
  if (const Compiled* found = find_variant(key)) return found;
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
  if (!prebuilt.empty() || !compile_variant) {
    // A package's kernel: the prebuilt variant with the most facts these classes satisfy.
    std::shared_ptr<Compiled> best;
    uint64_t best_key = 0;
    for (const auto& [k, c] : prebuilt)
      if (satisfies(key, k) && (!best || facts(k) > facts(best_key))) best = c, best_key = k;
    if (!best) return this;
    std::string why = "the package's variant for " + describe(*this, best_key);
    if (log) log("kernel @" + name + ": " + describe(*this, key) + " runs " + why);
    publish_locked(used, key, std::move(best), why);
    return variants_[used].compiled.load(std::memory_order_relaxed);
  }
  std::vector<uint64_t> keys;
  for (int i = 0; i < used; ++i) keys.push_back(variants_[i].key.load(std::memory_order_relaxed));
  std::string why = reason(*this, key, keys);
  CompileRequest r = variant_request(req, params, key);
  std::shared_ptr<Compiled> made;
  Status st = compile_variant(r, &made);
  if (!st.is_ok()) {
    if (log) log("kernel @" + name + ": the variant for " + describe(*this, key) + " did not compile (" + st.message() +
                 "); running the kernel as compiled");
    return this;
  }
  if (log) log("kernel @" + name + ": new variant for " + describe(*this, key) + ": " + why);
  publish_locked(used, key, std::move(made), why);
  return variants_[used].compiled.load(std::memory_order_relaxed);
}

void Compiled::publish_locked(int slot, uint64_t key, std::shared_ptr<Compiled> made, const std::string& why) const {
  const Compiled* c = made.get();
  owned_.push_back(std::move(made));
  variants_[slot].reason = why;
  variants_[slot].key.store(key, std::memory_order_relaxed);
  variants_[slot].compiled.store(c, std::memory_order_release);
}

bool Compiled::adopt_variant(uint64_t key, std::shared_ptr<Compiled> made, const std::string& why) const {
  if (key == 0 || !made) return false;
  std::lock_guard<std::mutex> lock(mu_);
  int used = 0;
  for (; used < kMaxVariants; ++used) {
    const Compiled* c = variants_[used].compiled.load(std::memory_order_acquire);
    if (!c) break;
    if (variants_[used].key.load(std::memory_order_relaxed) == key) return false;
  }
  if (used >= static_cast<int>(std::min<uint32_t>(req.max_variants, kMaxVariants))) return false;
  publish_locked(used, key, std::move(made), why);
  return true;
}

CompileRequest variant_request(const CompileRequest& base, const std::vector<ParamSig>& params, uint64_t key) {
  CompileRequest r = base;
  r.specialize_at_launch = CompileRequest::Spec::Off;
  for (size_t i = 0; i < params.size() && i < 32; ++i) {
    uint64_t bits = key >> (2 * i) & 3;
    auto& f = r.facts[static_cast<uint32_t>(i)];
    if (params[i].is_ptr) {
      if (bits & 1) f.first = std::max<uint32_t>(f.first, 16);
    } else if (bits == 3) {
      r.equal_one |= uint32_t(1) << i;
    } else if (bits == 2) {
      f.second = f.second ? f.second : 16;
    }
    if (f.first == 0 && f.second == 0) r.facts.erase(static_cast<uint32_t>(i));
  }
  return r;
}

}  // namespace tri::capi
