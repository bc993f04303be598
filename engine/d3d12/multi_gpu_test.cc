// Several GpuEngines behind a MultiEngine, on the software adapter: two
// vkd3d devices on lavapipe stand in for two GPUs. Plans are empty (in
// place, the output is the uploaded input), as in gpu_engine_test.cc, so
// these test placement, device loss and hand-back, not kernels.
#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/mutex.h"
#include "engine/core/engine_test_util.h"
#include "engine/d3d12/gpu_engine.h"
#include "engine/d3d12/gpu_engine_test_util.h"
#include "engine/sched/multi_engine.h"
#include "gtest/gtest.h"

namespace dmls::d3d12 {
namespace {

using core::testing::Counter;

ExecuteRequest Request(uint64_t elements, uint32_t seed) {
  return testing::CopyRequest(elements, /*in_place=*/true, seed);
}

GpuEngineOptions Options() { return testing::NoKernelOptions(); }

struct Pair {
  GpuEngine* gpu[2] = {nullptr, nullptr};
  std::unique_ptr<sched::MultiEngine> engine;
};

Pair MakePair(const GpuEngineOptions& options) {
  Pair p;
  std::vector<std::unique_ptr<Engine>> children;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::unique_ptr<GpuEngine>> e = GpuEngine::Create(options);
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok()) return p;
    p.gpu[i] = e->get();
    children.push_back(std::move(*e));
  }
  sched::MultiEngineOptions mo;
  mo.labels = {"gpu0", "gpu1"};
  p.engine = std::make_unique<sched::MultiEngine>(std::move(children), mo);
  return p;
}

// Collects answers and checks each against the input it was sent.
class Answers {
 public:
  ExecuteCallback Expect(std::string expected) {
    {
      MutexLock lock(&mu_);
      ++sent_;
    }
    return [this, expected = std::move(expected)](absl::StatusOr<ExecuteResult> r) {
      MutexLock lock(&mu_);
      ++answered_;
      if (r.ok()) {
        ++ok_;
        if (r->output != expected) ++wrong_;
      } else if (absl::IsUnavailable(r.status())) {
        ++unavailable_;
      } else {
        ++other_;
        last_other_ = r.status();
      }
      answered_cv_.SignalAll();
    };
  }
  // Sends `r` to `engine`, expecting its input back (an in-place copy).
  void Send(Engine& engine, ExecuteRequest r) {
    std::string expected = r.input.ToString();
    engine.Execute(std::move(r), Expect(std::move(expected)));
  }
  void WaitAll() {
    MutexLock lock(&mu_);
    while (answered_ != sent_) answered_cv_.Wait(&mu_);
  }
  int ok() { MutexLock l(&mu_); return ok_; }
  int wrong() { MutexLock l(&mu_); return wrong_; }
  int unavailable() { MutexLock l(&mu_); return unavailable_; }
  int other() { MutexLock l(&mu_); return other_; }
  absl::Status last_other() { MutexLock l(&mu_); return last_other_; }

 private:
  Mutex mu_;
  CondVar answered_cv_;  // answered_ rose
  int sent_ ABSL_GUARDED_BY(mu_) = 0;
  int answered_ ABSL_GUARDED_BY(mu_) = 0;
  int ok_ ABSL_GUARDED_BY(mu_) = 0;
  int wrong_ ABSL_GUARDED_BY(mu_) = 0;
  int unavailable_ ABSL_GUARDED_BY(mu_) = 0;
  int other_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status last_other_ ABSL_GUARDED_BY(mu_);
};

TEST(MultiGpuTest, TwoDevicesOnTheSoftwareAdapterShareTheLoad) {
  Pair p = MakePair(Options());
  ASSERT_TRUE(p.engine);
  EXPECT_EQ(p.engine->devices().size(), 2u);
  Answers answers;
  // Two submitting threads, requests of mixed sizes.
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        answers.Send(*p.engine, Request(i % 7 == 0 ? 60000 : 256, t * 1000 + i));
      }
    });
  }
  for (auto& t : threads) t.join();
  answers.WaitAll();
  EXPECT_EQ(answers.ok(), 400);
  EXPECT_EQ(answers.wrong(), 0);
  const uint64_t r0 = p.gpu[0]->stats().requests;
  const uint64_t r1 = p.gpu[1]->stats().requests;
  EXPECT_EQ(r0 + r1, 400u);
  EXPECT_GT(r0, 40u) << r1;
  EXPECT_GT(r1, 40u) << r0;
  EXPECT_EQ(Counter(*p.engine, "gpu0.requests"), r0);
  p.engine->Shutdown();
}

TEST(MultiGpuTest, EachDeviceHasItsOwnMemoryCap) {
  GpuEngineOptions o = Options();
  o.memory_cap_bytes = 1 << 20;
  Pair p = MakePair(o);
  ASSERT_TRUE(p.engine);
  // 4 MiB fits under neither 1 MiB cap: RESOURCE_EXHAUSTED, not re-routed,
  // and nobody is marked lost.
  std::promise<absl::Status> big;
  p.engine->Execute(Request(1 << 20, 1), [&](absl::StatusOr<ExecuteResult> r) {
    big.set_value(r.status());
  });
  EXPECT_EQ(big.get_future().get().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Counter(*p.engine, "gpu0.routed") + Counter(*p.engine, "gpu1.routed"), 1u);
  EXPECT_TRUE(p.gpu[0]->Healthy());
  EXPECT_TRUE(p.gpu[1]->Healthy());
  Answers answers;
  for (int i = 0; i < 8; ++i) {
    answers.Send(*p.engine, Request(20000, i));
  }
  answers.WaitAll();
  EXPECT_EQ(answers.ok(), 8);
  EXPECT_EQ(answers.wrong(), 0);
}

TEST(MultiGpuTest, LosingOneDeviceUnderLoadLosesNoRequest) {
  GpuEngineOptions o = Options();
  // Requests wait in the queues for company, so that the loss finds work
  // queued on the device it takes out.
  o.scheduler.policy.max_queue_delay = absl::Milliseconds(100);
  Pair p = MakePair(o);
  ASSERT_TRUE(p.engine);
  Answers answers;
  std::atomic<bool> stop{false};
  std::thread load([&] {
    for (int i = 0; !stop.load() || i < 300; ++i) {
      answers.Send(*p.engine, Request(i % 5 == 0 ? 70000 : 1000, i));
      if (i % 16 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  p.gpu[0]->FailDevice();
  stop = true;
  load.join();
  answers.WaitAll();
  EXPECT_FALSE(p.gpu[0]->Healthy());
  EXPECT_TRUE(p.engine->Healthy());
  EXPECT_EQ(answers.unavailable(), 0);
  EXPECT_EQ(answers.other(), 0) << answers.last_other();
  EXPECT_EQ(answers.wrong(), 0);
  EXPECT_GE(answers.ok(), 300);
  EXPECT_GT(Counter(*p.engine, "retried"), 0u);
  EXPECT_EQ(Counter(*p.engine, "gpu0.handed_back"), Counter(*p.engine, "retried"));
  EXPECT_EQ(Counter(*p.engine, "engines_lost"), 1u);
  EXPECT_EQ(Counter(*p.engine, "gpu0.device_lost"), 1u);
  p.engine->Shutdown();
}

TEST(MultiGpuTest, LosingBothDevicesIsUnavailableAndUnhealthy) {
  Pair p = MakePair(Options());
  ASSERT_TRUE(p.engine);
  p.gpu[0]->FailDevice();
  p.gpu[1]->FailDevice();
  EXPECT_FALSE(p.engine->Healthy());
  Answers answers;
  for (int i = 0; i < 4; ++i) {
    answers.Send(*p.engine, Request(100, i));
  }
  answers.WaitAll();
  EXPECT_EQ(answers.unavailable(), 4);
  p.engine->Shutdown();
}

// One GpuEngine: whatever the loss interrupts (admission, queue, command
// lists in flight) is handed back whole, then failed with DeviceLostError.
TEST(GpuDeviceLossTest, WorkInFlightIsHandedBackWhole) {
  GpuEngineOptions o = Options();
  auto created = GpuEngine::Create(o);
  ASSERT_TRUE(created.ok()) << created.status();
  GpuEngine& engine = **created;
  Mutex mu;
  int ok = 0, lost = 0, intact = 0, other = 0;
  std::vector<std::future<void>> done;
  for (int i = 0; i < 400; ++i) {
    ExecuteRequest r = Request(i % 3 == 0 ? 100000 : 500, i);
    auto sent = std::make_shared<std::string>(r.input.ToString());
    auto handed = std::make_shared<std::string>();
    auto handed_called = std::make_shared<bool>(false);
    r.on_device_lost = [handed, handed_called](ExecuteRequest back) {
      *handed = back.input.TakeString();
      *handed_called = true;
    };
    auto p = std::make_shared<std::promise<void>>();
    done.push_back(p->get_future());
    engine.Execute(std::move(r), [&, sent, handed, handed_called,
                                  p](absl::StatusOr<ExecuteResult> res) {
      {
        MutexLock lock(&mu);
        if (res.ok()) {
          ++ok;
        } else if (IsDeviceLost(res.status())) {
          ++lost;
          if (*handed_called && *handed == *sent) ++intact;
        } else {
          ++other;
        }
      }
      p->set_value();
    });
    if (i == 200) engine.FailDevice();
  }
  for (auto& f : done) f.get();
  EXPECT_EQ(other, 0);
  EXPECT_GE(lost, 199);  // at least everything after the loss
  EXPECT_EQ(intact, lost);
  EXPECT_EQ(ok + lost, 400);
  EXPECT_FALSE(engine.Healthy());
  const GpuEngineStats s = engine.stats();
  EXPECT_TRUE(s.device_lost);
  EXPECT_EQ(s.handed_back, static_cast<uint64_t>(lost));
  engine.Shutdown();
}

}  // namespace
}  // namespace dmls::d3d12
