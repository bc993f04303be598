// Per-model counters for ModelStatistics (Triton's statistics extension of
// the Open Inference Protocol), for the inferences that arrived through
// inference.GRPCInferenceService (ModelInfer, ModelStreamInfer):
//
//   success, fail        count and total time in the server, from the
//                        request's arrival to its response
//   queue                time in the scheduler's queue (ExecuteTiming::queued)
//   compute_input        Runner::Prepare: planning and staging the input
//   compute_infer        from the hand-over to the runner until the result,
//                        less the output copy
//   compute_output       copying the output out of device-visible memory
//   inference_count      successful inferences (= success.count)
//   execution_count      successful executions: requests the engine ran as
//                        one coalesced dispatch count once (a request of an
//                        engine that does not say counts as one)
//
// batch_stats is left empty (the compute times per execution size).
//
// The queue and compute counts are the successes (the engine reports its
// timing with a result; a failed request has only `fail`). dmlserve.v1
// Execute calls of the same operator are not counted here (docs/KSERVE.md).
//
// Thread-safe: Record from any thread (relaxed atomics, no lock), Report
// concurrently (a report may see one inference half counted).
#ifndef DMLSERVE_SERVER_KSERVE_MODEL_STATISTICS_H_
#define DMLSERVE_SERVER_KSERVE_MODEL_STATISTICS_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/core/execute_request.h"
#include "inference/grpc_predict_v2.pb.h"
#include "server/kserve/model_catalog.h"

namespace dmls::server::kserve {

class ModelStatisticsTable {
 public:
  // One row per model of `catalog`, which must outlive this.
  explicit ModelStatisticsTable(const ModelCatalog* catalog);

  // One inference of `model` (an entry of the catalog) that succeeded with
  // the engine's `timing` and took `duration` in the server, ending at `end`.
  void RecordSuccess(const ModelEntry& model, const ExecuteTiming& timing,
                     absl::Duration duration, absl::Time end);
  // One that failed (before or in the engine).
  void RecordFailure(const ModelEntry& model, absl::Duration duration, absl::Time end);

  // The rows of every model (`name` empty) or of `name`; false when `name`
  // names no model.
  bool Report(absl::string_view name, inference::ModelStatisticsResponse* out) const;

 private:
  struct Duration {
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> ns{0};
    void Add(absl::Duration d);
    void Fill(inference::StatisticDuration* out) const;
  };
  struct Row {
    Duration success, fail, queue, input, infer, output;
    std::atomic<uint64_t> executions{0};
    std::atomic<uint64_t> last_ms{0};
  };
  Row& RowOf(const ModelEntry& model);
  void Fill(size_t index, inference::ModelStatistics* out) const;

  const ModelCatalog* const catalog_;
  const std::unique_ptr<Row[]> rows_;
};

}  // namespace dmls::server::kserve

#endif  // DMLSERVE_SERVER_KSERVE_MODEL_STATISTICS_H_
