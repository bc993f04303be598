// The catalogue of every rule id the service reports, whoever reports it
// (the validator here, the scheduler's admission, the server's request,
// chain, chunk, tensor-store and security checks): the id, what it means,
// the request field it names and the gRPC code it comes with. docs/RULES.md
// is generated from it (tool dmls_rules_doc; ctest rules_doc_current fails
// when the file is stale) and ctest rules_table_complete checks that every
// id the source emits is listed here with the code it is emitted with.
// Constant data: thread-safe.
#ifndef DMLSERVE_ENGINE_OPS_RULE_TABLE_H_
#define DMLSERVE_ENGINE_OPS_RULE_TABLE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace dmls::ops {

struct RuleDoc {
  const char* id;       // "MVN_AXES_DUPLICATE"
  absl::StatusCode code;
  const char* field;    // the field path it names, "" when none
  const char* meaning;  // one sentence
  const char* area;     // the group it is listed under in docs/RULES.md
};

// Every rule, grouped by area in the order docs/RULES.md lists them.
absl::Span<const RuleDoc> RuleTable();

// docs/RULES.md: a header, then one table per area.
std::string RulesMarkdown();

}  // namespace dmls::ops

#endif  // DMLSERVE_ENGINE_OPS_RULE_TABLE_H_
