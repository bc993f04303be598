#include "server/mapping/status_mapping.h"

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"
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

TEST(StatusMapping, RuleErrorsOfOtherCodesCarryTheirRuleToo) {
  RequestError e = RequestError::Rule(absl::StatusCode::kResourceExhausted,
                                      "IN_FLIGHT_LIMIT", "", "too many");
  grpc::Status s = ToGrpcStatus(e);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(), "IN_FLIGHT_LIMIT: too many");
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(s.error_details()));
  EXPECT_EQ(details.code(), static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED));
  google::rpc::BadRequest bad;
  ASSERT_TRUE(details.details(0).UnpackTo(&bad));
  EXPECT_EQ(bad.field_violations(0).description(), "IN_FLIGHT_LIMIT: too many");
  // A status without rules has no details.
  EXPECT_TRUE(ToGrpcStatus(RequestError::FromStatus(absl::NotFoundError("gone")))
                  .error_details()
                  .empty());
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

// What a client receives as metadata for `s`: grpc-message (at worst every
// byte percent-encoded, 3x) and grpc-status-details-bin (base64).
size_t TrailerBytes(const grpc::Status& s) {
  return 3 * s.error_message().size() +
         absl::Base64Escape(s.error_details()).size();
}

google::rpc::BadRequest BadRequestOf(const grpc::Status& s) {
  google::rpc::Status details;
  google::rpc::BadRequest bad_request;
  EXPECT_TRUE(details.ParseFromString(s.error_details()));
  EXPECT_EQ(details.details_size(), 1);
  if (details.details_size() == 1) {
    EXPECT_TRUE(details.details(0).UnpackTo(&bad_request));
  }
  return bad_request;
}

TEST(StatusMapping, ManyViolationsAreCappedWithANote) {
  std::vector<ops::Violation> many;
  for (int i = 0; i < 40; ++i) {
    many.push_back({"PARAM_INVALID", absl::StrCat("operator.x.f", i),
                    absl::StrCat("problem ", i)});
  }
  grpc::Status s = ToGrpcStatus(RequestError::FromViolations(many));
  google::rpc::BadRequest bad_request = BadRequestOf(s);
  ASSERT_EQ(bad_request.field_violations_size(), kMaxReportedViolations + 1);
  EXPECT_EQ(bad_request.field_violations(0).field(), "operator.x.f0");
  EXPECT_EQ(bad_request.field_violations(0).description(),
            "PARAM_INVALID: problem 0");
  const auto& note = bad_request.field_violations(kMaxReportedViolations);
  EXPECT_EQ(note.field(), "");
  EXPECT_EQ(note.description(),
            "VIOLATIONS_TRUNCATED: 24 more violations not reported");

  dmlserve::v1::ExecuteResponse r;
  FillResponse(RequestError::FromViolations(many), &r);
  ASSERT_EQ(r.violations_size(), kMaxReportedViolations + 1);
  EXPECT_EQ(r.violations(kMaxReportedViolations).rule(),
            kViolationsTruncatedRule);
}

TEST(StatusMapping, TrailerStaysFarBelowTheMetadataLimit) {
  // Long texts everywhere: the message, every field path, every message.
  std::vector<ops::Violation> many;
  for (int i = 0; i < 100; ++i) {
    many.push_back(
        {"MVN_AXES_DUPLICATE",
         absl::StrCat("operator.mvn1.axes[", i, "]", std::string(1000, 'f')),
         std::string(100000, 'm')});
  }
  RequestError e = RequestError::FromViolations(many);
  e.message = std::string(200000, 'x');
  grpc::Status s = ToGrpcStatus(e);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LE(s.error_message().size(), kMaxStatusMessageBytes);
  EXPECT_LE(s.error_details().size(), kMaxStatusDetailsBytes);
  EXPECT_LT(TrailerBytes(s), 4608u);  // 4.5 KiB of gRPC's 8 KiB
  google::rpc::BadRequest bad_request = BadRequestOf(s);
  ASSERT_GE(bad_request.field_violations_size(), 2);
  // The first violation keeps its rule id; its texts are cut.
  EXPECT_THAT(bad_request.field_violations(0).description(),
              StartsWith("MVN_AXES_DUPLICATE: mmm"));
  EXPECT_THAT(bad_request.field_violations(0).field(),
              StartsWith("operator.mvn1.axes[0]fff"));
  EXPECT_THAT(
      bad_request.field_violations(bad_request.field_violations_size() - 1)
          .description(),
      StartsWith("VIOLATIONS_TRUNCATED: "));

  // The same request through the absl::Status of the scheduler's admission.
  grpc::Status via_status = ToGrpcStatus(RequestError::FromStatus(
      ops::RuleStatus(absl::StatusCode::kInvalidArgument, many)));
  EXPECT_LT(TrailerBytes(via_status), 4608u);
  EXPECT_EQ(BadRequestOf(via_status).field_violations(0).field(),
            bad_request.field_violations(0).field());
  EXPECT_LE(ToGrpcStatus(absl::InternalError(std::string(100000, 'i')))
                .error_message()
                .size(),
            kMaxStatusMessageBytes);
}

TEST(StatusMapping, ShortErrorsAreReportedWhole) {
  std::vector<ops::Violation> v = TwoViolations();
  EXPECT_EQ(ReportedViolations(v).size(), 2u);
  EXPECT_EQ(ReportedViolations({}).size(), 0u);
  EXPECT_EQ(Truncated("abc", 3), "abc");
  EXPECT_EQ(Truncated("abcdef", 5), "ab...");
}

}  // namespace
}  // namespace dmls::server
