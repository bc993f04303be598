// ModelStreamInfer: ModelInferRequests in, ModelStreamInferResponses out,
// on one bidirectional stream, in completion order. A request that fails
// answers with error_message ("RULE: message (field)") and its
// infer_response's model_name and id, and the stream goes on; a message
// that does not parse ends the stream with INVALID_ARGUMENT after the
// requests read before it are answered.
//
// The stream is ExecuteStream's (server/rpc/ordered_stream_reactor.h, the
// base of both): at most `window` requests between read and response
// written, at most `max_queued_bytes` of responses waiting (and expected);
// while either is full the stream is not read. Tracked as a Stoppable call
// (call_tracker.h): when the server stops, it reads no more, answers what
// it has read and ends with UNAVAILABLE; refused with UNAVAILABLE once the
// stop has begun.
//
// Ownership: deletes itself when gRPC is done with it and every request it
// started has called back. Borrows the runner, which must outlive it.
#ifndef DMLSERVE_SERVER_KSERVE_STREAM_INFER_REACTOR_H_
#define DMLSERVE_SERVER_KSERVE_STREAM_INFER_REACTOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/kserve/infer_runner.h"
#include "server/lifecycle/call_tracker.h"
#include "server/rpc/ordered_stream_reactor.h"
#include "spdlog/logger.h"

namespace dmls::server::kserve {

// The stream's window and byte bound.
using StreamOptions = StreamLimits;

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewStreamInferReactor(
    grpc::CallbackServerContext* context, absl::StatusOr<std::string> principal,
    CallTracker& calls, InferRunner& runner, StreamOptions options,
    std::shared_ptr<spdlog::logger> logger);

}  // namespace dmls::server::kserve

#endif  // DMLSERVE_SERVER_KSERVE_STREAM_INFER_REACTOR_H_
