// RestoreThreads (worker/kafka/restore_threads.h): every index of a run is handed out exactly
// once, a run returns only after all of them, and the same threads serve every run, so what a
// thread keeps for itself survives from one batch to the next.
#include "worker/kafka/restore_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace restack::worker {
namespace {

TEST(RestoreThreads, EveryIndexRunsOnceAndTheRunWaitsForAll) {
  RestoreThreads threads(3);
  for (size_t count : {0u, 1u, 2u, 7u, 500u}) {
    std::vector<std::atomic<int>> calls(count);
    threads.run(count, [&](size_t i) {
      if (i % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      calls[i].fetch_add(1);
    });
    for (size_t i = 0; i < count; ++i) EXPECT_EQ(calls[i].load(), 1) << "index " << i << " of " << count;
  }
}

TEST(RestoreThreads, TheSameThreadsServeEveryRunAndKeepTheirThreadLocalState) {
  RestoreThreads threads(2);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  std::atomic<int> fresh_states{0};
  for (int run = 0; run < 50; ++run) {
    threads.run(20, [&](size_t) {
      // What a restore thread builds once (parsers, caches) and reuses.
      thread_local bool built = false;
      if (!built) {
        built = true;
        fresh_states.fetch_add(1);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      std::lock_guard<std::mutex> lock(mutex);
      seen.insert(std::this_thread::get_id());
    });
  }
  EXPECT_LE(seen.size(), 2u);
  EXPECT_GE(seen.size(), 1u);
  EXPECT_EQ(fresh_states.load(), static_cast<int>(seen.size()));
  EXPECT_EQ(seen.count(std::this_thread::get_id()), 0u) << "the caller's thread does not restore";
}

TEST(RestoreThreads, CallersFromSeveralThreadsTakeTurns) {
  RestoreThreads threads(2);
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int run = 0; run < 20; ++run) threads.run(10, [&](size_t) { total.fetch_add(1); });
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(total.load(), 4 * 20 * 10);
}

}  // namespace
}  // namespace restack::worker
