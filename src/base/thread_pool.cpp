// Worker threads are plain pthreads so that their stack size can be chosen; a batch is handed
// out one task index at a time through an atomic counter (tasks are chunks of program instances,
// coarse enough that the counter is not contended).
#include "base/thread_pool.h"

#include <pthread.h>

#include <cassert>
#include <cstring>
#include <thread>

namespace tri {
namespace {
// The pool whose worker this thread is, and the pool whose batch this thread joined as a caller
// (both null elsewhere): run() uses them to tell a nested batch from a new one.
thread_local const ThreadPool* t_worker_of = nullptr;
thread_local const ThreadPool* t_joined = nullptr;

// Sets t_joined for the scope of a joined batch, restoring the outer value (batches may nest).
struct JoinMark {
  const ThreadPool* saved;
  explicit JoinMark(const ThreadPool* p) : saved(t_joined) { t_joined = p; }
  ~JoinMark() { t_joined = saved; }
};
}  // namespace

struct ThreadPool::Worker {
  ThreadPool* pool = nullptr;
  pthread_t thread{};
};

ThreadPool::ThreadPool(unsigned num_threads, size_t stack_bytes) {
  if (num_threads == 0) num_threads = std::thread::hardware_concurrency();
  if (num_threads == 0) num_threads = 1;
  requested_ = num_threads;
  stack_bytes_ = stack_bytes ? stack_bytes : kDefaultStackBytes;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, stack_bytes_);
  for (unsigned i = 0; rc == 0 && i < num_threads; ++i) {
    auto w = std::make_unique<Worker>();
    w->pool = this;
    rc = pthread_create(&w->thread, &attr, &ThreadPool::worker_main, w.get());
    if (rc == 0) workers_.push_back(std::move(w));
  }
  pthread_attr_destroy(&attr);
  // Fewer threads than asked is still a working pool; the owner decides what none means.
  if (rc != 0)
    start_error_ = "started " + std::to_string(workers_.size()) + " of " + std::to_string(num_threads) +
                   " worker threads with " + std::to_string(stack_bytes_ >> 20) + " MiB stacks: " +
                   (workers_.empty() ? "" : "then ") + "starting a thread failed (" + std::strerror(rc) + ")";
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) pthread_join(w->thread, nullptr);
}

void* ThreadPool::worker_main(void* arg) {
  t_worker_of = static_cast<Worker*>(arg)->pool;
  static_cast<Worker*>(arg)->pool->work();
  return nullptr;
}

void ThreadPool::work() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const std::function<void(uint64_t)>* task = task_;
    uint64_t n = n_;
    ++busy_;
    lock.unlock();
    for (;;) {
      uint64_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= n) break;
      (*task)(i);
      finished_.fetch_add(1, std::memory_order_release);
    }
    lock.lock();
    if (--busy_ == 0) done_.notify_all();
  }
}

Status ThreadPool::run(uint64_t n, const std::function<void(uint64_t)>& task, bool caller_joins) {
  if (n == 0) return Status::ok();
  // A nested batch (see the header): this thread is inside a batch of this pool, which holds the
  // pool until that batch ends, so the nested one must not wait for it.
  const bool nested = t_worker_of == this || t_joined == this;
  // Tasks the caller may join have small frames, so they also fit on top of a nested caller's
  // frame; others go to a fresh thread with the pool's stack (the task that called run() still
  // holds its own frame on this thread's stack).
  if ((n == 1 && caller_joins) || (nested && caller_joins) || (workers_.empty() && caller_joins)) {
    for (uint64_t i = 0; i < n; ++i) task(i);
    return Status::ok();
  }
  if (nested) {
    ThreadPool helper(1, stack_bytes_);
    if (helper.size() == 0)
      return Status(Code::OutOfMemory, "cannot run a nested batch: " + helper.start_error());
    return helper.run(n, task, false);
  }
  if (workers_.empty())
    return Status(Code::OutOfMemory, "no worker thread could be started (" + start_error_ +
                                         "); raise the address-space or thread limit, or destroy idle contexts");
  std::lock_guard<std::mutex> serial(run_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  // A worker that woke late for the previous batch may still be looking at its counter.
  done_.wait(lock, [&] { return busy_ == 0; });
  task_ = &task;
  n_ = n;
  next_.store(0, std::memory_order_relaxed);
  finished_.store(0, std::memory_order_relaxed);
  ++generation_;
  wake_.notify_all();
  if (caller_joins) {
    lock.unlock();
    JoinMark mark(this);
    for (;;) {
      uint64_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= n) break;
      task(i);
      finished_.fetch_add(1, std::memory_order_release);
    }
    lock.lock();
  }
  done_.wait(lock, [&] { return busy_ == 0 && finished_.load(std::memory_order_acquire) == n; });
  task_ = nullptr;
  return Status::ok();
}

}  // namespace tri
