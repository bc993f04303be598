#include "engine/directml/op_mapping.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/core/types.h"

namespace dmls::directml {
namespace {

template <typename D>
DML_OPERATOR_DESC Put(DML_OPERATOR_TYPE type, const D& desc, ActivationDescStorage& storage) {
  storage = desc;
  return DML_OPERATOR_DESC{type, &std::get<D>(storage)};
}

// OperatorKey's appenders: fixed-width little-endian fields, presence bytes
// before optionals, counts before lists, so that no two descs collide.
void AppendU64(std::string& key, uint64_t v) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(v >> (8 * i));
  key.append(bytes, 8);
}
void AppendFloat(std::string& key, const std::optional<float>& v) {
  key.push_back(v.has_value() ? 1 : 0);
  if (!v) return;
  uint32_t bits;
  std::memcpy(&bits, &*v, sizeof bits);
  AppendU64(key, bits);
}
void AppendList(std::string& key, const std::vector<uint64_t>& v) {
  AppendU64(key, v.size());
  for (uint64_t x : v) AppendU64(key, x);
}
void AppendTensor(std::string& key, const std::optional<TensorDesc>& t) {
  key.push_back(t.has_value() ? 1 : 0);
  if (!t) return;
  AppendU64(key, t->tensor_type);
  AppendU64(key, t->data_type);
  AppendU64(key, t->flags);
  key.push_back(t->dimension_count.has_value() ? 1 : 0);
  AppendU64(key, t->dimension_count.value_or(0));
  AppendList(key, t->sizes);
  key.push_back(t->strides.has_value() ? 1 : 0);
  if (t->strides) AppendList(key, *t->strides);
  AppendU64(key, t->total_tensor_size_in_bytes);
  AppendU64(key, t->guaranteed_base_offset_alignment);
}
void AppendParams(std::string& key, const ActivationParams& p) {
  AppendFloat(key, p[0]);
  AppendFloat(key, p[1]);
}

}  // namespace

absl::StatusOr<DML_OPERATOR_DESC> MapActivation(uint32_t type, const ActivationParams& params,
                                                const DML_TENSOR_DESC* in,
                                                const DML_TENSOR_DESC* out,
                                                ActivationDescStorage& s) {
  // Validated descs carry every parameter their activation names; an
  // absent one (which the validator would have refused) maps to 0.
  const FLOAT p0 = params[0].value_or(0.0f);
  const FLOAT p1 = params[1].value_or(0.0f);
  switch (static_cast<OperatorType>(type)) {
    case OperatorType::kActivationElu:
      return Put(DML_OPERATOR_ACTIVATION_ELU, DML_ACTIVATION_ELU_OPERATOR_DESC{in, out, p0}, s);
    case OperatorType::kActivationHardSigmoid:
      return Put(DML_OPERATOR_ACTIVATION_HARD_SIGMOID,
                 DML_ACTIVATION_HARD_SIGMOID_OPERATOR_DESC{in, out, p0, p1}, s);
    case OperatorType::kActivationIdentity:
      return Put(DML_OPERATOR_ACTIVATION_IDENTITY, DML_ACTIVATION_IDENTITY_OPERATOR_DESC{in, out},
                 s);
    case OperatorType::kActivationLeakyRelu:
      return Put(DML_OPERATOR_ACTIVATION_LEAKY_RELU,
                 DML_ACTIVATION_LEAKY_RELU_OPERATOR_DESC{in, out, p0}, s);
    case OperatorType::kActivationLinear:
      return Put(DML_OPERATOR_ACTIVATION_LINEAR,
                 DML_ACTIVATION_LINEAR_OPERATOR_DESC{in, out, p0, p1}, s);
    case OperatorType::kActivationParametricSoftplus:
      return Put(DML_OPERATOR_ACTIVATION_PARAMETRIC_SOFTPLUS,
                 DML_ACTIVATION_PARAMETRIC_SOFTPLUS_OPERATOR_DESC{in, out, p0, p1}, s);
    case OperatorType::kActivationRelu:
      return Put(DML_OPERATOR_ACTIVATION_RELU, DML_ACTIVATION_RELU_OPERATOR_DESC{in, out}, s);
    case OperatorType::kActivationScaledElu:
      return Put(DML_OPERATOR_ACTIVATION_SCALED_ELU,
                 DML_ACTIVATION_SCALED_ELU_OPERATOR_DESC{in, out, p0, p1}, s);
    case OperatorType::kActivationScaledTanh:
      return Put(DML_OPERATOR_ACTIVATION_SCALED_TANH,
                 DML_ACTIVATION_SCALED_TANH_OPERATOR_DESC{in, out, p0, p1}, s);
    case OperatorType::kActivationSigmoid:
      return Put(DML_OPERATOR_ACTIVATION_SIGMOID, DML_ACTIVATION_SIGMOID_OPERATOR_DESC{in, out}, s);
    case OperatorType::kActivationSoftplus:
      return Put(DML_OPERATOR_ACTIVATION_SOFTPLUS,
                 DML_ACTIVATION_SOFTPLUS_OPERATOR_DESC{in, out, p0}, s);
    case OperatorType::kActivationSoftsign:
      return Put(DML_OPERATOR_ACTIVATION_SOFTSIGN, DML_ACTIVATION_SOFTSIGN_OPERATOR_DESC{in, out},
                 s);
    case OperatorType::kActivationTanh:
      return Put(DML_OPERATOR_ACTIVATION_TANH, DML_ACTIVATION_TANH_OPERATOR_DESC{in, out}, s);
    case OperatorType::kActivationThresholdedRelu:
      return Put(DML_OPERATOR_ACTIVATION_THRESHOLDED_RELU,
                 DML_ACTIVATION_THRESHOLDED_RELU_OPERATOR_DESC{in, out, p0}, s);
    case OperatorType::kActivationShrink:
      return Put(DML_OPERATOR_ACTIVATION_SHRINK,
                 DML_ACTIVATION_SHRINK_OPERATOR_DESC{in, out, p0, p1}, s);
    case OperatorType::kActivationCelu:
      return Put(DML_OPERATOR_ACTIVATION_CELU, DML_ACTIVATION_CELU_OPERATOR_DESC{in, out, p0}, s);
    case OperatorType::kActivationGelu:
      return Put(DML_OPERATOR_ACTIVATION_GELU, DML_ACTIVATION_GELU_OPERATOR_DESC{in, out}, s);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("DirectML mapping: operator type ", type, " is not an activation we serve"));
  }
}

const DML_TENSOR_DESC* DmlOperator::MapTensor(Slot slot, const TensorDesc& t) {
  present_[slot] = true;
  sizes_[slot].assign(t.sizes.begin(), t.sizes.end());
  DML_BUFFER_TENSOR_DESC& b = buffers_[slot];
  b.DataType = static_cast<DML_TENSOR_DATA_TYPE>(t.data_type);
  b.Flags = static_cast<DML_TENSOR_FLAGS>(t.flags);
  b.DimensionCount = t.rank();
  b.Sizes = sizes_[slot].data();
  if (t.strides) {
    strides_[slot].assign(t.strides->begin(), t.strides->end());
    b.Strides = strides_[slot].data();
  }
  b.TotalTensorSizeInBytes = t.total_tensor_size_in_bytes;
  b.GuaranteedBaseOffsetAlignment = static_cast<UINT>(t.guaranteed_base_offset_alignment);
  tensors_[slot] = DML_TENSOR_DESC{DML_TENSOR_TYPE_BUFFER, &b};
  return &tensors_[slot];
}

const DML_BUFFER_TENSOR_DESC* DmlOperator::input(int i) const {
  if (i < 0 || i >= input_count_ || !present_[i]) return nullptr;
  return &buffers_[i];
}

absl::StatusOr<std::unique_ptr<DmlOperator>> DmlOperator::Create(const OperatorDesc& op) {
  if (!op.input || !op.output) {
    return absl::InvalidArgumentError("DirectML mapping: input and output tensors are required");
  }
  std::unique_ptr<DmlOperator> d(new DmlOperator());
  const DML_TENSOR_DESC* in = d->MapTensor(kInput, *op.input);
  const DML_TENSOR_DESC* out = d->MapTensor(kOutput, *op.output);
  const DML_SCALE_BIAS* scale_bias = nullptr;
  if (op.scale_bias) {
    d->scale_bias_ =
        DML_SCALE_BIAS{op.scale_bias->scale.value_or(1.0f), op.scale_bias->bias.value_or(0.0f)};
    scale_bias = &d->scale_bias_;
  }
  const DML_OPERATOR_DESC* fused = nullptr;
  if (op.fused_activation && op.fused_activation->type != 0) {
    absl::StatusOr<DML_OPERATOR_DESC> f = MapActivation(
        op.fused_activation->type, op.fused_activation->params, nullptr, nullptr, d->fused_);
    if (!f.ok()) return f.status();
    d->fused_desc_ = *f;
    fused = &d->fused_desc_;
  }
  const DML_TENSOR_DESC* scale = op.scale ? d->MapTensor(kScale, *op.scale) : nullptr;
  const DML_TENSOR_DESC* bias = op.bias ? d->MapTensor(kBias, *op.bias) : nullptr;
  switch (op.op()) {
    case OperatorType::kElementWiseClip:
      d->clip_ = {in, out, scale_bias, op.min.value_or(0.0f), op.max.value_or(0.0f)};
      d->desc_ = {DML_OPERATOR_ELEMENT_WISE_CLIP, &d->clip_};
      return d;
    case OperatorType::kElementWiseThreshold:
      d->threshold_ = {in, out, scale_bias, op.min.value_or(0.0f)};
      d->desc_ = {DML_OPERATOR_ELEMENT_WISE_THRESHOLD, &d->threshold_};
      return d;
    case OperatorType::kMeanVarianceNormalization:
      d->input_count_ = 3;
      d->mvn_ = {in,
                 scale,
                 bias,
                 out,
                 op.cross_channel.value_or(0) != 0,
                 op.normalize_variance.value_or(0) != 0,
                 op.epsilon.value_or(0.0f),
                 fused};
      d->desc_ = {DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION, &d->mvn_};
      return d;
    case OperatorType::kMeanVarianceNormalization1:
      d->input_count_ = 3;
      d->axes_.assign(op.axes.begin(), op.axes.end());
      d->mvn1_ = {in,
                  scale,
                  bias,
                  out,
                  static_cast<UINT>(op.axis_count.value_or(op.axes.size())),
                  d->axes_.data(),
                  op.normalize_variance.value_or(0) != 0,
                  op.epsilon.value_or(0.0f),
                  fused};
      d->desc_ = {DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1, &d->mvn1_};
      return d;
    default: {
      absl::StatusOr<DML_OPERATOR_DESC> a =
          MapActivation(op.type, op.activation, in, out, d->activation_);
      if (!a.ok()) return a.status();
      d->desc_ = *a;
      return d;
    }
  }
}

std::string OperatorKey(const OperatorDesc& op) {
  std::string key;
  AppendU64(key, op.type);
  AppendTensor(key, op.input);
  AppendTensor(key, op.scale);
  AppendTensor(key, op.bias);
  AppendTensor(key, op.output);
  AppendFloat(key, op.min);
  AppendFloat(key, op.max);
  key.push_back(op.scale_bias.has_value() ? 1 : 0);
  if (op.scale_bias) {
    AppendFloat(key, op.scale_bias->scale);
    AppendFloat(key, op.scale_bias->bias);
  }
  AppendParams(key, op.activation);
  key.push_back(op.axis_count.has_value() ? 1 : 0);
  AppendU64(key, op.axis_count.value_or(0));
  AppendList(key, op.axes);
  key.push_back(op.cross_channel.has_value() ? 1 : 0);
  AppendU64(key, op.cross_channel.value_or(0));
  key.push_back(op.normalize_variance.has_value() ? 1 : 0);
  AppendU64(key, op.normalize_variance.value_or(0));
  AppendFloat(key, op.epsilon);
  key.push_back(op.fused_activation.has_value() ? 1 : 0);
  if (op.fused_activation) {
    AppendU64(key, op.fused_activation->type);
    key.push_back(op.fused_activation->has_tensors ? 1 : 0);
    AppendParams(key, op.fused_activation->params);
  }
  return key;
}

}  // namespace dmls::directml
