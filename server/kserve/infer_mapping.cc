#include "server/kserve/infer_mapping.h"

#include <limits>
#include <type_traits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "engine/ops/rule_status.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "server/kserve/infer_parameters.h"

namespace dmls::server::kserve {
namespace {

namespace v1 = dmlserve::v1;
using inference::InferTensorContents;
using inference::ModelInferRequest;

RequestError Invalid(std::string rule, std::string field, std::string message) {
  return RequestError::Rule(absl::StatusCode::kInvalidArgument, std::move(rule),
                            std::move(field), std::move(message));
}

std::string InputPath(int index, absl::string_view rest = {}) {
  return absl::StrCat("inputs[", index, "]", rest);
}

// Appends `count` values of `values` to `out` as elements of `T`, each
// checked to fit; false at the first that does not (its index in *bad).
template <typename T, typename Values>
bool AppendAs(const Values& values, std::string* out, int* bad) {
  out->reserve(values.size() * sizeof(T));
  for (int i = 0; i < values.size(); ++i) {
    const auto v = values[i];
    if constexpr (std::is_integral_v<T>) {
      if (v < static_cast<decltype(v)>(std::numeric_limits<T>::min()) ||
          v > static_cast<decltype(v)>(std::numeric_limits<T>::max())) {
        *bad = i;
        return false;
      }
    }
    const T element = static_cast<T>(v);
    out->append(reinterpret_cast<const char*>(&element), sizeof(T));
  }
  return true;
}

// The raw bytes of typed `contents` of `type`; the element count is checked
// by the caller.
RequestError FromContents(const InferTensorContents& c, DataType type, int index,
                          std::string* out, int* count) {
  int bad = -1;
  bool ok = true;
  const char* field = nullptr;
  switch (type) {
    case DataType::kFloat32: field = "fp32_contents"; *count = c.fp32_contents_size();
      AppendAs<float>(c.fp32_contents(), out, &bad); break;
    case DataType::kFloat64: field = "fp64_contents"; *count = c.fp64_contents_size();
      AppendAs<double>(c.fp64_contents(), out, &bad); break;
    case DataType::kInt8: field = "int_contents"; *count = c.int_contents_size();
      ok = AppendAs<int8_t>(c.int_contents(), out, &bad); break;
    case DataType::kInt16: field = "int_contents"; *count = c.int_contents_size();
      ok = AppendAs<int16_t>(c.int_contents(), out, &bad); break;
    case DataType::kInt32: field = "int_contents"; *count = c.int_contents_size();
      AppendAs<int32_t>(c.int_contents(), out, &bad); break;
    case DataType::kInt64: field = "int64_contents"; *count = c.int64_contents_size();
      AppendAs<int64_t>(c.int64_contents(), out, &bad); break;
    case DataType::kUint8: field = "uint_contents"; *count = c.uint_contents_size();
      ok = AppendAs<uint8_t>(c.uint_contents(), out, &bad); break;
    case DataType::kUint16: field = "uint_contents"; *count = c.uint_contents_size();
      ok = AppendAs<uint16_t>(c.uint_contents(), out, &bad); break;
    case DataType::kUint32: field = "uint_contents"; *count = c.uint_contents_size();
      AppendAs<uint32_t>(c.uint_contents(), out, &bad); break;
    case DataType::kUint64: field = "uint64_contents"; *count = c.uint64_contents_size();
      AppendAs<uint64_t>(c.uint64_contents(), out, &bad); break;
    default:
      return Invalid("KSERVE_CONTENTS_TYPE", InputPath(index, ".contents"),
                     absl::StrCat(KServeDatatype(type),
                                  " tensors have no typed contents: send raw_input_contents"));
  }
  if (!ok) {
    return Invalid("KSERVE_CONTENTS_RANGE",
                   InputPath(index, absl::StrCat(".contents.", field, "[", bad, "]")),
                   absl::StrCat("the value does not fit ", KServeDatatype(type)));
  }
  return {};
}

// One input tensor of the operator: its descriptor (packed, from shape and
// the model's type) and payload (padded to the descriptor's total size).
RequestError MapTensor(const ModelEntry& model, ModelInferRequest& in, int index, bool raw,
                       v1::TensorDesc* desc, std::string* payload, uint64_t* data_bytes) {
  const ModelInferRequest::InferInputTensor& tensor = in.inputs(index);
  if (tensor.datatype() != KServeDatatype(model.type)) {
    return Invalid("KSERVE_DATATYPE_MISMATCH", InputPath(index, ".datatype"),
                   absl::StrCat("model '", model.name, "' takes ", KServeDatatype(model.type),
                                ", not '", tensor.datatype(), "' (models of other types: ",
                                "<operator>_<type>, e.g. activation_celu_fp16)"));
  }
  const uint64_t element_bytes = ElementBytes(model.type);
  uint64_t elements = 1;
  bool overflow = false;
  desc->set_data_type(static_cast<v1::DataType>(static_cast<uint32_t>(model.type)));
  for (int k = 0; k < tensor.shape_size(); ++k) {
    const int64_t dim = tensor.shape(k);
    if (dim < 0) {
      return Invalid("KSERVE_SHAPE_INVALID", InputPath(index, absl::StrCat(".shape[", k, "]")),
                     absl::StrCat("dimension ", dim, " is negative"));
    }
    desc->add_sizes(static_cast<uint64_t>(dim));
    overflow |= __builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &elements);
  }
  uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(elements, element_bytes, &bytes);
  if (overflow || bytes > std::numeric_limits<uint64_t>::max() - 3) {
    return Invalid("KSERVE_SHAPE_OVERFLOW", InputPath(index, ".shape"),
                   "the tensor's size in bytes does not fit 64 bits");
  }
  // DMLCalcBufferTensorSize of a packed tensor: the bytes, rounded up to 4.
  desc->set_total_tensor_size_in_bytes((bytes + 3) / 4 * 4);
  *data_bytes = bytes;
  if (raw) {
    std::string& data = *in.mutable_raw_input_contents(index);
    if (data.size() != bytes) {
      return Invalid("KSERVE_RAW_SIZE", absl::StrCat("raw_input_contents[", index, "]"),
                     absl::StrCat(data.size(), " bytes where shape and datatype make ", bytes));
    }
    *payload = std::move(data);
  } else {
    int count = 0;
    if (RequestError e = FromContents(tensor.contents(), model.type, index, payload, &count);
        !e.ok()) {
      return e;
    }
    if (static_cast<uint64_t>(count) != elements) {
      return Invalid("KSERVE_CONTENTS_COUNT", InputPath(index, ".contents"),
                     absl::StrCat(count, " values where the shape has ", elements,
                                  " elements"));
    }
  }
  payload->resize(desc->total_tensor_size_in_bytes(), '\0');
  return {};
}

}  // namespace

RequestError MapInferRequest(const ModelCatalog& catalog, ModelInferRequest& in,
                             MappedInfer* out) {
  const ModelEntry* model = catalog.Find(in.model_name());
  if (model == nullptr) {
    return RequestError::Rule(absl::StatusCode::kNotFound, "KSERVE_MODEL_UNKNOWN", "model_name",
                              absl::StrCat("no model '", in.model_name(), "' (ServerMetadata ",
                                           "and docs/KSERVE.md list the models)"));
  }
  if (!in.model_version().empty() && in.model_version() != kModelVersion) {
    return RequestError::Rule(absl::StatusCode::kNotFound, "KSERVE_VERSION_UNKNOWN",
                              "model_version",
                              absl::StrCat("model '", model->name, "' has only version ",
                                           kModelVersion));
  }
  out->model = model;
  out->id = in.id();
  out->raw = in.raw_input_contents_size() > 0;
  if (out->raw && in.raw_input_contents_size() != in.inputs_size()) {
    return Invalid("KSERVE_RAW_COUNT", "raw_input_contents",
                   absl::StrCat(in.raw_input_contents_size(), " raw_input_contents for ",
                                in.inputs_size(), " inputs"));
  }
  if (out->raw) {
    for (int i = 0; i < in.inputs_size(); ++i) {
      if (in.inputs(i).has_contents() && in.inputs(i).contents().ByteSizeLong() > 0) {
        return Invalid("KSERVE_CONTENTS_AND_RAW", InputPath(i, ".contents"),
                       "an input has typed contents while raw_input_contents is used: "
                       "send every input one way");
      }
    }
  }
  const bool scale_bias = HasScaleAndBias(*model->schema);
  for (int i = 0; i < in.inputs_size(); ++i) {
    const std::string& name = in.inputs(i).name();
    int* slot = name == kInputName                 ? &out->input_index
                : scale_bias && name == kScaleName ? &out->scale_index
                : scale_bias && name == kBiasName  ? &out->bias_index
                                                   : nullptr;
    if (slot == nullptr) {
      return Invalid("KSERVE_INPUT_UNKNOWN", InputPath(i, ".name"),
                     absl::StrCat("model '", model->name, "' has no input '", name, "'"));
    }
    if (*slot >= 0) {
      return Invalid("KSERVE_INPUT_DUPLICATE", InputPath(i, ".name"),
                     absl::StrCat("input '", name, "' is given twice"));
    }
    *slot = i;
  }
  if (out->input_index < 0) {
    return Invalid("KSERVE_INPUT_MISSING", "inputs",
                   absl::StrCat("model '", model->name, "' needs the input '", kInputName, "'"));
  }
  for (int i = 0; i < in.outputs_size(); ++i) {
    if (in.outputs(i).name() != kOutputName) {
      return Invalid("KSERVE_OUTPUT_UNKNOWN", absl::StrCat("outputs[", i, "].name"),
                     absl::StrCat("model '", model->name, "' has only the output '",
                                  kOutputName, "'"));
    }
  }

  v1::ExecuteRequest& request = out->request;
  v1::OperatorDesc* desc = request.mutable_operator_();
  const google::protobuf::FieldDescriptor* member =
      desc->GetDescriptor()->FindFieldByName(std::string(model->schema->field));
  google::protobuf::Message* op = desc->GetReflection()->MutableMessage(desc, member);
  auto tensor_field = [&](const char* name) {
    return static_cast<v1::TensorDesc*>(op->GetReflection()->MutableMessage(
        op, op->GetDescriptor()->FindFieldByName(name)));
  };
  v1::TensorDesc* input = tensor_field(kInputName);
  if (RequestError e = MapTensor(*model, in, out->input_index, out->raw, input,
                                 request.mutable_input(), &out->output_bytes);
      !e.ok()) {
    return e;
  }
  uint64_t unused = 0;
  if (out->scale_index >= 0) {
    if (RequestError e = MapTensor(*model, in, out->scale_index, out->raw,
                                   tensor_field(kScaleName), request.mutable_scale(), &unused);
        !e.ok()) {
      return e;
    }
  }
  if (out->bias_index >= 0) {
    if (RequestError e = MapTensor(*model, in, out->bias_index, out->raw,
                                   tensor_field(kBiasName), request.mutable_bias(), &unused);
        !e.ok()) {
      return e;
    }
  }
  // Every operator served writes a tensor of its input's type and shape.
  *tensor_field(kOutputName) = *input;
  out->output_shape.assign(in.inputs(out->input_index).shape().begin(),
                           in.inputs(out->input_index).shape().end());
  return ApplyParameters(in.parameters(), static_cast<uint32_t>(input->sizes_size()),
                         &request);
}

inference::ModelInferResponse MapInferResponse(const MappedInfer& mapped,
                                               v1::ExecuteResponse& executed) {
  inference::ModelInferResponse response;
  response.set_model_name(mapped.model->name);
  response.set_model_version(kModelVersion);
  response.set_id(mapped.id);
  inference::ModelInferResponse::InferOutputTensor* output = response.add_outputs();
  output->set_name(kOutputName);
  output->set_datatype(std::string(KServeDatatype(mapped.model->type)));
  for (int64_t dim : mapped.output_shape) output->add_shape(dim);
  std::string* bytes = response.add_raw_output_contents();
  *bytes = std::move(*executed.mutable_output());
  // The output range is rounded up to 4 bytes; the tensor is what is
  // returned.
  if (bytes->size() > mapped.output_bytes) bytes->resize(mapped.output_bytes);
  return response;
}

std::string KServePath(const MappedInfer& mapped, absl::string_view path) {
  auto data_path = [&](int index) {
    return mapped.raw ? absl::StrCat("raw_input_contents[", index, "]")
                      : InputPath(index, ".contents");
  };
  if (path == "input") return data_path(mapped.input_index);
  if (path == "scale" && mapped.scale_index >= 0) return data_path(mapped.scale_index);
  if (path == "bias" && mapped.bias_index >= 0) return data_path(mapped.bias_index);
  if (path == "in_place") return ParameterPath("in_place");
  const std::string prefix =
      mapped.model == nullptr ? "" : absl::StrCat("operator.", std::string(mapped.model->schema->field), ".");
  absl::string_view rest = path;
  if (prefix.empty() || !absl::ConsumePrefix(&rest, prefix)) return std::string(path);
  // A tensor of the operator: the KServe input it came from (the output is
  // the input's shape and type).
  const std::pair<absl::string_view, int> tensors[] = {
      {kInputName, mapped.input_index}, {kOutputName, mapped.input_index},
      {kScaleName, mapped.scale_index}, {kBiasName, mapped.bias_index}};
  for (const auto& [name, index] : tensors) {
    absl::string_view tail = rest;
    if (!absl::ConsumePrefix(&tail, name) || (!tail.empty() && tail[0] != '.')) continue;
    if (index < 0) break;
    if (absl::ConsumePrefix(&tail, ".sizes")) return InputPath(index, absl::StrCat(".shape", tail));
    if (tail == ".data_type") return InputPath(index, ".datatype");
    // Strides, total size, dimension count: all made from the shape.
    return InputPath(index, ".shape");
  }
  // A parameter: its name up to the first index.
  const size_t bracket = rest.find('[');
  if (bracket == absl::string_view::npos) return ParameterPath(rest);
  return absl::StrCat(ParameterPath(rest.substr(0, bracket)), rest.substr(bracket));
}

void RewriteFieldPaths(const MappedInfer& mapped, RequestError* error) {
  if (error->violations.empty()) return;
  for (ops::Violation& v : error->violations) v.field = KServePath(mapped, v.field);
  error->message = ops::Summary(error->violations[0]);
}

}  // namespace dmls::server::kserve
