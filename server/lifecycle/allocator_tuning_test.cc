#include "server/lifecycle/allocator_tuning.h"

#include <cstdlib>
#include <cstring>
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

// With glibc's defaults the 4 MiB top is trimmed after every round and
// faulted in again by the next (about a thousand minor faults a round);
// tuned, the pages stay.
TEST(AllocatorTuningTest, FreedSmallBlocksKeepTheirPages) {
  ASSERT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr) << "the test needs glibc's defaults";
  EXPECT_THAT(TuneAllocator(), ::testing::HasSubstr("trim threshold 16 MiB"));
  SmallBlocksRound();
  const long before = MinorFaults();
  for (int i = 0; i < 10; ++i) SmallBlocksRound();
  EXPECT_LT(MinorFaults() - before, 200);
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
