#include "engine/core/mutex.h"
#include "engine/sched/thread_pool.h"

#include <atomic>
#include <set>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace dmls::sched {
namespace {

TEST(ThreadPool, RunsEveryTask) {
  ThreadPool pool(ThreadPoolOptions{3});
  EXPECT_EQ(pool.thread_count(), 3);
  std::atomic<int> sum{0};
  for (int i = 1; i <= 1000; ++i) {
    ASSERT_TRUE(pool.Schedule([&sum, i] { sum += i; }));
  }
  pool.Shutdown();
  EXPECT_EQ(sum.load(), 500500);
}

TEST(ThreadPool, ZeroThreadsMeansHardwareConcurrency) {
  ThreadPool pool;
  const int expected =
      std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(pool.thread_count(), expected);
}

TEST(ThreadPool, ShutdownDrainsQueuedTasks) {
  ThreadPool pool(ThreadPoolOptions{1});
  absl::Notification release;
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.Schedule([&] {
    release.WaitForNotification();
    ++ran;
  }));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(pool.Schedule([&] { ++ran; }));
  EXPECT_GE(pool.pending(), 10u);
  std::thread releaser([&] {
    absl::SleepFor(absl::Milliseconds(20));
    release.Notify();
  });
  pool.Shutdown();  // blocks until the blocked task and the queue are done
  releaser.join();
  EXPECT_EQ(ran.load(), 11);
  EXPECT_EQ(pool.pending(), 0u);
}

TEST(ThreadPool, RejectsAfterShutdownAndShutdownIsIdempotent) {
  ThreadPool pool(ThreadPoolOptions{2});
  pool.Shutdown();
  bool ran = false;
  EXPECT_FALSE(pool.Schedule([&] { ran = true; }));
  pool.Shutdown();
  EXPECT_FALSE(ran);
}

TEST(ThreadPool, UsesSeveralThreads) {
  ThreadPool pool(ThreadPoolOptions{2});
  Mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(pool.Schedule([&] {
      {
        MutexLock lock(&mu);
        ids.insert(std::this_thread::get_id());
      }
      ++arrived;
      // Both tasks must be running at once to get past this point.
      while (arrived.load() < 2) std::this_thread::yield();
    }));
  }
  pool.Shutdown();
  EXPECT_EQ(ids.size(), 2u);
}

}  // namespace
}  // namespace dmls::sched
