#include "engine/d3d12/range_allocator.h"

#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace dmls::d3d12 {
namespace {

TEST(RangeAllocatorTest, FirstFitAlignedAndMerging) {
  RangeAllocator a(4096, 256);
  EXPECT_EQ(a.Allocate(1), 0u);
  EXPECT_EQ(a.Allocate(300), 256u);  // rounded to 512
  EXPECT_EQ(a.Allocate(256), 768u);
  EXPECT_EQ(a.used(), 1024u);
  a.Free(256, 300, 0);
  EXPECT_EQ(a.Allocate(512), 256u);  // the hole is reused
  a.Free(0, 1, 0);
  a.Free(256, 512, 0);
  a.Free(768, 256, 0);
  EXPECT_EQ(a.used(), 0u);
  EXPECT_EQ(a.largest_free(), 4096u);  // merged back into one block
  EXPECT_EQ(a.Allocate(4096), 0u);
  EXPECT_FALSE(a.Allocate(1).has_value());
}

TEST(RangeAllocatorTest, FencedFreesWaitForTheirFence) {
  RangeAllocator a(1024, 256);
  ASSERT_EQ(a.Allocate(1024), 0u);
  a.Free(0, 1024, 7);
  EXPECT_FALSE(a.Allocate(256).has_value());
  a.Reclaim(6);
  EXPECT_FALSE(a.Allocate(256).has_value());
  a.Reclaim(7);
  EXPECT_EQ(a.Allocate(1024), 0u);
}

TEST(RangeAllocatorTest, UsedAsOfAFenceReclaimsNothing) {
  RangeAllocator a(1024, 256);
  ASSERT_EQ(a.Allocate(300), 0u);   // 512 bytes
  ASSERT_EQ(a.Allocate(256), 512u);
  a.Free(0, 300, 7);
  EXPECT_EQ(a.used(), 768u);
  EXPECT_EQ(a.used(6), 768u);
  EXPECT_EQ(a.used(7), 256u);  // as if reclaimed...
  EXPECT_EQ(a.used(), 768u);   // ...but still retired
  EXPECT_FALSE(a.Allocate(512).has_value());
  a.Reclaim(7);
  EXPECT_EQ(a.used(), 256u);
}

TEST(RangeAllocatorTest, RandomisedNeverOverlapsAndReturnsToEmpty) {
  RangeAllocator a(1 << 20, 256);
  std::mt19937 rng(1);
  std::vector<std::pair<uint64_t, uint64_t>> live;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 2) {
      const uint64_t bytes = 1 + rng() % 9000;
      std::optional<uint64_t> off = a.Allocate(bytes);
      if (!off) continue;
      ASSERT_EQ(*off % 256, 0u);
      for (const auto& [o, b] : live) {
        const uint64_t end = *off + bytes;
        ASSERT_TRUE(end <= o || o + b <= *off) << "overlap";
      }
      live.push_back({*off, bytes});
    } else {
      size_t i = rng() % live.size();
      a.Free(live[i].first, live[i].second, 0);
      live.erase(live.begin() + i);
    }
  }
  for (const auto& [o, b] : live) a.Free(o, b, 0);
  EXPECT_EQ(a.used(), 0u);
  EXPECT_EQ(a.largest_free(), uint64_t{1} << 20);
}

TEST(RangeAllocatorTest, ConcurrentUse) {
  RangeAllocator a(1 << 24, 256);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&a, t] {
      for (int i = 0; i < 5000; ++i) {
        std::optional<uint64_t> off = a.Allocate(1024 + t);
        ASSERT_TRUE(off.has_value());
        a.Free(*off, 1024 + t, 0);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(a.used(), 0u);
}

}  // namespace
}  // namespace dmls::d3d12
