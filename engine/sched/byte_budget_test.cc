#include "engine/sched/byte_budget.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace dmls::sched {
namespace {

TEST(ByteBudgetTest, ReservesUpToTheCapacityAndGivesBackOnRelease) {
  ByteBudget budget(100);
  auto a = budget.TryReserve(60);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(budget.TryReserve(41), nullptr);
  auto b = budget.TryReserve(40);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(budget.used(), 100u);
  a.reset();
  EXPECT_EQ(budget.used(), 40u);
  EXPECT_NE(budget.TryReserve(60), nullptr);  // released again at once
  EXPECT_EQ(budget.used(), 40u);
  EXPECT_EQ(budget.TryReserve(101), nullptr);  // never fits
}

TEST(ByteBudgetTest, ZeroCapacityMeansNoLimit) {
  ByteBudget budget(0);
  auto a = budget.TryReserve(uint64_t{1} << 62);
  ASSERT_NE(a, nullptr);
  EXPECT_NE(budget.TryReserve(uint64_t{1} << 61), nullptr);
}

TEST(ByteBudgetTest, ConcurrentReservationsNeverExceedTheCapacity) {
  ByteBudget budget(1000);
  std::atomic<uint64_t> peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        auto r = budget.TryReserve(300);
        if (r) {
          uint64_t u = budget.used();
          uint64_t p = peak.load();
          while (u > p && !peak.compare_exchange_weak(p, u)) {
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 1000u);
  EXPECT_EQ(budget.used(), 0u);
}

}  // namespace
}  // namespace dmls::sched
