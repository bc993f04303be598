#include "engine/core/mutex.h"
#include "engine/sched/multi_engine.h"

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/engine_test_util.h"
#include "engine/core/tensor_desc.h"
#include "gtest/gtest.h"

namespace dmls::sched {
namespace {

using core::testing::Counter;

// A RELU request over `bytes` (a multiple of 4) bytes of FLOAT32 whose
// input bytes are `fill`.
ExecuteRequest Request(uint64_t bytes, char fill = 'x') {
  return core::testing::Float32Request(OperatorType::kActivationRelu, bytes / 4, fill);
}

// A child engine that echoes the input, either at once or when Release()d,
// and that can "lose its device": it then answers what it holds, and
// everything after, like GpuRunner does: hand the request back, then
// DeviceLostError.
class FakeChild : public Engine {
 public:
  explicit FakeChild(std::string name, bool hold = false)
      : name_(std::move(name)), hold_(hold) {}

  DeviceInfo device_info() const override {
    return {name_, "gpu", "fake", 1 << 20};
  }
  bool Healthy() const override { return !lost_.load(); }

  void Execute(ExecuteRequest request, ExecuteCallback done) override {
    ++received_;
    if (fail_with_.load() != absl::StatusCode::kOk) {
      done(absl::Status(fail_with_.load(), "fake failure"));
      return;
    }
    if (lost_.load()) return FailLost(request, done);
    if (!hold_) return Answer(request, done);
    MutexLock lock(&mu_);
    held_.push_back({std::move(request), std::move(done)});
  }

  // Answers every held request OK.
  void Release() {
    for (Item& item : Take()) Answer(item.request, item.done);
  }
  // The device is lost: held requests are handed back and failed.
  void Lose() {
    lost_.store(true);
    for (Item& item : Take()) FailLost(item.request, item.done);
  }
  void FailWith(absl::StatusCode code) { fail_with_.store(code); }
  int received() const { return received_.load(); }
  size_t held() const {
    MutexLock lock(&mu_);
    return held_.size();
  }

 private:
  struct Item {
    ExecuteRequest request;
    ExecuteCallback done;
  };
  std::deque<Item> Take() {
    MutexLock lock(&mu_);
    return std::exchange(held_, {});
  }
  void Answer(ExecuteRequest& request, ExecuteCallback& done) {
    ExecuteResult result;
    result.output = name_ + ":" + request.input.ToString();
    done(std::move(result));
  }
  static void FailLost(ExecuteRequest& request, ExecuteCallback& done) {
    HandBackRequest(request);
    done(DeviceLostError("fake device removed"));
  }

  const std::string name_;
  const bool hold_;
  std::atomic<bool> lost_{false};
  std::atomic<absl::StatusCode> fail_with_{absl::StatusCode::kOk};
  std::atomic<int> received_{0};
  mutable Mutex mu_;
  std::deque<Item> held_ ABSL_GUARDED_BY(mu_);
};

struct Results {
  Mutex mu;
  std::vector<absl::StatusOr<ExecuteResult>> got ABSL_GUARDED_BY(mu);
  ExecuteCallback Callback() {
    return [this](absl::StatusOr<ExecuteResult> r) {
      MutexLock lock(&mu);
      got.push_back(std::move(r));
    };
  }
  size_t size() {
    MutexLock lock(&mu);
    return got.size();
  }
  std::vector<absl::StatusOr<ExecuteResult>> Got() {
    MutexLock lock(&mu);
    return got;
  }
};

// Two children; raw pointers stay valid while `engine` lives.
struct Fixture {
  explicit Fixture(bool hold0 = false, bool hold1 = false) {
    auto a = std::make_unique<FakeChild>("a", hold0);
    auto b = std::make_unique<FakeChild>("b", hold1);
    child0 = a.get();
    child1 = b.get();
    std::vector<std::unique_ptr<Engine>> children;
    children.push_back(std::move(a));
    children.push_back(std::move(b));
    MultiEngineOptions options;
    options.labels = {"gpu0", "gpu1"};
    engine = std::make_unique<MultiEngine>(std::move(children), options);
  }
  FakeChild* child0;
  FakeChild* child1;
  std::unique_ptr<MultiEngine> engine;
};

TEST(MultiEngine, IdleChildrenTakeTurns) {
  Fixture f;
  Results results;
  for (int i = 0; i < 6; ++i) f.engine->Execute(Request(64), results.Callback());
  ASSERT_EQ(results.size(), 6u);
  EXPECT_EQ(f.child0->received(), 3);
  EXPECT_EQ(f.child1->received(), 3);
  EXPECT_EQ(Counter(*f.engine, "gpu0.routed"), 3u);
  EXPECT_EQ(Counter(*f.engine, "routed"), 6u);
}

TEST(MultiEngine, LeastOutstandingBytesWins) {
  Fixture f(/*hold0=*/true, /*hold1=*/true);
  Results results;
  // Whichever child takes the 4 MiB request, the small ones that follow all
  // go to the other until their bytes add up to more.
  f.engine->Execute(Request(4 << 20), results.Callback());
  FakeChild* big = f.child0->held() == 1 ? f.child0 : f.child1;
  FakeChild* other = big == f.child0 ? f.child1 : f.child0;
  for (int i = 0; i < 10; ++i) f.engine->Execute(Request(1024), results.Callback());
  EXPECT_EQ(big->held(), 1u);
  EXPECT_EQ(other->held(), 10u);
  const size_t big_index = big == f.child0 ? 0 : 1;
  EXPECT_GT(f.engine->outstanding_bytes(big_index),
            f.engine->outstanding_bytes(1 - big_index));
  f.child0->Release();
  f.child1->Release();
  ASSERT_EQ(results.size(), 11u);
  EXPECT_EQ(f.engine->outstanding_bytes(0), 0u);
  EXPECT_EQ(f.engine->outstanding_bytes(1), 0u);
}

TEST(MultiEngine, LostChildsRequestsRunOnTheOther) {
  Fixture f(/*hold0=*/true, /*hold1=*/false);
  Results results;
  // Fill child 0 (child 1 answers at once, so child 0 gets every other).
  for (int i = 0; i < 8; ++i) {
    f.engine->Execute(Request(256, static_cast<char>('a' + i)), results.Callback());
  }
  const size_t held = f.child0->held();
  ASSERT_GT(held, 0u);
  f.child0->Lose();
  ASSERT_EQ(results.size(), 8u);
  for (auto& r : results.Got()) {
    ASSERT_TRUE(r.ok()) << r.status();
    // Answered by child b with the payload intact.
    EXPECT_EQ(r->output.substr(0, 2), "b:");
    EXPECT_EQ(r->output.size(), 2u + 256u);
  }
  EXPECT_TRUE(f.engine->Healthy());
  EXPECT_EQ(Counter(*f.engine, "retried"), held);
  EXPECT_EQ(Counter(*f.engine, "engines_lost"), 1u);
  // New requests skip the dead child.
  const int before = f.child0->received();
  for (int i = 0; i < 4; ++i) f.engine->Execute(Request(64), results.Callback());
  EXPECT_EQ(f.child0->received(), before);
  ASSERT_EQ(results.size(), 12u);
}

TEST(MultiEngine, NoLiveChildMeansUnavailable) {
  Fixture f(/*hold0=*/true, /*hold1=*/true);
  Results results;
  for (int i = 0; i < 4; ++i) f.engine->Execute(Request(64), results.Callback());
  f.child1->Lose();  // its two go to child 0 (held there)
  EXPECT_EQ(f.child0->held(), 4u);
  EXPECT_TRUE(f.engine->Healthy());
  // Child 0 dies too: two were tried on both (UNAVAILABLE), two were not
  // tried anywhere else but no child is left (UNAVAILABLE).
  f.child0->Lose();
  ASSERT_EQ(results.size(), 4u);
  for (auto& r : results.Got()) {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  }
  EXPECT_FALSE(f.engine->Healthy());
  Results late;
  f.engine->Execute(Request(64), late.Callback());
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late.Got()[0].status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Counter(*f.engine, "engines_lost"), 2u);
  // Only the two handed back with attempts left found no child to go to.
  EXPECT_EQ(Counter(*f.engine, "retry_unavailable"), 2u);
}

TEST(MultiEngine, AtMostMaxAttemptsRuns) {
  // Three children, two attempts: a request lost on two is not tried on
  // the third.
  std::vector<std::unique_ptr<Engine>> children;
  std::vector<FakeChild*> fakes;
  for (const char* name : {"a", "b", "c"}) {
    auto c = std::make_unique<FakeChild>(name, /*hold=*/true);
    fakes.push_back(c.get());
    children.push_back(std::move(c));
  }
  MultiEngine engine(std::move(children), MultiEngineOptions{});
  Results results;
  engine.Execute(Request(64), results.Callback());
  FakeChild* first = nullptr;
  for (FakeChild* c : fakes) {
    if (c->held() == 1) first = c;
  }
  ASSERT_NE(first, nullptr);
  first->Lose();
  FakeChild* second = nullptr;
  for (FakeChild* c : fakes) {
    if (c != first && c->held() == 1) second = c;
  }
  ASSERT_NE(second, nullptr);
  second->Lose();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results.Got()[0].status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(engine.Healthy());  // the third is alive, merely untried
}

TEST(MultiEngine, OtherErrorsAreAnsweredAsTheyAre) {
  Fixture f;
  f.child0->FailWith(absl::StatusCode::kResourceExhausted);
  f.child1->FailWith(absl::StatusCode::kResourceExhausted);
  Results results;
  f.engine->Execute(Request(64), results.Callback());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results.Got()[0].status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(f.child0->received() + f.child1->received(), 1);
  EXPECT_TRUE(f.engine->Healthy());
}

TEST(MultiEngine, DevicesAndSummary) {
  Fixture f;
  const std::vector<DeviceInfo> devices = f.engine->devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "a");
  EXPECT_EQ(devices[1].name, "b");
  const DeviceInfo summary = f.engine->device_info();
  EXPECT_EQ(summary.name, "a + b");
  EXPECT_EQ(summary.memory_bytes, 2u << 20);

  std::vector<std::unique_ptr<Engine>> same;
  same.push_back(std::make_unique<FakeChild>("H200"));
  same.push_back(std::make_unique<FakeChild>("H200"));
  EXPECT_EQ(MultiEngine(std::move(same), {}).device_info().name, "2 x H200");
}

TEST(MultiEngine, DeviceLostStatusIsMarked) {
  EXPECT_TRUE(IsDeviceLost(DeviceLostError("x")));
  EXPECT_FALSE(IsDeviceLost(absl::UnavailableError("shutting down")));
  EXPECT_FALSE(IsDeviceLost(absl::OkStatus()));
}

// A one-step IDENTITY chain over `buffer`, its output returned.
ChainRequest ChainOver(std::shared_ptr<ResidentBuffer> buffer) {
  ChainRequest r;
  ChainStep s;
  s.op.type = static_cast<uint32_t>(OperatorType::kActivationIdentity);
  s.op.input = MakeTensorDesc(DataType::kFloat32, {buffer->size() / 4});
  s.op.output = s.op.input;
  s.input = ChainSource::Resident(std::move(buffer));
  s.return_output = true;
  r.steps.push_back(std::move(s));
  return r;
}

absl::StatusOr<ChainResult> RunChain(Engine& e, ChainRequest r) {
  absl::StatusOr<ChainResult> out = absl::UnknownError("not answered");
  e.ExecuteChain(std::move(r), [&](absl::StatusOr<ChainResult> got) { out = std::move(got); });
  return out;  // the fake children answer at once
}

TEST(MultiEngine, OneOwnersTensorsShareADeviceAndChainsRunThere) {
  Fixture f;
  std::vector<Engine*> owners_of_alice, owners;
  for (int i = 0; i < 8; ++i) {
    auto b = f.engine->AllocateResident(16, "alice");
    ASSERT_TRUE(b.ok());
    owners_of_alice.push_back((*b)->engine());
  }
  for (Engine* e : owners_of_alice) EXPECT_EQ(e, owners_of_alice.front());
  // Different owners spread over the children.
  for (int i = 0; i < 64; ++i) {
    owners.push_back((*f.engine->AllocateResident(16, "owner" + std::to_string(i)))->engine());
  }
  EXPECT_NE(std::count(owners.begin(), owners.end(), f.child0), 0);
  EXPECT_NE(std::count(owners.begin(), owners.end(), f.child1), 0);

  auto on0 = *f.engine->AllocateResident(16, "x");
  Engine* home = on0->engine();
  FakeChild* other = home == f.child0 ? f.child1 : f.child0;
  absl::Status written = absl::UnknownError("");
  f.engine->WriteResident(on0, 0, "abcdefghijklmnop", [&](absl::Status s) { written = s; });
  ASSERT_TRUE(written.ok());
  absl::StatusOr<ChainResult> ran = RunChain(*f.engine, ChainOver(on0));
  ASSERT_TRUE(ran.ok()) << ran.status();
  // The child that holds the tensor ran it (its Execute prefixes its name).
  EXPECT_EQ(ran->outputs[0], home->device_info().name + ":abcdefghijklmnop");

  // Tensors on two devices in one chain: refused.
  std::shared_ptr<ResidentBuffer> elsewhere;
  for (int i = 0; !elsewhere; ++i) {
    auto b = *f.engine->AllocateResident(16, "k" + std::to_string(i));
    if (b->engine() == other) elsewhere = b;
  }
  ChainRequest mixed = ChainOver(on0);
  mixed.steps[0].output = elsewhere;
  EXPECT_EQ(RunChain(*f.engine, std::move(mixed)).status().code(),
            absl::StatusCode::kFailedPrecondition);

  // A lost device takes no new tensors.
  other->Lose();
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ((*f.engine->AllocateResident(16, "n" + std::to_string(i)))->engine(), home);
  }
}

}  // namespace
}  // namespace dmls::sched
