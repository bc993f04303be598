#include "server/kserve/stream_infer_reactor.h"

#include <utility>

#include "server/kserve/infer_mapping.h"
#include "server/rpc/message_codec.h"
#include "server/rpc/ordered_stream_reactor.h"

namespace dmls::server::kserve {
namespace {

// The output bytes a request's response will carry, counted against the
// stream's byte bound until it is written: its raw input bytes (every
// operator's output is its input's size).
uint64_t ExpectedBytes(const inference::ModelInferRequest& request) {
  uint64_t bytes = 0;
  if (!request.raw_input_contents().empty()) bytes = request.raw_input_contents(0).size();
  return bytes;
}

class StreamInferReactor final : public OrderedStreamReactor {
 public:
  StreamInferReactor(grpc::CallbackServerContext* context,
                     absl::StatusOr<std::string> principal, InferRunner& runner,
                     StreamOptions options, std::shared_ptr<spdlog::logger> logger)
      : OrderedStreamReactor(context, std::move(principal), options, std::move(logger),
                             "ModelStreamInfer"),
        runner_(runner) {}

  void OnReadDone(bool ok) override {
    inference::ModelInferRequest request;
    absl::Status parsed = ok ? ParseRequest(read_buffer(), &request) : absl::OkStatus();
    const uint64_t expected = ExpectedBytes(request);
    if (!Accept(ok, parsed, expected)) return;
    runner_.Run(request, Context(MetricsMethod::kExecuteStream),
                [this, expected, model = request.model_name(),
                 id = request.id()](InferOutcome outcome) {
                  OnOutcome(std::move(outcome), expected, model, id);
                });
  }

 private:
  void OnOutcome(InferOutcome outcome, uint64_t expected, const std::string& model,
                 const std::string& id) {
    inference::ModelStreamInferResponse response;
    if (outcome.error.ok()) {
      *response.mutable_infer_response() = std::move(outcome.response);
    } else {
      response.set_error_message(ToGrpcStatus(outcome.error, &logger()).error_message());
      response.mutable_infer_response()->set_model_name(model);
      response.mutable_infer_response()->set_id(id);
    }
    grpc::ByteBuffer serialized;
    grpc::Status status = SerializeResponse(response, &serialized);
    Respond(status, std::move(serialized), std::move(outcome.executed.admitted), expected);
  }

  InferRunner& runner_;
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewStreamInferReactor(
    grpc::CallbackServerContext* context, absl::StatusOr<std::string> principal,
    CallTracker& calls, InferRunner& runner, StreamOptions options,
    std::shared_ptr<spdlog::logger> logger) {
  auto* reactor =
      new StreamInferReactor(context, std::move(principal), runner, options, std::move(logger));
  reactor->Begin(calls);
  return reactor;
}

}  // namespace dmls::server::kserve
