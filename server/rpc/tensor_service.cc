#include "server/rpc/tensor_service.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/chunk_buffers.h"
#include "server/rpc/chunk_cursor.h"
#include "server/rpc/message_codec.h"
#include "server/rpc/tensor_read_reactor.h"
#include "server/rpc/tensor_write_reactor.h"
#include "server/security/principal.h"
#include "server/mapping/proto_mapping.h"
#include "server/mapping/status_mapping.h"
#include "server/rpc/tracked_reactor.h"

namespace dmls::server {
namespace v1 = dmlserve::v1;

v1::ResidentTensorInfo InfoOf(const store::ResidentTensor& t) {
  v1::ResidentTensorInfo info;
  info.set_handle(t.handle);
  v1::TensorDesc& d = *info.mutable_desc();
  if (t.desc.data_type != 0) d.set_data_type(static_cast<v1::DataType>(t.desc.data_type));
  d.set_flags(t.desc.flags);
  for (uint64_t s : t.desc.sizes) d.add_sizes(s);
  if (t.desc.strides) {
    for (uint64_t s : *t.desc.strides) d.add_strides(s);
  }
  d.set_total_tensor_size_in_bytes(t.desc.total_tensor_size_in_bytes);
  d.set_guaranteed_base_offset_alignment(t.desc.guaranteed_base_offset_alignment);
  info.set_size_bytes(t.desc.total_tensor_size_in_bytes);
  if (t.expires != absl::InfiniteFuture()) {
    info.set_expires_unix_ms(static_cast<uint64_t>(absl::ToUnixMillis(t.expires)));
  }
  info.set_device(t.buffer ? t.buffer->device() : "");
  return info;
}

sched::Work TensorWork(const TensorDesc& desc, const std::string& path, uint64_t data_bytes,
                       absl::Time deadline) {
  sched::Work work;
  work.kind = sched::Work::Kind::kTensor;
  work.tensor = desc;
  work.tensor_path = path;
  work.tensor_data_bytes = data_bytes;
  work.deadline = deadline;
  return work;
}

grpc::Status ClientStatus(const absl::Status& s, spdlog::logger& log) {
  return ToGrpcStatus(RequestError::FromStatus(s), &log);
}

namespace {

// Answers a unary call with `status` or the serialized `message`.
void Answer(grpc::ServerUnaryReactor* reactor, const absl::Status& status,
            const google::protobuf::Message& message, grpc::ByteBuffer* response,
            spdlog::logger& log) {
  if (!status.ok()) {
    reactor->Finish(ToGrpcStatus(RequestError::FromEngine(status), &log));
    return;
  }
  reactor->Finish(SerializeResponse(message, response));
}

// Parses `request` into `*req`, then finds the caller's principal; the
// first error of the two.
template <typename Request>
absl::StatusOr<std::string> ParseWithPrincipal(const grpc::CallbackServerContext& context,
                                               const grpc::ByteBuffer& request,
                                               const TensorServiceOptions& options, Request* req) {
  if (absl::Status s = ParseRequest(request, req); !s.ok()) return s;
  return PrincipalOf(context, options.principals);
}

}  // namespace

TensorServiceImpl::TensorServiceImpl(store::TensorStore* store, Engine* engine,
                                     sched::Admission* admission, CallTracker* calls,
                                     TensorServiceOptions options,
                                     std::shared_ptr<spdlog::logger> logger)
    : store_(store),
      engine_(engine),
      admission_(admission),
      calls_(calls),
      options_(options),
      logger_(std::move(logger)),
      chunk_buffers_(ChunkBuffers::Create(options.chunks.buffer_idle_bytes)) {}

grpc::ServerUnaryReactor* TensorServiceImpl::CreateTensor(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_->Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  grpc::ServerUnaryReactor* reactor = new TrackedUnaryReactor(std::move(ticket));
  v1::CreateTensorRequest req;
  absl::StatusOr<std::string> principal = ParseWithPrincipal(*context, *request, options_, &req);
  absl::Status s = principal.status();
  const TensorDesc desc = TensorFromProto(req.desc());
  absl::StatusOr<sched::Admitted> admitted = sched::Admitted();
  if (s.ok()) {
    admitted = admission_->Admit(
        TensorWork(desc, "desc", req.data().size(), DeadlineOf(*context)));
    s = admitted.status();
  }
  if (s.ok() && !req.data().empty() && req.data().size() != desc.total_tensor_size_in_bytes) {
    s = ChunkCursor::Error("CREATE_DATA_SIZE", "data",
                   absl::StrCat(req.data().size(), " bytes of data for a tensor of ",
                                desc.total_tensor_size_in_bytes,
                                ": send none or all of it (or use WriteTensor)"));
  }
  absl::StatusOr<absl::Duration> ttl = store::RequestedTtl(req.ttl_seconds(), "ttl_seconds");
  if (s.ok()) s = ttl.status();
  absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> t =
      s.ok() ? store_->Create(*principal, desc, *ttl, /*pending=*/!req.data().empty()) : s;
  if (!t.ok()) {
    reactor->Finish(ClientStatus(t.status(), *logger_));
    return reactor;
  }
  if (req.data().empty()) {
    Answer(reactor, absl::OkStatus(), InfoOf(**t), response, *logger_);
    return reactor;
  }
  std::shared_ptr<const store::ResidentTensor> tensor = *t;
  // The bytes stay reserved until the engine has them.
  engine_->WriteResident(tensor->buffer, 0, std::move(*req.mutable_data()),
                         [this, reactor, tensor, response,
                          admitted = std::move(*admitted)](absl::Status w) {
                           if (w.ok()) {
                             store_->Publish(tensor->handle);
                           } else {
                             store_->Abandon(tensor->handle);
                           }
                           Answer(reactor, w, InfoOf(*tensor), response, *logger_);
                         });
  return reactor;
}

grpc::ServerReadReactor<grpc::ByteBuffer>* TensorServiceImpl::WriteTensor(
    grpc::CallbackServerContext* context, grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_->Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerReadReactor<grpc::ByteBuffer>>();
  return NewWriteTensorReactor(*this, context, response, std::move(ticket));
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* TensorServiceImpl::ReadTensor(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  CallTracker::Ticket ticket = calls_->Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerWriteReactor<grpc::ByteBuffer>>();
  return NewReadTensorReactor(*this, context, *request, std::move(ticket));
}

template <typename Request, typename Answer>
grpc::ServerUnaryReactor* TensorServiceImpl::AnswerTensorCall(grpc::CallbackServerContext* context,
                                                              const grpc::ByteBuffer* request,
                                                              Answer answer) {
  return AnswerInline(*calls_, [&] {
    Request req;
    absl::StatusOr<std::string> principal = ParseWithPrincipal(*context, *request, options_, &req);
    if (!principal.ok()) return ClientStatus(principal.status(), *logger_);
    return answer(*principal, req);
  });
}

grpc::ServerUnaryReactor* TensorServiceImpl::ReleaseTensor(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return AnswerTensorCall<v1::ReleaseTensorRequest>(
      context, request, [&](const std::string& principal, const v1::ReleaseTensorRequest& req) {
        absl::Status s = store_->Release(principal, req.handle());
        if (!s.ok()) return ClientStatus(s, *logger_);
        return SerializeResponse(v1::ReleaseTensorResponse(), response);
      });
}

grpc::ServerUnaryReactor* TensorServiceImpl::ListTensors(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return AnswerTensorCall<v1::ListTensorsRequest>(
      context, request, [&](const std::string& principal, const v1::ListTensorsRequest&) {
        v1::ListTensorsResponse out;
        for (const auto& t : store_->List(principal)) *out.add_tensors() = InfoOf(*t);
        out.set_principal_bytes(store_->PrincipalBytes(principal));
        out.set_principal_quota_bytes(store_->options().bytes_per_principal);
        return SerializeResponse(out, response);
      });
}

}  // namespace dmls::server
