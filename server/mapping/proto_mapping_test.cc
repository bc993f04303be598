#include "server/mapping/proto_mapping.h"

#include "gtest/gtest.h"
#include "engine/ops/schema.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

v1::TensorDesc Tensor(std::vector<uint64_t> sizes) {
  v1::TensorDesc t;
  t.set_data_type(v1::DATA_TYPE_FLOAT32);
  for (uint64_t s : sizes) t.add_sizes(s);
  t.set_total_tensor_size_in_bytes(4 * ElementCount(sizes));
  return t;
}

TEST(ProtoMapping, TensorFields) {
  v1::TensorDesc t = Tensor({2, 3});
  t.add_strides(0);
  t.add_strides(1);
  t.set_flags(1);
  t.set_guaranteed_base_offset_alignment(16);
  TensorDesc d = TensorFromProto(t);
  EXPECT_EQ(d.tensor_type, kTensorTypeBuffer);
  EXPECT_EQ(d.type(), DataType::kFloat32);
  EXPECT_EQ(d.flags, 1u);
  EXPECT_FALSE(d.dimension_count.has_value());
  EXPECT_EQ(d.rank(), 2u);
  ASSERT_TRUE(d.strides.has_value());
  EXPECT_EQ(*d.strides, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(d.total_tensor_size_in_bytes, 24u);
  EXPECT_EQ(d.guaranteed_base_offset_alignment, 16u);

  t.clear_strides();
  t.set_dimension_count(3);
  t.set_type(v1::TENSOR_TYPE_INVALID);
  d = TensorFromProto(t);
  EXPECT_FALSE(d.strides.has_value());
  EXPECT_EQ(d.rank(), 3u);
  EXPECT_EQ(d.tensor_type, kTensorTypeInvalid);
}

TEST(ProtoMapping, UnsetOneofIsTypeZero) {
  EXPECT_EQ(OperatorFromProto(v1::OperatorDesc()).type, 0u);
}

TEST(ProtoMapping, ThresholdWithScaleBias) {
  v1::OperatorDesc p;
  auto* thr = p.mutable_threshold();
  *thr->mutable_input() = Tensor({4});
  *thr->mutable_output() = Tensor({4});
  thr->set_min(0.5f);
  thr->mutable_scale_bias()->set_scale(2.0f);
  OperatorDesc op = OperatorFromProto(p);
  EXPECT_EQ(op.op(), OperatorType::kElementWiseThreshold);
  ASSERT_TRUE(op.min.has_value());
  EXPECT_EQ(*op.min, 0.5f);
  EXPECT_FALSE(op.max.has_value());
  ASSERT_TRUE(op.scale_bias.has_value());
  EXPECT_EQ(op.scale_bias->scale, 2.0f);
  EXPECT_FALSE(op.scale_bias->bias.has_value());
  EXPECT_TRUE(op.input.has_value());
  EXPECT_FALSE(op.scale.has_value());
}

TEST(ProtoMapping, EveryActivationParameterLandsInCompactOrder) {
  for (const ops::OperatorSchema& s : ops::AllOperators()) {
    if (s.kind != ops::OpKind::kActivation) continue;
    v1::OperatorDesc p;
    const auto* field = p.GetDescriptor()->FindFieldByName(std::string(s.field));
    ASSERT_NE(field, nullptr) << s.field;
    auto* msg = p.GetReflection()->MutableMessage(&p, field);
    for (size_t i = 0; i < s.params.size(); ++i) {
      if (s.params[i].empty()) continue;
      const auto* pf = msg->GetDescriptor()->FindFieldByName(std::string(s.params[i]));
      ASSERT_NE(pf, nullptr) << s.field << "." << s.params[i];
      msg->GetReflection()->SetFloat(msg, pf, 10.0f + i);
    }
    OperatorDesc op = OperatorFromProto(p);
    EXPECT_EQ(op.type, static_cast<uint32_t>(s.type)) << s.field;
    for (size_t i = 0; i < s.params.size(); ++i) {
      EXPECT_EQ(op.activation[i].has_value(), !s.params[i].empty()) << s.field;
      if (op.activation[i]) {
        EXPECT_EQ(*op.activation[i], 10.0f + i);
      }
    }
  }
}

TEST(ProtoMapping, EveryOneofMemberHasASchemaRow) {
  const auto* oneof = v1::OperatorDesc::descriptor()->FindOneofByName("operator");
  ASSERT_NE(oneof, nullptr);
  EXPECT_EQ(static_cast<size_t>(oneof->field_count()), ops::AllOperators().size());
  for (int i = 0; i < oneof->field_count(); ++i) {
    const auto* s = ops::FindOperatorByField(oneof->field(i)->name());
    ASSERT_NE(s, nullptr) << oneof->field(i)->name();
    EXPECT_EQ(static_cast<uint32_t>(s->type),
              static_cast<uint32_t>(oneof->field(i)->number()));
  }
}

TEST(ProtoMapping, Mvn1WithFusedActivation) {
  v1::OperatorDesc p;
  auto* m = p.mutable_mvn1();
  *m->mutable_input() = Tensor({1, 2, 2, 2});
  *m->mutable_output() = Tensor({1, 2, 2, 2});
  *m->mutable_scale() = Tensor({1, 2, 1, 1});
  m->add_axes(2);
  m->add_axes(3);
  m->set_normalize_variance(true);
  m->set_epsilon(1e-5f);
  m->mutable_fused_activation()->mutable_celu()->set_alpha(0.5f);
  OperatorDesc op = OperatorFromProto(p);
  EXPECT_EQ(op.op(), OperatorType::kMeanVarianceNormalization1);
  EXPECT_EQ(op.axis_count, 2u);
  EXPECT_EQ(op.axes, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(op.normalize_variance, 1u);
  EXPECT_FALSE(op.cross_channel.has_value());
  EXPECT_TRUE(op.scale.has_value());
  EXPECT_FALSE(op.bias.has_value());
  ASSERT_TRUE(op.fused_activation.has_value());
  EXPECT_EQ(op.fused_activation->type,
            static_cast<uint32_t>(OperatorType::kActivationCelu));
  EXPECT_FALSE(op.fused_activation->has_tensors);
  EXPECT_EQ(op.fused_activation->params[0], 0.5f);

  m->set_axis_count(5);
  m->mutable_fused_activation()->mutable_relu()->mutable_input()->add_sizes(1);
  op = OperatorFromProto(p);
  EXPECT_EQ(op.axis_count, 5u);
  EXPECT_EQ(op.fused_activation->type,
            static_cast<uint32_t>(OperatorType::kActivationRelu));
  EXPECT_TRUE(op.fused_activation->has_tensors);

  m->mutable_fused_activation()->Clear();
  op = OperatorFromProto(p);
  ASSERT_TRUE(op.fused_activation.has_value());
  EXPECT_EQ(op.fused_activation->type, 0u);
}

TEST(ProtoMapping, MvnBools) {
  v1::OperatorDesc p;
  p.mutable_mvn()->set_cross_channel(true);
  OperatorDesc op = OperatorFromProto(p);
  EXPECT_EQ(op.op(), OperatorType::kMeanVarianceNormalization);
  EXPECT_EQ(op.cross_channel, 1u);
  EXPECT_FALSE(op.normalize_variance.has_value());
  EXPECT_FALSE(op.epsilon.has_value());
}

TEST(ProtoMapping, FeatureLevel) {
  EXPECT_EQ(FeatureLevelFromProto(0, FeatureLevel::k6_4), 0x6400u);
  EXPECT_EQ(FeatureLevelFromProto(0x2200, FeatureLevel::k6_4), 0x2200u);
}

}  // namespace
}  // namespace dmls::server
