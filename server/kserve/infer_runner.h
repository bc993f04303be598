// One ModelInfer from request to response, shared by the unary ModelInfer
// and ModelStreamInfer: infer_mapping.h turns the request into an
// ExecuteRequest, the RequestProcessor runs it (the admission, batching
// and engines of every Execute), and the outcome comes back as a
// ModelInferResponse or an error whose field paths name the KServe request.
// Every inference of a known model is counted in the statistics table.
//
// Ownership: InferRunner borrows the catalog, the processor and the table,
// which must outlive every call in flight. Thread-safe.
#ifndef DMLSERVE_SERVER_KSERVE_INFER_RUNNER_H_
#define DMLSERVE_SERVER_KSERVE_INFER_RUNNER_H_

#include <memory>

#include "absl/functional/any_invocable.h"
#include "inference/grpc_predict_v2.pb.h"
#include "server/kserve/model_catalog.h"
#include "server/kserve/model_statistics.h"
#include "server/mapping/status_mapping.h"
#include "server/request_processor.h"

namespace dmls::server::kserve {

struct InferOutcome {
  RequestError error;  // ok() on success
  inference::ModelInferResponse response;  // on success
  // The engine's outcome (its output moved into `response`), kept for
  // what admission gave the request (its share of the memory budget):
  // hold it until the response has been written, then let it go.
  ExecuteOutcome executed;
};
using InferCallback = absl::AnyInvocable<void(InferOutcome)>;

class InferRunner {
 public:
  InferRunner(const ModelCatalog* catalog, RequestProcessor* processor,
              ModelStatisticsTable* statistics)
      : catalog_(catalog), processor_(processor), statistics_(statistics) {}

  // Payloads are moved out of `request`. `done` is called exactly once, on
  // this thread when the request fails before the engine, otherwise from
  // the engine's completion.
  void Run(inference::ModelInferRequest& request, CallContext context, InferCallback done);

  const ModelCatalog& catalog() const { return *catalog_; }
  const ModelStatisticsTable& statistics() const { return *statistics_; }

 private:
  const ModelCatalog* const catalog_;
  RequestProcessor* const processor_;
  ModelStatisticsTable* const statistics_;
};

}  // namespace dmls::server::kserve

#endif  // DMLSERVE_SERVER_KSERVE_INFER_RUNNER_H_
