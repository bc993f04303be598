#include "engine/sched/admission.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/rule_status.h"
#include "engine/ops/schema.h"
#include "engine/ops/validator.h"

namespace dmls::sched {
namespace {

uint64_t Bytes(const std::optional<TensorDesc>& t) {
  return t ? t->total_tensor_size_in_bytes : 0;
}

}  // namespace

uint64_t OutputRangeBytes(const ExecuteRequest& r) {
  uint64_t out = Bytes(r.op.output);
  if (r.in_place) out = std::max(out, Bytes(r.op.input));
  return out;
}

uint64_t RequestBytes(const ExecuteRequest& r) {
  return r.input.size() + r.scale.size() + r.bias.size() + OutputRangeBytes(r);
}

absl::Status Admit(const ExecuteRequest& r, const AdmissionOptions& options) {
  std::vector<ops::Violation> violations;
  if (options.validate) {
    violations = ops::ValidateAll(r.op, static_cast<uint32_t>(r.feature_level), r.in_place);
  }
  if (!violations.empty()) {
    return ops::RuleStatus(absl::StatusCode::kInvalidArgument,
                           std::move(violations));
  }
  // A valid descriptor names a served operator.
  const ops::OperatorSchema* schema = ops::FindOperator(r.op.type);
  const std::string op_path = absl::StrCat(
      "operator.", schema ? std::string(schema->field) : "unknown");

  const std::pair<const char*, const std::optional<TensorDesc>*> tensors[] = {
      {"input", &r.op.input},
      {"scale", &r.op.scale},
      {"bias", &r.op.bias},
      {"output", &r.op.output}};
  for (const auto& [name, tensor] : tensors) {
    const uint64_t bytes = Bytes(*tensor);
    if (bytes > options.max_tensor_bytes) {
      return ops::RuleStatus(
          absl::StatusCode::kResourceExhausted, "TENSOR_BYTES_LIMIT",
          absl::StrCat(op_path, ".", name, ".total_tensor_size_in_bytes"),
          absl::StrCat("the ", name, " tensor has ", bytes,
                       " bytes, above the server limit of ",
                       options.max_tensor_bytes, " bytes"));
    }
  }

  if (options.max_output_bytes != 0 && r.op.output &&
      OutputRangeBytes(r) > options.max_output_bytes) {
    return ops::RuleStatus(
        absl::StatusCode::kResourceExhausted, "MESSAGE_BYTES_LIMIT",
        absl::StrCat(op_path, ".output.total_tensor_size_in_bytes"),
        absl::StrCat("the response would carry ", OutputRangeBytes(r),
                     " output bytes, above the server's limit of ",
                     options.max_output_bytes, " output bytes"));
  }

  const std::tuple<const char*, const std::optional<TensorDesc>*,
                   const std::string*>
      payloads[] = {{"input", &r.op.input, &r.input},
                    {"scale", &r.op.scale, &r.scale},
                    {"bias", &r.op.bias, &r.bias}};
  for (const auto& [name, tensor, payload] : payloads) {
    if (!tensor->has_value()) {
      if (!payload->empty()) {
        return ops::RuleStatus(
            absl::StatusCode::kInvalidArgument, "PAYLOAD_SIZE_MISMATCH", name,
            absl::StrCat(payload->size(), " bytes of ", name,
                         " payload were sent but the operator has no ", name,
                         " tensor"));
      }
      continue;
    }
    const uint64_t expected = (*tensor)->total_tensor_size_in_bytes;
    if (payload->size() != expected) {
      return ops::RuleStatus(
          absl::StatusCode::kInvalidArgument, "PAYLOAD_SIZE_MISMATCH", name,
          absl::StrCat("the ", name, " payload has ", payload->size(),
                       " bytes but ", op_path, ".", name,
                       ".total_tensor_size_in_bytes is ", expected));
    }
  }
  const uint64_t payload_bytes = r.input.size() + r.scale.size() + r.bias.size();
  if (options.max_output_ratio != 0 && r.op.output &&
      OutputRangeBytes(r) > options.output_ratio_floor_bytes &&
      OutputRangeBytes(r) / options.max_output_ratio > std::max<uint64_t>(payload_bytes, 1)) {
    return ops::RuleStatus(
        absl::StatusCode::kResourceExhausted, "OUTPUT_AMPLIFICATION",
        absl::StrCat(op_path, ".output.total_tensor_size_in_bytes"),
        absl::StrCat("the output range of ", OutputRangeBytes(r), " bytes is more than ",
                     options.max_output_ratio, " times the ", payload_bytes,
                     " payload bytes sent; raise the ratio with the '",
                     "dmls-max-output-ratio' request metadata (within the server's limit) or "
                     "send a resident input"));
  }
  return absl::OkStatus();
}

}  // namespace dmls::sched
