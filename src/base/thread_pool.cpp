// Worker threads are plain pthreads so that their stack size can be chosen; a batch is handed
// out one task index at a time through an atomic counter (tasks are chunks of program instances,
// coarse enough that the counter is not contended).
#include "base/thread_pool.h"

#include <pthread.h>

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace tri {

struct ThreadPool::Worker {
  ThreadPool* pool = nullptr;
  pthread_t thread{};
};

ThreadPool::ThreadPool(unsigned num_threads, size_t stack_bytes) {
  if (num_threads == 0) num_threads = std::thread::hardware_concurrency();
  if (num_threads == 0) num_threads = 1;
  stack_bytes_ = stack_bytes ? stack_bytes : kDefaultStackBytes;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes_);
  for (unsigned i = 0; i < num_threads; ++i) {
    auto w = std::make_unique<Worker>();
    w->pool = this;
    if (pthread_create(&w->thread, &attr, &ThreadPool::worker_main, w.get()) != 0) {
      // Fewer threads than asked is still a working pool; none at all is not.
      if (workers_.empty()) {
        std::fprintf(stderr, "tri: cannot start a worker thread\n");
        std::abort();
      }
      break;
    }
    workers_.push_back(std::move(w));
  }
  pthread_attr_destroy(&attr);
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

void ThreadPool::run(uint64_t n, const std::function<void(uint64_t)>& task, bool caller_joins) {
  if (n == 0) return;
  if (n == 1 && caller_joins) {
    task(0);
    return;
  }
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
}

}  // namespace tri
