// Operators through the real GpuEngine (engine/dxbc kernels and planner) on
// the software adapter, against hand-computed expectations. Every run has
// poisoned outputs: an unwritten element reads back as NaN and fails the
// comparison, and a write past the output's end fails the request with
// INTERNAL. The cross-engine conformance suite over every operator x type x
// layout lives in tests/; this file checks the runtime's side: typed views,
// in-place aliasing, strided layouts, view/dispatch splitting, FP16 tails,
// steady-state reuse with real kernels.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/execute_sync.h"
#include "engine/d3d12/test_adapter.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/plan/planner.h"
#include "engine/ops/validator.h"
#include "gtest/gtest.h"

namespace dmls::d3d12 {
namespace {

std::string FloatBytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

std::vector<float> Floats(const std::string& s, size_t n) {
  std::vector<float> v(n);
  std::memcpy(v.data(), s.data(), n * 4);
  return v;
}

std::vector<float> Inputs(size_t n) {
  std::vector<float> v(n);
  uint32_t seed = 99;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = static_cast<float>(static_cast<int32_t>(seed)) / 2147483648.0f * 6.0f;
  }
  if (n > 4) {
    v[0] = 0.0f;
    v[1] = -0.0f;
    v[2] = 1e-30f;
    v[3] = -50.0f;
  }
  return v;
}

OperatorDesc Elementwise(OperatorType type, std::vector<uint64_t> sizes,
                         std::optional<std::vector<uint64_t>> in_strides = {}) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(type);
  op.input = MakeTensorDesc(DataType::kFloat32, sizes, in_strides);
  op.output = MakeTensorDesc(DataType::kFloat32, sizes);
  return op;
}

// A TANH over 2^21 elements: milliseconds on lavapipe, so that requests
// sent right after it queue up behind it and batch together.
ExecuteRequest SlowRequest() {
  ExecuteRequest r;
  r.op = Elementwise(OperatorType::kActivationTanh, {1, 1, 1, 1 << 21});
  r.input = std::string(r.op.input->total_tensor_size_in_bytes, '\0');
  return r;
}

class GpuOperatorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    GpuEngineOptions o;
    o.device.kind = TestAdapterKind();
    o.poison_outputs = true;
    absl::StatusOr<std::unique_ptr<GpuEngine>> e = CreateGpuEngine(std::move(o));
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = e->release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }

  // Runs `op` on `input` and compares every output element with `expect`
  // within |got - want| <= abs + rel * |want|.
  void Check(const OperatorDesc& op, const std::vector<float>& input,
             const std::function<float(float)>& expect, double rel, double abs,
             bool in_place = false) {
    ASSERT_NE(engine_, nullptr);
    ASSERT_TRUE(ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), in_place).ok())
        << ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), in_place);
    ExecuteRequest r;
    r.op = op;
    r.in_place = in_place;
    r.input = FloatBytes(input);
    r.input.mutable_string().resize(op.input->total_tensor_size_in_bytes, '\0');
    absl::StatusOr<ExecuteResult> res = ExecuteSync(*engine_, std::move(r));
    ASSERT_TRUE(res.ok()) << res.status();
    const std::vector<uint64_t>& sizes = op.output->sizes;
    const std::vector<uint64_t> in_strides = EffectiveStrides(*op.input);
    const uint64_t n = ElementCount(sizes);
    ASSERT_GE(res->output.size(), n * 4);
    std::vector<float> got = Floats(res->output, n);
    // Walk the logical index space: output packed, input strided.
    std::vector<uint64_t> idx(sizes.size(), 0);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t in_off = 0;
      for (size_t d = 0; d < sizes.size(); ++d) in_off += idx[d] * in_strides[d];
      const float x = input[in_off];
      const float want = expect(x);
      const float g = got[i];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(g)) << "element " << i << " x=" << x;
      } else {
        EXPECT_LE(std::fabs(static_cast<double>(g) - want), abs + rel * std::fabs(want))
            << "element " << i << " x=" << x << " got " << g << " want " << want;
      }
      if (::testing::Test::HasFailure()) return;
      for (size_t d = sizes.size(); d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
  }

  static GpuEngine* engine_;
};

GpuEngine* GpuOperatorsTest::engine_ = nullptr;

TEST_F(GpuOperatorsTest, Celu) {
  OperatorDesc op = Elementwise(OperatorType::kActivationCelu, {1, 1, 1, 1003});
  op.activation = {0.5f, std::nullopt};
  Check(op, Inputs(1003), [](float x) {
    return static_cast<float>(std::max(0.0, double{x}) +
                              std::min(0.0, 0.5 * std::expm1(double{x} / 0.5)));
  }, 1e-5, 1e-6);
}

TEST_F(GpuOperatorsTest, ThresholdWithScaleBias) {
  OperatorDesc op = Elementwise(OperatorType::kElementWiseThreshold, {2, 3, 5, 7});
  op.min = 0.25f;
  op.scale_bias = ScaleBias{2.0f, -1.0f};
  Check(op, Inputs(210), [](float x) { return std::max(x * 2.0f - 1.0f, 0.25f); },
        1e-6, 1e-6);
}

TEST_F(GpuOperatorsTest, Clip) {
  OperatorDesc op = Elementwise(OperatorType::kElementWiseClip, {1, 1, 1, 4097});
  op.min = -1.0f;
  op.max = 1.5f;
  Check(op, Inputs(4097), [](float x) { return std::min(1.5f, std::max(-1.0f, x)); },
        0, 0);
}

TEST_F(GpuOperatorsTest, ReluInPlace) {
  OperatorDesc op = Elementwise(OperatorType::kActivationRelu, {1, 1, 1, 4099});
  Check(op, Inputs(4099), [](float x) { return std::max(0.0f, x); }, 0, 0,
        /*in_place=*/true);
}

TEST_F(GpuOperatorsTest, SigmoidAndTanh) {
  Check(Elementwise(OperatorType::kActivationSigmoid, {1, 1, 1, 515}), Inputs(515),
        [](float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-double{x}))); },
        1e-5, 1e-6);
  Check(Elementwise(OperatorType::kActivationTanh, {1, 1, 1, 515}), Inputs(515),
        [](float x) { return static_cast<float>(std::tanh(double{x})); }, 1e-5, 1e-6);
}

TEST_F(GpuOperatorsTest, StridedPaddedAndBroadcastInputs) {
  // Rows of 5 elements in an 8-element pitch.
  OperatorDesc padded =
      Elementwise(OperatorType::kActivationRelu, {1, 1, 3, 5}, std::vector<uint64_t>{0, 0, 8, 1});
  Check(padded, Inputs(21), [](float x) { return std::max(0.0f, x); }, 0, 0);
  // One row broadcast to four (zero stride).
  OperatorDesc broadcast =
      Elementwise(OperatorType::kActivationRelu, {1, 1, 4, 6}, std::vector<uint64_t>{0, 0, 0, 1});
  Check(broadcast, Inputs(6), [](float x) { return std::max(0.0f, x); }, 0, 0);
}

TEST_F(GpuOperatorsTest, Float16TailElements) {
  // 7 halves: the last DWORD holds one element and one padding half.
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationRelu);
  op.input = MakeTensorDesc(DataType::kFloat16, {1, 1, 1, 7});
  op.output = op.input;
  ASSERT_TRUE(ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), false).ok());
  const uint16_t in[7] = {0x3C00, 0xBC00, 0x0001, 0x8001, 0x7BFF, 0xFBFF, 0x4200};
  const uint16_t want[7] = {0x3C00, 0x0000, 0x0001, 0x0000, 0x7BFF, 0x0000, 0x4200};
  ExecuteRequest r;
  r.op = op;
  r.input = std::string(op.input->total_tensor_size_in_bytes, '\0');
  std::memcpy(r.input.mutable_string().data(), in, sizeof(in));
  absl::StatusOr<ExecuteResult> res = ExecuteSync(*engine_, std::move(r));
  ASSERT_TRUE(res.ok()) << res.status();
  ASSERT_GE(res->output.size(), sizeof(want));
  uint16_t got[7];
  std::memcpy(got, res->output.data(), sizeof(got));
  for (int i = 0; i < 7; ++i) {
    // -0 is an acceptable relu result for negative inputs.
    EXPECT_TRUE(got[i] == want[i] || (want[i] == 0 && got[i] == 0x8000))
        << i << ": " << std::hex << got[i];
  }
}

TEST_F(GpuOperatorsTest, SteadyStateWithRealKernelsCreatesNoResources) {
  OperatorDesc op = Elementwise(OperatorType::kActivationCelu, {1, 1, 1, 50000});
  op.activation = {1.0f, std::nullopt};
  std::vector<float> in = Inputs(50000);
  uint64_t created = 0;
  uint64_t pipelines = 0;
  for (int i = 0; i < 10; ++i) {
    ExecuteRequest r;
    r.op = op;
    r.input = FloatBytes(in);
    ASSERT_TRUE(ExecuteSync(*engine_, std::move(r)).ok());
    if (i == 2) {
      created = engine_->stats().pool.resources_created;
      pipelines = engine_->stats().pipelines;
    }
  }
  EXPECT_EQ(engine_->stats().pool.resources_created, created);
  EXPECT_EQ(engine_->stats().pipelines, pipelines);
}

TEST_F(GpuOperatorsTest, Mvn1WithScaleBiasAndFusedRelu) {
  const uint64_t rows = 3, cols = 1000;
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
  op.input = MakeTensorDesc(DataType::kFloat32, {1, 1, rows, cols});
  op.output = op.input;
  op.scale = MakeTensorDesc(DataType::kFloat32, {1, 1, 1, cols});
  op.bias = op.scale;
  op.axis_count = 1;
  op.axes = {3};
  op.normalize_variance = 1;
  op.epsilon = 1e-5f;
  FusedActivationDesc relu;
  relu.type = static_cast<uint32_t>(OperatorType::kActivationRelu);
  op.fused_activation = relu;
  ASSERT_TRUE(ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), false).ok())
      << ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), false);

  std::vector<float> x = Inputs(rows * cols);
  for (uint64_t c = 0; c < cols; ++c) x[cols + c] = 3.0f;  // a constant row
  std::vector<float> scale(cols), bias(cols);
  for (uint64_t c = 0; c < cols; ++c) {
    scale[c] = 0.5f + static_cast<float>(c % 7) * 0.25f;
    bias[c] = static_cast<float>(c % 5) * 0.1f - 0.2f;
  }
  ExecuteRequest r;
  r.op = op;
  r.input = FloatBytes(x);
  r.scale = FloatBytes(scale);
  r.bias = FloatBytes(bias);
  absl::StatusOr<ExecuteResult> res = ExecuteSync(*engine_, std::move(r));
  ASSERT_TRUE(res.ok()) << res.status();
  std::vector<float> got = Floats(res->output, rows * cols);
  for (uint64_t row = 0; row < rows; ++row) {
    double mean = 0, var = 0;
    for (uint64_t c = 0; c < cols; ++c) mean += x[row * cols + c];
    mean /= cols;
    for (uint64_t c = 0; c < cols; ++c) {
      const double d = x[row * cols + c] - mean;
      var += d * d;
    }
    var /= cols;
    for (uint64_t c = 0; c < cols; ++c) {
      const double y = (x[row * cols + c] - mean) / std::sqrt(var + 1e-5) * scale[c] + bias[c];
      const double want = std::max(0.0, y);
      ASSERT_NEAR(got[row * cols + c], want, 1e-5 + 1e-4 * std::fabs(want))
          << "row " << row << " col " << c;
    }
  }
}

// The planner's view and group limits, shrunk so that a small tensor needs
// many dispatches: the runtime must honour each view's first_element.
TEST(GpuSplitTest, HonoursViewOffsetsAcrossManyDispatches) {
  GpuEngineOptions o;
  o.device.kind = TestAdapterKind();
  o.poison_outputs = true;
  gpu::PlannerOptions small;
  small.max_view_texels = 256;
  small.max_groups = 3;
  o.planner = [small](const OperatorDesc& op, bool in_place) {
    return gpu::PlanExecution(op, in_place, small);
  };
  absl::StatusOr<std::unique_ptr<GpuEngine>> engine = CreateGpuEngine(std::move(o));
  ASSERT_TRUE(engine.ok()) << engine.status();

  const size_t n = 100003;
  OperatorDesc op = Elementwise(OperatorType::kElementWiseClip, {1, 1, 1, n});
  op.min = -0.5f;
  op.max = 0.5f;
  std::vector<float> in = Inputs(n);
  ExecuteRequest r;
  r.op = op;
  r.input = FloatBytes(in);
  absl::StatusOr<ExecuteResult> res = ExecuteSync(**engine, std::move(r));
  ASSERT_TRUE(res.ok()) << res.status();
  std::vector<float> got = Floats(res->output, n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], std::min(0.5f, std::max(-0.5f, in[i]))) << i;
  }
  EXPECT_GT((*engine)->stats().dispatches, 10u);
}

// Rings that hold only three dispatches: a burst of requests fills them
// mid-batch, and the engine must submit, wait for the GPU and carry on
// instead of failing requests.
TEST(GpuRingTest, FullRingsDrainInsteadOfFailing) {
  GpuEngineOptions o;
  o.device.kind = TestAdapterKind();
  o.binder.descriptor_capacity = 15;
  o.binder.constant_blocks = 3;
  o.coalesce = false;  // one constant block per request, to fill the ring
  absl::StatusOr<std::unique_ptr<GpuEngine>> engine = CreateGpuEngine(std::move(o));
  ASSERT_TRUE(engine.ok()) << engine.status();
  // The burst behind a slow first request queues up, so that one batch
  // takes more requests than the rings hold.
  std::future<absl::StatusOr<ExecuteResult>> first = ExecuteAsync(**engine, SlowRequest());
  OperatorDesc op = Elementwise(OperatorType::kActivationRelu, {1, 1, 1, 64});
  const std::vector<float> in = Inputs(64);
  std::vector<std::future<absl::StatusOr<ExecuteResult>>> futures;
  for (int i = 0; i < 40; ++i) {
    ExecuteRequest r;
    r.op = op;
    r.input = FloatBytes(in);
    futures.push_back(ExecuteAsync(**engine, std::move(r)));
  }
  for (auto& f : futures) {
    absl::StatusOr<ExecuteResult> res = f.get();
    ASSERT_TRUE(res.ok()) << res.status();
    std::vector<float> got = Floats(res->output, 64);
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(got[i], std::max(0.0f, in[i]));
  }
  EXPECT_TRUE(first.get().ok());
  GpuEngineStats s = (*engine)->stats();
  EXPECT_EQ(s.requests, 41u);
  EXPECT_GT(s.drains, 0u);
  EXPECT_LE(s.largest_batch, 3u);
}

// Many concurrent small element-wise requests behind a slow one: the
// scheduler batches them and the runner coalesces each kernel's group into
// one dispatch over concatenated ranges. Every result must equal the CPU
// reference bit for bit (RELU and THRESHOLD are exact), whatever its size,
// data type or in-place flag.
TEST(GpuCoalescingTest, ConcurrentSmallRequestsShareDispatchesAndStayExact) {
  GpuEngineOptions o;
  o.device.kind = TestAdapterKind();
  absl::StatusOr<std::unique_ptr<GpuEngine>> engine = CreateGpuEngine(std::move(o));
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::future<absl::StatusOr<ExecuteResult>> first = ExecuteAsync(**engine, SlowRequest());

  struct Case {
    ExecuteRequest request;
    std::string expected;
    uint64_t compare_bytes;
  };
  std::vector<Case> cases;
  const int kRequests = 300;
  for (int i = 0; i < kRequests; ++i) {
    const uint64_t n = 1 + (i * 37) % 257;
    ExecuteRequest r;
    const bool half = i % 5 == 4;
    const OperatorType type =
        i % 3 == 0 ? OperatorType::kElementWiseThreshold : OperatorType::kActivationRelu;
    r.op.type = static_cast<uint32_t>(type);
    r.op.input = MakeTensorDesc(half ? DataType::kFloat16 : DataType::kFloat32, {1, n});
    r.op.output = r.op.input;
    if (type == OperatorType::kElementWiseThreshold) r.op.min = 0.25f;
    r.in_place = i % 7 == 0;
    std::string bytes(r.op.input->total_tensor_size_in_bytes, '\0');
    uint32_t seed = 1234 + i;
    for (size_t b = 0; b + 1 < bytes.size(); b += 2) {
      seed = seed * 1664525u + 1013904223u;
      // Finite values of either type: keep the exponent bits away from all ones.
      bytes[b] = static_cast<char>(seed >> 8);
      bytes[b + 1] = static_cast<char>((seed >> 24) & 0xBF);
    }
    r.input = bytes;
    absl::StatusOr<ExecuteResult> want = CpuEngine::Run(r);
    ASSERT_TRUE(want.ok()) << want.status();
    const uint64_t elem = half ? 2 : 4;
    cases.push_back({std::move(r), want->output, n * elem});
  }
  std::vector<std::future<absl::StatusOr<ExecuteResult>>> futures;
  for (Case& c : cases) futures.push_back(ExecuteAsync(**engine, std::move(c.request)));
  for (size_t i = 0; i < futures.size(); ++i) {
    absl::StatusOr<ExecuteResult> res = futures[i].get();
    ASSERT_TRUE(res.ok()) << i << ": " << res.status();
    ASSERT_EQ(res->output.substr(0, cases[i].compare_bytes),
              cases[i].expected.substr(0, cases[i].compare_bytes))
        << "request " << i;
  }
  EXPECT_TRUE(first.get().ok());
  GpuEngineStats s = (*engine)->stats();
  EXPECT_EQ(s.requests, kRequests + 1u);
  EXPECT_GE(s.coalesced_requests, kRequests / 2u);
  // Six keys (op x type x in-place) per batch at most: far fewer dispatches.
  EXPECT_LT(s.dispatches, kRequests / 4u);
  EXPECT_EQ(s.scheduler.expired, 0u);
}

}  // namespace
}  // namespace dmls::d3d12
