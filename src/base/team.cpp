// Signal waits and co-resident program threads for the host targets (team.h).
#include "base/team.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace tri {
namespace {

int64_t read_signal(const WaitRequest& w) {
  const int order = w.acquire ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
  if (w.bytes == 8) return __atomic_load_n(reinterpret_cast<const int64_t*>(w.addr), order);
  return __atomic_load_n(reinterpret_cast<const int32_t*>(w.addr), order);
}

bool satisfied(const WaitRequest& w, int64_t v) { return w.cmp == WaitCmp::Eq ? v == w.value : v >= w.value; }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

struct Job {
  const std::function<void(uint64_t)>* task;
  uint64_t index;
};

void* thread_main(void* arg) {
  std::unique_ptr<Job> job(static_cast<Job*>(arg));
  (*job->task)(job->index);
  return nullptr;
}

}  // namespace

WaitEnd wait_signal(const WaitRequest& w, uint64_t timeout_ms, const std::atomic<bool>* stop,
                    const std::atomic<bool>* abort, const CancelToken& cancel, int64_t* last) {
  using Clock = std::chrono::steady_clock;
  int64_t v = read_signal(w);
  *last = v;
  if (satisfied(w, v)) return WaitEnd::Done;
  const Clock::time_point start = Clock::now();
  // More threads than cores spin here (every program of every rank is a thread): spin briefly,
  // then give the core away, then nap, so that the programs being waited for get to run.
  for (uint64_t i = 1;; ++i) {
    if (i < 64) {
      cpu_relax();
    } else if (i < 256) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(i < 1024 ? 20 : 200));
    }
    v = read_signal(w);
    *last = v;
    if (satisfied(w, v)) return WaitEnd::Done;
    if ((stop && stop->load(std::memory_order_relaxed)) || (abort && abort->load(std::memory_order_relaxed)))
      return WaitEnd::Stopped;
    if (cancel.requested()) return WaitEnd::Cancelled;
    // Compared in milliseconds as unsigned numbers: a timeout too large for the clock's
    // nanoseconds (UINT64_MAX: "forever") never times out, where a conversion would wrap.
    if (timeout_ms && (i & 15) == 0 &&
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()) >=
            timeout_ms)
      return WaitEnd::TimedOut;
  }
}

Status run_coresident(uint64_t n, size_t stack_bytes, const std::function<void(uint64_t)>& task,
                      std::atomic<bool>* stop) {
  if (n > kMaxCoresidentPrograms)
    return Status(Code::LimitExceeded, std::to_string(n) + " program instances would run at once, more than the " +
                                           std::to_string(kMaxCoresidentPrograms) + " the host targets allow");
  std::vector<pthread_t> threads;
  threads.reserve(n);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  std::string failed;
  for (uint64_t i = 0; i < n; ++i) {
    pthread_t t;
    auto* job = new Job{&task, i};
    int rc = pthread_create(&t, &attr, &thread_main, job);
    if (rc != 0) {
      delete job;
      failed = std::strerror(rc);
      if (stop) stop->store(true);
      break;
    }
    threads.push_back(t);
  }
  pthread_attr_destroy(&attr);
  for (pthread_t t : threads) pthread_join(t, nullptr);
  if (!failed.empty())
    return Status(Code::OutOfMemory, "cannot start " + std::to_string(n) + " threads (one per program instance, " +
                                         std::to_string(stack_bytes >> 20) + " MiB stacks): " + failed +
                                         " after " + std::to_string(threads.size()));
  return Status::ok();
}

}  // namespace tri
