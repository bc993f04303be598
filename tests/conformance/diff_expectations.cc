#include "tests/conformance/diff_expectations.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace dmls::conformance {
namespace {

constexpr DiffRow::Kind kListed[] = {DiffRow::Kind::kDisagree, DiffRow::Kind::kRefused,
                                     DiffRow::Kind::kTheirsFailed, DiffRow::Kind::kOursFailed};

bool IsListedKind(absl::string_view name) {
  return std::any_of(std::begin(kListed), std::end(kListed),
                     [&](DiffRow::Kind k) { return name == KindName(k); });
}

}  // namespace

absl::StatusOr<DiffExpectations> ParseDiffExpectations(absl::string_view text) {
  DiffExpectations expected;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<absl::string_view> fields = absl::StrSplit(line, '\t');
    if (fields.size() != 2 || fields[0].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, ": expected CASE_ID<TAB>KIND, got \"", line, "\""));
    }
    if (!IsListedKind(fields[1])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", line_no, ": kind \"", fields[1],
          "\" is not disagree, refused, failed or ours failed (agreeing cases are not listed)"));
    }
    if (!expected.emplace(std::string(fields[0]), std::string(fields[1])).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, ": case ", fields[0], " is listed twice"));
    }
  }
  return expected;
}

std::string DiffExpectationsText(const std::vector<DiffRow>& rows, absl::string_view header) {
  std::string text;
  for (absl::string_view line : absl::StrSplit(header, '\n')) {
    absl::StrAppend(&text, "# ", line, "\n");
  }
  std::map<std::string, std::string> listed;
  for (const DiffRow& r : rows) {
    if (r.kind != DiffRow::Kind::kAgree) listed[r.id] = KindName(r.kind);
  }
  for (const auto& [id, kind] : listed) absl::StrAppend(&text, id, "\t", kind, "\n");
  return text;
}

std::vector<std::string> DiffChanges(const std::vector<DiffRow>& rows,
                                     const DiffExpectations& expected) {
  std::vector<std::string> changes;
  for (const DiffRow& r : rows) {
    auto it = expected.find(r.id);
    const std::string want = it == expected.end() ? KindName(DiffRow::Kind::kAgree) : it->second;
    const std::string got = KindName(r.kind);
    if (got == want) continue;
    changes.push_back(absl::StrCat(r.id, ": expected ", want, ", got ", got,
                                   r.detail.empty() ? "" : ": ", r.detail));
  }
  return changes;
}

}  // namespace dmls::conformance
