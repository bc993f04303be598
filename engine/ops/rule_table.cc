#include "engine/ops/rule_table.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace dmls::ops {
namespace {

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
constexpr absl::StatusCode kExhausted = absl::StatusCode::kResourceExhausted;
constexpr absl::StatusCode kNotFound = absl::StatusCode::kNotFound;
constexpr absl::StatusCode kUnauthenticated = absl::StatusCode::kUnauthenticated;
constexpr absl::StatusCode kDenied = absl::StatusCode::kPermissionDenied;

constexpr char kOp[] = "Operator";
constexpr char kTensor[] = "Tensor descriptors";
constexpr char kParam[] = "Operator parameters";
constexpr char kMvn[] = "MVN and MVN1";
constexpr char kFused[] = "Fused activations";
constexpr char kRequest[] = "Requests and resident tensors";
constexpr char kChain[] = "Chains";
constexpr char kChunk[] = "Chunked transfers";
constexpr char kLimit[] = "Limits";
constexpr char kAuth[] = "Identity and authorization";
constexpr char kKServe[] = "Open Inference Protocol (KServe v2)";

// T: a tensor field, operator.<op>.<tensor>.
#define T "operator.<op>.<tensor>"

const RuleDoc kRules[] = {
    // The request's operator and feature level.
    {"FL_UNKNOWN", kInvalid, "feature_level",
     "the feature level is not a DML_FEATURE_LEVEL value", kOp},
    {"OP_UNKNOWN", kInvalid, "operator", "the operator is not one the service serves",
     kOp},
    {"OP_NOT_AVAILABLE", kInvalid, "operator.<op>",
     "the operator was introduced after the requested feature level", kOp},
    {"INPLACE_NOT_SUPPORTED", kInvalid, "in_place",
     "the operator cannot run in place", kOp},
    {"INPLACE_LAYOUT_MISMATCH", kInvalid, "in_place",
     "in place needs the input and output to have the same data type, sizes "
     "and effective strides",
     kOp},
    // Tensor descriptors.
    {"TENSOR_MISSING", kInvalid, T, "a required tensor is absent", kTensor},
    {"TENSOR_TYPE_INVALID", kInvalid, T ".type",
     "the tensor type is not BUFFER", kTensor},
    {"DATATYPE_UNKNOWN", kInvalid, T ".data_type",
     "the data type is UNKNOWN or not a DataType value", kTensor},
    {"FLAGS_INVALID", kInvalid, T ".flags", "unknown tensor flag bits", kTensor},
    {"FLAGS_OWNED_BY_DML_ON_OUTPUT", kInvalid, T ".flags",
     "OWNED_BY_DML on an output tensor", kTensor},
    {"DIMCOUNT_RANGE", kInvalid, T ".dimension_count",
     "the rank (sizes given) is outside 1..8", kTensor},
    {"SIZES_LENGTH_MISMATCH", kInvalid, T ".sizes",
     "sizes has a length other than dimension_count", kTensor},
    {"SIZE_INVALID", kInvalid, T ".sizes[i]", "a size does not fit a UINT",
     kTensor},
    {"SIZE_ZERO", kInvalid, T ".sizes[i]", "a size is 0", kTensor},
    {"STRIDES_LENGTH_MISMATCH", kInvalid, T ".strides",
     "strides has a length other than dimension_count", kTensor},
    {"STRIDE_INVALID", kInvalid, T ".strides[i]", "a stride does not fit a UINT",
     kTensor},
    {"TENSOR_TOO_LARGE", kInvalid, T ".sizes",
     "the tensor has more than 2^32-1 elements or its buffer range overflows",
     kTensor},
    {"TOTAL_SIZE_TOO_SMALL", kInvalid, T ".total_tensor_size_in_bytes",
     "total_tensor_size_in_bytes is below DMLCalcBufferTensorSize", kTensor},
    {"TOTAL_SIZE_NOT_DWORD_MULTIPLE", kInvalid, T ".total_tensor_size_in_bytes",
     "total_tensor_size_in_bytes is not a multiple of 4", kTensor},
    {"ALIGNMENT_INVALID", kInvalid, T ".guaranteed_base_offset_alignment",
     "the alignment is neither 0 nor a power of two at least the element size",
     kTensor},
    {"DIMCOUNT_UNSUPPORTED", kInvalid, T ".dimension_count",
     "the operator does not take this rank at the feature level", kTensor},
    {"DATATYPE_UNSUPPORTED", kInvalid, T ".data_type",
     "the operator does not take this data type at the feature level", kTensor},
    {"DATATYPE_MISMATCH", kInvalid, T ".data_type",
     "the tensor's data type differs from the input's", kTensor},
    {"DIMCOUNT_MISMATCH", kInvalid, T ".dimension_count",
     "the tensor's rank differs from the input's", kTensor},
    {"SIZES_MISMATCH", kInvalid, "operator.<op>.output.sizes",
     "the output's sizes differ from the input's", kTensor},
    {"OUTPUT_OVERLAP", kInvalid, "operator.<op>.output.strides",
     "the output's strides make two elements share one offset", kTensor},
    // Parameters.
    {"PARAM_MISSING", kInvalid, "operator.<op>.<param>",
     "a required parameter is absent (the wire carries every value; the "
     "clients fill the documented defaults)",
     kParam},
    {"PARAM_INVALID", kInvalid, "operator.<op>.<param>",
     "a parameter is not a usable value (a non-finite FLOAT, say)", kParam},
    {"SCALEBIAS_64BIT_UNSUPPORTED", kInvalid, "operator.<op>.scale_bias",
     "scale_bias on a 64-bit integer tensor", kParam},
    {"CELU_ALPHA_INVALID", kInvalid, "operator.celu.alpha",
     "CELU's alpha is 0 or not finite", kParam},
    {"SOFTPLUS_STEEPNESS_RANGE", kInvalid, "operator.softplus.steepness",
     "SOFTPLUS's steepness is below 1 before feature level 6_4, or 0 or not "
     "finite",
     kParam},
    // MVN and MVN1.
    {"MVN_EPSILON_INVALID", kInvalid, "operator.<mvn>.epsilon",
     "epsilon is negative or not finite", kMvn},
    {"MVN_SCALE_BIAS_PAIRING", kInvalid, "operator.<mvn>.scale",
     "scale and bias must be given together before feature level 5_0", kMvn},
    {"MVN_SCALE_BIAS_BROADCAST", kInvalid, "operator.<mvn>.<scale|bias>.sizes[i]",
     "a scale or bias size is neither 1 nor the input's", kMvn},
    {"MVN_AXIS_COUNT_MISMATCH", kInvalid, "operator.mvn1.axis_count",
     "axis_count differs from the number of axes", kMvn},
    {"MVN_AXES_EMPTY", kInvalid, "operator.mvn1.axis_count", "no axes given",
     kMvn},
    {"MVN_AXIS_OUT_OF_RANGE", kInvalid, "operator.mvn1.axes[i]",
     "an axis is not below the input's rank", kMvn},
    {"MVN_AXES_DUPLICATE", kInvalid, "operator.mvn1.axes[i]",
     "an axis is listed twice", kMvn},
    // Fused activations.
    {"FUSED_NOT_FUSABLE", kInvalid, "operator.<mvn>.fused_activation",
     "the fused activation is not one MVN can fuse (or none is set)", kFused},
    {"FUSED_NOT_AVAILABLE", kInvalid, "operator.<mvn>.fused_activation.<act>",
     "the activation cannot be fused at the requested feature level", kFused},
    {"FUSED_TENSORS_NOT_NULL", kInvalid, "operator.<mvn>.fused_activation.<act>",
     "a fused activation carries input or output tensors", kFused},
    {"FUSED_PARAM_INVALID", kInvalid,
     "operator.<mvn>.fused_activation.<act>.<param>",
     "a fused activation's parameter is out of range", kFused},
    // Requests and resident tensors.
    {"PAYLOAD_SIZE_MISMATCH", kInvalid, "<tensor>",
     "a tensor's bytes differ from its total_tensor_size_in_bytes", kRequest},
    {"HANDLE_AND_BYTES", kInvalid, "<tensor>_handle",
     "a tensor was given as bytes and as a handle", kRequest},
    {"HANDLE_NOT_FOUND", kNotFound, "<tensor>_handle",
     "no such resident tensor of the caller's (unknown, released, expired or "
     "someone else's)",
     kRequest},
    {"HANDLE_LOST", kNotFound, "<tensor>_handle",
     "the handle was made by another server instance: its tensor went with "
     "that replica (or the call reached another one)",
     kRequest},
    {"TTL_TOO_LONG", kInvalid, "ttl_seconds",
     "a time to live above 30 days (ttl_seconds, create.ttl_seconds, "
     "keep_output_ttl_seconds, steps[i].keep_output_ttl_seconds)",
     kRequest},
    {"HANDLE_TYPE_MISMATCH", kInvalid, "<tensor>_handle",
     "the resident tensor's data type differs from the descriptor's", kRequest},
    {"HANDLE_SIZE_MISMATCH", kInvalid, "<tensor>_handle",
     "the resident tensor's size differs from the descriptor's total size",
     kRequest},
    {"OUTPUT_HANDLE_TOO_SMALL", kInvalid, "output_handle",
     "the output tensor is smaller than the output range", kRequest},
    {"OUTPUT_ALIASES_INPUT", kInvalid, "output_handle",
     "the output tensor is also an input (use in_place)", kRequest},
    {"OUTPUT_MODE_CONFLICT", kInvalid, "keep_output",
     "keep_output, output_handle and in place on a handle exclude each other",
     kRequest},
    {"CREATE_DATA_SIZE", kInvalid, "data",
     "CreateTensor's data differs from the tensor's size, or WriteTensor "
     "carries data in create",
     kRequest},
    {"READ_RANGE_INVALID", kInvalid, "length",
     "the byte range read is outside the tensor", kRequest},
    {"OUTPUT_RATIO_INVALID", kInvalid, "dmls-max-output-ratio",
     "the output-ratio metadata is not a positive integer", kRequest},
    {"VIOLATIONS_TRUNCATED", kInvalid, "",
     "more violations than the server lists were found (the last entry)",
     kRequest},
    {"DIRECTML_REFUSED", kInvalid, "",
     "Microsoft's DirectML.dll (the Windows DirectML engine, docs/DIRECTML.md) "
     "refused to create or compile the operator (E_INVALIDARG, E_NOTIMPL, "
     "DXGI_ERROR_UNSUPPORTED); the message names the operator, the HRESULT "
     "and the data types",
     kRequest},
    // Chains.
    {"CHAIN_EMPTY", kInvalid, "steps", "the chain has no step", kChain},
    {"CHAIN_NO_OUTPUT", kInvalid, "steps",
     "no step returns, keeps or writes its output", kChain},
    {"CHAIN_SOURCE_MISSING", kInvalid, "steps[i].<tensor>",
     "a tensor has no source (data, handle or step)", kChain},
    {"CHAIN_SOURCE_UNEXPECTED", kInvalid, "steps[i].<tensor>",
     "a source is given for a tensor the operator does not have", kChain},
    {"CHAIN_STEP_FORWARD", kInvalid, "steps[i].<tensor>.step",
     "a step uses the output of itself or of a later step", kChain},
    {"CHAIN_TYPE_MISMATCH", kInvalid, "steps[i].<tensor>.step",
     "the earlier step's output data type differs from the tensor's", kChain},
    {"CHAIN_SIZE_MISMATCH", kInvalid, "steps[i].<tensor>.step",
     "the earlier step's output size differs from the tensor's", kChain},
    // Chunked transfers.
    {"CHUNK_HEADER_MISSING", kInvalid, "header",
     "the first message does not carry the header (or names no tensor)",
     kChunk},
    {"CHUNK_HEADER_REPEATED", kInvalid, "header",
     "a header after the first message", kChunk},
    {"CHUNK_SLOT_INVALID", kInvalid, "chunk.slot",
     "a chunk for a tensor the operator does not take", kChunk},
    {"CHUNK_OVERLAP", kInvalid, "chunk.offset",
     "a chunk overlaps bytes already sent", kChunk},
    {"CHUNK_OUT_OF_ORDER", kInvalid, "chunk.offset",
     "a chunk leaves a gap", kChunk},
    {"CHUNK_EXCESS", kInvalid, "chunk.data",
     "a chunk runs past the tensor's end", kChunk},
    {"CHUNK_MISSING", kInvalid, "<tensor>",
     "the stream ended before every byte of a tensor arrived", kChunk},
    // Limits.
    {"TENSOR_BYTES_LIMIT", kExhausted, T ".total_tensor_size_in_bytes",
     "a tensor is larger than --max_tensor_bytes", kLimit},
    {"MESSAGE_BYTES_LIMIT", kExhausted, "operator.<op>.output.total_tensor_size_in_bytes",
     "the response would exceed --max_message_bytes (use ExecuteChunked or "
     "keep the output resident)",
     kLimit},
    {"OUTPUT_AMPLIFICATION", kExhausted,
     "operator.<op>.output.total_tensor_size_in_bytes",
     "the output range is too many times the request's payload", kLimit},
    {"IN_FLIGHT_LIMIT", kExhausted, "",
     "the server already runs --max_in_flight requests; retry later", kLimit},
    {"QUEUE_FULL", kExhausted, "",
     "the engine's queue holds --max_queue_depth requests; retry later",
     kLimit},
    {"MEMORY_BUDGET", kExhausted, "",
     "the request's host memory does not fit the server's budget now", kLimit},
    {"RESIDENT_QUOTA", kExhausted, "",
     "the resident tensor does not fit the caller's or the server's quota",
     kLimit},
    {"CHAIN_TOO_LONG", kExhausted, "steps",
     "the chain has more steps than the server allows", kLimit},
    // Identity and authorization.
    {"TENANT_INVALID", kInvalid, "tenant (metadata)",
     "the tenant metadata is empty or too long", kAuth},
    {"TENANT_REQUIRED", kInvalid, "tenant (metadata)",
     "a tensor operation, handle or kept output from a caller with no bearer "
     "token, client certificate or tenant (--tenant_from_peer keys them by "
     "the peer address, for one trusted client)",
     kAuth},
    {"TENANT_MISMATCH", kInvalid, "tenant (metadata)",
     "the tenant metadata sent beside a bearer token or a client "
     "certificate names another principal than theirs (behind the balancer "
     "it is the routing key)",
     kAuth},
    {"AUTH_TOKEN_MISSING", kUnauthenticated, "authorization (metadata)",
     "the server wants a bearer token and none was sent", kAuth},
    {"AUTH_TOKEN_INVALID", kUnauthenticated, "authorization (metadata)",
     "the token is unknown or not 'Bearer TOKEN'", kAuth},
    {"AUTH_TOKEN_EXPIRED", kUnauthenticated, "authorization (metadata)",
     "the token has expired", kAuth},
    {"AUTH_SCOPE", kDenied, "", "the token's scopes do not allow the method",
     kAuth},
    // The Open Inference Protocol (docs/KSERVE.md); the validator's rules
    // keep their ids there with KServe field paths.
    {"KSERVE_MODEL_UNKNOWN", kNotFound, "model_name",
     "no such model (operator and data type)", kKServe},
    {"KSERVE_VERSION_UNKNOWN", kNotFound, "model_version",
     "the model has no such version", kKServe},
    {"KSERVE_INPUT_MISSING", kInvalid, "inputs", "the model's input is missing",
     kKServe},
    {"KSERVE_INPUT_UNKNOWN", kInvalid, "inputs[i].name",
     "the model has no input of that name", kKServe},
    {"KSERVE_INPUT_DUPLICATE", kInvalid, "inputs[i].name",
     "an input is given twice", kKServe},
    {"KSERVE_OUTPUT_UNKNOWN", kInvalid, "outputs[i].name",
     "the model has no output of that name", kKServe},
    {"KSERVE_DATATYPE_MISMATCH", kInvalid, "inputs[i].datatype",
     "the input's datatype is not the model's", kKServe},
    {"KSERVE_SHAPE_INVALID", kInvalid, "inputs[i].shape[k]",
     "a dimension is negative", kKServe},
    {"KSERVE_SHAPE_OVERFLOW", kInvalid, "inputs[i].shape",
     "the tensor's size in bytes does not fit 64 bits", kKServe},
    {"KSERVE_RAW_COUNT", kInvalid, "raw_input_contents",
     "raw_input_contents does not have one entry per input", kKServe},
    {"KSERVE_RAW_SIZE", kInvalid, "raw_input_contents[i]",
     "a raw input's bytes differ from what its shape and datatype make",
     kKServe},
    {"KSERVE_CONTENTS_AND_RAW", kInvalid, "inputs[i].contents",
     "typed contents while raw_input_contents is used: send every input one way",
     kKServe},
    {"KSERVE_CONTENTS_TYPE", kInvalid, "inputs[i].contents",
     "the datatype has no typed contents (FP16): send raw_input_contents",
     kKServe},
    {"KSERVE_CONTENTS_COUNT", kInvalid, "inputs[i].contents",
     "the number of typed values differs from the shape's elements", kKServe},
    {"KSERVE_CONTENTS_RANGE", kInvalid, "inputs[i].contents.<type>_contents[j]",
     "a typed value does not fit the input's datatype", kKServe},
    {"KSERVE_PARAMETER_UNKNOWN", kInvalid, "parameters[\"<name>\"]",
     "no operator field of that name", kKServe},
    {"KSERVE_PARAMETER_TYPE", kInvalid, "parameters[\"<name>\"]",
     "the parameter's kind (bool, int, double, string) does not fit its field",
     kKServe},
    {"KSERVE_PARAMETER_RANGE", kInvalid, "parameters[\"<name>\"]",
     "the parameter's value is out of its field's range", kKServe},
};

#undef T

}  // namespace

absl::Span<const RuleDoc> RuleTable() { return kRules; }

std::string RulesMarkdown() {
  std::string out =
      "# Rule ids\n\n"
      "<!-- Generated from engine/ops/rule_table.cc by dmls_rules_doc; do not "
      "edit. ctest rules_doc_current fails when it is stale: regenerate with "
      "build/engine/ops/dmls_rules_doc > docs/RULES.md -->\n\n"
      "Every rejected request names the rule it broke and the request field "
      "at fault: the status message starts with the rule id, and "
      "INVALID_ARGUMENT answers carry a google.rpc.BadRequest with one "
      "field violation per rule (`description` is \"RULE_ID: message\"). "
      "ExecuteStream reports them per request in `status_code`, "
      "`status_message` and `violations`. In field paths `<op>` is the "
      "operator's field in OperatorDesc (`mvn1`), `<tensor>` one of "
      "`input`, `scale`, `bias`, `output`, and `[i]` an index; chain fields "
      "are prefixed with `steps[i].`.\n";
  const char* area = "";
  for (const RuleDoc& r : kRules) {
    if (std::strcmp(area, r.area) != 0) {
      area = r.area;
      absl::StrAppend(&out, "\n## ", area,
                      "\n\n| rule | meaning | field | gRPC code |\n"
                      "|---|---|---|---|\n");
    }
    absl::StrAppend(&out, "| `", r.id, "` | ", r.meaning, " | ",
                    *r.field ? absl::StrCat("`", r.field, "`") : "-", " | ",
                    absl::StatusCodeToString(r.code), " |\n");
  }
  return out;
}

}  // namespace dmls::ops
