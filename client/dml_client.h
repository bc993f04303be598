// DmlClient: a small synchronous C++ client of dmlserve.v1.DmlService.
//
// Wraps the generated stub with per-call deadlines and message-size limits,
// converts grpc::Status to absl::Status and decodes the google.rpc.BadRequest
// that the server attaches to INVALID_ARGUMENT (grpc-status-details-bin) into
// FieldViolations (rule id + field path). Owns its channel. Thread-safe: the
// underlying stub may be used from several threads at once.
#ifndef DMLSERVE_CLIENT_DML_CLIENT_H_
#define DMLSERVE_CLIENT_DML_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "dmlserve/v1/dmlserve.grpc.pb.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "grpcpp/grpcpp.h"

namespace dmls::client {

struct DmlClientOptions {
  // gRPC target, "host:port".
  std::string target = "127.0.0.1:50051";
  // Deadline of each call; absl::InfiniteDuration() for none. Default 60 s:
  // long enough for large tensors on the CPU engine.
  absl::Duration timeout = absl::Seconds(60);
  // Largest message sent or received, in bytes. Default 256 MiB: larger than
  // any server default, so the server's own limit is the one that applies.
  int max_message_bytes = 256 << 20;
  // Sent as the `tenant` request metadata when not empty: the principal that
  // owns resident tensors. Without it the server keys them by connection,
  // so a tensor made by one process is invisible to the next.
  std::string tenant;
  // TLS: on when `tls` or any file is set. tls_ca_file: PEM roots to trust
  // (default: the system's); tls_cert_file + tls_key_file: a client
  // certificate (mutual TLS); tls_server_name: the name to check the
  // server's certificate against instead of the target's host.
  bool tls = false;
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_server_name;
  // Sent as `authorization: Bearer TOKEN` when not empty.
  std::string token;
};

// Progress of a transfer: bytes moved so far and the total. Called on the
// calling thread after each chunk.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

// The channel the clients of `options` use (message limits and TLS
// applied). NOT_FOUND when a TLS file cannot be read.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(
    const DmlClientOptions& options);

// MakeChannel's channel, or when it fails one on which every call fails
// (UNAVAILABLE): for constructors, which cannot return a status.
std::shared_ptr<grpc::Channel> ChannelOrBroken(const DmlClientOptions& options);

// Applies the options' deadline and tenant metadata to a call's context.
void PrepareContext(const DmlClientOptions& options,
                    grpc::ClientContext* context);

// The outcome of a failed call: the status plus the decoded violations.
struct CallError {
  absl::Status status;
  std::vector<dmlserve::v1::FieldViolation> violations;
};

// Decodes the BadRequest details of a grpc::Status into FieldViolations; the
// rule id is the description's text before the first ':'. Empty when the
// status carries no (or undecodable) details.
std::vector<dmlserve::v1::FieldViolation> ViolationsFromStatus(
    const grpc::Status& status);

// grpc::Status -> absl::Status (the code values are the same google.rpc.Code).
absl::Status ToAbslStatus(const grpc::Status& status);

// The absl::Status of a failed call, filling `error` (when not null) with it
// and the decoded violations.
absl::Status FailedCall(const grpc::Status& status, CallError* error);

// What DmlClient and TensorClient share: the options their calls use, the
// channel (their own or one shared between them) with `Service`'s stub on
// it, and how a call is prepared and a unary call made.
template <typename Service>
class ServiceClient {
 public:
  // A channel that cannot be made (an unreadable TLS file) fails every call
  // with that status.
  explicit ServiceClient(DmlClientOptions options)
      : ServiceClient(options, ChannelOrBroken(options)) {}
  // Shares `channel` (e.g. with the other client of the same server).
  ServiceClient(DmlClientOptions options, std::shared_ptr<grpc::Channel> channel)
      : options_(std::move(options)),
        channel_(std::move(channel)),
        stub_(Service::NewStub(channel_)) {}

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 protected:
  using Stub = typename Service::Stub;

  void Prepare(grpc::ClientContext* context) const { PrepareContext(options_, context); }

  // One unary call of `method`: the response, or FailedCall's status.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(
      grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
      const Request& request, CallError* error = nullptr) const {
    grpc::ClientContext context;
    Prepare(&context);
    Response response;
    grpc::Status status = (stub_.get()->*method)(&context, request, &response);
    if (!status.ok()) return FailedCall(status, error);
    return response;
  }

  DmlClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<Stub> stub_;
};

// The tensors of an ExecuteChunked call: whole buffer ranges, sent in
// chunks of chunk_bytes (at most the server's max_chunk_bytes).
struct ChunkedTensors {
  std::string input;
  std::string scale;  // empty: none
  std::string bias;   // empty: none
  uint64_t chunk_bytes = 4 << 20;
  ProgressFn upload_progress;    // bytes of input + scale + bias sent
  ProgressFn download_progress;  // output bytes received (total: 0 until done)
};

// The answer of an ExecuteChunked call: the output range reassembled.
struct ChunkedResult {
  std::string output;
  std::string engine;
  uint64_t server_time_us = 0;
};

class DmlClient : public ServiceClient<dmlserve::v1::DmlService> {
 public:
  using ServiceClient::ServiceClient;

  absl::StatusOr<dmlserve::v1::GetCapabilitiesResponse> GetCapabilities();

  // grpc.health.v1.Health/Check of `service` ("" = the server as a whole):
  // true when SERVING. Sent as raw bytes (the two-field health messages are
  // encoded by hand), so the client needs no health stubs.
  absl::StatusOr<bool> CheckHealth(const std::string& service = "");

  // Validate answers OK with the violations in the response.
  absl::StatusOr<dmlserve::v1::ValidateResponse> Validate(
      const dmlserve::v1::ValidateRequest& request);

  // One execution. On failure `error` (when not null) receives the status
  // and the BadRequest violations.
  absl::StatusOr<dmlserve::v1::ExecuteResponse> Execute(
      const dmlserve::v1::ExecuteRequest& request, CallError* error = nullptr);

  // Sends every request on one ExecuteStream (writing from a helper thread
  // while this thread reads, so flow control cannot deadlock) and returns
  // the responses in arrival order. Per-request failures are in each
  // response's status fields; the returned status is the stream's.
  absl::StatusOr<std::vector<dmlserve::v1::ExecuteResponse>> ExecuteStream(
      const std::vector<dmlserve::v1::ExecuteRequest>& requests);

  // Several operators on the device in one submission; see ChainRequest.
  absl::StatusOr<dmlserve::v1::ChainResponse> ExecuteChain(
      const dmlserve::v1::ChainRequest& request, CallError* error = nullptr);

  // One operator whose tensors travel in chunks both ways (for tensors
  // larger than one message): sends `header`, then the tensors' chunks from
  // a helper thread while this thread reassembles the output's chunks.
  absl::StatusOr<ChunkedResult> ExecuteChunked(
      const dmlserve::v1::ChunkedHeader& header, const ChunkedTensors& tensors,
      CallError* error = nullptr);

};

}  // namespace dmls::client

#endif  // DMLSERVE_CLIENT_DML_CLIENT_H_
