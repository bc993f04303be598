#include "server/mapping/status_mapping.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace dmls::server {

namespace v1 = dmlserve::v1;

namespace {

// Field paths are short by construction; the bound is a backstop.
constexpr size_t kMaxFieldBytes = 256;
// Room for the reported violations inside kMaxStatusDetailsBytes, after
// the message, the code, the type URL, the truncation entry and framing.
constexpr size_t kViolationBytes =
    kMaxStatusDetailsBytes - kMaxStatusMessageBytes - 256;

// Logs, at debug level, what the wire forms left out of `error`.
void LogLeftOut(spdlog::logger* log, const RequestError& error,
                size_t reported) {
  if (log == nullptr || !log->should_log(spdlog::level::debug)) return;
  log->debug("error reported in part ({} of {} violations): {}", reported,
             error.violations.size(), error.message);
  for (size_t i = 0; i < error.violations.size(); ++i) {
    const ops::Violation& v = error.violations[i];
    log->debug("  violation {}: {}: {} ({})", i, v.rule, v.message, v.field);
  }
}

// Whether the wire forms cut anything of `error`.
bool Cut(const RequestError& error,
         const std::vector<ops::Violation>& reported) {
  if (error.message.size() > kMaxStatusMessageBytes) return true;
  if (reported.size() != error.violations.size()) return true;
  for (size_t i = 0; i < reported.size(); ++i) {
    if (reported[i].field != error.violations[i].field ||
        reported[i].message != error.violations[i].message) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string Truncated(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  if (max_bytes < 3) return std::string(max_bytes, '.');
  size_t end = max_bytes - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;  // not inside a multi-byte character
  }
  return std::string(text.substr(0, end)) + "...";
}

std::vector<ops::Violation> ReportedViolations(
    const std::vector<ops::Violation>& violations) {
  std::vector<ops::Violation> out;
  size_t used = 0;
  for (const ops::Violation& v : violations) {
    if (out.size() == kMaxReportedViolations) break;
    ops::Violation b{v.rule, Truncated(v.field, kMaxFieldBytes),
                     Truncated(v.message, ops::kMaxMessageBytes)};
    // As a FieldViolation: field, "RULE: message", framing.
    const size_t bytes =
        b.field.size() + 2 * b.rule.size() + 2 + b.message.size() + 8;
    if (!out.empty() && used + bytes > kViolationBytes) break;
    used += bytes;
    out.push_back(std::move(b));
  }
  if (out.size() < violations.size()) {
    const size_t left_out = violations.size() - out.size();
    out.push_back(ops::Violation{
        kViolationsTruncatedRule, "",
        absl::StrCat(left_out, " more violation", left_out == 1 ? "" : "s",
                     " not reported")});
  }
  return out;
}

RequestError RequestError::FromViolations(
    std::vector<ops::Violation> violations) {
  RequestError e;
  e.code = absl::StatusCode::kInvalidArgument;
  e.message =
      violations.empty() ? "invalid request" : server::Summary(violations[0]);
  e.violations = std::move(violations);
  return e;
}

RequestError RequestError::Rule(absl::StatusCode code, std::string rule,
                                std::string field, std::string message) {
  RequestError e;
  e.code = code;
  e.violations.push_back(
      ops::Violation{std::move(rule), std::move(field), std::move(message)});
  e.message = server::Summary(e.violations[0]);
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
  return grpc::Status(
      ToGrpcCode(status.code()),
      Truncated(std::string(status.message()), kMaxStatusMessageBytes));
}

grpc::Status ToGrpcStatus(const RequestError& error, spdlog::logger* log) {
  if (error.ok()) return grpc::Status::OK;
  grpc::StatusCode code = ToGrpcCode(error.code);
  const std::string message = Truncated(error.message, kMaxStatusMessageBytes);
  // Every rule error carries its rule ids and field paths: INVALID_ARGUMENT's
  // violations, and the one rule of a NOT_FOUND (HANDLE_NOT_FOUND) or
  // RESOURCE_EXHAUSTED (TENSOR_BYTES_LIMIT, RESIDENT_QUOTA, ...) answer.
  if (error.violations.empty()) {
    if (message.size() != error.message.size()) LogLeftOut(log, error, 0);
    return grpc::Status(code, message);
  }
  const std::vector<ops::Violation> reported =
      ReportedViolations(error.violations);
  if (Cut(error, reported)) LogLeftOut(log, error, reported.size());
  google::rpc::BadRequest bad_request;
  for (const ops::Violation& v : reported) {
    google::rpc::BadRequest::FieldViolation* fv =
        bad_request.add_field_violations();
    fv->set_field(v.field);
    fv->set_description(v.Description());
  }
  google::rpc::Status rpc_status;
  rpc_status.set_code(static_cast<int>(code));
  rpc_status.set_message(message);
  // PackFrom writes the type URL "type.googleapis.com/google.rpc.BadRequest".
  rpc_status.add_details()->PackFrom(bad_request);
  return grpc::Status(code, message, rpc_status.SerializeAsString());
}

void FillResponse(const RequestError& error, v1::ExecuteResponse* out,
                  spdlog::logger* log) {
  out->set_status_code(static_cast<int32_t>(ToGrpcCode(error.code)));
  out->set_status_message(Truncated(error.message, kMaxStatusMessageBytes));
  out->clear_violations();
  const std::vector<ops::Violation> reported =
      ReportedViolations(error.violations);
  if (Cut(error, reported)) LogLeftOut(log, error, reported.size());
  for (const ops::Violation& v : reported) {
    ToProto(v, out->add_violations());
  }
}

}  // namespace dmls::server
