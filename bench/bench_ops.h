// The operators dmls_bench measures, by name: activations and element-wise
// operators over [1, 1, 1, n], and MVN1 over the last axis of
// [1, 1, mvn_rows, n / mvn_rows]. Stateless; thread-safe.
#ifndef DMLSERVE_BENCH_BENCH_OPS_H_
#define DMLSERVE_BENCH_BENCH_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/core/operator_desc.h"
#include "engine/core/types.h"

namespace dmls::bench {

// The descriptor of operator `name` on `n` elements of `type`, packed and
// validated: celu, elu, relu, sigmoid, tanh, gelu, identity, linear,
// hard_sigmoid, threshold, clip, mvn1, mvn1_nv0 (NormalizeVariance FALSE),
// mvn1_affine (a Scale and a Bias per column). InvalidArgument for another
// name, or an MVN1 whose `n` is not a multiple of `mvn_rows`.
absl::StatusOr<OperatorDesc> MakeOp(const std::string& name, uint64_t n,
                                    uint64_t mvn_rows, DataType type);

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_BENCH_OPS_H_
