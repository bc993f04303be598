#include "engine/cpu/reference.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/cpu/elementwise.h"
#include "engine/cpu/mvn.h"
#include "engine/cpu/tensor_access.h"
#include "engine/ops/schema.h"

namespace dmls {

absl::StatusOr<ExecuteResult> RunReference(const ExecuteRequest& request,
                                           const CpuEngineOptions& options) {
  const OperatorDesc& op = request.op;
  const ops::OperatorSchema* schema = ops::FindOperator(op.type);
  if (schema == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "operator ", ops::OperatorTypeName(op.type), " is not served"));
  }
  if (!op.input || !op.output) {
    return absl::InvalidArgumentError(
        "InputTensor and OutputTensor are required");
  }
  if (absl::Status s =
          cpu::CheckPayload(*op.input, request.input.size(), "InputTensor");
      !s.ok()) {
    return s;
  }
  const bool mvn =
      schema->kind == ops::OpKind::kMvn || schema->kind == ops::OpKind::kMvn1;
  if (mvn) {
    if (op.scale) {
      if (absl::Status s =
              cpu::CheckPayload(*op.scale, request.scale.size(), "ScaleTensor");
          !s.ok()) {
        return s;
      }
    }
    if (op.bias) {
      if (absl::Status s =
              cpu::CheckPayload(*op.bias, request.bias.size(), "BiasTensor");
          !s.ok()) {
        return s;
      }
    }
  }

  // The output range: fresh, or (in-place) the input buffer it aliases,
  // covering the larger of the two TotalTensorSizeInBytes (§10).
  const uint64_t out_total = op.output->total_tensor_size_in_bytes;
  const uint64_t range =
      request.in_place ? std::max<uint64_t>(request.input.size(), out_total)
                       : out_total;
  if (range > options.max_buffer_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("output buffer of ", range,
                                                     " bytes exceeds the CPU "
                                                     "engine's limit of ",
                                                     options.max_buffer_bytes));
  }
  if (absl::Status s = cpu::CheckPayload(*op.output, out_total, "OutputTensor");
      !s.ok()) {
    return s;
  }
  // A non-overlapping output (validated) holds its elements in its buffer;
  // checking that keeps an unvalidated broadcast output from driving the
  // per-element bookkeeping far beyond the buffer size.
  if (ElementCount(op.output->sizes) >
      out_total / ElementBytes(op.output->type())) {
    return absl::InvalidArgumentError(
        "OutputTensor has more elements than its buffer holds");
  }
  if (request.in_place && op.input->data_type != op.output->data_type) {
    return absl::InvalidArgumentError(
        "in-place needs one data type for input and output");
  }
  // The kernels read each payload as one range: the received bytes
  // themselves when they arrived in one piece, else gathered once here.
  std::string input_scratch, scale_scratch, bias_scratch;
  const std::string_view input = request.input.Flatten(&input_scratch);
  ExecuteResult result;
  if (request.in_place) {
    result.output.assign(input.data(), input.size());
    result.output.resize(range, '\0');
  } else {
    result.output.assign(out_total, '\0');
  }

  absl::Status status;
  switch (schema->kind) {
    case ops::OpKind::kUnaryScaleBias:
      status = cpu::RunUnaryScaleBias(op, input, result.output.data());
      break;
    case ops::OpKind::kActivation:
      status =
          cpu::RunActivation(op, *schema, input, result.output.data());
      break;
    case ops::OpKind::kMvn:
    case ops::OpKind::kMvn1:
      status = cpu::RunMvn(op, *schema, input, request.scale.Flatten(&scale_scratch),
                           request.bias.Flatten(&bias_scratch), result.output.data());
      break;
  }
  if (!status.ok()) return status;
  return result;
}

}  // namespace dmls
