// dmlctl: command-line client of dmlserve.
//
//   dmlctl [--server=HOST:PORT] [--timeout=SECONDS] [--tenant=NAME]
//          [--tls] [--tls-ca=CA.pem] [--tls-cert=C.pem --tls-key=K.pem]
//          [--tls-server-name=NAME] [--token=T | --token-file=F] COMMAND
//   caps [--summary]            GetCapabilities as JSON, or one screen
//   health [--service=NAME]     grpc.health.v1 Check; exit 0 when SERVING
//   validate op.json [--feature-level=3_1] [--in-place]
//       [--shape=2,3,4 [--data-type=FLOAT32]]
//     An input without sizes and no --shape: checked at every rank 1..8
//     (sizes of 1); exit 0 when some rank is valid.
//   run op.json INPUTS OUTPUT [--json] [--feature-level=3_1] [--in-place]
//       [--repeat=N]
//     INPUTS: --input=in.npy [--scale=s.npy --bias=b.npy], or
//             --input-handle=H [--scale-handle=H --bias-handle=H], or
//             --random=SEED [--shape=2,3,4 --data-type=FLOAT32]
//     OUTPUT: --output=out.npy, --output-handle=H, or --keep-output
//             [--ttl=S] (prints the new handle); none with --in-place on
//             --input-handle (the input's tensor is updated)
//   run chain.json ...           (a ChainRequest: see dmlctl_resident.h)
//   --version                    this dmlctl's version
//   upload / download / ls / rm  (resident tensors: dmlctl_resident.h)
//
// op.json is the proto3 JSON form of dmlserve.v1.OperatorDesc, e.g.
// {"celu": {"input": {...}, "output": {...}, "alpha": 1.0}}. Tensors that
// lack sizes, data type or total size get them from the input array
// (packed), the resident tensor or --shape, and the output copies the
// input's. The tenant (also DMLS_TENANT) owns resident tensors; commands
// that use them need one. --token (also DMLS_TOKEN) is sent as
// `authorization: Bearer TOKEN`; any --tls* flag turns TLS on. A flag the
// command does not take is a usage error (dmlctl_flags.h). Exit status: 0
// success, 1 the server rejected the request (rule id and field printed on
// stderr) or the descriptor is invalid, 2 usage or local I/O error.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
#include "client/dmlctl_axes.h"
#include "client/dmlctl_caps.h"
#include "client/dmlctl_common.h"
#include "client/dmlctl_flags.h"
#include "client/dmlctl_resident.h"
#include "client/npy.h"
#include "client/tensor_util.h"
#include "google/protobuf/util/json_util.h"

namespace dmls::client {
namespace {

using ctl::ApplyShape;
using ctl::Args;
using ctl::BindNpy;
using ctl::CapsSummary;
using ctl::ChainCommand;
using ctl::CheckFlags;
using ctl::DownloadCommand;
using ctl::FillFrom;
using ctl::FillPacked;
using ctl::kExitRejected;
using ctl::kExitUsage;
using ctl::ListCommand;
using ctl::OperatorBody;
using ctl::ParseArgs;
using ctl::ParseDataType;
using ctl::ParseFeatureLevel;
using ctl::ParseShape;
using ctl::PrintViolations;
using ctl::RandomLogical;
using ctl::ResolveNegativeAxes;
using ctl::ReadJson;
using ctl::ReadOperator;
using ctl::ReleaseCommand;
using ctl::TensorSlot;
using ctl::UploadCommand;

using dmlserve::v1::OperatorDesc;
using dmlserve::v1::TensorDesc;

constexpr char kUsage[] =
    "usage: dmlctl [--server=HOST:PORT] [--timeout=SECONDS] [--tenant=NAME] "
    "[TLS] [--token=T | --token-file=F] COMMAND\n"
    "  TLS: --tls (system roots) | --tls-ca=CA.pem, with --tls-cert=C.pem "
    "--tls-key=K.pem\n"
    "       for mutual TLS, --tls-server-name=NAME to override the checked "
    "name\n"
    "  caps [--summary]\n"
    "  health [--service=NAME]  (grpc.health.v1; exit 0 when SERVING)\n"
    "  validate OP.json [--feature-level=3_1] [--in-place] "
    "[--shape=2,3,4 [--data-type=FLOAT32]]\n"
    "      (no sizes and no --shape: every rank 1..8 is checked)\n"
    "  run OP.json INPUT OUTPUT [--json] [--feature-level=3_1] [--in-place]\n"
    "      [--repeat=N]  (N copies on one ExecuteStream, answers compared)\n"
    "    INPUT:  --input=IN.npy [--scale=S.npy --bias=B.npy]\n"
    "          | --input-handle=H [--scale-handle=H --bias-handle=H]\n"
    "          | --random=SEED [--shape=2,3,4 --data-type=FLOAT32]\n"
    "    OUTPUT: --output=OUT.npy | --output-handle=H | --keep-output "
    "[--ttl=S]\n"
    "  run CHAIN.json [--input=IN.npy | --input-handle=H] "
    "[--output=OUT.npy | --output-dir=DIR] [--json]\n"
    "  upload IN.npy [--ttl=S] [--chunk-bytes=4M] [--progress] [--json]\n"
    "  download HANDLE --output=OUT.npy [--chunk-bytes=N] [--progress]\n"
    "  download HANDLE --output=OUT.bin --raw [--offset=N] [--length=N]\n"
    "  ls [--json]\n"
    "  rm HANDLE...\n"
    "  --version\n"
    "Resident tensors (handles, chains, upload...rm) need --tenant or "
    "DMLS_TENANT.\n";

int Caps(DmlClient& client, const Args& args) {
  absl::StatusOr<dmlserve::v1::GetCapabilitiesResponse> caps =
      client.GetCapabilities();
  if (!caps.ok()) {
    std::cerr << "error: " << caps.status() << "\n";
    return kExitRejected;
  }
  if (args.Has("summary")) {
    std::cout << CapsSummary(*caps);
    return 0;
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  (void)google::protobuf::util::MessageToJsonString(*caps, &json, options);
  std::cout << json;
  return 0;
}

int Health(DmlClient& client, const Args& args) {
  absl::StatusOr<bool> serving = client.CheckHealth(args.Get("service"));
  if (!serving.ok()) {
    std::cerr << "error: " << serving.status() << "\n";
    return kExitRejected;
  }
  std::cout << (*serving ? "SERVING" : "NOT_SERVING") << "\n";
  return *serving ? 0 : kExitRejected;
}

// The descriptor file (positional[1]), --feature-level and --in-place into
// `request` (a ValidateRequest or an ExecuteRequest), as validate and run
// share them; prints the error and returns false when the file or the level
// is unusable.
template <typename Request>
bool ReadOperatorRequest(const Args& args, Request* request) {
  absl::StatusOr<OperatorDesc> read = ReadOperator(args.positional[1]);
  absl::StatusOr<int> level = ParseFeatureLevel(args.Get("feature-level"));
  if (!read.ok() || !level.ok()) {
    std::cerr << "error: " << (read.ok() ? level.status() : read.status())
              << "\n";
    return false;
  }
  *request->mutable_operator_() = *std::move(read);
  request->set_feature_level(static_cast<dmlserve::v1::FeatureLevel>(*level));
  request->set_in_place(args.Has("in-place"));
  return true;
}

// Prints one Validate answer; true when valid.
bool PrintValidation(const dmlserve::v1::ValidateResponse& response,
                     const std::string& prefix) {
  const std::string level =
      absl::StrCat("0x", absl::Hex(response.feature_level()));
  std::cout << prefix << (response.valid() ? "valid" : "invalid")
            << " at feature level " << level << "\n";
  for (const auto& v : response.violations()) {
    std::cout << prefix << v.rule() << " " << v.field() << ": "
              << v.description() << "\n";
  }
  return response.valid();
}

int ValidateCommand(DmlClient& client, const Args& args) {
  if (args.positional.size() != 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  dmlserve::v1::ValidateRequest request;
  if (!ReadOperatorRequest(args, &request)) return kExitUsage;
  google::protobuf::Message* body = OperatorBody(request.mutable_operator_());
  const dmlserve::v1::TensorDesc* in =
      body == nullptr ? nullptr : TensorSlot(body, "input", false);
  // Every rank 1..8 when neither the descriptor nor --shape gives sizes.
  std::vector<std::string> shapes = {args.Get("shape")};
  if (!args.Has("shape") && (in == nullptr || in->sizes_size() == 0) &&
      body != nullptr) {
    shapes.clear();
    for (int rank = 1; rank <= 8; ++rank) {
      shapes.push_back(absl::StrJoin(std::vector<int>(rank, 1), ","));
    }
  }
  std::vector<int> valid_ranks;
  for (const std::string& shape : shapes) {
    dmlserve::v1::ValidateRequest shaped = request;
    google::protobuf::Message* shaped_body =
        OperatorBody(shaped.mutable_operator_());
    if (!shape.empty()) {
      absl::Status s = ApplyShape(shaped_body, shape, args.Get("data-type"));
      if (!s.ok()) {
        std::cerr << "error: " << s << "\n";
        return kExitUsage;
      }
    }
    if (shaped_body != nullptr) ResolveNegativeAxes(shaped_body);
    absl::StatusOr<dmlserve::v1::ValidateResponse> response =
        client.Validate(shaped);
    if (!response.ok()) {
      std::cerr << "error: " << response.status() << "\n";
      return kExitRejected;
    }
    const int rank = static_cast<int>(
        std::count(shape.begin(), shape.end(), ',') + 1);
    const std::string prefix =
        shapes.size() > 1 ? absl::StrCat("rank ", rank, ": ") : "";
    if (PrintValidation(*response, prefix)) valid_ranks.push_back(rank);
  }
  if (shapes.size() > 1) {
    std::cout << (valid_ranks.empty()
                      ? std::string("valid at no rank")
                      : absl::StrCat("valid at ranks ",
                                     absl::StrJoin(valid_ranks, ",")))
              << " (no sizes and no --shape: each rank checked with sizes of "
                 "1)\n";
  }
  return valid_ranks.empty() ? kExitRejected : 0;
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

// The payload of each tensor slot from --SLOT=FILE.npy, --SLOT-handle=H or
// --random (with --shape / --data-type for an input without sizes), filling
// what the descriptor lacks; then the output's layout from the input's.
absl::Status BindTensors(TensorClient& tensors, const Args& args,
                         google::protobuf::Message* body,
                         dmlserve::v1::ExecuteRequest* request) {
  std::mt19937_64 rng;
  if (args.Has("random")) {
    uint64_t seed = 0;
    if (!absl::SimpleAtoi(args.Get("random"), &seed)) {
      return absl::InvalidArgumentError("--random wants an integer seed");
    }
    rng.seed(seed);
  }
  struct Slot {
    const char* name;
    std::string* payload;
    std::string* handle;
  };
  const Slot slots[] = {
      {"input", request->mutable_input(), request->mutable_input_handle()},
      {"scale", request->mutable_scale(), request->mutable_scale_handle()},
      {"bias", request->mutable_bias(), request->mutable_bias_handle()}};
  for (const Slot& slot : slots) {
    const std::string file_flag = slot.name;
    const std::string handle_flag = file_flag + "-handle";
    if (args.Has(file_flag) && args.Has(handle_flag)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "give --", file_flag, " or --", handle_flag, ", not both"));
    }
    if (args.Has(file_flag)) {
      absl::Status s = BindNpy(body, slot.name, args.Get(file_flag), slot.payload);
      if (!s.ok()) return s;
    } else if (args.Has(handle_flag)) {
      TensorDesc* t = TensorSlot(body, slot.name, /*create=*/true);
      if (t == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("the operator has no ", slot.name, " tensor"));
      }
      absl::StatusOr<dmlserve::v1::ResidentTensorInfo> info =
          tensors.Find(args.Get(handle_flag));
      if (!info.ok()) return info.status();
      FillFrom(t, info->desc());
      *slot.handle = args.Get(handle_flag);
    } else if (args.Has("random")) {
      TensorDesc* t = TensorSlot(body, slot.name, /*create=*/false);
      if (t == nullptr) continue;
      if (t->sizes_size() == 0 && file_flag == "input" && args.Has("shape")) {
        absl::Status shaped =
            ApplyShape(body, args.Get("shape"), args.Get("data-type"));
        if (!shaped.ok()) return shaped;
      }
      if (t->sizes_size() == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--random: the descriptor's ", slot.name, " has no sizes",
            file_flag == "input" ? " (give --shape=2,3,4)" : ""));
      }
      // Sizes given, the rest (data type, total size) may not be.
      FillPacked(t, {t->sizes().begin(), t->sizes().end()},
                 t->data_type() == dmlserve::v1::DATA_TYPE_UNKNOWN
                     ? dmlserve::v1::DATA_TYPE_FLOAT32
                     : t->data_type());
      absl::StatusOr<std::string> packed = PackLogical(*t, RandomLogical(*t, rng));
      if (!packed.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(slot.name, ": ", packed.status().message()));
      }
      *slot.payload = *std::move(packed);
    }
  }
  TensorDesc* in = TensorSlot(body, "input", false);
  TensorDesc* out = TensorSlot(body, "output", true);
  if (in != nullptr && out != nullptr) FillFrom(out, *in);
  return absl::OkStatus();
}

int RunCommand(DmlClient& client, TensorClient& tensors, const Args& args) {
  const int input_sources =
      args.Has("input") + args.Has("input-handle") + args.Has("random");
  const int output_sinks = args.Has("output") + args.Has("output-handle") +
                           args.Has("keep-output");
  const bool into_input_tensor = args.Has("in-place") && args.Has("input-handle");
  if (args.positional.size() != 2 || input_sources != 1 ||
      output_sinks + into_input_tensor != 1) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  if ((args.Has("shape") || args.Has("data-type")) && !args.Has("random")) {
    std::cerr << "error: --shape and --data-type describe --random data (an "
                 ".npy file or a resident tensor has its own)\n";
    return kExitUsage;
  }
  dmlserve::v1::ExecuteRequest request;
  if (!ReadOperatorRequest(args, &request)) return kExitUsage;
  request.set_request_id(1);
  request.set_output_handle(args.Get("output-handle"));
  request.set_keep_output(args.Has("keep-output"));
  uint64_t keep_ttl = 0;
  if (args.Has("ttl") && !absl::SimpleAtoi(args.Get("ttl"), &keep_ttl)) {
    std::cerr << "error: --ttl wants a number of seconds\n";
    return kExitUsage;
  }
  request.set_keep_output_ttl_seconds(keep_ttl);
  google::protobuf::Message* body = OperatorBody(request.mutable_operator_());
  if (body == nullptr) {
    std::cerr << "error: the descriptor names no operator\n";
    return kExitUsage;
  }
  if (absl::Status bound = BindTensors(tensors, args, body, &request);
      !bound.ok()) {
    std::cerr << "error: " << bound << "\n";
    return bound.code() == absl::StatusCode::kNotFound ? kExitRejected
                                                       : kExitUsage;
  }
  ResolveNegativeAxes(body);

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
  if (!response->output_handle().empty()) {  // the output stayed resident
    if (args.Has("json")) {
      std::cout << "{\"request_id\": " << response->request_id()
                << ", \"engine\": \"" << response->engine()
                << "\", \"server_time_us\": " << response->server_time_us()
                << ", \"output_handle\": \"" << response->output_handle()
                << "\", \"repeat\": " << repeat << "}\n";
    } else {
      std::cout << response->output_handle() << "\n";
    }
    return 0;
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

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

int NeedsTenant() {
  std::cerr << "error: resident tensors need an owner: --tenant=NAME (or "
               "DMLS_TENANT), a --token or a client certificate; without one "
               "the server keys them by connection, and each dmlctl process "
               "would see none of the last one's\n";
  return kExitUsage;
}

int Main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  if (args.Has("version")) {
    std::cout << "dmlctl " << DMLSERVE_VERSION << "\n";
    return 0;
  }
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
  options.tenant = args.Get("tenant", GetEnv("DMLS_TENANT"));
  options.tls = args.Has("tls");
  options.tls_ca_file = args.Get("tls-ca");
  options.tls_cert_file = args.Get("tls-cert");
  options.tls_key_file = args.Get("tls-key");
  options.tls_server_name = args.Get("tls-server-name");
  options.token = args.Get("token", GetEnv("DMLS_TOKEN"));
  if (args.Has("token-file")) {
    std::ifstream in(args.Get("token-file"));
    std::string token;
    if (!in || !std::getline(in, token) || token.empty()) {
      std::cerr << "error: --token-file: cannot read a token from "
                << args.Get("token-file") << "\n";
      return kExitUsage;
    }
    options.token = token;
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    std::cerr << "error: --tls-cert and --tls-key go together\n";
    return kExitUsage;
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(options);
  if (!channel.ok()) {
    std::cerr << "error: " << channel.status() << "\n";
    return kExitUsage;
  }
  DmlClient client(options, *channel);
  TensorClient tensors(options, *channel);
  const std::string& command = args.positional[0];
  // A chain file is a ChainRequest ("steps"); anything else an operator.
  dmlserve::v1::ChainRequest chain;
  const bool is_chain = command == "run" && args.positional.size() == 2 &&
                        ReadJson(args.positional[1], &chain).ok() &&
                        chain.steps_size() > 0;
  if (absl::Status flags = CheckFlags(args, is_chain ? "run-chain" : command);
      !flags.ok()) {
    std::cerr << "error: " << flags.message() << "\n";
    return kExitUsage;
  }
  // Who owns resident tensors: a token's or client certificate's identity,
  // else the tenant.
  const bool has_identity = !options.tenant.empty() || !options.token.empty() ||
                            !options.tls_cert_file.empty();
  const bool resident_command = command == "upload" || command == "download" ||
                                command == "ls" || command == "rm";
  if (command == "caps") return Caps(client, args);
  if (command == "health") return Health(client, args);
  if (command == "validate") return ValidateCommand(client, args);
  if (command == "run" && args.positional.size() == 2) {
    const bool uses_handles = is_chain || args.Has("input-handle") ||
                              args.Has("scale-handle") ||
                              args.Has("bias-handle") ||
                              args.Has("output-handle") ||
                              args.Has("keep-output");
    if (uses_handles && !has_identity) return NeedsTenant();
    if (is_chain) {
      absl::StatusOr<int> level = ParseFeatureLevel(args.Get("feature-level"));
      if (!level.ok()) {
        std::cerr << "error: " << level.status() << "\n";
        return kExitUsage;
      }
      if (*level != 0) {
        chain.set_feature_level(static_cast<dmlserve::v1::FeatureLevel>(*level));
      }
      return ChainCommand(client, tensors, std::move(chain), args);
    }
  }
  if (command == "run") return RunCommand(client, tensors, args);
  if (resident_command && !has_identity) return NeedsTenant();
  if (command == "upload") return UploadCommand(tensors, args);
  if (command == "download") return DownloadCommand(tensors, args);
  if (command == "ls") return ListCommand(tensors, args);
  if (command == "rm") return ReleaseCommand(tensors, args);
  std::cerr << "unknown command '" << command << "'\n" << kUsage;
  return kExitUsage;
}

}  // namespace
}  // namespace dmls::client

int main(int argc, char** argv) { return dmls::client::Main(argc, argv); }
