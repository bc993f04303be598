#include "client/dml_client.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/read_file.h"
#include "engine/core/mutex.h"
#include "google/rpc/error_details.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "google/rpc/status.pb.h"

namespace dmls::client {

std::vector<dmlserve::v1::FieldViolation> ViolationsFromStatus(
    const grpc::Status& status) {
  std::vector<dmlserve::v1::FieldViolation> out;
  if (status.error_details().empty()) return out;
  google::rpc::Status details;
  if (!details.ParseFromString(status.error_details())) return out;
  for (const google::protobuf::Any& any : details.details()) {
    google::rpc::BadRequest bad;
    if (!any.UnpackTo(&bad)) continue;
    for (const auto& v : bad.field_violations()) {
      dmlserve::v1::FieldViolation fv;
      fv.set_field(v.field());
      fv.set_description(v.description());
      const size_t colon = v.description().find(':');
      fv.set_rule(colon == std::string::npos ? v.description()
                                             : v.description().substr(0, colon));
      out.push_back(std::move(fv));
    }
  }
  return out;
}

absl::Status ToAbslStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

absl::Status FailedCall(const grpc::Status& status, CallError* error) {
  absl::Status converted = ToAbslStatus(status);
  if (error != nullptr) {
    error->status = converted;
    error->violations = ViolationsFromStatus(status);
  }
  return converted;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    const DmlClientOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  const bool tls = options.tls || !options.tls_ca_file.empty() ||
                   !options.tls_cert_file.empty() || !options.tls_key_file.empty();
  if (!tls) {
    return grpc::CreateCustomChannel(options.target,
                                     grpc::InsecureChannelCredentials(), args);
  }
  grpc::SslCredentialsOptions ssl;
  const std::pair<const std::string*, std::string*> files[] = {
      {&options.tls_ca_file, &ssl.pem_root_certs},
      {&options.tls_cert_file, &ssl.pem_cert_chain},
      {&options.tls_key_file, &ssl.pem_private_key}};
  for (const auto& [path, out] : files) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> pem = ReadFile(*path);
    if (!pem.ok()) return pem.status();
    *out = *std::move(pem);
  }
  if (!options.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name);
  }
  return grpc::CreateCustomChannel(options.target, grpc::SslCredentials(ssl),
                                   args);
}

std::shared_ptr<grpc::Channel> ChannelOrBroken(const DmlClientOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(options);
  if (channel.ok()) return *std::move(channel);
  // A channel whose every call fails fast: credentials that cannot connect.
  // The error itself is reported by the callers that check MakeChannel.
  return grpc::CreateChannel("unix:/nonexistent/dmlserve-client-tls-error",
                             grpc::InsecureChannelCredentials());
}

void PrepareContext(const DmlClientOptions& options,
                    grpc::ClientContext* context) {
  if (options.timeout != absl::InfiniteDuration()) {
    context->set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(options.timeout));
  }
  if (!options.tenant.empty()) {
    context->AddMetadata("tenant", options.tenant);
  }
  if (!options.token.empty()) {
    context->AddMetadata("authorization", "Bearer " + options.token);
  }
}

absl::StatusOr<dmlserve::v1::GetCapabilitiesResponse>
DmlClient::GetCapabilities() {
  return Call(&Stub::GetCapabilities,
                   dmlserve::v1::GetCapabilitiesRequest());
}

absl::StatusOr<bool> DmlClient::CheckHealth(const std::string& service) {
  // HealthCheckRequest { string service = 1; }: tag 0x0a, length, bytes.
  if (service.size() > 127) {
    return absl::InvalidArgumentError("health service name over 127 bytes");
  }
  std::string request;
  if (!service.empty()) {
    request.push_back('\x0a');
    request.push_back(static_cast<char>(service.size()));
    request += service;
  }
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1);
  grpc::GenericStub generic(channel_);
  grpc::ClientContext context;
  Prepare(&context);
  grpc::ByteBuffer response_buffer;
  grpc::Status call_status;
  Mutex mu;
  CondVar done_cv;
  bool done = false;
  generic.UnaryCall(&context, "/grpc.health.v1.Health/Check",
                    grpc::StubOptions(), &request_buffer, &response_buffer,
                    [&](grpc::Status s) {
                      MutexLock lock(&mu);
                      call_status = std::move(s);
                      done = true;
                      done_cv.Signal();
                    });
  MutexLock lock(&mu);
  while (!done) done_cv.Wait(&mu);
  if (!call_status.ok()) return ToAbslStatus(call_status);
  std::vector<grpc::Slice> slices;
  if (!response_buffer.Dump(&slices).ok()) {
    return absl::InternalError("unreadable health response");
  }
  std::string response;
  for (const grpc::Slice& s : slices) {
    response.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  // HealthCheckResponse { ServingStatus status = 1; }: SERVING is 1; an
  // absent field is UNKNOWN (0).
  return response.size() == 2 && response[0] == '\x08' && response[1] == 1;
}

absl::StatusOr<dmlserve::v1::ValidateResponse> DmlClient::Validate(
    const dmlserve::v1::ValidateRequest& request) {
  return Call(&Stub::Validate, request);
}

absl::StatusOr<dmlserve::v1::ExecuteResponse> DmlClient::Execute(
    const dmlserve::v1::ExecuteRequest& request, CallError* error) {
  return Call(&Stub::Execute, request, error);
}

absl::StatusOr<std::vector<dmlserve::v1::ExecuteResponse>>
DmlClient::ExecuteStream(
    const std::vector<dmlserve::v1::ExecuteRequest>& requests) {
  grpc::ClientContext context;
  Prepare(&context);
  auto stream = stub_->ExecuteStream(&context);
  std::thread writer([&] {
    for (const auto& request : requests) {
      if (!stream->Write(request)) break;  // the stream failed; Finish says why
    }
    stream->WritesDone();
  });
  std::vector<dmlserve::v1::ExecuteResponse> responses;
  dmlserve::v1::ExecuteResponse response;
  while (stream->Read(&response)) responses.push_back(std::move(response));
  writer.join();
  grpc::Status status = stream->Finish();
  if (!status.ok()) return ToAbslStatus(status);
  return responses;
}

absl::StatusOr<dmlserve::v1::ChainResponse> DmlClient::ExecuteChain(
    const dmlserve::v1::ChainRequest& request, CallError* error) {
  return Call(&Stub::ExecuteChain, request, error);
}

namespace {

// Writes the header, each tensor's chunks and `end` on `stream`; stops at the
// first failed write (the stream's status then says why).
void WriteChunkedRequest(
    grpc::ClientReaderWriter<dmlserve::v1::ChunkedRequest,
                             dmlserve::v1::ChunkedResponse>* stream,
    const dmlserve::v1::ChunkedHeader& header, const ChunkedTensors& tensors) {
  dmlserve::v1::ChunkedRequest message;
  *message.mutable_header() = header;
  if (!stream->Write(message)) return;
  const uint64_t chunk = std::max<uint64_t>(tensors.chunk_bytes, 1);
  const uint64_t total =
      tensors.input.size() + tensors.scale.size() + tensors.bias.size();
  uint64_t sent = 0;
  const std::pair<dmlserve::v1::TensorSlot, const std::string*> parts[] = {
      {dmlserve::v1::TENSOR_SLOT_INPUT, &tensors.input},
      {dmlserve::v1::TENSOR_SLOT_SCALE, &tensors.scale},
      {dmlserve::v1::TENSOR_SLOT_BIAS, &tensors.bias}};
  for (const auto& [slot, bytes] : parts) {
    for (uint64_t offset = 0; offset < bytes->size(); offset += chunk) {
      dmlserve::v1::ChunkedRequest part;
      dmlserve::v1::TensorChunk* c = part.mutable_chunk();
      c->set_slot(slot);
      c->set_offset(offset);
      c->set_data(bytes->substr(offset, chunk));
      if (!stream->Write(part)) return;
      sent += c->data().size();
      if (tensors.upload_progress) tensors.upload_progress(sent, total);
    }
  }
  stream->WritesDone();  // closing our side says that every chunk was sent
}

}  // namespace

absl::StatusOr<ChunkedResult> DmlClient::ExecuteChunked(
    const dmlserve::v1::ChunkedHeader& header, const ChunkedTensors& tensors,
    CallError* error) {
  grpc::ClientContext context;
  Prepare(&context);
  auto stream = stub_->ExecuteChunked(&context);
  std::thread writer(
      [&] { WriteChunkedRequest(stream.get(), header, tensors); });
  ChunkedResult result;
  bool done = false;
  bool misordered = false;
  dmlserve::v1::ChunkedResponse response;
  while (stream->Read(&response)) {
    if (response.has_chunk()) {
      if (response.chunk().offset() != result.output.size()) {
        misordered = true;  // keep reading so the stream can finish
      } else {
        result.output += response.chunk().data();
        if (tensors.download_progress) {
          tensors.download_progress(result.output.size(), 0);
        }
      }
    }
    if (response.done()) {
      done = true;
      result.engine = response.engine();
      result.server_time_us = response.server_time_us();
    }
  }
  writer.join();
  grpc::Status status = stream->Finish();
  if (!status.ok()) return FailedCall(status, error);
  if (misordered || !done) {
    return absl::InternalError(
        misordered ? "ExecuteChunked: output chunks out of order"
                   : "ExecuteChunked: the stream ended without done");
  }
  if (tensors.download_progress) {
    tensors.download_progress(result.output.size(), result.output.size());
  }
  return result;
}

}  // namespace dmls::client
