#include "engine/plan/coalesce.h"

#include <vector>

#include "engine/core/tensor_desc.h"
#include "engine/plan/planner.h"
#include "gtest/gtest.h"

namespace dmls::gpu {
namespace {

OperatorDesc Celu(std::vector<uint64_t> in_sizes, float alpha,
                  std::vector<uint64_t> out_strides = {}) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationCelu);
  op.input = MakeTensorDesc(DataType::kFloat32, in_sizes);
  op.output = MakeTensorDesc(DataType::kFloat32, in_sizes);
  if (!out_strides.empty()) {
    op.output = MakeTensorDesc(DataType::kFloat32, in_sizes, out_strides);
  }
  op.activation[0] = alpha;
  return op;
}

DispatchPlan Plan(const OperatorDesc& op, bool in_place = false) {
  absl::StatusOr<DispatchPlan> plan = PlanExecution(op, in_place);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : DispatchPlan{};
}

TEST(CoalesceTest, PackedElementwisePlansCoalesceByFunctionNotSize) {
  const DispatchPlan small = Plan(Celu({1, 1, 1, 100}, 1.5f));
  const DispatchPlan large = Plan(Celu({1, 1, 8, 1000}, 1.5f));
  const DispatchPlan other_alpha = Plan(Celu({1, 1, 1, 100}, 2.0f));
  ASSERT_TRUE(IsCoalescable(small));
  ASSERT_TRUE(IsCoalescable(large));
  EXPECT_EQ(CoalesceKey(small, false), CoalesceKey(large, false));
  EXPECT_NE(CoalesceKey(small, false), CoalesceKey(other_alpha, false));
  EXPECT_NE(CoalesceKey(small, false), CoalesceKey(small, true));
}

TEST(CoalesceTest, StridedAndMvnPlansDoNot) {
  EXPECT_FALSE(IsCoalescable(Plan(Celu({1, 1, 4, 4}, 1.0f, {64, 64, 8, 1}))));
  OperatorDesc mvn;
  mvn.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
  mvn.input = MakeTensorDesc(DataType::kFloat32, {1, 1, 4, 64});
  mvn.output = MakeTensorDesc(DataType::kFloat32, {1, 1, 4, 64});
  mvn.axes = {3};
  mvn.normalize_variance = 1;
  mvn.epsilon = 1e-5f;
  absl::StatusOr<DispatchPlan> plan = PlanExecution(mvn, false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(IsCoalescable(*plan));
  EXPECT_FALSE(PlanCoalescedSpan(*plan, 16).ok());
}

TEST(CoalesceTest, SpanPlanCoversEveryTexelWithTheSameKernel) {
  const DispatchPlan like = Plan(Celu({1, 1, 1, 100}, 1.5f));
  absl::StatusOr<DispatchPlan> span = PlanCoalescedSpan(like, 1000);
  ASSERT_TRUE(span.ok()) << span.status();
  ASSERT_FALSE(span->dispatches.empty());
  uint64_t elements = 0;
  for (const Dispatch& d : span->dispatches) {
    EXPECT_EQ(d.key.op, OperatorType::kActivationCelu);
    EXPECT_EQ(d.key.variant, kVariantVec4);
    EXPECT_EQ(DecodeElementwiseArgs(d).f[kArgP0], 1.5f);
    elements += DecodeElementwiseArgs(d).count;
  }
  EXPECT_EQ(elements, 1000u);  // work items: one texel each
}

}  // namespace
}  // namespace dmls::gpu
