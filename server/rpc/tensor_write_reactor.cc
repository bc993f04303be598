#include "server/rpc/tensor_write_reactor.h"

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
//
// Host memory: each chunk holds its bytes against the byte budget from
// its arrival until the engine has copied it, and the bytes kept from the
// old version pass through the host a piece at a time (PieceBytes), each
// held against the budget the same way; a chunk or piece the
// budget cannot take fails the write with RESOURCE_EXHAUSTED
// (MEMORY_BUDGET).
constexpr int kWriteWindow = 4;

class WriteReactor final : public RefCountedReactor<grpc::ServerReadReactor<grpc::ByteBuffer>> {
 public:
  WriteReactor(TensorServiceImpl& service, grpc::CallbackServerContext* context,
               grpc::ByteBuffer* response, CallTracker::Ticket ticket)
      : service_(service),
        ticket_(std::move(ticket)),
        principal_(PrincipalOf(*context, service.options().principals)),
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
      return Fail(ChunkCursor::Error("CHUNK_HEADER_REPEATED", "handle",
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
    absl::StatusOr<sched::ByteBudget::Reservation> held =
        service_.admission().ReserveBytes(msg.chunk().data().size());
    if (!held.ok()) return Fail(held.status());
    bool read_now;
    {
      MutexLock lock(&mu_);
      ++writes_;
      read_now = reading_ = writes_ < kWriteWindow;
    }
    Ref();
    service_.engine().WriteResident(
        tensor_->buffer, offset, std::move(*msg.mutable_chunk()->mutable_data()),
        [this, held = *std::move(held)](absl::Status s) mutable {
          held.reset();
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
      return ChunkCursor::Error("CHUNK_HEADER_MISSING", "handle",
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
        return ChunkCursor::Error("CREATE_DATA_SIZE", "create.data",
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
      return ChunkCursor::Error("CHUNK_EXCESS", "total_bytes",
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
  // version, through the host a piece at a time; counted as one write
  // until its last piece is written.
  void CopyFromTarget(uint64_t from, uint64_t to) {
    if (from >= to) return;
    {
      MutexLock lock(&mu_);
      ++writes_;
    }
    Ref();
    CopyPiece(from, to);
  }

  // The piece of [from, to) at `from`, then the rest; the reference that
  // CopyFromTarget took goes with the last piece (or the first failure).
  void CopyPiece(uint64_t from, uint64_t to) {
    if (finished()) return Unref();  // failed or cancelled: nothing to keep
    const uint64_t n = std::min(to - from, PieceBytes());
    absl::StatusOr<sched::ByteBudget::Reservation> held = service_.admission().ReserveBytes(n);
    if (!held.ok()) {
      Fail(held.status());
      return Unref();
    }
    service_.engine().ReadResident(
        target_->buffer, from, n,
        [this, from, to, n, held = *std::move(held)](absl::StatusOr<std::string> bytes) mutable {
          if (!bytes.ok()) {
            OnWritten(bytes.status());
            return Unref();
          }
          const uint64_t next = from + n;
          service_.engine().WriteResident(
              tensor_->buffer, from, *std::move(bytes),
              [this, next, to, held = std::move(held)](absl::Status s) mutable {
                held.reset();
                if (!s.ok() || next == to) {
                  OnWritten(s);
                  return Unref();
                }
                CopyPiece(next, to);
              });
        });
  }

  // A piece copied through the host: ChunkOptions::max_bytes, or an
  // eighth of a smaller byte budget (at least 64 KiB), so that a small
  // budget still leaves room beside it.
  uint64_t PieceBytes() const {
    const uint64_t budget = service_.admission().budget().capacity();
    const uint64_t most = service_.options().chunks.max_bytes;
    return budget == 0 ? most : std::min(most, std::max<uint64_t>(budget / 8, 64 << 10));
  }

  // Every chunk is read and written.
  void End() {
    if (!tensor_) {
      return Fail(ChunkCursor::Error("CHUNK_HEADER_MISSING", "handle",
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

}  // namespace

grpc::ServerReadReactor<grpc::ByteBuffer>* NewWriteTensorReactor(
    TensorServiceImpl& service, grpc::CallbackServerContext* context,
    grpc::ByteBuffer* response, CallTracker::Ticket ticket) {
  return new WriteReactor(service, context, response, std::move(ticket));
}

}  // namespace dmls::server
