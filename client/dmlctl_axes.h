// NumPy-style negative MVN1 axes in dmlctl's JSON files ("axes": [-1] is the
// last axis of whatever rank the input has), so that one descriptor or
// chain fits every rank. The wire's axes are uint32: a negative axis -k is
// carried from the file to the bound request as 2^32 - k (its two's
// complement) and turned into rank - k once the input's sizes are known.
// Stateless functions: thread-safe.
#ifndef DMLSERVE_CLIENT_DMLCTL_AXES_H_
#define DMLSERVE_CLIENT_DMLCTL_AXES_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace dmls::client::ctl {

// `json` with every negative number in an "axes" list of an "mvn1" object
// written as its uint32 two's complement; INVALID_ARGUMENT when `json` is
// not JSON.
absl::StatusOr<std::string> EncodeNegativeAxes(const std::string& json);

// In an MVN1 body whose input has sizes, axes encoded by
// EncodeNegativeAxes (2^31 and above) become rank + axis; one below -rank
// is left as it is (the server answers MVN_AXIS_OUT_OF_RANGE). Other
// operator bodies are left alone.
void ResolveNegativeAxes(google::protobuf::Message* body);

}  // namespace dmls::client::ctl

#endif  // DMLSERVE_CLIENT_DMLCTL_AXES_H_
