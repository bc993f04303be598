#include "server/mapping/capabilities.h"

#include <string>

#include "engine/ops/schema.h"
#include "google/protobuf/descriptor.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;
using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// Proto enum values equal the DirectML ones (see dmlserve.proto).
v1::FeatureLevel ToProto(FeatureLevel level) {
  return static_cast<v1::FeatureLevel>(static_cast<uint32_t>(level));
}

// The parameters are read off the operator's proto message so that they can
// never disagree with what a client has to send.
void AddParameters(const ops::OperatorSchema& schema,
                   v1::OperatorSupport* out) {
  const FieldDescriptor* member =
      v1::OperatorDesc::descriptor()->FindFieldByName(
          std::string(schema.field));
  if (member == nullptr || member->message_type() == nullptr) return;
  const Descriptor* message = member->message_type();
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* field = message->field(i);
    if (field->message_type() == v1::TensorDesc::descriptor()) continue;
    out->add_parameters(field->name());
  }
}

}  // namespace

v1::GetCapabilitiesResponse BuildCapabilities(
    const DeviceInfo& device, const std::vector<DeviceInfo>& devices,
    const ServerOptions& options, FeatureLevel highest) {
  v1::GetCapabilitiesResponse response;
  response.set_server_version(DMLSERVE_VERSION);
  response.set_device_name(device.name);
  response.set_device_kind(device.kind);
  response.set_backend(device.backend);
  for (const DeviceInfo& d : devices.empty() ? std::vector<DeviceInfo>{device}
                                             : devices) {
    v1::DeviceInfo* out = response.add_devices();
    out->set_name(d.name);
    out->set_kind(d.kind);
    out->set_backend(d.backend);
    out->set_memory_bytes(d.memory_bytes);
    out->set_memory_cap_bytes(d.memory_cap_bytes);
  }
  response.set_highest_feature_level(ToProto(highest));
  for (FeatureLevel level : kAllFeatureLevels) {
    if (static_cast<uint32_t>(level) <= static_cast<uint32_t>(highest)) {
      response.add_feature_levels(ToProto(level));
    }
  }
  for (const ops::OperatorSchema& schema : ops::AllOperators()) {
    v1::OperatorSupport* op = response.add_operators();
    op->set_name(std::string(schema.name));
    op->set_field(std::string(schema.field));
    op->set_operator_type(static_cast<uint32_t>(schema.type));
    op->set_introduced(ToProto(schema.introduced));
    for (const ops::SupportTier& tier : schema.tiers) {
      v1::SupportTier* t = op->add_tiers();
      t->set_from_feature_level(ToProto(tier.from));
      t->set_min_dimension_count(tier.min_rank);
      t->set_max_dimension_count(tier.max_rank);
      for (uint32_t type = 0; type < kDataTypeCount; ++type) {
        if (tier.types & ops::Bit(static_cast<DataType>(type))) {
          t->add_data_types(static_cast<v1::DataType>(type));
        }
      }
    }
    op->set_in_place(schema.in_place);
    if (schema.fusable_from)
      op->set_fusable_from(ToProto(*schema.fusable_from));
    op->set_tolerance_class(
        std::string(ops::ToleranceClassName(schema.tolerance)));
    AddParameters(schema, op);
  }
  v1::Limits* limits = response.mutable_limits();
  limits->set_max_message_bytes(options.network.max_message_bytes);
  limits->set_max_tensor_bytes(options.limits.max_tensor_bytes);
  limits->set_max_in_flight(options.limits.max_in_flight);
  // The effective cap of one device (the engines share the setting; a CPU
  // engine has none).
  limits->set_device_memory_cap_bytes(device.memory_cap_bytes == 0 || devices.empty()
                                          ? device.memory_cap_bytes
                                          : devices.front().memory_cap_bytes);
  limits->set_max_batch_requests(options.batching.max_batch_requests);
  limits->set_max_batch_bytes(options.batching.max_batch_bytes);
  limits->set_max_queue_delay_us(options.batching.max_queue_delay_us);
  limits->set_max_queue_depth(options.batching.max_queue_depth);
  limits->set_resident_bytes_per_principal(options.resident.resident_bytes_per_principal);
  limits->set_resident_bytes_total(options.resident.resident_bytes_total);
  limits->set_resident_ttl_seconds(options.resident.resident_ttl_seconds);
  limits->set_max_chain_steps(options.resident.max_chain_steps);
  limits->set_default_chunk_bytes(DefaultChunkBytes(options));
  limits->set_max_chunk_bytes(MaxChunkBytes(options));
  return response;
}

}  // namespace dmls::server
