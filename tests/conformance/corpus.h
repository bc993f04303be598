// The conformance runner: loads the oracle-generated corpus
// (tests/data/conformance_*.pb, see case.proto and tests/gen/gen_cases.py),
// turns each case into an ExecuteRequest through the server's proto
// mapping, runs it on any dmls::Engine and checks the output *elements*
// (gathered through the output descriptor's strides; padding bytes are not
// compared) against the oracle's values with the §8 tolerance comparator.
// Engine-agnostic: the CPU engine and the Direct3D 12 engine run the same
// corpus. Free functions; RunCorpus blocks until every case completed.
#ifndef DMLSERVE_TESTS_CONFORMANCE_CORPUS_H_
#define DMLSERVE_TESTS_CONFORMANCE_CORPUS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "tests/conformance/case.pb.h"

namespace dmls::conformance {

using dmlserve::conformance::Case;
using dmlserve::conformance::CaseSet;

struct RunOptions {
  // Requests handed to the engine before waiting for completions.
  int max_in_flight = 4;
  // Accept a NaN result in cases flagged nan_sensitive (an engine whose
  // min/max propagate NaN, OPERATORS.md §7.3). Off: minNum/maxNum required.
  bool relax_nan_sensitive = false;
  // Only run cases whose id contains this substring (empty: all).
  std::string id_filter;
  // When set, every case is checked with this tolerance class instead of
  // its own, e.g. "EXACT" to require bit-exact agreement with the oracle.
  std::string tolerance_override;
  // Also accept, element by element, a case's expected_ftz (the result with
  // float32 denormal inputs and parameters flushed, OPERATORS.md §7.5).
  // Off: only `expected` conforms (an engine that never flushes, e.g. the
  // CPU reference).
  bool accept_ftz = true;
};

struct CaseFailure {
  std::string id;
  std::string message;
};

struct CorpusReport {
  int total = 0;  // cases run (after the filter)
  int passed = 0;
  std::vector<CaseFailure> failures;
  // "passed/total" plus up to `max_failures` failures, one per line.
  std::string Summary(size_t max_failures = 25) const;
};

// One serialized CaseSet file.
absl::StatusOr<CaseSet> LoadCaseSet(const std::string& path);
// The names of every conformance_*.pb in `dir`, sorted, except those whose
// name starts with one of `skip_prefixes`; NOT_FOUND when `dir` cannot be
// listed or holds none.
absl::StatusOr<std::vector<std::string>> CorpusFileNames(
    const std::string& dir, const std::vector<std::string>& skip_prefixes = {});
// Every conformance_*.pb in `dir`, merged in file-name order, except the
// files whose name starts with one of `skip_prefixes` (e.g.
// "conformance_random" for a test that wants only the curated corpus).
absl::StatusOr<CaseSet> LoadCorpusDir(
    const std::string& dir, const std::vector<std::string>& skip_prefixes = {});

// The engine request of a case (the proto request mapped to engine types).
ExecuteRequest RequestFromCase(const Case& c);

// The logical elements of `desc` (through its strides) in `buffer`, packed
// in row-major order; nullopt when one lies outside the buffer.
std::optional<std::string> GatherElements(const TensorDesc& desc,
                                          const std::string& buffer);

// Checks one engine result against the case; nullopt when it conforms,
// otherwise a description of the first problem. `op` is the request's
// operator and `in_place` its binding (they define where the elements are).
std::optional<std::string> CheckResult(
    const Case& c, const OperatorDesc& op, bool in_place,
    const absl::StatusOr<ExecuteResult>& result,
    const RunOptions& options = {});

CorpusReport RunCorpus(Engine& engine, const CaseSet& cases,
                       const RunOptions& options = {});

}  // namespace dmls::conformance

#endif  // DMLSERVE_TESTS_CONFORMANCE_CORPUS_H_
