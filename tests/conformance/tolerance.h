// The element comparison of OPERATORS.md §8, identical to oracle.compare:
// a floating element passes when both are NaN, or they are equal (+0 == -0,
// infinities must match exactly), or their ULP distance is within the
// class's budget, or |a-e| <= atol + rtol*|e| (finite values); FLOAT32 also
// accepts a flushed result when the expected value is a denormal (§7.5).
// Integer elements must match exactly. Pure functions: thread-safe.
#ifndef DMLSERVE_TESTS_CONFORMANCE_TOLERANCE_H_
#define DMLSERVE_TESTS_CONFORMANCE_TOLERANCE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/core/types.h"

namespace dmls::conformance {

struct Tolerance {
  int64_t ulp = 0;
  double atol = 0;
  double rtol = 0;
};

// The §8 table: class name ("EXACT", "ARITH", "TRANSCENDENTAL",
// "NORMALIZATION") x FLOAT32/FLOAT16. Integer types get exact (0,0,0).
absl::StatusOr<Tolerance> ToleranceFor(absl::string_view tolerance_class,
                                       DataType type);

// Distance in representable values between two FLOAT32 (or FLOAT16, given
// as their widened values) numbers, via the sign-magnitude ordering of
// their bit patterns, as oracle.ulp_distance.
int64_t UlpDistance(double a, double e, DataType type);

// One floating element `actual` against `expected` (both already values of
// `type`, FLOAT32 or FLOAT16).
bool FloatElementMatches(double actual, double expected, DataType type,
                         const Tolerance& tolerance);

struct Mismatch {
  uint64_t index = 0;   // logical element index
  std::string message;  // "[i] actual vs expected (...)"
};

// Compares `count` logical elements stored as consecutive little-endian
// values of `type` in `actual` and `expected`. nullopt when all match,
// otherwise the first mismatch. `allow_nan_actual` accepts a NaN result
// anywhere (the relaxation §7.3 allows for NaN-propagating min/max).
std::optional<Mismatch> CompareElements(const std::string& actual,
                                        const std::string& expected,
                                        DataType type, uint64_t count,
                                        const Tolerance& tolerance,
                                        bool allow_nan_actual = false);

// As CompareElements, but an element also passes when it matches the same
// element of `alternative` (the §7.5 flushed-input result, as many bytes as
// `expected`). The choice is made per element, not for the whole output:
// §7.5 lets a device flush a denormal at the input of each arithmetic
// instruction, and drivers do so only on some paths (a select or a copy
// passes a denormal through, a multiply flushes it), so one conformant
// output can mix exact and flushed elements. Elements that do not depend on
// a denormal are the same in both expectations, so this only widens the
// elements that do. Reported mismatches name both expected values.
std::optional<Mismatch> CompareElementsWithAlternative(
    const std::string& actual, const std::string& expected,
    const std::string& alternative, DataType type, uint64_t count,
    const Tolerance& tolerance, bool allow_nan_actual = false);

}  // namespace dmls::conformance

#endif  // DMLSERVE_TESTS_CONFORMANCE_TOLERANCE_H_
