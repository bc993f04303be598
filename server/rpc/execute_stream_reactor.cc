#include "server/rpc/execute_stream_reactor.h"

#include <array>
#include <utility>

#include "engine/sched/admission.h"
#include "server/mapping/proto_mapping.h"
#include "server/mapping/status_mapping.h"
#include "server/rpc/message_codec.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

// The output bytes an ExecuteRequest's response will carry (its output
// range; nothing when the output stays resident).
uint64_t ExpectedResponseBytes(const v1::ExecuteRequest& request) {
  if (!request.output_handle().empty() || request.keep_output() ||
      (request.in_place() && !request.input_handle().empty())) {
    return 0;
  }
  ExecuteRequest r;
  r.op = OperatorFromProto(request.operator_());
  r.in_place = request.in_place();
  return sched::OutputRangeBytes(r);
}

// ExecuteStream: ExecuteRequests in, ExecuteResponses out, in completion
// order (ordered_stream_reactor.h: window, byte bound, stop, finish once).
// A request that fails answers with its error in the response.
class ExecuteStreamReactor final : public OrderedStreamReactor {
 public:
  ExecuteStreamReactor(grpc::CallbackServerContext* context,
                       absl::StatusOr<std::string> principal, RequestProcessor& processor,
                       StreamLimits limits, std::shared_ptr<spdlog::logger> logger)
      : OrderedStreamReactor(context, std::move(principal), limits, std::move(logger),
                             "ExecuteStream"),
        processor_(processor) {}

  void OnReadDone(bool ok) override {
    v1::ExecuteRequest request;
    std::array<Payload, 3> payloads;  // left in the received slices (no copy)
    absl::Status parsed =
        ok ? ParseRequestWithPayloads(read_buffer(), &request, kExecutePayloadFields, &payloads)
           : absl::OkStatus();
    // The response this request will make, counted against the stream's
    // byte bound from now until it is written.
    const uint64_t expected = ok && parsed.ok() ? ExpectedResponseBytes(request) : 0;
    if (!Accept(ok, parsed, expected)) return;
    processor_.Execute(request, Context(MetricsMethod::kExecuteStream),
                       [this, expected](ExecuteOutcome outcome) {
                         if (!outcome.error.ok()) {
                           FillResponse(outcome.error, &outcome.response, &logger());
                         }
                         grpc::ByteBuffer serialized;
                         grpc::Status status =
                             SerializeExecuteResponse(outcome.response, &serialized);
                         Respond(status, std::move(serialized), std::move(outcome.admitted),
                                 expected);
                       },
                       std::move(payloads));
  }

 private:
  RequestProcessor& processor_;
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StartExecuteStream(
    grpc::CallbackServerContext* context, absl::StatusOr<std::string> principal,
    RequestProcessor& processor, StreamLimits limits, std::shared_ptr<spdlog::logger> logger,
    CallTracker& calls) {
  auto* reactor = new ExecuteStreamReactor(context, std::move(principal), processor, limits,
                                           std::move(logger));
  reactor->Begin(calls);
  return reactor;
}

}  // namespace dmls::server
