// PoolRunner with a counting RunFn: what it runs, what it answers without
// running, inline work, and what a stopped pool answers. (CpuEngine's tests
// cover it under the scheduler.)
#include "engine/sched/pool_runner.h"

#include <atomic>
#include <memory>
#include <optional>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace dmls::sched {
namespace {

struct Answer {
  absl::Notification done;
  std::optional<absl::StatusOr<ExecuteResult>> result;
};

Job MakeJob(Answer* answer, absl::Time deadline = absl::InfiniteFuture()) {
  Job job;
  job.request.deadline = deadline;
  job.done = JobCallback([answer](absl::StatusOr<ExecuteResult> r) {
    answer->result = std::move(r);
    answer->done.Notify();
  });
  return job;
}

Batch BatchOf(Job job) {
  Batch batch;
  batch.groups.emplace_back();
  batch.groups.back().push_back(std::move(job));
  return batch;
}

class PoolRunnerTest : public ::testing::Test {
 protected:
  PoolRunner::RunFn Counting() {
    return [this](ExecuteRequest&) -> absl::StatusOr<ExecuteResult> {
      ++runs_;
      ExecuteResult r;
      r.output = "out";
      return r;
    };
  }
  std::atomic<int> runs_{0};
};

TEST_F(PoolRunnerTest, RunsAJobAndSaysItRanAlone) {
  PoolRunner runner({1, 0, "stopped"}, Counting());
  Answer a;
  runner.Run(BatchOf(MakeJob(&a)));
  a.done.WaitForNotification();
  runner.Drain();
  ASSERT_TRUE(a.result->ok()) << a.result->status();
  EXPECT_EQ((*a.result)->output, "out");
  EXPECT_EQ((*a.result)->timing.execution_requests, 1u);
  EXPECT_EQ(runs_.load(), 1);
}

TEST_F(PoolRunnerTest, CancelledAndExpiredJobsAreAnsweredWithoutRunning) {
  PoolRunner runner({1, 0, "stopped"}, Counting());
  Answer expired, cancelled;
  runner.Run(BatchOf(MakeJob(&expired, absl::Now() - absl::Seconds(1))));
  Job job = MakeJob(&cancelled);
  job.request.cancelled = std::make_shared<std::atomic<bool>>(true);
  runner.Run(BatchOf(std::move(job)));
  expired.done.WaitForNotification();
  cancelled.done.WaitForNotification();
  runner.Drain();
  EXPECT_EQ(expired.result->status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(cancelled.result->status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(runs_.load(), 0);
}

TEST_F(PoolRunnerTest, OnlySmallJobsRunInlineAndTheyCountAgainstTheLimit) {
  PoolRunner runner({1, 1024, "stopped"}, Counting());
  Answer a;
  Job small = MakeJob(&a);
  small.bytes = 1024;
  Job large = MakeJob(&a);
  large.bytes = 1025;
  EXPECT_FALSE(runner.AcceptInline(large));
  ASSERT_TRUE(runner.AcceptInline(small));
  runner.RunInline(std::move(small));
  EXPECT_TRUE(a.done.HasBeenNotified());  // answered before RunInline returned
  EXPECT_EQ(runs_.load(), 1);
  EXPECT_TRUE(runner.CanAccept());
}

TEST_F(PoolRunnerTest, AStoppedPoolAnswersUnavailableWithItsMessage) {
  PoolRunner runner({1, 0, "DirectML engine is shut down"}, Counting());
  runner.Shutdown();
  Answer a;
  runner.Run(BatchOf(MakeJob(&a)));
  a.done.WaitForNotification();
  EXPECT_EQ(a.result->status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(a.result->status().message(), "DirectML engine is shut down");
  EXPECT_EQ(runs_.load(), 0);
  runner.Drain();
}

}  // namespace
}  // namespace dmls::sched
