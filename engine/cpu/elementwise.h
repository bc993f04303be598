// Element-wise kernels of the CPU reference engine: ELEMENT_WISE_THRESHOLD,
// ELEMENT_WISE_CLIP and the standalone activations (OPERATORS.md §4.1, §4.2,
// §6, §6.1). Each logical element is gathered through the input's effective
// strides, computed exactly as oracle.py does (binary64 for floats, exact
// integer arithmetic with trunc/saturate/NaN->0 parameter conversion for
// integers) and scattered, rounded once, through the output's strides.
// Stateless functions: thread-safe.
#ifndef DMLSERVE_ENGINE_CPU_ELEMENTWISE_H_
#define DMLSERVE_ENGINE_CPU_ELEMENTWISE_H_

#include <string_view>

#include "absl/status/status.h"
#include "engine/core/operator_desc.h"
#include "engine/ops/schema.h"

namespace dmls::cpu {

// Preconditions (checked by the caller, CpuEngine): the payload passed
// CheckPayload, `output` holds at least the output tensor's elements.
// Returns INVALID_ARGUMENT for shapes/types the operator cannot have (the
// request was not validated).
absl::Status RunUnaryScaleBias(const OperatorDesc& op, std::string_view input,
                               char* output);
absl::Status RunActivation(const OperatorDesc& op,
                           const ops::OperatorSchema& schema,
                           std::string_view input, char* output);

// float -> integer type conversion of OPERATORS.md §4.1: truncate toward
// zero, saturate to the type's range, NaN -> 0.
template <typename T>
T FloatToIntSaturate(double value);

}  // namespace dmls::cpu

#endif  // DMLSERVE_ENGINE_CPU_ELEMENTWISE_H_
