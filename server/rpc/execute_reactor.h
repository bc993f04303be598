// The unary Execute and ExecuteChain calls (Request -> Outcome, see
// request_processor.h), each a reactor that parses its request (an
// Execute's payloads stay in gRPC's receive slices), hands it to the
// RequestProcessor and answers from the engine's outcome. The reactor
// lives until both gRPC (OnDone) and the engine (the outcome callback) are
// through with it (ref_counted_reactor.h), because the engine may call
// back after the client cancelled and the RPC is gone; a cancelled call is
// answered at once.
//
// Thread-safe as gRPC's reactors are: the functions below may be called
// from any number of gRPC threads at once.
#ifndef DMLSERVE_SERVER_RPC_EXECUTE_REACTOR_H_
#define DMLSERVE_SERVER_RPC_EXECUTE_REACTOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "server/lifecycle/call_tracker.h"
#include "server/request_processor.h"
#include "spdlog/logger.h"

namespace dmls::server {

// One unary call as gRPC hands it over, with its principal (PrincipalOf).
// Everything is borrowed from gRPC for the call's life (until OnDone):
// `request` is read only while StartExecute runs, `response` is written
// when the call finishes.
struct UnaryCall {
  grpc::CallbackServerContext* context;
  const grpc::ByteBuffer& request;
  grpc::ByteBuffer* response;
  absl::StatusOr<std::string> principal;
};

// Starts an Execute (ExecuteChain) call on `processor` and returns its
// reactor, gRPC's from then on; `calls` tracks it until OnDone, or refuses
// it (UNAVAILABLE, tracked_reactor.h). `processor`, `calls` and `logger`
// must outlive the reactor.
grpc::ServerUnaryReactor* StartExecute(UnaryCall call, CallTracker& calls,
                                       RequestProcessor& processor, spdlog::logger* logger);
grpc::ServerUnaryReactor* StartExecuteChain(UnaryCall call, CallTracker& calls,
                                            RequestProcessor& processor, spdlog::logger* logger);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_EXECUTE_REACTOR_H_
