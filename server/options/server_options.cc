#include "server/options/server_options.h"

#include <algorithm>
#include <climits>
#include <initializer_list>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "grpc/grpc.h"
#include "server/options/physical_memory.h"

namespace dmls::server {
namespace {

// A whole-number option and the closed range it must lie in.
struct Range {
  const char* flag;
  int64_t value;
  int64_t min;
  int64_t max;
};

// Seconds options become milliseconds in an int channel argument or timer:
// the most any of them may be.
inline constexpr int kMaxSeconds = 1000000;

absl::Status CheckRanges(std::initializer_list<Range> ranges) {
  for (const Range& r : ranges) {
    if (r.value < r.min || r.value > r.max) {
      return absl::InvalidArgumentError(absl::StrCat(
          r.flag, " must be in [", r.min, ", ", r.max, "], got ", r.value));
    }
  }
  return absl::OkStatus();
}

// Counts and sizes that must not be 0.
absl::Status CheckAtLeastOne(
    std::initializer_list<std::pair<const char*, uint64_t>> options) {
  for (const auto& [flag, value] : options) {
    if (value == 0) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " must be at least 1"));
    }
  }
  return absl::OkStatus();
}

absl::Status Validate(const NetworkOptions& o) {
  if (o.address.empty()) {
    return absl::InvalidArgumentError("--address must not be empty");
  }
  // gRPC takes the message size as an int.
  if (o.max_message_bytes < 1024 || o.max_message_bytes > INT_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_message_bytes must be in [1024, ", INT_MAX,
                     "], got ", o.max_message_bytes));
  }
  return CheckRanges({
      {"--port", o.port, 0, 65535},
      {"--keepalive_time_seconds", o.keepalive_time_seconds, 0, kMaxSeconds},
      {"--max_connection_idle_seconds", o.max_connection_idle_seconds, 0, kMaxSeconds},
      {"--handshake_timeout_seconds", o.handshake_timeout_seconds, 1, kMaxSeconds},
      {"--keepalive_timeout_seconds", o.keepalive_timeout_seconds, 1, kMaxSeconds},
  });
}

absl::Status Validate(const EngineOptions& o) {
  if (absl::Status s = CheckRanges({{"--worker_threads", o.worker_threads, 0, 1024}});
      !s.ok()) {
    return s;
  }
  if (o.device != "auto" && o.device != "gpu" && o.device != "software" &&
      o.device != "cpu" && o.device != "directml") {
    return absl::InvalidArgumentError(
        absl::StrCat("--device must be auto, gpu, software, cpu or directml, got \"",
                     o.device, "\""));
  }
  if (o.device == "directml" && !o.adapters.empty()) {
    return absl::InvalidArgumentError(
        "--adapters runs one Direct3D 12 engine per adapter; --device=directml "
        "runs one engine (name its adapter with --adapter)");
  }
  if (!o.adapter.empty() && !o.adapters.empty()) {
    return absl::InvalidArgumentError(
        "--adapter and --adapters exclude each other (--adapter=X is "
        "--adapters with the first adapter matching X)");
  }
  if (o.device == "cpu" && (!o.adapter.empty() || !o.adapters.empty())) {
    return absl::InvalidArgumentError(
        "--adapter/--adapters select Direct3D 12 adapters; --device=cpu has "
        "none");
  }
  return absl::OkStatus();
}

absl::Status Validate(const BatchOptions& o) {
  if (absl::Status s = CheckRanges({{"--max_batch_requests", o.max_batch_requests, 1, 4096}});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckAtLeastOne({{"--max_batch_bytes", o.max_batch_bytes},
                                        {"--max_queue_depth", o.max_queue_depth}});
      !s.ok()) {
    return s;
  }
  if (o.max_queue_delay_us > 1000000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_queue_delay_us must be at most 1000000 (1 s), got ",
        o.max_queue_delay_us));
  }
  return absl::OkStatus();
}

absl::Status Validate(const LimitOptions& o) {
  if (absl::Status s = CheckAtLeastOne({{"--max_in_flight", o.max_in_flight},
                                        {"--stream_queue_bytes", o.stream_queue_bytes},
                                        {"--stream_window", o.stream_window},
                                        {"--max_tensor_bytes", o.max_tensor_bytes}});
      !s.ok()) {
    return s;
  }
  if (o.max_output_ratio_limit < o.max_output_ratio) {
    return absl::InvalidArgumentError(
        "--max_output_ratio_limit must be at least --max_output_ratio");
  }
  return absl::OkStatus();
}

absl::Status Validate(const ResidentOptions& o) {
  return CheckAtLeastOne({{"--max_chain_steps", o.max_chain_steps},
                          {"--chunk_bytes", o.chunk_bytes}});
}

absl::Status Validate(const TelemetryOptions& o) {
  if (absl::Status s = CheckRanges({{"--metrics_port", o.metrics_port, 0, 65535}});
      !s.ok()) {
    return s;
  }
  if (o.metrics_port != 0 && o.metrics_address.empty()) {
    return absl::InvalidArgumentError("--metrics_address must not be empty");
  }
  if (o.log_format != "text" && o.log_format != "json") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--log_format must be text or json, got \"", o.log_format, "\""));
  }
  static constexpr const char* kLevels[] = {
      "trace", "debug", "info", "warn", "warning", "error", "critical", "off"};
  for (const char* level : kLevels) {
    if (o.log_level == level) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--log_level must be one of trace, debug, info, warn, error, "
      "critical, off; got \"",
      o.log_level, "\""));
}

absl::Status Validate(const StopOptions& o) {
  return CheckRanges({
      {"--drain_seconds", o.drain_seconds, 0, kMaxSeconds},
      {"--shutdown_grace_seconds", o.shutdown_grace_seconds, 0, kMaxSeconds},
  });
}

}  // namespace

std::vector<std::pair<std::string, int>> ConnectionChannelArgs(
    const NetworkOptions& o) {
  std::vector<std::pair<std::string, int>> args = {
      {GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
       o.handshake_timeout_seconds * 1000},
      {GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
       kMinClientPingIntervalSeconds * 1000},
  };
  if (o.keepalive_time_seconds > 0) {
    args.push_back(
        {GRPC_ARG_KEEPALIVE_TIME_MS, o.keepalive_time_seconds * 1000});
    args.push_back(
        {GRPC_ARG_KEEPALIVE_TIMEOUT_MS, o.keepalive_timeout_seconds * 1000});
    // Ping idle connections too (a dead peer rarely has calls), and do not
    // stop after gRPC's default of two pings without data.
    args.push_back({GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1});
    args.push_back({GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0});
  }
  if (o.max_connection_idle_seconds > 0) {
    args.push_back({GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                    o.max_connection_idle_seconds * 1000});
  }
  return args;
}

std::string ListenAddress(const NetworkOptions& o) {
  // An IPv6 literal ("::", "::1") needs brackets before the port.
  if (absl::StrContains(o.address, ':') && !absl::StartsWith(o.address, "[")) {
    return absl::StrCat("[", o.address, "]:", o.port);
  }
  return absl::StrCat(o.address, ":", o.port);
}

absl::StatusOr<std::optional<uint64_t>> ParseMemoryCap(const std::string& text) {
  if (text == "auto") return std::optional<uint64_t>();
  absl::StatusOr<uint64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--gpu_memory_cap_bytes must be auto, 0 (no cap) or a byte count: ",
        bytes.status().message()));
  }
  return std::optional<uint64_t>(*bytes);
}

sched::SchedulerOptions EngineSchedulerOptions(const BatchOptions& o) {
  sched::SchedulerOptions s;
  s.policy.max_batch_requests = o.max_batch_requests;
  s.policy.max_batch_bytes = o.max_batch_bytes;
  s.policy.max_queue_delay =
      absl::Microseconds(static_cast<int64_t>(o.max_queue_delay_us));
  s.policy.max_queue_depth = o.max_queue_depth;
  s.admission.reset();  // RequestProcessor admitted each request already
  return s;
}

absl::Status ValidateOptions(const ServerOptions& o) {
  for (absl::Status s : {Validate(o.network), Validate(o.engine), Validate(o.batching),
                         Validate(o.limits), Validate(o.resident), Validate(o.telemetry),
                         Validate(o.stop)}) {
    if (!s.ok()) return s;
  }
  if (o.telemetry.metrics_port != 0 && o.telemetry.metrics_port == o.network.port) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics_port must differ from --port (both ", o.network.port, ")"));
  }
  return absl::OkStatus();
}

uint64_t EffectiveMemoryBudget(const ServerOptions& o) {
  if (o.limits.memory_budget_bytes != 0) return o.limits.memory_budget_bytes;
  return std::max<uint64_t>(PhysicalMemoryBytes() / 4,
                            4 * o.network.max_message_bytes);
}

uint64_t MaxChunkBytes(const ServerOptions& o) {
  const uint64_t message = o.network.max_message_bytes;
  return message - std::min(kChunkOverheadBytes, message / 4);
}

uint64_t DefaultChunkBytes(const ServerOptions& o) {
  return std::min(o.resident.chunk_bytes, MaxChunkBytes(o));
}

}  // namespace dmls::server
