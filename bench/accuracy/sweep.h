// The accuracy sweep of dmls_accuracy: dense sets of float32 (and every
// finite binary16) inputs, the activation cases swept (every activation with
// ordinary parameters plus the extreme parameters that broke drivers), and
// the worst-error bookkeeping against the binary64 CPU reference
// (engine/cpu/activations.h). Pure data and functions; ErrorStats is a plain
// value type (thread-compatible).
#ifndef DMLSERVE_BENCH_ACCURACY_SWEEP_H_
#define DMLSERVE_BENCH_ACCURACY_SWEEP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/types.h"

namespace dmls::accuracy {

// Tolerance classes of OPERATORS.md §8 that activations use.
enum class TolClass { kExact, kArith, kTranscendental };

// The class's ulp budget U and relative budget rtol for FLOAT32 or FLOAT16;
// the absolute allowance (atol) is deliberately left out: the sweep asks
// whether the relative terms alone hold.
struct Budget {
  int ulp = 0;
  double rel = 0;
};
Budget BudgetFor(TolClass c, bool half);
const char* TolClassName(TolClass c);

// One activation with fixed parameters.
struct SweepCase {
  std::string name;  // e.g. "celu(alpha=-FLT_MAX)"
  OperatorType op;
  std::optional<float> p0, p1;
  TolClass tol = TolClass::kTranscendental;
};

// Every activation once with ordinary parameters, then CELU/ELU/SCALED_ELU
// with extreme Alpha and the denormal / FLT_MIN parameters of the H100
// failures.
std::vector<SweepCase> DefaultCases();

// Both signs of every float32 binade from the smallest normal to the
// largest (254 exponents), `mantissas` evenly spaced mantissas in each
// (including 1.0 and the largest), plus +-0, +-FLT_TRUE_MIN and +-inf.
// mantissas = 4096 gives about 2.1M values.
std::vector<float> Float32Sweep(uint32_t mantissas);

// Every finite binary16 value (63488 values), as raw bits.
std::vector<uint16_t> Float16Sweep();

// Error of `got` against the reference `ref` (binary64, from float32
// inputs) in units of the result type: relative error |got-ref|/|ref| and
// ulps of the reference rounded to the result type.
struct ElementError {
  double rel = 0;
  double ulp = 0;
};
// `half_ulps` measures ulps in binary16 instead of binary32.
ElementError MeasureError(double got, double ref, bool half_ulps);

// Worst errors over a sweep. References that are NaN, infinite, zero or
// denormal in the result type take no part in the relative statistics;
// they are checked for an exact match (NaN with NaN, the same infinity) or,
// for zero/denormal references, counted when |got| is beyond the type's
// smallest normal.
class ErrorStats {
 public:
  explicit ErrorStats(bool half) : half_(half) {}
  void Add(float x, double ref, double got, int ulp_budget, double rel_budget);

  uint64_t compared() const { return compared_; }        // finite normal refs
  uint64_t special_mismatches() const { return special_mismatches_; }
  uint64_t over_budget() const { return over_budget_; }  // ulp > U and rel > rtol
  double worst_rel() const { return worst_rel_; }
  double worst_ulp() const { return worst_ulp_; }
  float worst_x() const { return worst_x_; }       // input of the worst ulp
  double worst_got() const { return worst_got_; }
  double worst_ref() const { return worst_ref_; }
  float first_special_x() const { return first_special_x_; }

 private:
  bool half_;
  uint64_t compared_ = 0, special_mismatches_ = 0, over_budget_ = 0;
  double worst_rel_ = 0, worst_ulp_ = 0, worst_got_ = 0, worst_ref_ = 0;
  float worst_x_ = 0, first_special_x_ = 0;
};

}  // namespace dmls::accuracy

#endif  // DMLSERVE_BENCH_ACCURACY_SWEEP_H_
