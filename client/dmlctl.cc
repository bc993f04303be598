// dmlctl: command-line client of dmlserve.
//
//   dmlctl [--server=HOST:PORT] [--timeout=SECONDS] caps
//   dmlctl [--server=...] validate op.json [--feature-level=3_1] [--in-place]
//   dmlctl [--server=...] run op.json (--input=in.npy [--scale=s.npy
//          --bias=b.npy] | --random=SEED) --output=out.npy [--json]
//          [--feature-level=3_1] [--in-place] [--repeat=N]
//
// op.json is the proto3 JSON form of dmlserve.v1.OperatorDesc, e.g.
// {"celu": {"input": {...}, "output": {...}, "alpha": 1.0}}. With an input
// .npy, tensors that lack sizes, data type or total size get them from the
// array (packed), and the output copies the input's. Exit status: 0 success,
// 1 the server rejected the request (rule id and field printed on stderr) or
// the descriptor is invalid, 2 usage or local I/O error.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/dml_client.h"
#include "client/npy.h"
#include "client/tensor_util.h"
#include "google/protobuf/util/json_util.h"

namespace dmls::client {
namespace {

using dmlserve::v1::OperatorDesc;
using dmlserve::v1::TensorDesc;

constexpr int kExitRejected = 1;
constexpr int kExitUsage = 2;

constexpr char kUsage[] =
    "usage: dmlctl [--server=HOST:PORT] [--timeout=SECONDS] COMMAND\n"
    "  caps\n"
    "  validate OP.json [--feature-level=3_1] [--in-place]\n"
    "  run OP.json (--input=IN.npy [--scale=S.npy --bias=B.npy] | "
    "--random=SEED)\n"
    "      --output=OUT.npy [--json] [--feature-level=3_1] [--in-place]\n"
    "      [--repeat=N]  (N copies on one ExecuteStream, answers compared)\n";

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;  // "--in-place" maps to "true"

  bool Has(const std::string& name) const { return flags.count(name) != 0; }
  std::string Get(const std::string& name, std::string fallback = "") const {
    auto it = flags.find(name);
    return it == flags.end() ? fallback : it->second;
  }
};

// Flags take "--name=value" or "--name value"; these two are booleans.
Args ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (!absl::StartsWith(a, "--")) {
      args.positional.push_back(a);
      continue;
    }
    a = a.substr(2);
    const size_t eq = a.find('=');
    if (eq != std::string::npos) {
      args.flags[a.substr(0, eq)] = a.substr(eq + 1);
    } else if (a == "in-place" || a == "json" || i + 1 >= argc) {
      args.flags[a] = "true";
    } else {
      args.flags[a] = argv[++i];
    }
  }
  return args;
}

// "3_1", "0x3100", "12544" or "FEATURE_LEVEL_3_1".
absl::StatusOr<int> ParseFeatureLevel(std::string text) {
  if (text.empty()) return 0;
  if (absl::StartsWith(text, "FEATURE_LEVEL_")) text = text.substr(14);
  const size_t us = text.find('_');
  if (us != std::string::npos) {
    int major = 0, minor = 0;
    if (absl::SimpleAtoi(text.substr(0, us), &major) &&
        absl::SimpleAtoi(text.substr(us + 1), &minor) && major >= 0 &&
        major < 16 && minor >= 0 && minor < 16) {
      return (major << 12) | (minor << 8);
    }
  } else {
    int value = 0;
    if (absl::StartsWith(text, "0x") &&
        absl::SimpleHexAtoi(text.substr(2), &value)) {
      return value;
    }
    if (absl::SimpleAtoi(text, &value)) return value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("bad --feature-level '", text, "' (want e.g. 3_1)"));
}

absl::StatusOr<OperatorDesc> ReadOperator(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  OperatorDesc op;
  const auto status = google::protobuf::util::JsonStringToMessage(ss.str(), &op);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a dmlserve.v1.OperatorDesc: ",
                     status.message().as_string()));
  }
  return op;
}

// The oneof member message that holds the operator's fields, or null.
google::protobuf::Message* OperatorBody(OperatorDesc* op) {
  const auto* oneof = op->GetDescriptor()->FindOneofByName("operator");
  const auto* reflection = op->GetReflection();
  const auto* field = reflection->GetOneofFieldDescriptor(*op, oneof);
  if (field == nullptr) return nullptr;
  return reflection->MutableMessage(op, field);
}

// The tensor `name` ("input", "scale", "bias", "output") of the operator;
// null when the operator has no such field, or (unless `create`) when the
// optional field is absent.
TensorDesc* TensorSlot(google::protobuf::Message* body, const std::string& name,
                       bool create) {
  const auto* field = body->GetDescriptor()->FindFieldByName(name);
  if (field == nullptr ||
      field->message_type() != TensorDesc::descriptor()) {
    return nullptr;
  }
  const auto* reflection = body->GetReflection();
  if (!create && field->has_presence() && !reflection->HasField(*body, field)) {
    return nullptr;
  }
  return static_cast<TensorDesc*>(reflection->MutableMessage(body, field));
}

// Gives `t` what it lacks from an array of `shape` and `data_type`.
void FillPacked(TensorDesc* t, const std::vector<uint64_t>& shape,
                dmlserve::v1::DataType data_type) {
  if (t->sizes_size() == 0) {
    for (uint64_t s : shape) t->add_sizes(s);
    if (shape.empty()) t->add_sizes(1);
  }
  if (t->data_type() == dmlserve::v1::DATA_TYPE_UNKNOWN) t->set_data_type(data_type);
  if (t->total_tensor_size_in_bytes() == 0) {
    t->set_total_tensor_size_in_bytes(MinimumTensorBytes(
        t->data_type(), {t->sizes().begin(), t->sizes().end()},
        {t->strides().begin(), t->strides().end()}));
  }
}

// binary32 -> binary16, round to nearest even (for --random FLOAT16 data).
uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0);
  if (a >= 0x477ff000u) return sign | 0x7c00;  // >= 65520 rounds to inf
  if (a < 0x38800000u) {                        // below 2^-14: subnormal
    float v;
    std::memcpy(&v, &a, 4);
    return sign | static_cast<uint16_t>(std::nearbyint(v * 16777216.0f));
  }
  uint32_t v = a - 0x38000000u;  // rebias the exponent from 127 to 15
  v += 0x0fffu + ((v >> 13) & 1u);
  return sign | static_cast<uint16_t>(v >> 13);
}

// Logical C-order data for `t`: floats uniform in [-4, 4], integers in a
// small range that fits every integer type.
std::string RandomLogical(const TensorDesc& t, std::mt19937_64& rng) {
  uint64_t count = 1;
  for (uint64_t s : t.sizes()) count *= s;
  const uint32_t size = DataTypeSize(t.data_type());
  std::string out(count * size, '\0');
  std::uniform_real_distribution<float> real(-4.0f, 4.0f);
  std::uniform_int_distribution<int> sint(-100, 100);
  std::uniform_int_distribution<int> uint(0, 200);
  for (uint64_t i = 0; i < count; ++i) {
    char* p = &out[i * size];
    switch (t.data_type()) {
      case dmlserve::v1::DATA_TYPE_FLOAT32: {
        const float v = real(rng);
        std::memcpy(p, &v, 4);
        break;
      }
      case dmlserve::v1::DATA_TYPE_FLOAT16: {
        const uint16_t v = FloatToHalf(real(rng));
        std::memcpy(p, &v, 2);
        break;
      }
      case dmlserve::v1::DATA_TYPE_UINT8:
      case dmlserve::v1::DATA_TYPE_UINT16:
      case dmlserve::v1::DATA_TYPE_UINT32:
      case dmlserve::v1::DATA_TYPE_UINT64: {
        const uint64_t v = static_cast<uint64_t>(uint(rng));
        std::memcpy(p, &v, size);  // little-endian: the low bytes
        break;
      }
      default: {
        const int64_t v = sint(rng);
        std::memcpy(p, &v, size);
        break;
      }
    }
  }
  return out;
}

void PrintViolations(const std::vector<dmlserve::v1::FieldViolation>& vs) {
  for (const auto& v : vs) {
    std::cerr << "  " << v.rule() << " at " << v.field() << ": "
              << v.description() << "\n";
  }
}

int Caps(DmlClient& client) {
  absl::StatusOr<dmlserve::v1::GetCapabilitiesResponse> caps =
      client.GetCapabilities();
  if (!caps.ok()) {
    std::cerr << "error: " << caps.status() << "\n";
    return kExitRejected;
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  (void)google::protobuf::util::MessageToJsonString(*caps, &json, options);
  std::cout << json;
  return 0;
}

// The descriptor file (positional[1]) and --feature-level shared by validate
// and run; prints the error and returns false when either is unusable.
bool ReadOperatorAndLevel(const Args& args, OperatorDesc* op, int* fl) {
  absl::StatusOr<OperatorDesc> read = ReadOperator(args.positional[1]);
  absl::StatusOr<int> level = ParseFeatureLevel(args.Get("feature-level"));
  if (!read.ok() || !level.ok()) {
    std::cerr << "error: " << (read.ok() ? level.status() : read.status())
              << "\n";
    return false;
  }
  *op = *std::move(read);
  *fl = *level;
  return true;
}

int ValidateCommand(DmlClient& client, const Args& args) {
  if (args.positional.size() != 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  OperatorDesc op;
  int fl = 0;
  if (!ReadOperatorAndLevel(args, &op, &fl)) return kExitUsage;
  dmlserve::v1::ValidateRequest request;
  *request.mutable_operator_() = op;
  request.set_feature_level(static_cast<dmlserve::v1::FeatureLevel>(fl));
  request.set_in_place(args.Has("in-place"));
  absl::StatusOr<dmlserve::v1::ValidateResponse> response =
      client.Validate(request);
  if (!response.ok()) {
    std::cerr << "error: " << response.status() << "\n";
    return kExitRejected;
  }
  const std::string level =
      absl::StrCat("0x", absl::Hex(response->feature_level()));
  if (response->valid()) {
    std::cout << "valid at feature level " << level << "\n";
    return 0;
  }
  std::cout << "invalid at feature level " << level << "\n";
  for (const auto& v : response->violations()) {
    std::cout << v.rule() << " " << v.field() << ": " << v.description() << "\n";
  }
  return kExitRejected;
}

// Sends `n` copies of `request` (request ids 1..n) on one ExecuteStream and
// checks that every id is answered once, successfully, with the same bytes.
// Returns the response to id 1.
absl::StatusOr<dmlserve::v1::ExecuteResponse> ExecuteRepeated(
    DmlClient& client, dmlserve::v1::ExecuteRequest request, uint64_t n,
    CallError* error) {
  std::vector<dmlserve::v1::ExecuteRequest> requests;
  requests.reserve(n);
  for (uint64_t id = 1; id <= n; ++id) {
    request.set_request_id(id);
    requests.push_back(request);
  }
  absl::StatusOr<std::vector<dmlserve::v1::ExecuteResponse>> responses =
      client.ExecuteStream(requests);
  if (!responses.ok()) return responses.status();
  std::vector<const dmlserve::v1::ExecuteResponse*> by_id(n + 1, nullptr);
  for (const auto& r : *responses) {
    if (r.request_id() < 1 || r.request_id() > n || by_id[r.request_id()]) {
      return absl::InternalError(
          absl::StrCat("unexpected or repeated response id ", r.request_id()));
    }
    by_id[r.request_id()] = &r;
    if (r.status_code() != 0) {
      error->status = absl::Status(static_cast<absl::StatusCode>(r.status_code()),
                                   r.status_message());
      error->violations.assign(r.violations().begin(), r.violations().end());
      return error->status;
    }
  }
  for (uint64_t id = 1; id <= n; ++id) {
    if (by_id[id] == nullptr) {
      return absl::InternalError(absl::StrCat("no response to request ", id));
    }
    if (by_id[id]->output() != by_id[1]->output()) {
      return absl::InternalError(
          absl::StrCat("response ", id, " differs from response 1"));
    }
  }
  return *by_id[1];
}

// Loads `path` into the tensor slot `name`, filling what the desc lacks.
absl::Status BindNpy(google::protobuf::Message* body, const std::string& name,
                     const std::string& path, std::string* payload) {
  absl::StatusOr<NpyArray> array = ReadNpyFile(path);
  if (!array.ok()) return array.status();
  TensorDesc* t = TensorSlot(body, name, /*create=*/true);
  if (t == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("the operator has no ", name, " tensor"));
  }
  FillPacked(t, array->shape, DataTypeForNpyDescr(array->descr));
  if (DataTypeForNpyDescr(array->descr) != t->data_type()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": dtype ", array->descr, " does not match ", name,
                     ".data_type ", dmlserve::v1::DataType_Name(t->data_type())));
  }
  absl::StatusOr<std::string> packed = PackLogical(*t, array->data);
  if (!packed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " -> ", name, ": ", packed.status().message()));
  }
  *payload = *std::move(packed);
  return absl::OkStatus();
}

int RunCommand(DmlClient& client, const Args& args) {
  if (args.positional.size() != 2 || !args.Has("output") ||
      args.Has("input") == args.Has("random")) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  OperatorDesc op;
  int fl = 0;
  if (!ReadOperatorAndLevel(args, &op, &fl)) return kExitUsage;
  dmlserve::v1::ExecuteRequest request;
  request.set_request_id(1);
  request.set_feature_level(static_cast<dmlserve::v1::FeatureLevel>(fl));
  request.set_in_place(args.Has("in-place"));
  google::protobuf::Message* body = OperatorBody(&op);
  if (body == nullptr) {
    std::cerr << "error: the descriptor names no operator\n";
    return kExitUsage;
  }
  absl::Status bound = absl::OkStatus();
  if (args.Has("input")) {
    bound = BindNpy(body, "input", args.Get("input"), request.mutable_input());
    if (bound.ok() && args.Has("scale")) {
      bound = BindNpy(body, "scale", args.Get("scale"), request.mutable_scale());
    }
    if (bound.ok() && args.Has("bias")) {
      bound = BindNpy(body, "bias", args.Get("bias"), request.mutable_bias());
    }
    TensorDesc* in = TensorSlot(body, "input", false);
    TensorDesc* out = TensorSlot(body, "output", true);
    if (bound.ok() && in != nullptr && out != nullptr) {
      FillPacked(out, {in->sizes().begin(), in->sizes().end()}, in->data_type());
    }
  } else {
    uint64_t seed = 0;
    if (!absl::SimpleAtoi(args.Get("random"), &seed)) {
      std::cerr << "error: --random wants an integer seed\n";
      return kExitUsage;
    }
    std::mt19937_64 rng(seed);
    const std::pair<const char*, std::string*> slots[] = {
        {"input", request.mutable_input()},
        {"scale", request.mutable_scale()},
        {"bias", request.mutable_bias()}};
    for (const auto& [name, payload] : slots) {
      TensorDesc* t = TensorSlot(body, name, false);
      if (t == nullptr || !bound.ok()) continue;
      absl::StatusOr<std::string> packed = PackLogical(*t, RandomLogical(*t, rng));
      if (!packed.ok()) {
        bound = absl::InvalidArgumentError(
            absl::StrCat(name, ": ", packed.status().message()));
      } else {
        *payload = *std::move(packed);
      }
    }
  }
  if (!bound.ok()) {
    std::cerr << "error: " << bound << "\n";
    return kExitUsage;
  }
  *request.mutable_operator_() = std::move(op);

  uint64_t repeat = 1;
  if (args.Has("repeat") &&
      (!absl::SimpleAtoi(args.Get("repeat"), &repeat) || repeat < 1 ||
       repeat > 100000)) {
    std::cerr << "error: --repeat wants a count in [1, 100000]\n";
    return kExitUsage;
  }
  CallError error;
  absl::StatusOr<dmlserve::v1::ExecuteResponse> response =
      repeat == 1 ? client.Execute(request, &error)
                  : ExecuteRepeated(client, request, repeat, &error);
  if (!response.ok()) {
    std::cerr << "error: " << response.status() << "\n";
    PrintViolations(error.violations);
    return kExitRejected;
  }
  const TensorDesc* out = TensorSlot(body, "output", false);
  absl::StatusOr<std::string> logical =
      out == nullptr ? absl::InvalidArgumentError("no output tensor")
                     : GatherLogical(*out, response->output());
  if (!logical.ok()) {
    std::cerr << "error: response output: " << logical.status() << "\n";
    return kExitRejected;
  }
  NpyArray result;
  result.descr = NpyDescrFor(out->data_type());
  result.shape.assign(out->sizes().begin(), out->sizes().end());
  result.data = *std::move(logical);
  const std::string path = args.Get("output");
  if (absl::Status w = WriteNpyFile(path, result); !w.ok()) {
    std::cerr << "error: " << w << "\n";
    return kExitUsage;
  }
  if (args.Has("json")) {
    std::cout << "{\"request_id\": " << response->request_id()
              << ", \"engine\": \"" << response->engine()
              << "\", \"server_time_us\": " << response->server_time_us()
              << ", \"output\": \"" << path << "\", \"data_type\": \""
              << dmlserve::v1::DataType_Name(out->data_type())
              << "\", \"shape\": [" << absl::StrJoin(result.shape, ", ")
              << "], \"output_bytes\": " << response->output().size()
              << ", \"repeat\": " << repeat << "}\n";
  } else {
    std::cout << "wrote " << path << " (" << result.descr << ", shape ["
              << absl::StrJoin(result.shape, ", ") << "]) engine "
              << response->engine() << " in " << response->server_time_us()
              << " us\n";
  }
  return 0;
}

int Main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  if (args.positional.empty() || args.Has("help")) {
    std::cerr << kUsage;
    return args.Has("help") ? 0 : kExitUsage;
  }
  DmlClientOptions options;
  options.target = args.Get("server", options.target);
  if (args.Has("timeout")) {
    double seconds = 0;
    if (!absl::SimpleAtod(args.Get("timeout"), &seconds) || seconds <= 0) {
      std::cerr << "error: --timeout wants a positive number of seconds\n";
      return kExitUsage;
    }
    options.timeout = absl::Seconds(seconds);
  }
  DmlClient client(options);
  const std::string& command = args.positional[0];
  if (command == "caps") return Caps(client);
  if (command == "validate") return ValidateCommand(client, args);
  if (command == "run") return RunCommand(client, args);
  std::cerr << "unknown command '" << command << "'\n" << kUsage;
  return kExitUsage;
}

}  // namespace
}  // namespace dmls::client

int main(int argc, char** argv) { return dmls::client::Main(argc, argv); }
