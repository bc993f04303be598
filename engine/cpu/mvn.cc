#include "engine/cpu/mvn.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/cpu/activations.h"
#include "engine/cpu/tensor_access.h"

namespace dmls::cpu {
namespace {

// Scale/Bias must have the input's rank and, per dimension, its size or 1.
absl::Status CheckBroadcastable(const TensorDesc& operand,
                                const TensorDesc& input,
                                absl::string_view name) {
  if (operand.data_type != input.data_type ||
      operand.sizes.size() != input.sizes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " differs from InputTensor in type or rank"));
  }
  for (size_t d = 0; d < operand.sizes.size(); ++d) {
    if (operand.sizes[d] != 1 && operand.sizes[d] != input.sizes[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " does not broadcast to InputTensor"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunMvn(const OperatorDesc& op, const ops::OperatorSchema& schema,
                    std::string_view input, std::string_view scale,
                    std::string_view bias, char* output) {
  if (!op.input || !op.output || op.input->data_type != op.output->data_type ||
      op.input->sizes != op.output->sizes) {
    return absl::InvalidArgumentError(
        "InputTensor and OutputTensor must agree in data type and sizes");
  }
  const TensorDesc& in_desc = *op.input;
  const DataType type = in_desc.type();
  if (type != DataType::kFloat32 && type != DataType::kFloat16) {
    return absl::InvalidArgumentError("MVN needs FLOAT32 or FLOAT16 tensors");
  }
  const size_t rank = in_desc.sizes.size();

  // Reduction axes: MVN's CrossChannel picks {1,2,3} or {2,3} (§4.4).
  std::vector<uint64_t> axes;
  if (schema.kind == ops::OpKind::kMvn) {
    if (rank != 4) return absl::InvalidArgumentError("MVN needs 4-D tensors");
    axes = op.cross_channel.value_or(0) ? std::vector<uint64_t>{1, 2, 3}
                                        : std::vector<uint64_t>{2, 3};
  } else {
    axes = op.axes;
  }
  std::vector<bool> reduced(rank, false);
  for (uint64_t a : axes) {
    if (a >= rank || reduced[a]) {
      return absl::InvalidArgumentError("MVN axes out of range or repeated");
    }
    reduced[a] = true;
  }
  if (axes.empty()) return absl::InvalidArgumentError("MVN axes are empty");
  for (const auto* operand : {&op.scale, &op.bias}) {
    if (*operand) {
      if (absl::Status s = CheckBroadcastable(
              **operand, in_desc,
              operand == &op.scale ? "ScaleTensor" : "BiasTensor");
          !s.ok()) {
        return s;
      }
    }
  }

  // Group id of each logical element: its row-major index in the tensor of
  // the non-reduced dimensions (reduced dimensions collapse to size 1).
  std::vector<uint64_t> group_sizes = in_desc.sizes;
  uint64_t group_len = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      group_len *= group_sizes[d];
      group_sizes[d] = 1;
    }
  }
  const std::vector<uint64_t> group_of =
      BroadcastOffsets(in_desc.sizes, MakeTensorDesc(type, group_sizes));
  const uint64_t group_count = ElementCount(group_sizes);

  const std::vector<uint64_t> in_offsets = ElementOffsets(in_desc);
  const size_t n = in_offsets.size();
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i)
    x[i] = LoadFloat(type, input.data(), in_offsets[i]);

  // Two passes (§7.6): the mean first, then the centred sum of squares.
  std::vector<double> mean(group_count, 0.0);
  for (size_t i = 0; i < n; ++i) mean[group_of[i]] += x[i];
  for (double& m : mean) m /= static_cast<double>(group_len);
  const bool normalize = op.normalize_variance.value_or(0) != 0;
  std::vector<double> denom(group_count, 1.0);
  if (normalize) {
    std::vector<double> var(group_count, 0.0);
    for (size_t i = 0; i < n; ++i) {
      const double c = x[i] - mean[group_of[i]];
      var[group_of[i]] += c * c;
    }
    const double epsilon = static_cast<double>(op.epsilon.value_or(0.0f));
    for (size_t g = 0; g < group_count; ++g) {
      denom[g] = std::sqrt(var[g] / static_cast<double>(group_len) + epsilon);
    }
  }

  std::vector<uint64_t> scale_offsets, bias_offsets;
  if (op.scale) scale_offsets = BroadcastOffsets(in_desc.sizes, *op.scale);
  if (op.bias) bias_offsets = BroadcastOffsets(in_desc.sizes, *op.bias);

  ActivationFn fused = nullptr;
  ActivationArgs fused_args;
  if (op.fused_activation && op.fused_activation->type != 0) {
    fused = FindActivation(op.fused_activation->type);
    if (fused == nullptr) {
      return absl::InvalidArgumentError("fused activation is not fusable");
    }
    fused_args.p0 = op.fused_activation->params[0].value_or(0.0f);
    fused_args.p1 = op.fused_activation->params[1].value_or(0.0f);
  }

  const std::vector<uint64_t> out_offsets = ElementOffsets(*op.output);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t g = group_of[i];
    double y = x[i] - mean[g];
    if (normalize) y /= denom[g];
    if (op.scale) y *= LoadFloat(type, scale.data(), scale_offsets[i]);
    if (op.bias) y += LoadFloat(type, bias.data(), bias_offsets[i]);
    if (fused) y = fused(y, fused_args);
    StoreFloat(type, output, out_offsets[i], y);
  }
  return absl::OkStatus();
}

}  // namespace dmls::cpu
