#include "server/lifecycle/allocator_tuning.h"

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#ifdef __GLIBC__
#include <sys/resource.h>
#endif

namespace dmls::server {
namespace {

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
long MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// 4 MiB in 1 KiB blocks, touched, then freed oldest first: they merge
// into one free block, and the last one freed joins it to the heap's top
// as a block of 64 KiB or more, which is when glibc considers trimming
// (as when the last buffers of a burst of small requests go).
void SmallBlocksRound() {
  std::vector<void*> blocks(4096);
  for (void*& b : blocks) {
    b = std::malloc(1024);
    std::memset(b, 1, 1024);
  }
  for (void* b : blocks) std::free(b);
}

// Minor faults of ten rounds after a first one, on this thread.
long FaultsOfTenRounds() {
  SmallBlocksRound();
  const long before = MinorFaults();
  for (int i = 0; i < 10; ++i) SmallBlocksRound();
  return MinorFaults() - before;
}

// With glibc's defaults the 4 MiB top is trimmed after every round and
// faulted in again by the next (10,070 minor faults in ten rounds, measured
// with the TuneAllocator call taken out); tuned, the pages stay. On the
// main thread's heap and on a new thread's (the arenas that gRPC's threads
// allocate from). glibc raises its own thresholds for good once a large
// mmapped block is freed, so this holds as a test only in a process of its
// own, which ctest gives each test (gtest_discover_tests).
TEST(AllocatorTuningTest, FreedSmallBlocksKeepTheirPages) {
  if (OperatorSetThresholds()) GTEST_SKIP() << "the environment sets malloc's thresholds";
  EXPECT_THAT(TuneAllocator(), ::testing::HasSubstr("trim threshold 16 MiB"));
  EXPECT_LT(FaultsOfTenRounds(), 200);
  long on_thread = -1;
  std::thread([&on_thread] { on_thread = FaultsOfTenRounds(); }).join();
  EXPECT_LT(on_thread, 200);
}

// The environment's thresholds win: TuneAllocator leaves them alone.
TEST(AllocatorTuningTest, TheEnvironmentsThresholdsWin) {
  if (OperatorSetThresholds()) GTEST_SKIP() << "the environment sets malloc's thresholds";
  ASSERT_EQ(setenv("MALLOC_TRIM_THRESHOLD_", "1000000", 1), 0);
  EXPECT_TRUE(OperatorSetThresholds());
  EXPECT_THAT(TuneAllocator(), ::testing::HasSubstr("as the environment sets them"));
  unsetenv("MALLOC_TRIM_THRESHOLD_");
  ASSERT_EQ(setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2", 1), 0);
  EXPECT_FALSE(OperatorSetThresholds());  // another malloc tunable
  ASSERT_EQ(setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=65536", 1), 0);
  EXPECT_TRUE(OperatorSetThresholds());
  unsetenv("GLIBC_TUNABLES");
}
#else
// Not glibc, or a sanitizer's allocator: nothing to tune or to observe.
TEST(AllocatorTuningTest, ReportsWhatItDid) {
#ifdef __GLIBC__
  EXPECT_THAT(TuneAllocator(), ::testing::HasSubstr("malloc"));
#else
  EXPECT_EQ(TuneAllocator(), "");
#endif
}
#endif

}  // namespace
}  // namespace dmls::server
