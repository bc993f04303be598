// OperatorDesc: the engine's form of a DML_OPERATOR_DESC for the operators of
// OPERATORS.md. Every optional field mirrors a wire field whose absence the
// validator reports (PARAM_MISSING); raw integers keep unknown enum values so
// that they can be reported too. Plain value type; thread-compatible.
#ifndef DMLSERVE_ENGINE_CORE_OPERATOR_DESC_H_
#define DMLSERVE_ENGINE_CORE_OPERATOR_DESC_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/core/tensor_desc.h"
#include "engine/core/types.h"

namespace dmls {

// DML_SCALE_BIAS; a missing member is PARAM_INVALID.
struct ScaleBias {
  std::optional<float> scale;
  std::optional<float> bias;
};

// An activation's parameters in DirectMLX's compact form (OPERATORS.md §5.3):
// param[0]/param[1] are, per activation, Alpha/Beta, Alpha/Gamma,
// Bias/Threshold, Steepness, ... The operator schema names them.
using ActivationParams = std::array<std::optional<float>, 2>;

// MVN/MVN1's FusedActivation: a DML_OPERATOR_DESC of an activation whose
// tensors must be NULL.
struct FusedActivationDesc {
  uint32_t type = 0;           // DML_OPERATOR_TYPE, raw; 0 = none named
  bool has_tensors = false;    // Input/OutputTensor were not NULL
  ActivationParams params;
};

struct OperatorDesc {
  uint32_t type = 0;  // DML_OPERATOR_TYPE, raw

  std::optional<TensorDesc> input;
  std::optional<TensorDesc> scale;  // MVN, MVN1
  std::optional<TensorDesc> bias;   // MVN, MVN1
  std::optional<TensorDesc> output;

  // ELEMENT_WISE_THRESHOLD (min) and ELEMENT_WISE_CLIP (min, max).
  std::optional<float> min;
  std::optional<float> max;
  std::optional<ScaleBias> scale_bias;

  // Standalone activations.
  ActivationParams activation;

  // MEAN_VARIANCE_NORMALIZATION1: AxisCount and Axes as sent.
  std::optional<uint64_t> axis_count;
  std::vector<uint64_t> axes;
  // MVN and MVN1: C BOOLs (0/1; anything else is PARAM_INVALID).
  std::optional<uint32_t> cross_channel;  // MVN only
  std::optional<uint32_t> normalize_variance;
  std::optional<float> epsilon;
  std::optional<FusedActivationDesc> fused_activation;

  OperatorType op() const { return static_cast<OperatorType>(type); }
};

// Every field equal; float parameters compare as floats (a NaN parameter
// makes two descriptors differ, which only costs a cache that uses this a
// miss).
bool operator==(const ScaleBias& a, const ScaleBias& b);
bool operator==(const FusedActivationDesc& a, const FusedActivationDesc& b);
bool operator==(const OperatorDesc& a, const OperatorDesc& b);
inline bool operator!=(const OperatorDesc& a, const OperatorDesc& b) { return !(a == b); }

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_OPERATOR_DESC_H_
