#include "server/rpc/service.h"

#include <array>
#include <atomic>
#include <type_traits>
#include <utility>

#include "absl/time/clock.h"
#include "google/protobuf/arena.h"
#include "engine/sched/admission.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/message_codec.h"
#include "server/rpc/ordered_stream_reactor.h"
#include "server/rpc/ref_counted_reactor.h"
#include "server/mapping/proto_mapping.h"
#include "server/security/principal.h"
#include "server/mapping/status_mapping.h"
#include "server/rpc/tracked_reactor.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

// ExecuteRequest's payload fields (input, scale, bias): the unary and
// streamed Execute leave them in gRPC's receive slices
// (ParseRequestWithPayloads) and hand them to the engine from there.
constexpr std::array<int, 3> kPayloadFields = {v1::ExecuteRequest::kInputFieldNumber,
                                               v1::ExecuteRequest::kScaleFieldNumber,
                                               v1::ExecuteRequest::kBiasFieldNumber};

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

// An outcome's response: an Execute's output is not copied
// (SerializeExecuteResponse), a chain's is.
grpc::Status Serialize(v1::ExecuteResponse& response, grpc::ByteBuffer* out) {
  return SerializeExecuteResponse(response, out);
}
grpc::Status Serialize(const google::protobuf::Message& response, grpc::ByteBuffer* out) {
  return SerializeResponse(response, out);
}

// Unary Execute and ExecuteChain (Request -> Outcome, see
// request_processor.h). Lives until both gRPC (OnDone) and the engine (the
// outcome callback) are through with it (ref_counted_reactor.h), because
// the engine may call back after the client cancelled and the RPC is gone.
template <typename Request, typename Outcome>
class UnaryExecuteReactor final : public RefCountedReactor<grpc::ServerUnaryReactor> {
 public:
  // `principal`: the call's (PrincipalOf).
  UnaryExecuteReactor(grpc::CallbackServerContext* context, grpc::ByteBuffer* response,
                      absl::StatusOr<std::string> principal, CallTracker::Ticket ticket,
                      spdlog::logger* logger)
      : RefCountedReactor(/*refs=*/2),  // gRPC's and the engine's outcome's
        context_(context),
        response_(response),
        principal_(std::move(principal)),
        ticket_(std::move(ticket)),
        logger_(logger) {}

  void Start(RequestProcessor& processor, const grpc::ByteBuffer& bytes) {
    // The message and its parts (operator, tensor descriptors) on an arena
    // whose first block is on this stack: no allocation per request for a
    // small message. Both live until Start returns, as a local would.
    alignas(8) char first_block[kArenaBlockBytes];
    google::protobuf::ArenaOptions arena_options;
    arena_options.initial_block = first_block;
    arena_options.initial_block_size = sizeof(first_block);
    google::protobuf::Arena arena(arena_options);
    Request& request = *google::protobuf::Arena::CreateMessage<Request>(&arena);
    // An ExecuteRequest's payloads stay in the received slices (no copy).
    std::array<Payload, 3> payloads;
    absl::Status parsed = std::is_same_v<Request, v1::ExecuteRequest>
                              ? ParseRequestWithPayloads(bytes, &request, kPayloadFields, &payloads)
                              : ParseRequest(bytes, &request);
    if (!parsed.ok()) {
      logger_->debug("{}: {}", Request::descriptor()->name(), std::string(parsed.message()));
      Outcome outcome;
      outcome.error = RequestError::FromStatus(parsed);
      OnOutcome(std::move(outcome));  // answers, drops the engine's reference
      return;
    }
    CallContext call{DeadlineOf(*context_), cancelled_, std::move(principal_),
                     RequestedOutputRatio(*context_),
                     std::is_same_v<Request, v1::ChainRequest> ? MetricsMethod::kExecuteChain
                                                               : MetricsMethod::kExecute};
    auto answer = [this](Outcome outcome) { OnOutcome(std::move(outcome)); };
    if constexpr (std::is_same_v<Request, v1::ExecuteRequest>) {
      processor.Execute(request, std::move(call), std::move(answer), std::move(payloads));
    } else {
      processor.ExecuteChain(request, std::move(call), std::move(answer));
    }
  }

  void OnCancel() override {
    cancelled_->store(true);
    // Answer now; the engine's late callback finds the call finished.
    if (MarkFinished()) Finish(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    ticket_.End();  // the response is written; the engine may still call back
    Unref();
  }

 private:
  void OnOutcome(Outcome outcome) {
    grpc::Status status;
    grpc::ByteBuffer serialized;
    if (outcome.error.ok()) {
      status = Serialize(outcome.response, &serialized);
    }
    if (MarkFinished()) {
      // response_ stays valid until OnDone, which cannot come before the
      // Finish below.
      if (outcome.error.ok()) {
        response_->Swap(&serialized);
        // Held until the reactor goes, after the response is written.
        admitted_ = std::move(outcome.admitted);
      } else {
        status = ToGrpcStatus(outcome.error, logger_);
      }
      Finish(status);
    }
    Unref();  // the engine's
  }

  // Start's arena block: an Execute's message without its payloads (a few
  // hundred bytes) fits.
  static constexpr size_t kArenaBlockBytes = 2048;

  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const response_;
  absl::StatusOr<std::string> principal_;  // moved into the CallContext by Start
  CallTracker::Ticket ticket_;  // ended in OnDone
  spdlog::logger* const logger_;
  const std::shared_ptr<std::atomic<bool>> cancelled_ =
      std::make_shared<std::atomic<bool>>(false);
  // Set once, by the outcome that finishes the call.
  sched::Admitted admitted_;
};

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
        ok ? ParseRequestWithPayloads(read_buffer(), &request, kPayloadFields, &payloads)
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

DmlServiceImpl::DmlServiceImpl(Engine* engine, ServiceOptions options,
                               v1::GetCapabilitiesResponse capabilities,
                               std::shared_ptr<spdlog::logger> logger)
    : options_(options),
      engine_(engine),
      capabilities_(std::move(capabilities)),
      logger_(logger),
      store_(engine, options.store),
      processor_(engine, options.processor, std::move(logger), &store_),
      chunk_buffers_(ChunkBuffers::Create(options.chunked.buffer_idle_bytes)) {}

grpc::ServerUnaryReactor* DmlServiceImpl::GetCapabilities(
    grpc::CallbackServerContext* context, const v1::GetCapabilitiesRequest*,
    v1::GetCapabilitiesResponse* response) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  *response = capabilities_;
  auto* reactor = new TrackedUnaryReactor(std::move(ticket));
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* DmlServiceImpl::Validate(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  auto* reactor = new TrackedUnaryReactor(std::move(ticket));
  v1::ValidateRequest parsed;
  if (absl::Status status = ParseRequest(*request, &parsed); !status.ok()) {
    logger_->debug("Validate: {}", std::string(status.message()));
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  reactor->Finish(SerializeResponse(processor_.Validate(parsed), response));
  return reactor;
}

grpc::ServerUnaryReactor* DmlServiceImpl::Execute(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  auto* reactor = new UnaryExecuteReactor<v1::ExecuteRequest, ExecuteOutcome>(
      context, response, PrincipalOf(*context, options_.tokens.get(), options_.tenant_from_peer),
      std::move(ticket), logger_.get());
  reactor->Start(processor_, *request);
  return reactor;
}

grpc::ServerUnaryReactor* DmlServiceImpl::ExecuteChain(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  auto* reactor = new UnaryExecuteReactor<v1::ChainRequest, ChainOutcome>(
      context, response, PrincipalOf(*context, options_.tokens.get(), options_.tenant_from_peer),
      std::move(ticket), logger_.get());
  reactor->Start(processor_, *request);
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
DmlServiceImpl::ExecuteStream(grpc::CallbackServerContext* context) {
  auto* reactor = new ExecuteStreamReactor(
      context, PrincipalOf(*context, options_.tokens.get(), options_.tenant_from_peer),
      processor_, StreamLimits{options_.stream_window, options_.stream_queue_bytes}, logger_);
  reactor->Begin(calls_);
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
DmlServiceImpl::ExecuteChunked(grpc::CallbackServerContext* context) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) {
    return new RefusedReactor<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>>();
  }
  // Its tensors are staged, never published (chunked_reactor.h): the
  // principal only counts them against a quota, so a caller without an
  // identity stages under its connection's address.
  return NewChunkedReactor(
      ChunkedCall{DeadlineOf(*context),
                  PrincipalOf(*context, options_.tokens.get(), /*tenant_from_peer=*/true),
                  RequestedOutputRatio(*context)},
      engine_, &store_, &processor_.admission(), chunk_buffers_.get(), options_.chunked,
      std::move(ticket), logger_);
}

}  // namespace dmls::server
