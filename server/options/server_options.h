// ServerOptions: every knob of the dmlserve binary, in eight groups, each
// with its documented defaults; the flags are beside them, in flags.cc,
// group by group. main.cc fills it from the flags (ServerOptionsFromFlags,
// flags.h, the one reader of flags); tests fill it directly. Plain value
// types; thread-compatible.
#ifndef DMLSERVE_SERVER_OPTIONS_SERVER_OPTIONS_H_
#define DMLSERVE_SERVER_OPTIONS_SERVER_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/sched/scheduler.h"
#include "server/options/byte_size.h"

namespace dmls::server {

// NetworkOptions: where dmlserve listens, its largest message, and the
// connection hygiene of its gRPC port (--address, --port,
// --max_message_bytes, --handshake_timeout_seconds, --keepalive_*,
// --max_connection_idle_seconds).
struct NetworkOptions {
  // Listening address and port. 127.0.0.1 keeps a default start private;
  // containers pass 0.0.0.0. Port 0 lets the OS pick one (tests).
  std::string address = "127.0.0.1";
  int port = 50051;
  // Largest gRPC message either way. gRPC's own default (4 MiB) is far too
  // small for tensor payloads.
  uint64_t max_message_bytes = 256 * kMiB;
  // Connection hygiene (gRPC channel arguments, see ConnectionChannelArgs).
  // A connection that has not sent the HTTP/2 preface and SETTINGS within
  // this is closed (gRPC's default is 120 s, so half-open sockets would
  // hold an fd each for two minutes).
  int handshake_timeout_seconds = 10;
  // After this long without activity on a connection, with or without
  // calls, the server pings the peer and closes the connection when the
  // ping is not acknowledged within keepalive_timeout_seconds: peers that
  // vanished are reaped. 0 = no keepalive pings.
  int keepalive_time_seconds = 60;
  int keepalive_timeout_seconds = 20;
  // A connection without calls for this long is closed with a GOAWAY
  // (clients reconnect when they next call); 0 = never.
  int max_connection_idle_seconds = 600;
  // gRPC 1.51 has no limit on the number of connections (its
  // GRPC_ARG_MAX_ALLOWED_INCOMING_CONNECTIONS came later), so there is no
  // option for one; the timeouts above bound how long a useless
  // connection holds an fd.
};

// "host:port" for grpc::ServerBuilder; IPv6 literals get brackets.
std::string ListenAddress(const NetworkOptions& options);

// Clients may send keepalive pings without calls this often (gRPC's server
// default, 5 minutes, would answer a client's 10-second keepalive with a
// GOAWAY "too_many_pings").
inline constexpr int kMinClientPingIntervalSeconds = 10;

// The gRPC channel arguments of the connection options: handshake timeout,
// keepalive (also on connections without calls, with no cap on pings
// without data), the accepted client ping interval, max connection idle.
std::vector<std::pair<std::string, int>> ConnectionChannelArgs(
    const NetworkOptions& options);

// EngineOptions: which engine dmlserve runs, on which adapters, and what
// each may hold (--device, --directml_dll, --adapter, --adapters,
// --gpu_memory_cap_bytes, --gpu_cache_mib, --worker_threads);
// engine_factory.h reads them.
struct EngineOptions {
  // "auto" (Direct3D 12 when available, else the CPU engine), "gpu"
  // (hardware adapter), "software" (WARP/lavapipe adapter), "cpu", or
  // "directml" (Microsoft's DirectML.dll; Windows builds only).
  std::string device = "auto";
  // --device=directml: the DLL, passed to LoadLibrary as is (a bare name is
  // looked for beside dmlserve.exe first).
  std::string directml_dll = "DirectML.dll";
  // Adapter to use (substring of its description); empty = the first match.
  // One engine on one adapter; excludes `adapters`.
  std::string adapter;
  // Adapters to run engines on, one engine each: comma-separated indices or
  // name substrings (a name selects every adapter that has it). Empty: with
  // device gpu or auto every discrete GPU, else the one adapter `device`
  // picks. Naming an adapter twice ("0,0") runs two engines on it, a
  // testing knob. Requests go to the least-loaded live engine.
  std::string adapters;
  // Device memory each GPU engine may hold (pools, arenas, resident
  // tensors). Unset ("auto"): half of its adapter's dedicated memory, no cap
  // when that is unknown. 0: no cap beyond the device's own.
  std::optional<uint64_t> gpu_memory_cap_bytes;
  // The adapters' last-level (L2) cache in MiB, which sizes the row blocks
  // of MVN plans (engine/plan/mvn_plan.h). D3D12 does not report it; 0:
  // gpu::kAssumedCacheBytes (32 MiB). H100/H200: 50.
  uint64_t gpu_cache_mib = 0;
  // The CPU engine's worker threads; 0 means one per hardware thread.
  // gRPC's callback API runs the RPC handlers on gRPC's own pollers, which
  // only decode, validate and hand off, so the engine threads are the ones
  // that matter.
  int worker_threads = 0;
};

// --gpu_memory_cap_bytes: "auto" (unset: half of each adapter's memory),
// "0" (no cap) or a byte count (byte_size.h: "8G"); INVALID_ARGUMENT
// naming the flag otherwise.
absl::StatusOr<std::optional<uint64_t>> ParseMemoryCap(const std::string& text);

// BatchOptions: the engine scheduler's dynamic batcher
// (engine/sched/batch_policy.h) as dmlserve sets it (--max_batch_requests,
// --max_batch_bytes, --max_queue_delay_us, --max_queue_depth).
struct BatchOptions {
  // Most requests and payload bytes per batch (one GPU command list),
  // longest wait for a fuller batch, and queued requests beyond which new
  // ones get RESOURCE_EXHAUSTED (QUEUE_FULL). max_batch_requests = 1 turns
  // batching and coalescing off.
  uint32_t max_batch_requests = 256;
  uint64_t max_batch_bytes = 256 * kMiB;
  uint64_t max_queue_delay_us = 0;
  uint32_t max_queue_depth = 4096;
};

// The engine scheduler's options: this batching policy. The server admits
// every request once (engine/sched/admission.h, in the RequestProcessor
// and the chunked and tensor RPCs), so the engine's scheduler admits
// nothing again.
sched::SchedulerOptions EngineSchedulerOptions(const BatchOptions& options);

// LimitOptions: what requests in flight may take (--max_in_flight,
// --max_tensor_bytes, --memory_budget_bytes, --max_output_ratio,
// --max_output_ratio_limit, --stream_window, --stream_queue_bytes); the
// admission (engine/sched/admission.h) enforces them.
struct LimitOptions {
  // Executions accepted but not completed, across all calls; one more is
  // refused with RESOURCE_EXHAUSTED (IN_FLIGHT_LIMIT).
  uint32_t max_in_flight = 256;
  // Largest total_tensor_size_in_bytes of any one tensor of a request;
  // larger is RESOURCE_EXHAUSTED (TENSOR_BYTES_LIMIT).
  uint64_t max_tensor_bytes = 1 * kGiB;
  // Host memory the requests in flight may hold (admission's estimate,
  // and WriteTensor's chunks until the engine has copied them; beyond it
  // RESOURCE_EXHAUSTED, MEMORY_BUDGET). 0 = a quarter
  // of the machine's physical memory, and at least 4 x max_message_bytes
  // (EffectiveMemoryBudget in server_options.h).
  uint64_t memory_budget_bytes = 0;
  // Amplification: an output range above 1 MiB may be at most this many
  // times the request's payload bytes (RESOURCE_EXHAUSTED,
  // OUTPUT_AMPLIFICATION); 0 = no limit. A call may ask for more with the
  // `dmls-max-output-ratio` metadata, up to max_output_ratio_limit.
  uint64_t max_output_ratio = 64;
  uint64_t max_output_ratio_limit = 4096;
  // Requests one ExecuteStream may have read but not yet answered; the
  // server stops reading that stream while the window is full
  // (backpressure).
  uint32_t stream_window = 64;
  // Serialized responses of one ExecuteStream waiting to be written before
  // the server stops reading that stream.
  uint64_t stream_queue_bytes = 256 * kMiB;
};

// ResidentOptions: resident tensors and the calls that use them
// (--resident_bytes_per_principal, --resident_bytes_total,
// --resident_ttl_seconds, --max_chain_steps, --chunk_bytes).
struct ResidentOptions {
  // Bytes one principal and all of them together may hold
  // (RESOURCE_EXHAUSTED, RESIDENT_QUOTA beyond).
  uint64_t resident_bytes_per_principal = 8 * kGiB;
  uint64_t resident_bytes_total = 16 * kGiB;
  // The time to live of a tensor created without one (0 = no expiry).
  uint64_t resident_ttl_seconds = 3600;
  // The most steps of one ExecuteChain.
  uint32_t max_chain_steps = 64;
  // The default chunk of ReadTensor / ExecuteChunked responses (at most
  // MaxChunkBytes, server_options.h).
  uint64_t chunk_bytes = 1 * kMiB;
};

// SecurityOptions: TLS on the gRPC port, bearer tokens and who owns the
// resident tensors of an anonymous caller (--tls_*, --auth_*,
// --tenant_from_peer); server/security/server_credentials.h checks them
// and turns them into credentials.
struct SecurityOptions {
  // TLS on the gRPC port: the server's certificate chain and private key
  // (PEM files; both or neither). With tls_client_ca_file, client
  // certificates signed by that CA are asked for: tls_client_auth
  // "require" (mutual TLS, the default with a CA) or "optional". The files
  // are re-read every tls_reload_seconds when they change (rotation without
  // a restart).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  std::string tls_client_auth;  // "", "none", "optional", "require"
  int tls_reload_seconds = 60;
  // Bearer tokens (token_auth.h; needs TLS). Reloaded on SIGHUP (POSIX)
  // and, every auth_tokens_poll_ms, when its modification time or size
  // changed (security/tokens_file_watch.h; every platform). 0: no polling.
  std::string auth_tokens_file;
  int auth_tokens_poll_ms = 2000;
  // Methods reachable without a token: "health", "reflection" or method path
  // prefixes, comma-separated; "" requires a token for everything.
  std::string auth_exempt = "health,reflection";
  // Resident tensors of a caller with no token, client certificate or
  // tenant metadata belong to its connection's address (principal.h).
  // Only for one trusted client reaching the server directly: behind a
  // proxy every caller has the proxy's address. Off: such a caller gets
  // INVALID_ARGUMENT (TENANT_REQUIRED) for tensor operations.
  bool tenant_from_peer = false;
};

// TelemetryOptions: the Prometheus port and the log (--metrics_port,
// --metrics_address, --log_level, --log_format).
struct TelemetryOptions {
  // Prometheus metrics (telemetry/metrics.h) on their own HTTP port;
  // 0 = off.
  int metrics_port = 0;
  std::string metrics_address = "0.0.0.0";
  // spdlog level name: trace, debug, info, warn, error, critical, off.
  std::string log_level = "info";
  // "text" (human) or "json" (one object per line).
  std::string log_format = "text";
};

// StopOptions: how dmlserve stops on SIGTERM/SIGINT (--drain_seconds,
// --shutdown_grace_seconds); main.cc and lifecycle/dml_server.h carry the
// stop out.
struct StopOptions {
  // On SIGTERM/SIGINT, health goes NOT_SERVING at once but the server keeps
  // accepting and serving calls for this long, so that load balancers move
  // away before it stops accepting (a second signal ends the drain early).
  // 0 = stop accepting at once.
  // drain_seconds + shutdown_grace_seconds + 0.5 s (main's ExitDeadline:
  // device work of cancelled calls does not hold the exit longer) stays
  // below the 10 s after which `docker stop` (and many supervisors) send
  // SIGKILL; raise both together with the orchestrator's stop timeout
  // (Kubernetes: terminationGracePeriodSeconds).
  int drain_seconds = 3;
  // Once the server stops accepting, calls in flight get this long to
  // finish before they are cancelled.
  int shutdown_grace_seconds = 5;
};

struct ServerOptions {
  NetworkOptions network;      // the gRPC port and its connections
  EngineOptions engine;        // which engine, on which adapters
  BatchOptions batching;       // the engine scheduler's batcher
  LimitOptions limits;         // what requests in flight may take
  ResidentOptions resident;    // resident tensors, chains, chunks
  SecurityOptions security;    // TLS, tokens, tenants
  TelemetryOptions telemetry;  // metrics and logs
  StopOptions stop;            // drain and grace
};

// INVALID_ARGUMENT naming the first bad option of any group (the security
// group's are checked by MakeServerSecurity, which reads its files), or two
// that do not go together; OK otherwise.
absl::Status ValidateOptions(const ServerOptions& options);

// Room for a chunk message's fields besides its bytes.
inline constexpr uint64_t kChunkOverheadBytes = 64 * 1024;

// limits.memory_budget_bytes with 0 resolved (see LimitOptions).
uint64_t EffectiveMemoryBudget(const ServerOptions& options);

// The largest chunk of data one message may carry: max_message_bytes less
// room for the message's other fields (64 KiB, or a quarter of a small
// limit).
uint64_t MaxChunkBytes(const ServerOptions& options);
// resident.chunk_bytes, at most MaxChunkBytes.
uint64_t DefaultChunkBytes(const ServerOptions& options);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_OPTIONS_SERVER_OPTIONS_H_
