#include "server/kserve/model_description.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace dmls::server::kserve {
namespace {

uint32_t ReportedRank(const ModelEntry& model) {
  return std::clamp(kReportedRank, model.min_rank, model.max_rank);
}

// Triton's DataType enum value of `type` (model_config.proto).
inference::DataType ConfigDatatype(DataType type) {
  switch (type) {
    case DataType::kFloat32: return inference::TYPE_FP32;
    case DataType::kFloat16: return inference::TYPE_FP16;
    case DataType::kFloat64: return inference::TYPE_FP64;
    case DataType::kInt8: return inference::TYPE_INT8;
    case DataType::kInt16: return inference::TYPE_INT16;
    case DataType::kInt32: return inference::TYPE_INT32;
    case DataType::kInt64: return inference::TYPE_INT64;
    case DataType::kUint8: return inference::TYPE_UINT8;
    case DataType::kUint16: return inference::TYPE_UINT16;
    case DataType::kUint32: return inference::TYPE_UINT32;
    case DataType::kUint64: return inference::TYPE_UINT64;
    default: return inference::TYPE_INVALID;
  }
}

}  // namespace

std::vector<std::string> InputNames(const ModelEntry& model) {
  std::vector<std::string> names = {kInputName};
  if (HasScaleAndBias(*model.schema)) {
    names.push_back(kScaleName);
    names.push_back(kBiasName);
  }
  return names;
}

inference::ModelMetadataResponse BuildMetadata(const ModelEntry& model) {
  inference::ModelMetadataResponse out;
  out.set_name(model.name);
  out.add_versions(kModelVersion);
  out.set_platform("dmlserve");
  const std::string datatype(KServeDatatype(model.type));
  auto add = [&](auto* tensor, const std::string& name) {
    tensor->set_name(name);
    tensor->set_datatype(datatype);
    for (uint32_t i = 0; i < ReportedRank(model); ++i) tensor->add_shape(-1);
  };
  for (const std::string& name : InputNames(model)) add(out.add_inputs(), name);
  add(out.add_outputs(), kOutputName);
  return out;
}

inference::ModelConfig BuildConfig(const ModelEntry& model, const ServerFacts& facts) {
  inference::ModelConfig out;
  out.set_name(model.name);
  out.set_platform("dmlserve");
  out.set_backend("dmlserve");
  out.set_max_batch_size(0);
  for (const std::string& name : InputNames(model)) {
    inference::ModelInput* input = out.add_input();
    input->set_name(name);
    input->set_data_type(ConfigDatatype(model.type));
    for (uint32_t i = 0; i < ReportedRank(model); ++i) input->add_dims(-1);
    input->set_optional(name != kInputName);
  }
  inference::ModelOutput* output = out.add_output();
  output->set_name(kOutputName);
  output->set_data_type(ConfigDatatype(model.type));
  for (uint32_t i = 0; i < ReportedRank(model); ++i) output->add_dims(-1);
  inference::ModelInstanceGroup* group = out.add_instance_group();
  group->set_name(model.name);
  group->set_count(facts.device_count);
  group->set_kind(facts.device_kind == "cpu" ? inference::ModelInstanceGroup::KIND_CPU
                                              : inference::ModelInstanceGroup::KIND_GPU);
  if (facts.max_batch_requests > 1) {
    out.mutable_dynamic_batching()->set_max_queue_delay_microseconds(
        facts.max_queue_delay_us);
  }
  auto& parameters = *out.mutable_parameters();
  parameters["operator"].set_string_value(std::string(model.schema->name));
  parameters["min_rank"].set_string_value(absl::StrCat(model.min_rank));
  parameters["max_rank"].set_string_value(absl::StrCat(model.max_rank));
  parameters["max_batch_requests"].set_string_value(absl::StrCat(facts.max_batch_requests));
  parameters["max_batch_bytes"].set_string_value(absl::StrCat(facts.max_batch_bytes));
  return out;
}

}  // namespace dmls::server::kserve
