#include "server/telemetry/heap_stats.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace dmls::server {
namespace {

#if defined(__GLIBC__) || defined(_WIN32)
// `count` blocks of `bytes` allocated (and written) show as in use, and
// stop once freed.
void ExpectInUseFollows(size_t count, size_t bytes) {
  const HeapStats before = ReadHeapStats();
  ASSERT_TRUE(before.known);
  std::vector<void*> blocks(count);
  for (void*& p : blocks) {
    p = std::malloc(bytes);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, bytes);
  }
  const HeapStats during = ReadHeapStats();
  for (void* p : blocks) std::free(p);
  const HeapStats after = ReadHeapStats();
  const uint64_t total = static_cast<uint64_t>(count) * bytes;
  EXPECT_GE(during.in_use_bytes, before.in_use_bytes + total);
  EXPECT_LT(after.in_use_bytes, during.in_use_bytes - total / 2);
}

// 64 MiB in one block (glibc: an mmapped chunk; Windows: a block of its
// own, outside the heap's segments).
TEST(HeapStatsTest, InUseFollowsALargeAllocation) { ExpectInUseFollows(1, 64u << 20); }

// 64 MiB in 4096 blocks of 16 KiB (arena / heap segment blocks).
TEST(HeapStatsTest, InUseFollowsSmallAllocations) { ExpectInUseFollows(4096, 16u << 10); }
#else
TEST(HeapStatsTest, UnknownWhereThereIsNoWayToReadIt) {
  EXPECT_FALSE(ReadHeapStats().known);
}
#endif

}  // namespace
}  // namespace dmls::server
