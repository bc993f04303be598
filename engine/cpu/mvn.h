// MEAN_VARIANCE_NORMALIZATION and MEAN_VARIANCE_NORMALIZATION1 on the CPU
// (OPERATORS.md §4.3, §4.4): two-pass mean and population variance in
// binary64 over each reduction group, optional Scale/Bias broadcast through
// size-1 dimensions and zero strides, optional fused activation, one final
// rounding to the output type. Stateless functions: thread-safe.
#ifndef DMLSERVE_ENGINE_CPU_MVN_H_
#define DMLSERVE_ENGINE_CPU_MVN_H_

#include <string_view>

#include "absl/status/status.h"
#include "engine/core/operator_desc.h"
#include "engine/ops/schema.h"

namespace dmls::cpu {

// Preconditions as for the element-wise kernels: payloads passed
// CheckPayload; `scale`/`bias` are empty when the tensor is absent.
absl::Status RunMvn(const OperatorDesc& op, const ops::OperatorSchema& schema,
                    std::string_view input, std::string_view scale,
                    std::string_view bias, char* output);

}  // namespace dmls::cpu

#endif  // DMLSERVE_ENGINE_CPU_MVN_H_
