#include "engine/core/operator_desc.h"

#include <cmath>
#include <functional>
#include <vector>

#include "gtest/gtest.h"

namespace dmls {
namespace {

OperatorDesc Mvn1WithEverything() {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
  op.input = MakeTensorDesc(DataType::kFloat32, {2, 3, 4, 5});
  op.output = op.input;
  op.scale = MakeTensorDesc(DataType::kFloat32, {1, 3, 1, 1});
  op.bias = op.scale;
  op.axis_count = 1;
  op.axes = {3};
  op.normalize_variance = 1;
  op.epsilon = 1e-5f;
  op.fused_activation = FusedActivationDesc{};
  op.fused_activation->type = static_cast<uint32_t>(OperatorType::kActivationCelu);
  op.fused_activation->params = {0.5f, std::nullopt};
  return op;
}

TEST(OperatorDescTest, EqualOnlyWhenEveryFieldIs) {
  const OperatorDesc base = Mvn1WithEverything();
  EXPECT_TRUE(base == OperatorDesc(base));
  // One change per field; each must make the descriptors differ.
  const std::vector<std::function<void(OperatorDesc&)>> changes = {
      [](OperatorDesc& o) { o.type += 1; },
      [](OperatorDesc& o) { o.input->sizes[3] = 6; },
      [](OperatorDesc& o) { o.input->strides = PackedStrides(o.input->sizes); },
      [](OperatorDesc& o) { o.input->dimension_count = 4; },
      [](OperatorDesc& o) { o.input->data_type += 1; },
      [](OperatorDesc& o) { o.input->flags += 1; },
      [](OperatorDesc& o) { o.input->tensor_type += 1; },
      [](OperatorDesc& o) { o.input->total_tensor_size_in_bytes += 4; },
      [](OperatorDesc& o) { o.input->guaranteed_base_offset_alignment = 16; },
      [](OperatorDesc& o) { o.scale.reset(); },
      [](OperatorDesc& o) { o.bias->sizes[1] = 1; },
      [](OperatorDesc& o) { o.output->sizes[0] = 1; },
      [](OperatorDesc& o) { o.min = 0.0f; },
      [](OperatorDesc& o) { o.max = 1.0f; },
      [](OperatorDesc& o) { o.scale_bias = ScaleBias{1.0f, 0.0f}; },
      [](OperatorDesc& o) { o.activation[1] = 2.0f; },
      [](OperatorDesc& o) { o.axis_count = 2; },
      [](OperatorDesc& o) { o.axes = {2}; },
      [](OperatorDesc& o) { o.cross_channel = 0; },
      [](OperatorDesc& o) { o.normalize_variance = 0; },
      [](OperatorDesc& o) { o.epsilon = 1e-3f; },
      [](OperatorDesc& o) { o.fused_activation->params[0] = 0.25f; },
      [](OperatorDesc& o) { o.fused_activation->has_tensors = true; },
      [](OperatorDesc& o) { o.fused_activation.reset(); },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    OperatorDesc changed = base;
    changes[i](changed);
    EXPECT_FALSE(base == changed) << "change " << i;
    EXPECT_TRUE(base != changed) << "change " << i;
  }
}

TEST(OperatorDescTest, ANanParameterNeverCompares) {
  OperatorDesc a = Mvn1WithEverything();
  a.epsilon = std::nanf("");
  EXPECT_FALSE(a == OperatorDesc(a));
}

}  // namespace
}  // namespace dmls
