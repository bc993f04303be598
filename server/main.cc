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

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
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
#include "server/options/flags.h"
#include "server/options/server_options.h"

namespace {
// How long the stop may run past --shutdown_grace_seconds (ExitDeadline).
constexpr absl::Duration kExitAfterGrace = absl::Milliseconds(500);
}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "DirectML operator validation and execution over gRPC.\n"
      "Usage: dmlserve [--flag=value]...");
  // --help lists the flags of server/options/flags.cc (absl's default
  // looks for a file named after the program).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return dmls::server::IsServerFlagsFile(file);
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

  absl::StatusOr<dmls::server::ServerOptions> flags =
      dmls::server::ServerOptionsFromFlags();
  if (!flags.ok()) {
    std::fprintf(stderr, "dmlserve: %s\n",
                 std::string(flags.status().message()).c_str());
    return 1;
  }
  const dmls::server::ServerOptions options = *std::move(flags);
  if (absl::Status status = dmls::server::ValidateOptions(options);
      !status.ok()) {
    std::fprintf(stderr, "dmlserve: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  auto logger = dmls::server::MakeLogger("dmlserve", options.telemetry.log_level,
                                         options.telemetry.log_format);
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
  if (options.telemetry.metrics_port != 0) {
    dmls::server::MetricsOptions metrics_options;
    metrics_options.address = options.telemetry.metrics_address;
    metrics_options.port = options.telemetry.metrics_port;
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
      device.backend, options.network.max_message_bytes, options.limits.max_tensor_bytes,
      options.limits.max_in_flight, options.limits.stream_window, options.engine.worker_threads,
      options.batching.max_batch_requests, options.batching.max_batch_bytes,
      options.batching.max_queue_delay_us, options.batching.max_queue_depth,
      options.stop.drain_seconds, options.stop.shutdown_grace_seconds,
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
    log->info("metrics on http://{}:{}/metrics", options.telemetry.metrics_address,
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
  if ((*stop_signal)->WaitForStop(absl::Seconds(options.stop.drain_seconds))) {
    log->info("second signal: ending the drain early");
  }
  // Calls are cancelled when the grace is over; device work of cancelled
  // calls that is still running then must not hold the exit past the
  // orchestrator's stop timeout (SIGKILL, exit 137).
  dmls::server::ExitDeadline exit_deadline(
      absl::Seconds(options.stop.shutdown_grace_seconds) + kExitAfterGrace, [log] {
        log->warn(
            "exit deadline: {} after the grace the engine still runs work of "
            "cancelled calls; exiting without waiting for it",
            absl::FormatDuration(kExitAfterGrace));
        log->flush();
        std::fflush(stdout);
        std::_Exit(0);
      });
  (*server)->Shutdown(absl::Seconds(options.stop.shutdown_grace_seconds));
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
