#include "server/rpc/chunked_reactor.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "dmlserve/v1/dmlserve.pb.h"
#include "engine/ops/rule_status.h"
#include "server/rpc/chunk_cursor.h"
#include "server/rpc/message_codec.h"
#include "server/rpc/ref_counted_reactor.h"
#include "server/mapping/proto_mapping.h"
#include "server/mapping/status_mapping.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

constexpr const char* kSlotNames[] = {"input", "scale", "bias"};

// One call. Its steps run one at a time (read, engine write, read, ...,
// chain, engine read, write, ...), so the fields below need no lock. Lives
// until gRPC is done and every engine call has answered
// (ref_counted_reactor.h: gRPC's reference plus one per engine call).
class ChunkedReactor final
    : public RefCountedReactor<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>> {
 public:
  ChunkedReactor(ChunkedCall call, Engine* engine, store::TensorStore* store,
                 sched::Admission* admission, ChunkBuffers* buffers,
                 const ChunkedOptions& options, CallTracker::Ticket ticket,
                 std::shared_ptr<spdlog::logger> logger)
      : ticket_(std::move(ticket)),
        engine_(engine),
        store_(store),
        admission_(admission),
        buffers_(buffers),
        options_(options),
        logger_(std::move(logger)),
        call_(std::move(call)),
        start_(absl::Now()) {
    StartRead(&incoming_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return Run();  // the client closed its side
    v1::ChunkedRequest msg;
    if (absl::Status s = ParseRequest(incoming_, &msg); !s.ok()) return Fail(s);
    switch (msg.part_case()) {
      case v1::ChunkedRequest::kHeader:
        if (have_header_) {
          return Fail(ChunkCursor::Error("CHUNK_HEADER_REPEATED", "header",
                                         "the header comes once, first"));
        }
        if (absl::Status s = Open(msg.header()); !s.ok()) return Fail(s);
        StartRead(&incoming_);
        return;
      case v1::ChunkedRequest::kChunk:
        return TakeChunk(*msg.mutable_chunk());
      case v1::ChunkedRequest::kEnd:
        return Run();
      case v1::ChunkedRequest::PART_NOT_SET:
        return Fail(ChunkCursor::Error("CHUNK_HEADER_MISSING", "part",
                                       "a message must carry a header, a chunk or end"));
    }
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return Fail(absl::CancelledError("the client went away"));
    if (sent_all_) {
      if (!MarkFinished()) return;
      ReleaseTensors();
      Finish(grpc::Status::OK);
      return;
    }
    SendNext();
  }

  void OnCancel() override { cancelled_->store(true); }

  void OnDone() override {
    ReleaseTensors();
    ticket_.End();
    Unref();
  }

 private:
  absl::Status Open(const v1::ChunkedHeader& header) {
    if (!call_.principal.ok()) return call_.principal.status();
    if (!call_.output_ratio.ok()) return call_.output_ratio.status();
    have_header_ = true;
    request_id_ = header.request_id();
    level_ = FeatureLevelFromProto(header.feature_level(), options_.highest_feature_level);
    in_place_ = header.in_place();
    op_ = OperatorFromProto(header.operator_());
    const std::array<const std::optional<TensorDesc>*, 3> descs = {&op_.input, &op_.scale,
                                                                   &op_.bias};
    sched::Work work;
    work.kind = sched::Work::Kind::kChunked;
    work.feature_level = static_cast<FeatureLevel>(level_);
    sched::WorkStep& ws = work.steps.emplace_back();
    ws.op = op_;
    ws.in_place = in_place_;
    ws.returns_output = true;
    std::array<sched::WorkSource*, 3> sources = {&ws.input, &ws.scale, &ws.bias};
    for (size_t i = 0; i < descs.size(); ++i) {
      if (!descs[i]->has_value()) continue;
      sources[i]->kind = sched::WorkSource::Kind::kStreamed;
      sources[i]->bytes = (**descs[i]).total_tensor_size_in_bytes;
    }
    work.chunk_bytes = options_.chunks.max_bytes;
    work.deadline = call_.deadline;
    work.cancelled = cancelled_;
    work.output_ratio = *call_.output_ratio;
    absl::StatusOr<sched::Admitted> admitted = admission_->Admit(work);
    if (!admitted.ok()) return admitted.status();
    admitted_ = std::move(*admitted);
    step_.op = op_;
    step_.in_place = in_place_;
    out_bytes_ = StepOutputBytes(step_);
    chunk_ = options_.chunks.For(header.chunk_bytes());
    for (size_t i = 0; i < 3; ++i) {
      if (!descs[i]->has_value()) continue;
      TensorDesc desc = **descs[i];
      // In place, the input tensor holds the output range too.
      if (i == 0 && in_place_) desc.total_tensor_size_in_bytes = out_bytes_;
      absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> t =
          store_->Create(*call_.principal, desc, absl::ZeroDuration(), /*pending=*/true);
      if (!t.ok()) return t.status();
      tensors_[i] = *t;
      cursors_[i] = ChunkCursor(0, (**descs[i]).total_tensor_size_in_bytes);
    }
    return absl::OkStatus();
  }

  void TakeChunk(v1::TensorChunk& chunk) {
    if (!have_header_) {
      return Fail(ChunkCursor::Error("CHUNK_HEADER_MISSING", "header",
                                     "the first message must be the header"));
    }
    const int slot = chunk.slot() - v1::TENSOR_SLOT_INPUT;
    if (slot < 0 || slot > 2 || !tensors_[slot]) {
      return Fail(ChunkCursor::Error(
          "CHUNK_SLOT_INVALID", "chunk.slot",
          absl::StrCat("slot ", v1::TensorSlot_Name(chunk.slot()),
                       " is not an input tensor of this operator")));
    }
    if (absl::Status s = cursors_[slot].Accept(chunk.offset(), chunk.data().size(), "chunk");
        !s.ok()) {
      return Fail(s);
    }
    Ref();
    engine_->WriteResident(tensors_[slot]->buffer, chunk.offset(),
                           std::move(*chunk.mutable_data()), [this](absl::Status s) {
                             if (s.ok()) {
                               StartRead(&incoming_);
                             } else {
                               Fail(s, /*engine=*/true);
                             }
                             Unref();
                           });
  }

  void Run() {
    if (!have_header_) {
      return Fail(ChunkCursor::Error("CHUNK_HEADER_MISSING", "header",
                                     "the stream ended before the header"));
    }
    for (size_t i = 0; i < 3; ++i) {
      if (!tensors_[i]) continue;
      if (absl::Status s = cursors_[i].Complete(absl::StrCat("chunk(", kSlotNames[i], ")"));
          !s.ok()) {
        return Fail(s);
      }
    }
    ChainRequest chain;
    chain.feature_level = static_cast<FeatureLevel>(level_);
    chain.deadline = call_.deadline;
    chain.cancelled = cancelled_;
    ChainStep step = step_;
    std::array<ChainSource*, 3> sources = {&step.input, &step.scale, &step.bias};
    for (size_t i = 0; i < 3; ++i) {
      if (tensors_[i]) *sources[i] = ChainSource::Resident(tensors_[i]->buffer);
    }
    if (in_place_) {
      result_ = tensors_[0]->buffer;
    } else {
      TensorDesc desc = *op_.output;
      absl::StatusOr<std::shared_ptr<const store::ResidentTensor>> t =
          store_->Create(*call_.principal, desc, absl::ZeroDuration(), /*pending=*/true);
      if (!t.ok()) return Fail(t.status());
      output_ = *t;
      step.output = output_->buffer;
      result_ = output_->buffer;
    }
    chain.steps.push_back(std::move(step));
    Ref();
    engine_->ExecuteChain(std::move(chain), [this](absl::StatusOr<ChainResult> r) {
      if (r.ok()) {
        SendNext();
      } else {
        Fail(r.status(), /*engine=*/true);
      }
      Unref();
    });
  }

  // Reads the next chunk of the output from the engine into a pooled
  // buffer, which becomes the response's data slice (no copy), and writes
  // it; the last write is the done message.
  void SendNext() {
    if (sent_ == out_bytes_) {
      v1::ChunkedResponse last;
      last.set_request_id(request_id_);
      last.set_done(true);
      last.set_engine(engine_->device_info().backend);
      last.set_server_time_us(
          static_cast<uint64_t>(absl::ToInt64Microseconds(absl::Now() - start_)));
      sent_all_ = true;
      return Write(last);
    }
    const uint64_t offset = sent_;
    const uint64_t n = std::min(chunk_, out_bytes_ - sent_);
    sent_ += n;
    Ref();
    ChunkBuffers::Lease lease = buffers_->Take(n);
    const absl::Span<char> into(lease.data(), n);
    engine_->ReadResidentInto(
        result_, offset, into,
        [this, offset, n, lease = std::move(lease)](absl::Status read) mutable {
          if (!read.ok()) {
            Fail(read, /*engine=*/true);
          } else {
            v1::ChunkedResponse msg;
            msg.set_request_id(request_id_);
            v1::TensorChunk chunk;
            chunk.set_slot(v1::TENSOR_SLOT_OUTPUT);
            chunk.set_offset(offset);
            SerializeWithNestedBytesField(msg, v1::ChunkedResponse::kChunkFieldNumber, chunk,
                                          v1::TensorChunk::kDataFieldNumber,
                                          std::move(lease).IntoSlice(n), &outgoing_);
            StartWrite(&outgoing_);
          }
          Unref();
        });
  }

  void Write(const v1::ChunkedResponse& msg) {
    if (grpc::Status s = SerializeResponse(msg, &outgoing_); !s.ok()) {
      Finish(s);
      return;
    }
    StartWrite(&outgoing_);
  }

  void Fail(const absl::Status& s, bool engine = false) {
    if (!MarkFinished()) return;
    ReleaseTensors();
    RequestError e = engine ? RequestError::FromEngine(s) : RequestError::FromStatus(s);
    if (e.code == absl::StatusCode::kInternal) {
      logger_->error("ExecuteChunked {} failed: {}", request_id_, s.ToString());
    }
    Finish(ToGrpcStatus(e, logger_.get()));
  }

  // Gives the call's tensors (and their quota) and what admission let in
  // back; done before the client gets its final status, so that the quota
  // is back when it looks. Idempotent.
  void ReleaseTensors() {
    for (const auto& t : tensors_) {
      if (t) store_->Abandon(t->handle);
    }
    if (output_) store_->Abandon(output_->handle);
    admitted_ = sched::Admitted();
  }

  CallTracker::Ticket ticket_;  // ended in OnDone
  Engine* const engine_;
  store::TensorStore* const store_;
  sched::Admission* const admission_;
  ChunkBuffers* const buffers_;
  const ChunkedOptions options_;
  const std::shared_ptr<spdlog::logger> logger_;
  const ChunkedCall call_;
  const absl::Time start_;
  const std::shared_ptr<std::atomic<bool>> cancelled_ =
      std::make_shared<std::atomic<bool>>(false);
  sched::Admitted admitted_;  // from Open until the call ends
  grpc::ByteBuffer incoming_;
  grpc::ByteBuffer outgoing_;
  bool have_header_ = false;
  uint64_t request_id_ = 0;
  uint32_t level_ = 0;
  bool in_place_ = false;
  OperatorDesc op_;
  ChainStep step_;
  uint64_t out_bytes_ = 0;
  uint64_t chunk_ = 0;
  std::array<std::shared_ptr<const store::ResidentTensor>, 3> tensors_;
  std::array<ChunkCursor, 3> cursors_;
  std::shared_ptr<const store::ResidentTensor> output_;
  std::shared_ptr<ResidentBuffer> result_;
  uint64_t sent_ = 0;
  bool sent_all_ = false;
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewChunkedReactor(
    ChunkedCall call, Engine* engine, store::TensorStore* store, sched::Admission* admission,
    ChunkBuffers* buffers, const ChunkedOptions& options, CallTracker::Ticket ticket,
    std::shared_ptr<spdlog::logger> logger) {
  return new ChunkedReactor(std::move(call), engine, store, admission, buffers, options,
                            std::move(ticket), std::move(logger));
}

}  // namespace dmls::server
