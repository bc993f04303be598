// DmlServer: the running gRPC server: DmlService, TensorService, the Open
// Inference Protocol (server/kserve/kserve_service.h), the grpc.health.v1 health
// service (SERVING once started, NOT_SERVING from the drain on and while
// the engine reports !Healthy(), e.g. every device lost; a watcher thread
// checks it every kHealthCheckInterval), server reflection, message size
// limits and the connection options (handshake timeout, keepalive, max
// idle). main.cc and the in-process tests both use
// it, so what the tests exercise is what the binary runs.
//
// Ownership: owns the grpc::Server and the service; borrows the engine,
// which must outlive this object. Shutdown drains the engine too (the
// service's reactors need the engine's last callbacks). Start, StartDrain
// and Shutdown are for one thread; the server itself serves from gRPC's
// threads.
#ifndef DMLSERVE_SERVER_LIFECYCLE_DML_SERVER_H_
#define DMLSERVE_SERVER_LIFECYCLE_DML_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/core/engine.h"
#include "engine/core/mutex.h"
#include "grpcpp/server.h"
#include "server/kserve/kserve_service.h"
#include "server/options/server_options.h"
#include "server/rpc/service.h"
#include "server/rpc/tensor_service.h"
#include "server/security/token_auth.h"
#include "server/security/tokens_file_watch.h"
#include "spdlog/logger.h"

namespace dmls::server {

// The gRPC service name that the health service reports besides "".
inline constexpr char kServiceName[] = "dmlserve.v1.DmlService";
// How often the health status follows Engine::Healthy().
inline constexpr absl::Duration kHealthCheckInterval = absl::Milliseconds(100);
// How often the watcher gives the allocator's free pages back to the system.
inline constexpr absl::Duration kMemoryTrimInterval = absl::Seconds(2);
// The longest Shutdown waits after the last call ended for the clients to
// make room for the tails of their responses (nothing left unsent,
// send_queues.h) before gRPC closes the connections; at most half the grace.
inline constexpr absl::Duration kShutdownLinger = absl::Seconds(1);
// How often it looks at the send queues meanwhile.
inline constexpr absl::Duration kSendQueuePoll = absl::Milliseconds(5);
// How long Shutdown goes on serving new calls while it waits for a moment
// without calls in flight; after it, new calls are refused and
// ExecuteStreams asked to end.
inline constexpr absl::Duration kQuiesceWait = absl::Seconds(1);
// How long gRPC's Shutdown then gets for its GOAWAYs before it closes the
// connections left (the calls on them are all over by then).
inline constexpr absl::Duration kIdleConnectionWait = absl::Milliseconds(100);

class DmlServer {
 public:
  // Binds options.address:options.port and starts serving; UNAVAILABLE when
  // the port cannot be bound.
  // `metrics` (not owned, may be null) counts the requests; it must
  // outlive the server.
  static absl::StatusOr<std::unique_ptr<DmlServer>> Start(
      const ServerOptions& options, Engine* engine,
      std::shared_ptr<spdlog::logger> logger, Metrics* metrics = nullptr);

  // Shuts down with no grace if Shutdown was not called.
  ~DmlServer();

  // The first step of a graceful stop: health NOT_SERVING (for "" and
  // kServiceName), so that load balancers and health-checking clients move
  // away, while the server goes on accepting and serving calls. Idempotent.
  void StartDrain();

  // Health NOT_SERVING; new calls are served until a moment without calls
  // in flight (at most kQuiesceWait), refused from then on (UNAVAILABLE,
  // "the server is shutting down"); ExecuteStreams still open after
  // kQuiesceWait are asked to end (they read no more, answer what they
  // have read and end UNAVAILABLE); calls in flight get `grace` to finish
  // and are cancelled after it; then the engine is drained. Idempotent.
  // Every call whose handler has started is answered within `grace`.
  //
  // gRPC's own Shutdown comes only once our calls are over (or
  // kShutdownLinger before the grace ends) and every byte written has been
  // sent (at most kShutdownLinger after the last call ended), so
  // that no connection closes under the tail of a response; when the calls
  // are all over, it closes the connections after kIdleConnectionWait
  // instead of at the end of the grace. Before it, when our calls are all
  // over, the listeners and connections are shut down under gRPC
  // (server_sockets.h; Linux): gRPC's Shutdown would cancel (CANCELLED)
  // the calls still arriving on open connections, while a closed
  // connection or a refused one is UNAVAILABLE to the client. So from the
  // close on, every new call gets UNAVAILABLE, ours or the connection's.
  //
  // A unary call whose request is still arriving is only handed to its
  // handler once the message is complete: refused when that happens after
  // the close, CANCELLED by gRPC after its Shutdown. StartDrain first, so
  // that clients move away before this.
  void Shutdown(absl::Duration grace);

  // Re-reads the bearer tokens file and logs the outcome prefixed by
  // `trigger` ("SIGHUP"; tokens_file_watch.h); OK when there is none. On
  // error the tokens in use stay. Thread-safe.
  absl::Status ReloadTokens(absl::string_view trigger);
  // "plaintext", "mutual TLS, bearer tokens (3)", ... for the startup log.
  const std::string& security() const { return security_; }

  int port() const { return port_; }
  // "host:port" as bound (with the real port when options.port was 0).
  const std::string& address() const { return address_; }
  DmlServiceImpl& service() { return *service_; }

 private:
  DmlServer() = default;
  // Sets both health statuses (service and "").
  void SetServing(bool serving);
  // The watcher thread: follows engine_->Healthy() until Shutdown, from
  // `serving`, the status Start published (read on the watcher's thread
  // instead, a change before the thread ran would never be published).
  void WatchHealth(bool serving);

  Engine* engine_ = nullptr;
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<DmlServiceImpl> service_;
  std::unique_ptr<TensorServiceImpl> tensor_service_;  // borrows service_'s store
  // The Open Inference Protocol; borrows service_'s processor and calls.
  std::unique_ptr<kserve::KServeServiceImpl> kserve_service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<TokenAuthenticator> tokens_;  // null: no tokens
  // Reloads tokens_ when the file changes; null without tokens or polling.
  std::unique_ptr<TokensFileWatch> tokens_watch_;
  std::string security_;
  int port_ = 0;
  std::string address_;
  bool draining_ = false;
  bool shut_down_ = false;

  Mutex health_mu_;
  CondVar health_cv_;
  bool stop_watching_ ABSL_GUARDED_BY(health_mu_) = false;
  std::thread health_thread_;
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_LIFECYCLE_DML_SERVER_H_
