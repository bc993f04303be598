#include "engine/sched/batcher.h"

#include <atomic>
#include <memory>
#include <vector>

#include "engine/ops/rule_status.h"
#include "gtest/gtest.h"

namespace dmls::sched {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

Job MakeJob(std::string key, uint64_t seq, absl::Time enqueued,
            uint64_t bytes = 1024,
            absl::Time deadline = absl::InfiniteFuture()) {
  Job j;
  j.key = std::move(key);
  j.seq = seq;
  j.enqueued = enqueued;
  j.bytes = bytes;
  j.request.deadline = deadline;
  return j;
}

// A chain job (its deadline on the chain).
Job MakeChainJob(uint64_t seq, absl::Time deadline) {
  Job j = MakeJob("ignored", seq, kT0, 64);
  j.chain = std::make_unique<dmls::sched::ChainJob>();
  j.chain->request.deadline = deadline;
  return j;
}

// The scheduler's steps (an entry made, then linked; entries taken, then
// unpacked) in one call each, for the tests of the policy. On failure the
// job is left with the caller.
absl::Status Enqueue(Batcher& b, Job& job) {
  Batcher::Entry entry = Batcher::MakeEntry(std::move(job));
  absl::Status s = b.Enqueue(entry);
  if (!s.ok()) job = std::move(entry.mapped());
  return s;
}

Batch TakeBatch(Batcher& b, absl::Time now, std::vector<Job>* dropped) {
  return Batcher::Unpack(b.TakeEntries(now, dropped));
}

BatchPolicy Policy(uint32_t requests, uint64_t bytes, absl::Duration delay,
                   uint32_t depth = 1000) {
  BatchPolicy p;
  p.max_batch_requests = requests;
  p.max_batch_bytes = bytes;
  p.max_queue_delay = delay;
  p.max_queue_depth = depth;
  return p;
}

TEST(BatcherTest, ZeroDelayIsDueAtOnce) {
  Batcher b(Policy(64, 1 << 20, absl::ZeroDuration()));
  EXPECT_FALSE(b.Due(kT0));
  Job j = MakeJob("a", 1, kT0);
  ASSERT_TRUE(Enqueue(b, j).ok());
  EXPECT_TRUE(b.Due(kT0));
}

TEST(BatcherTest, WaitsForTheDelayUnlessTheBatchIsFull) {
  Batcher b(Policy(3, 1 << 20, absl::Microseconds(500)));
  for (uint64_t i = 1; i <= 2; ++i) {
    Job j = MakeJob("a", i, kT0 + absl::Microseconds(100 * i));
    ASSERT_TRUE(Enqueue(b, j).ok());
  }
  EXPECT_FALSE(b.Due(kT0 + absl::Microseconds(599)));
  EXPECT_EQ(b.NextDue(), kT0 + absl::Microseconds(600));
  EXPECT_TRUE(b.Due(kT0 + absl::Microseconds(600)));
  // A third request fills the batch: due before the delay.
  Job j = MakeJob("a", 3, kT0 + absl::Microseconds(300));
  ASSERT_TRUE(Enqueue(b, j).ok());
  EXPECT_TRUE(b.Due(kT0 + absl::Microseconds(300)));
}

TEST(BatcherTest, BytesMakeABatchDueAndBoundIt) {
  Batcher b(Policy(100, 4096, absl::Seconds(1)));
  for (uint64_t i = 1; i <= 3; ++i) {
    Job j = MakeJob("a", i, kT0, 1500);
    ASSERT_TRUE(Enqueue(b, j).ok());
  }
  EXPECT_TRUE(b.Due(kT0));  // 4500 >= 4096
  std::vector<Job> dropped;
  Batch batch = TakeBatch(b, kT0, &dropped);
  EXPECT_EQ(batch.size(), 2u);  // a third would pass 4096 bytes
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(b.bytes(), 1500u);
}

TEST(BatcherTest, OversizedRequestRunsAlone) {
  Batcher b(Policy(100, 4096, absl::ZeroDuration()));
  Job big = MakeJob("a", 1, kT0, 1 << 20);
  Job small = MakeJob("a", 2, kT0, 10);
  ASSERT_TRUE(Enqueue(b, big).ok());
  ASSERT_TRUE(Enqueue(b, small).ok());
  std::vector<Job> dropped;
  Batch first = TakeBatch(b, kT0, &dropped);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first.groups[0][0].seq, 1u);
  EXPECT_EQ(TakeBatch(b, kT0, &dropped).size(), 1u);
}

TEST(BatcherTest, MaxRequestsOneTurnsBatchingOff) {
  Batcher b(Policy(1, 1 << 20, absl::ZeroDuration()));
  for (uint64_t i = 1; i <= 5; ++i) {
    Job j = MakeJob("a", i, kT0);
    ASSERT_TRUE(Enqueue(b, j).ok());
  }
  std::vector<Job> dropped;
  for (uint64_t i = 1; i <= 5; ++i) {
    Batch batch = TakeBatch(b, kT0, &dropped);
    ASSERT_EQ(batch.size(), 1u);
    EXPECT_EQ(batch.groups[0][0].seq, i);
  }
}

TEST(BatcherTest, QueueDepthRejectsAndLeavesTheJob) {
  Batcher b(Policy(64, 1 << 20, absl::ZeroDuration(), /*depth=*/2));
  for (uint64_t i = 1; i <= 2; ++i) {
    Job j = MakeJob("a", i, kT0);
    ASSERT_TRUE(Enqueue(b, j).ok());
  }
  Job third = MakeJob("a", 3, kT0);
  absl::Status s = Enqueue(b, third);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  ASSERT_EQ(ops::ViolationsOf(s).size(), 1u);
  EXPECT_EQ(ops::ViolationsOf(s)[0].rule, "QUEUE_FULL");
  EXPECT_EQ(third.seq, 3u);
  EXPECT_EQ(third.key, "a");
  EXPECT_EQ(b.size(), 2u);
}

// The scheduler's path: entries made before its lock, unlinked under it
// and unpacked after it, with a full queue leaving the entry's job intact.
TEST(BatcherTest, EntriesAreLinkedAndUnpackedApartFromTheQueue) {
  Batcher b(Policy(64, 1 << 20, absl::ZeroDuration(), /*depth=*/2));
  Batcher::Entry e1 = Batcher::MakeEntry(MakeJob("a", 1, kT0, 1024, kT0 + absl::Seconds(9)));
  Batcher::Entry e2 = Batcher::MakeEntry(MakeJob("a", 2, kT0, 1024, kT0 + absl::Seconds(5)));
  Batcher::Entry e3 = Batcher::MakeEntry(MakeJob("b", 3, kT0));
  ASSERT_TRUE(b.Enqueue(e1).ok());
  ASSERT_TRUE(b.Enqueue(e2).ok());
  EXPECT_TRUE(e1.empty());
  EXPECT_EQ(b.Enqueue(e3).code(), absl::StatusCode::kResourceExhausted);
  ASSERT_FALSE(e3.empty());
  EXPECT_EQ(e3.mapped().seq, 3u);
  EXPECT_EQ(e3.mapped().key, "b");

  std::vector<Job> dropped;
  Batcher::Taken taken = b.TakeEntries(kT0, &dropped);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.bytes(), 0u);
  ASSERT_EQ(taken.size(), 2u);
  Batch batch = Batcher::Unpack(std::move(taken));
  ASSERT_EQ(batch.groups.size(), 1u);
  ASSERT_EQ(batch.groups[0].size(), 2u);
  EXPECT_EQ(batch.groups[0][0].seq, 2u);  // the earlier deadline first
  EXPECT_EQ(batch.groups[0][1].seq, 1u);
  EXPECT_EQ(batch.groups[0][0].key, "a");
  EXPECT_TRUE(dropped.empty());
}

TEST(BatcherTest, GroupsByKeyEarliestDeadlineFirst) {
  Batcher b(Policy(64, 1 << 20, absl::ZeroDuration()));
  const absl::Time late = kT0 + absl::Seconds(10);
  const absl::Time soon = kT0 + absl::Seconds(1);
  Job a1 = MakeJob("a", 1, kT0, 10, late);
  Job b1 = MakeJob("b", 2, kT0, 10, soon);
  Job a2 = MakeJob("a", 3, kT0, 10, soon + absl::Seconds(1));
  Job b2 = MakeJob("b", 4, kT0, 10);  // no deadline: last within "b"
  for (Job* j : {&a1, &b1, &a2, &b2}) ASSERT_TRUE(Enqueue(b, *j).ok());
  EXPECT_EQ(b.keys(), 2u);
  EXPECT_EQ(b.NextDue(), kT0);  // zero delay: due now
  EXPECT_EQ(b.NextDeadline(), soon);
  std::vector<Job> dropped;
  Batch batch = TakeBatch(b, kT0, &dropped);
  ASSERT_EQ(batch.groups.size(), 2u);
  // "b" first: its head has the earliest deadline.
  ASSERT_EQ(batch.groups[0].size(), 2u);
  EXPECT_EQ(batch.groups[0][0].seq, 2u);
  EXPECT_EQ(batch.groups[0][1].seq, 4u);
  ASSERT_EQ(batch.groups[1].size(), 2u);
  EXPECT_EQ(batch.groups[1][0].seq, 3u);  // earlier deadline than seq 1
  EXPECT_EQ(batch.groups[1][1].seq, 1u);
  EXPECT_TRUE(dropped.empty());
  EXPECT_EQ(b.size(), 0u);
}

TEST(BatcherTest, ExpiredJobsAreDroppedNotBatched) {
  Batcher b(Policy(64, 1 << 20, absl::Milliseconds(10)));
  Job late = MakeJob("a", 1, kT0, 10, kT0 + absl::Milliseconds(2));
  Job ok = MakeJob("a", 2, kT0, 10, kT0 + absl::Seconds(5));
  ASSERT_TRUE(Enqueue(b, late).ok());
  ASSERT_TRUE(Enqueue(b, ok).ok());
  EXPECT_EQ(b.NextDue(), kT0 + absl::Milliseconds(10));
  EXPECT_EQ(b.NextDeadline(), kT0 + absl::Milliseconds(2));
  std::vector<Job> expired = b.TakeExpired(kT0 + absl::Milliseconds(3), false);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].seq, 1u);
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(b.bytes(), 10u);
}

TEST(BatcherTest, CancelledJobsAreFoundByAScanAndSkippedInBatches) {
  Batcher b(Policy(64, 1 << 20, absl::ZeroDuration()));
  auto flag1 = std::make_shared<std::atomic<bool>>(false);
  auto flag2 = std::make_shared<std::atomic<bool>>(false);
  Job j1 = MakeJob("a", 1, kT0);
  j1.request.cancelled = flag1;
  Job j2 = MakeJob("a", 2, kT0);
  j2.request.cancelled = flag2;
  Job j3 = MakeJob("a", 3, kT0);
  for (Job* j : {&j1, &j2, &j3}) ASSERT_TRUE(Enqueue(b, *j).ok());
  flag1->store(true);
  EXPECT_TRUE(b.TakeExpired(kT0, /*scan_cancelled=*/false).empty());
  std::vector<Job> cancelled = b.TakeExpired(kT0, /*scan_cancelled=*/true);
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0].seq, 1u);
  flag2->store(true);
  std::vector<Job> dropped;
  Batch batch = TakeBatch(b, kT0, &dropped);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].seq, 2u);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch.groups[0][0].seq, 3u);
}

TEST(BatcherTest, ChainsKeepSubmissionOrderAndExpireAtTheirOwnDeadlines) {
  Batcher b(Policy(64, 1 << 20, absl::ZeroDuration()));
  // Deadlines out of submission order: earliest-deadline-first would run
  // 2, 4, 3, 1; the chain lane keeps 1, 2, 3, 4.
  const absl::Time deadlines[] = {kT0 + absl::Seconds(40), kT0 + absl::Seconds(10),
                                  kT0 + absl::Seconds(30), kT0 + absl::Seconds(20)};
  for (uint64_t i = 0; i < 4; ++i) {
    Job j = MakeChainJob(i + 1, deadlines[i]);
    ASSERT_TRUE(Enqueue(b, j).ok());
  }
  Job plain = MakeJob("a", 5, kT0, 64, kT0 + absl::Seconds(25));
  ASSERT_TRUE(Enqueue(b, plain).ok());
  EXPECT_EQ(b.keys(), 2u);  // "ignored" is not a key for chains
  EXPECT_EQ(b.NextDeadline(), kT0 + absl::Seconds(10));
  // The second chain expires although the first, ahead of it, does not.
  std::vector<Job> expired = b.TakeExpired(kT0 + absl::Seconds(15), false);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].seq, 2u);
  EXPECT_EQ(b.NextDeadline(), kT0 + absl::Seconds(20));
  std::vector<Job> dropped;
  Batch batch = TakeBatch(b, kT0 + absl::Seconds(15), &dropped);
  EXPECT_TRUE(dropped.empty());
  ASSERT_EQ(batch.groups.size(), 2u);
  // The chain lane's head (deadline 40 s) goes after the plain group (25 s).
  ASSERT_EQ(batch.groups[0].size(), 1u);
  EXPECT_EQ(batch.groups[0][0].seq, 5u);
  ASSERT_EQ(batch.groups[1].size(), 3u);
  EXPECT_EQ(batch.groups[1][0].seq, 1u);
  EXPECT_EQ(batch.groups[1][1].seq, 3u);
  EXPECT_EQ(batch.groups[1][2].seq, 4u);
  EXPECT_TRUE(batch.groups[1][0].is_chain());
  EXPECT_EQ(b.size(), 0u);
}

}  // namespace
}  // namespace dmls::sched
