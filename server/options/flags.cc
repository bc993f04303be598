// dmlserve's flags, group by group in the order of ServerOptions
// (server_options.h), each with its group's default, and their reading.
#include "server/options/flags.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "server/options/byte_size.h"

namespace {
const dmls::server::NetworkOptions kNetworkOptions;
const dmls::server::EngineOptions kEngineOptions;
const dmls::server::BatchOptions kBatchOptions;
const dmls::server::LimitOptions kLimitOptions;
const dmls::server::ResidentOptions kResidentOptions;
const dmls::server::SecurityOptions kSecurityOptions;
const dmls::server::TelemetryOptions kTelemetryOptions;
const dmls::server::StopOptions kStopOptions;
}  // namespace

using dmls::server::ByteSize;

// NetworkOptions.
ABSL_FLAG(std::string, address, kNetworkOptions.address,
          "Address to listen on (0.0.0.0 or :: for all interfaces).");
ABSL_FLAG(int, port, kNetworkOptions.port, "TCP port; 0 picks a free one.");
ABSL_FLAG(ByteSize, max_message_bytes, ByteSize{kNetworkOptions.max_message_bytes},
          "Largest gRPC message received or sent, in bytes.");
ABSL_FLAG(int, handshake_timeout_seconds, kNetworkOptions.handshake_timeout_seconds,
          "Seconds a new connection has to send the HTTP/2 preface and "
          "SETTINGS before it is closed.");
ABSL_FLAG(int, keepalive_time_seconds, kNetworkOptions.keepalive_time_seconds,
          "Seconds without activity after which the server pings a "
          "connection (with or without calls); 0 = no keepalive pings.");
ABSL_FLAG(int, keepalive_timeout_seconds, kNetworkOptions.keepalive_timeout_seconds,
          "Seconds a keepalive ping may go unanswered before the connection "
          "is closed.");
ABSL_FLAG(int, max_connection_idle_seconds,
          kNetworkOptions.max_connection_idle_seconds,
          "Seconds a connection may stay without calls before the server "
          "closes it (GOAWAY); 0 = never.");

// EngineOptions.
ABSL_FLAG(std::string, device, kEngineOptions.device,
          "Engine: auto (Direct3D 12 on every discrete GPU, else one GPU, "
          "else the software adapter, lavapipe; never the cpu engine: "
          "without Direct3D 12 the server fails to start), gpu (every "
          "discrete GPU, else one GPU), software, cpu, or directml "
          "(Windows only: Microsoft's DirectML.dll, --directml_dll, on "
          "--adapter's or the first GPU; a reference engine, one request at a "
          "time).");
ABSL_FLAG(std::string, directml_dll, kEngineOptions.directml_dll,
          "--device=directml: the DirectML.dll to load (a path, or a bare "
          "name found beside dmlserve.exe first).");
ABSL_FLAG(std::string, adapter, kEngineOptions.adapter,
          "One Direct3D 12 adapter to use (the first whose description "
          "contains this).");
ABSL_FLAG(std::string, adapters, kEngineOptions.adapters,
          "Direct3D 12 adapters to run engines on, one each: comma-separated "
          "indices or name substrings (a name selects every adapter that has "
          "it). Default: every discrete GPU for --device=gpu/auto. Naming an "
          "adapter twice (0,0) runs two engines on it (testing).");
ABSL_FLAG(std::string, gpu_memory_cap_bytes, "auto",
          "Device memory each GPU engine may hold (pools, arenas, resident "
          "tensors): auto = half of its adapter's dedicated memory (no cap "
          "when unknown), 0 = no cap, or bytes (8G, 512M, 1073741824). "
          "GetCapabilities reports the cap in effect.");
ABSL_FLAG(uint64_t, gpu_cache_mib, kEngineOptions.gpu_cache_mib,
          "The GPUs' L2 cache in MiB (D3D12 does not report it), which sizes "
          "the row blocks of MVN plans; 0 = assume 32 MiB. H100/H200: 50.");
ABSL_FLAG(int, worker_threads, kEngineOptions.worker_threads,
          "Engine worker threads; 0 = one per hardware thread.");

// BatchOptions.
ABSL_FLAG(uint32_t, max_batch_requests, kBatchOptions.max_batch_requests,
          "Most requests in one batch (one GPU command list; same-kernel "
          "element-wise requests coalesce into one dispatch). 1 turns "
          "batching off.");
ABSL_FLAG(ByteSize, max_batch_bytes, ByteSize{kBatchOptions.max_batch_bytes},
          "Most payload bytes (inputs plus outputs) in one batch; a larger "
          "request runs alone.");
ABSL_FLAG(uint64_t, max_queue_delay_us, kBatchOptions.max_queue_delay_us,
          "Longest a request waits for a fuller batch once the device could "
          "take it, in microseconds; 0 never waits (batches still form "
          "while the device is busy).");
ABSL_FLAG(uint32_t, max_queue_depth, kBatchOptions.max_queue_depth,
          "Requests queued for the engine beyond which new ones get "
          "RESOURCE_EXHAUSTED (QUEUE_FULL).");

// LimitOptions.
ABSL_FLAG(uint32_t, max_in_flight, kLimitOptions.max_in_flight,
          "Executions in flight server-wide before RESOURCE_EXHAUSTED.");
ABSL_FLAG(ByteSize, max_tensor_bytes, ByteSize{kLimitOptions.max_tensor_bytes},
          "Largest total_tensor_size_in_bytes of one tensor before "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(ByteSize, memory_budget_bytes, ByteSize{kLimitOptions.memory_budget_bytes},
          "Host memory the requests in flight may hold (estimated as twice "
          "their payload plus twice their output, until the response is "
          "written; a WriteTensor chunk until the engine has copied it); "
          "beyond it RESOURCE_EXHAUSTED (MEMORY_BUDGET). 0 = a quarter of "
          "physical memory, at least 4 x max_message_bytes.");
ABSL_FLAG(uint64_t, max_output_ratio, kLimitOptions.max_output_ratio,
          "Output bytes per payload byte a request may ask for above 1 MiB of "
          "output; 0 = no limit.");
ABSL_FLAG(uint64_t, max_output_ratio_limit, kLimitOptions.max_output_ratio_limit,
          "The most a call may raise max_output_ratio to (dmls-max-output-ratio "
          "metadata).");
ABSL_FLAG(uint32_t, stream_window, kLimitOptions.stream_window,
          "Requests one ExecuteStream may have unanswered before the server "
          "stops reading it (backpressure).");
ABSL_FLAG(ByteSize, stream_queue_bytes, ByteSize{kLimitOptions.stream_queue_bytes},
          "Response bytes one ExecuteStream may have waiting before the server "
          "stops reading it.");

// ResidentOptions.
ABSL_FLAG(ByteSize, resident_bytes_per_principal,
          ByteSize{kResidentOptions.resident_bytes_per_principal},
          "Bytes of resident tensors one principal may hold.");
ABSL_FLAG(ByteSize, resident_bytes_total, ByteSize{kResidentOptions.resident_bytes_total},
          "Bytes of resident tensors all principals together may hold.");
ABSL_FLAG(uint64_t, resident_ttl_seconds, kResidentOptions.resident_ttl_seconds,
          "Time to live of a resident tensor created without one; 0 = none.");
ABSL_FLAG(uint32_t, max_chain_steps, kResidentOptions.max_chain_steps,
          "Most operators in one ExecuteChain.");
ABSL_FLAG(ByteSize, chunk_bytes, ByteSize{kResidentOptions.chunk_bytes},
          "Default chunk of ReadTensor and ExecuteChunked responses, in bytes.");

// SecurityOptions.
ABSL_FLAG(std::string, tls_cert_file, kSecurityOptions.tls_cert_file,
          "PEM certificate chain of the gRPC port: serve TLS (with "
          "--tls_key_file). Re-read when it changes (--tls_reload_seconds).");
ABSL_FLAG(std::string, tls_key_file, kSecurityOptions.tls_key_file,
          "PEM private key for --tls_cert_file.");
ABSL_FLAG(std::string, tls_client_ca_file, kSecurityOptions.tls_client_ca_file,
          "PEM CA bundle that client certificates must chain to: mutual TLS "
          "(see --tls_client_auth). A verified client certificate's common "
          "name becomes the caller's principal when it sends no token.");
ABSL_FLAG(std::string, tls_client_auth, kSecurityOptions.tls_client_auth,
          "With --tls_client_ca_file: require (default; no handshake "
          "without a valid client certificate), optional (verified when "
          "sent) or none.");
ABSL_FLAG(int, tls_reload_seconds, kSecurityOptions.tls_reload_seconds,
          "How often the TLS files are checked for changes (rotation "
          "without a restart).");
ABSL_FLAG(std::string, auth_tokens_file, kSecurityOptions.auth_tokens_file,
          "Bearer tokens (needs TLS): lines 'TOKEN PRINCIPAL "
          "[scopes=execute,tensors] [expires=RFC3339]'. Calls without a "
          "valid 'authorization: Bearer TOKEN' get UNAUTHENTICATED, without "
          "the method's scope PERMISSION_DENIED. Re-read on SIGHUP and "
          "when it changes (--auth_tokens_poll_ms).");
ABSL_FLAG(int, auth_tokens_poll_ms, kSecurityOptions.auth_tokens_poll_ms,
          "How often --auth_tokens_file's modification time and size are "
          "checked; a change reloads it (the reload trigger on Windows, "
          "which has no SIGHUP). 0 = only on SIGHUP.");
ABSL_FLAG(std::string, auth_exempt, kSecurityOptions.auth_exempt,
          "Methods reachable without a token: health, reflection and/or "
          "method path prefixes, comma-separated; empty = none.");
ABSL_FLAG(bool, tenant_from_peer, kSecurityOptions.tenant_from_peer,
          "Resident tensors of a caller with no token, client certificate "
          "or tenant metadata belong to its connection's address. Only for "
          "one trusted client reaching the server directly (behind a proxy "
          "every caller has the proxy's address); off, such a caller gets "
          "INVALID_ARGUMENT (TENANT_REQUIRED) for tensor operations.");

// TelemetryOptions.
ABSL_FLAG(int, metrics_port, kTelemetryOptions.metrics_port,
          "Serve Prometheus metrics on http://ADDRESS:PORT/metrics; 0 = off. "
          "Off by default so that servers sharing a host do not fight over "
          "one port; the container image serves them on 9464.");
ABSL_FLAG(std::string, metrics_address, kTelemetryOptions.metrics_address,
          "Address of the metrics port (all interfaces by default, so a "
          "Prometheus elsewhere can scrape it).");
ABSL_FLAG(std::string, log_level, kTelemetryOptions.log_level,
          "trace, debug, info, warn, error, critical or off.");
ABSL_FLAG(std::string, log_format, kTelemetryOptions.log_format, "text or json.");

// StopOptions.
ABSL_FLAG(int, drain_seconds, kStopOptions.drain_seconds,
          "On SIGTERM/SIGINT, seconds the server keeps accepting and serving "
          "calls with health NOT_SERVING, so that load balancers move away; "
          "a second signal ends the drain. 0 = stop accepting at once.");
ABSL_FLAG(int, shutdown_grace_seconds, kStopOptions.shutdown_grace_seconds,
          "After the drain, seconds calls in flight get before they are "
          "cancelled.");

namespace dmls::server {

namespace {

NetworkOptions NetworkOptionsFromFlags() {
  NetworkOptions o;
  o.address = absl::GetFlag(FLAGS_address);
  o.port = absl::GetFlag(FLAGS_port);
  o.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes).bytes;
  o.handshake_timeout_seconds = absl::GetFlag(FLAGS_handshake_timeout_seconds);
  o.keepalive_time_seconds = absl::GetFlag(FLAGS_keepalive_time_seconds);
  o.keepalive_timeout_seconds = absl::GetFlag(FLAGS_keepalive_timeout_seconds);
  o.max_connection_idle_seconds = absl::GetFlag(FLAGS_max_connection_idle_seconds);
  return o;
}

absl::StatusOr<EngineOptions> EngineOptionsFromFlags() {
  EngineOptions o;
  o.device = absl::GetFlag(FLAGS_device);
  o.directml_dll = absl::GetFlag(FLAGS_directml_dll);
  o.adapter = absl::GetFlag(FLAGS_adapter);
  o.adapters = absl::GetFlag(FLAGS_adapters);
  absl::StatusOr<std::optional<uint64_t>> cap =
      ParseMemoryCap(absl::GetFlag(FLAGS_gpu_memory_cap_bytes));
  if (!cap.ok()) return cap.status();
  o.gpu_memory_cap_bytes = *cap;
  o.gpu_cache_mib = absl::GetFlag(FLAGS_gpu_cache_mib);
  o.worker_threads = absl::GetFlag(FLAGS_worker_threads);
  return o;
}

BatchOptions BatchOptionsFromFlags() {
  BatchOptions o;
  o.max_batch_requests = absl::GetFlag(FLAGS_max_batch_requests);
  o.max_batch_bytes = absl::GetFlag(FLAGS_max_batch_bytes).bytes;
  o.max_queue_delay_us = absl::GetFlag(FLAGS_max_queue_delay_us);
  o.max_queue_depth = absl::GetFlag(FLAGS_max_queue_depth);
  return o;
}

LimitOptions LimitOptionsFromFlags() {
  LimitOptions o;
  o.max_in_flight = absl::GetFlag(FLAGS_max_in_flight);
  o.max_tensor_bytes = absl::GetFlag(FLAGS_max_tensor_bytes).bytes;
  o.memory_budget_bytes = absl::GetFlag(FLAGS_memory_budget_bytes).bytes;
  o.max_output_ratio = absl::GetFlag(FLAGS_max_output_ratio);
  o.max_output_ratio_limit = absl::GetFlag(FLAGS_max_output_ratio_limit);
  o.stream_window = absl::GetFlag(FLAGS_stream_window);
  o.stream_queue_bytes = absl::GetFlag(FLAGS_stream_queue_bytes).bytes;
  return o;
}

ResidentOptions ResidentOptionsFromFlags() {
  ResidentOptions o;
  o.resident_bytes_per_principal = absl::GetFlag(FLAGS_resident_bytes_per_principal).bytes;
  o.resident_bytes_total = absl::GetFlag(FLAGS_resident_bytes_total).bytes;
  o.resident_ttl_seconds = absl::GetFlag(FLAGS_resident_ttl_seconds);
  o.max_chain_steps = absl::GetFlag(FLAGS_max_chain_steps);
  o.chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes).bytes;
  return o;
}

SecurityOptions SecurityOptionsFromFlags() {
  SecurityOptions o;
  o.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  o.tls_key_file = absl::GetFlag(FLAGS_tls_key_file);
  o.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  o.tls_client_auth = absl::GetFlag(FLAGS_tls_client_auth);
  o.tls_reload_seconds = absl::GetFlag(FLAGS_tls_reload_seconds);
  o.auth_tokens_file = absl::GetFlag(FLAGS_auth_tokens_file);
  o.auth_tokens_poll_ms = absl::GetFlag(FLAGS_auth_tokens_poll_ms);
  o.auth_exempt = absl::GetFlag(FLAGS_auth_exempt);
  o.tenant_from_peer = absl::GetFlag(FLAGS_tenant_from_peer);
  return o;
}

TelemetryOptions TelemetryOptionsFromFlags() {
  TelemetryOptions o;
  o.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  o.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  o.log_level = absl::GetFlag(FLAGS_log_level);
  o.log_format = absl::GetFlag(FLAGS_log_format);
  return o;
}

StopOptions StopOptionsFromFlags() {
  StopOptions o;
  o.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  o.shutdown_grace_seconds = absl::GetFlag(FLAGS_shutdown_grace_seconds);
  return o;
}

}  // namespace

absl::StatusOr<ServerOptions> ServerOptionsFromFlags() {
  ServerOptions options;
  absl::StatusOr<EngineOptions> engine = EngineOptionsFromFlags();
  if (!engine.ok()) return engine.status();
  options.network = NetworkOptionsFromFlags();
  options.engine = *std::move(engine);
  options.batching = BatchOptionsFromFlags();
  options.limits = LimitOptionsFromFlags();
  options.resident = ResidentOptionsFromFlags();
  options.security = SecurityOptionsFromFlags();
  options.telemetry = TelemetryOptionsFromFlags();
  options.stop = StopOptionsFromFlags();
  return options;
}

bool IsServerFlagsFile(absl::string_view file) {
  return absl::EndsWith(file, "server/options/flags.cc");
}

}  // namespace dmls::server
