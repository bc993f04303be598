// The differential's expected outcome per case (differential.h), kept as
// data so that a run can tell when an engine's answer to a case changed.
// The text form (tests/data/directml_expected.tsv for DirectML) lists every
// case that does not agree, one "CASE_ID<TAB>KIND" line each (KindName);
// '#' lines are comments. A case not listed is expected to agree. Free
// functions over values; thread-compatible.
#ifndef DMLSERVE_TESTS_CONFORMANCE_DIFF_EXPECTATIONS_H_
#define DMLSERVE_TESTS_CONFORMANCE_DIFF_EXPECTATIONS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/conformance/differential.h"

namespace dmls::conformance {

// Case id -> expected kind name, for the cases that do not agree.
using DiffExpectations = std::map<std::string, std::string>;

// INVALID_ARGUMENT naming the line for a malformed line, an unknown kind,
// "agree" (implied, never listed) or a case listed twice.
absl::StatusOr<DiffExpectations> ParseDiffExpectations(absl::string_view text);

// The text form of `rows`' outcomes: `header` (each line prefixed "# "),
// then the rows that do not agree, sorted by case id.
std::string DiffExpectationsText(const std::vector<DiffRow>& rows, absl::string_view header);

// One line per row whose kind differs from `expected` ("CASE: expected
// KIND, got KIND: DETAIL"); empty when every row is as expected. Cases of
// `expected` that no row ran are not compared (a filtered run).
std::vector<std::string> DiffChanges(const std::vector<DiffRow>& rows,
                                     const DiffExpectations& expected);

}  // namespace dmls::conformance

#endif  // DMLSERVE_TESTS_CONFORMANCE_DIFF_EXPECTATIONS_H_
