// Validation of an OperatorDesc against the DirectML feature-level rules of
// OPERATORS.md §2-§6 and §9-§10, driven by the schema tables (schema.h).
// Stateless functions: thread-safe.
#ifndef DMLSERVE_ENGINE_OPS_VALIDATOR_H_
#define DMLSERVE_ENGINE_OPS_VALIDATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/core/operator_desc.h"

namespace dmls::ops {

// Bounds on the text one request can make the validator write, whatever its
// size (a request may carry thousands of axes): a list inside a message
// shows at most kMaxListedItems items, then "... and N more"; a message
// longer than kMaxMessageBytes is cut and ends in "...". Rule ids and field
// paths are never cut (they are short by construction). The number of
// violations is bounded by the rules themselves (each is reported at most
// once per tensor slot); the server caps what it puts on the wire.
inline constexpr size_t kMaxListedItems = 8;
inline constexpr size_t kMaxMessageBytes = 256;

struct Violation {
  std::string rule;     // stable rule id, e.g. "MVN_AXES_DUPLICATE"
  std::string field;    // request field path, e.g. "operator.mvn1.axes[1]"
  std::string message;  // human text, without the rule id
  // "RULE_ID: message" -- the description clients see.
  std::string Description() const { return rule + ": " + message; }
};

// Every violation found, in the order of OPERATORS.md §9. The first entry is
// the normative one (the rule oracle.validate reports); the rest are best
// effort (checks that depend on a failed one are skipped). Empty when valid.
// `feature_level` is the raw DML_FEATURE_LEVEL value of the request.
// Field paths name the proto fields of dmlserve.v1 (see proto/), rooted at
// the request: "feature_level", "operator.<op field>.<...>", "in_place".
std::vector<Violation> ValidateAll(const OperatorDesc& op,
                                   uint32_t feature_level, bool in_place);

// `message` cut to kMaxMessageBytes at a UTF-8 character boundary, ending in
// "..." when cut: what the validator applies to every message it writes.
std::string BoundedMessage(std::string message);

// The first violation as INVALID_ARGUMENT("RULE_ID: message"), or OK.
absl::Status Validate(const OperatorDesc& op, uint32_t feature_level,
                      bool in_place);

}  // namespace dmls::ops

#endif  // DMLSERVE_ENGINE_OPS_VALIDATOR_H_
