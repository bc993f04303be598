#include "server/mapping/proto_mapping.h"

#include <string>

#include "engine/ops/schema.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace dmls::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

const FieldDescriptor* Field(const Message& m, const std::string& name) {
  return m.GetDescriptor()->FindFieldByName(name);
}

bool Has(const Message& m, const std::string& name) {
  const FieldDescriptor* f = Field(m, name);
  return f != nullptr && m.GetReflection()->HasField(m, f);
}

std::optional<float> OptFloat(const Message& m, const std::string& name) {
  if (!Has(m, name)) return std::nullopt;
  return m.GetReflection()->GetFloat(m, Field(m, name));
}

std::optional<uint32_t> OptBool(const Message& m, const std::string& name) {
  if (!Has(m, name)) return std::nullopt;
  return m.GetReflection()->GetBool(m, Field(m, name)) ? 1u : 0u;
}

std::optional<TensorDesc> OptTensor(const Message& m,
                                    const std::string& name) {
  if (!Has(m, name)) return std::nullopt;
  const Message& t = m.GetReflection()->GetMessage(m, Field(m, name));
  return TensorFromProto(static_cast<const dmlserve::v1::TensorDesc&>(t));
}

// The schema row selected by a oneof, and its member message.
const Message* OneofMember(const Message& m, const std::string& oneof_name,
                           const ops::OperatorSchema** schema) {
  const auto* oneof = m.GetDescriptor()->FindOneofByName(oneof_name);
  const FieldDescriptor* f =
      m.GetReflection()->GetOneofFieldDescriptor(m, oneof);
  *schema = nullptr;
  if (f == nullptr) return nullptr;
  *schema = ops::FindOperatorByField(f->name());
  return &m.GetReflection()->GetMessage(m, f);
}

ActivationParams ActivationFromProto(const ops::OperatorSchema& schema,
                                     const Message& m) {
  ActivationParams params;
  for (size_t i = 0; i < schema.params.size(); ++i) {
    if (!schema.params[i].empty()) {
      params[i] = OptFloat(m, std::string(schema.params[i]));
    }
  }
  return params;
}

std::optional<FusedActivationDesc> FusedFromProto(const Message& m) {
  if (!Has(m, "fused_activation")) return std::nullopt;
  const Message& fa = m.GetReflection()->GetMessage(m, Field(m, "fused_activation"));
  FusedActivationDesc fused;
  const ops::OperatorSchema* schema = nullptr;
  const Message* act = OneofMember(fa, "activation", &schema);
  if (act == nullptr || schema == nullptr) return fused;  // type 0: not fusable
  fused.type = static_cast<uint32_t>(schema->type);
  fused.has_tensors = Has(*act, "input") || Has(*act, "output");
  fused.params = ActivationFromProto(*schema, *act);
  return fused;
}

}  // namespace

TensorDesc TensorFromProto(const dmlserve::v1::TensorDesc& proto) {
  TensorDesc desc;
  desc.tensor_type = proto.has_type() ? static_cast<uint32_t>(proto.type())
                                      : kTensorTypeBuffer;
  desc.data_type = static_cast<uint32_t>(proto.data_type());
  desc.flags = proto.flags();
  if (proto.has_dimension_count()) desc.dimension_count = proto.dimension_count();
  desc.sizes.assign(proto.sizes().begin(), proto.sizes().end());
  if (proto.strides_size() > 0) {
    desc.strides.emplace(proto.strides().begin(), proto.strides().end());
  }
  desc.total_tensor_size_in_bytes = proto.total_tensor_size_in_bytes();
  desc.guaranteed_base_offset_alignment =
      proto.guaranteed_base_offset_alignment();
  return desc;
}

OperatorDesc OperatorFromProto(const dmlserve::v1::OperatorDesc& proto) {
  OperatorDesc op;
  const ops::OperatorSchema* schema = nullptr;
  const Message* m = OneofMember(proto, "operator", &schema);
  if (m == nullptr || schema == nullptr) return op;
  op.type = static_cast<uint32_t>(schema->type);
  op.input = OptTensor(*m, "input");
  op.output = OptTensor(*m, "output");
  switch (schema->kind) {
    case ops::OpKind::kUnaryScaleBias:
      op.min = OptFloat(*m, "min");
      op.max = OptFloat(*m, "max");
      if (Has(*m, "scale_bias")) {
        const Message& sb = m->GetReflection()->GetMessage(*m, Field(*m, "scale_bias"));
        op.scale_bias = ScaleBias{OptFloat(sb, "scale"), OptFloat(sb, "bias")};
      }
      break;
    case ops::OpKind::kActivation:
      op.activation = ActivationFromProto(*schema, *m);
      break;
    case ops::OpKind::kMvn1: {
      const auto& mvn1 =
          static_cast<const dmlserve::v1::MeanVarianceNormalization1&>(*m);
      op.axes.assign(mvn1.axes().begin(), mvn1.axes().end());
      op.axis_count = mvn1.has_axis_count() ? uint64_t{mvn1.axis_count()}
                                            : uint64_t{op.axes.size()};
      [[fallthrough]];
    }
    case ops::OpKind::kMvn:
      op.scale = OptTensor(*m, "scale");
      op.bias = OptTensor(*m, "bias");
      op.cross_channel = OptBool(*m, "cross_channel");
      op.normalize_variance = OptBool(*m, "normalize_variance");
      op.epsilon = OptFloat(*m, "epsilon");
      op.fused_activation = FusedFromProto(*m);
      break;
  }
  return op;
}

uint32_t FeatureLevelFromProto(int proto_value, FeatureLevel highest) {
  if (proto_value == 0) return static_cast<uint32_t>(highest);
  return static_cast<uint32_t>(proto_value);
}

}  // namespace dmls::server
