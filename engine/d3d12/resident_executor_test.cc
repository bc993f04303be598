// ResidentExecutor on the software adapter (or the GPU with
// DMLS_KERNELS_TEST_ADAPTER=gpu): transfers, chains against the CPU engine
// run one operator at a time, in-place semantics, the memory cap, device
// loss.
#include "engine/d3d12/resident_executor.h"

#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

#include "engine/d3d12/test_adapter.h"
#include "engine/core/host_resident.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/d3d12/gpu_engine_test_util.h"
#include "engine/ops/validator.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace dmls::d3d12 {
namespace {

using testing::Pattern;

std::vector<float> Floats(const std::string& s) {
  std::vector<float> v(s.size() / 4);
  std::memcpy(v.data(), s.data(), v.size() * 4);
  return v;
}

std::string FloatBytes(uint64_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (uint64_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = static_cast<float>(static_cast<int32_t>(seed)) / 2147483648.0f * 4.0f;
  }
  return std::string(reinterpret_cast<const char*>(v.data()), n * 4);
}

OperatorDesc Unary(OperatorType type, uint64_t n) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(type);
  op.input = MakeTensorDesc(DataType::kFloat32, {1, 1, 4, n / 4});
  op.output = op.input;
  return op;
}

OperatorDesc Celu(uint64_t n, float alpha) {
  OperatorDesc op = Unary(OperatorType::kActivationCelu, n);
  op.activation[0] = alpha;
  return op;
}

OperatorDesc Threshold(uint64_t n, float min) {
  OperatorDesc op = Unary(OperatorType::kElementWiseThreshold, n);
  op.min = min;
  return op;
}

// MVN1 over the last axis with per-row scale and bias.
OperatorDesc Mvn1(uint64_t n) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
  op.input = MakeTensorDesc(DataType::kFloat32, {1, 1, 4, n / 4});
  op.output = op.input;
  op.scale = MakeTensorDesc(DataType::kFloat32, {1, 1, 4, 1});
  op.bias = op.scale;
  op.axes = {3};
  op.axis_count = 1;
  op.normalize_variance = 1;
  op.epsilon = 1e-5f;
  return op;
}

template <typename T>
T Wait(std::future<T>& f) {
  return f.get();
}

class ResidentExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GpuEngineOptions o;
    o.device.kind = TestAdapterKind();
    o.resident.staging_bytes = 64 << 10;  // many halves per transfer
    absl::StatusOr<std::unique_ptr<GpuEngine>> e = CreateGpuEngine(std::move(o));
    ASSERT_TRUE(e.ok()) << e.status();
    gpu_ = std::move(*e);
  }

  absl::Status Write(std::shared_ptr<ResidentBuffer> b, uint64_t offset, std::string bytes) {
    std::promise<absl::Status> p;
    auto f = p.get_future();
    gpu_->WriteResident(std::move(b), offset, std::move(bytes),
                        [&](absl::Status s) { p.set_value(s); });
    return f.get();
  }
  absl::StatusOr<std::string> Read(std::shared_ptr<ResidentBuffer> b, uint64_t offset,
                                   uint64_t length) {
    std::promise<absl::StatusOr<std::string>> p;
    auto f = p.get_future();
    gpu_->ReadResident(std::move(b), offset, length,
                       [&](absl::StatusOr<std::string> s) { p.set_value(std::move(s)); });
    return f.get();
  }
  absl::StatusOr<ChainResult> Chain(Engine& engine, ChainRequest r) {
    std::promise<absl::StatusOr<ChainResult>> p;
    auto f = p.get_future();
    engine.ExecuteChain(std::move(r),
                        [&](absl::StatusOr<ChainResult> s) { p.set_value(std::move(s)); });
    return f.get();
  }
  std::shared_ptr<ResidentBuffer> Alloc(uint64_t bytes) {
    absl::StatusOr<std::shared_ptr<ResidentBuffer>> b = gpu_->AllocateResident(bytes, "t");
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? *b : nullptr;
  }
  static void ExpectNear(const std::string& got, const std::string& want, float tol) {
    ASSERT_EQ(got.size(), want.size());
    std::vector<float> g = Floats(got), w = Floats(want);
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << "element " << i;
    }
  }

  // Whether the dispatch thread places a command list (a transfer queued
  // by the caller before this) within 20 s of `before` lists.
  bool DispatchPlacesAList(uint64_t before) {
    const absl::Time end = absl::Now() + absl::Seconds(20);
    while (gpu_->stats().placed_lists <= before) {
      if (absl::Now() > end) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return true;
  }

  std::unique_ptr<GpuEngine> gpu_;
};

TEST_F(ResidentExecutorTest, WritesAndReadsAnyRangeOfAZeroedBuffer) {
  const uint64_t size = 300000;  // several staging halves, not a multiple of them
  std::shared_ptr<ResidentBuffer> b = Alloc(size);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->device(), gpu_->device_info().name);
  absl::StatusOr<std::string> zero = Read(b, 0, size);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(*zero, std::string(size, '\0'));
  const std::string data = Pattern(size, 7);
  ASSERT_TRUE(Write(b, 0, data.substr(0, 100001)).ok());
  ASSERT_TRUE(Write(b, 100001, data.substr(100001)).ok());
  absl::StatusOr<std::string> all = Read(b, 0, size);
  ASSERT_TRUE(all.ok());
  for (uint64_t i = 0; i < size; ++i) {
    ASSERT_EQ((*all)[i], data[i]) << "byte " << i;
  }
  absl::StatusOr<std::string> part = Read(b, 65535, 70000);
  ASSERT_TRUE(part.ok());
  EXPECT_TRUE(*part == data.substr(65535, 70000));
  EXPECT_EQ(Write(b, size - 2, "abc").code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Read(b, size, 1).status().code(), absl::StatusCode::kOutOfRange);
  auto counter = [&](const std::string& name) {
    for (const auto& [k, v] : gpu_->Counters()) {
      if (k == name) return v;
    }
    return uint64_t{0};
  };
  EXPECT_EQ(counter("resident_buffers"), 1u);
  EXPECT_GE(counter("resident_bytes"), size);
  b.reset();
  // The worker drops its references just after answering.
  for (int i = 0; i < 100 && counter("resident_buffers") != 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(counter("resident_buffers"), 0u);
}

// A read's bytes are copied out of the readback halves on the completion
// thread and answered there: the dispatch thread is free for the next
// transfer while a read's callback runs. (Before, the dispatch thread
// copied every half into a fresh string and ran the callback, so a
// callback waiting for a later write never saw it.)
TEST_F(ResidentExecutorTest, ReadsAreAnsweredOffTheDispatchThread) {
  const uint64_t size = 300000;  // five 64 KiB halves
  std::shared_ptr<ResidentBuffer> b = Alloc(size);
  std::shared_ptr<ResidentBuffer> other = Alloc(4096);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(other, nullptr);
  const std::string data = Pattern(size, 11);
  ASSERT_TRUE(Write(b, 0, data).ok());

  std::promise<absl::Status> wrote;
  std::future<absl::Status> wrote_f = wrote.get_future();
  std::promise<bool> read;
  std::future<bool> read_f = read.get_future();
  gpu_->ReadResident(b, 7, size - 7, [&](absl::StatusOr<std::string> bytes) {
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_TRUE(bytes.ok() && *bytes == data.substr(7)) << "the bytes read differ";
    // Queued after this read: placed only if this callback is not on the
    // dispatch thread.
    const uint64_t lists = gpu_->stats().placed_lists;
    gpu_->WriteResident(other, 0, std::string(16, 'w'),
                        [&](absl::Status w) { wrote.set_value(w); });
    read.set_value(DispatchPlacesAList(lists));
  });
  EXPECT_TRUE(read_f.get()) << "the read's callback held up the dispatch thread";
  EXPECT_TRUE(wrote_f.get().ok());
}

// ReadResidentInto fills the caller's memory; the dispatch thread copies
// none of it.
TEST_F(ResidentExecutorTest, ReadIntoFillsTheCallersMemoryOffTheDispatchThread) {
  const uint64_t size = 300000;
  std::shared_ptr<ResidentBuffer> b = Alloc(size);
  ASSERT_NE(b, nullptr);
  const std::string data = Pattern(size, 13);
  ASSERT_TRUE(Write(b, 0, data).ok());
  std::string into(size - 7, 'x');
  std::promise<absl::Status> read;
  gpu_->ReadResidentInto(b, 7, absl::MakeSpan(into), [&](absl::Status s) { read.set_value(s); });
  absl::Status s = read.get_future().get();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(into == data.substr(7)) << "the bytes read differ";
  const GpuEngineStats stats = gpu_->stats();
  EXPECT_EQ(stats.resident.bytes_read_on_dispatch, 0u);
  EXPECT_EQ(stats.resident.bytes_read, size - 7);

  // Out of range: an error, and the caller's memory is left alone.
  std::string untouched(8, 'u');
  std::promise<absl::Status> bad;
  gpu_->ReadResidentInto(b, size - 4, absl::MakeSpan(untouched),
                         [&](absl::Status st) { bad.set_value(st); });
  EXPECT_EQ(bad.get_future().get().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(untouched, std::string(8, 'u'));
}

// A write of up to a staging half (a chunk) is copied into upload memory on
// the caller's thread and answered on the completion thread: its callback
// does not hold up the dispatch thread (before, the dispatch thread copied
// it and answered), and the dispatch thread copies none of its bytes.
// Larger writes still go through the halves.
TEST_F(ResidentExecutorTest, ChunkWritesAreCopiedAndAnsweredOffTheDispatchThread) {
  const uint64_t size = 300000;
  std::shared_ptr<ResidentBuffer> b = Alloc(size);
  ASSERT_NE(b, nullptr);
  const std::string data = Pattern(size, 17);
  const uint64_t chunk = 60000;  // under the tests' 64 KiB halves
  for (uint64_t at = 0; at < size; at += chunk) {
    ASSERT_TRUE(Write(b, at, data.substr(at, chunk)).ok());
  }
  EXPECT_EQ(gpu_->stats().resident.bytes_written_on_dispatch, 0u);
  absl::StatusOr<std::string> all = Read(b, 0, size);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_TRUE(*all == data) << "the bytes written differ";

  std::promise<absl::StatusOr<std::string>> read;
  std::future<absl::StatusOr<std::string>> read_f = read.get_future();
  std::promise<bool> wrote;
  gpu_->WriteResident(b, 5, std::string(1000, 'q'), [&](absl::Status s) {
    EXPECT_TRUE(s.ok()) << s;
    // Queued after this write: placed only if this callback is not on the
    // dispatch thread.
    const uint64_t lists = gpu_->stats().placed_lists;
    gpu_->ReadResident(b, 0, 2000, [&](absl::StatusOr<std::string> r) {
      read.set_value(std::move(r));
    });
    wrote.set_value(DispatchPlacesAList(lists));
  });
  EXPECT_TRUE(wrote.get_future().get()) << "the write's callback held up the dispatch thread";
  absl::StatusOr<std::string> head = read_f.get();
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_TRUE(*head == data.substr(0, 5) + std::string(1000, 'q') + data.substr(1005, 995));

  // Larger than a half: through the halves, on the dispatch thread.
  ASSERT_TRUE(Write(b, 0, data).ok());
  EXPECT_EQ(gpu_->stats().resident.bytes_written_on_dispatch, size);
}

TEST_F(ResidentExecutorTest, ChainEqualsTheOperatorsRunOneByOne) {
  const uint64_t n = 4096;
  const std::string x = FloatBytes(n, 3);
  const std::string scale = FloatBytes(4, 5), bias = FloatBytes(4, 6);
  std::shared_ptr<ResidentBuffer> in = Alloc(n * 4);
  std::shared_ptr<ResidentBuffer> kept = Alloc(n * 4);
  ASSERT_TRUE(Write(in, 0, x).ok());

  // CELU (resident input) -> MVN1 (scale/bias inline) -> THRESHOLD.
  auto build = [&](bool device) {
    ChainRequest r;
    ChainStep a;
    a.op = Celu(n, 0.7f);
    a.input = device ? ChainSource::Resident(in) : ChainSource::Inline(x);
    a.return_output = true;
    ChainStep b;
    b.op = Mvn1(n);
    b.input = ChainSource::Step(0);
    b.scale = ChainSource::Inline(scale);
    b.bias = ChainSource::Inline(bias);
    ChainStep c;
    c.op = Threshold(n, 0.25f);
    c.input = ChainSource::Step(1);
    c.return_output = true;
    if (device) c.output = kept;
    r.steps = {a, b, c};
    return r;
  };
  CpuEngine cpu;
  absl::StatusOr<ChainResult> want = Chain(cpu, build(false));
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<ChainResult> got = Chain(*gpu_, build(true));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->outputs.size(), 3u);
  EXPECT_TRUE(got->outputs[1].empty());  // an intermediate: never sent back
  ExpectNear(got->outputs[0], want->outputs[0], 1e-5f);
  ExpectNear(got->outputs[2], want->outputs[2], 1e-4f);
  absl::StatusOr<std::string> resident = Read(kept, 0, n * 4);
  ASSERT_TRUE(resident.ok());
  EXPECT_TRUE(*resident == got->outputs[2]);
  // The input tensor is untouched.
  EXPECT_TRUE(*Read(in, 0, n * 4) == x);
}

// Once a chain has run, running it again creates no view: the views of
// its buffers and the null views of its unused slots come from the cache
// (on vkd3d every view, null ones too, is a VkBufferView).
TEST_F(ResidentExecutorTest, ARepeatedChainCreatesNoViews) {
  const uint64_t n = 4096;
  std::shared_ptr<ResidentBuffer> in = Alloc(n * 4);
  ASSERT_TRUE(Write(in, 0, FloatBytes(n, 3)).ok());
  auto build = [&] {
    ChainRequest r;
    ChainStep a;
    a.op = Celu(n, 0.7f);  // t1, t2 and u1 unused
    a.input = ChainSource::Resident(in);
    ChainStep b;
    b.op = Mvn1(n);
    b.op.scale.reset();
    b.op.bias.reset();
    b.input = ChainSource::Step(0);
    ChainStep c;
    c.op = Threshold(n, 0.25f);
    c.input = ChainSource::Step(1);
    c.return_output = true;
    r.steps = {a, b, c};
    return r;
  };
  auto views = [&] {
    for (const auto& [k, v] : gpu_->Counters()) {
      if (k == "chain_views_created") return v;
    }
    return uint64_t{0};
  };
  absl::StatusOr<ChainResult> first = Chain(*gpu_, build());
  ASSERT_TRUE(first.ok()) << first.status();
  const uint64_t after_first = views();
  EXPECT_GT(after_first, 0u);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<ChainResult> again = Chain(*gpu_, build());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(again->outputs[2] == first->outputs[2]);
  }
  EXPECT_EQ(views(), after_first);
}

TEST_F(ResidentExecutorTest, InPlaceUpdatesResidentInputsButNotSharedIntermediates) {
  const uint64_t n = 1024;
  const std::string x = FloatBytes(n, 11);
  std::shared_ptr<ResidentBuffer> r = Alloc(n * 4);
  ASSERT_TRUE(Write(r, 0, x).ok());
  ChainRequest c;
  ChainStep relu;  // 0: RELU in place on the resident tensor
  relu.op = Unary(OperatorType::kActivationRelu, n);
  relu.in_place = true;
  relu.input = ChainSource::Resident(r);
  ChainStep neg;  // 1: LINEAR(-1) in place on step 0's output...
  neg.op = Unary(OperatorType::kActivationLinear, n);
  neg.op.activation = {-1.0f, 0.0f};
  neg.in_place = true;
  neg.input = ChainSource::Step(0);
  neg.return_output = true;
  ChainStep id;  // 2: ...which step 2 still reads as it was
  id.op = Unary(OperatorType::kActivationIdentity, n);
  id.input = ChainSource::Step(0);
  id.return_output = true;
  c.steps = {relu, neg, id};
  absl::StatusOr<ChainResult> got = Chain(*gpu_, std::move(c));
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<float> xs = Floats(x), updated = Floats(*Read(r, 0, n * 4));
  std::vector<float> negated = Floats(got->outputs[1]), same = Floats(got->outputs[2]);
  for (uint64_t i = 0; i < n; ++i) {
    const float want = std::max(xs[i], 0.0f);
    ASSERT_EQ(updated[i], want) << i;
    ASSERT_EQ(negated[i], -want) << i;
    ASSERT_EQ(same[i], want) << i;
  }
}

TEST_F(ResidentExecutorTest, ManyChainsInFlightFromManyThreads) {
  // Chains are recorded while earlier ones run; each must still see its own
  // buffers and temporaries.
  const uint64_t n = 2048;
  constexpr int kThreads = 6, kChains = 15;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string x = FloatBytes(n, 100 + t);
      std::shared_ptr<ResidentBuffer> b = Alloc(n * 4);
      if (!b || !Write(b, 0, x).ok()) {
        ++wrong;
        return;
      }
      const std::vector<float> xs = Floats(x);
      for (int c = 0; c < kChains; ++c) {
        ChainRequest r;
        ChainStep s0;
        s0.op = Threshold(n, static_cast<float>(c) / kChains);
        s0.input = ChainSource::Resident(b);
        ChainStep s1;
        s1.op = Unary(OperatorType::kActivationIdentity, n);
        s1.input = ChainSource::Step(0);
        s1.return_output = true;
        r.steps = {s0, s1};
        std::promise<absl::StatusOr<ChainResult>> p;
        auto f = p.get_future();
        gpu_->ExecuteChain(std::move(r),
                           [&](absl::StatusOr<ChainResult> got) { p.set_value(std::move(got)); });
        absl::StatusOr<ChainResult> got = f.get();
        if (!got.ok()) {
          ++wrong;
          continue;
        }
        const std::vector<float> ys = Floats(got->outputs[1]);
        for (uint64_t i = 0; i < n; ++i) {
          if (ys[i] != std::max(xs[i], static_cast<float>(c) / kChains)) {
            ++wrong;
            break;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// A step's output buffer is reused once no later step reads it: a chain
// of 40 steps on 1 MiB runs under a 16 MiB cap (one temporary per step
// would need 40 MiB), and equals the CPU engine's chain, with steps that
// read an output two steps back and steps in place.
TEST_F(ResidentExecutorTest, LongChainsReuseDeadTemporaries) {
  GpuEngineOptions o;
  o.device.kind = TestAdapterKind();
  o.memory_cap_bytes = 16 << 20;
  absl::StatusOr<std::unique_ptr<GpuEngine>> small = CreateGpuEngine(std::move(o));
  ASSERT_TRUE(small.ok()) << small.status();
  const uint64_t n = 1 << 18;
  const std::string x = FloatBytes(n, 21);
  absl::StatusOr<std::shared_ptr<ResidentBuffer>> in = (*small)->AllocateResident(n * 4, "t");
  ASSERT_TRUE(in.ok()) << in.status();
  std::promise<absl::Status> written;
  (*small)->WriteResident(*in, 0, x, [&](absl::Status s) { written.set_value(s); });
  ASSERT_TRUE(written.get_future().get().ok());
  auto build = [&](bool device) {
    ChainRequest r;
    for (size_t k = 0; k < 40; ++k) {
      ChainStep s;
      switch (k % 3) {
        case 0: s.op = Celu(n, 0.5f + 0.01f * k); break;
        case 1: s.op = Threshold(n, -0.5f); break;
        default:
          s.op = Unary(OperatorType::kActivationLinear, n);
          s.op.activation = {0.9f, 0.05f};
      }
      if (k == 0) {
        s.input = device ? ChainSource::Resident(*in) : ChainSource::Inline(x);
      } else {
        s.input = ChainSource::Step(k % 5 == 0 ? k - 2 : k - 1);
      }
      s.in_place = k % 4 == 3;
      s.return_output = k % 13 == 0 || k == 39;
      r.steps.push_back(s);
    }
    return r;
  };
  CpuEngine cpu;
  absl::StatusOr<ChainResult> want = Chain(cpu, build(false));
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<ChainResult> got = Chain(**small, build(true));
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t k : {0, 13, 26, 39}) ExpectNear(got->outputs[k], want->outputs[k], 1e-5f);
}

TEST_F(ResidentExecutorTest, ResidentMemoryCountsAgainstTheCap) {
  GpuEngineOptions o;
  o.device.kind = TestAdapterKind();
  o.memory_cap_bytes = 16 << 20;
  absl::StatusOr<std::unique_ptr<GpuEngine>> small = CreateGpuEngine(std::move(o));
  ASSERT_TRUE(small.ok());
  absl::StatusOr<std::shared_ptr<ResidentBuffer>> big =
      (*small)->AllocateResident(uint64_t{32} << 20, "t");
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  absl::StatusOr<std::shared_ptr<ResidentBuffer>> fits =
      (*small)->AllocateResident(uint64_t{4} << 20, "t");
  EXPECT_TRUE(fits.ok()) << fits.status();
}

TEST_F(ResidentExecutorTest, ALostDeviceFailsEverything) {
  std::shared_ptr<ResidentBuffer> b = Alloc(1024);
  gpu_->FailDevice();
  EXPECT_TRUE(IsDeviceLost(gpu_->AllocateResident(1024, "t").status()));
  EXPECT_TRUE(IsDeviceLost(Write(b, 0, "abcd")));
  EXPECT_TRUE(IsDeviceLost(Read(b, 0, 4).status()));
  ChainRequest c;
  ChainStep s;
  s.op = Unary(OperatorType::kActivationRelu, 256);
  s.input = ChainSource::Resident(b);
  s.return_output = true;
  c.steps = {s};
  EXPECT_TRUE(IsDeviceLost(Chain(*gpu_, std::move(c)).status()));
}

TEST_F(ResidentExecutorTest, CancelledAndLateChainsDoNotRun) {
  ChainRequest c;
  ChainStep s;
  s.op = Unary(OperatorType::kActivationRelu, 256);
  s.input = ChainSource::Inline(std::string(1024, '\0'));
  s.return_output = true;
  c.steps = {s};
  ChainRequest late = c;
  late.deadline = absl::Now() - absl::Seconds(1);
  EXPECT_EQ(Chain(*gpu_, std::move(late)).status().code(), absl::StatusCode::kDeadlineExceeded);
  auto flag = std::make_shared<std::atomic<bool>>(true);
  c.cancelled = flag;
  EXPECT_EQ(Chain(*gpu_, std::move(c)).status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace dmls::d3d12
