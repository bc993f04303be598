#include "engine/d3d12/fence_ring.h"

#include "gtest/gtest.h"

namespace dmls::d3d12 {
namespace {

TEST(FenceRingTest, AllocatesContiguouslyUntilFull) {
  FenceRing ring(10);
  EXPECT_EQ(ring.Allocate(4), 0u);
  EXPECT_EQ(ring.Allocate(4), 4u);
  EXPECT_FALSE(ring.Allocate(3).has_value());
  EXPECT_EQ(ring.Allocate(2), 8u);
  EXPECT_EQ(ring.used(), 10u);
  EXPECT_FALSE(ring.CanAllocate(1));
}

TEST(FenceRingTest, ReclaimsByFenceInOrder) {
  FenceRing ring(10);
  ASSERT_TRUE(ring.Allocate(6).has_value());
  ring.Retire(1);
  ASSERT_TRUE(ring.Allocate(3).has_value());
  ring.Retire(2);
  ring.Reclaim(0);
  EXPECT_EQ(ring.used(), 9u);
  EXPECT_FALSE(ring.Allocate(2).has_value());
  ring.Reclaim(1);
  EXPECT_EQ(ring.used(), 3u);
  // 1 slot left before the wrap: a 4-slot block skips it and starts at 0.
  EXPECT_EQ(ring.Allocate(4), 0u);
  EXPECT_EQ(ring.used(), 8u);
  ring.Retire(3);
  ring.Reclaim(3);
  EXPECT_EQ(ring.used(), 0u);
  EXPECT_EQ(ring.Allocate(10), 0u);
}

TEST(FenceRingTest, RejectsOversizedAndEmpty) {
  FenceRing ring(8);
  EXPECT_FALSE(ring.Allocate(9).has_value());
  EXPECT_FALSE(ring.Allocate(0).has_value());
}

TEST(FenceRingTest, NeverHandsOutLiveSlots) {
  // Random-ish traffic: every handed-out block must be disjoint from the
  // blocks still live.
  FenceRing ring(64);
  std::vector<std::pair<uint64_t, uint64_t>> live[8];  // by fence % 8
  uint64_t fence = 0;
  uint32_t seed = 12345;
  for (int step = 0; step < 2000; ++step) {
    seed = seed * 1103515245u + 12345u;
    const uint64_t n = 1 + (seed >> 16) % 13;
    std::optional<uint64_t> at = ring.Allocate(n);
    if (!at) {
      ring.Retire(++fence);
      live[fence % 8].clear();
      // Complete everything up to `fence`, freeing all blocks.
      ring.Reclaim(fence);
      for (auto& l : live) l.clear();
      continue;
    }
    for (auto& l : live) {
      for (auto [s, len] : l) {
        EXPECT_TRUE(*at + n <= s || s + len <= *at) << "overlap at " << *at;
      }
    }
    EXPECT_LE(*at + n, 64u);
    live[(fence + 1) % 8].push_back({*at, n});
    if (seed % 5 == 0) {
      ring.Retire(++fence);
      // Keep two batches in flight: complete fence - 2.
      if (fence >= 2) {
        ring.Reclaim(fence - 2);
        live[(fence - 2) % 8].clear();
      }
    }
  }
}

}  // namespace
}  // namespace dmls::d3d12
