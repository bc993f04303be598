// Every corpus case (element-wise ops on every type and layout, MVN/MVN1
// with every fused activation, edge values, large tensors) executed with
// engine/dxbc's kernels and plans on the Direct3D 12 engine's software
// adapter, compared with the float64 oracle under OPERATORS.md §8.
// DMLS_KERNELS_TEST_ADAPTER=gpu runs it on the hardware GPU instead (the
// H200 check: lavapipe accepts some usage NVIDIA's driver may not), and
// DMLS_CONFORMANCE_DATA_DIR overrides the corpus directory for binaries
// copied to another machine, and DMLS_CONFORMANCE_FILTER runs only the
// cases whose id contains it (DMLS_CONFORMANCE_NO_FTZ=1 refuses the §7.5
// flushed-input alternative).
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <ostream>
#include <string>

#include "engine/core/execute_sync.h"
#include "engine/d3d12/test_adapter.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/cpu/tensor_access.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/ops/schema.h"
#include "engine/ops/validator.h"
#include "gtest/gtest.h"
#include "tests/conformance/corpus.h"
#include "tests/conformance/tolerance.h"

namespace dmls::gpu {
namespace {

std::string CorpusDir() {
  const char* dir = std::getenv("DMLS_CONFORMANCE_DATA_DIR");
  return dir ? dir : DMLS_CONFORMANCE_DATA_DIR;
}

// The corpus on the test adapter; DMLS_CONFORMANCE_FILTER: only the cases
// whose id contains it.
conformance::CorpusReport RunOnTestAdapter(const conformance::CaseSet& corpus) {
  d3d12::GpuEngineOptions o;
  o.device.kind = d3d12::TestAdapterKind();
  absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine = d3d12::CreateGpuEngine(std::move(o));
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return {};
  conformance::RunOptions options;
  options.max_in_flight = 8;
  if (const char* filter = std::getenv("DMLS_CONFORMANCE_FILTER")) options.id_filter = filter;
  // DMLS_CONFORMANCE_NO_FTZ=1: require `expected` (does this device flush
  // float32 denormal inputs, §7.5?).
  if (const char* no_ftz = std::getenv("DMLS_CONFORMANCE_NO_FTZ")) {
    options.accept_ftz = std::string(no_ftz) != "1";
  }
  return conformance::RunCorpus(**engine, corpus, options);
}

// One test per corpus file (the random one in four shards), so that ctest
// runs them side by side and gives each its own time limit: on a new
// machine every kernel is compiled by lavapipe's LLVM on first use (Mesa's
// shader cache is empty). The whole corpus as one test took 1,220 s of CPU
// that way, past the suite's 900 s per-test limit; conformance_random alone
// 731 s, fused 211, mvn 60, elementwise 46, edge 44, large 5.
struct CorpusPart {
  const char* file;
  int shard;   // cases whose index % shards == shard
  int shards;
};

constexpr CorpusPart kCorpusParts[] = {
    {"conformance_edge", 0, 1},   {"conformance_elementwise", 0, 1},
    {"conformance_fused", 0, 1},  {"conformance_large", 0, 1},
    {"conformance_mvn", 0, 1},    {"conformance_random", 0, 4},
    {"conformance_random", 1, 4}, {"conformance_random", 2, 4},
    {"conformance_random", 3, 4},
};

void PrintTo(const CorpusPart& p, std::ostream* os) {
  *os << p.file << " shard " << p.shard << "/" << p.shards;
}

class CorpusFileTest : public ::testing::TestWithParam<CorpusPart> {};

TEST_P(CorpusFileTest, PassesOnTheTestAdapter) {
  const CorpusPart part = GetParam();
  absl::StatusOr<conformance::CaseSet> all =
      conformance::LoadCaseSet(CorpusDir() + "/" + part.file + ".pb");
  ASSERT_TRUE(all.ok()) << all.status();
  conformance::CaseSet cases;
  for (int i = 0; i < all->cases_size(); ++i) {
    if (i % part.shards == part.shard) *cases.add_cases() = all->cases(i);
  }
  ASSERT_GT(cases.cases_size(), 0);
  const conformance::CorpusReport report = RunOnTestAdapter(cases);
  if (!std::getenv("DMLS_CONFORMANCE_FILTER")) {
    EXPECT_EQ(report.total, cases.cases_size());
  }
  // Every failing id (up to 500): a GPU run's log is the list to act on.
  EXPECT_EQ(report.passed, report.total) << report.Summary(500);
}

INSTANTIATE_TEST_SUITE_P(
    KernelsGpuTest, CorpusFileTest, ::testing::ValuesIn(kCorpusParts),
    [](const ::testing::TestParamInfo<CorpusPart>& info) {
      const CorpusPart& p = info.param;
      if (p.shards == 1) return std::string(p.file);
      return std::string(p.file) + "_" + std::to_string(p.shard) + "of" +
             std::to_string(p.shards);
    });

// A corpus file added to tests/data without a test above would go unrun.
TEST(KernelsGpuTest, EveryCorpusFileHasItsTest) {
  absl::StatusOr<std::vector<std::string>> names = conformance::CorpusFileNames(CorpusDir());
  ASSERT_TRUE(names.ok()) << names.status();
  std::vector<std::string> listed;
  for (const CorpusPart& p : kCorpusParts) {
    const std::string name = std::string(p.file) + ".pb";
    if (listed.empty() || listed.back() != name) listed.push_back(name);
  }
  EXPECT_EQ(*names, listed);
  // Every shard of a file is there exactly once.
  for (const CorpusPart& p : kCorpusParts) {
    int found = 0;
    for (const CorpusPart& q : kCorpusParts) {
      if (std::string(q.file) == p.file && q.shards == p.shards) ++found;
    }
    EXPECT_EQ(found, p.shards) << p.file;
  }
}

// Regressions found by tests/robustness (mutated corpus requests): valid
// descriptors on which the Direct3D 12 engine disagreed with the CPU
// reference beyond the §8 tolerance. Each runs on the test adapter and
// is compared element by element with CpuEngine::Run.
class GpuVsCpuRegressionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    d3d12::GpuEngineOptions o;
    o.device.kind = d3d12::TestAdapterKind();
    o.poison_outputs = true;
    absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> e = d3d12::CreateGpuEngine(std::move(o));
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = e->release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }

  // Runs `op` with `input` (FLOAT32 values packed at the input's element
  // offsets, the rest zero) on both engines and compares the outputs.
  // With `fill_padding`, every element slot of the buffer (padding too)
  // holds values[slot % size] instead.
  static void ExpectGpuMatchesCpu(const OperatorDesc& op, const std::vector<float>& values,
                                  bool fill_padding = false) {
    ASSERT_TRUE(ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), false).ok());
    ExecuteRequest r;
    r.op = op;
    r.input = std::string(op.input->total_tensor_size_in_bytes, '\0');
    const std::vector<uint64_t> offsets = cpu::ElementOffsets(*op.input);
    for (size_t i = 0; i < offsets.size(); ++i) {
      const float v = values[i % values.size()];
      std::memcpy(&r.input.mutable_string()[offsets[i] * 4], &v, 4);
    }
    if (fill_padding) {
      for (size_t slot = 0; slot < r.input.size() / 4; ++slot) {
        std::memcpy(&r.input.mutable_string()[slot * 4], &values[slot % values.size()], 4);
      }
    }
    absl::StatusOr<ExecuteResult> want = CpuEngine::Run(r);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<ExecuteResult> got = ExecuteSync(*engine_, r);
    ASSERT_TRUE(got.ok()) << got.status();
    const ops::OperatorSchema* schema = ops::FindOperator(op.type);
    std::string cls(ops::ToleranceClassName(schema->tolerance));
    if (cls == "EXACT" && op.scale_bias) cls = "ARITH";
    absl::StatusOr<conformance::Tolerance> tol = conformance::ToleranceFor(cls, DataType::kFloat32);
    ASSERT_TRUE(tol.ok());
    std::string a, e;
    for (uint64_t o : cpu::ElementOffsets(*op.output)) {
      a.append(got->output.data() + o * 4, 4);
      e.append(want->output.data() + o * 4, 4);
    }
    const std::optional<conformance::Mismatch> m =
        conformance::CompareElements(a, e, DataType::kFloat32, a.size() / 4, *tol);
    EXPECT_FALSE(m) << m->message;
  }

  static d3d12::GpuEngine* engine_;
};
d3d12::GpuEngine* GpuVsCpuRegressionTest::engine_ = nullptr;

const std::vector<float> kValues = {0.5f, -1.25f, 3.0f, -0.0f, 2.5f, -7.0f, 0.125f, 1.0f, -2.0f};

TEST_F(GpuVsCpuRegressionTest, ThresholdedReluWithNaNAlphaGivesZero) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationThresholdedRelu);
  op.input = MakeTensorDesc(DataType::kFloat32, {3, 5});
  op.output = op.input;
  // Both signs: the integer ordering key put a -NaN below every number.
  op.activation = {std::numeric_limits<float>::quiet_NaN(), std::nullopt};
  ExpectGpuMatchesCpu(op, kValues);
  op.activation = {-std::numeric_limits<float>::quiet_NaN(), std::nullopt};
  ExpectGpuMatchesCpu(op, kValues);
}

TEST_F(GpuVsCpuRegressionTest, ShrinkWithNaNThreshold) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationShrink);
  op.input = MakeTensorDesc(DataType::kFloat32, {3, 5});
  op.output = op.input;
  op.activation = {0.5f, -std::numeric_limits<float>::quiet_NaN()};
  ExpectGpuMatchesCpu(op, kValues);
  op.activation = {0.5f, std::numeric_limits<float>::quiet_NaN()};
  ExpectGpuMatchesCpu(op, kValues);
}

TEST_F(GpuVsCpuRegressionTest, ParametricSoftplusWithHugeBetaDoesNotOverflow) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationParametricSoftplus);
  op.input = MakeTensorDesc(DataType::kFloat32, {3, 3});
  op.output = op.input;
  op.activation = {1.5f, std::numeric_limits<float>::max()};
  ExpectGpuMatchesCpu(op, {0.375f, 0.5f, -0.5f, 1e-3f});
  op.activation = {1.5f, std::numeric_limits<float>::lowest()};
  ExpectGpuMatchesCpu(op, {-1e-8f, 0.5f, -0.5f, -1e-3f});
}

TEST_F(GpuVsCpuRegressionTest, ParametricSoftplusWithInfiniteAlpha) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationParametricSoftplus);
  op.input = MakeTensorDesc(DataType::kFloat32, {3, 3});
  op.output = op.input;
  op.activation = {std::numeric_limits<float>::infinity(), 1.0f};
  ExpectGpuMatchesCpu(op, kValues);
  // softplus(-120) is about 7.7e-53: zero in float32, yet Alpha*it is inf.
  ExpectGpuMatchesCpu(op, {-120.0f, -500.0f, -1e30f, 0.5f});
  op.activation = {-std::numeric_limits<float>::infinity(), 1.0f};
  ExpectGpuMatchesCpu(op, {-120.0f, -500.0f, -1e30f, 0.5f});
}

TEST_F(GpuVsCpuRegressionTest, ParametricSoftplusWithHugeAlphaAndTinySoftplus) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationParametricSoftplus);
  op.input = MakeTensorDesc(DataType::kFloat32, {2, 4});
  op.output = op.input;
  // softplus(-95) = 5.5e-42 (denormal in float32); times FLT_MAX it is 1.9e-3.
  const std::vector<float> x = {-79.0f, -81.0f, -95.0f, -100.0f, -110.0f, -120.0f, -130.0f, -200.0f};
  op.activation = {std::numeric_limits<float>::max(), 1.0f};
  ExpectGpuMatchesCpu(op, x);
  op.activation = {-3e38f, 0.5f};
  ExpectGpuMatchesCpu(op, {-170.0f, -190.0f, -210.0f, -230.0f, -250.0f});
}

TEST_F(GpuVsCpuRegressionTest, CeluWithNegativeAlphaAndLargeQuotient) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationCelu);
  op.input = MakeTensorDesc(DataType::kFloat32, {3, 4});
  op.output = op.input;
  // x/Alpha up to 68: Alpha*(exp(x/Alpha) - 1) is about -1e30, and every
  // rounding of x/Alpha or of x/Alpha*log2(e) costs tens of ulp.
  op.activation = {-4.41491556f, std::nullopt};
  ExpectGpuMatchesCpu(op, {-164.819f, -121.486f, -62.4462f, -44.2633f, -200.0f, -300.0f,
                           -1.5f, -0.1f, 2.0f, -285.167f, -33.9363f, -58.4581f});
  op.activation = {-0.3f, std::nullopt};
  ExpectGpuMatchesCpu(op, {-26.61f, -26.0f, -27.0f, -30.0f, -20.0f});
  op.activation = {-1e-5f, std::nullopt};
  // x/Alpha = 99: exp overflows float32, Alpha times it is -1.09e38.
  ExpectGpuMatchesCpu(op, {-0.000991f, -0.00099f, -0.00085f, -0.00079f});
  ExpectGpuMatchesCpu(op, {-0.000356437f, -0.00081f, -0.0004264f, -0.0001f, -0.00066f, 1.0f});
}

TEST_F(GpuVsCpuRegressionTest, ScaledTanhWithInfiniteAlphaAndUnderflowingProduct) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationScaledTanh);
  op.input = MakeTensorDesc(DataType::kFloat32, {2, 4});
  op.output = op.input;
  const float kInf = std::numeric_limits<float>::infinity();
  // 1e-30 * 1e-30 underflows in float32; tanh of it is not 0 in float64.
  const std::vector<float> x = {1e-30f, -1e-30f, 0.0f, -0.0f, 2.0f, kInf, -kInf, 1.17549435e-38f};
  op.activation = {kInf, 1e-30f};
  ExpectGpuMatchesCpu(op, x);
  op.activation = {-kInf, -1e-30f};
  ExpectGpuMatchesCpu(op, x);
}

TEST_F(GpuVsCpuRegressionTest, LinearWhoseProductAloneOverflows) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationLinear);
  op.input = MakeTensorDesc(DataType::kFloat32, {2, 4});
  op.output = op.input;
  const float kMax = std::numeric_limits<float>::max();
  const float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {kMax, -kMax, 2e38f, -2e38f, 1.0f, kInf, -kInf, 0.0f};
  op.activation = {2.0f, -kInf};  // 2*FLT_MAX - inf is -inf, not NaN
  ExpectGpuMatchesCpu(op, x);
  op.activation = {2.0f, -3e38f};  // 4e38 - 3e38 = 1e38, not inf
  ExpectGpuMatchesCpu(op, x);
  op.activation = {kMax, kMax};  // truly beyond the range: inf
  ExpectGpuMatchesCpu(op, x);
  op.activation = {kMax, -kMax};
  ExpectGpuMatchesCpu(op, {0.138f, 0.00117009f, 0.932954f, 1.0f, 0.5f, -0.25f});
}

TEST_F(GpuVsCpuRegressionTest, ThresholdScaleBiasWhoseProductAloneOverflows) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kElementWiseThreshold);
  op.input = MakeTensorDesc(DataType::kFloat32, {2, 4});
  op.output = op.input;
  op.min = -std::numeric_limits<float>::max();
  op.scale_bias = ScaleBias{4.0f, -3e38f};
  ExpectGpuMatchesCpu(op, {1e38f, 3e37f, -1.0f, 0.25f});
}

// Integer ScaleBias: the reference computes x*Scale + Bias in double.
TEST(GpuIntScaleBiasRegressionTest, InfiniteBiasAndDoubleRounding) {
  d3d12::GpuEngineOptions o;
  o.device.kind = d3d12::TestAdapterKind();
  o.poison_outputs = true;
  absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine = d3d12::CreateGpuEngine(std::move(o));
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<int32_t> x = {-2147483647 - 1, -5, -1, 0, 1, 7, 1 << 30, 2147483647};
  struct Params { float scale, bias; };
  const float kInf = std::numeric_limits<float>::infinity();
  const float kMax = std::numeric_limits<float>::max();
  // Scale*x overflows float32 (not double) before the infinite Bias; a
  // tiny Scale*x vanishes next to Bias in double; Scale*x and Bias near
  // FLT_MAX cancel (x = -1 gives exactly 0; the float32 pieces of the exact
  // sum used to overflow and gave -2).
  for (Params p : {Params{-3.4028235e38f, kInf}, Params{1e30f, kInf}, Params{1e30f, -kInf},
                   Params{1e-40f, -1.0f}, Params{1e-30f, 3.0f}, Params{0.5f, 1e-40f},
                   Params{-kMax, -kMax}, Params{kMax, kMax}, Params{1e20f, 1e20f}}) {
    for (OperatorType type : {OperatorType::kElementWiseThreshold, OperatorType::kElementWiseClip}) {
      OperatorDesc op;
      op.type = static_cast<uint32_t>(type);
      op.input = MakeTensorDesc(DataType::kInt32, {8});
      op.output = op.input;
      op.min = -1e10f;
      op.max = 1e10f;
      op.scale_bias = ScaleBias{p.scale, p.bias};
      ASSERT_TRUE(ops::Validate(op, static_cast<uint32_t>(kHighestFeatureLevel), false).ok());
      ExecuteRequest r;
      r.op = op;
      r.input.mutable_string().assign(reinterpret_cast<const char*>(x.data()), x.size() * 4);
      absl::StatusOr<ExecuteResult> want = CpuEngine::Run(r);
      ASSERT_TRUE(want.ok()) << want.status();
      absl::StatusOr<ExecuteResult> got = ExecuteSync(**engine, r);
      ASSERT_TRUE(got.ok()) << got.status();
      std::vector<int32_t> g(8), w(8);
      std::memcpy(g.data(), got->output.data(), 32);
      std::memcpy(w.data(), want->output.data(), 32);
      EXPECT_EQ(g, w) << "scale " << p.scale << " bias " << p.bias << " op "
                      << static_cast<uint32_t>(type);
    }
  }
}

}  // namespace
}  // namespace dmls::gpu
