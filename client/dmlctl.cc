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
#include "client/dmlctl_common.h"
#include "client/npy.h"
#include "client/tensor_util.h"
#include "google/protobuf/util/json_util.h"

namespace dmls::client {
namespace {

using ctl::Args;
using ctl::BindNpy;
using ctl::FillPacked;
using ctl::kExitRejected;
using ctl::kExitUsage;
using ctl::OperatorBody;
using ctl::ParseArgs;
using ctl::ParseFeatureLevel;
using ctl::PrintViolations;
using ctl::RandomLogical;
using ctl::ReadOperator;
using ctl::TensorSlot;

using dmlserve::v1::OperatorDesc;
using dmlserve::v1::TensorDesc;

constexpr char kUsage[] =
    "usage: dmlctl [--server=HOST:PORT] [--timeout=SECONDS] COMMAND\n"
    "  caps\n"
    "  validate OP.json [--feature-level=3_1] [--in-place]\n"
    "  run OP.json (--input=IN.npy [--scale=S.npy --bias=B.npy] | "
    "--random=SEED)\n"
    "      --output=OUT.npy [--json] [--feature-level=3_1] [--in-place]\n"
    "      [--repeat=N]  (N copies on one ExecuteStream, answers compared)\n";

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
