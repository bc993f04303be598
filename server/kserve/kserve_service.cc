#include "server/kserve/kserve_service.h"

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/mapping/status_mapping.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/inline_reactions.h"
#include "server/rpc/message_codec.h"
#include "server/rpc/ref_counted_reactor.h"
#include "server/rpc/tracked_reactor.h"
#include "server/security/principal.h"

namespace dmls::server::kserve {
namespace {

// The protocol extensions served (ServerMetadata.extensions, Triton's
// names).
constexpr const char* kExtensions[] = {"model_configuration", "statistics", "parameters"};

// ModelInfer. Lives until gRPC (OnDone) and the runner (the outcome) are
// both through with it (ref_counted_reactor.h): the engine may call back
// after the client cancelled and the call is gone. Finishes once. Its
// reactions run inline (inline_reactions.h).
class ModelInferReactor final
    : public RefCountedReactor<InlineReactions<grpc::ServerUnaryReactor>> {
 public:
  ModelInferReactor(grpc::ByteBuffer* response, CallTracker::Ticket ticket,
                    spdlog::logger* logger)
      : RefCountedReactor(/*refs=*/2),  // gRPC's and the runner's
        response_(response),
        ticket_(std::move(ticket)),
        logger_(logger) {}

  void Start(InferRunner& runner, grpc::CallbackServerContext& context,
             absl::StatusOr<std::string> principal, const grpc::ByteBuffer& bytes) {
    inference::ModelInferRequest request;
    if (absl::Status parsed = ParseRequest(bytes, &request); !parsed.ok()) {
      InferOutcome outcome;
      outcome.error = RequestError::FromStatus(parsed);
      Deliver(std::move(outcome));
      return;
    }
    runner.Run(request,
               CallContext{DeadlineOf(context), cancelled_, std::move(principal),
                           RequestedOutputRatio(context), MetricsMethod::kExecute},
               [this](InferOutcome outcome) { Deliver(std::move(outcome)); });
  }

  void OnCancel() override {
    cancelled_->store(true);
    if (MarkFinished()) Finish(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    ticket_.End();
    Unref();
  }

 private:
  // The runner's outcome: the answer, unless the call was cancelled.
  void Deliver(InferOutcome outcome) {
    grpc::ByteBuffer serialized;
    grpc::Status status = outcome.error.ok()
                              ? SerializeResponse(outcome.response, &serialized)
                              : ToGrpcStatus(outcome.error, logger_);
    if (MarkFinished()) {
      // response_ is valid until OnDone, which follows our Finish.
      if (status.ok()) {
        response_->Swap(&serialized);
        held_ = std::move(outcome.executed);
      }
      Finish(status);
    }
    Unref();  // the runner's
  }

  grpc::ByteBuffer* const response_;
  CallTracker::Ticket ticket_;  // ended in OnDone
  spdlog::logger* const logger_;
  const std::shared_ptr<std::atomic<bool>> cancelled_ =
      std::make_shared<std::atomic<bool>>(false);
  // InferOutcome::executed, held until the response has been written (this
  // reactor goes); set once, by the outcome that finishes the call.
  ExecuteOutcome held_;
};

}  // namespace

KServeServiceImpl::KServeServiceImpl(DmlServiceImpl* dml, Engine* engine,
                                     KServeOptions options,
                                     std::shared_ptr<spdlog::logger> logger)
    : dml_(dml),
      engine_(engine),
      options_(std::move(options)),
      logger_(std::move(logger)),
      catalog_(dml->processor().options().highest_feature_level),
      statistics_(&catalog_),
      runner_(&catalog_, &dml->processor(), &statistics_) {}

template <typename Fill>
grpc::ServerUnaryReactor* KServeServiceImpl::Inline(Fill fill) {
  return AnswerInline(dml_->calls(), std::move(fill));
}

template <typename Request, typename Fill>
grpc::ServerUnaryReactor* KServeServiceImpl::InlineForModel(const Request& request, Fill fill) {
  return Inline([&] {
    const ModelEntry* model;
    grpc::Status status = FindModel(request.name(), request.version(), &model);
    if (model != nullptr) fill(*model);
    return status;
  });
}

grpc::Status KServeServiceImpl::FindModel(const std::string& name, const std::string& version,
                                          const ModelEntry** model) const {
  *model = catalog_.Find(name);
  if (*model == nullptr) {
    return ToGrpcStatus(RequestError::Rule(
        absl::StatusCode::kNotFound, "KSERVE_MODEL_UNKNOWN", "name",
        absl::StrCat("no model '", name, "' (docs/KSERVE.md lists the models)")));
  }
  if (!version.empty() && version != kModelVersion) {
    *model = nullptr;
    return ToGrpcStatus(RequestError::Rule(
        absl::StatusCode::kNotFound, "KSERVE_VERSION_UNKNOWN", "version",
        absl::StrCat("model '", name, "' has only version ", kModelVersion)));
  }
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* KServeServiceImpl::ServerLive(grpc::CallbackServerContext*,
                                                        const inference::ServerLiveRequest*,
                                                        inference::ServerLiveResponse* response) {
  return Inline([&] {
    response->set_live(true);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* KServeServiceImpl::ServerReady(
    grpc::CallbackServerContext*, const inference::ServerReadyRequest*,
    inference::ServerReadyResponse* response) {
  return Inline([&] {
    response->set_ready(ready_.load() && engine_->Healthy());
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* KServeServiceImpl::ModelReady(
    grpc::CallbackServerContext*, const inference::ModelReadyRequest* request,
    inference::ModelReadyResponse* response) {
  // Unknown: NOT_FOUND and ready false (the proto's default).
  return InlineForModel(*request, [&](const ModelEntry&) {
    response->set_ready(ready_.load() && engine_->Healthy());
  });
}

grpc::ServerUnaryReactor* KServeServiceImpl::ServerMetadata(
    grpc::CallbackServerContext*, const inference::ServerMetadataRequest*,
    inference::ServerMetadataResponse* response) {
  return Inline([&] {
    response->set_name("dmlserve");
    response->set_version(DMLSERVE_VERSION);
    for (const char* extension : kExtensions) response->add_extensions(extension);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* KServeServiceImpl::ModelMetadata(
    grpc::CallbackServerContext*, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  return InlineForModel(*request,
                        [&](const ModelEntry& model) { *response = BuildMetadata(model); });
}

grpc::ServerUnaryReactor* KServeServiceImpl::ModelConfig(
    grpc::CallbackServerContext*, const inference::ModelConfigRequest* request,
    inference::ModelConfigResponse* response) {
  return InlineForModel(*request, [&](const ModelEntry& model) {
    *response->mutable_config() = BuildConfig(model, options_.facts);
  });
}

grpc::ServerUnaryReactor* KServeServiceImpl::ModelStatistics(
    grpc::CallbackServerContext*, const inference::ModelStatisticsRequest* request,
    inference::ModelStatisticsResponse* response) {
  return Inline([&] {
    const ModelEntry* model = nullptr;
    if (!request->name().empty()) {
      grpc::Status status = FindModel(request->name(), request->version(), &model);
      if (!status.ok()) return status;
    }
    statistics_.Report(request->name(), response);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* KServeServiceImpl::ModelInfer(grpc::CallbackServerContext* context,
                                                        const grpc::ByteBuffer* request,
                                                        grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = dml_->calls().Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  auto* reactor = new ModelInferReactor(response, std::move(ticket), logger_.get());
  reactor->Start(runner_, *context,
                 PrincipalOf(*context, options_.principals),
                 *request);
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
KServeServiceImpl::ModelStreamInfer(grpc::CallbackServerContext* context) {
  return NewStreamInferReactor(
      context, PrincipalOf(*context, options_.principals),
      dml_->calls(), runner_, options_.stream, logger_);
}

}  // namespace dmls::server::kserve
