#include "server/rpc/tensor_read_reactor.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/core/mutex.h"
#include "engine/ops/rule_status.h"
#include "server/mapping/proto_mapping.h"
#include "server/mapping/status_mapping.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/chunk_buffers.h"
#include "server/rpc/chunk_cursor.h"
#include "server/rpc/message_codec.h"
#include "server/rpc/ref_counted_reactor.h"
#include "server/security/principal.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

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
        PrincipalOf(*context, service_.options().principals);
    if (!principal.ok()) return principal.status();
    absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> t =
        service_.store().Find(*principal, req.handle());
    if (!t.ok()) return t.status();
    tensor_ = *t;
    const uint64_t size = tensor_->desc.total_tensor_size_in_bytes;
    if (req.offset() > size || req.length() > size - req.offset()) {
      return ChunkCursor::Error("READ_RANGE_INVALID", "length",
                        absl::StrCat("bytes [", req.offset(), ", +", req.length(),
                                     ") are outside the tensor's ", size));
    }
    chunk_ = service_.options().chunks.For(req.chunk_bytes());
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

grpc::ServerWriteReactor<grpc::ByteBuffer>* NewReadTensorReactor(
    TensorServiceImpl& service, grpc::CallbackServerContext* context,
    const grpc::ByteBuffer& request, CallTracker::Ticket ticket) {
  return new ReadReactor(service, context, request, std::move(ticket));
}

}  // namespace dmls::server
