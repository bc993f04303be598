#include "server/telemetry/heap_stats.h"

#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

namespace dmls::server {
namespace {

// 64 MiB allocated (and written) shows as in use, and stops once freed.
TEST(HeapStatsTest, InUseFollowsAllocations) {
  const HeapStats before = ReadHeapStats();
#if !defined(__GLIBC__)
  EXPECT_FALSE(before.known);  // only glibc's are read
  return;
#endif
  ASSERT_TRUE(before.known);
  constexpr size_t kBytes = 64u << 20;
  void* p = std::malloc(kBytes);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, kBytes);
  const HeapStats during = ReadHeapStats();
  std::free(p);
  const HeapStats after = ReadHeapStats();
  EXPECT_GE(during.in_use_bytes, before.in_use_bytes + kBytes);
  EXPECT_LT(after.in_use_bytes, during.in_use_bytes - kBytes / 2);
}

}  // namespace
}  // namespace dmls::server
