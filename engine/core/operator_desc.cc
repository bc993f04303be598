#include "engine/core/operator_desc.h"

namespace dmls {

bool operator==(const ScaleBias& a, const ScaleBias& b) {
  return a.scale == b.scale && a.bias == b.bias;
}

bool operator==(const FusedActivationDesc& a, const FusedActivationDesc& b) {
  return a.type == b.type && a.has_tensors == b.has_tensors && a.params == b.params;
}

bool operator==(const OperatorDesc& a, const OperatorDesc& b) {
  return a.type == b.type && a.input == b.input && a.scale == b.scale && a.bias == b.bias &&
         a.output == b.output && a.min == b.min && a.max == b.max &&
         a.scale_bias == b.scale_bias && a.activation == b.activation &&
         a.axis_count == b.axis_count && a.axes == b.axes &&
         a.cross_channel == b.cross_channel && a.normalize_variance == b.normalize_variance &&
         a.epsilon == b.epsilon && a.fused_activation == b.fused_activation;
}

}  // namespace dmls
