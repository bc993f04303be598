// ExecuteStream: ExecuteRequests in, ExecuteResponses out, in completion
// order, on the ordered stream reactor (ordered_stream_reactor.h: the
// window, the byte bound on responses not yet written, the stop, finish
// once). Each request's payloads stay in gRPC's receive slices; a request
// that fails answers with its error in its response, and the stream goes
// on. Thread-safe as gRPC's reactors are.
#ifndef DMLSERVE_SERVER_RPC_EXECUTE_STREAM_REACTOR_H_
#define DMLSERVE_SERVER_RPC_EXECUTE_STREAM_REACTOR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "server/lifecycle/call_tracker.h"
#include "server/request_processor.h"
#include "server/rpc/ordered_stream_reactor.h"
#include "spdlog/logger.h"

namespace dmls::server {

// Starts an ExecuteStream call, tracked by `calls` (refused when they are
// closed), and returns its reactor, gRPC's from then on. `principal` is the
// call's (PrincipalOf). `processor` must outlive the reactor.
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StartExecuteStream(
    grpc::CallbackServerContext* context, absl::StatusOr<std::string> principal,
    RequestProcessor& processor, StreamLimits limits, std::shared_ptr<spdlog::logger> logger,
    CallTracker& calls);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_EXECUTE_STREAM_REACTOR_H_
