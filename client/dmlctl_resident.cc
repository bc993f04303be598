#include "client/dmlctl_resident.h"

#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/dmlctl_axes.h"
#include "client/npy.h"
#include "client/tensor_util.h"
#include "google/protobuf/util/json_util.h"

namespace dmls::client::ctl {
namespace {

namespace v1 = dmlserve::v1;

// Prints a failed call's status and violations; returns kExitRejected.
int Rejected(const absl::Status& status, const CallError& error = {}) {
  std::cerr << "error: " << status << "\n";
  PrintViolations(error.violations);
  return kExitRejected;
}

int Usage(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kExitUsage;
}

std::string ToJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

// "in 59m 12s", "expired" or "never".
std::string ExpiryText(uint64_t expires_unix_ms) {
  if (expires_unix_ms == 0) return "never";
  const int64_t now_ms = static_cast<int64_t>(std::time(nullptr)) * 1000;
  const int64_t left = static_cast<int64_t>(expires_unix_ms) - now_ms;
  if (left <= 0) return "expired";
  const int64_t s = left / 1000;
  if (s >= 3600) return absl::StrCat("in ", s / 3600, "h ", s % 3600 / 60, "m");
  return absl::StrCat("in ", s / 60, "m ", s % 60, "s");
}

bool ParseCount(const Args& args, const char* name, uint64_t* out) {
  if (!args.Has(name)) return true;
  return absl::SimpleAtoi(args.Get(name), out);
}

}  // namespace

absl::StatusOr<TransferOptions> TransferOptionsFromArgs(const Args& args,
                                                        const char* label) {
  TransferOptions options;
  if (args.Has("chunk-bytes")) {
    absl::StatusOr<uint64_t> chunk = ParseBytes(args.Get("chunk-bytes"));
    if (!chunk.ok()) return chunk.status();
    options.chunk_bytes = *chunk;
  }
  if (!ParseCount(args, "ttl", &options.ttl_seconds)) {
    return absl::InvalidArgumentError("--ttl wants a number of seconds");
  }
  if (args.Has("progress")) options.progress = StderrProgress(label);
  return options;
}

int UploadCommand(TensorClient& tensors, const Args& args) {
  if (args.positional.size() != 2) return Usage("upload wants one IN.npy");
  absl::StatusOr<TransferOptions> options = TransferOptionsFromArgs(args, "upload");
  if (!options.ok()) return Usage(std::string(options.status().message()));
  absl::StatusOr<NpyArray> array = ReadNpyFile(args.positional[1]);
  if (!array.ok()) return Usage(absl::StrCat(array.status().message()));
  const v1::DataType type = DataTypeForNpyDescr(array->descr);
  if (type == v1::DATA_TYPE_UNKNOWN) {
    return Usage(absl::StrCat(args.positional[1], ": unsupported dtype ",
                              array->descr));
  }
  std::vector<uint64_t> shape = array->shape;
  if (shape.empty()) shape.push_back(1);  // a 0-d array: one element
  const v1::TensorDesc desc = MakePackedTensorDesc(type, shape);
  absl::StatusOr<std::string> packed = PackLogical(desc, array->data);
  if (!packed.ok()) return Usage(absl::StrCat(packed.status().message()));
  CallError error;
  absl::StatusOr<v1::ResidentTensorInfo> info =
      tensors.Upload(desc, *packed, *options, &error);
  if (!info.ok()) return Rejected(info.status(), error);
  if (args.Has("json")) {
    std::cout << ToJson(*info) << "\n";
  } else {
    std::cout << info->handle() << "\n";
  }
  return 0;
}

int DownloadCommand(TensorClient& tensors, const Args& args) {
  if (args.positional.size() != 2 || !args.Has("output")) {
    return Usage("download wants HANDLE --output=OUT");
  }
  const bool raw = args.Has("raw");
  uint64_t offset = 0, length = 0;
  if (!ParseCount(args, "offset", &offset) || !ParseCount(args, "length", &length)) {
    return Usage("--offset and --length want byte counts");
  }
  if (!raw && (args.Has("offset") || args.Has("length"))) {
    return Usage("--offset and --length read a byte range: use them with --raw");
  }
  absl::StatusOr<TransferOptions> options =
      TransferOptionsFromArgs(args, "download");
  if (!options.ok()) return Usage(std::string(options.status().message()));
  if (!args.Has("chunk-bytes")) options->chunk_bytes = 0;  // server's default
  const std::string& handle = args.positional[1];
  absl::StatusOr<v1::ResidentTensorInfo> info = tensors.Find(handle);
  if (!info.ok()) return Rejected(info.status());
  if (offset > info->size_bytes() || length > info->size_bytes() - offset) {
    return Usage(absl::StrCat("bytes [", offset, ", +", length,
                              ") are outside the tensor's ",
                              info->size_bytes()));
  }
  if (length == 0) length = info->size_bytes() - offset;
  CallError error;
  absl::StatusOr<std::string> bytes =
      tensors.Download(handle, offset, length, *options, &error);
  if (!bytes.ok()) return Rejected(bytes.status(), error);
  const std::string path = args.Get("output");
  if (raw) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    if (!out) return Usage(absl::StrCat("cannot write ", path));
    std::cout << "wrote " << path << " (" << bytes->size() << " bytes)\n";
    return 0;
  }
  std::vector<uint64_t> shape;
  if (absl::Status w = WriteTensorNpy(path, info->desc(), *bytes, &shape);
      !w.ok()) {
    return Usage(absl::StrCat(path, ": ", w.message()));
  }
  std::cout << "wrote " << path << " ("
            << NpyDescrFor(info->desc().data_type()) << ", shape ["
            << absl::StrJoin(shape, ", ") << "])\n";
  return 0;
}

int ListCommand(TensorClient& tensors, const Args& args) {
  absl::StatusOr<v1::ListTensorsResponse> list = tensors.List();
  if (!list.ok()) return Rejected(list.status());
  if (args.Has("json")) {
    std::cout << ToJson(*list) << "\n";
    return 0;
  }
  for (const v1::ResidentTensorInfo& t : list->tensors()) {
    std::cout << t.handle() << "  "
              << v1::DataType_Name(t.desc().data_type()).substr(10) << " ["
              << absl::StrJoin(t.desc().sizes(), ", ") << "]  "
              << t.size_bytes() << " bytes  expires "
              << ExpiryText(t.expires_unix_ms()) << "  on " << t.device()
              << "\n";
  }
  std::cout << list->tensors_size() << " tensors, "
            << list->principal_bytes() << " bytes of a quota of "
            << list->principal_quota_bytes() << "\n";
  return 0;
}

int ReleaseCommand(TensorClient& tensors, const Args& args) {
  if (args.positional.size() < 2) return Usage("rm wants HANDLE...");
  int exit_code = 0;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    const std::string& handle = args.positional[i];
    if (absl::Status s = tensors.Release(handle); !s.ok()) {
      std::cerr << "error: " << handle << ": " << s << "\n";
      exit_code = kExitRejected;
    } else {
      std::cout << "released " << handle << "\n";
    }
  }
  return exit_code;
}

namespace {

// Fills what the chain's descriptors leave out (see the header) and binds
// --input; returns each step's output descriptor for decoding the answer.
absl::StatusOr<std::vector<v1::TensorDesc>> CompleteChain(
    TensorClient& tensors, const Args& args, v1::ChainRequest* chain) {
  std::vector<v1::TensorDesc> outputs;
  for (int i = 0; i < chain->steps_size(); ++i) {
    v1::ChainStep* step = chain->mutable_steps(i);
    google::protobuf::Message* body = OperatorBody(step->mutable_operator_());
    if (body == nullptr) {  // the server names the step and the rule
      outputs.emplace_back();
      continue;
    }
    const std::pair<const char*, v1::ChainTensor*> slots[] = {
        {"input", step->mutable_input()},
        {"scale", step->mutable_scale()},
        {"bias", step->mutable_bias()}};
    for (const auto& [name, source] : slots) {
      const char* flag = args.Has("input") ? "input" : "input-handle";
      const bool bind = i == 0 && std::string(name) == "input" && args.Has(flag);
      if (bind && source->source_case() != v1::ChainTensor::SOURCE_NOT_SET) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, ": steps[0].input already has a source"));
      }
      if (bind && args.Has("input")) {
        std::string bytes;
        if (absl::Status s = BindNpy(body, name, args.Get("input"), &bytes);
            !s.ok()) {
          return s;
        }
        source->set_data(std::move(bytes));
        continue;
      }
      if (bind) source->set_handle(args.Get("input-handle"));  // filled below
      v1::TensorDesc* t = TensorSlot(body, name, /*create=*/false);
      if (source->source_case() == v1::ChainTensor::kStep) {
        t = TensorSlot(body, name, /*create=*/true);
        if (t != nullptr && source->step() < static_cast<uint32_t>(i)) {
          FillFrom(t, outputs[source->step()]);
        }
      } else if (source->source_case() == v1::ChainTensor::kHandle) {
        t = TensorSlot(body, name, /*create=*/true);
        absl::StatusOr<v1::ResidentTensorInfo> info =
            tensors.Find(source->handle());
        if (!info.ok()) {
          return absl::Status(info.status().code(),
                              absl::StrCat("steps[", i, "].", name, ".handle: ",
                                           info.status().message()));
        }
        if (t != nullptr) FillFrom(t, info->desc());
      }
    }
    ResolveNegativeAxes(body);
    v1::TensorDesc* in = TensorSlot(body, "input", false);
    v1::TensorDesc* out = TensorSlot(body, "output", true);
    if (in != nullptr && out != nullptr) FillFrom(out, *in);
    outputs.push_back(out == nullptr ? v1::TensorDesc() : *out);
  }
  return outputs;
}

}  // namespace

int ChainCommand(DmlClient& client, TensorClient& tensors,
                 v1::ChainRequest chain, const Args& args) {
  if (args.Has("input") && args.Has("input-handle")) {
    return Usage("give --input or --input-handle, not both");
  }
  int returned = 0;
  for (const v1::ChainStep& step : chain.steps()) returned += step.return_output();
  if (returned > 1 && !args.Has("output-dir")) {
    return Usage(absl::StrCat(returned,
                              " steps return their output: give --output-dir"));
  }
  if (returned == 1 && !args.Has("output") && !args.Has("output-dir")) {
    return Usage("a step returns its output: give --output or --output-dir");
  }
  absl::StatusOr<std::vector<v1::TensorDesc>> outputs =
      CompleteChain(tensors, args, &chain);
  if (!outputs.ok()) {
    return outputs.status().code() == absl::StatusCode::kNotFound
               ? Rejected(outputs.status())
               : Usage(std::string(outputs.status().message()));
  }
  if (chain.request_id() == 0) chain.set_request_id(1);
  CallError error;
  absl::StatusOr<v1::ChainResponse> response = client.ExecuteChain(chain, &error);
  if (!response.ok()) return Rejected(response.status(), error);
  std::vector<std::string> written;
  for (const v1::ChainOutput& out : response->outputs()) {
    if (!out.handle().empty() && !args.Has("json")) {
      std::cout << "step " << out.step() << ": " << out.handle() << "\n";
    }
    if (!chain.steps(out.step()).return_output()) continue;
    const std::string path =
        args.Has("output-dir")
            ? absl::StrCat(args.Get("output-dir"), "/step", out.step(), ".npy")
            : args.Get("output");
    if (absl::Status w = WriteTensorNpy(path, (*outputs)[out.step()], out.data());
        !w.ok()) {
      std::cerr << "error: step " << out.step() << " -> " << path << ": " << w
                << "\n";
      return kExitUsage;
    }
    written.push_back(path);
  }
  if (args.Has("json")) {
    for (v1::ChainOutput& out : *response->mutable_outputs()) out.clear_data();
    std::cout << ToJson(*response) << "\n";  // the data went to the files
  } else {
    for (const std::string& path : written) std::cout << "wrote " << path << "\n";
    std::cout << chain.steps_size() << " steps on " << response->engine()
              << " in " << response->server_time_us() << " us\n";
  }
  return 0;
}

}  // namespace dmls::client::ctl
