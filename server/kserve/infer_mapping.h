// The Open Inference Protocol's ModelInferRequest as a dmlserve
// ExecuteRequest, the ExecuteResponse as a ModelInferResponse, and the
// field paths of errors in the protocol's terms. The request then takes
// the path of every Execute (RequestProcessor: admission, batching,
// engines).
//
// A request names a model (model_catalog.h); its inputs by name, each
// with the model's datatype and a shape (packed row-major), data either in
// raw_input_contents (one entry per input, in `inputs` order, exactly
// elements x element-size bytes) or in every input's typed `contents`
// (fp32_contents for FP32, int_contents for INT8/16/32, ...; FP16 only
// raw). The output is "output" with the input's shape, always in
// raw_output_contents.
//
// Operator attributes are request `parameters`, named as the fields of the
// operator's dmlserve message (dmlserve.proto): "alpha", "min",
// "normalize_variance", "epsilon", "axes", "scale_bias.scale", ...; a
// sub-message by its path ("fused_activation.celu.alpha"), and a
// fused activation without parameters by naming it
// ("fused_activation": "relu"). Numbers as double, int64, uint64 or
// string; booleans as bool, int64 (0, 1) or string ("true", "false");
// "axes" as int64 (one axis) or a string list ("2,3", "[-1]"), negative
// axes counting from the end. "in_place" (bool) runs the operator in
// place. Triton's reserved request parameters (kIgnoredParameters) are
// ignored; any other name is an error.
//
// Errors carry a rule id and a field path: the KSERVE_* rules of this file
// with the protocol's fields (`inputs[0].datatype`, `parameters["alpha"]`),
// and the validator's rules (OPERATORS.md) with their paths rewritten by
// RewriteFieldPaths (operator.mvn1.axes[1] -> parameters["axes"][1],
// operator.celu.input.sizes[2] -> inputs[0].shape[2]).
//
// Stateless functions: thread-safe.
#ifndef DMLSERVE_SERVER_KSERVE_INFER_MAPPING_H_
#define DMLSERVE_SERVER_KSERVE_INFER_MAPPING_H_

#include <array>
#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "dmlserve/v1/dmlserve.pb.h"
#include "inference/grpc_predict_v2.pb.h"
#include "server/kserve/model_catalog.h"
#include "server/mapping/status_mapping.h"

namespace dmls::server::kserve {

// Request parameters Triton's clients may send that mean nothing here.
inline constexpr std::array<absl::string_view, 9> kIgnoredParameters = {
    "sequence_id", "sequence_start", "sequence_end",
    "priority", "timeout", "binary_data_output",
    "binary_data", "triton_enable_empty_final_response", "headers"};

// A mapped request: what to execute and what the response needs.
struct MappedInfer {
  const ModelEntry* model = nullptr;
  dmlserve::v1::ExecuteRequest request;
  std::string id;                   // echoed
  std::vector<int64_t> output_shape;
  uint64_t output_bytes = 0;        // elements x element size
  // Where each tensor of the operator came from in the KServe request:
  // its index in `inputs` (-1: absent), for error paths.
  int input_index = -1;
  int scale_index = -1;
  int bias_index = -1;
  bool raw = false;  // data in raw_input_contents (else typed contents)
};

// Maps `in` (payloads are moved out of it) into *out. The error on
// failure: NOT_FOUND (KSERVE_MODEL_UNKNOWN, KSERVE_VERSION_UNKNOWN) or
// INVALID_ARGUMENT, each with its rule and field.
RequestError MapInferRequest(const ModelCatalog& catalog,
                             inference::ModelInferRequest& in, MappedInfer* out);

// The response of a successful execution; the output bytes are moved out
// of `executed`.
inference::ModelInferResponse MapInferResponse(const MappedInfer& mapped,
                                               dmlserve::v1::ExecuteResponse& executed);

// The field path of a dmlserve ExecuteRequest field in the KServe request
// `mapped` came from.
std::string KServePath(const MappedInfer& mapped, absl::string_view execute_path);
// Rewrites every violation's field with KServePath (and the message).
void RewriteFieldPaths(const MappedInfer& mapped, RequestError* error);

}  // namespace dmls::server::kserve

#endif  // DMLSERVE_SERVER_KSERVE_INFER_MAPPING_H_
