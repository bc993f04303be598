// DmlServiceImpl: the dmlserve.v1.DmlService on gRPC's callback API.
// GetCapabilities and Validate answer inline; Execute and ExecuteStream hand
// each request to the RequestProcessor and answer when the engine completes.
//
// Validate, Execute and ExecuteStream are registered raw (grpc::ByteBuffer)
// and parse their requests themselves (message_codec.h), so that a message
// that does not parse gets INVALID_ARGUMENT with the reason instead of the
// generated handlers' UNIMPLEMENTED with an empty message. A stream whose
// message does not parse stops reading, answers the requests it has, and
// ends with INVALID_ARGUMENT.
//
// ExecuteStream keeps up to `stream_window` requests of one stream between
// "read" and "response written", and up to `stream_queue_bytes` of their
// responses (the output ranges of those not answered yet, the serialized
// size of those waiting to be written); while either is full it stops
// reading, which gives
// the client backpressure through gRPC flow control (and bounds what a
// client that never reads can make the server hold). Responses
// go out in completion order, one write at a time.
//
// Every call is tracked in calls() from its handler to OnDone, and refused
// with UNAVAILABLE once calls() is closed (call_tracker.h; DmlServer's
// Shutdown closes it and waits for the calls before gRPC's Shutdown; the
// TensorService shares it). ExecuteStream is a Stoppable call: asked to
// end (CallTracker::StopAll), it reads no more, answers what it has read,
// and ends with UNAVAILABLE.
//
// Ownership: owns the RequestProcessor and the CallTracker, borrows the
// engine. Reactors may outlive their RPC until the engine has called back,
// so the service (and the engine) must outlive the engine's drain: shut
// down the grpc::Server, then the engine, then destroy this. Thread-safe.
#ifndef DMLSERVE_SERVER_RPC_SERVICE_H_
#define DMLSERVE_SERVER_RPC_SERVICE_H_

#include <cstdint>
#include <memory>

#include "dmlserve/v1/dmlserve.grpc.pb.h"
#include "engine/core/engine.h"
#include "server/lifecycle/call_tracker.h"
#include "server/rpc/chunked_reactor.h"
#include "server/request_processor.h"
#include "server/security/principal.h"
#include "engine/store/tensor_store.h"
#include "spdlog/logger.h"

namespace dmls::server {

struct ServiceOptions {
  ProcessorOptions processor;
  // Resident tensors (tensor_store.h); the TensorService shares the store.
  store::TensorStoreOptions store;
  ChunkedOptions chunked;
  // Requests of one ExecuteStream read but not yet answered.
  uint32_t stream_window = 64;
  // Serialized responses of one ExecuteStream waiting to be written; at
  // this many bytes the stream is not read until the client takes some.
  uint64_t stream_queue_bytes = uint64_t{256} << 20;
  // Each call's principal comes from its own token or tenant through it.
  PrincipalSource principals;
};

// The generated service with Validate, Execute and ExecuteStream raw.
using DmlServiceBase =
    dmlserve::v1::DmlService::WithCallbackMethod_GetCapabilities<
        dmlserve::v1::DmlService::WithRawCallbackMethod_Validate<
            dmlserve::v1::DmlService::WithRawCallbackMethod_Execute<
                dmlserve::v1::DmlService::WithRawCallbackMethod_ExecuteStream<
                    dmlserve::v1::DmlService::WithRawCallbackMethod_ExecuteChain<
                        dmlserve::v1::DmlService::WithRawCallbackMethod_ExecuteChunked<
                            dmlserve::v1::DmlService::Service>>>>>>;

class DmlServiceImpl final : public DmlServiceBase {
 public:
  DmlServiceImpl(Engine* engine, ServiceOptions options,
                 dmlserve::v1::GetCapabilitiesResponse capabilities,
                 std::shared_ptr<spdlog::logger> logger);

  grpc::ServerUnaryReactor* GetCapabilities(
      grpc::CallbackServerContext* context,
      const dmlserve::v1::GetCapabilitiesRequest* request,
      dmlserve::v1::GetCapabilitiesResponse* response) override;
  // Request: a serialized ValidateRequest; response: ValidateResponse.
  grpc::ServerUnaryReactor* Validate(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  // Request: a serialized ExecuteRequest; response: ExecuteResponse.
  grpc::ServerUnaryReactor* Execute(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  // Serialized ExecuteRequests in, ExecuteResponses out.
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ExecuteStream(
      grpc::CallbackServerContext* context) override;

  // Request: a serialized ChainRequest; response: ChainResponse.
  grpc::ServerUnaryReactor* ExecuteChain(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override;

  // Serialized ChunkedRequests in, ChunkedResponses out (chunked_reactor.h).
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ExecuteChunked(
      grpc::CallbackServerContext* context) override;

  RequestProcessor& processor() { return processor_; }
  store::TensorStore& store() { return store_; }
  CallTracker& calls() { return calls_; }

 private:
  const ServiceOptions options_;
  Engine* const engine_;
  const dmlserve::v1::GetCapabilitiesResponse capabilities_;
  const std::shared_ptr<spdlog::logger> logger_;
  CallTracker calls_;  // before the others: outlives every reactor's Ticket
  store::TensorStore store_;  // before processor_, which borrows it
  RequestProcessor processor_;
  // ExecuteChunked's output chunk buffers (chunked_reactor.h).
  const std::shared_ptr<ChunkBuffers> chunk_buffers_;
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_SERVICE_H_
