// Random, deterministic mutations of a dmlserve.v1.ExecuteRequest for the
// robustness test: each call changes one aspect of the request (a tensor's
// data type, sizes, strides, dimension count, total size, alignment, flags,
// tensor type or presence; an operator parameter to NaN/Inf/0/negative/huge
// or absent; MVN axes and BOOLs; the fused activation; the operator itself;
// in_place; the feature level, including values that are no
// DML_FEATURE_LEVEL; the payload lengths). Mutations work on the wire form
// through protobuf reflection, so they reach exactly what a client can send.
//
// Not thread-safe (owns its random engine); one per test thread.
#ifndef DMLSERVE_TESTS_ROBUSTNESS_MUTATOR_H_
#define DMLSERVE_TESTS_ROBUSTNESS_MUTATOR_H_

#include <cstdint>
#include <random>
#include <string>

#include "dmlserve/v1/dmlserve.pb.h"

namespace dmls::robustness {

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  // Applies one random mutation to `request` and returns its name (for
  // failure messages), e.g. "input.sizes[2]=4294967296".
  std::string MutateOnce(dmlserve::v1::ExecuteRequest& request);

  // With probability 1/2 each: sets every present tensor's
  // total_tensor_size_in_bytes to the smallest valid value for its current
  // layout, and copies the input's layout to the output. Structural
  // mutations are mostly rejected by TOTAL_SIZE_TOO_SMALL or
  // SIZES_MISMATCH; this keeps a good share of the mutants valid, so the
  // engines see unusual but legal layouts.
  void MaybeRepair(dmlserve::v1::ExecuteRequest& request);

  uint32_t Uniform(uint32_t n) {  // in [0, n)
    return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_);
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::string MutateTensor(dmlserve::v1::ExecuteRequest& request);
  std::string MutateParam(dmlserve::v1::ExecuteRequest& request);
  std::string MutateMvn(dmlserve::v1::ExecuteRequest& request);
  std::string MutateFused(dmlserve::v1::ExecuteRequest& request);
  std::string SwapOperator(dmlserve::v1::ExecuteRequest& request);
  std::string MutateTopLevel(dmlserve::v1::ExecuteRequest& request);

  uint64_t InterestingSize();
  float InterestingFloat();

  std::mt19937_64 rng_;
};

}  // namespace dmls::robustness

#endif  // DMLSERVE_TESTS_ROBUSTNESS_MUTATOR_H_
