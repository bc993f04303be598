#include "server/lifecycle/call_tracker.h"

#include <atomic>
#include <thread>
#include <utility>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

TEST(CallTrackerTest, CountsCallsUntilTheirTicketsEnd) {
  CallTracker tracker;
  CallTracker::Ticket a = tracker.Begin();
  CallTracker::Ticket b = tracker.Begin();
  EXPECT_TRUE(a);
  EXPECT_EQ(tracker.in_flight(), 2u);
  a.End();
  a.End();  // once only
  EXPECT_FALSE(a);
  EXPECT_EQ(tracker.in_flight(), 1u);
  {
    CallTracker::Ticket moved = std::move(b);
    EXPECT_FALSE(b);
    EXPECT_EQ(tracker.in_flight(), 1u);
  }
  EXPECT_EQ(tracker.in_flight(), 0u);
  EXPECT_GT(tracker.last_end(), absl::InfinitePast());
}

TEST(CallTrackerTest, RefusesCallsAfterClose) {
  CallTracker tracker;
  CallTracker::Ticket before = tracker.Begin();
  tracker.Close();
  tracker.Close();  // idempotent
  EXPECT_FALSE(tracker.Begin());
  EXPECT_EQ(tracker.refused(), 1u);
  EXPECT_TRUE(before);
  CallTracker stopped;
  stopped.StopAll();  // closes too
  EXPECT_FALSE(stopped.Begin());
  EXPECT_EQ(tracker.in_flight(), 1u);
}

TEST(CallTrackerTest, WaitIdleReturnsWhenTheLastCallEnds) {
  CallTracker tracker;
  CallTracker::Ticket ticket = tracker.Begin();
  tracker.Close();
  std::thread finisher([&] {
    absl::SleepFor(absl::Milliseconds(50));
    ticket.End();
  });
  const absl::Time start = absl::Now();
  EXPECT_TRUE(tracker.WaitIdle(start + absl::Seconds(30)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(40));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  finisher.join();
}

TEST(CallTrackerTest, WaitIdleGivesUpAtTheDeadline) {
  CallTracker tracker;
  CallTracker::Ticket ticket = tracker.Begin();
  const absl::Time start = absl::Now();
  EXPECT_FALSE(tracker.WaitIdle(start + absl::Milliseconds(50)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(45));
  EXPECT_TRUE(CallTracker().WaitIdle(absl::InfinitePast()));  // none: at once
}

TEST(CallTrackerTest, CloseWhenIdleClosesOnceTheCallsAreOver) {
  CallTracker tracker;
  CallTracker::Ticket ticket = tracker.Begin();
  std::thread finisher([&] {
    absl::SleepFor(absl::Milliseconds(50));
    ticket.End();
  });
  EXPECT_TRUE(tracker.CloseWhenIdle(absl::Now() + absl::Seconds(30)));
  EXPECT_FALSE(tracker.Begin());
  finisher.join();

  CallTracker busy;
  CallTracker::Ticket running = busy.Begin();
  EXPECT_FALSE(busy.CloseWhenIdle(absl::Now() + absl::Milliseconds(20)));
  EXPECT_FALSE(busy.Begin());  // closed all the same
  EXPECT_EQ(busy.in_flight(), 1u);
}

// Stands in for a stream reactor: Stop ends the call the way OnDone does,
// inline, which is what a Finish that completes at once leads to.
class FakeStream : public CallTracker::Stoppable {
 public:
  explicit FakeStream(CallTracker& tracker) : ticket_(tracker.Begin(this)) {}
  void Retain() override { ++retained_; }
  void Stop() override {
    ++stopped_;
    ticket_.End();
  }
  int retained() const { return retained_; }
  int stopped() const { return stopped_; }

 private:
  CallTracker::Ticket ticket_;
  std::atomic<int> retained_{0};
  std::atomic<int> stopped_{0};
};

TEST(CallTrackerTest, StopAllStopsTheStoppableCallsInFlightOnce) {
  CallTracker tracker;
  FakeStream open(tracker);
  FakeStream ended(tracker);
  ended.Stop();  // over before StopAll: not asked again
  CallTracker::Ticket plain = tracker.Begin();
  EXPECT_EQ(tracker.in_flight(), 2u);
  tracker.Close();  // refuses, stops nothing
  EXPECT_EQ(open.stopped(), 0);
  EXPECT_FALSE(tracker.Begin());
  tracker.StopAll();
  tracker.StopAll();
  EXPECT_EQ(open.retained(), 1);
  EXPECT_EQ(open.stopped(), 1);
  EXPECT_EQ(ended.retained(), 0);
  EXPECT_EQ(ended.stopped(), 1);
  EXPECT_EQ(tracker.in_flight(), 1u);  // the plain call is waited for
  plain.End();
  EXPECT_TRUE(tracker.WaitIdle(absl::Now()));
}

}  // namespace
}  // namespace dmls::server
