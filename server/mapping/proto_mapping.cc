#include "server/mapping/proto_mapping.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "engine/ops/schema.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace dmls::server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::OneofDescriptor;

// What OperatorFromProto reads of one member of the `operator` or
// `activation` oneof: its schema row and its message's fields. Looked up
// by name once (FieldsOf), not per request: FindFieldByName hashes the
// full name on every call, and the schema row was a scan of the table.
struct MemberFields {
  const ops::OperatorSchema* schema = nullptr;
  const FieldDescriptor* input = nullptr;
  const FieldDescriptor* output = nullptr;
  const FieldDescriptor* min = nullptr;
  const FieldDescriptor* max = nullptr;
  const FieldDescriptor* scale_bias = nullptr;
  const FieldDescriptor* scale = nullptr;
  const FieldDescriptor* bias = nullptr;
  const FieldDescriptor* cross_channel = nullptr;
  const FieldDescriptor* normalize_variance = nullptr;
  const FieldDescriptor* epsilon = nullptr;
  const FieldDescriptor* fused_activation = nullptr;
  std::array<const FieldDescriptor*, 2> params{};  // schema.params, in order
};

// Every member of both oneofs, by its FieldDescriptor, and the oneofs and
// ScaleBias fields. Built once, read-only after: thread-safe.
struct FieldTable {
  const OneofDescriptor* operator_oneof = nullptr;    // OperatorDesc.operator
  const OneofDescriptor* activation_oneof = nullptr;  // FusedActivation.activation
  const FieldDescriptor* scale_bias_scale = nullptr;
  const FieldDescriptor* scale_bias_bias = nullptr;
  absl::flat_hash_map<const FieldDescriptor*, MemberFields> members;
};

MemberFields FieldsOfMember(const FieldDescriptor& member) {
  const Descriptor* d = member.message_type();
  const auto field = [d](std::string_view name) {
    return d == nullptr ? nullptr : d->FindFieldByName(std::string(name));
  };
  MemberFields f;
  f.schema = ops::FindOperatorByField(member.name());
  f.input = field("input");
  f.output = field("output");
  f.min = field("min");
  f.max = field("max");
  f.scale_bias = field("scale_bias");
  f.scale = field("scale");
  f.bias = field("bias");
  f.cross_channel = field("cross_channel");
  f.normalize_variance = field("normalize_variance");
  f.epsilon = field("epsilon");
  f.fused_activation = field("fused_activation");
  for (size_t i = 0; f.schema != nullptr && i < f.params.size(); ++i) {
    if (!f.schema->params[i].empty()) f.params[i] = field(f.schema->params[i]);
  }
  return f;
}

const FieldTable& Fields() {
  static const FieldTable* const table = [] {
    auto* t = new FieldTable();
    t->operator_oneof = dmlserve::v1::OperatorDesc::descriptor()->FindOneofByName("operator");
    t->activation_oneof =
        dmlserve::v1::FusedActivation::descriptor()->FindOneofByName("activation");
    t->scale_bias_scale = dmlserve::v1::ScaleBias::descriptor()->FindFieldByName("scale");
    t->scale_bias_bias = dmlserve::v1::ScaleBias::descriptor()->FindFieldByName("bias");
    for (const OneofDescriptor* oneof : {t->operator_oneof, t->activation_oneof}) {
      for (int i = 0; oneof != nullptr && i < oneof->field_count(); ++i) {
        t->members.emplace(oneof->field(i), FieldsOfMember(*oneof->field(i)));
      }
    }
    return t;
  }();
  return *table;
}

bool Has(const Message& m, const FieldDescriptor* f) {
  return f != nullptr && m.GetReflection()->HasField(m, f);
}

std::optional<float> OptFloat(const Message& m, const FieldDescriptor* f) {
  if (!Has(m, f)) return std::nullopt;
  return m.GetReflection()->GetFloat(m, f);
}

std::optional<uint32_t> OptBool(const Message& m, const FieldDescriptor* f) {
  if (!Has(m, f)) return std::nullopt;
  return m.GetReflection()->GetBool(m, f) ? 1u : 0u;
}

std::optional<TensorDesc> OptTensor(const Message& m, const FieldDescriptor* f) {
  if (!Has(m, f)) return std::nullopt;
  return TensorFromProto(
      static_cast<const dmlserve::v1::TensorDesc&>(m.GetReflection()->GetMessage(m, f)));
}

// The member set in `oneof` of `m` and its fields; null when none is set
// (or the member is unknown to the table, which cannot happen for the two
// oneofs it was built from).
const Message* OneofMember(const Message& m, const OneofDescriptor* oneof,
                           const MemberFields** fields) {
  *fields = nullptr;
  if (oneof == nullptr) return nullptr;
  const FieldDescriptor* f = m.GetReflection()->GetOneofFieldDescriptor(m, oneof);
  if (f == nullptr) return nullptr;
  const auto& members = Fields().members;
  const auto it = members.find(f);
  if (it == members.end()) return nullptr;
  *fields = &it->second;
  return &m.GetReflection()->GetMessage(m, f);
}

ActivationParams ActivationFromProto(const MemberFields& fields, const Message& m) {
  ActivationParams params;
  for (size_t i = 0; i < fields.params.size(); ++i) {
    if (fields.params[i] != nullptr) params[i] = OptFloat(m, fields.params[i]);
  }
  return params;
}

std::optional<FusedActivationDesc> FusedFromProto(const MemberFields& mvn, const Message& m) {
  if (!Has(m, mvn.fused_activation)) return std::nullopt;
  const Message& fa = m.GetReflection()->GetMessage(m, mvn.fused_activation);
  FusedActivationDesc fused;
  const MemberFields* fields = nullptr;
  const Message* act = OneofMember(fa, Fields().activation_oneof, &fields);
  if (act == nullptr || fields->schema == nullptr) return fused;  // type 0: not fusable
  fused.type = static_cast<uint32_t>(fields->schema->type);
  fused.has_tensors = Has(*act, fields->input) || Has(*act, fields->output);
  fused.params = ActivationFromProto(*fields, *act);
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
  const MemberFields* fields = nullptr;
  const Message* m = OneofMember(proto, Fields().operator_oneof, &fields);
  if (m == nullptr || fields->schema == nullptr) return op;
  const ops::OperatorSchema& schema = *fields->schema;
  op.type = static_cast<uint32_t>(schema.type);
  op.input = OptTensor(*m, fields->input);
  op.output = OptTensor(*m, fields->output);
  switch (schema.kind) {
    case ops::OpKind::kUnaryScaleBias:
      op.min = OptFloat(*m, fields->min);
      op.max = OptFloat(*m, fields->max);
      if (Has(*m, fields->scale_bias)) {
        const Message& sb = m->GetReflection()->GetMessage(*m, fields->scale_bias);
        op.scale_bias = ScaleBias{OptFloat(sb, Fields().scale_bias_scale),
                                  OptFloat(sb, Fields().scale_bias_bias)};
      }
      break;
    case ops::OpKind::kActivation:
      op.activation = ActivationFromProto(*fields, *m);
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
      op.scale = OptTensor(*m, fields->scale);
      op.bias = OptTensor(*m, fields->bias);
      op.cross_channel = OptBool(*m, fields->cross_channel);
      op.normalize_variance = OptBool(*m, fields->normalize_variance);
      op.epsilon = OptFloat(*m, fields->epsilon);
      op.fused_activation = FusedFromProto(*fields, *m);
      break;
  }
  return op;
}

uint32_t FeatureLevelFromProto(int proto_value, FeatureLevel highest) {
  if (proto_value == 0) return static_cast<uint32_t>(highest);
  return static_cast<uint32_t>(proto_value);
}

}  // namespace dmls::server
