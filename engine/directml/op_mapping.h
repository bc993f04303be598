// DmlOperator: our OperatorDesc (engine/core/operator_desc.h) turned into
// the DML_OPERATOR_DESC DirectML's IDMLDevice::CreateOperator takes, with
// every tensor desc, size, stride, DML_SCALE_BIAS and fused activation it
// points at, plus OperatorKey, the cache key of compiled operators.
//
// Portable: plain DirectML.h structs, no DirectML.dll call, so it builds and
// is tested on Linux (op_mapping_test.cc) as well as in the Windows engine
// (dml_engine.h).
//
// Ownership: a DmlOperator owns everything desc() points into; it is neither
// copyable nor movable (the pointers are into itself). Thread-compatible.
#ifndef DMLSERVE_ENGINE_DIRECTML_OP_MAPPING_H_
#define DMLSERVE_ENGINE_DIRECTML_OP_MAPPING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/operator_desc.h"
#include "engine/directml/dml_api.h"

namespace dmls::directml {

// Every DirectML activation desc an activation we serve (OPERATORS.md §5)
// maps to; one alternative per struct.
using ActivationDescStorage =
    std::variant<std::monostate, DML_ACTIVATION_ELU_OPERATOR_DESC,
                 DML_ACTIVATION_HARD_SIGMOID_OPERATOR_DESC, DML_ACTIVATION_IDENTITY_OPERATOR_DESC,
                 DML_ACTIVATION_LEAKY_RELU_OPERATOR_DESC, DML_ACTIVATION_LINEAR_OPERATOR_DESC,
                 DML_ACTIVATION_PARAMETRIC_SOFTPLUS_OPERATOR_DESC,
                 DML_ACTIVATION_RELU_OPERATOR_DESC, DML_ACTIVATION_SCALED_ELU_OPERATOR_DESC,
                 DML_ACTIVATION_SCALED_TANH_OPERATOR_DESC, DML_ACTIVATION_SIGMOID_OPERATOR_DESC,
                 DML_ACTIVATION_SOFTPLUS_OPERATOR_DESC, DML_ACTIVATION_SOFTSIGN_OPERATOR_DESC,
                 DML_ACTIVATION_TANH_OPERATOR_DESC, DML_ACTIVATION_THRESHOLDED_RELU_OPERATOR_DESC,
                 DML_ACTIVATION_SHRINK_OPERATOR_DESC, DML_ACTIVATION_CELU_OPERATOR_DESC,
                 DML_ACTIVATION_GELU_OPERATOR_DESC>;

class DmlOperator {
 public:
  // INVALID_ARGUMENT for an operator type we do not map (a desc that has
  // passed ops::Validate always maps).
  static absl::StatusOr<std::unique_ptr<DmlOperator>> Create(const OperatorDesc& op);

  DmlOperator(const DmlOperator&) = delete;
  DmlOperator& operator=(const DmlOperator&) = delete;

  const DML_OPERATOR_DESC& desc() const { return desc_; }
  // Input binding slots in DirectML's order: 1 for the element-wise
  // operators and activations, 3 (input, scale, bias; scale and bias bound
  // as NONE when absent) for MVN and MVN1.
  int input_count() const { return input_count_; }
  // The buffer tensor desc of binding slot `i` (inputs), nullptr for an
  // absent optional tensor; output() for the one output.
  const DML_BUFFER_TENSOR_DESC* input(int i) const;
  const DML_BUFFER_TENSOR_DESC& output() const { return buffers_[kOutput]; }

 private:
  enum Slot { kInput = 0, kScale = 1, kBias = 2, kOutput = 3, kSlots = 4 };
  DmlOperator() = default;
  const DML_TENSOR_DESC* MapTensor(Slot slot, const TensorDesc& t);

  DML_OPERATOR_DESC desc_{};
  int input_count_ = 1;
  bool present_[kSlots] = {};
  std::vector<UINT> sizes_[kSlots];
  std::vector<UINT> strides_[kSlots];
  DML_BUFFER_TENSOR_DESC buffers_[kSlots]{};
  DML_TENSOR_DESC tensors_[kSlots]{};
  DML_SCALE_BIAS scale_bias_{};
  std::vector<UINT> axes_;
  // The operator's own desc (one of these is used) and, for MVN/MVN1, the
  // fused activation's.
  DML_ELEMENT_WISE_CLIP_OPERATOR_DESC clip_{};
  DML_ELEMENT_WISE_THRESHOLD_OPERATOR_DESC threshold_{};
  DML_MEAN_VARIANCE_NORMALIZATION_OPERATOR_DESC mvn_{};
  DML_MEAN_VARIANCE_NORMALIZATION1_OPERATOR_DESC mvn1_{};
  ActivationDescStorage activation_;
  ActivationDescStorage fused_;
  DML_OPERATOR_DESC fused_desc_{};
};

// Fills `storage` with the DirectML desc of activation `type` (raw
// DML_OPERATOR_TYPE) whose parameters are `params` in DirectMLX's compact
// order (OPERATORS.md §5.3) and returns the DML_OPERATOR_DESC pointing at
// it. `input`/`output` are NULL for a fused activation. INVALID_ARGUMENT for
// a type that is not one of the activations we serve.
absl::StatusOr<DML_OPERATOR_DESC> MapActivation(uint32_t type, const ActivationParams& params,
                                                const DML_TENSOR_DESC* input,
                                                const DML_TENSOR_DESC* output,
                                                ActivationDescStorage& storage);

// A string equal for two descs exactly when they are equal field by field
// (operator==; floats by bit pattern, so -0 and 0 differ and NaNs with the
// same payload are equal): the key of the compiled-operator cache.
std::string OperatorKey(const OperatorDesc& op);

}  // namespace dmls::directml

#endif  // DMLSERVE_ENGINE_DIRECTML_OP_MAPPING_H_
