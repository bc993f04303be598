// Per-model counters for ModelStatistics: inferences that succeeded and
// failed, with their total time in the server (from the request's arrival
// to its response; ExecuteResponse.server_time_us for those the engine
// ran), and the time of the last one.
//
// What the scheduler knows per request (queue wait, device time) is not
// reported per request today (SchedulerObserver sums them per device, for
// Prometheus), so `queue` and `compute_infer` stay empty; Prometheus has
// them per device (dmlserve_queue_wait_seconds,
// dmlserve_execute_duration_seconds).
//
// Thread-safe: Record from any thread (atomics), Report concurrently.
#ifndef DMLSERVE_SERVER_KSERVE_MODEL_STATISTICS_H_
#define DMLSERVE_SERVER_KSERVE_MODEL_STATISTICS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include "absl/strings/string_view.h"

#include "absl/time/time.h"
#include "inference/grpc_predict_v2.pb.h"
#include "server/kserve/model_catalog.h"

namespace dmls::server::kserve {

class ModelStatisticsTable {
 public:
  // One row per model of `catalog`, which must outlive this.
  explicit ModelStatisticsTable(const ModelCatalog* catalog);

  // One inference of `model` (an entry of the catalog) finished at `end`.
  void Record(const ModelEntry& model, bool ok, absl::Duration duration, absl::Time end);

  // The rows of every model (`name` empty) or of `name`; false when `name`
  // names no model.
  bool Report(absl::string_view name, inference::ModelStatisticsResponse* out) const;

 private:
  struct Row {
    std::atomic<uint64_t> success_count{0};
    std::atomic<uint64_t> success_ns{0};
    std::atomic<uint64_t> fail_count{0};
    std::atomic<uint64_t> fail_ns{0};
    std::atomic<uint64_t> last_ms{0};
  };
  void Fill(size_t index, inference::ModelStatistics* out) const;

  const ModelCatalog* const catalog_;
  const std::unique_ptr<Row[]> rows_;
};

}  // namespace dmls::server::kserve

#endif  // DMLSERVE_SERVER_KSERVE_MODEL_STATISTICS_H_
