// The differential: one conformance case run on two engines ("ours", the
// CPU reference, and "theirs", e.g. DirectML.dll through DmlEngine) and
// compared element by element with the case's §8 tolerance (the case's
// flushed-input alternative, §7.5, accepted for theirs), plus each engine
// against the oracle's expected values. Engine-agnostic, so it is tested on
// Linux with two CPU engines; deploy/windows/directml-diff.sh runs it
// against DirectML under Wine and docs/DIRECTML.md holds the result.
// Free functions; DiffCase blocks until both engines answered.
#ifndef DMLSERVE_TESTS_CONFORMANCE_DIFFERENTIAL_H_
#define DMLSERVE_TESTS_CONFORMANCE_DIFFERENTIAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "tests/conformance/corpus.h"

namespace dmls::conformance {

struct DiffRow {
  enum class Kind {
    kAgree,         // every element within the case's tolerance
    kDisagree,      // an element differs (below: the first one)
    kRefused,       // theirs returned INVALID_ARGUMENT (detail)
    kTheirsFailed,  // theirs returned another error, e.g. a lost device
    kOursFailed,    // ours returned an error (detail); not compared
  };
  std::string id;
  std::string op;     // "ACTIVATION_CELU"
  std::string dtype;  // output data type
  Kind kind = Kind::kAgree;
  // The comparator's first mismatch and the operator's attributes; or the
  // error, followed for errors of theirs by the input and output tensor
  // descs (sizes, strides, bytes, alignment) and the attributes.
  std::string detail;
  // For kDisagree: the first differing logical element, the input element
  // of the same logical index (element-wise operators; "" when the input
  // has fewer elements), our value and theirs.
  uint64_t element = 0;
  std::string input;
  std::string ours;
  std::string theirs;
  // Each engine against the oracle's expected values (CheckResult; theirs
  // with the §7.5 flushed alternative accepted, ours without).
  bool ours_conforms = false;
  bool theirs_conforms = false;
};

DiffRow DiffCase(const Case& c, Engine& ours, Engine& theirs);

// "agree", "disagree", "refused", "failed" (theirs), "ours failed".
const char* KindName(DiffRow::Kind kind);

// docs/DIRECTML.md's generated part: per operator and data type the counts
// of each kind, then one table row per disagreement and per refusal.
std::string DiffMarkdown(const std::vector<DiffRow>& rows);

}  // namespace dmls::conformance

#endif  // DMLSERVE_TESTS_CONFORMANCE_DIFFERENTIAL_H_
