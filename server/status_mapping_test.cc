#include "server/status_mapping.h"

#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

using ::testing::StartsWith;

std::vector<ops::Violation> TwoViolations() {
  return {{"MVN_AXES_DUPLICATE", "operator.mvn1.axes[1]", "axis 1 repeats"},
          {"MVN_EPSILON_INVALID", "operator.mvn1.epsilon", "epsilon is NaN"}};
}

TEST(StatusMapping, ViolationsBecomeBadRequestDetails) {
  grpc::Status s = ToGrpcStatus(RequestError::FromViolations(TwoViolations()));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "MVN_AXES_DUPLICATE: axis 1 repeats (operator.mvn1.axes[1])");

  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(s.error_details()));
  EXPECT_EQ(details.code(),
            static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(details.message(), s.error_message());
  ASSERT_EQ(details.details_size(), 1);
  EXPECT_EQ(details.details(0).type_url(),
            "type.googleapis.com/google.rpc.BadRequest");
  google::rpc::BadRequest bad_request;
  ASSERT_TRUE(details.details(0).UnpackTo(&bad_request));
  ASSERT_EQ(bad_request.field_violations_size(), 2);
  EXPECT_EQ(bad_request.field_violations(0).field(), "operator.mvn1.axes[1]");
  EXPECT_EQ(bad_request.field_violations(0).description(),
            "MVN_AXES_DUPLICATE: axis 1 repeats");
  EXPECT_EQ(bad_request.field_violations(1).field(), "operator.mvn1.epsilon");
  EXPECT_THAT(bad_request.field_violations(1).description(),
              StartsWith("MVN_EPSILON_INVALID: "));
}

TEST(StatusMapping, LimitRuleIsResourceExhaustedWithoutBadRequest) {
  RequestError e = RequestError::Rule(absl::StatusCode::kResourceExhausted,
                                      "IN_FLIGHT_LIMIT", "", "too many");
  grpc::Status s = ToGrpcStatus(e);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(), "IN_FLIGHT_LIMIT: too many");
  EXPECT_TRUE(s.error_details().empty());
}

TEST(StatusMapping, AbslStatusKeepsCodeAndMessage) {
  grpc::Status s = ToGrpcStatus(
      RequestError::FromStatus(absl::DeadlineExceededError("too late")));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(s.error_message(), "too late");
  EXPECT_TRUE(ToGrpcStatus(RequestError::FromStatus(absl::OkStatus())).ok());
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(ToGrpcStatus(absl::UnavailableError("x")).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST(StatusMapping, EveryCanonicalCodeMapsToTheSameNumber) {
  for (int code = 0; code <= 16; ++code) {
    EXPECT_EQ(static_cast<int>(ToGrpcCode(static_cast<absl::StatusCode>(code))),
              code);
  }
  EXPECT_EQ(ToGrpcCode(static_cast<absl::StatusCode>(99)),
            grpc::StatusCode::UNKNOWN);
}

TEST(StatusMapping, StreamResponseCarriesTheError) {
  dmlserve::v1::ExecuteResponse r;
  FillResponse(RequestError::FromViolations(TwoViolations()), &r);
  EXPECT_EQ(r.status_code(), 3);  // INVALID_ARGUMENT
  EXPECT_THAT(r.status_message(), StartsWith("MVN_AXES_DUPLICATE: "));
  ASSERT_EQ(r.violations_size(), 2);
  EXPECT_EQ(r.violations(0).rule(), "MVN_AXES_DUPLICATE");
  EXPECT_EQ(r.violations(0).field(), "operator.mvn1.axes[1]");
  EXPECT_EQ(r.violations(0).description(),
            "MVN_AXES_DUPLICATE: axis 1 repeats");
  EXPECT_EQ(r.violations(1).rule(), "MVN_EPSILON_INVALID");
}

}  // namespace
}  // namespace dmls::server
