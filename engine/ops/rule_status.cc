#include "engine/ops/rule_status.h"

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dmls::ops {
namespace {

// Payload type URL; the value is one record per violation, each record
// rule, field and message separated by kUnit, records ended by kRecord
// (ASCII unit and record separators, which rule ids, field paths and our
// messages never contain).
constexpr char kPayloadUrl[] = "type.dmlserve/dmls.ops.Violations";
constexpr char kUnit = '\x1f';
constexpr char kRecord = '\x1e';

}  // namespace

std::string Summary(const Violation& v) {
  if (v.field.empty()) return v.Description();
  return absl::StrCat(v.Description(), " (", v.field, ")");
}

absl::Status RuleStatus(absl::StatusCode code,
                        std::vector<Violation> violations) {
  absl::Status status(code, violations.empty() ? "invalid request"
                                               : Summary(violations[0]));
  std::string encoded;
  for (const Violation& v : violations) {
    absl::StrAppend(&encoded, v.rule, std::string(1, kUnit), v.field,
                    std::string(1, kUnit), v.message, std::string(1, kRecord));
  }
  status.SetPayload(kPayloadUrl, absl::Cord(std::move(encoded)));
  return status;
}

absl::Status RuleStatus(absl::StatusCode code, std::string rule,
                        std::string field, std::string message) {
  std::vector<Violation> v;
  v.push_back(Violation{std::move(rule), std::move(field), std::move(message)});
  return RuleStatus(code, std::move(v));
}

std::vector<Violation> ViolationsOf(const absl::Status& status) {
  std::vector<Violation> out;
  auto payload = status.GetPayload(kPayloadUrl);
  if (!payload) return out;
  const std::string flat(*payload);
  for (absl::string_view record :
       absl::StrSplit(flat, kRecord, absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(record, kUnit);
    if (parts.size() != 3) continue;
    out.push_back(Violation{std::move(parts[0]), std::move(parts[1]),
                            std::move(parts[2])});
  }
  return out;
}

}  // namespace dmls::ops
