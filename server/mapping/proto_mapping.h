// Mapping from the dmlserve.v1 wire messages to the engine's descriptors.
// Driven by the operator schema (engine/ops/schema.h): the oneof member name
// selects the schema row and the row names the parameter fields, so a new
// operator needs a schema row and a proto message, no mapping code. The
// mapping never rejects anything: whatever is absent or out of range is left
// for the validator to report with its rule id. Stateless: thread-safe.
#ifndef DMLSERVE_SERVER_MAPPING_PROTO_MAPPING_H_
#define DMLSERVE_SERVER_MAPPING_PROTO_MAPPING_H_

#include <cstdint>

#include "dmlserve/v1/dmlserve.pb.h"
#include "engine/core/operator_desc.h"
#include "engine/core/types.h"

namespace dmls::server {

TensorDesc TensorFromProto(const dmlserve::v1::TensorDesc& proto);

// An unset oneof maps to type 0 (OP_UNKNOWN at validation).
OperatorDesc OperatorFromProto(const dmlserve::v1::OperatorDesc& proto);

// The raw DML_FEATURE_LEVEL a request asks for: UNSPECIFIED (0) becomes
// `highest`; any other value is passed through for the validator to check.
uint32_t FeatureLevelFromProto(int proto_value, FeatureLevel highest);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_MAPPING_PROTO_MAPPING_H_
