#include "server/status_mapping.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace dmls::server {

namespace v1 = dmlserve::v1;

RequestError RequestError::FromViolations(
    std::vector<ops::Violation> violations) {
  RequestError e;
  e.code = absl::StatusCode::kInvalidArgument;
  e.message = violations.empty() ? "invalid request" : Summary(violations[0]);
  e.violations = std::move(violations);
  return e;
}

RequestError RequestError::Rule(absl::StatusCode code, std::string rule,
                                std::string field, std::string message) {
  RequestError e;
  e.code = code;
  e.violations.push_back(
      ops::Violation{std::move(rule), std::move(field), std::move(message)});
  e.message = Summary(e.violations[0]);
  return e;
}

RequestError RequestError::FromStatus(const absl::Status& status) {
  RequestError e;
  e.code = status.code();
  e.message = std::string(status.message());
  e.violations = ops::ViolationsOf(status);
  return e;
}

RequestError RequestError::FromEngine(const absl::Status& status) {
  RequestError e = FromStatus(status);
  const bool ours = (e.code == absl::StatusCode::kInvalidArgument &&
                     e.violations.empty()) ||
                    e.code == absl::StatusCode::kUnknown;
  if (ours) {
    e.code = absl::StatusCode::kInternal;
    e.message = "internal error in the execution engine (details in the server log)";
  }
  return e;
}

void ToProto(const ops::Violation& v, v1::FieldViolation* out) {
  out->set_rule(v.rule);
  out->set_field(v.field);
  out->set_description(v.Description());
}

grpc::StatusCode ToGrpcCode(absl::StatusCode code) {
  int raw = static_cast<int>(code);
  // absl has no codes beyond UNAUTHENTICATED (16) today; anything new is
  // UNKNOWN to a gRPC client.
  if (raw < 0 || raw > static_cast<int>(grpc::StatusCode::UNAUTHENTICATED)) {
    return grpc::StatusCode::UNKNOWN;
  }
  return static_cast<grpc::StatusCode>(raw);
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(ToGrpcCode(status.code()), std::string(status.message()));
}

grpc::Status ToGrpcStatus(const RequestError& error) {
  if (error.ok()) return grpc::Status::OK;
  grpc::StatusCode code = ToGrpcCode(error.code);
  if (error.violations.empty() ||
      error.code != absl::StatusCode::kInvalidArgument) {
    return grpc::Status(code, error.message);
  }
  google::rpc::BadRequest bad_request;
  for (const ops::Violation& v : error.violations) {
    google::rpc::BadRequest::FieldViolation* fv =
        bad_request.add_field_violations();
    fv->set_field(v.field);
    fv->set_description(v.Description());
  }
  google::rpc::Status rpc_status;
  rpc_status.set_code(static_cast<int>(code));
  rpc_status.set_message(error.message);
  // PackFrom writes the type URL "type.googleapis.com/google.rpc.BadRequest".
  rpc_status.add_details()->PackFrom(bad_request);
  return grpc::Status(code, error.message, rpc_status.SerializeAsString());
}

void FillResponse(const RequestError& error, v1::ExecuteResponse* out) {
  out->set_status_code(static_cast<int32_t>(ToGrpcCode(error.code)));
  out->set_status_message(error.message);
  out->clear_violations();
  for (const ops::Violation& v : error.violations) {
    ToProto(v, out->add_violations());
  }
}

}  // namespace dmls::server
