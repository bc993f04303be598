#include "server/kserve/stream_infer_reactor.h"

#include <deque>
#include <utility>

#include "engine/core/mutex.h"
#include "server/kserve/infer_mapping.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/message_codec.h"
#include "server/rpc/tracked_reactor.h"

namespace dmls::server::kserve {
namespace {

// The output bytes a request's response will carry, counted against the
// stream's byte bound until it is written: its raw input bytes (every
// operator's output is its input's size).
uint64_t ExpectedBytes(const inference::ModelInferRequest& request) {
  uint64_t bytes = 0;
  if (!request.raw_input_contents().empty()) bytes = request.raw_input_contents(0).size();
  return bytes;
}

class StreamInferReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
      public CallTracker::Stoppable {
 public:
  StreamInferReactor(grpc::CallbackServerContext* context,
                     absl::StatusOr<std::string> principal, CallTracker& calls,
                     InferRunner& runner, StreamOptions options,
                     std::shared_ptr<spdlog::logger> logger)
      : runner_(runner),
        window_(options.window == 0 ? 1 : options.window),
        max_queued_bytes_(options.max_queued_bytes == 0 ? 1 : options.max_queued_bytes),
        deadline_(DeadlineOf(*context)),
        principal_(std::move(principal)),
        output_ratio_(RequestedOutputRatio(*context)),
        logger_(std::move(logger)) {
    // Marked before Begin: Stop may run as soon as Begin has registered us.
    {
      MutexLock lock(&mu_);
      reading_ = true;
    }
    ticket_ = calls.Begin(this);
    if (!ticket_) {
      {
        MutexLock lock(&mu_);
        reading_ = false;
        finished_ = true;
      }
      Finish(ShuttingDownStatus());
      return;
    }
    StartRead(&read_buffer_);
  }

  void Retain() override {
    MutexLock lock(&mu_);
    ++refs_;
  }

  void Stop() override {
    Next next;
    {
      MutexLock lock(&mu_);
      if (!read_done_) {
        read_done_ = true;
        if (end_status_.ok()) end_status_ = ShuttingDownStatus();
      }
      next = NextLocked();
    }
    Start(next);
    Unref();
  }

  void OnReadDone(bool ok) override {
    inference::ModelInferRequest request;
    absl::Status parsed = ok ? ParseRequest(read_buffer_, &request) : absl::OkStatus();
    read_buffer_.Clear();
    const uint64_t expected = ExpectedBytes(request);
    bool run = false;
    Next next;
    {
      MutexLock lock(&mu_);
      reading_ = false;
      if (!ok) {
        read_done_ = true;  // half-close, or the call broke
      } else if (read_done_) {
        // Stopped while this read was outstanding: dropped.
      } else if (!parsed.ok()) {
        read_done_ = true;
        end_status_ = ToGrpcStatus(parsed);
      } else {
        ++window_used_;
        expected_bytes_ += expected;
        ++refs_;  // held by the runner's callback
        run = true;
      }
      next = NextLocked();
    }
    if (!parsed.ok()) logger_->debug("ModelStreamInfer: {}", std::string(parsed.message()));
    Start(next);
    if (!run) return;
    const std::string model = request.model_name();
    const std::string id = request.id();
    runner_.Run(request,
                CallContext{deadline_, cancelled_, principal_, output_ratio_,
                            MetricsMethod::kExecuteStream},
                [this, expected, model, id](InferOutcome outcome) {
                  OnOutcome(std::move(outcome), expected, model, id);
                });
  }

  void OnWriteDone(bool ok) override {
    Next next;
    {
      MutexLock lock(&mu_);
      writing_ = false;
      queued_bytes_ -= queue_.front().bytes.Length();
      queue_.pop_front();
      --window_used_;
      if (!ok && !finished_) {
        finished_ = true;  // the client is gone
        DropUnsentLocked();
        next.finish = true;
        next.status = grpc::Status(grpc::StatusCode::CANCELLED, "response write failed");
      } else {
        next = NextLocked();
      }
    }
    Start(next);
  }

  void OnCancel() override {
    cancelled_->store(true);
    bool finish = false;
    {
      MutexLock lock(&mu_);
      if (!finished_) {
        finished_ = finish = true;
        DropUnsentLocked();
      }
    }
    if (finish) Finish(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    ticket_.End();
    Unref();
  }

 private:
  // gRPC calls to make once mu_ is released.
  struct Next {
    const grpc::ByteBuffer* write = nullptr;
    bool read = false;
    bool finish = false;
    grpc::Status status;
  };
  struct Pending {
    grpc::ByteBuffer bytes;
    ExecuteOutcome held;  // InferOutcome::executed
  };

  void OnOutcome(InferOutcome outcome, uint64_t expected, const std::string& model,
                 const std::string& id) {
    inference::ModelStreamInferResponse response;
    if (outcome.error.ok()) {
      *response.mutable_infer_response() = std::move(outcome.response);
    } else {
      response.set_error_message(ToGrpcStatus(outcome.error, logger_.get()).error_message());
      response.mutable_infer_response()->set_model_name(model);
      response.mutable_infer_response()->set_id(id);
    }
    grpc::ByteBuffer serialized;
    grpc::Status status = SerializeResponse(response, &serialized);
    Next next;
    {
      MutexLock lock(&mu_);
      expected_bytes_ -= expected;
      if (finished_ || !status.ok()) {
        --window_used_;
        if (!finished_) {
          finished_ = true;
          DropUnsentLocked();
          next.finish = true;
          next.status = status;
        }
      } else {
        queued_bytes_ += serialized.Length();
        queue_.push_back(Pending{std::move(serialized), std::move(outcome.executed)});
        next = NextLocked();
      }
    }
    Start(next);
    Unref();
  }

  Next NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Next n;
    if (finished_) return n;
    if (!writing_ && !queue_.empty()) {
      writing_ = true;
      n.write = &queue_.front().bytes;
    }
    if (!reading_ && !read_done_ && window_used_ < window_ &&
        expected_bytes_ + queued_bytes_ < max_queued_bytes_) {
      reading_ = true;
      n.read = true;
    }
    if (read_done_ && window_used_ == 0 && !writing_) {
      finished_ = true;
      n.finish = true;
      n.status = end_status_;
    }
    return n;
  }

  // Forgets the responses not handed to gRPC (the one being written stays).
  void DropUnsentLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const auto first = queue_.begin() + (writing_ && !queue_.empty() ? 1 : 0);
    for (auto it = first; it != queue_.end(); ++it) queued_bytes_ -= it->bytes.Length();
    window_used_ -= static_cast<uint32_t>(queue_.end() - first);
    queue_.erase(first, queue_.end());
  }

  void Start(const Next& n) {
    if (n.write != nullptr) StartWrite(n.write);
    if (n.read) StartRead(&read_buffer_);
    if (n.finish) Finish(n.status);
  }

  void Unref() {
    bool last;
    {
      MutexLock lock(&mu_);
      last = --refs_ == 0;
    }
    if (last) delete this;
  }

  InferRunner& runner_;
  CallTracker::Ticket ticket_;  // set in the constructor, ended in OnDone
  const uint32_t window_;
  const uint64_t max_queued_bytes_;
  const absl::Time deadline_;
  const absl::StatusOr<std::string> principal_;
  const absl::StatusOr<uint64_t> output_ratio_;
  const std::shared_ptr<spdlog::logger> logger_;
  const std::shared_ptr<std::atomic<bool>> cancelled_ =
      std::make_shared<std::atomic<bool>>(false);
  grpc::ByteBuffer read_buffer_;  // only the one outstanding read uses it

  Mutex mu_;
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t window_used_ ABSL_GUARDED_BY(mu_) = 0;  // read, response not written
  uint64_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t expected_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  grpc::Status end_status_ ABSL_GUARDED_BY(mu_);
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  // gRPC's (dropped in OnDone), one per request running, one while a Stop
  // is due.
  int refs_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewStreamInferReactor(
    grpc::CallbackServerContext* context, absl::StatusOr<std::string> principal,
    CallTracker& calls, InferRunner& runner, StreamOptions options,
    std::shared_ptr<spdlog::logger> logger) {
  return new StreamInferReactor(context, std::move(principal), calls, runner, options,
                                std::move(logger));
}

}  // namespace dmls::server::kserve
