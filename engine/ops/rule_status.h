// Rule violations carried inside an absl::Status, so that the scheduler's
// admission (engine/sched) can reject a request through the Engine's one
// error channel (ExecuteCallback) and the server can still report every
// violation's rule id and field path (google.rpc.BadRequest).
//
// The status message is the first violation's one-line summary
// ("RULE: message (field)"); the whole list travels as a payload. Stateless
// functions: thread-safe.
#ifndef DMLSERVE_ENGINE_OPS_RULE_STATUS_H_
#define DMLSERVE_ENGINE_OPS_RULE_STATUS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/ops/validator.h"

namespace dmls::ops {

// "RULE: message (field)", or "RULE: message" without a field.
std::string Summary(const Violation& v);

// A `code` status (not OK) carrying `violations` (not empty).
absl::Status RuleStatus(absl::StatusCode code,
                        std::vector<Violation> violations);
// One rule broken.
absl::Status RuleStatus(absl::StatusCode code, std::string rule,
                        std::string field, std::string message);

// The violations a status carries; empty for a status made otherwise.
std::vector<Violation> ViolationsOf(const absl::Status& status);

}  // namespace dmls::ops

#endif  // DMLSERVE_ENGINE_OPS_RULE_STATUS_H_
