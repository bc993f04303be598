// dmlserve: the gRPC server binary. Flags -> ServerOptions, engine, server;
// then waits for SIGTERM/SIGINT and shuts down gracefully (exit 0): a drain
// of --drain_seconds (health NOT_SERVING, still serving), then no new calls
// and --shutdown_grace_seconds for the calls in flight; 0.5 s after the
// grace the process exits even if the device still runs work of cancelled
// calls (ExitDeadline). Exit 1 when the flags are bad, the engine cannot start or the port cannot
// be bound.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpc/grpc.h"
#include "server/lifecycle/allocator_tuning.h"
#include "server/lifecycle/dml_server.h"
#include "server/engine_factory.h"
#include "server/lifecycle/exit_deadline.h"
#include "server/lifecycle/stop_signal.h"
#include "server/telemetry/logging.h"
#include "server/telemetry/metrics.h"
#include "server/options/byte_size.h"
#include "server/options/server_options.h"

namespace {
const dmls::server::ServerOptions kDefaults;
// How long the stop may run past --shutdown_grace_seconds (ExitDeadline).
constexpr absl::Duration kExitAfterGrace = absl::Milliseconds(500);
}  // namespace

// Byte counts read "4096", "64K", "512M", "8G" (byte_size.h).
using dmls::server::ByteSize;

ABSL_FLAG(std::string, address, kDefaults.address,
          "Address to listen on (0.0.0.0 or :: for all interfaces).");
ABSL_FLAG(int, port, kDefaults.port, "TCP port; 0 picks a free one.");
ABSL_FLAG(ByteSize, max_message_bytes, ByteSize{kDefaults.max_message_bytes},
          "Largest gRPC message received or sent, in bytes.");
ABSL_FLAG(int, worker_threads, kDefaults.worker_threads,
          "Engine worker threads; 0 = one per hardware thread.");
ABSL_FLAG(uint32_t, max_in_flight, kDefaults.max_in_flight,
          "Executions in flight server-wide before RESOURCE_EXHAUSTED.");
ABSL_FLAG(uint32_t, stream_window, kDefaults.stream_window,
          "Requests one ExecuteStream may have unanswered before the server "
          "stops reading it (backpressure).");
ABSL_FLAG(ByteSize, max_tensor_bytes, ByteSize{kDefaults.max_tensor_bytes},
          "Largest total_tensor_size_in_bytes of one tensor before "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(ByteSize, resident_bytes_per_principal, ByteSize{kDefaults.resident_bytes_per_principal},
          "Bytes of resident tensors one principal may hold.");
ABSL_FLAG(ByteSize, resident_bytes_total, ByteSize{kDefaults.resident_bytes_total},
          "Bytes of resident tensors all principals together may hold.");
ABSL_FLAG(uint64_t, resident_ttl_seconds, kDefaults.resident_ttl_seconds,
          "Time to live of a resident tensor created without one; 0 = none.");
ABSL_FLAG(uint32_t, max_chain_steps, kDefaults.max_chain_steps,
          "Most operators in one ExecuteChain.");
ABSL_FLAG(ByteSize, chunk_bytes, ByteSize{kDefaults.chunk_bytes},
          "Default chunk of ReadTensor and ExecuteChunked responses, in bytes.");
ABSL_FLAG(uint64_t, max_output_ratio, kDefaults.max_output_ratio,
          "Output bytes per payload byte a request may ask for above 1 MiB of "
          "output; 0 = no limit.");
ABSL_FLAG(uint64_t, max_output_ratio_limit, kDefaults.max_output_ratio_limit,
          "The most a call may raise max_output_ratio to (dmls-max-output-ratio "
          "metadata).");
ABSL_FLAG(ByteSize, stream_queue_bytes, ByteSize{kDefaults.stream_queue_bytes},
          "Response bytes one ExecuteStream may have waiting before the server "
          "stops reading it.");
ABSL_FLAG(std::string, device, kDefaults.device,
          "Engine: auto (Direct3D 12 on every discrete GPU, else one GPU, "
          "else the software adapter, lavapipe; never the cpu engine: "
          "without Direct3D 12 the server fails to start), gpu (every "
          "discrete GPU, else one GPU), software, cpu, or directml "
          "(Windows only: Microsoft's DirectML.dll, --directml_dll, on "
          "--adapter's or the first GPU; a reference engine, one request at a "
          "time).");
ABSL_FLAG(std::string, directml_dll, kDefaults.directml_dll,
          "--device=directml: the DirectML.dll to load (a path, or a bare "
          "name found beside dmlserve.exe first).");
ABSL_FLAG(std::string, adapter, kDefaults.adapter,
          "One Direct3D 12 adapter to use (the first whose description "
          "contains this).");
ABSL_FLAG(std::string, adapters, kDefaults.adapters,
          "Direct3D 12 adapters to run engines on, one each: comma-separated "
          "indices or name substrings (a name selects every adapter that has "
          "it). Default: every discrete GPU for --device=gpu/auto. Naming an "
          "adapter twice (0,0) runs two engines on it (testing).");
ABSL_FLAG(std::string, gpu_memory_cap_bytes, "auto",
          "Device memory each GPU engine may hold (pools, arenas, resident "
          "tensors): auto = half of its adapter's dedicated memory (no cap "
          "when unknown), 0 = no cap, or bytes (8G, 512M, 1073741824). "
          "GetCapabilities reports the cap in effect.");
ABSL_FLAG(uint64_t, gpu_cache_mib, 0,
          "The GPUs' L2 cache in MiB (D3D12 does not report it), which sizes "
          "the row blocks of MVN plans; 0 = assume 32 MiB. H100/H200: 50.");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM certificate chain of the gRPC port: serve TLS (with "
          "--tls_key_file). Re-read when it changes (--tls_reload_seconds).");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key for --tls_cert_file.");
ABSL_FLAG(std::string, tls_client_ca_file, "",
          "PEM CA bundle that client certificates must chain to: mutual TLS "
          "(see --tls_client_auth). A verified client certificate's common "
          "name becomes the caller's principal when it sends no token.");
ABSL_FLAG(std::string, tls_client_auth, kDefaults.tls_client_auth,
          "With --tls_client_ca_file: require (default; no handshake "
          "without a valid client certificate), optional (verified when "
          "sent) or none.");
ABSL_FLAG(int, tls_reload_seconds, kDefaults.tls_reload_seconds,
          "How often the TLS files are checked for changes (rotation "
          "without a restart).");
ABSL_FLAG(std::string, auth_tokens_file, "",
          "Bearer tokens (needs TLS): lines 'TOKEN PRINCIPAL "
          "[scopes=execute,tensors] [expires=RFC3339]'. Calls without a "
          "valid 'authorization: Bearer TOKEN' get UNAUTHENTICATED, without "
          "the method's scope PERMISSION_DENIED. Re-read on SIGHUP and "
          "when it changes (--auth_tokens_poll_ms).");
ABSL_FLAG(int, auth_tokens_poll_ms, kDefaults.auth_tokens_poll_ms,
          "How often --auth_tokens_file's modification time and size are "
          "checked; a change reloads it (the reload trigger on Windows, "
          "which has no SIGHUP). 0 = only on SIGHUP.");
ABSL_FLAG(std::string, auth_exempt, kDefaults.auth_exempt,
          "Methods reachable without a token: health, reflection and/or "
          "method path prefixes, comma-separated; empty = none.");
ABSL_FLAG(bool, tenant_from_peer, kDefaults.tenant_from_peer,
          "Resident tensors of a caller with no token, client certificate "
          "or tenant metadata belong to its connection's address. Only for "
          "one trusted client reaching the server directly (behind a proxy "
          "every caller has the proxy's address); off, such a caller gets "
          "INVALID_ARGUMENT (TENANT_REQUIRED) for tensor operations.");
ABSL_FLAG(int, metrics_port, kDefaults.metrics_port,
          "Serve Prometheus metrics on http://ADDRESS:PORT/metrics; 0 = off. "
          "Off by default so that servers sharing a host do not fight over "
          "one port; the container image serves them on 9464.");
ABSL_FLAG(std::string, metrics_address, kDefaults.metrics_address,
          "Address of the metrics port (all interfaces by default, so a "
          "Prometheus elsewhere can scrape it).");
ABSL_FLAG(std::string, log_level, kDefaults.log_level,
          "trace, debug, info, warn, error, critical or off.");
ABSL_FLAG(std::string, log_format, kDefaults.log_format, "text or json.");
ABSL_FLAG(int, drain_seconds, kDefaults.drain_seconds,
          "On SIGTERM/SIGINT, seconds the server keeps accepting and serving "
          "calls with health NOT_SERVING, so that load balancers move away; "
          "a second signal ends the drain. 0 = stop accepting at once.");
ABSL_FLAG(int, shutdown_grace_seconds, kDefaults.shutdown_grace_seconds,
          "After the drain, seconds calls in flight get before they are "
          "cancelled.");
ABSL_FLAG(int, handshake_timeout_seconds, kDefaults.handshake_timeout_seconds,
          "Seconds a new connection has to send the HTTP/2 preface and "
          "SETTINGS before it is closed.");
ABSL_FLAG(int, keepalive_time_seconds, kDefaults.keepalive_time_seconds,
          "Seconds without activity after which the server pings a "
          "connection (with or without calls); 0 = no keepalive pings.");
ABSL_FLAG(int, keepalive_timeout_seconds, kDefaults.keepalive_timeout_seconds,
          "Seconds a keepalive ping may go unanswered before the connection "
          "is closed.");
ABSL_FLAG(int, max_connection_idle_seconds,
          kDefaults.max_connection_idle_seconds,
          "Seconds a connection may stay without calls before the server "
          "closes it (GOAWAY); 0 = never.");

ABSL_FLAG(uint32_t, max_batch_requests, kDefaults.max_batch_requests,
          "Most requests in one batch (one GPU command list; same-kernel "
          "element-wise requests coalesce into one dispatch). 1 turns "
          "batching off.");
ABSL_FLAG(ByteSize, max_batch_bytes, ByteSize{kDefaults.max_batch_bytes},
          "Most payload bytes (inputs plus outputs) in one batch; a larger "
          "request runs alone.");
ABSL_FLAG(uint64_t, max_queue_delay_us, kDefaults.max_queue_delay_us,
          "Longest a request waits for a fuller batch once the device could "
          "take it, in microseconds; 0 never waits (batches still form "
          "while the device is busy).");
ABSL_FLAG(ByteSize, memory_budget_bytes, ByteSize{kDefaults.memory_budget_bytes},
          "Host memory the requests in flight may hold (estimated as twice "
          "their payload plus twice their output, until the response is "
          "written); beyond it RESOURCE_EXHAUSTED (MEMORY_BUDGET). 0 = a "
          "quarter of physical memory, at least 4 x max_message_bytes.");
ABSL_FLAG(uint32_t, max_queue_depth, kDefaults.max_queue_depth,
          "Requests queued for the engine beyond which new ones get "
          "RESOURCE_EXHAUSTED (QUEUE_FULL).");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "DirectML operator validation and execution over gRPC.\n"
      "Usage: dmlserve [--flag=value]...");
  // --help lists the flags of this file (absl's default looks for a file
  // named after the program).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  usage.version_string = [] {
    return std::string("dmlserve ") + DMLSERVE_VERSION + "\n";
  };
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  // Debian builds abseil without NDEBUG, so every absl::Mutex lock (gRPC's
  // own locks are absl::Mutex) also feeds a global lock-order graph for
  // deadlock detection: 4-5% of a 1 KiB request's CPU in a perf profile
  // (docs/perf/serving-cpu-2026-11-28/). bench/echo does the same, so the
  // anchor and the server pay for gRPC's locks alike.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Before the threads that serve requests start allocating.
  const std::string allocator = dmls::server::TuneAllocator();

  // Before any thread starts (POSIX: every thread inherits the blocked mask).
  absl::StatusOr<std::unique_ptr<dmls::server::StopSignal>> stop_signal =
      dmls::server::StopSignal::Install();
  if (!stop_signal.ok()) {
    std::fprintf(stderr, "dmlserve: %s\n", stop_signal.status().ToString().c_str());
    return 1;
  }

  dmls::server::ServerOptions options;
  options.address = absl::GetFlag(FLAGS_address);
  options.port = absl::GetFlag(FLAGS_port);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes).bytes;
  options.worker_threads = absl::GetFlag(FLAGS_worker_threads);
  options.max_in_flight = absl::GetFlag(FLAGS_max_in_flight);
  options.max_tensor_bytes = absl::GetFlag(FLAGS_max_tensor_bytes).bytes;
  options.stream_window = absl::GetFlag(FLAGS_stream_window);
  options.resident_bytes_per_principal = absl::GetFlag(FLAGS_resident_bytes_per_principal).bytes;
  options.resident_bytes_total = absl::GetFlag(FLAGS_resident_bytes_total).bytes;
  options.resident_ttl_seconds = absl::GetFlag(FLAGS_resident_ttl_seconds);
  options.max_chain_steps = absl::GetFlag(FLAGS_max_chain_steps);
  options.chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes).bytes;
  options.max_output_ratio = absl::GetFlag(FLAGS_max_output_ratio);
  options.max_output_ratio_limit = absl::GetFlag(FLAGS_max_output_ratio_limit);
  options.stream_queue_bytes = absl::GetFlag(FLAGS_stream_queue_bytes).bytes;
  options.device = absl::GetFlag(FLAGS_device);
  options.directml_dll = absl::GetFlag(FLAGS_directml_dll);
  options.adapter = absl::GetFlag(FLAGS_adapter);
  options.adapters = absl::GetFlag(FLAGS_adapters);
  absl::StatusOr<std::optional<uint64_t>> memory_cap =
      dmls::server::ParseMemoryCap(absl::GetFlag(FLAGS_gpu_memory_cap_bytes));
  if (!memory_cap.ok()) {
    std::fprintf(stderr, "dmlserve: %s\n",
                 std::string(memory_cap.status().message()).c_str());
    return 1;
  }
  options.gpu_memory_cap_bytes = *memory_cap;
  options.gpu_cache_mib = absl::GetFlag(FLAGS_gpu_cache_mib);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  options.tls_client_auth = absl::GetFlag(FLAGS_tls_client_auth);
  options.tls_reload_seconds = absl::GetFlag(FLAGS_tls_reload_seconds);
  options.auth_tokens_file = absl::GetFlag(FLAGS_auth_tokens_file);
  options.auth_tokens_poll_ms = absl::GetFlag(FLAGS_auth_tokens_poll_ms);
  options.auth_exempt = absl::GetFlag(FLAGS_auth_exempt);
  options.tenant_from_peer = absl::GetFlag(FLAGS_tenant_from_peer);
  options.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  options.log_level = absl::GetFlag(FLAGS_log_level);
  options.log_format = absl::GetFlag(FLAGS_log_format);
  options.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  options.shutdown_grace_seconds = absl::GetFlag(FLAGS_shutdown_grace_seconds);
  options.max_batch_requests = absl::GetFlag(FLAGS_max_batch_requests);
  options.max_batch_bytes = absl::GetFlag(FLAGS_max_batch_bytes).bytes;
  options.max_queue_delay_us = absl::GetFlag(FLAGS_max_queue_delay_us);
  options.max_queue_depth = absl::GetFlag(FLAGS_max_queue_depth);
  options.memory_budget_bytes = absl::GetFlag(FLAGS_memory_budget_bytes).bytes;
  options.handshake_timeout_seconds =
      absl::GetFlag(FLAGS_handshake_timeout_seconds);
  options.keepalive_time_seconds = absl::GetFlag(FLAGS_keepalive_time_seconds);
  options.keepalive_timeout_seconds =
      absl::GetFlag(FLAGS_keepalive_timeout_seconds);
  options.max_connection_idle_seconds =
      absl::GetFlag(FLAGS_max_connection_idle_seconds);

  if (absl::Status status = dmls::server::ValidateOptions(options);
      !status.ok()) {
    std::fprintf(stderr, "dmlserve: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  auto logger = dmls::server::MakeLogger("dmlserve", options.log_level,
                                         options.log_format);
  if (!logger.ok()) {
    std::fprintf(stderr, "dmlserve: %s\n",
                 std::string(logger.status().message()).c_str());
    return 1;
  }
  auto log = *logger;
  dmls::server::RouteGrpcLogsTo(log);
  if (!allocator.empty()) log->debug("{}", allocator);
  // One reference to gRPC's global state that is never dropped: otherwise
  // the grpc::Server's destructor runs gRPC's full shutdown, which joins an
  // executor thread that may sit in a poll until its next timer (exits
  // took up to 10 s after "shutdown complete"). By then the server is shut
  // down and the engine drained; the OS reclaims the rest.
  grpc_init();

  std::unique_ptr<dmls::server::Metrics> metrics;
  dmls::server::EngineHooks hooks;
  if (options.metrics_port != 0) {
    dmls::server::MetricsOptions metrics_options;
    metrics_options.address = options.metrics_address;
    metrics_options.port = options.metrics_port;
    auto started = dmls::server::Metrics::Start(metrics_options);
    if (!started.ok()) {
      log->error("{}", std::string(started.status().message()));
      return 1;
    }
    metrics = *std::move(started);
    hooks.scheduler_observer = [m = metrics.get()](const std::string& device) {
      return m->ObserverFor(device);
    };
  }
  auto engine = dmls::server::CreateEngine(options, log, hooks);
  if (!engine.ok()) {
    log->error("cannot start the engine: {} (--device=cpu always works)",
               std::string(engine.status().message()));
    return 1;
  }
  dmls::DeviceInfo device = (*engine)->device_info();
  const std::vector<dmls::DeviceInfo> devices = (*engine)->devices();
  if (devices.size() > 1) {
    for (size_t i = 0; i < devices.size(); ++i) {
      log->info("device {} of {}: \"{}\" ({}, {}, {} MiB)", i, devices.size(),
                devices[i].name, devices[i].kind, devices[i].backend,
                devices[i].memory_bytes >> 20);
    }
  }

  auto server =
      dmls::server::DmlServer::Start(options, engine->get(), log, metrics.get());
  if (!server.ok()) {
    log->error("{}", std::string(server.status().message()));
    (*engine)->Shutdown();
    return 1;
  }
  log->info(
      "dmlserve {} on {}: device \"{}\" ({}, {}), max_message_bytes={}, "
      "max_tensor_bytes={}, max_in_flight={}, stream_window={}, "
      "worker_threads={}, max_batch_requests={}, max_batch_bytes={}, "
      "max_queue_delay_us={}, max_queue_depth={}, drain_seconds={}, "
      "shutdown_grace_seconds={}, security: {}",
      DMLSERVE_VERSION, (*server)->address(), device.name, device.kind,
      device.backend, options.max_message_bytes, options.max_tensor_bytes,
      options.max_in_flight, options.stream_window, options.worker_threads,
      options.max_batch_requests, options.max_batch_bytes,
      options.max_queue_delay_us, options.max_queue_depth,
      options.drain_seconds, options.shutdown_grace_seconds,
      (*server)->security());
  if (metrics) {
    dmls::Engine* e = engine->get();
    dmls::server::DmlServer* s = server->get();
    dmls::server::MetricsSources sources;
    sources.backend = e->device_info().backend;
    sources.devices = [e] { return e->devices(); };
    sources.engine_counters = [e] { return e->Counters(); };
    sources.in_flight = [s] { return s->service().processor().in_flight(); };
    sources.resident = [s] {
      const dmls::store::TensorStoreStats stats = s->service().store().stats();
      return std::pair<uint64_t, uint64_t>(stats.tensors, stats.bytes);
    };
    metrics->SetSources(std::move(sources));
    log->info("metrics on http://{}:{}/metrics", options.metrics_address,
              metrics->port());
  }
  // The readiness line scripts and tests wait for, on stdout.
  std::printf("dmlserve listening on %s\n", (*server)->address().c_str());
  std::fflush(stdout);

  std::string request;
  while ((*stop_signal)->Wait(&request) == dmls::server::StopSignal::Request::kReload) {
    (*server)->ReloadTokens("SIGHUP").IgnoreError();  // logged there
  }
  log->info("received {}", request);
  // Drain: NOT_SERVING but still serving, until the drain period is over or
  // a second stop request comes; then stop accepting and give calls the grace.
  (*server)->StartDrain();
  if ((*stop_signal)->WaitForStop(absl::Seconds(options.drain_seconds))) {
    log->info("second signal: ending the drain early");
  }
  // Calls are cancelled when the grace is over; device work of cancelled
  // calls that is still running then must not hold the exit past the
  // orchestrator's stop timeout (SIGKILL, exit 137).
  dmls::server::ExitDeadline exit_deadline(
      absl::Seconds(options.shutdown_grace_seconds) + kExitAfterGrace, [log] {
        log->warn(
            "exit deadline: {} after the grace the engine still runs work of "
            "cancelled calls; exiting without waiting for it",
            absl::FormatDuration(kExitAfterGrace));
        log->flush();
        std::fflush(stdout);
        std::_Exit(0);
      });
  (*server)->Shutdown(absl::Seconds(options.shutdown_grace_seconds));
  if (metrics) metrics->SetSources({});  // they point into server and engine
  server->reset();
  std::string counters;
  for (const auto& [name, value] : (*engine)->Counters()) {
    absl::StrAppend(&counters, counters.empty() ? "" : " ", name, "=", value);
  }
  log->info("engine counters: {}", counters);
  engine->reset();
  return 0;
}
