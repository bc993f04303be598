// Error values of the server and their two wire forms. A RequestError is what
// went wrong with one request, independent of how it is reported: unary RPCs
// turn it into a grpc::Status (an error with rule violations -- every
// INVALID_ARGUMENT, and NOT_FOUND or RESOURCE_EXHAUSTED answers made by a
// rule -- carries a google.rpc.BadRequest in grpc-status-details-bin),
// ExecuteStream copies it into the response's status_code/status_message/
// violations so the stream goes on.
//
// Both forms are bounded, whatever the request: at most
// kMaxReportedViolations violations (then one VIOLATIONS_TRUNCATED entry
// saying how many were left out), the serialized google.rpc.Status at most
// kMaxStatusDetailsBytes, the message at most kMaxStatusMessageBytes. So
// grpc-message plus grpc-status-details-bin (base64) stay under 4.5 KiB,
// far below gRPC's default 8 KiB limit on the metadata a client accepts.
// The first violation (rule id, field path) is always kept as is. With a
// logger, whatever was left out is logged at debug level.
// Stateless functions: thread-safe.
#ifndef DMLSERVE_SERVER_MAPPING_STATUS_MAPPING_H_
#define DMLSERVE_SERVER_MAPPING_STATUS_MAPPING_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "engine/ops/rule_status.h"
#include "engine/ops/validator.h"
#include "grpcpp/support/status.h"
#include "spdlog/logger.h"

namespace dmls::server {

inline constexpr size_t kMaxReportedViolations = 16;
inline constexpr size_t kMaxStatusMessageBytes = 512;
inline constexpr size_t kMaxStatusDetailsBytes = 2048;
// The rule id of the entry that stands for the violations left out.
inline constexpr char kViolationsTruncatedRule[] = "VIOLATIONS_TRUNCATED";

struct RequestError {
  absl::StatusCode code = absl::StatusCode::kOk;
  // For rule-based errors "RULE_ID: message (field path)".
  std::string message;
  // The rule violations behind an INVALID_ARGUMENT; may be empty otherwise.
  std::vector<ops::Violation> violations;

  bool ok() const { return code == absl::StatusCode::kOk; }

  // INVALID_ARGUMENT from validator output (must not be empty).
  static RequestError FromViolations(std::vector<ops::Violation> violations);
  // One rule broken: `code` with a single violation.
  static RequestError Rule(absl::StatusCode code, std::string rule,
                           std::string field, std::string message);
  // A status; OK maps to an ok() error. Rule violations carried by the
  // status (engine/ops/rule_status.h) become `violations`.
  static RequestError FromStatus(const absl::Status& status);
  // An engine's completion status. INVALID_ARGUMENT without rule
  // violations is the server's own fault (admission checks every client
  // error first) and becomes INTERNAL, like UNKNOWN; the caller logs the
  // detail.
  static RequestError FromEngine(const absl::Status& status);
};

// "RULE: message (field)": the one-line summary of a violation.
using ops::Summary;

void ToProto(const ops::Violation& v, dmlserve::v1::FieldViolation* out);

// Canonical codes share their numbers between absl and gRPC.
grpc::StatusCode ToGrpcCode(absl::StatusCode code);
grpc::Status ToGrpcStatus(const absl::Status& status);

// `text` cut to at most `max_bytes` at a UTF-8 character boundary, ending
// in "..." when cut.
std::string Truncated(std::string_view text, size_t max_bytes);

// The violations the wire forms carry: a prefix of `violations` (never
// empty when `violations` is not) within the count and byte bounds, plus a
// VIOLATIONS_TRUNCATED entry when some were left out.
std::vector<ops::Violation> ReportedViolations(
    const std::vector<ops::Violation>& violations);

// The unary form. With violations: message = Summary(first) and binary
// details = serialized google.rpc.Status{code, message, details: [Any of
// google.rpc.BadRequest with one FieldViolation per reported violation]}.
grpc::Status ToGrpcStatus(const RequestError& error,
                          spdlog::logger* log = nullptr);

// The stream form: status_code, status_message and violations of `out`.
void FillResponse(const RequestError& error, dmlserve::v1::ExecuteResponse* out,
                  spdlog::logger* log = nullptr);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_MAPPING_STATUS_MAPPING_H_
