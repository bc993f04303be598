// Helpers shared by dmlctl's commands: argument parsing, operator
// descriptors from JSON and their tensor slots, .npy binding, random data.
// Stateless functions: thread-compatible.
#ifndef DMLSERVE_CLIENT_DMLCTL_COMMON_H_
#define DMLSERVE_CLIENT_DMLCTL_COMMON_H_

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "google/protobuf/message.h"

namespace dmls::client::ctl {

// Exit statuses: the server rejected the request (or the descriptor is
// invalid), and usage or local I/O errors.
inline constexpr int kExitRejected = 1;
inline constexpr int kExitUsage = 2;

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;  // "--in-place" maps to "true"

  bool Has(const std::string& name) const { return flags.count(name) != 0; }
  std::string Get(const std::string& name, std::string fallback = "") const {
    auto it = flags.find(name);
    return it == flags.end() ? fallback : it->second;
  }
};

// Flags take "--name=value" or "--name value"; the boolean ones
// ("--in-place", "--json", "--keep-output", "--progress", "--raw", "--tls",
// "--summary", "--help", "--version") take no value. Which flags a command
// accepts is dmlctl_flags.h's business.
Args ParseArgs(int argc, char** argv);

// "3_1", "0x3100", "12544" or "FEATURE_LEVEL_3_1".
absl::StatusOr<int> ParseFeatureLevel(std::string text);

// Parses the proto3 JSON file `path` into `message`; negative MVN1 axes
// are kept for ResolveNegativeAxes (dmlctl_axes.h).
absl::Status ReadJson(const std::string& path, google::protobuf::Message* message);

absl::StatusOr<dmlserve::v1::OperatorDesc> ReadOperator(const std::string& path);

// "FLOAT16" or "DATA_TYPE_FLOAT16" (any case).
absl::StatusOr<dmlserve::v1::DataType> ParseDataType(const std::string& text);

// The oneof member message that holds the operator's fields, or null.
google::protobuf::Message* OperatorBody(dmlserve::v1::OperatorDesc* op);

// The tensor `name` ("input", "scale", "bias", "output") of the operator;
// null when the operator has no such field, or (unless `create`) when the
// optional field is absent.
dmlserve::v1::TensorDesc* TensorSlot(google::protobuf::Message* body,
                                     const std::string& name, bool create);

// Gives `t` what it lacks from an array of `shape` and `data_type`.
void FillPacked(dmlserve::v1::TensorDesc* t, const std::vector<uint64_t>& shape,
                dmlserve::v1::DataType data_type);

// Logical C-order data for `t`: floats uniform in [-4, 4], integers in a
// small range that fits every integer type.
std::string RandomLogical(const dmlserve::v1::TensorDesc& t, std::mt19937_64& rng);

void PrintViolations(const std::vector<dmlserve::v1::FieldViolation>& vs);

// Loads `path` into the tensor slot `name`, filling what the desc lacks.
absl::Status BindNpy(google::protobuf::Message* body, const std::string& name,
                     const std::string& path, std::string* payload);

// Gives `t` the layout of `source` (another tensor's descriptor: an
// earlier step's output, a resident tensor's) when `t` has no sizes; the
// data type too when `t` has none.
void FillFrom(dmlserve::v1::TensorDesc* t, const dmlserve::v1::TensorDesc& source);

// Gathers the logical elements of `desc` out of `buffer` (its buffer range)
// and writes them to `path` as .npy; `shape_out` (when not null) receives
// the array's shape.
absl::Status WriteTensorNpy(const std::string& path,
                            const dmlserve::v1::TensorDesc& desc,
                            const std::string& buffer,
                            std::vector<uint64_t>* shape_out = nullptr);

// --shape=2,3,4 (and --data-type, default the input's or FLOAT32) as the
// operator's input sizes, the output taking the input's layout. INVALID_ARGUMENT
// when the input already has sizes or the operator has no input.
absl::Status ApplyShape(google::protobuf::Message* body, const std::string& shape,
                        const std::string& data_type);

// "2,3,4" -> {2, 3, 4}; every size at least 1.
absl::StatusOr<std::vector<uint64_t>> ParseShape(const std::string& text);

// A byte count with an optional K/M/G (binary) suffix: "4M", "65536".
absl::StatusOr<uint64_t> ParseBytes(const std::string& text);

// A progress callback that redraws "LABEL done/total MiB" on stderr.
std::function<void(uint64_t, uint64_t)> StderrProgress(std::string label);

}  // namespace dmls::client::ctl

#endif  // DMLSERVE_CLIENT_DMLCTL_COMMON_H_
