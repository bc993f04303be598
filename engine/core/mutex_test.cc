#include "engine/core/mutex.h"

#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace dmls {
namespace {

// Shared state of one test: the analysis takes ABSL_GUARDED_BY on members
// and globals only, not on locals.
struct State {
  Mutex mu;
  CondVar cv;
  bool ready ABSL_GUARDED_BY(mu) = false;
  int count ABSL_GUARDED_BY(mu) = 0;

  // On a thread of its own: sets `ready`, then signals one waiter (`all`:
  // every waiter) under the lock.
  std::thread SignalReady(bool all) {
    return std::thread([this, all] {
      MutexLock lock(&mu);
      ready = true;
      all ? cv.SignalAll() : cv.Signal();
    });
  }
};

// A static Mutex needs no dynamic initialisation (except with MinGW: see
// mutex.h).
#if !defined(__MINGW32__)
ABSL_CONST_INIT
#endif
Mutex static_mu;
int static_count ABSL_GUARDED_BY(static_mu) = 0;

TEST(MutexTest, MutexLockExcludesOtherThreads) {
  State s;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&s] {
      for (int i = 0; i < 10000; ++i) {
        MutexLock lock(&s.mu);
        ++s.count;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  MutexLock lock(&s.mu);
  EXPECT_EQ(s.count, 40000);
}

TEST(MutexTest, ExplicitLockAndUnlockOnAStatic) {
  std::thread other([] {
    static_mu.Lock();
    ++static_count;
    static_mu.Unlock();
  });
  other.join();
  static_mu.Lock();
  static_mu.AssertHeld();
  EXPECT_EQ(static_count, 1);
  static_mu.Unlock();
}

TEST(CondVarTest, WaitSeesTheSignalledState) {
  State s;
  std::vector<std::thread> waiters;
  for (int t = 0; t < 3; ++t) {
    waiters.emplace_back([&s] {
      MutexLock lock(&s.mu);
      while (!s.ready) s.cv.Wait(&s.mu);
      ++s.count;
    });
  }
  {
    MutexLock lock(&s.mu);
    s.ready = true;
  }
  s.cv.SignalAll();
  for (std::thread& t : waiters) t.join();
  MutexLock lock(&s.mu);
  EXPECT_EQ(s.count, 3);
}

TEST(CondVarTest, SignalWakesOneWaiterAtATime) {
  // count: tokens handed out and not yet taken.
  State s;
  int taken = 0;  // written by each waiter under s.mu
  std::vector<std::thread> waiters;
  for (int t = 0; t < 2; ++t) {
    waiters.emplace_back([&s, &taken] {
      MutexLock lock(&s.mu);
      while (s.count == 0) s.cv.Wait(&s.mu);
      --s.count;
      ++taken;
    });
  }
  for (int t = 0; t < 2; ++t) {
    {
      MutexLock lock(&s.mu);
      ++s.count;
    }
    s.cv.Signal();
  }
  for (std::thread& t : waiters) t.join();
  MutexLock lock(&s.mu);
  EXPECT_EQ(taken, 2);
  EXPECT_EQ(s.count, 0);
}

TEST(CondVarTest, WaitForTimesOutAndHoldsTheLockAgain) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  const absl::Time start = absl::Now();
  bool timed_out = false;
  // A spurious wakeup returns false early; the loop absorbs it.
  while (!timed_out && absl::Now() - start < absl::Seconds(5)) {
    timed_out = cv.WaitFor(&mu, absl::Milliseconds(20));
  }
  EXPECT_TRUE(timed_out);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(20));
  // Still held: another thread cannot take it until this scope ends.
  mu.AssertHeld();
}

TEST(CondVarTest, WaitUntilAPastDeadlineReturnsAtOnce) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  EXPECT_TRUE(cv.WaitUntil(&mu, absl::Now() - absl::Seconds(1)));
}

TEST(CondVarTest, WaitUntilWakesBeforeTheDeadline) {
  State s;
  std::thread signaller = s.SignalReady(/*all=*/false);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  {
    MutexLock lock(&s.mu);
    while (!s.ready && !s.cv.WaitUntil(&s.mu, deadline)) {
    }
    EXPECT_TRUE(s.ready);
  }
  EXPECT_LT(absl::Now(), deadline);
  signaller.join();
}

TEST(CondVarTest, AnInfiniteTimeoutWaitsForTheSignal) {
  State s;
  std::thread signaller = s.SignalReady(/*all=*/true);
  {
    MutexLock lock(&s.mu);
    while (!s.ready) EXPECT_FALSE(s.cv.WaitFor(&s.mu, absl::InfiniteDuration()));
  }
  signaller.join();
}

}  // namespace
}  // namespace dmls
