// KServeServiceImpl: the Open Inference Protocol (KServe v2) service
// inference.GRPCInferenceService, on the same port as dmlserve.v1 (see
// proto/inference/grpc_predict_v2.proto and docs/KSERVE.md).
// Operators are models (model_catalog.h); ModelInfer and ModelStreamInfer
// go through the DmlService's RequestProcessor (the same admission,
// in-flight limit, memory budget, batching and engines as Execute) and
// are counted under Execute and ExecuteStream in the metrics. The other
// methods answer inline; ServerReady and ModelReady follow the server's
// health (SetReady) and the engine's. Every call is tracked by the DmlService's
// CallTracker (refused with UNAVAILABLE once the stop has begun); the
// call's principal comes from its own token or tenant as for dmlserve.v1
// (principal.h).
//
// ModelInfer and ModelStreamInfer are registered raw and parse their
// requests themselves (message_codec.h): a request that does not parse
// gets INVALID_ARGUMENT with the reason.
//
// Ownership: borrows the DmlService (its processor and call tracker) and
// the engine, which must outlive every reactor (as for DmlServiceImpl:
// shut down the grpc::Server and drain the engine before destroying
// this). Thread-safe.
#ifndef DMLSERVE_SERVER_KSERVE_KSERVE_SERVICE_H_
#define DMLSERVE_SERVER_KSERVE_KSERVE_SERVICE_H_

#include <atomic>
#include <memory>

#include "engine/core/engine.h"
#include "inference/grpc_predict_v2.grpc.pb.h"
#include "server/kserve/infer_runner.h"
#include "server/kserve/model_catalog.h"
#include "server/kserve/model_description.h"
#include "server/kserve/model_statistics.h"
#include "server/kserve/stream_infer_reactor.h"
#include "server/rpc/service.h"
#include "server/security/principal.h"
#include "spdlog/logger.h"

namespace dmls::server::kserve {

// The gRPC service name clients call.
inline constexpr char kKServeServiceName[] = "inference.GRPCInferenceService";

struct KServeOptions {
  ServerFacts facts;      // what ModelConfig reports
  StreamOptions stream;   // ModelStreamInfer's window and byte bound
  // Each call's principal comes from its own token or tenant through it.
  PrincipalSource principals;
};

// The generated service: ModelInfer and ModelStreamInfer raw, the rest
// typed.
using GIS = inference::GRPCInferenceService;
using KServeServiceBase = GIS::WithCallbackMethod_ServerLive<
    GIS::WithCallbackMethod_ServerReady<GIS::WithCallbackMethod_ModelReady<
        GIS::WithCallbackMethod_ServerMetadata<GIS::WithCallbackMethod_ModelMetadata<
            GIS::WithCallbackMethod_ModelConfig<GIS::WithCallbackMethod_ModelStatistics<
                GIS::WithRawCallbackMethod_ModelInfer<
                    GIS::WithRawCallbackMethod_ModelStreamInfer<GIS::Service>>>>>>>>>;

class KServeServiceImpl final : public KServeServiceBase {
 public:
  KServeServiceImpl(DmlServiceImpl* dml, Engine* engine, KServeOptions options,
                    std::shared_ptr<spdlog::logger> logger);

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest* request,
                                       inference::ServerLiveResponse* response) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest* request,
                                        inference::ServerReadyResponse* response) override;
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest* request,
                                           inference::ServerMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* context,
                                        const inference::ModelConfigRequest* request,
                                        inference::ModelConfigResponse* response) override;
  grpc::ServerUnaryReactor* ModelStatistics(
      grpc::CallbackServerContext* context, const inference::ModelStatisticsRequest* request,
      inference::ModelStatisticsResponse* response) override;
  // Request: a serialized ModelInferRequest; response: ModelInferResponse.
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  // ModelInferRequests in, ModelStreamInferResponses out.
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ModelStreamInfer(
      grpc::CallbackServerContext* context) override;

  const ModelCatalog& catalog() const { return catalog_; }

  // What ServerReady and ModelReady answer (with the engine healthy):
  // DmlServer's health, false from the drain on. Thread-safe.
  void SetReady(bool ready) { ready_.store(ready); }

 private:
  // The model named `name` at `version` into *model (null when none), or
  // the NOT_FOUND status (rule KSERVE_MODEL_UNKNOWN or
  // KSERVE_VERSION_UNKNOWN, field `name` or `version`).
  grpc::Status FindModel(const std::string& name, const std::string& version,
                         const ModelEntry** model) const;
  // An inline call: refused once the stop has begun, else answered with
  // the status `fill` returns after filling the response (AnswerInline,
  // rpc/tracked_reactor.h).
  template <typename Fill>
  grpc::ServerUnaryReactor* Inline(Fill fill);
  // An inline call about the model `request` names: FindModel's status,
  // after `fill(model)` when the model is found.
  template <typename Request, typename Fill>
  grpc::ServerUnaryReactor* InlineForModel(const Request& request, Fill fill);

  DmlServiceImpl* const dml_;
  Engine* const engine_;
  const KServeOptions options_;
  const std::shared_ptr<spdlog::logger> logger_;
  const ModelCatalog catalog_;
  ModelStatisticsTable statistics_;  // borrows catalog_
  InferRunner runner_;               // borrows the three above
  std::atomic<bool> ready_{true};
};

}  // namespace dmls::server::kserve

#endif  // DMLSERVE_SERVER_KSERVE_KSERVE_SERVICE_H_
