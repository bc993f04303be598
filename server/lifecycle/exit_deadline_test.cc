#include "server/lifecycle/exit_deadline.h"

#include <atomic>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

TEST(ExitDeadlineTest, FiresOnceWhenTheShutdownOutlastsIt) {
  std::atomic<int> fired{0};
  const absl::Time start = absl::Now();
  {
    ExitDeadline deadline(absl::Milliseconds(50), [&] { ++fired; });
    absl::SleepFor(absl::Milliseconds(300));  // a shutdown that hangs
    EXPECT_EQ(fired.load(), 1);
  }
  EXPECT_EQ(fired.load(), 1);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
}

TEST(ExitDeadlineTest, DisarmedByAShutdownThatEndsInTime) {
  std::atomic<int> fired{0};
  const absl::Time start = absl::Now();
  {
    ExitDeadline deadline(absl::Seconds(30), [&] { ++fired; });
    absl::SleepFor(absl::Milliseconds(20));
  }
  // The destructor does not wait for the deadline.
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(fired.load(), 0);
}

}  // namespace
}  // namespace dmls::server
