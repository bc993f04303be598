// Operator attributes from a ModelInferRequest's `parameters` map
// (infer_mapping.h says which names and value types are accepted), set on
// the operator message of a dmlserve ExecuteRequest through protobuf
// reflection, so that every field of every operator message is reachable
// without a table of its own. Errors: INVALID_ARGUMENT with rules
// KSERVE_PARAMETER_UNKNOWN, KSERVE_PARAMETER_TYPE, KSERVE_PARAMETER_RANGE
// and the field `parameters["NAME"]`. Values the validator judges (a
// negative epsilon, an axis beyond the rank) are passed on for it.
// Stateless: thread-safe.
#ifndef DMLSERVE_SERVER_KSERVE_INFER_PARAMETERS_H_
#define DMLSERVE_SERVER_KSERVE_INFER_PARAMETERS_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "dmlserve/v1/dmlserve.pb.h"
#include "google/protobuf/map.h"
#include "inference/grpc_predict_v2.pb.h"
#include "server/mapping/status_mapping.h"

namespace dmls::server::kserve {

// `parameters["NAME"]`: the field path of a request parameter.
std::string ParameterPath(absl::string_view name);

// Applies every parameter to `request`, whose operator oneof member must
// already be set; `rank` is the input's dimension count (for negative
// axes). Stops at the first error.
RequestError ApplyParameters(
    const google::protobuf::Map<std::string, inference::InferParameter>& parameters,
    uint32_t rank, dmlserve::v1::ExecuteRequest* request);

}  // namespace dmls::server::kserve

#endif  // DMLSERVE_SERVER_KSERVE_INFER_PARAMETERS_H_
