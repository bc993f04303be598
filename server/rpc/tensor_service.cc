#include "server/rpc/tensor_service.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/core/mutex.h"
#include "engine/ops/rule_status.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/chunk_buffers.h"
#include "server/rpc/chunk_cursor.h"
#include "server/rpc/message_codec.h"
#include "server/rpc/ref_counted_reactor.h"
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

namespace {

absl::Status ChunkError(std::string rule, std::string field, std::string message) {
  return ChunkCursor::Error(std::move(rule), std::move(field), std::move(message));
}

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

// The client's error as its code (not made INTERNAL): for store and
// checks' statuses, which carry client errors with rule ids.
grpc::Status ClientStatus(const absl::Status& s, spdlog::logger& log) {
  return ToGrpcStatus(RequestError::FromStatus(s), &log);
}

// WriteTensor: chunks in order into one tensor. Up to kWriteWindow chunks
// may be with the engine at once (it applies them in order) while the next
// is read, so receiving overlaps copying to the device. Lives until gRPC is
// done (OnDone) and the engine has answered every write.
//
// All or nothing: a write to an existing tensor goes to a fresh pending
// version of it (the bytes outside the written range copied over through
// the host first), which takes the tensor's place once every chunk is
// written (TensorStore::Replace); a failed or cancelled write leaves the
// old bytes as they were. The version counts against the quotas while
// the write runs.
constexpr int kWriteWindow = 4;

class WriteReactor final : public RefCountedReactor<grpc::ServerReadReactor<grpc::ByteBuffer>> {
 public:
  WriteReactor(TensorServiceImpl& service, grpc::CallbackServerContext* context,
               grpc::ByteBuffer* response, CallTracker::Ticket ticket)
      : service_(service),
        ticket_(std::move(ticket)),
        principal_(PrincipalOf(*context, service.options().tokens.get(),
                               service.options().tenant_from_peer)),
        deadline_(DeadlineOf(*context)),
        response_(response) {
    StartRead(&incoming_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      bool end;
      {
        MutexLock lock(&mu_);
        reads_done_ = true;
        end = writes_ == 0;
      }
      if (end) End();
      return;
    }
    // Reads come one at a time: tensor_ and cursor_ are this thread's.
    v1::WriteTensorRequest msg;
    if (absl::Status s = ParseRequest(incoming_, &msg); !s.ok()) return Fail(s);
    if (!tensor_) {
      if (absl::Status s = Open(msg); !s.ok()) return Fail(s);
    } else if (!msg.handle().empty() || msg.has_create()) {
      return Fail(ChunkError("CHUNK_HEADER_REPEATED", "handle",
                             "only the first message names the tensor"));
    }
    if (!msg.has_chunk() || msg.chunk().data().empty()) {
      StartRead(&incoming_);
      return;
    }
    const uint64_t offset = msg.chunk().offset();
    if (absl::Status s = cursor_.Accept(offset, msg.chunk().data().size(), "chunk");
        !s.ok()) {
      return Fail(s);
    }
    bool read_now;
    {
      MutexLock lock(&mu_);
      ++writes_;
      read_now = reading_ = writes_ < kWriteWindow;
    }
    Ref();
    service_.engine().WriteResident(
        tensor_->buffer, offset, std::move(*msg.mutable_chunk()->mutable_data()),
        [this](absl::Status s) {
          OnWritten(s);
          Unref();
        });
    if (read_now) StartRead(&incoming_);
  }

  void OnCancel() override {}
  void OnDone() override {
    if (created_ && !published_) service_.store().Abandon(tensor_->handle);
    ticket_.End();
    Unref();
  }

 private:
  void OnWritten(const absl::Status& s) {
    if (!s.ok()) return Fail(s, /*engine=*/true);
    bool read_now = false, end = false;
    {
      MutexLock lock(&mu_);
      --writes_;
      if (finished()) return;
      if (reads_done_) {
        end = writes_ == 0;
      } else if (!reading_) {
        read_now = reading_ = true;
      }
    }
    if (read_now) StartRead(&incoming_);
    if (end) End();
  }

  absl::Status Open(v1::WriteTensorRequest& msg) {
    if (!principal_.ok()) return principal_.status();
    if (msg.has_create() == !msg.handle().empty()) {
      return ChunkError("CHUNK_HEADER_MISSING", "handle",
                        "the first message names the tensor: a handle or create, one of them");
    }
    if (msg.has_create()) {
      const TensorDesc desc = TensorFromProto(msg.create().desc());
      // The chunks are not counted against the byte budget: at most
      // kWriteWindow of them are held at once, each bounded by the message
      // limit.
      absl::StatusOr<sched::Admitted> admitted =
          service_.admission().Admit(TensorWork(desc, "create.desc", 0, deadline_));
      if (!admitted.ok()) return admitted.status();
      if (!msg.create().data().empty()) {
        return ChunkError("CREATE_DATA_SIZE", "create.data",
                          "WriteTensor sends its bytes in chunks, not in create.data");
      }
      absl::StatusOr<absl::Duration> ttl =
          store::RequestedTtl(msg.create().ttl_seconds(), "create.ttl_seconds");
      if (!ttl.ok()) return ttl.status();
      absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> t =
          service_.store().Create(*principal_, desc, *ttl, /*pending=*/true);
      if (!t.ok()) return t.status();
      tensor_ = *t;
      created_ = true;
    } else {
      absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> t =
          service_.store().Find(*principal_, msg.handle());
      if (!t.ok()) return t.status();
      target_ = *t;
    }
    const TensorDesc& desc = (target_ ? target_ : tensor_)->desc;
    const uint64_t size = desc.total_tensor_size_in_bytes;
    if (msg.start_offset() > size || msg.total_bytes() > size - msg.start_offset()) {
      return ChunkError("CHUNK_EXCESS", "total_bytes",
                        absl::StrCat("bytes [", msg.start_offset(), ", +", msg.total_bytes(),
                                     ") are outside the tensor's ", size));
    }
    const uint64_t end = msg.total_bytes() == 0 ? size : msg.start_offset() + msg.total_bytes();
    cursor_ = ChunkCursor(msg.start_offset(), end);
    if (target_) {
      absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> version =
          service_.store().Create(*principal_, desc, absl::ZeroDuration(), /*pending=*/true);
      if (!version.ok()) return version.status();
      tensor_ = *version;
      created_ = true;
      CopyFromTarget(0, msg.start_offset());
      CopyFromTarget(end, size);
    }
    return absl::OkStatus();
  }

  // Copies [from, to) of the tensor being overwritten into the new
  // version, through the host; counted as a write.
  void CopyFromTarget(uint64_t from, uint64_t to) {
    if (from >= to) return;
    {
      MutexLock lock(&mu_);
      ++writes_;
    }
    Ref();
    service_.engine().ReadResident(
        target_->buffer, from, to - from, [this, from](absl::StatusOr<std::string> bytes) {
          if (!bytes.ok()) {
            OnWritten(bytes.status());
            Unref();
            return;
          }
          service_.engine().WriteResident(tensor_->buffer, from, std::move(*bytes),
                                          [this](absl::Status s) {
                                            OnWritten(s);
                                            Unref();
                                          });
        });
  }

  // Every chunk is read and written.
  void End() {
    if (!tensor_) {
      return Fail(ChunkError("CHUNK_HEADER_MISSING", "handle",
                             "the stream ended before naming a tensor"));
    }
    if (absl::Status s = cursor_.Complete("chunk"); !s.ok()) return Fail(s);
    if (target_) {
      if (!MarkFinished()) return;
      absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> replaced =
          service_.store().Replace(target_->handle, tensor_->handle);
      published_ = true;  // the version is the tensor now, or gone
      Finish(replaced.ok() ? SerializeResponse(InfoOf(**replaced), response_)
                           : ClientStatus(replaced.status(), service_.logger()));
      return;
    }
    if (!MarkFinished()) return;
    if (created_) {
      service_.store().Publish(tensor_->handle);
      published_ = true;
    }
    Finish(SerializeResponse(InfoOf(*tensor_), response_));
  }

  void Fail(const absl::Status& s, bool engine = false) {
    if (!MarkFinished()) return;
    // The quota is back before the client hears of the failure.
    if (created_) service_.store().Abandon(tensor_->handle);
    Finish(engine ? ToGrpcStatus(RequestError::FromEngine(s), &service_.logger())
                  : ClientStatus(s, service_.logger()));
  }

  TensorServiceImpl& service_;
  CallTracker::Ticket ticket_;  // ended in OnDone
  const absl::StatusOr<std::string> principal_;
  const absl::Time deadline_;
  grpc::ByteBuffer* const response_;
  grpc::ByteBuffer incoming_;
  // Set by the reading side only (reads are sequential); End and OnDone
  // come after the last read.
  std::shared_ptr<const store::ResidentTensor> tensor_;  // the one written
  std::shared_ptr<const store::ResidentTensor> target_;  // the one overwritten, or null
  bool created_ = false;
  bool published_ = false;
  ChunkCursor cursor_;
  Mutex mu_;
  int writes_ ABSL_GUARDED_BY(mu_) = 0;        // chunks with the engine
  bool reading_ ABSL_GUARDED_BY(mu_) = true;   // a read is outstanding
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
};

// ReadTensor: the range in chunks; the engine reads chunk k+1 while chunk k
// is written. Each chunk is read into a buffer of the service's
// ChunkBuffers (chunk_buffers.h), which becomes the response's data slice
// and goes back to the pool when gRPC has sent it. Lives until gRPC is done
// and the engine has answered.
class ReadReactor final : public RefCountedReactor<grpc::ServerWriteReactor<grpc::ByteBuffer>> {
 public:
  ReadReactor(TensorServiceImpl& service, grpc::CallbackServerContext* context,
              const grpc::ByteBuffer& request, CallTracker::Ticket ticket)
      : service_(service), ticket_(std::move(ticket)) {
    absl::Status s = Open(context, request);
    if (!s.ok()) {
      MarkFinished();
      Finish(ClientStatus(s, service_.logger()));
      return;
    }
    Pump();
  }

  void OnWriteDone(bool ok) override {
    {
      MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
    }
    Pump();
  }
  void OnDone() override {
    ticket_.End();
    Unref();
  }

 private:
  absl::Status Open(grpc::CallbackServerContext* context, const grpc::ByteBuffer& bytes) {
    v1::ReadTensorRequest req;
    if (absl::Status s = ParseRequest(bytes, &req); !s.ok()) return s;
    absl::StatusOr<std::string> principal =
        PrincipalOf(*context, service_.options().tokens.get(),
                    service_.options().tenant_from_peer);
    if (!principal.ok()) return principal.status();
    absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> t =
        service_.store().Find(*principal, req.handle());
    if (!t.ok()) return t.status();
    tensor_ = *t;
    const uint64_t size = tensor_->desc.total_tensor_size_in_bytes;
    if (req.offset() > size || req.length() > size - req.offset()) {
      return ChunkError("READ_RANGE_INVALID", "length",
                        absl::StrCat("bytes [", req.offset(), ", +", req.length(),
                                     ") are outside the tensor's ", size));
    }
    const TensorServiceOptions& o = service_.options();
    chunk_ = req.chunk_bytes() == 0 ? o.default_chunk_bytes
                                    : std::min(req.chunk_bytes(), o.max_chunk_bytes);
    MutexLock lock(&mu_);
    next_ = req.offset();
    end_ = req.length() == 0 ? size : req.offset() + req.length();
    return absl::OkStatus();
  }

  // Writes the ready chunk when the stream is free, starts the engine read
  // of the next one when none is under way, finishes after the last. The
  // engine is called without mu_ held (it may answer at once).
  void Pump() {
    uint64_t offset = 0, n = 0;
    {
      MutexLock lock(&mu_);
      if (finished()) return;
      if (!writing_ && have_ready_) {
        have_ready_ = false;
        writing_ = true;
        outgoing_ = std::move(ready_);
        ready_.Clear();
        StartWrite(&outgoing_);
      }
      if (!fetching_ && !have_ready_ && next_ < end_) {
        offset = next_;
        n = std::min(chunk_, end_ - next_);
        next_ += n;
        fetching_ = true;
        Ref();
      } else if (!writing_ && !fetching_ && !have_ready_ && next_ == end_) {
        FinishLocked(grpc::Status::OK);
      }
    }
    if (n == 0) return;
    ChunkBuffers::Lease lease = service_.chunk_buffers().Take(n);
    const absl::Span<char> into(lease.data(), n);
    service_.engine().ReadResidentInto(
        tensor_->buffer, offset, into,
        [this, offset, n, lease = std::move(lease)](absl::Status read) mutable {
          {
            MutexLock lock(&mu_);
            fetching_ = false;
            if (!read.ok()) {
              FinishLocked(ToGrpcStatus(RequestError::FromEngine(read), &service_.logger()));
            } else {
              v1::TensorChunk chunk;
              chunk.set_slot(v1::TENSOR_SLOT_OUTPUT);
              chunk.set_offset(offset);
              SerializeWithBytesField(chunk, v1::TensorChunk::kDataFieldNumber,
                                      std::move(lease).IntoSlice(n), &ready_);
              have_ready_ = true;
            }
          }
          Pump();
          Unref();
        });
  }

  void FinishLocked(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (MarkFinished()) Finish(status);
  }

  TensorServiceImpl& service_;
  CallTracker::Ticket ticket_;  // ended in OnDone
  std::shared_ptr<const store::ResidentTensor> tensor_;
  uint64_t chunk_ = 0;
  Mutex mu_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t end_ ABSL_GUARDED_BY(mu_) = 0;
  bool fetching_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool have_ready_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ByteBuffer ready_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer outgoing_;  // gRPC's between StartWrite and OnWriteDone
};

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
      chunk_buffers_(ChunkBuffers::Create(options.chunk_buffer_idle_bytes)) {}

grpc::ServerUnaryReactor* TensorServiceImpl::CreateTensor(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_->Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  grpc::ServerUnaryReactor* reactor = new TrackedUnaryReactor(std::move(ticket));
  v1::CreateTensorRequest req;
  absl::Status s = ParseRequest(*request, &req);
  absl::StatusOr<std::string> principal =
      PrincipalOf(*context, options_.tokens.get(), options_.tenant_from_peer);
  if (s.ok()) s = principal.status();
  const TensorDesc desc = TensorFromProto(req.desc());
  absl::StatusOr<sched::Admitted> admitted = sched::Admitted();
  if (s.ok()) {
    admitted = admission_->Admit(
        TensorWork(desc, "desc", req.data().size(), DeadlineOf(*context)));
    s = admitted.status();
  }
  if (s.ok() && !req.data().empty() && req.data().size() != desc.total_tensor_size_in_bytes) {
    s = ChunkError("CREATE_DATA_SIZE", "data",
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
  return new WriteReactor(*this, context, response, std::move(ticket));
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* TensorServiceImpl::ReadTensor(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) {
  CallTracker::Ticket ticket = calls_->Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerWriteReactor<grpc::ByteBuffer>>();
  return new ReadReactor(*this, context, *request, std::move(ticket));
}

grpc::ServerUnaryReactor* TensorServiceImpl::ReleaseTensor(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_->Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  grpc::ServerUnaryReactor* reactor = new TrackedUnaryReactor(std::move(ticket));
  v1::ReleaseTensorRequest req;
  absl::Status s = ParseRequest(*request, &req);
  absl::StatusOr<std::string> principal =
      PrincipalOf(*context, options_.tokens.get(), options_.tenant_from_peer);
  if (s.ok()) s = principal.status();
  if (s.ok()) s = store_->Release(*principal, req.handle());
  if (!s.ok()) {
    reactor->Finish(ClientStatus(s, *logger_));
    return reactor;
  }
  reactor->Finish(SerializeResponse(v1::ReleaseTensorResponse(), response));
  return reactor;
}

grpc::ServerUnaryReactor* TensorServiceImpl::ListTensors(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_->Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  grpc::ServerUnaryReactor* reactor = new TrackedUnaryReactor(std::move(ticket));
  v1::ListTensorsRequest req;
  absl::Status s = ParseRequest(*request, &req);
  absl::StatusOr<std::string> principal =
      PrincipalOf(*context, options_.tokens.get(), options_.tenant_from_peer);
  if (s.ok()) s = principal.status();
  if (!s.ok()) {
    reactor->Finish(ClientStatus(s, *logger_));
    return reactor;
  }
  v1::ListTensorsResponse out;
  for (const auto& t : store_->List(*principal)) *out.add_tensors() = InfoOf(*t);
  out.set_principal_bytes(store_->PrincipalBytes(*principal));
  out.set_principal_quota_bytes(store_->options().bytes_per_principal);
  reactor->Finish(SerializeResponse(out, response));
  return reactor;
}

}  // namespace dmls::server
