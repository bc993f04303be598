// DmlEngine on Microsoft's DirectML.dll (Windows; under Wine on lavapipe in
// deploy/windows/run-tests.sh). DMLS_DIRECTML_DLL names the DLL
// (deploy/windows/fetch-directml.sh); without one every test fails, which is
// the point: these tests cannot pass without DirectML running our requests.
// Results are compared with the CPU reference engine.
#include "engine/directml/dml_engine.h"

#include <cmath>
#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

#include "engine/core/engine_test_util.h"
#include "engine/core/execute_sync.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/cpu/cpu_test_util.h"
#include "engine/ops/rule_status.h"
#include "gtest/gtest.h"

namespace dmls::directml {
namespace {

using core::testing::Counter;
using core::testing::OpRequest;
using cpu::testing::MakePayload;
using cpu::testing::ReadLogical;

DmlEngineOptions Options() {
  DmlEngineOptions options;
  if (const char* dll = std::getenv("DMLS_DIRECTML_DLL")) options.dll_path = dll;
  options.device.kind = d3d12::DeviceOptions::Kind::kAuto;
  return options;
}

class DmlEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<DmlEngine>> e = DmlEngine::Create(Options());
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = e->release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(engine_, nullptr); }

  // Runs `r` on DirectML and on the CPU reference; the FLOAT32 output
  // elements of both, DirectML's first.
  static std::pair<std::vector<float>, std::vector<float>> Both(const ExecuteRequest& r) {
    absl::StatusOr<ExecuteResult> dml = ExecuteSync(*engine_, r);
    EXPECT_TRUE(dml.ok()) << dml.status();
    absl::StatusOr<ExecuteResult> ref = CpuEngine::Run(r);
    EXPECT_TRUE(ref.ok()) << ref.status();
    if (!dml.ok() || !ref.ok()) return {};
    return {ReadLogical<float>(*r.op.output, dml->output),
            ReadLogical<float>(*r.op.output, ref->output)};
  }

  static DmlEngine* engine_;
};
DmlEngine* DmlEngineTest::engine_ = nullptr;

// |a - e| within a few float32 ulps of e (the §8 budgets are 2-4 ulps for
// these operators; 1e-6 relative is about 8).
void ExpectClose(const std::vector<float>& actual, const std::vector<float>& expected,
                 double rel = 1e-6, double abs = 1e-7) {
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_FALSE(actual.empty());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], abs + rel * std::fabs(expected[i])) << "element " << i;
  }
}

TEST_F(DmlEngineTest, ReportsTheDeviceAndAFeatureLevel) {
  const DeviceInfo info = engine_->device_info();
  EXPECT_NE(info.backend.find("DirectML.dll FL "), std::string::npos) << info.backend;
  EXPECT_GE(static_cast<uint32_t>(engine_->device().max_feature_level()),
            static_cast<uint32_t>(FeatureLevel::k3_0));
  EXPECT_TRUE(engine_->device().SupportsDataType(DataType::kFloat32));
  std::printf("DirectML device: %s, %s\n", info.name.c_str(), info.backend.c_str());
}

TEST_F(DmlEngineTest, CeluMatchesTheReference) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {2, 4});
  ExecuteRequest r = OpRequest(OperatorType::kActivationCelu, t, t);
  r.op.activation = {1.5f, std::nullopt};
  r.input = MakePayload<float>(t, {-4, -2, -1, -0.5f, 0, 0.5f, 1, 3});
  auto [dml, ref] = Both(r);
  ExpectClose(dml, ref);
}

TEST_F(DmlEngineTest, StridedInputAndInPlace) {
  TensorDesc in = MakeTensorDesc(DataType::kFloat32, {2, 3}, std::vector<uint64_t>{4, 1});
  TensorDesc out = MakeTensorDesc(DataType::kFloat32, {2, 3});
  ExecuteRequest r = OpRequest(OperatorType::kActivationElu, in, out);
  r.op.activation = {0.5f, std::nullopt};
  r.input = MakePayload<float>(in, {-3, -1, 0, 1, 2, -0.25f});
  auto [dml, ref] = Both(r);
  ExpectClose(dml, ref);

  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {6});
  ExecuteRequest p = OpRequest(OperatorType::kActivationTanh, t, t);
  p.in_place = true;
  p.input = MakePayload<float>(t, {-3, -1, 0, 1, 2, 0.25f});
  auto [dml2, ref2] = Both(p);
  ExpectClose(dml2, ref2);
}

TEST_F(DmlEngineTest, ThresholdWithScaleBias) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {6});
  ExecuteRequest r = OpRequest(OperatorType::kElementWiseThreshold, t, t);
  r.op.min = 0.5f;
  r.op.scale_bias = ScaleBias{2.0f, -1.0f};
  r.input = MakePayload<float>(t, {-3, -1, 0, 0.5f, 0.75f, 2});
  auto [dml, ref] = Both(r);
  ExpectClose(dml, ref, 0, 0);  // exact: one multiply-add and a max
}

TEST_F(DmlEngineTest, Mvn1WithFusedCeluMatchesTheReference) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {1, 1, 2, 4});
  ExecuteRequest r = OpRequest(OperatorType::kMeanVarianceNormalization1, t, t);
  r.op.axis_count = 1;
  r.op.axes = {3};
  r.op.normalize_variance = 1;
  r.op.epsilon = 1e-5f;
  r.op.fused_activation = FusedActivationDesc{
      static_cast<uint32_t>(OperatorType::kActivationCelu), false, {1.0f, std::nullopt}};
  r.input = MakePayload<float>(t, {-4, -2, -1, -0.5f, 0, 0.5f, 1, 3});
  auto [dml, ref] = Both(r);
  ExpectClose(dml, ref, 1e-5, 1e-6);  // NORMALIZATION budget
}

TEST_F(DmlEngineTest, MvnWithScaleAndBias) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {1, 2, 2, 2});
  TensorDesc sb = MakeTensorDesc(DataType::kFloat32, {1, 2, 1, 1});
  ExecuteRequest r = OpRequest(OperatorType::kMeanVarianceNormalization, t, t);
  r.op.scale = sb;
  r.op.bias = sb;
  r.op.cross_channel = 0;
  r.op.normalize_variance = 1;
  r.op.epsilon = 1e-3f;
  r.input = MakePayload<float>(t, {1, 2, 3, 4, -1, 0, 5, 9});
  r.scale = MakePayload<float>(sb, {2, 0.5f});
  r.bias = MakePayload<float>(sb, {-1, 1});
  auto [dml, ref] = Both(r);
  ExpectClose(dml, ref, 1e-5, 1e-6);
}

TEST_F(DmlEngineTest, CompiledOperatorsAreCachedByDescriptor) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {3});
  ExecuteRequest r = OpRequest(OperatorType::kActivationSoftplus, t, t);
  r.op.activation = {2.0f, std::nullopt};
  r.input = MakePayload<float>(t, {-1, 0, 1});
  const uint64_t before = Counter(*engine_, "compiled_operators");
  ASSERT_TRUE(ExecuteSync(*engine_, r).ok());
  ASSERT_TRUE(ExecuteSync(*engine_, r).ok());
  EXPECT_EQ(Counter(*engine_, "compiled_operators"), before + 1);
  r.op.activation = {3.0f, std::nullopt};
  ASSERT_TRUE(ExecuteSync(*engine_, r).ok());
  EXPECT_EQ(Counter(*engine_, "compiled_operators"), before + 2);
}

// DmlEngine does not re-validate: a desc our validator refuses (CELU on
// INT32, CELU_DATA_TYPE) reaches DirectML, which must refuse it too, and the
// refusal comes back as INVALID_ARGUMENT with its rule.
TEST_F(DmlEngineTest, WhatDirectMlRefusesIsInvalidArgument) {
  TensorDesc t = MakeTensorDesc(DataType::kInt32, {4});
  ExecuteRequest r = OpRequest(OperatorType::kActivationCelu, t, t);
  r.op.activation = {1.0f, std::nullopt};
  r.input = MakePayload<int32_t>(t, {1, 2, 3, 4});
  absl::StatusOr<ExecuteResult> got = ExecuteSync(*engine_, r);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find(kDirectMlRefused), std::string::npos) << got.status();
  EXPECT_NE(got.status().message().find("ACTIVATION_CELU"), std::string::npos) << got.status();
  // A rule status, so that the server answers INVALID_ARGUMENT with the
  // rule (an engine's INVALID_ARGUMENT without one is INTERNAL there).
  const std::vector<ops::Violation> violations = ops::ViolationsOf(got.status());
  ASSERT_EQ(violations.size(), 1u) << got.status();
  EXPECT_EQ(violations[0].rule, kDirectMlRefused);
  EXPECT_EQ(violations[0].field, "operator");
  const uint64_t refused = Counter(*engine_, "refused_operators");
  EXPECT_FALSE(ExecuteSync(*engine_, r).ok());  // cached, same answer
  EXPECT_EQ(Counter(*engine_, "refused_operators"), refused);
}

// docs/DIRECTML.md: DirectML 1.15.4 refuses a GuaranteedBaseOffsetAlignment
// that is nonzero and below 16 (DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT), which
// OPERATORS.md §2.5 accepts (a power of two no smaller than the element);
// 16 runs.
TEST_F(DmlEngineTest, AlignmentBelowSixteenIsRefusedSixteenRuns) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {4});
  ExecuteRequest r = OpRequest(OperatorType::kActivationRelu, t, t);
  r.input = MakePayload<float>(t, {-1, 0, 1, 2});
  r.op.input->guaranteed_base_offset_alignment = 4;
  absl::StatusOr<ExecuteResult> got = ExecuteSync(*engine_, r);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find(kDirectMlRefused), std::string::npos) << got.status();

  r.op.input->guaranteed_base_offset_alignment = 16;
  auto [dml, ref] = Both(r);
  ExpectClose(dml, ref, 0, 0);
}

// DML_TENSOR_FLAG_OWNED_BY_DML: DirectML takes such an input at
// initialisation and binding it at execution is invalid use (DirectML
// removed the device for it: docs/DIRECTML.md). Two requests of one desc
// with different data must each see their own data, and the device stays.
TEST_F(DmlEngineTest, InputsOwnedByDirectMlAreTakenAtInitialisation) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {5});
  TensorDesc owned = t;
  owned.flags = kTensorFlagOwnedByDml;
  ExecuteRequest r = OpRequest(OperatorType::kActivationIdentity, owned, t);
  r.input = MakePayload<float>(t, {-2, -1, 0, 1, 2});
  auto [dml, ref] = Both(r);
  ExpectClose(dml, ref, 0, 0);
  r.input = MakePayload<float>(t, {7, 8, 9, 10, 11});
  auto [dml2, ref2] = Both(r);
  ExpectClose(dml2, ref2, 0, 0);

  // MVN1 with an owned Scale (a weight, what the flag is for).
  TensorDesc x = MakeTensorDesc(DataType::kFloat32, {1, 1, 2, 4});
  TensorDesc sb = MakeTensorDesc(DataType::kFloat32, {1, 1, 1, 4});
  TensorDesc owned_sb = sb;
  owned_sb.flags = kTensorFlagOwnedByDml;
  ExecuteRequest m = OpRequest(OperatorType::kMeanVarianceNormalization1, x, x);
  m.op.axis_count = 1;
  m.op.axes = {3};
  m.op.normalize_variance = 1;
  m.op.epsilon = 1e-5f;
  m.op.scale = owned_sb;
  m.op.bias = sb;
  m.input = MakePayload<float>(x, {-4, -2, -1, -0.5f, 0, 0.5f, 1, 3});
  m.scale = MakePayload<float>(sb, {1, 2, 3, 4});
  m.bias = MakePayload<float>(sb, {0, 0.5f, -0.5f, 1});
  auto [dml3, ref3] = Both(m);
  ExpectClose(dml3, ref3, 1e-5, 1e-6);
  EXPECT_TRUE(engine_->Healthy());
}

// Requests pass the scheduler: an expired one is answered there without
// reaching DirectML, a large one runs on the runner's thread (not the
// caller's) and counts as a batch.
TEST_F(DmlEngineTest, RequestsQueueBehindTheSchedulerAndExpireThere) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {8192});  // 64 KiB with the output
  ExecuteRequest r = OpRequest(OperatorType::kActivationSigmoid, t, t);
  r.input = MakePayload<float>(t, std::vector<float>(8192, 0.5f));
  const uint64_t requests = Counter(*engine_, "requests");
  ExecuteRequest expired = r;
  expired.deadline = absl::Now() - absl::Seconds(1);
  absl::StatusOr<ExecuteResult> got = ExecuteSync(*engine_, expired);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded) << got.status();
  EXPECT_EQ(Counter(*engine_, "requests"), requests);

  const uint64_t batches = Counter(*engine_, "batches");
  absl::Notification done;
  std::thread::id answered_on;
  absl::StatusOr<ExecuteResult> result;
  engine_->Execute(r, [&](absl::StatusOr<ExecuteResult> res) {
    answered_on = std::this_thread::get_id();
    result = std::move(res);
    done.Notify();
  });
  done.WaitForNotification();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(answered_on, std::this_thread::get_id());
  EXPECT_EQ(Counter(*engine_, "requests"), requests + 1);
  EXPECT_EQ(Counter(*engine_, "batches"), batches + 1);
  auto [dml, ref] = Both(r);
  ExpectClose(dml, ref);
}

TEST(DmlEngineLoad, AMissingDllIsUnavailable) {
  DmlEngineOptions options = Options();
  options.dll_path = "no-such-directml.dll";
  absl::StatusOr<std::unique_ptr<DmlEngine>> e = DmlEngine::Create(options);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kUnavailable) << e.status();
}

}  // namespace
}  // namespace dmls::directml
