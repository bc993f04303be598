// ExecuteChunked: one operator whose tensors travel in chunks both ways
// (dmlserve.proto, ChunkedHeader), for tensors larger than one message.
//
// The header is admitted once (engine/sched/admission.h, the server's
// Admission shared with the other RPCs): validation, limits,
// amplification, cancellation, the deadline, an in-flight slot held until
// the call ends and one chunk each way from the byte budget. The call's
// deadline and cancellation also go with the chain to the engine.
//
// The reactor keeps each tensor as a pending resident tensor of the
// caller's (tensor_store.h: the quotas apply, nothing is visible to anyone,
// and everything is abandoned when the call ends however it ends), writes
// the chunks into it as they arrive (one at a time, so gRPC flow control
// holds a fast client back), runs the operator as a one-step chain once the
// client says it is done, and streams the output range back in chunks of
// the header's chunk_bytes (the server's default when 0, at most its
// largest), then a final message with done set.
//
// Each output chunk is read into a buffer of `buffers` (chunk_buffers.h)
// that becomes the response's data slice: no fresh string per chunk and no
// copy into the message.
//
// Ownership: borrows the engine, the store and the buffer pool (all must
// outlive the reactor; a chunk's lease keeps its pool alive until gRPC
// frees the slice). The reactor deletes itself when gRPC and the engine are done
// with it.
#ifndef DMLSERVE_SERVER_RPC_CHUNKED_REACTOR_H_
#define DMLSERVE_SERVER_RPC_CHUNKED_REACTOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/core/engine.h"
#include "engine/sched/admission.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/lifecycle/call_tracker.h"
#include "server/rpc/chunk_buffers.h"
#include "engine/store/tensor_store.h"
#include "spdlog/logger.h"

namespace dmls::server {

struct ChunkedOptions {
  ChunkOptions chunks;  // of the output
  FeatureLevel highest_feature_level = kHighestFeatureLevel;
};

// What the transport says about a chunked call.
struct ChunkedCall {
  absl::Time deadline = absl::InfiniteFuture();
  // The call's (principal.h), or why it has none (the call fails with that
  // status).
  absl::StatusOr<std::string> principal = std::string();
  // The amplification limit it asks for (call_metadata.h); 0: the
  // server's.
  absl::StatusOr<uint64_t> output_ratio = uint64_t{0};
};

// `ticket` tracks the call until gRPC is done with it (OnDone). A chunked
// call carries one operator, so at shutdown it is waited for like a unary
// call (within the grace), not asked to stop. `admission` must outlive the
// reactor.
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewChunkedReactor(
    ChunkedCall call, Engine* engine, store::TensorStore* store, sched::Admission* admission,
    ChunkBuffers* buffers, const ChunkedOptions& options, CallTracker::Ticket ticket,
    std::shared_ptr<spdlog::logger> logger);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_CHUNKED_REACTOR_H_
