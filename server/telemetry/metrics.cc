#include "server/telemetry/metrics.h"

#include <exception>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "grpcpp/support/status.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"
#include "prometheus/gauge.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"
#include "server/telemetry/heap_stats.h"

namespace dmls::server {
namespace {

constexpr const char* kMethodNames[kMetricsMethodCount] = {
    "Execute", "ExecuteStream", "ExecuteChain"};

const char* CodeName(absl::StatusCode code) {
  static constexpr const char* kNames[] = {
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
      "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  const int i = static_cast<int>(code);
  return i >= 0 && i < 17 ? kNames[i] : "UNKNOWN";
}

// The OperatorDesc field of a oneof case: "celu", "mvn1"; "" when unknown.
std::string OperatorName(int operator_case) {
  const google::protobuf::FieldDescriptor* field =
      dmlserve::v1::OperatorDesc::descriptor()->FindFieldByNumber(operator_case);
  return field == nullptr ? "" : field->name();
}

// Latency buckets from 50 us to 10 s.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3,
      50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10};
  return *buckets;
}

prometheus::MetricFamily GaugeFamily(std::string name, std::string help) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = prometheus::MetricType::Gauge;
  return family;
}

void AddGauge(prometheus::MetricFamily& family,
              std::vector<prometheus::ClientMetric::Label> labels, double value) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  family.metric.push_back(std::move(metric));
}

}  // namespace

// One device's scheduler observer: the histograms of its label, and its
// queue depth for the gauges.
class Metrics::DeviceObserver final : public sched::SchedulerObserver {
 public:
  DeviceObserver(std::string device, prometheus::Histogram& queue_wait,
                 prometheus::Histogram& execute, prometheus::Histogram& batch)
      : device_(std::move(device)),
        queue_wait_(queue_wait),
        execute_(execute),
        batch_(batch) {}

  void OnQueued() override { depth_.fetch_add(1, std::memory_order_relaxed); }
  void OnDropped(size_t count) override {
    depth_.fetch_sub(static_cast<int64_t>(count), std::memory_order_relaxed);
  }
  void OnBatch(size_t requests, uint64_t /*bytes*/) override {
    depth_.fetch_sub(static_cast<int64_t>(requests), std::memory_order_relaxed);
    batch_.Observe(static_cast<double>(requests));
  }
  void OnWaited(absl::Duration queued) override {
    queue_wait_.Observe(absl::ToDoubleSeconds(queued));
  }
  void OnExecuted(absl::Duration run) override {
    execute_.Observe(absl::ToDoubleSeconds(run));
  }

  const std::string& device() const { return device_; }
  int64_t depth() const { return depth_.load(std::memory_order_relaxed); }

 private:
  const std::string device_;
  prometheus::Histogram& queue_wait_;
  prometheus::Histogram& execute_;
  prometheus::Histogram& batch_;
  std::atomic<int64_t> depth_{0};
};

// The scrape-time gauges.
class Metrics::Gauges final : public prometheus::Collectable {
 public:
  void SetSources(MetricsSources sources) {
    MutexLock lock(&mu_);
    sources_ = std::move(sources);
  }
  void AddObserver(std::shared_ptr<DeviceObserver> observer) {
    MutexLock lock(&mu_);
    observers_.push_back(std::move(observer));
  }

  std::vector<prometheus::MetricFamily> Collect() const override {
    // Outside mu_: mallinfo2 walks (and locks) every malloc arena.
    const HeapStats heap = ReadHeapStats();
    MutexLock lock(&mu_);
    std::vector<prometheus::MetricFamily> out;
    auto depth = GaugeFamily("dmlserve_queue_depth",
                             "Requests queued in the device's scheduler.");
    for (const auto& o : observers_) {
      AddGauge(depth, {{"device", o->device()}}, static_cast<double>(o->depth()));
    }
    out.push_back(std::move(depth));
    auto in_flight = GaugeFamily("dmlserve_in_flight_requests",
                                 "Requests admitted and not yet answered.");
    AddGauge(in_flight, {},
             sources_.in_flight ? static_cast<double>(sources_.in_flight()) : 0);
    out.push_back(std::move(in_flight));

    const std::vector<DeviceInfo> devices =
        sources_.devices ? sources_.devices() : std::vector<DeviceInfo>{};
    auto memory = GaugeFamily("dmlserve_device_memory_bytes",
                              "Dedicated memory of the device (0: unknown).");
    auto cap = GaugeFamily("dmlserve_device_memory_cap_bytes",
                           "Device memory the server may hold (0: no cap).");
    for (size_t i = 0; i < devices.size(); ++i) {
      const std::string label = std::to_string(i);
      AddGauge(memory, {{"device", label}, {"kind", devices[i].kind}, {"name", devices[i].name}},
               static_cast<double>(devices[i].memory_bytes));
      AddGauge(cap, {{"device", label}}, static_cast<double>(devices[i].memory_cap_bytes));
    }
    // One series whatever the number of devices: several engines on
    // adapters of one name would otherwise repeat a label set, which
    // Prometheus drops as duplicate samples.
    auto info = GaugeFamily("dmlserve_build_info",
                            "The server's version and engine backend.");
    std::string backend = sources_.backend;
    if (backend.empty() && !devices.empty()) backend = devices.front().backend;
    AddGauge(info, {{"backend", backend}, {"version", DMLSERVE_VERSION}}, 1);
    out.push_back(std::move(memory));
    out.push_back(std::move(cap));
    out.push_back(std::move(info));

    auto held = GaugeFamily("dmlserve_device_memory_held_bytes",
                            "Device memory held: arenas (request buffers) and "
                            "resident tensors.");
    auto pipelines = GaugeFamily("dmlserve_pipeline_cache_entries",
                                 "Compute pipelines compiled and cached.");
    auto counters = GaugeFamily("dmlserve_engine_stat",
                                "The engine's own counters and figures, by name "
                                "(a gauge: some, such as largest_batch, are not "
                                "monotonic).");
    if (sources_.engine_counters) {
      for (const auto& [name, value] : sources_.engine_counters()) {
        AddGauge(counters, {{"name", name}}, static_cast<double>(value));
        // "gpu1.arena_bytes" on several devices (device "1"),
        // "arena_bytes" on one (device "0").
        const size_t dot = name.rfind('.');
        std::string device = "0";
        if (dot != std::string::npos) {
          const size_t digits = name.find_first_of("0123456789");
          device = digits < dot ? name.substr(digits, dot - digits) : name.substr(0, dot);
        }
        const std::string key = dot == std::string::npos ? name : name.substr(dot + 1);
        if (key == "arena_bytes") {
          AddGauge(held, {{"device", device}, {"kind", "arenas"}}, static_cast<double>(value));
        } else if (key == "resident_bytes") {
          AddGauge(held, {{"device", device}, {"kind", "resident"}}, static_cast<double>(value));
        } else if (key == "pipelines") {
          AddGauge(pipelines, {{"device", device}}, static_cast<double>(value));
        }
      }
    }
    out.push_back(std::move(held));
    out.push_back(std::move(pipelines));
    out.push_back(std::move(counters));

    auto tensors = GaugeFamily("dmlserve_resident_tensors",
                               "Resident tensors held (published and pending).");
    auto tensor_bytes = GaugeFamily("dmlserve_resident_tensor_bytes",
                                    "Bytes reserved by resident tensors.");
    const std::pair<uint64_t, uint64_t> resident =
        sources_.resident ? sources_.resident() : std::pair<uint64_t, uint64_t>{};
    AddGauge(tensors, {}, static_cast<double>(resident.first));
    AddGauge(tensor_bytes, {}, static_cast<double>(resident.second));
    out.push_back(std::move(tensors));
    out.push_back(std::move(tensor_bytes));

    if (heap.known) {
      auto family = GaugeFamily("dmlserve_process_heap_bytes",
                                "The C allocator's memory: in_use (allocated, grows "
                                "with a leak) and free (freed, kept by the allocator).");
      AddGauge(family, {{"state", "in_use"}}, static_cast<double>(heap.in_use_bytes));
      AddGauge(family, {{"state", "free"}}, static_cast<double>(heap.free_bytes));
      out.push_back(std::move(family));
    }
    return out;
  }

 private:
  mutable Mutex mu_;
  MetricsSources sources_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<DeviceObserver>> observers_ ABSL_GUARDED_BY(mu_);
};

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      gauges_(std::make_shared<Gauges>()) {
  requests_ = &prometheus::BuildCounter()
                   .Name("dmlserve_requests_total")
                   .Help("Requests answered, by RPC, operator and status code.")
                   .Register(*registry_);
  auto& duration = prometheus::BuildHistogram()
                       .Name("dmlserve_request_duration_seconds")
                       .Help("Server-side time of a request, admission to answer.")
                       .Register(*registry_);
  auto& bytes_in = prometheus::BuildCounter()
                       .Name("dmlserve_request_bytes_total")
                       .Help("Tensor bytes received in requests.")
                       .Register(*registry_);
  auto& bytes_out = prometheus::BuildCounter()
                        .Name("dmlserve_response_bytes_total")
                        .Help("Tensor bytes sent back in responses.")
                        .Register(*registry_);
  for (int m = 0; m < kMetricsMethodCount; ++m) {
    duration_[m] = &duration.Add({{"method", kMethodNames[m]}}, LatencyBuckets());
    bytes_in_[m] = &bytes_in.Add({{"method", kMethodNames[m]}});
    bytes_out_[m] = &bytes_out.Add({{"method", kMethodNames[m]}});
  }
  queue_wait_ = &prometheus::BuildHistogram()
                     .Name("dmlserve_queue_wait_seconds")
                     .Help("Time a request waited in the scheduler's queue.")
                     .Register(*registry_);
  execute_ = &prometheus::BuildHistogram()
                  .Name("dmlserve_execute_duration_seconds")
                  .Help("Time from a request's hand-over to the device until "
                        "its result.")
                  .Register(*registry_);
  batch_ = &prometheus::BuildHistogram()
                .Name("dmlserve_batch_requests")
                .Help("Requests per batch (one command list).")
                .Register(*registry_);
  const google::protobuf::OneofDescriptor* oneof =
      dmlserve::v1::OperatorDesc::descriptor()->FindOneofByName("operator");
  for (int i = 0; oneof != nullptr && i < oneof->field_count(); ++i) {
    const int number = oneof->field(i)->number();
    if (number > 0 && number < 256 && operator_slots_ < 255) {
      operator_slot_[number] = static_cast<uint8_t>(operator_slots_++);
    }
  }
  const int entries = kMetricsMethodCount * operator_slots_ * kCodeCount;
  request_counters_ = std::make_unique<std::atomic<prometheus::Counter*>[]>(entries);
  for (int i = 0; i < entries; ++i) request_counters_[i].store(nullptr);
}

Metrics::~Metrics() = default;

absl::StatusOr<std::unique_ptr<Metrics>> Metrics::Start(const MetricsOptions& options) {
  std::unique_ptr<Metrics> metrics(new Metrics());
  const std::string bind = absl::StrCat(options.address, ":", options.port);
  try {
    metrics->exposer_ = std::make_unique<prometheus::Exposer>(bind);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat(
        "--metrics_port: cannot serve metrics on ", bind, ": ", e.what()));
  }
  metrics->exposer_->RegisterCollectable(metrics->registry_);
  metrics->exposer_->RegisterCollectable(metrics->gauges_);
  const std::vector<int> ports = metrics->exposer_->GetListeningPorts();
  metrics->port_ = ports.empty() ? 0 : ports.front();
  return metrics;
}

std::unique_ptr<Metrics> Metrics::CreateUnexposed() {
  return std::unique_ptr<Metrics>(new Metrics());
}

void Metrics::SetSources(MetricsSources sources) {
  gauges_->SetSources(std::move(sources));
}

int Metrics::RequestSlot(MetricsMethod method, int operator_case, bool chain,
                         absl::StatusCode code) const {
  const int op = chain ? 1
                       : operator_case >= 0 && operator_case < 256
                             ? operator_slot_[operator_case]
                             : 0;
  int c = static_cast<int>(code);
  if (c < 0 || c >= kCodeCount) c = static_cast<int>(absl::StatusCode::kUnknown);
  return (static_cast<int>(method) * operator_slots_ + op) * kCodeCount + c;
}

prometheus::Counter& Metrics::RequestCounter(int slot, MetricsMethod method,
                                             int operator_case, bool chain,
                                             absl::StatusCode code) {
  std::atomic<prometheus::Counter*>& entry = request_counters_[slot];
  if (prometheus::Counter* counter = entry.load(std::memory_order_acquire)) {
    return *counter;
  }
  MutexLock lock(&mu_);
  prometheus::Counter* counter = entry.load(std::memory_order_relaxed);
  if (counter == nullptr) {
    std::string op = chain ? "chain" : OperatorName(operator_case);
    if (!chain && (operator_case < 0 || operator_case >= 256 ||
                   operator_slot_[operator_case] == 0)) {
      op.clear();  // one series for every case the table does not know
    }
    counter = &requests_->Add({{"method", kMethodNames[static_cast<int>(method)]},
                               {"operator", op},
                               {"code", CodeName(code)}});
    entry.store(counter, std::memory_order_release);
  }
  return *counter;
}

void Metrics::RecordRequest(MetricsMethod method, int operator_case, bool chain,
                            absl::StatusCode code, absl::Duration total,
                            uint64_t bytes_in, uint64_t bytes_out) {
  const int m = static_cast<int>(method);
  RequestCounter(RequestSlot(method, operator_case, chain, code), method,
                 operator_case, chain, code)
      .Increment();
  duration_[m]->Observe(absl::ToDoubleSeconds(total));
  bytes_in_[m]->Increment(static_cast<double>(bytes_in));
  bytes_out_[m]->Increment(static_cast<double>(bytes_out));
}

std::shared_ptr<sched::SchedulerObserver> Metrics::ObserverFor(
    const std::string& device) {
  const prometheus::Labels labels{{"device", device}};
  auto observer = std::make_shared<DeviceObserver>(
      device, queue_wait_->Add(labels, LatencyBuckets()),
      execute_->Add(labels, LatencyBuckets()),
      batch_->Add(labels, prometheus::Histogram::BucketBoundaries{
                              1, 2, 4, 8, 16, 32, 64, 128, 256}));
  gauges_->AddObserver(observer);
  return observer;
}

std::string Metrics::TextExposition() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (prometheus::MetricFamily& f : gauges_->Collect()) families.push_back(std::move(f));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace dmls::server
