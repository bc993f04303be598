#include "server/lifecycle/dml_server.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/core/thread_name.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "server/mapping/capabilities.h"
#include "server/rpc/send_queues.h"
#include "server/rpc/server_sockets.h"
#include "server/security/server_credentials.h"
#include "server/security/tokens_file_watch.h"

namespace dmls::server {

absl::StatusOr<std::unique_ptr<DmlServer>> DmlServer::Start(
    const ServerOptions& options, Engine* engine,
    std::shared_ptr<spdlog::logger> logger, Metrics* metrics) {
  if (absl::Status status = ValidateOptions(options); !status.ok()) {
    return status;
  }
  // Process-wide switches; both must be set before the builder runs.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  std::unique_ptr<DmlServer> server(new DmlServer());
  server->engine_ = engine;
  server->logger_ = logger;
  ServiceOptions service_options;
  service_options.processor.metrics = metrics;
  service_options.processor.max_tensor_bytes = options.limits.max_tensor_bytes;
  service_options.processor.max_in_flight = options.limits.max_in_flight;
  service_options.processor.memory_budget_bytes = EffectiveMemoryBudget(options);
  service_options.processor.max_message_bytes = options.network.max_message_bytes;
  service_options.stream_window = options.limits.stream_window;
  service_options.processor.max_chain_steps = options.resident.max_chain_steps;
  service_options.processor.max_output_ratio = options.limits.max_output_ratio;
  service_options.processor.max_output_ratio_limit = options.limits.max_output_ratio_limit;
  service_options.stream_queue_bytes = options.limits.stream_queue_bytes;
  ChunkOptions chunks;
  chunks.default_bytes = DefaultChunkBytes(options);
  chunks.max_bytes = MaxChunkBytes(options);
  service_options.chunked.chunks = chunks;
  service_options.store.bytes_per_principal = options.resident.resident_bytes_per_principal;
  service_options.store.bytes_total = options.resident.resident_bytes_total;
  service_options.store.default_ttl =
      absl::Seconds(static_cast<int64_t>(options.resident.resident_ttl_seconds));
  absl::StatusOr<ServerSecurity> security = MakeServerSecurity(options.security);
  if (!security.ok()) {
    server->shut_down_ = true;  // nothing started: nothing to shut down
    return security.status();
  }
  server->tokens_ = security->tokens;
  if (server->tokens_ != nullptr && options.security.auth_tokens_poll_ms > 0) {
    TokensFileWatchOptions watch;
    watch.path = options.security.auth_tokens_file;
    watch.interval = absl::Milliseconds(options.security.auth_tokens_poll_ms);
    server->tokens_watch_ =
        std::make_unique<TokensFileWatch>(server->tokens_, watch, logger);
  }
  server->security_ = security->description;
  const PrincipalSource principals{security->tokens, options.security.tenant_from_peer};
  service_options.principals = principals;
  server->service_ = std::make_unique<DmlServiceImpl>(
      engine, service_options,
      BuildCapabilities(engine->device_info(), engine->devices(), options,
                        kHighestFeatureLevel),
      logger);

  const std::string listen = ListenAddress(options.network);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, security->credentials, &server->port_);
  // gRPC sets SO_REUSEPORT by default, which would let a second server
  // "bind" a port that is already serving; a taken port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (const auto& [name, value] : ConnectionChannelArgs(options.network)) {
    builder.AddChannelArgument(name, value);
  }
  builder.RegisterService(server->service_.get());
  TensorServiceOptions tensor_options;
  tensor_options.chunks = chunks;
  tensor_options.principals = principals;
  server->tensor_service_ = std::make_unique<TensorServiceImpl>(
      &server->service_->store(), engine, &server->service_->processor().admission(),
      &server->service_->calls(), tensor_options, logger);
  builder.RegisterService(server->tensor_service_.get());
  kserve::KServeOptions kserve_options;
  kserve_options.facts.max_batch_requests = options.batching.max_batch_requests;
  kserve_options.facts.max_batch_bytes = options.batching.max_batch_bytes;
  kserve_options.facts.max_queue_delay_us = options.batching.max_queue_delay_us;
  kserve_options.facts.device_kind = engine->device_info().kind;
  kserve_options.facts.device_count = static_cast<int>(engine->devices().size());
  kserve_options.stream.window = options.limits.stream_window;
  kserve_options.stream.max_queued_bytes = options.limits.stream_queue_bytes;
  kserve_options.principals = principals;
  server->kserve_service_ = std::make_unique<kserve::KServeServiceImpl>(
      server->service_.get(), engine, kserve_options, logger);
  builder.RegisterService(server->kserve_service_.get());
  // ValidateOptions keeps the size within int.
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.network.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(options.network.max_message_bytes));
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    // Nothing was started, so the destructor must not shut anything down.
    server->shut_down_ = true;
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", listen,
                     " (address in use, or not a local address?)"));
  }
  std::string host = listen.substr(0, listen.rfind(':'));
  server->address_ = absl::StrCat(host, ":", server->port_);

  const bool serving = engine->Healthy();
  server->SetServing(serving);
  DmlServer* raw = server.get();
  server->health_thread_ = std::thread([raw, serving] {
    SetThreadName("dmls-health");
    raw->WatchHealth(serving);
  });
  return server;
}

absl::Status DmlServer::ReloadTokens(absl::string_view trigger) {
  if (tokens_ == nullptr) {
    logger_->info("{}: no tokens file to reload", std::string(trigger));
    return absl::OkStatus();
  }
  return ReloadTokensAndLog(*tokens_, trigger, *logger_);
}

void DmlServer::SetServing(bool serving) {
  if (grpc::HealthCheckServiceInterface* health =
          server_->GetHealthCheckService()) {
    health->SetServingStatus(kServiceName, serving);
    health->SetServingStatus(serving);
  }
  kserve_service_->SetReady(serving);
}

void DmlServer::WatchHealth(bool serving) {
  absl::Time next_trim = absl::Now() + kMemoryTrimInterval;
  MutexLock lock(&health_mu_);
  while (!stop_watching_) {
    health_cv_.WaitFor(&health_mu_, kHealthCheckInterval);
    if (stop_watching_) break;
    if (absl::Now() >= next_trim) {
      // glibc keeps freed payload buffers (megabytes each, from many
      // threads) in its arenas: give the free pages back, so that memory
      // returns to where it was after a burst of large requests.
#ifdef __GLIBC__
      malloc_trim(0);
#endif
      next_trim = absl::Now() + kMemoryTrimInterval;
    }
    const bool now = engine_->Healthy();
    if (now == serving) continue;
    serving = now;
    if (serving) {
      logger_->info("the engine is healthy again: health SERVING");
    } else {
      logger_->error("the engine cannot run anything (every device lost): "
                     "health NOT_SERVING");
    }
    SetServing(serving);
  }
}

DmlServer::~DmlServer() { Shutdown(absl::ZeroDuration()); }

void DmlServer::StartDrain() {
  if (shut_down_ || draining_) return;
  draining_ = true;
  // The health watcher stops first, so that it cannot turn health back to
  // SERVING during the drain.
  {
    MutexLock lock(&health_mu_);
    stop_watching_ = true;
    health_cv_.Signal();
  }
  if (health_thread_.joinable()) health_thread_.join();
  if (grpc::HealthCheckServiceInterface* health =
          server_->GetHealthCheckService()) {
    health->SetServingStatus(false);
  }
  kserve_service_->SetReady(false);
  logger_->info("draining: health NOT_SERVING, still serving calls");
}

void DmlServer::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  const absl::Time deadline = absl::Now() + grace;
  StartDrain();
  shut_down_ = true;
  CallTracker& calls = service_->calls();
  logger_->info("shutting down: {} grace for the {} calls in flight",
                absl::FormatDuration(grace), calls.in_flight());
  // Our own stop first (docs/OPERATIONS.md, "Connection reset"): gRPC
  // closes a connection as soon as its last stream ends after the final
  // GOAWAY, and a close with the client's window updates unread makes the
  // kernel reset the connection, dropping the tail of a large response
  // still in the send buffer. So gRPC's Shutdown must come when none of our
  // calls is in flight and every byte written has been sent
  // (send_queues.h). Serve on for up to kQuiesceWait until a moment without
  // calls, and stop accepting (UNAVAILABLE) at that moment: a call refused
  // by us is not retried elsewhere by clients and proxies on their own, as
  // one refused by gRPC's GOAWAY is, so that window is kept short. Calls
  // that outlast kQuiesceWait (long device work, ExecuteStreams, which are
  // asked to end then) are waited for with new calls refused. All of it
  // within the grace: the wait ends kShutdownLinger before it.
  const absl::Duration linger = std::min(kShutdownLinger, grace / 2);
  const absl::Time wait_end = deadline - linger;
  bool idle = calls.CloseWhenIdle(std::min(absl::Now() + kQuiesceWait, wait_end));
  if (!idle) {
    logger_->info("{} calls still in flight after {}: refusing new calls, asking "
                  "streams to end",
                  calls.in_flight(), absl::FormatDuration(kQuiesceWait));
    calls.StopAll();
    idle = calls.WaitIdle(wait_end);
  }
  absl::Time grpc_deadline = deadline;
  if (idle) {
    // At most kShutdownLinger after the last call ended (none on an idle
    // server): a client that does not read cannot hold the stop.
    const absl::Time linger_start = absl::Now();
    const absl::Time linger_end = std::min(calls.last_end() + linger, deadline);
    while (absl::Now() < linger_end) {
      absl::StatusOr<uint64_t> unsent = UnsentTcpBytes();
      if (!unsent.ok()) {  // cannot tell: the whole linger
        absl::SleepFor(linger_end - absl::Now());
        break;
      }
      if (*unsent == 0) break;
      absl::SleepFor(kSendQueuePoll);
    }
    logger_->info("calls over; {} until every byte was sent",
                  absl::FormatDuration(absl::Now() - linger_start));
    // gRPC's Shutdown cancels (CANCELLED, which no client retries) every
    // call that reaches the server while it runs, before its GOAWAY has
    // reached that call's client; so the listeners and connections close
    // first (server_sockets.h): calls still coming, refused by us until
    // now, find the connection closed or refused: UNAVAILABLE.
    absl::StatusOr<int> closed = ShutdownServerSockets(port_);
    if (closed.ok()) {
      logger_->info("closed the listener and connections ({} sockets), {} calls refused",
                    *closed, calls.refused());
    } else {
      logger_->warn("cannot close the connections before gRPC's shutdown: {}",
                    closed.status().ToString());
    }
    // None of our calls is left, only refused ones, health watches and
    // connections without calls, which gRPC 1.51 would keep open until the
    // deadline (it closes a connection after the final GOAWAY only when a
    // stream on it ends).
    grpc_deadline = std::min(deadline, absl::Now() + kIdleConnectionWait);
  } else if (grace > absl::ZeroDuration()) {
    logger_->warn("{} calls still in flight {} before the grace ends; gRPC "
                  "cancels those still running then",
                  calls.in_flight(), absl::FormatDuration(linger));
  }
  // Refuses new calls at once, waits for calls in flight until the deadline,
  // then cancels them (their reactors Finish with CANCELLED) and closes the
  // connections.
  server_->Shutdown(absl::ToChronoTime(grpc_deadline));
  server_->Wait();
  // Engine callbacks still pending reach reactors kept alive by their
  // reference counts; draining here guarantees they are all done before the
  // service is destroyed.
  engine_->Shutdown();
  logger_->info("shutdown complete");
}

}  // namespace dmls::server
