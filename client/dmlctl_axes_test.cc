#include "client/dmlctl_axes.h"

#include "dmlserve/v1/dmlserve.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace dmls::client::ctl {
namespace {

using ::testing::ElementsAre;
namespace v1 = dmlserve::v1;

v1::OperatorDesc Parse(const std::string& json) {
  absl::StatusOr<std::string> encoded = EncodeNegativeAxes(json);
  EXPECT_TRUE(encoded.ok());
  v1::OperatorDesc op;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(*encoded, &op).ok())
      << *encoded;
  return op;
}

TEST(DmlctlAxesTest, NegativeAxesCountFromTheEndOfTheBoundRank) {
  v1::OperatorDesc op = Parse(
      R"({"mvn1": {"input": {"sizes": [8, 1024]}, "axes": [-1, 0]}})");
  ResolveNegativeAxes(op.mutable_mvn1());
  EXPECT_THAT(op.mvn1().axes(), ElementsAre(1, 0));

  v1::OperatorDesc rank4 =
      Parse(R"({"mvn1": {"input": {"sizes": [2, 3, 4, 5]}, "axes": [-2, -1]}})");
  ResolveNegativeAxes(rank4.mutable_mvn1());
  EXPECT_THAT(rank4.mvn1().axes(), ElementsAre(2, 3));
}

TEST(DmlctlAxesTest, WithoutSizesOrBeyondTheRankTheyStayForTheServer) {
  v1::OperatorDesc op = Parse(R"({"mvn1": {"axes": [-1]}})");
  ResolveNegativeAxes(op.mutable_mvn1());
  EXPECT_THAT(op.mvn1().axes(), ElementsAre(4294967295u));
  v1::OperatorDesc far =
      Parse(R"({"mvn1": {"input": {"sizes": [4]}, "axes": [-2]}})");
  ResolveNegativeAxes(far.mutable_mvn1());
  EXPECT_THAT(far.mvn1().axes(), ElementsAre(4294967294u));
}

TEST(DmlctlAxesTest, OnlyMvn1AxesAreTouchedAndBadJsonIsAnError) {
  absl::StatusOr<std::string> chain = EncodeNegativeAxes(
      R"({"steps": [{"operator": {"mvn1": {"axes": [-1], "epsilon": -1}}},
                    {"operator": {"threshold": {"min": -1}}}]})");
  ASSERT_TRUE(chain.ok());
  v1::ChainRequest request;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*chain, &request).ok());
  EXPECT_THAT(request.steps(0).operator_().mvn1().axes(),
              ElementsAre(4294967295u));
  EXPECT_EQ(request.steps(0).operator_().mvn1().epsilon(), -1.0f);
  EXPECT_EQ(request.steps(1).operator_().threshold().min(), -1.0f);
  EXPECT_FALSE(EncodeNegativeAxes("{not json").ok());
}

}  // namespace
}  // namespace dmls::client::ctl
