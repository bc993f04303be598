#include "server/request_processor.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ops/schema.h"
#include "engine/ops/validator.h"
#include "server/proto_mapping.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

// Room for an ExecuteResponse's fields besides the output bytes (request id,
// engine name, time, tags); generous on purpose.
constexpr uint64_t kResponseOverheadBytes = 1024;

std::string EngineName(const Engine& engine) {
  DeviceInfo info = engine.device_info();
  return info.backend.empty() ? info.kind : info.backend;
}

// One payload of a request beside the tensor it fills.
struct PayloadSlot {
  const char* name;  // request field and OperatorDesc member: "input", ...
  const std::optional<TensorDesc>* tensor;
  const std::string* payload;
};

}  // namespace

RequestProcessor::RequestProcessor(Engine* engine, ProcessorOptions options,
                                   std::shared_ptr<spdlog::logger> logger)
    : engine_(engine),
      options_(options),
      logger_(std::move(logger)),
      engine_name_(EngineName(*engine)) {}

v1::ValidateResponse RequestProcessor::Validate(
    const v1::ValidateRequest& request) const {
  OperatorDesc op = OperatorFromProto(request.operator_());
  uint32_t level = FeatureLevelFromProto(request.feature_level(),
                                         options_.highest_feature_level);
  std::vector<ops::Violation> violations =
      ops::ValidateAll(op, level, request.in_place());
  v1::ValidateResponse response;
  response.set_valid(violations.empty());
  response.set_feature_level(level);
  for (const ops::Violation& v : violations) {
    ToProto(v, response.add_violations());
  }
  return response;
}

RequestError RequestProcessor::Check(const v1::ExecuteRequest& request,
                                     const OperatorDesc& op,
                                     uint32_t feature_level) const {
  std::vector<ops::Violation> violations =
      ops::ValidateAll(op, feature_level, request.in_place());
  if (!violations.empty()) {
    return RequestError::FromViolations(std::move(violations));
  }
  // A valid descriptor names a served operator.
  const ops::OperatorSchema* schema = ops::FindOperator(op.type);
  std::string op_path = absl::StrCat(
      "operator.", schema ? std::string(schema->field) : "unknown");

  const std::pair<const char*, const std::optional<TensorDesc>*> tensors[] = {
      {"input", &op.input},
      {"scale", &op.scale},
      {"bias", &op.bias},
      {"output", &op.output}};
  for (const auto& [name, tensor] : tensors) {
    if (!tensor->has_value()) continue;
    uint64_t bytes = (*tensor)->total_tensor_size_in_bytes;
    if (bytes > options_.max_tensor_bytes) {
      return RequestError::Rule(
          absl::StatusCode::kResourceExhausted, "TENSOR_BYTES_LIMIT",
          absl::StrCat(op_path, ".", name, ".total_tensor_size_in_bytes"),
          absl::StrCat("the ", name, " tensor has ", bytes,
                       " bytes, above the server limit of ",
                       options_.max_tensor_bytes, " bytes"));
    }
  }

  // The response carries the output buffer (for in-place the aliased one,
  // max(input, output) bytes) plus a few small fields.
  if (options_.max_message_bytes != 0 && op.output.has_value()) {
    uint64_t output_bytes = op.output->total_tensor_size_in_bytes;
    if (request.in_place() && op.input.has_value()) {
      output_bytes =
          std::max(output_bytes, op.input->total_tensor_size_in_bytes);
    }
    if (output_bytes + kResponseOverheadBytes > options_.max_message_bytes) {
      return RequestError::Rule(
          absl::StatusCode::kResourceExhausted, "MESSAGE_BYTES_LIMIT",
          absl::StrCat(op_path, ".output.total_tensor_size_in_bytes"),
          absl::StrCat("the response would carry ", output_bytes,
                       " output bytes, above the server's message limit of ",
                       options_.max_message_bytes, " bytes"));
    }
  }

  const PayloadSlot payloads[] = {{"input", &op.input, &request.input()},
                                  {"scale", &op.scale, &request.scale()},
                                  {"bias", &op.bias, &request.bias()}};
  for (const PayloadSlot& slot : payloads) {
    if (!slot.tensor->has_value()) {
      if (!slot.payload->empty()) {
        return RequestError::Rule(
            absl::StatusCode::kInvalidArgument, "PAYLOAD_SIZE_MISMATCH",
            slot.name,
            absl::StrCat(slot.payload->size(), " bytes of ", slot.name,
                         " payload were sent but the operator has no ",
                         slot.name, " tensor"));
      }
      continue;
    }
    uint64_t expected = (*slot.tensor)->total_tensor_size_in_bytes;
    if (slot.payload->size() != expected) {
      return RequestError::Rule(
          absl::StatusCode::kInvalidArgument, "PAYLOAD_SIZE_MISMATCH",
          slot.name,
          absl::StrCat("the ", slot.name, " payload has ", slot.payload->size(),
                       " bytes but ", op_path, ".", slot.name,
                       ".total_tensor_size_in_bytes is ", expected));
    }
  }
  return RequestError{};
}

void RequestProcessor::Execute(v1::ExecuteRequest& request, CallContext context,
                               OutcomeCallback done) {
  const absl::Time start = absl::Now();
  const uint64_t request_id = request.request_id();
  auto finish = [this, start, request_id](RequestError error,
                                          std::string output) {
    ExecuteOutcome outcome;
    outcome.error = std::move(error);
    outcome.response.set_request_id(request_id);
    outcome.response.set_engine(engine_name_);
    outcome.response.set_server_time_us(
        static_cast<uint64_t>(absl::ToInt64Microseconds(absl::Now() - start)));
    if (outcome.error.ok()) {
      outcome.response.set_output(std::move(output));
    }
    return outcome;
  };

  OperatorDesc op = OperatorFromProto(request.operator_());
  uint32_t level = FeatureLevelFromProto(request.feature_level(),
                                         options_.highest_feature_level);
  if (RequestError error = Check(request, op, level); !error.ok()) {
    logger_->debug("request {} rejected: {}", request_id, error.message);
    done(finish(std::move(error), {}));
    return;
  }
  if (context.cancelled && context.cancelled->load()) {
    done(finish(RequestError::FromStatus(absl::CancelledError(
                    "the call was cancelled before execution")),
                {}));
    return;
  }
  if (absl::Now() >= context.deadline) {
    done(finish(RequestError::FromStatus(absl::DeadlineExceededError(
                    "the deadline passed before execution")),
                {}));
    return;
  }
  // Count first, then compare, so that concurrent callers cannot all slip
  // under the limit together.
  if (in_flight_.fetch_add(1) >= options_.max_in_flight) {
    in_flight_.fetch_sub(1);
    done(finish(
        RequestError::Rule(
            absl::StatusCode::kResourceExhausted, "IN_FLIGHT_LIMIT", "",
            absl::StrCat("the server already has ", options_.max_in_flight,
                         " requests in flight; retry later")),
        {}));
    return;
  }

  ExecuteRequest engine_request;
  engine_request.op = std::move(op);
  engine_request.feature_level = static_cast<FeatureLevel>(level);
  engine_request.in_place = request.in_place();
  engine_request.input = std::move(*request.mutable_input());
  engine_request.scale = std::move(*request.mutable_scale());
  engine_request.bias = std::move(*request.mutable_bias());
  engine_request.deadline = context.deadline;
  engine_request.cancelled = std::move(context.cancelled);
  engine_->Execute(
      std::move(engine_request),
      [this, finish, request_id,
       done = std::move(done)](absl::StatusOr<ExecuteResult> result) mutable {
        in_flight_.fetch_sub(1);
        if (!result.ok()) {
          logger_->debug("request {} failed in the engine: {}", request_id,
                         result.status().ToString());
          done(finish(RequestError::FromStatus(result.status()), {}));
          return;
        }
        ExecuteOutcome outcome =
            finish(RequestError{}, std::move(result->output));
        logger_->debug("request {} done in {} us", request_id,
                       outcome.response.server_time_us());
        done(std::move(outcome));
      });
}

}  // namespace dmls::server
