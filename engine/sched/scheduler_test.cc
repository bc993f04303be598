#include "engine/core/mutex.h"
#include "engine/sched/scheduler.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "engine/core/engine_test_util.h"
#include "engine/ops/rule_status.h"
#include "gtest/gtest.h"

namespace dmls::sched {
namespace {

// A valid RELU over `n` FLOAT32 elements.
ExecuteRequest Relu(uint64_t n) {
  return core::testing::Float32Request(OperatorType::kActivationRelu, n);
}

class CountingState : public JobState {
 public:
  explicit CountingState(std::atomic<int>* live) : live_(live) { ++*live_; }
  ~CountingState() override { --*live_; }

 private:
  std::atomic<int>* live_;
};

// Records batches; completes them when told to (or at once when `inline`).
class FakeRunner : public Runner {
 public:
  absl::StatusOr<Prepared> Prepare(ExecuteRequest& r) override {
    if (fail_prepare) return absl::ResourceExhaustedError("no staging memory");
    if (clock != nullptr) clock->Advance(prepare_takes);
    Prepared p;
    p.key = absl::StrCat("op", r.op.type);
    p.bytes = r.input.size();
    p.state = std::make_unique<CountingState>(&live_states);
    return p;
  }
  absl::StatusOr<Prepared> PrepareChain(ChainRequest& c) override {
    Prepared p;
    p.bytes = c.steps.size();
    p.state = std::make_unique<CountingState>(&live_states);
    return p;
  }
  bool CanAccept() override { return capacity.load() > 0; }
  void Run(Batch batch) override {
    --capacity;
    MutexLock lock(&mu);
    sizes.push_back(batch.size());
    groups.push_back(batch.groups.size());
    for (const auto& g : batch.groups) {
      for (const Job& j : g) {
        if (j.is_chain()) chain_seqs.push_back(j.seq);
      }
    }
    if (complete_inline) {
      Complete(batch);
    } else {
      held.push_back(std::move(batch));
    }
  }
  void SetCapacityListener(std::function<void()> l) override { listener = l; }
  void Drain() override { ReleaseAll(); }

  void ReleaseAll() {
    std::vector<Batch> batches;
    {
      MutexLock lock(&mu);
      batches.swap(held);
    }
    for (Batch& b : batches) Complete(b);
  }
  void Complete(Batch& b) {
    if (clock != nullptr) clock->Advance(run_takes);
    for (auto& g : b.groups) {
      for (Job& j : g) {
        j.state.reset();
        if (j.is_chain()) {
          j.chain->done(ChainResult{});
        } else {
          j.done(ExecuteResult{});
        }
      }
    }
    ++capacity;
    if (listener) listener();
  }

  std::atomic<int> capacity{1};
  std::atomic<int> live_states{0};
  bool complete_inline = false;
  bool fail_prepare = false;
  // With a clock: Prepare and Complete take this long on it.
  std::shared_ptr<FakeClock> clock;
  absl::Duration prepare_takes;
  absl::Duration run_takes;
  std::function<void()> listener;
  Mutex mu;
  std::vector<size_t> sizes ABSL_GUARDED_BY(mu);
  std::vector<size_t> groups ABSL_GUARDED_BY(mu);
  std::vector<Batch> held ABSL_GUARDED_BY(mu);
  std::vector<uint64_t> chain_seqs ABSL_GUARDED_BY(mu);  // in the order run
};

// A one-step chain: RELU over `n` inline FLOAT32 elements, returned.
ChainRequest ReluChain(uint64_t n) {
  ExecuteRequest r = Relu(n);
  ChainRequest c;
  ChainStep& step = c.steps.emplace_back();
  step.op = r.op;
  step.input = ChainSource::Inline(r.input.TakeString());
  step.return_output = true;
  return c;
}

struct Outcomes {
  Mutex mu;
  std::vector<absl::Status> statuses ABSL_GUARDED_BY(mu);
  std::vector<ExecuteTiming> timings ABSL_GUARDED_BY(mu);  // of the successes
  std::atomic<int> count{0};
  ExecuteCallback Callback() {
    return [this](absl::StatusOr<ExecuteResult> r) {
      MutexLock lock(&mu);
      statuses.push_back(r.status());
      if (r.ok()) timings.push_back(r->timing);
      ++count;
    };
  }
};

// Chain callbacks into the same outcomes.
ChainCallback ChainOutcome(Outcomes& out) {
  return [&out](absl::StatusOr<ChainResult> r) {
    MutexLock lock(&out.mu);
    out.statuses.push_back(r.status());
    ++out.count;
  };
}

void WaitFor(const std::atomic<int>& n, int want) {
  for (int i = 0; i < 5000 && n.load() < want; ++i) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_EQ(n.load(), want);
}

TEST(SchedulerTest, RequestsQueuedWhileBusyFormOneBatch) {
  FakeRunner runner;
  Scheduler s(&runner, SchedulerOptions{});
  Outcomes out;
  s.Submit(Relu(8), out.Callback());  // taken at once by the idle runner
  for (int i = 0; i < 1000; ++i) {
    {
      MutexLock lock(&runner.mu);
      if (runner.sizes.size() == 1) break;
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  for (int i = 0; i < 50; ++i) {
    ExecuteRequest r = Relu(8);
    if (i % 2) r.op.type = static_cast<uint32_t>(OperatorType::kActivationSigmoid);
    s.Submit(std::move(r), out.Callback());
  }
  runner.ReleaseAll();  // frees capacity: the 50 queued go as one batch
  WaitFor(out.count, 1);
  for (int i = 0; i < 1000; ++i) {
    {
      MutexLock lock(&runner.mu);
      if (runner.sizes.size() == 2) break;
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  runner.ReleaseAll();
  WaitFor(out.count, 51);
  MutexLock lock(&runner.mu);
  ASSERT_EQ(runner.sizes.size(), 2u);
  EXPECT_EQ(runner.sizes[1], 50u);
  EXPECT_EQ(runner.groups[1], 2u);  // RELU and SIGMOID keys
  EXPECT_EQ(s.stats().largest_batch, 50u);
  EXPECT_EQ(runner.live_states.load(), 0);
}

TEST(SchedulerTest, AdmissionErrorsCarryRules) {
  FakeRunner runner;
  runner.complete_inline = true;
  Scheduler s(&runner, SchedulerOptions{});
  ExecuteRequest bad = Relu(8);
  bad.input.mutable_string().resize(3);
  absl::Status got;
  s.Submit(std::move(bad), [&](absl::StatusOr<ExecuteResult> r) { got = r.status(); });
  EXPECT_EQ(got.code(), absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(ops::ViolationsOf(got).size(), 1u);
  EXPECT_EQ(ops::ViolationsOf(got)[0].rule, "PAYLOAD_SIZE_MISMATCH");
  EXPECT_EQ(ops::ViolationsOf(got)[0].field, "input");

  ExecuteRequest invalid = Relu(8);
  invalid.op.output->data_type = static_cast<uint32_t>(DataType::kFloat16);
  s.Submit(std::move(invalid), [&](absl::StatusOr<ExecuteResult> r) { got = r.status(); });
  EXPECT_EQ(got.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ops::ViolationsOf(got).empty());
  EXPECT_EQ(s.stats().rejected, 2u);
}

TEST(SchedulerTest, DeadlineAndCancellationBeforeAdmission) {
  FakeRunner runner;
  runner.complete_inline = true;
  Scheduler s(&runner, SchedulerOptions{});
  absl::Status got;
  ExecuteRequest late = Relu(8);
  late.deadline = absl::Now() - absl::Seconds(1);
  s.Submit(std::move(late), [&](absl::StatusOr<ExecuteResult> r) { got = r.status(); });
  EXPECT_EQ(got.code(), absl::StatusCode::kDeadlineExceeded);
  ExecuteRequest gone = Relu(8);
  gone.cancelled = std::make_shared<std::atomic<bool>>(true);
  s.Submit(std::move(gone), [&](absl::StatusOr<ExecuteResult> r) { got = r.status(); });
  EXPECT_EQ(got.code(), absl::StatusCode::kCancelled);
}

TEST(SchedulerTest, DelayHoldsRequestsOnAFakeClock) {
  auto clock = std::make_shared<FakeClock>();
  FakeRunner runner;
  runner.complete_inline = true;
  SchedulerOptions o;
  o.clock = clock;
  o.policy.max_queue_delay = absl::Microseconds(200);
  o.policy.max_batch_requests = 4;
  Scheduler s(&runner, o);
  Outcomes out;
  for (int i = 0; i < 3; ++i) s.Submit(Relu(8), out.Callback());
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(out.count.load(), 0);  // waiting for company
  clock->Advance(absl::Microseconds(199));
  s.Poke();
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(out.count.load(), 0);
  clock->Advance(absl::Microseconds(1));
  s.Poke();
  WaitFor(out.count, 3);
  // A fourth and fifth... the fourth fills a batch of 4 at once.
  for (int i = 0; i < 4; ++i) s.Submit(Relu(8), out.Callback());
  WaitFor(out.count, 7);
  MutexLock lock(&runner.mu);
  EXPECT_EQ(runner.sizes, (std::vector<size_t>{3, 4}));
}

// Each result says how long its request took in Prepare, in the queue and
// in the runner, on the scheduler's clock.
TEST(SchedulerTest, ResultsCarryTheirTiming) {
  auto clock = std::make_shared<FakeClock>();
  FakeRunner runner;
  runner.capacity = 0;  // busy: the requests wait in the queue
  runner.clock = clock;
  runner.prepare_takes = absl::Milliseconds(2);
  runner.run_takes = absl::Milliseconds(3);
  SchedulerOptions o;
  o.clock = clock;
  Scheduler s(&runner, o);
  Outcomes out;
  s.Submit(Relu(8), out.Callback());
  s.Submit(Relu(8), out.Callback());  // enters the queue 2 ms after the first
  clock->Advance(absl::Milliseconds(5));
  runner.capacity = 1;
  s.Poke();
  for (int i = 0; i < 5000; ++i) {
    {
      MutexLock lock(&runner.mu);
      if (runner.held.size() == 1) break;
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  runner.ReleaseAll();
  WaitFor(out.count, 2);
  MutexLock lock(&out.mu);
  ASSERT_EQ(out.timings.size(), 2u);
  EXPECT_EQ(out.timings[0].input, absl::Milliseconds(2));
  EXPECT_EQ(out.timings[1].input, absl::Milliseconds(2));
  EXPECT_EQ(out.timings[0].queued, absl::Milliseconds(7));
  EXPECT_EQ(out.timings[1].queued, absl::Milliseconds(5));
  EXPECT_EQ(out.timings[0].run, absl::Milliseconds(3));
  EXPECT_EQ(out.timings[1].run, absl::Milliseconds(3));
}

TEST(SchedulerTest, DeadlineExpiresInTheQueue) {
  auto clock = std::make_shared<FakeClock>();
  FakeRunner runner;
  runner.capacity = 0;  // busy: nothing leaves the queue
  SchedulerOptions o;
  o.clock = clock;
  Scheduler s(&runner, o);
  Outcomes out;
  ExecuteRequest r = Relu(8);
  r.deadline = clock->Now() + absl::Milliseconds(5);
  s.Submit(std::move(r), out.Callback());
  s.Submit(Relu(8), out.Callback());
  clock->Advance(absl::Milliseconds(5));
  s.Poke();
  WaitFor(out.count, 1);
  {
    MutexLock lock(&out.mu);
    EXPECT_EQ(out.statuses[0].code(), absl::StatusCode::kDeadlineExceeded);
  }
  EXPECT_EQ(s.stats().queued, 1u);
  EXPECT_EQ(s.stats().expired, 1u);
  EXPECT_EQ(runner.live_states.load(), 1);  // the dropped job's state is gone
  runner.capacity = 1;
  s.Poke();
  WaitFor(out.count, 1);
  s.Shutdown();
  EXPECT_EQ(out.count.load(), 2);
}

TEST(SchedulerTest, CancelledInTheQueue) {
  FakeRunner runner;
  runner.capacity = 0;
  SchedulerOptions o;
  o.cancel_scan_interval = absl::Milliseconds(1);
  Scheduler s(&runner, o);
  Outcomes out;
  auto flag = std::make_shared<std::atomic<bool>>(false);
  ExecuteRequest r = Relu(8);
  r.cancelled = flag;
  s.Submit(std::move(r), out.Callback());
  flag->store(true);
  WaitFor(out.count, 1);
  MutexLock lock(&out.mu);
  EXPECT_EQ(out.statuses[0].code(), absl::StatusCode::kCancelled);
}

TEST(SchedulerTest, QueueDepthAndInFlightLimits) {
  FakeRunner runner;
  runner.capacity = 0;
  SchedulerOptions o;
  o.policy.max_queue_depth = 2;
  Scheduler s(&runner, o);
  Outcomes out;
  for (int i = 0; i < 3; ++i) s.Submit(Relu(8), out.Callback());
  WaitFor(out.count, 1);
  {
    MutexLock lock(&out.mu);
    EXPECT_EQ(ops::ViolationsOf(out.statuses[0])[0].rule, "QUEUE_FULL");
  }
  EXPECT_EQ(runner.live_states.load(), 2);  // the rejected one released its state
  runner.capacity = 1;
  s.Shutdown();  // drains the two queued through the runner
  EXPECT_EQ(out.count.load(), 3);

  FakeRunner runner2;
  runner2.capacity = 0;
  SchedulerOptions o2;
  o2.admission->max_in_flight = 1;
  Scheduler s2(&runner2, o2);
  Outcomes out2;
  s2.Submit(Relu(8), out2.Callback());
  s2.Submit(Relu(8), out2.Callback());
  WaitFor(out2.count, 1);
  {
    MutexLock lock(&out2.mu);
    EXPECT_EQ(ops::ViolationsOf(out2.statuses[0])[0].rule, "IN_FLIGHT_LIMIT");
  }
  runner2.capacity = 1;
  s2.Poke();
  for (int i = 0; i < 1000; ++i) {
    {
      MutexLock lock(&runner2.mu);
      if (runner2.held.size() == 1) break;
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  runner2.ReleaseAll();
  WaitFor(out2.count, 2);
  EXPECT_EQ(s2.stats().in_flight, 0u);
}

TEST(SchedulerTest, PrepareFailureAndShutdownRejections) {
  FakeRunner runner;
  runner.complete_inline = true;
  runner.fail_prepare = true;
  Scheduler s(&runner, SchedulerOptions{});
  absl::Status got;
  s.Submit(Relu(8), [&](absl::StatusOr<ExecuteResult> r) { got = r.status(); });
  EXPECT_EQ(got.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.stats().in_flight, 0u);
  runner.fail_prepare = false;
  s.Shutdown();
  s.Submit(Relu(8), [&](absl::StatusOr<ExecuteResult> r) { got = r.status(); });
  EXPECT_EQ(got.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(runner.live_states.load(), 0);
}

// Issue 21's test: a resident chain is admitted, counted in flight,
// queued behind a busy runner and expired at its deadline by the
// scheduler, like a plain request.
TEST(SchedulerTest, ChainQueuedBehindTheInFlightLimitExpiresAtItsDeadline) {
  auto clock = std::make_shared<FakeClock>();
  FakeRunner runner;
  runner.capacity = 0;  // every frame in flight: nothing leaves the queue
  SchedulerOptions o;
  o.clock = clock;
  o.admission->max_in_flight = 2;
  Scheduler s(&runner, o);
  Outcomes plain, chains;
  s.Submit(Relu(8), plain.Callback());
  ChainRequest chain = ReluChain(8);
  chain.deadline = clock->Now() + absl::Milliseconds(5);
  s.SubmitChain(std::move(chain), ChainOutcome(chains));
  EXPECT_EQ(s.stats().queued, 2u);
  EXPECT_EQ(s.stats().in_flight, 2u);
  // A third unit of work, chain or not, is over the in-flight limit.
  s.SubmitChain(ReluChain(8), ChainOutcome(chains));
  WaitFor(chains.count, 1);
  {
    MutexLock lock(&chains.mu);
    EXPECT_EQ(ops::ViolationsOf(chains.statuses[0])[0].rule, "IN_FLIGHT_LIMIT");
  }
  clock->Advance(absl::Milliseconds(5));
  s.Poke();
  WaitFor(chains.count, 2);
  {
    MutexLock lock(&chains.mu);
    EXPECT_EQ(chains.statuses[1].code(), absl::StatusCode::kDeadlineExceeded);
  }
  EXPECT_EQ(s.stats().expired, 1u);
  EXPECT_EQ(s.stats().queued, 1u);
  EXPECT_EQ(runner.live_states.load(), 1);  // the chain's state went with it
  // Its slot went back: another chain gets in, and runs once the runner
  // has room.
  s.SubmitChain(ReluChain(8), ChainOutcome(chains));
  EXPECT_EQ(s.stats().in_flight, 2u);
  EXPECT_EQ(plain.count.load(), 0);
  runner.capacity = 1;
  s.Shutdown();
  EXPECT_EQ(plain.count.load(), 1);
  EXPECT_EQ(chains.count.load(), 3);
  MutexLock lock(&chains.mu);
  EXPECT_TRUE(chains.statuses[2].ok()) << chains.statuses[2];
  EXPECT_EQ(s.stats().in_flight, 0u);
}

TEST(SchedulerTest, ChainsReachTheRunnerInSubmissionOrder) {
  FakeRunner runner;
  runner.capacity = 0;
  Scheduler s(&runner, SchedulerOptions{});
  Outcomes out;
  // Later deadlines first: earliest-deadline-first would reverse them.
  const absl::Time now = absl::Now();
  for (int i = 0; i < 4; ++i) {
    ChainRequest c = ReluChain(8);
    c.deadline = now + absl::Hours(4 - i);
    s.SubmitChain(std::move(c), ChainOutcome(out));
  }
  runner.capacity = 1;
  s.Poke();
  for (int i = 0; i < 5000; ++i) {
    {
      MutexLock lock(&runner.mu);
      if (runner.chain_seqs.size() == 4) break;
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  runner.ReleaseAll();
  WaitFor(out.count, 4);
  MutexLock lock(&runner.mu);
  ASSERT_EQ(runner.chain_seqs.size(), 4u);
  for (size_t i = 1; i < 4; ++i) EXPECT_LT(runner.chain_seqs[i - 1], runner.chain_seqs[i]);
}

// The runner's own work (SubmitOrdered: the GPU engine's resident
// transfers) takes its place among the chains, with the state it was given
// and without admission: the in-flight limit that refuses a chain lets it
// in.
TEST(SchedulerTest, OrderedWorkKeepsItsPlaceAmongTheChains) {
  FakeRunner runner;
  runner.capacity = 0;
  runner.complete_inline = true;
  SchedulerOptions o;
  o.admission->max_in_flight = 1;
  Scheduler s(&runner, o);
  Outcomes out;
  s.SubmitChain(ReluChain(8), ChainOutcome(out));
  s.SubmitOrdered(std::make_unique<CountingState>(&runner.live_states), ChainOutcome(out));
  s.SubmitOrdered(std::make_unique<CountingState>(&runner.live_states), ChainOutcome(out));
  EXPECT_EQ(s.stats().queued, 3u);
  EXPECT_EQ(runner.live_states.load(), 3);  // the chain's and the two given
  runner.capacity = 1;
  s.Poke();
  WaitFor(out.count, 3);
  EXPECT_EQ(runner.live_states.load(), 0);
  {
    MutexLock lock(&out.mu);
    for (const absl::Status& st : out.statuses) EXPECT_TRUE(st.ok()) << st;
  }
  MutexLock lock(&runner.mu);
  ASSERT_EQ(runner.chain_seqs.size(), 3u);
  for (size_t i = 1; i < 3; ++i) EXPECT_LT(runner.chain_seqs[i - 1], runner.chain_seqs[i]);
}

TEST(SchedulerTest, ChainChecksBeforeTheQueue) {
  FakeRunner runner;
  runner.complete_inline = true;
  Scheduler s(&runner, SchedulerOptions{});
  Outcomes out;
  ChainRequest bad = ReluChain(8);
  bad.steps[0].input.bytes.resize(3);
  s.SubmitChain(std::move(bad), ChainOutcome(out));
  ChainRequest gone = ReluChain(8);
  gone.cancelled = std::make_shared<std::atomic<bool>>(true);
  s.SubmitChain(std::move(gone), ChainOutcome(out));
  ChainRequest late = ReluChain(8);
  late.deadline = absl::Now() - absl::Seconds(1);
  s.SubmitChain(std::move(late), ChainOutcome(out));
  ASSERT_EQ(out.count.load(), 3);
  {
    MutexLock lock(&out.mu);
    EXPECT_EQ(ops::ViolationsOf(out.statuses[0])[0].rule, "PAYLOAD_SIZE_MISMATCH");
    EXPECT_EQ(ops::ViolationsOf(out.statuses[0])[0].field, "steps[0].input.data");
    EXPECT_EQ(out.statuses[1].code(), absl::StatusCode::kCancelled);
    EXPECT_EQ(out.statuses[2].code(), absl::StatusCode::kDeadlineExceeded);
  }
  EXPECT_EQ(s.stats().rejected, 3u);
  s.SubmitChain(ReluChain(8), ChainOutcome(out));
  WaitFor(out.count, 4);
  EXPECT_EQ(runner.live_states.load(), 0);
}

// A runner that takes jobs inline when `inline_ok`, answering them on the
// submitting thread (and recording that thread).
class InlineRunner : public FakeRunner {
 public:
  bool AcceptInline(const Job&) override { return inline_ok.load(); }
  void RunInline(Job job) override {
    ++inline_runs;
    inline_thread = std::this_thread::get_id();
    job.done(ExecuteResult{});
  }
  std::atomic<bool> inline_ok{true};
  std::atomic<int> inline_runs{0};
  std::thread::id inline_thread;
};

TEST(SchedulerTest, AnIdleQueueHandsSmallRequestsToTheRunnerInline) {
  InlineRunner runner;
  Scheduler s(&runner, SchedulerOptions{});
  Outcomes out;
  s.Submit(Relu(8), out.Callback());
  // Answered before Submit returned, on this thread, as a batch of one
  // with its timing.
  ASSERT_EQ(out.count.load(), 1);
  EXPECT_EQ(runner.inline_runs.load(), 1);
  EXPECT_EQ(runner.inline_thread, std::this_thread::get_id());
  {
    MutexLock lock(&out.mu);
    EXPECT_TRUE(out.statuses[0].ok());
    ASSERT_EQ(out.timings.size(), 1u);
    EXPECT_GE(out.timings[0].run, absl::ZeroDuration());
  }
  SchedulerStats stats = s.stats();
  EXPECT_EQ(stats.admitted, 1u);
  EXPECT_EQ(stats.batches, 1u);
  EXPECT_EQ(stats.batched_requests, 1u);
  EXPECT_EQ(stats.largest_batch, 1u);
  // The checks before the queue still come first.
  ExecuteRequest late = Relu(8);
  late.deadline = absl::Now() - absl::Seconds(1);
  s.Submit(std::move(late), out.Callback());
  ASSERT_EQ(out.count.load(), 2);
  EXPECT_EQ(runner.inline_runs.load(), 1);
  // A runner that declines queues as before.
  runner.inline_ok = false;
  runner.complete_inline = true;
  s.Submit(Relu(8), out.Callback());
  WaitFor(out.count, 3);
  EXPECT_EQ(runner.inline_runs.load(), 1);
  MutexLock lock(&runner.mu);
  EXPECT_EQ(runner.sizes.size(), 1u);
}

TEST(SchedulerTest, NoInlineRunPastQueuedRequestsADelayOrAStop) {
  InlineRunner runner;
  runner.capacity = 0;  // the dispatch thread cannot hand anything over
  Scheduler s(&runner, SchedulerOptions{});
  Outcomes out;
  runner.inline_ok = false;
  s.Submit(Relu(8), out.Callback());  // queued
  runner.inline_ok = true;
  s.Submit(Relu(8), out.Callback());  // must not overtake the queued one
  EXPECT_EQ(runner.inline_runs.load(), 0);
  EXPECT_EQ(s.stats().queued, 2u);
  runner.capacity = 1;
  runner.complete_inline = true;
  runner.listener();
  WaitFor(out.count, 2);
  s.Shutdown();
  s.Submit(Relu(8), out.Callback());
  ASSERT_EQ(out.count.load(), 3);
  EXPECT_EQ(runner.inline_runs.load(), 0);
  {
    MutexLock lock(&out.mu);
    EXPECT_EQ(out.statuses[2].code(), absl::StatusCode::kUnavailable);
  }

  // A policy that waits for company keeps a lone request in the queue.
  InlineRunner waiting;
  waiting.complete_inline = true;
  SchedulerOptions options;
  options.policy.max_queue_delay = absl::Milliseconds(1);
  Scheduler delayed(&waiting, options);
  Outcomes later;
  delayed.Submit(Relu(8), later.Callback());
  WaitFor(later.count, 1);
  EXPECT_EQ(waiting.inline_runs.load(), 0);
}

// A runner without resident chains refuses them (the CPU engine runs its
// chains step by step through Execute instead).
class PlainRunner : public FakeRunner {
 public:
  absl::StatusOr<Prepared> PrepareChain(ChainRequest& c) override {
    return Runner::PrepareChain(c);
  }
};

TEST(SchedulerTest, ChainsNeedARunnerThatRunsThem) {
  PlainRunner runner;
  runner.complete_inline = true;
  Scheduler s(&runner, SchedulerOptions{});
  Outcomes out;
  s.SubmitChain(ReluChain(8), ChainOutcome(out));
  ASSERT_EQ(out.count.load(), 1);
  MutexLock lock(&out.mu);
  EXPECT_EQ(out.statuses[0].code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace dmls::sched
