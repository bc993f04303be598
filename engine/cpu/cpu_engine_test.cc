#include "engine/cpu/cpu_engine.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "engine/core/engine_test_util.h"
#include "engine/cpu/cpu_test_util.h"
#include "engine/cpu/float16.h"
#include "gtest/gtest.h"

namespace dmls {
namespace {

using core::testing::OpRequest;
using cpu::testing::MakePayload;
using cpu::testing::ReadLogical;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

ExecuteRequest Threshold(TensorDesc in, TensorDesc out, float min) {
  ExecuteRequest r = OpRequest(OperatorType::kElementWiseThreshold,
                               std::move(in), std::move(out));
  r.op.min = min;
  return r;
}

ExecuteRequest Clip(const TensorDesc& t, float min, float max) {
  ExecuteRequest r = OpRequest(OperatorType::kElementWiseClip, t, t);
  r.op.min = min;
  r.op.max = max;
  return r;
}

// MVN1 from `in` to `out` over `axes`; no scale or bias.
ExecuteRequest Mvn1(TensorDesc in, TensorDesc out, std::vector<uint64_t> axes) {
  ExecuteRequest r = OpRequest(OperatorType::kMeanVarianceNormalization1,
                               std::move(in), std::move(out));
  r.op.axes = std::move(axes);
  return r;
}

// CpuEngine::Run(r)'s output, read through r's output tensor as logical
// elements; `raw`, when given, gets the output buffer. A failed run fails
// the test and reads as no elements.
template <typename T>
std::vector<T> RunLogical(const ExecuteRequest& r, std::string* raw = nullptr) {
  absl::StatusOr<ExecuteResult> result = CpuEngine::Run(r);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  if (raw != nullptr) *raw = result->output;
  return ReadLogical<T>(*r.op.output, result->output);
}

absl::StatusCode RunCode(const ExecuteRequest& r) {
  return CpuEngine::Run(r).status().code();
}

TEST(CpuEngine, RunThresholdFloat32Packed) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {1, 1, 1, 4});
  ExecuteRequest r = Threshold(t, t, 0.5f);
  r.input = MakePayload<float>(t, {0.0f, 1.0f, kNaN, -INFINITY});
  std::string raw;
  EXPECT_EQ(RunLogical<float>(r, &raw),
            (std::vector<float>{0.5f, 1.0f, 0.5f, 0.5f}));
  EXPECT_EQ(raw.size(), 16u);
}

TEST(CpuEngine, StridedInputPaddedOutput) {
  // Input NHWC-like transposed strides, output padded rows.
  TensorDesc in =
      MakeTensorDesc(DataType::kFloat32, {1, 1, 2, 3}, {{6, 6, 1, 2}});
  TensorDesc out =
      MakeTensorDesc(DataType::kFloat32, {1, 1, 2, 3}, {{8, 8, 4, 1}});
  EXPECT_EQ(out.total_tensor_size_in_bytes, 28u);
  ExecuteRequest r = Threshold(in, out, 0.0f);
  r.input = MakePayload<float>(in, {-1, 2, -3, 4, -5, 6});
  std::string raw;
  EXPECT_EQ(RunLogical<float>(r, &raw), (std::vector<float>{0, 2, 0, 4, 0, 6}));
  EXPECT_EQ(raw.size(), 28u);
}

TEST(CpuEngine, ZeroStrideBroadcastInput) {
  TensorDesc in =
      MakeTensorDesc(DataType::kFloat32, {1, 1, 2, 3}, {{0, 0, 0, 1}});
  TensorDesc out = MakeTensorDesc(DataType::kFloat32, {1, 1, 2, 3});
  EXPECT_EQ(in.total_tensor_size_in_bytes, 12u);
  ExecuteRequest r = Threshold(in, out, 1.5f);
  r.input = MakePayload<float>(in, {1, 2, 3});
  EXPECT_EQ(RunLogical<float>(r), (std::vector<float>{1.5, 2, 3, 1.5, 2, 3}));
}

TEST(CpuEngine, InPlaceWritesIntoTheInputBufferAndKeepsPadding) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {2, 2}, {{3, 1}});
  ExecuteRequest r = Threshold(t, t, 0.0f);
  r.in_place = true;
  r.input = MakePayload<float>(t, {-1, 1, -2, 2});
  // The gap element (offset 2) keeps the input's bytes: 7.
  cpu::Store<float>(r.input.mutable_string().data(), 2, 7.0f);
  std::string raw;
  EXPECT_EQ(RunLogical<float>(r, &raw), (std::vector<float>{0, 1, 0, 2}));
  ASSERT_EQ(raw.size(), t.total_tensor_size_in_bytes);
  EXPECT_EQ(cpu::Load<float>(raw.data(), 2), 7.0f);
}

TEST(CpuEngine, InPlaceBufferCoversTheLargerTotal) {
  TensorDesc in = MakeTensorDesc(DataType::kFloat32, {4});
  TensorDesc out = MakeTensorDesc(DataType::kFloat32, {4}, std::nullopt, 32);
  ExecuteRequest r = Threshold(in, out, 0.0f);
  r.in_place = true;
  r.input = MakePayload<float>(in, {-1, 1, -2, 2});
  std::string raw;
  EXPECT_EQ(RunLogical<float>(r, &raw), (std::vector<float>{0, 1, 0, 2}));
  EXPECT_EQ(raw.size(), 32u);
}

TEST(CpuEngine, ClipFloat16RoundsMinMaxAndResult) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat16, {1, 1, 1, 4});
  // 70000 rounds to +inf as a half: no upper clamp.
  ExecuteRequest r = Clip(t, -1.0f, 70000.0f);
  r.op.scale_bias = ScaleBias{2.0f, 0.0f};
  // 40000*2 overflows binary16 -> inf; NaN*2 = NaN -> Min.
  r.input = MakePayload<uint16_t>(
      t, {0x78e2 /*40000*/, 0x3c00 /*1*/, 0x7e00 /*NaN*/, 0xc400 /*-4*/});
  EXPECT_EQ(RunLogical<uint16_t>(r),
            (std::vector<uint16_t>{0x7c00, 0x4000, 0xbc00, 0xbc00}));
}

TEST(CpuEngine, IntegerThresholdIsExact) {
  TensorDesc t = MakeTensorDesc(DataType::kInt32, {1, 1, 1, 3});
  ExecuteRequest r = Threshold(t, t, 16777216.0f);
  r.input = MakePayload<int32_t>(t, {16777217, 1, 2147483647});
  EXPECT_EQ(RunLogical<int32_t>(r),
            (std::vector<int32_t>{16777217, 16777216, 2147483647}));
}

TEST(CpuEngine, IntegerMinIsTruncatedAndSaturated) {
  TensorDesc t = MakeTensorDesc(DataType::kUint8, {4});
  ExecuteRequest r = Threshold(t, t, 300.0f);  // saturates to 255
  r.input = MakePayload<uint8_t>(t, {0, 100, 255, 7});
  EXPECT_EQ(RunLogical<uint8_t>(r), (std::vector<uint8_t>{255, 255, 255, 255}));

  TensorDesc s = MakeTensorDesc(DataType::kInt8, {4});
  ExecuteRequest c = Clip(s, -3.7f, 5.9f);  // -> [-3, 5]
  c.input = MakePayload<int8_t>(s, {-128, -3, 5, 127});
  EXPECT_EQ(RunLogical<int8_t>(c), (std::vector<int8_t>{-3, -3, 5, 5}));
}

TEST(CpuEngine, IntegerScaleBiasSaturatesAndTruncates) {
  TensorDesc t = MakeTensorDesc(DataType::kInt16, {4});
  ExecuteRequest r = Threshold(t, t, -100.0f);
  r.op.scale_bias = ScaleBias{1000.0f, 0.5f};
  r.input = MakePayload<int16_t>(t, {100, -100, 1, -1});
  // 100000.5 -> 32767; -99999.5 -> -32768 -> max(-100); 1000.5 -> 1000;
  // -999.5 -> -999 -> max(-100) = -100.
  EXPECT_EQ(RunLogical<int16_t>(r),
            (std::vector<int16_t>{32767, -100, 1000, -100}));
}

TEST(CpuEngine, Int64ClipUsesFloat32Bounds) {
  TensorDesc t = MakeTensorDesc(DataType::kInt64, {3});
  // Min saturates to INT64_MIN; max is the float32 value 999999984306749440.
  ExecuteRequest r = Clip(t, -1e30f, 1e18f);
  r.input = MakePayload<int64_t>(
      t, {std::numeric_limits<int64_t>::max(),
          std::numeric_limits<int64_t>::min(), 999999984306749441});
  EXPECT_EQ(RunLogical<int64_t>(r),
            (std::vector<int64_t>{999999984306749440,
                                  std::numeric_limits<int64_t>::min(),
                                  999999984306749440}));
}

TEST(CpuEngine, Uint64ClipIsExact) {
  TensorDesc t = MakeTensorDesc(DataType::kUint64, {3});
  ExecuteRequest r = Clip(t, 2.0f, 1e30f);  // max saturates to UINT64_MAX
  r.input = MakePayload<uint64_t>(t, {0, 18446744073709551615ull, 3});
  EXPECT_EQ(RunLogical<uint64_t>(r),
            (std::vector<uint64_t>{2, 18446744073709551615ull, 3}));
}

TEST(CpuEngine, IntegerReluAndShrink) {
  TensorDesc t = MakeTensorDesc(DataType::kInt8, {5});
  ExecuteRequest r = OpRequest(OperatorType::kActivationRelu, t, t);
  r.input = MakePayload<int8_t>(t, {-128, -1, 0, 1, 127});
  EXPECT_EQ(RunLogical<int8_t>(r), (std::vector<int8_t>{0, 0, 0, 1, 127}));

  // SHRINK, Bias = -10.9 (-> -10), Threshold 2.5 (-> 2, -2).
  r.op.type = static_cast<uint32_t>(OperatorType::kActivationShrink);
  r.op.activation = {-10.9f, 2.5f};
  r.input = MakePayload<int8_t>(t, {-128, -3, 2, 3, 120});
  // -128 + -10 saturates to -128; -3 - 10 = -13; 2 -> 0; 3 + 10 = 13;
  // 120 + 10 saturates to 127.
  EXPECT_EQ(RunLogical<int8_t>(r), (std::vector<int8_t>{-128, -13, 0, 13, 127}));

  TensorDesc u = MakeTensorDesc(DataType::kUint16, {3});
  r.op.input = u;
  r.op.output = u;
  r.op.activation = {5.0f, 1.0f};
  r.input = MakePayload<uint16_t>(u, {0, 1, 3});
  // 3 > 1 -> 3 - 5 = -2 saturates to 0.
  EXPECT_EQ(RunLogical<uint16_t>(r), (std::vector<uint16_t>{0, 0, 0}));
}

TEST(CpuEngine, CeluFloat32) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {3});
  ExecuteRequest r = OpRequest(OperatorType::kActivationCelu, t, t);
  r.op.activation = {1.0f, std::nullopt};
  r.input = MakePayload<float>(t, {-1.0f, 0.0f, 2.0f});
  EXPECT_EQ(RunLogical<float>(r),
            (std::vector<float>{static_cast<float>(std::expm1(-1.0)), 0.0f,
                                2.0f}));
}

TEST(CpuEngine, Mvn1NormalisesEachGroup) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {1, 2, 2, 2});
  ExecuteRequest r = Mvn1(t, t, {2, 3});
  r.op.axis_count = 2;
  r.op.normalize_variance = 1;
  r.op.epsilon = 0.0f;
  r.input = MakePayload<float>(t, {0, 1, 2, 3, 4, 5, 6, 7});
  // Each group {k, k+1, k+2, k+3}: mean k+1.5, variance 1.25.
  const double sd = std::sqrt(1.25);
  std::vector<float> expect;
  for (int g = 0; g < 2; ++g) {
    for (int i = 0; i < 4; ++i)
      expect.push_back(static_cast<float>((i - 1.5) / sd));
  }
  EXPECT_EQ(RunLogical<float>(r), expect);
}

TEST(CpuEngine, MvnCrossChannelWithBroadcastScaleBiasAndFusedRelu) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {1, 2, 1, 2});
  TensorDesc sb = MakeTensorDesc(DataType::kFloat32, {1, 2, 1, 1});
  ExecuteRequest r =
      OpRequest(OperatorType::kMeanVarianceNormalization, t, t);
  r.op.scale = sb;
  r.op.bias = sb;
  r.op.cross_channel = 1;
  r.op.normalize_variance = 0;
  r.op.epsilon = 1e-5f;
  FusedActivationDesc relu;
  relu.type = static_cast<uint32_t>(OperatorType::kActivationRelu);
  r.op.fused_activation = relu;
  r.input = MakePayload<float>(t, {1, 2, 3, 6});  // mean 3
  r.scale = MakePayload<float>(sb, {2, 10});
  r.bias = MakePayload<float>(sb, {1, -1});
  // centred {-2,-1,0,3}; channel 0: *2+1 -> {-3,-1}; channel 1: *10-1 ->
  // {-1, 29}; RELU -> {0,0,0,29}.
  EXPECT_EQ(RunLogical<float>(r), (std::vector<float>{0, 0, 0, 29}));
}

TEST(CpuEngine, MvnNanPoisonsOnlyItsGroup) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {2, 2});
  ExecuteRequest r = Mvn1(t, t, {1});
  r.op.normalize_variance = 1;
  r.op.epsilon = 1e-5f;
  r.input = MakePayload<float>(t, {kNaN, 1, 5, 5});
  std::vector<float> out = RunLogical<float>(r);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], 0.0f);  // constant group with Epsilon > 0: exactly Bias
  EXPECT_EQ(out[3], 0.0f);
}

TEST(CpuEngine, WrongPayloadLengthIsInvalidArgument) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {4});
  ExecuteRequest r = Threshold(t, t, 0.0f);
  r.input = std::string(12, '\0');
  EXPECT_EQ(RunCode(r), absl::StatusCode::kInvalidArgument);
  r.input = std::string(20, '\0');
  EXPECT_EQ(RunCode(r), absl::StatusCode::kInvalidArgument);

  // A total that lies about the strides is caught too.
  TensorDesc lying = MakeTensorDesc(DataType::kFloat32, {4}, {{4}}, 16);
  r = Threshold(lying, t, 0.0f);
  r.input = std::string(16, '\0');
  EXPECT_EQ(RunCode(r), absl::StatusCode::kInvalidArgument);

  TensorDesc s = MakeTensorDesc(DataType::kFloat32, {1, 1, 1, 1});
  TensorDesc m = MakeTensorDesc(DataType::kFloat32, {1, 1, 1, 4});
  ExecuteRequest mvn = Mvn1(m, m, {3});
  mvn.op.scale = s;
  mvn.input = std::string(16, '\0');
  mvn.scale = std::string(3, '\0');
  EXPECT_EQ(RunCode(mvn), absl::StatusCode::kInvalidArgument);
  mvn.scale = std::string(4, '\0');
  EXPECT_TRUE(CpuEngine::Run(mvn).ok());
}

TEST(CpuEngine, UnknownOperatorIsInvalidArgument) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {4});
  ExecuteRequest r = Threshold(t, t, 0.0f);
  r.op.type = static_cast<uint32_t>(OperatorType::kActivationSoftmax);
  r.input = std::string(16, '\0');
  EXPECT_EQ(RunCode(r), absl::StatusCode::kInvalidArgument);
}

CpuEngineOptions TwoThreads() {
  CpuEngineOptions options;
  options.threads = 2;
  return options;
}

absl::StatusOr<ExecuteResult> ExecuteAndWait(CpuEngine& engine,
                                             ExecuteRequest r) {
  absl::Notification done;
  absl::StatusOr<ExecuteResult> out;
  std::atomic<int> calls{0};
  engine.Execute(std::move(r), [&](absl::StatusOr<ExecuteResult> result) {
    out = std::move(result);
    ++calls;
    done.Notify();
  });
  done.WaitForNotification();
  EXPECT_EQ(calls.load(), 1);
  return out;
}

TEST(CpuEngine, ExecuteRunsOnThePoolAndHonoursDeadlineAndCancel) {
  CpuEngine engine(TwoThreads());
  EXPECT_EQ(engine.device_info().kind, "cpu");
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {4});
  ExecuteRequest r = Threshold(t, t, 0.0f);
  r.input = MakePayload<float>(t, {-1, 1, -2, 2});
  auto ok = ExecuteAndWait(engine, r);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ReadLogical<float>(t, ok->output),
            (std::vector<float>{0, 1, 0, 2}));

  ExecuteRequest late = r;
  late.deadline = absl::Now() - absl::Seconds(1);
  EXPECT_EQ(ExecuteAndWait(engine, late).status().code(),
            absl::StatusCode::kDeadlineExceeded);

  ExecuteRequest cancelled = r;
  cancelled.cancelled = std::make_shared<std::atomic<bool>>(true);
  EXPECT_EQ(ExecuteAndWait(engine, cancelled).status().code(),
            absl::StatusCode::kCancelled);

  ExecuteRequest bad = r;
  bad.input.mutable_string().resize(3);
  EXPECT_EQ(ExecuteAndWait(engine, bad).status().code(),
            absl::StatusCode::kInvalidArgument);

  engine.Shutdown();
  EXPECT_EQ(ExecuteAndWait(engine, r).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(CpuEngine, ManyConcurrentRequestsEachCompleteOnce) {
  CpuEngine engine(TwoThreads());
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {64});
  std::atomic<int> completed{0};
  std::atomic<int> good{0};
  constexpr int kRequests = 200;
  for (int i = 0; i < kRequests; ++i) {
    ExecuteRequest r = Threshold(t, t, static_cast<float>(i));
    r.input = MakePayload<float>(t, {0.0f});
    engine.Execute(std::move(r), [&, i](absl::StatusOr<ExecuteResult> res) {
      if (res.ok() &&
          cpu::Load<float>(res->output.data(), 63) == static_cast<float>(i)) {
        ++good;
      }
      ++completed;
    });
  }
  engine.Shutdown();  // drains
  EXPECT_EQ(completed.load(), kRequests);
  EXPECT_EQ(good.load(), kRequests);
}

// The thread a request of `elements` FLOAT32 elements is answered on.
std::thread::id AnsweringThread(CpuEngine& engine, uint64_t elements) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {elements});
  ExecuteRequest r = Threshold(t, t, 0.0f);
  r.input = MakePayload<float>(t, {1.0f});
  absl::Notification done;
  std::thread::id thread;
  bool ok = false;
  engine.Execute(std::move(r), [&](absl::StatusOr<ExecuteResult> result) {
    ok = result.ok();
    thread = std::this_thread::get_id();
    done.Notify();
  });
  done.WaitForNotification();
  EXPECT_TRUE(ok);
  return thread;
}

TEST(CpuEngine, SmallRequestsRunOnTheCallersThreadLargeOnesOnThePool) {
  CpuEngineOptions options = TwoThreads();
  options.inline_max_bytes = 1024;
  CpuEngine engine(options);
  // 64 elements: 256 bytes in, 256 out.
  EXPECT_EQ(AnsweringThread(engine, 64), std::this_thread::get_id());
  // 1024 elements: 8 KiB in and out, above the bound.
  EXPECT_NE(AnsweringThread(engine, 1024), std::this_thread::get_id());
  EXPECT_EQ(engine.Counters()[0].second, 2u);  // both counted as requests

  options.inline_max_bytes = 0;
  CpuEngine pooled(options);
  EXPECT_NE(AnsweringThread(pooled, 64), std::this_thread::get_id());
}

// Through the pool only, more requests than the runner takes at once: the
// queue moves on when capacity frees (the PoolRunner tells the scheduler when
// its count falls below the limit), not only at shutdown.
TEST(CpuEngine, PooledRequestsBeyondTheRunnersLimitAllComplete) {
  CpuEngineOptions options = TwoThreads();
  options.inline_max_bytes = 0;
  // The dispatch thread would otherwise also wake for its scan of
  // cancelled requests and hide a missing capacity signal.
  options.scheduler.cancel_scan_interval = absl::Hours(1);
  options.scheduler.policy.max_batch_requests = 1;  // four handed out at most
  CpuEngine engine(options);
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {16384});
  std::atomic<int> completed{0};
  constexpr int kRequests = 300;
  for (int i = 0; i < kRequests; ++i) {
    ExecuteRequest r = Threshold(t, t, 0.0f);
    r.input = MakePayload<float>(t, {0.0f});
    engine.Execute(std::move(r), [&](absl::StatusOr<ExecuteResult> res) {
      if (res.ok()) ++completed;
    });
  }
  for (int i = 0; i < 5000 && completed.load() < kRequests; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(completed.load(), kRequests);
  engine.Shutdown();
}

TEST(CpuEngineFloat16, ActivationRoundsOnceAndKeepsSubnormals) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat16, {2, 2}, {{4, 1}});
  ExecuteRequest r = OpRequest(OperatorType::kActivationLinear, t, t);
  r.op.activation = {0.5f, 0.0f};
  // 2^-24 * 0.5 = 2^-25: a tie between 0 and the smallest subnormal -> 0.
  // 3 * 2^-24 * 0.5 = 1.5 * 2^-24 -> 2 * 2^-24 (even). 65504 * 0.5 exact.
  // 1 + 2^-10 (0x3c01) * 0.5 = 0.5 + 2^-11: representable (0x3801).
  r.input = MakePayload<uint16_t>(t, {0x0001, 0x0003, 0x7bff, 0x3c01});
  EXPECT_EQ(RunLogical<uint16_t>(r),
            (std::vector<uint16_t>{0x0000, 0x0002, 0x77ff, 0x3801}));
}

TEST(CpuEngineFloat16, SigmoidAndSoftplusLimits) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat16, {4});
  ExecuteRequest r = OpRequest(OperatorType::kActivationSigmoid, t, t);
  r.input = MakePayload<uint16_t>(
      t, {0xfc00 /*-inf*/, 0x7c00 /*inf*/, 0x0000, 0x7e00 /*NaN*/});
  std::vector<uint16_t> out = RunLogical<uint16_t>(r);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], 0x0000);
  EXPECT_EQ(out[1], 0x3c00);
  EXPECT_EQ(out[2], 0x3800);  // 0.5
  EXPECT_EQ(out[3] & 0x7c00, 0x7c00);
  EXPECT_NE(out[3] & 0x3ff, 0);  // NaN propagates

  r.op.type = static_cast<uint32_t>(OperatorType::kActivationSoftplus);
  r.op.activation = {1.0f, std::nullopt};
  r.input = MakePayload<uint16_t>(t, {0x63d0 /*1000*/, 0xfc00, 0x7c00, 0x0000});
  out = RunLogical<uint16_t>(r);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], 0x63d0);  // softplus(1000) = 1000, not inf
  EXPECT_EQ(out[1], 0x0000);
  EXPECT_EQ(out[2], 0x7c00);
  EXPECT_EQ(out[3], cpu::DoubleToHalfBits(std::log(2.0)));
}

TEST(CpuEngineMvn, ZeroStrideScaleIsPerChannel) {
  // Scale has the input's sizes but strides {0,1,0,0}: one value per
  // channel (OPERATORS.md §4.3.3), valid at every FL.
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {1, 2, 1, 2});
  TensorDesc s =
      MakeTensorDesc(DataType::kFloat32, {1, 2, 1, 2}, {{0, 1, 0, 0}});
  EXPECT_EQ(s.total_tensor_size_in_bytes, 8u);
  ExecuteRequest r = Mvn1(t, t, {3});
  r.op.scale = s;
  r.op.bias = s;
  r.op.normalize_variance = 1;
  r.op.epsilon = 0.0f;
  r.input = MakePayload<float>(t, {1, 3, 10, 20});  // each group: -1, +1
  // Logical values (the zero strides make each channel's pair share one
  // stored element).
  r.scale = MakePayload<float>(s, {2, 2, 3, 3});
  r.bias = MakePayload<float>(s, {0.5f, 0.5f, -0.5f, -0.5f});
  EXPECT_EQ(cpu::Load<float>(r.scale.contiguous().data(), 1), 3.0f);
  EXPECT_EQ(RunLogical<float>(r),
            (std::vector<float>{-1.5f, 2.5f, -3.5f, 2.5f}));
}

TEST(CpuEngineMvn, LargeOffsetFloat16UsesTwoPassVariance) {
  // Values 1000 + {0, 0.5, 1, 1.5}: E[x^2]-E[x]^2 in float32 would lose the
  // variance; two passes in double give exact standardised values.
  TensorDesc t = MakeTensorDesc(DataType::kFloat16, {1, 4});
  ExecuteRequest r = Mvn1(t, t, {1});
  r.op.normalize_variance = 1;
  r.op.epsilon = 0.0f;
  r.input = MakePayload<uint16_t>(
      t, {cpu::DoubleToHalfBits(1000.0), cpu::DoubleToHalfBits(1000.5),
          cpu::DoubleToHalfBits(1001.0), cpu::DoubleToHalfBits(1001.5)});
  const double sd = std::sqrt(0.3125);  // population variance of {0,.5,1,1.5}
  std::vector<uint16_t> expect;
  for (double c : {-0.75, -0.25, 0.25, 0.75}) {
    expect.push_back(cpu::DoubleToHalfBits(c / sd));
  }
  EXPECT_EQ(RunLogical<uint16_t>(r), expect);
}

TEST(CpuEngineMvn, OnlyBiasAndStridedOutput) {
  // FL 5_2+: Bias without Scale. Output written through padded strides.
  TensorDesc in = MakeTensorDesc(DataType::kFloat32, {2, 2});
  TensorDesc out = MakeTensorDesc(DataType::kFloat32, {2, 2}, {{1, 3}});
  TensorDesc b = MakeTensorDesc(DataType::kFloat32, {1, 2});
  ExecuteRequest r = Mvn1(in, out, {0, 1});
  r.op.bias = b;
  r.op.normalize_variance = 0;
  r.op.epsilon = 1e-5f;
  r.input = MakePayload<float>(in, {1, 2, 3, 6});  // mean 3
  r.bias = MakePayload<float>(b, {100, 200});
  EXPECT_EQ(RunLogical<float>(r), (std::vector<float>{98, 199, 100, 203}));
}

TEST(CpuEngineMvn, InconsistentScaleShapeIsInvalidArgument) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {2, 3});
  TensorDesc s = MakeTensorDesc(DataType::kFloat32, {2, 2});
  ExecuteRequest r = Mvn1(t, t, {1});
  r.op.scale = s;
  r.input = std::string(24, '\0');
  r.scale = std::string(16, '\0');
  EXPECT_EQ(RunCode(r), absl::StatusCode::kInvalidArgument);
  r.op.scale.reset();
  r.op.axes = {2};  // out of range
  EXPECT_EQ(RunCode(r), absl::StatusCode::kInvalidArgument);
  r.op.axes = {1, 1};
  EXPECT_EQ(RunCode(r), absl::StatusCode::kInvalidArgument);
}

TEST(CpuEngineLimits, HostileDescriptorsAreRejectedNotExecuted) {
  // Strides whose offsets wrap around 2^64 must not pass the bounds check.
  TensorDesc wrap = MakeTensorDesc(DataType::kFloat32, {1}, std::nullopt, 16);
  wrap.sizes = {4294967295u, 4294967295u, 4294967295u, 4294967295u, 2};
  wrap.strides = std::vector<uint64_t>{4294967295u, 4294967295u, 4294967295u,
                                       4294967295u, 4294967295u};
  ExecuteRequest r = OpRequest(OperatorType::kActivationIdentity, wrap,
                               MakeTensorDesc(DataType::kFloat32, {4}));
  r.input = std::string(16, '\0');
  EXPECT_EQ(RunCode(r), absl::StatusCode::kInvalidArgument);

  // A broadcasting (overlapping) output with billions of elements in a
  // 16-byte buffer.
  TensorDesc in = MakeTensorDesc(DataType::kFloat32, {65536, 65536}, {{0, 0}});
  TensorDesc out = in;
  r.op.input = in;
  r.op.output = out;
  r.input = std::string(in.total_tensor_size_in_bytes, '\0');
  EXPECT_EQ(RunCode(r), absl::StatusCode::kInvalidArgument);
}

TEST(CpuEngineLimits, LargeOutputsHitTheMemoryCap) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {1024});
  ExecuteRequest r = OpRequest(OperatorType::kActivationRelu, t, t);
  r.input = std::string(4096, '\0');
  CpuEngineOptions small;
  small.max_buffer_bytes = 4095;
  EXPECT_EQ(CpuEngine::Run(r, small).status().code(),
            absl::StatusCode::kResourceExhausted);
  small.max_buffer_bytes = 4096;
  EXPECT_TRUE(CpuEngine::Run(r, small).ok());
}

}  // namespace
}  // namespace dmls
