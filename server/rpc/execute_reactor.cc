#include "server/rpc/execute_reactor.h"

#include <array>
#include <atomic>
#include <memory>
#include <type_traits>
#include <utility>

#include "google/protobuf/arena.h"
#include "server/mapping/status_mapping.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/inline_reactions.h"
#include "server/rpc/message_codec.h"
#include "server/rpc/ref_counted_reactor.h"
#include "server/rpc/tracked_reactor.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

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
// Its reactions run inline (inline_reactions.h).
template <typename Request, typename Outcome>
class UnaryExecuteReactor final
    : public RefCountedReactor<InlineReactions<grpc::ServerUnaryReactor>> {
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
                              ? ParseRequestWithPayloads(bytes, &request, kExecutePayloadFields, &payloads)
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

template <typename Request, typename Outcome>
grpc::ServerUnaryReactor* Start(UnaryCall call, CallTracker& calls, RequestProcessor& processor,
                                spdlog::logger* logger) {
  CallTracker::Ticket ticket = calls.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  auto* reactor = new UnaryExecuteReactor<Request, Outcome>(
      call.context, call.response, std::move(call.principal), std::move(ticket), logger);
  reactor->Start(processor, call.request);
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* StartExecute(UnaryCall call, CallTracker& calls,
                                       RequestProcessor& processor, spdlog::logger* logger) {
  return Start<v1::ExecuteRequest, ExecuteOutcome>(std::move(call), calls, processor, logger);
}

grpc::ServerUnaryReactor* StartExecuteChain(UnaryCall call, CallTracker& calls,
                                            RequestProcessor& processor, spdlog::logger* logger) {
  return Start<v1::ChainRequest, ChainOutcome>(std::move(call), calls, processor, logger);
}

}  // namespace dmls::server
