#include "server/rpc/service.h"

#include <utility>

#include "server/mapping/status_mapping.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/execute_reactor.h"
#include "server/rpc/execute_stream_reactor.h"
#include "server/rpc/message_codec.h"
#include "server/security/principal.h"
#include "server/rpc/tracked_reactor.h"

namespace dmls::server {

namespace v1 = dmlserve::v1;

DmlServiceImpl::DmlServiceImpl(Engine* engine, ServiceOptions options,
                               v1::GetCapabilitiesResponse capabilities,
                               std::shared_ptr<spdlog::logger> logger)
    : options_(options),
      engine_(engine),
      capabilities_(std::move(capabilities)),
      logger_(logger),
      store_(engine, options.store),
      processor_(engine, options.processor, std::move(logger), &store_),
      chunk_buffers_(ChunkBuffers::Create(options.chunked.chunks.buffer_idle_bytes)) {}

grpc::ServerUnaryReactor* DmlServiceImpl::GetCapabilities(
    grpc::CallbackServerContext* context, const v1::GetCapabilitiesRequest*,
    v1::GetCapabilitiesResponse* response) {
  return AnswerInline(calls_, [&] {
    *response = capabilities_;
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* DmlServiceImpl::Validate(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return AnswerInline(calls_, [&] {
    v1::ValidateRequest parsed;
    if (absl::Status status = ParseRequest(*request, &parsed); !status.ok()) {
      logger_->debug("Validate: {}", std::string(status.message()));
      return ToGrpcStatus(status);
    }
    return SerializeResponse(processor_.Validate(parsed), response);
  });
}

grpc::ServerUnaryReactor* DmlServiceImpl::Execute(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return StartExecute(
      {context, *request, response,
       PrincipalOf(*context, options_.principals)},
      calls_, processor_, logger_.get());
}

grpc::ServerUnaryReactor* DmlServiceImpl::ExecuteChain(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return StartExecuteChain(
      {context, *request, response,
       PrincipalOf(*context, options_.principals)},
      calls_, processor_, logger_.get());
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
DmlServiceImpl::ExecuteStream(grpc::CallbackServerContext* context) {
  return StartExecuteStream(
      context, PrincipalOf(*context, options_.principals),
      processor_, StreamLimits{options_.stream_window, options_.stream_queue_bytes}, logger_,
      calls_);
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
DmlServiceImpl::ExecuteChunked(grpc::CallbackServerContext* context) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) {
    return new RefusedReactor<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>>();
  }
  // Its tensors are staged, never published (chunked_reactor.h): the
  // principal only counts them against a quota, so a caller without an
  // identity stages under its connection's address.
  return NewChunkedReactor(
      ChunkedCall{DeadlineOf(*context),
                  PrincipalOf(*context, options_.principals.tokens.get(), /*tenant_from_peer=*/true),
                  RequestedOutputRatio(*context)},
      engine_, &store_, &processor_.admission(), chunk_buffers_.get(), options_.chunked,
      std::move(ticket), logger_);
}

}  // namespace dmls::server
