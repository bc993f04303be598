// The portable half of the DirectML engine: our OperatorDesc mapped to the
// DML_*_OPERATOR_DESC structs of DirectML.h, and the compiled-operator
// cache key. Runs on Linux (DirectML.h through the WSL adapter) and in the
// Windows cross build.
#include "engine/directml/op_mapping.h"

#include <cmath>
#include <limits>

#include "engine/core/tensor_desc.h"
#include "engine/ops/schema.h"
#include "gtest/gtest.h"

namespace dmls::directml {
namespace {

uint32_t Raw(OperatorType t) { return static_cast<uint32_t>(t); }

OperatorDesc Unary(OperatorType type, TensorDesc t) {
  OperatorDesc op;
  op.type = Raw(type);
  op.input = t;
  op.output = t;
  return op;
}

TEST(OpMapping, CeluKeepsAlphaSizesAndStrides) {
  OperatorDesc op = Unary(OperatorType::kActivationCelu,
                          MakeTensorDesc(DataType::kFloat32, {2, 3}, std::vector<uint64_t>{4, 1}));
  op.output = MakeTensorDesc(DataType::kFloat32, {2, 3});
  op.activation = {1.5f, std::nullopt};
  absl::StatusOr<std::unique_ptr<DmlOperator>> d = DmlOperator::Create(op);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ((*d)->desc().Type, DML_OPERATOR_ACTIVATION_CELU);
  const auto* celu = static_cast<const DML_ACTIVATION_CELU_OPERATOR_DESC*>((*d)->desc().Desc);
  EXPECT_EQ(celu->Alpha, 1.5f);
  ASSERT_EQ(celu->InputTensor->Type, DML_TENSOR_TYPE_BUFFER);
  const auto* in = static_cast<const DML_BUFFER_TENSOR_DESC*>(celu->InputTensor->Desc);
  EXPECT_EQ(in->DataType, DML_TENSOR_DATA_TYPE_FLOAT32);
  ASSERT_EQ(in->DimensionCount, 2u);
  EXPECT_EQ(in->Sizes[0], 2u);
  EXPECT_EQ(in->Sizes[1], 3u);
  ASSERT_NE(in->Strides, nullptr);
  EXPECT_EQ(in->Strides[0], 4u);
  EXPECT_EQ(in->Strides[1], 1u);
  EXPECT_EQ(in->TotalTensorSizeInBytes, op.input->total_tensor_size_in_bytes);
  const auto* out = static_cast<const DML_BUFFER_TENSOR_DESC*>(celu->OutputTensor->Desc);
  EXPECT_EQ(out->Strides, nullptr);  // packed: NULL, as sent
  EXPECT_EQ(out->TotalTensorSizeInBytes, 24u);
  EXPECT_EQ((*d)->input_count(), 1);
  EXPECT_EQ((*d)->input(0), in);
  EXPECT_EQ(&(*d)->output(), out);
}

TEST(OpMapping, ThresholdCarriesScaleBiasAndMin) {
  OperatorDesc op =
      Unary(OperatorType::kElementWiseThreshold, MakeTensorDesc(DataType::kInt32, {8}));
  op.min = -2.5f;
  op.scale_bias = ScaleBias{2.0f, -1.0f};
  absl::StatusOr<std::unique_ptr<DmlOperator>> d = DmlOperator::Create(op);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ((*d)->desc().Type, DML_OPERATOR_ELEMENT_WISE_THRESHOLD);
  const auto* t = static_cast<const DML_ELEMENT_WISE_THRESHOLD_OPERATOR_DESC*>((*d)->desc().Desc);
  EXPECT_EQ(t->Min, -2.5f);
  ASSERT_NE(t->ScaleBias, nullptr);
  EXPECT_EQ(t->ScaleBias->Scale, 2.0f);
  EXPECT_EQ(t->ScaleBias->Bias, -1.0f);
  EXPECT_EQ(static_cast<const DML_BUFFER_TENSOR_DESC*>(t->InputTensor->Desc)->DataType,
            DML_TENSOR_DATA_TYPE_INT32);

  op.scale_bias.reset();
  d = DmlOperator::Create(op);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(
      static_cast<const DML_ELEMENT_WISE_THRESHOLD_OPERATOR_DESC*>((*d)->desc().Desc)->ScaleBias,
      nullptr);
}

TEST(OpMapping, ClipCarriesMinAndMax) {
  OperatorDesc op = Unary(OperatorType::kElementWiseClip, MakeTensorDesc(DataType::kFloat16, {4}));
  op.min = -1.0f;
  op.max = 3.0f;
  absl::StatusOr<std::unique_ptr<DmlOperator>> d = DmlOperator::Create(op);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ((*d)->desc().Type, DML_OPERATOR_ELEMENT_WISE_CLIP);
  const auto* c = static_cast<const DML_ELEMENT_WISE_CLIP_OPERATOR_DESC*>((*d)->desc().Desc);
  EXPECT_EQ(c->Min, -1.0f);
  EXPECT_EQ(c->Max, 3.0f);
  EXPECT_EQ(c->ScaleBias, nullptr);
}

TEST(OpMapping, Mvn1WithFusedCeluAndNoScaleOrBias) {
  OperatorDesc op = Unary(OperatorType::kMeanVarianceNormalization1,
                          MakeTensorDesc(DataType::kFloat32, {1, 1, 2, 4}));
  op.axis_count = 2;
  op.axes = {2, 3};
  op.normalize_variance = 1;
  op.epsilon = 1e-5f;
  op.fused_activation =
      FusedActivationDesc{Raw(OperatorType::kActivationCelu), false, {0.75f, std::nullopt}};
  absl::StatusOr<std::unique_ptr<DmlOperator>> d = DmlOperator::Create(op);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ((*d)->desc().Type, DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1);
  const auto* m =
      static_cast<const DML_MEAN_VARIANCE_NORMALIZATION1_OPERATOR_DESC*>((*d)->desc().Desc);
  EXPECT_EQ(m->ScaleTensor, nullptr);
  EXPECT_EQ(m->BiasTensor, nullptr);
  ASSERT_EQ(m->AxisCount, 2u);
  EXPECT_EQ(m->Axes[0], 2u);
  EXPECT_EQ(m->Axes[1], 3u);
  EXPECT_TRUE(m->NormalizeVariance);
  EXPECT_EQ(m->Epsilon, 1e-5f);
  ASSERT_NE(m->FusedActivation, nullptr);
  ASSERT_EQ(m->FusedActivation->Type, DML_OPERATOR_ACTIVATION_CELU);
  const auto* celu =
      static_cast<const DML_ACTIVATION_CELU_OPERATOR_DESC*>(m->FusedActivation->Desc);
  EXPECT_EQ(celu->InputTensor, nullptr);  // a fused activation has no tensors
  EXPECT_EQ(celu->OutputTensor, nullptr);
  EXPECT_EQ(celu->Alpha, 0.75f);
  EXPECT_EQ((*d)->input_count(), 3);
  EXPECT_NE((*d)->input(0), nullptr);
  EXPECT_EQ((*d)->input(1), nullptr);
  EXPECT_EQ((*d)->input(2), nullptr);
}

TEST(OpMapping, MvnWithScaleAndBias) {
  OperatorDesc op = Unary(OperatorType::kMeanVarianceNormalization,
                          MakeTensorDesc(DataType::kFloat32, {1, 2, 2, 2}));
  op.scale = MakeTensorDesc(DataType::kFloat32, {1, 2, 1, 1});
  op.bias = MakeTensorDesc(DataType::kFloat32, {1, 2, 1, 1});
  op.cross_channel = 1;
  op.normalize_variance = 0;
  op.epsilon = 0.01f;
  absl::StatusOr<std::unique_ptr<DmlOperator>> d = DmlOperator::Create(op);
  ASSERT_TRUE(d.ok());
  ASSERT_EQ((*d)->desc().Type, DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION);
  const auto* m =
      static_cast<const DML_MEAN_VARIANCE_NORMALIZATION_OPERATOR_DESC*>((*d)->desc().Desc);
  EXPECT_TRUE(m->CrossChannel);
  EXPECT_FALSE(m->NormalizeVariance);
  EXPECT_EQ(m->FusedActivation, nullptr);
  ASSERT_NE(m->ScaleTensor, nullptr);
  EXPECT_EQ(static_cast<const DML_BUFFER_TENSOR_DESC*>(m->ScaleTensor->Desc)->Sizes[1], 2u);
  EXPECT_NE((*d)->input(1), nullptr);
  EXPECT_NE((*d)->input(2), nullptr);
}

// Every activation we serve maps, standalone and fused, to the DirectML
// operator of the same number, with its parameters in compact order.
TEST(OpMapping, EveryServedActivationMaps) {
  int activations = 0;
  for (const ops::OperatorSchema& s : ops::AllOperators()) {
    if (s.kind != ops::OpKind::kActivation) continue;
    ++activations;
    OperatorDesc op = Unary(s.type, MakeTensorDesc(DataType::kFloat32, {4}));
    op.activation = {0.25f, 0.5f};
    absl::StatusOr<std::unique_ptr<DmlOperator>> d = DmlOperator::Create(op);
    ASSERT_TRUE(d.ok()) << s.name << ": " << d.status();
    EXPECT_EQ(static_cast<uint32_t>((*d)->desc().Type), Raw(s.type)) << s.name;
    // Every activation desc starts with InputTensor, OutputTensor, then its
    // FLOAT parameters in compact order.
    struct Prefix {
      const DML_TENSOR_DESC* in;
      const DML_TENSOR_DESC* out;
      FLOAT p[2];
    };
    const auto* p = static_cast<const Prefix*>((*d)->desc().Desc);
    EXPECT_NE(p->in, nullptr) << s.name;
    if (!s.params[0].empty()) {
      EXPECT_EQ(p->p[0], 0.25f) << s.name;
    }
    if (!s.params[1].empty()) {
      EXPECT_EQ(p->p[1], 0.5f) << s.name;
    }

    ActivationDescStorage storage;
    absl::StatusOr<DML_OPERATOR_DESC> fused =
        MapActivation(Raw(s.type), op.activation, nullptr, nullptr, storage);
    ASSERT_TRUE(fused.ok()) << s.name;
    EXPECT_EQ(static_cast<const Prefix*>(fused->Desc)->in, nullptr);
  }
  EXPECT_EQ(activations, 17);
}

TEST(OpMapping, UnservedOperatorIsRefused) {
  OperatorDesc op =
      Unary(OperatorType::kActivationSoftmax, MakeTensorDesc(DataType::kFloat32, {4}));
  absl::StatusOr<std::unique_ptr<DmlOperator>> d = DmlOperator::Create(op);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  op.input.reset();
  EXPECT_EQ(DmlOperator::Create(op).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OperatorKey, EqualExactlyForEqualDescs) {
  OperatorDesc a = Unary(OperatorType::kActivationElu, MakeTensorDesc(DataType::kFloat32, {2, 2}));
  a.activation = {1.0f, std::nullopt};
  OperatorDesc b = a;
  EXPECT_EQ(OperatorKey(a), OperatorKey(b));

  b.activation[0] = 1.0000001f;
  EXPECT_NE(OperatorKey(a), OperatorKey(b));  // another parameter
  b = a;
  b.activation[1] = 0.0f;
  EXPECT_NE(OperatorKey(a), OperatorKey(b));  // an extra, present parameter
  b = a;
  b.input->strides = PackedStrides(b.input->sizes);
  EXPECT_NE(OperatorKey(a), OperatorKey(b));  // explicit packed strides vs NULL
  b = a;
  b.input->sizes = {4, 1};
  EXPECT_NE(OperatorKey(a), OperatorKey(b));
  b = a;
  b.output->data_type = static_cast<uint32_t>(DataType::kFloat16);
  EXPECT_NE(OperatorKey(a), OperatorKey(b));

  OperatorDesc z = a, nz = a;
  z.activation[0] = 0.0f;
  nz.activation[0] = -0.0f;
  EXPECT_NE(OperatorKey(z), OperatorKey(nz));  // bit patterns, not values
  OperatorDesc n1 = a, n2 = a;
  n1.activation[0] = std::numeric_limits<float>::quiet_NaN();
  n2.activation[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(OperatorKey(n1), OperatorKey(n2));
}

}  // namespace
}  // namespace dmls::directml
