// Metrics: Prometheus exposition (Debian's prometheus-cpp) on a port of its
// own (--metrics_port). Families:
//
//   dmlserve_requests_total{method,operator,code}       counter
//   dmlserve_request_duration_seconds{method}           histogram (server side, total)
//   dmlserve_request_bytes_total{method}                counter (tensor bytes in)
//   dmlserve_response_bytes_total{method}               counter (tensor bytes out)
//   dmlserve_queue_wait_seconds{device}                 histogram (scheduler queue)
//   dmlserve_execute_duration_seconds{device}           histogram (runner, per request)
//   dmlserve_batch_requests{device}                     histogram (requests per batch)
//   dmlserve_queue_depth{device}                        gauge
//   dmlserve_in_flight_requests                         gauge
//   dmlserve_device_memory_bytes{device,kind,name}      gauge (the adapter's)
//   dmlserve_device_memory_cap_bytes{device}            gauge (0: no cap)
//   dmlserve_device_memory_held_bytes{device,kind}      gauge (kind: arenas, resident)
//   dmlserve_pipeline_cache_entries{device}             gauge
//   dmlserve_resident_tensors, dmlserve_resident_tensor_bytes   gauges
//   dmlserve_process_heap_bytes{state}                  gauge (in_use, free; glibc only)
//   dmlserve_engine_stat{name}                          gauge (every engine counter)
//   dmlserve_build_info{version,backend}                gauge, 1 (one series)
//
// `device` is the engine's index ("0", "1": engine_factory.h's order, the
// order of GetCapabilities.devices) in every family that has it; the
// adapter's name is the `name` label of dmlserve_device_memory_bytes.
// `method` is the RPC (Execute, ExecuteStream, ExecuteChain); `operator` the
// OperatorDesc field ("celu", "mvn1") or "chain"; `code` the gRPC status
// name. Requests that cannot be parsed at all are not counted. Scrape-time
// figures come from the Sources callbacks.
//
// Cost: a server without --metrics_port has no Metrics object (null
// pointers, one branch per request). With one, RecordRequest finds its
// counter in a fixed table without a lock (the series is made under `mu_`
// only the first time a method x operator x code is seen), then updates
// prometheus-cpp's counters (atomics) and one histogram (its own mutex).
//
// Thread-safe: the Record/observer methods run on gRPC and engine threads,
// Collect on the exposer's thread.
#ifndef DMLSERVE_SERVER_TELEMETRY_METRICS_H_
#define DMLSERVE_SERVER_TELEMETRY_METRICS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/core/engine.h"
#include "engine/core/mutex.h"
#include "engine/sched/scheduler_observer.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace prometheus {
class Exposer;
}

namespace dmls::server {

// The RPCs whose requests are counted.
enum class MetricsMethod : uint8_t { kExecute, kExecuteStream, kExecuteChain };
inline constexpr int kMetricsMethodCount = 3;

struct MetricsOptions {
  std::string address = "0.0.0.0";
  int port = 0;  // 0: a free port (tests)
};

// What the gauges read at scrape time. Each may be empty.
struct MetricsSources {
  std::function<std::vector<DeviceInfo>()> devices;
  std::function<std::vector<std::pair<std::string, uint64_t>>()> engine_counters;
  std::function<uint32_t()> in_flight;
  std::function<std::pair<uint64_t, uint64_t>()> resident;  // tensors, bytes
  std::string backend;  // dmlserve_build_info; empty: the first device's
};

class Metrics {
 public:
  // Serves /metrics on options.address:options.port; UNAVAILABLE when the
  // port cannot be bound.
  static absl::StatusOr<std::unique_ptr<Metrics>> Start(const MetricsOptions& options);
  // Without an HTTP endpoint (tests read TextExposition).
  static std::unique_ptr<Metrics> CreateUnexposed();
  ~Metrics();

  // The port /metrics is served on (0 when unexposed).
  int port() const { return port_; }

  // Set once, before serving.
  void SetSources(MetricsSources sources);

  // One finished request. `operator_case` is the OperatorDesc oneof case
  // (0 with `chain` for chains or unreadable requests).
  void RecordRequest(MetricsMethod method, int operator_case, bool chain,
                     absl::StatusCode code, absl::Duration total,
                     uint64_t bytes_in, uint64_t bytes_out);

  // The scheduler observer of one device (label "0", "1", ...).
  std::shared_ptr<sched::SchedulerObserver> ObserverFor(const std::string& device);

  // Everything in Prometheus text format, as /metrics serves it.
  std::string TextExposition() const;

 private:
  class DeviceObserver;
  class Gauges;

  Metrics();

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<Gauges> gauges_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;

  // Set in the constructor; Add (RequestCounter) is serialised by mu_.
  prometheus::Family<prometheus::Counter>* requests_ ABSL_PT_GUARDED_BY(mu_) = nullptr;
  prometheus::Family<prometheus::Histogram>* queue_wait_ = nullptr;
  prometheus::Family<prometheus::Histogram>* execute_ = nullptr;
  prometheus::Family<prometheus::Histogram>* batch_ = nullptr;
  // Per method, made in the constructor.
  prometheus::Histogram* duration_[kMetricsMethodCount] = {};
  prometheus::Counter* bytes_in_[kMetricsMethodCount] = {};
  prometheus::Counter* bytes_out_[kMetricsMethodCount] = {};

  // The requests_total series of (method, operator slot, code), made on
  // first use: slot 0 is an unknown operator case, 1 a chain, 2... the
  // OperatorDesc oneof fields in declaration order (operator_slot_ maps a
  // field number to its slot). Entries only go from null to a series that
  // lives as long as the registry; they are written under `mu_` (which
  // also serialises Family::Add) and read without it.
  static constexpr int kCodeCount = 17;  // absl::StatusCode 0..16
  int RequestSlot(MetricsMethod method, int operator_case, bool chain,
                  absl::StatusCode code) const;
  prometheus::Counter& RequestCounter(int slot, MetricsMethod method,
                                      int operator_case, bool chain,
                                      absl::StatusCode code);
  uint8_t operator_slot_[256] = {};
  int operator_slots_ = 2;
  std::unique_ptr<std::atomic<prometheus::Counter*>[]> request_counters_;
  Mutex mu_;
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_TELEMETRY_METRICS_H_
