// The thread pool that runs program instances: every task runs exactly once, with or without
// the caller joining in; tasks really run concurrently; batches from several threads are
// serialized; worker stacks are as large as asked; pools coexist and shut down cleanly.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/thread_pool.h"
#include "test_main.h"

static void every_task_once(void** state) {
  tri::ThreadPool pool(3);
  for (bool join : {false, true})
    for (uint64_t n : {1ull, 2ull, 7ull, 1000ull, 100000ull}) {
      std::vector<std::atomic<int>> hits(n);
      for (auto& h : hits) h.store(0);
      pool.run(n, [&](uint64_t i) { hits[i].fetch_add(1); }, join);
      for (uint64_t i = 0; i < n; ++i) assert_int_equal(hits[i].load(), 1);
    }
  pool.run(0, [&](uint64_t) { fail(); });
}

// Four tasks on four workers that each wait (with a time limit) until all four have started:
// only possible when they run at the same time.
static void tasks_run_concurrently(void** state) {
  tri::ThreadPool pool(4);
  std::atomic<int> started{0};
  std::atomic<int> met{0};
  pool.run(4, [&](uint64_t) {
    started.fetch_add(1);
    auto t0 = std::chrono::steady_clock::now();
    while (started.load() < 4 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
      std::this_thread::yield();
    if (started.load() == 4) met.fetch_add(1);
  });
  assert_int_equal(met.load(), 4);
}

static void batches_from_many_threads(void** state) {
  tri::ThreadPool pool(2);
  std::atomic<uint64_t> sum{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t)
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) pool.run(37, [&](uint64_t i) { sum.fetch_add(i + t); }, (rep + t) % 2 == 0);
    });
  for (auto& c : callers) c.join();
  // sum over threads t, 50 reps, i < 37 of (i + t)
  uint64_t want = 0;
  for (int t = 0; t < 6; ++t) want += 50 * (37 * 36 / 2 + 37 * uint64_t(t));
  assert_true(sum.load() == want);
}

// 16 MiB of stack per task, on a pool whose workers have 32 MiB.
static void large_worker_stacks(void** state) {
  tri::ThreadPool pool(2, size_t(32) << 20);
  assert_true(pool.stack_bytes() == size_t(32) << 20);
  std::atomic<int> ok{0};
  pool.run(4, [&](uint64_t i) {
    volatile char big[16 << 20];
    big[0] = 1;
    big[sizeof big - 1] = char(i);
    if (big[0] == 1 && big[sizeof big - 1] == char(i)) ok.fetch_add(1);
  });
  assert_int_equal(ok.load(), 4);
}

static void pools_coexist(void** state) {
  std::vector<std::unique_ptr<tri::ThreadPool>> pools;
  for (int i = 0; i < 5; ++i) pools.push_back(std::make_unique<tri::ThreadPool>(2));
  std::atomic<int> n{0};
  for (auto& p : pools) p->run(10, [&](uint64_t) { n.fetch_add(1); });
  pools.erase(pools.begin() + 2);
  for (auto& p : pools) p->run(10, [&](uint64_t) { n.fetch_add(1); });
  assert_int_equal(n.load(), 90);
  tri::ThreadPool defaulted;
  assert_true(defaulted.size() >= 1);
}

// Stacks no address space can hold: no worker starts. The pool says why instead of aborting,
// runs batches the caller joins on the caller alone, and refuses the others.
static void a_pool_without_threads_fails_without_aborting(void** state) {
  tri::ThreadPool pool(3, size_t(1) << 46);
  assert_int_equal(pool.size(), 0);
  assert_int_equal(pool.requested(), 3);
  if (pool.start_error().find("started 0 of 3") == std::string::npos) fail_msg("%s", pool.start_error().c_str());
  std::atomic<int> n{0};
  tri::Status st = pool.run(5, [&](uint64_t) { n.fetch_add(1); });
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::OutOfMemory));
  assert_int_equal(n.load(), 0);
  assert_true(pool.run(5, [&](uint64_t) { n.fetch_add(1); }, true).is_ok());
  assert_int_equal(n.load(), 5);
}

// A task that runs a batch on its own pool (a print callback launching on the same context):
// the nested batch runs on the task's thread instead of waiting for the busy pool. It hung.
static void nested_batches_do_not_wait_for_the_pool(void** state) {
  alarm(60);
  tri::ThreadPool pool(2);
  for (bool outer_join : {false, true})
    for (bool inner_join : {false, true}) {
      std::atomic<uint64_t> sum{0};
      tri::Status st = pool.run(
          16,
          [&](uint64_t i) {
            tri::Status in = pool.run(10, [&](uint64_t j) { sum.fetch_add(i * 100 + j); }, inner_join);
            if (!in.is_ok()) fail_msg("nested: %s", in.message().c_str());
          },
          outer_join);
      assert_true(st.is_ok());
      uint64_t want = 0;
      for (uint64_t i = 0; i < 16; ++i)
        for (uint64_t j = 0; j < 10; ++j) want += i * 100 + j;
      assert_true(sum.load() == want);
    }
  alarm(0);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_task_once),   cmocka_unit_test(tasks_run_concurrently),
      cmocka_unit_test(batches_from_many_threads), cmocka_unit_test(large_worker_stacks),
      cmocka_unit_test(pools_coexist),
      cmocka_unit_test(a_pool_without_threads_fails_without_aborting),
      cmocka_unit_test(nested_batches_do_not_wait_for_the_pool),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
