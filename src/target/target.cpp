// What every target has unless it says otherwise (target.h): the host's Bench for tri_tune, which
// keeps host copies of the buffers a trial writes and times a run with the steady clock.
#include "target/target.h"

#include <chrono>
#include <cstring>

namespace tri::target {
namespace {

class HostBench final : public Bench {
 public:
  Status save(void* ptr, uint64_t bytes) override {
    saved_.push_back({ptr, std::string(static_cast<const char*>(ptr), bytes)});
    return Status::ok();
  }
  void restore() override {
    for (const Saved& s : saved_) std::memcpy(s.ptr, s.bytes.data(), s.bytes.size());
  }
  Status time(uint32_t, const std::function<Status()>& run, double* ns) override {
    const auto t0 = std::chrono::steady_clock::now();
    Status st = run();
    *ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    return st;
  }
  void finish() override {}

 private:
  struct Saved {
    void* ptr;
    std::string bytes;
  };
  std::vector<Saved> saved_;
};

}  // namespace

Status Target::make_bench(void*, std::unique_ptr<Bench>* out) const {
  *out = std::make_unique<HostBench>();
  return Status::ok();
}

}  // namespace tri::target
