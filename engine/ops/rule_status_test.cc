#include "engine/ops/rule_status.h"

#include "gtest/gtest.h"

namespace dmls::ops {
namespace {

TEST(RuleStatusTest, RoundTripsEveryViolation) {
  std::vector<Violation> v = {
      {"MVN_AXES_DUPLICATE", "operator.mvn1.axes[1]", "axis 1 appears twice"},
      {"TENSOR_RANK", "operator.mvn1.input.sizes", "rank 9 > 8"}};
  absl::Status s = RuleStatus(absl::StatusCode::kInvalidArgument, v);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "MVN_AXES_DUPLICATE: axis 1 appears twice (operator.mvn1.axes[1])");
  std::vector<Violation> back = ViolationsOf(s);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].rule, "TENSOR_RANK");
  EXPECT_EQ(back[1].field, "operator.mvn1.input.sizes");
  EXPECT_EQ(back[1].message, "rank 9 > 8");
}

TEST(RuleStatusTest, SingleRuleWithoutField) {
  absl::Status s = RuleStatus(absl::StatusCode::kResourceExhausted,
                              "QUEUE_FULL", "", "the queue is full");
  EXPECT_EQ(s.message(), "QUEUE_FULL: the queue is full");
  ASSERT_EQ(ViolationsOf(s).size(), 1u);
  EXPECT_EQ(ViolationsOf(s)[0].field, "");
}

TEST(RuleStatusTest, PlainStatusCarriesNone) {
  EXPECT_TRUE(ViolationsOf(absl::InternalError("x")).empty());
  EXPECT_TRUE(ViolationsOf(absl::OkStatus()).empty());
}

}  // namespace
}  // namespace dmls::ops
