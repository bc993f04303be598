#include "server/rpc/service.h"

#include <atomic>
#include <deque>
#include <type_traits>
#include <utility>

#include "absl/time/clock.h"
#include "engine/core/mutex.h"
#include "engine/sched/admission.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/message_codec.h"
#include "server/mapping/proto_mapping.h"
#include "server/security/principal.h"
#include "server/mapping/status_mapping.h"
#include "server/rpc/tracked_reactor.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;

// The output bytes an ExecuteRequest's response will carry (its output
// range; nothing when the output stays resident).
uint64_t ExpectedResponseBytes(const v1::ExecuteRequest& request) {
  if (!request.output_handle().empty() || request.keep_output() ||
      (request.in_place() && !request.input_handle().empty())) {
    return 0;
  }
  ExecuteRequest r;
  r.op = OperatorFromProto(request.operator_());
  r.in_place = request.in_place();
  return sched::OutputRangeBytes(r);
}

// Unary Execute and ExecuteChain (Request -> Outcome, see
// request_processor.h). Lives until both gRPC (OnDone) and the engine (the
// outcome callback) are through with it, because the engine may call back
// after the client cancelled and the RPC is gone.
template <typename Request, typename Outcome>
class UnaryExecuteReactor final : public grpc::ServerUnaryReactor {
 public:
  using Run = void (RequestProcessor::*)(Request&, CallContext,
                                         absl::AnyInvocable<void(Outcome)>);

  // `principal`: the call's (PrincipalOf).
  UnaryExecuteReactor(grpc::CallbackServerContext* context, grpc::ByteBuffer* response,
                      absl::StatusOr<std::string> principal, CallTracker::Ticket ticket,
                      spdlog::logger* logger)
      : context_(context),
        response_(response),
        principal_(std::move(principal)),
        ticket_(std::move(ticket)),
        logger_(logger) {}

  void Start(RequestProcessor& processor, Run run, const grpc::ByteBuffer& bytes) {
    Request request;
    if (absl::Status parsed = ParseRequest(bytes, &request); !parsed.ok()) {
      logger_->debug("{}: {}", Request::descriptor()->name(), std::string(parsed.message()));
      Outcome outcome;
      outcome.error = RequestError::FromStatus(parsed);
      OnOutcome(std::move(outcome));  // answers, drops the engine's reference
      return;
    }
    (processor.*run)(
        request,
        CallContext{DeadlineOf(*context_), cancelled_, std::move(principal_),
                    RequestedOutputRatio(*context_),
                    std::is_same_v<Request, v1::ChainRequest>
                        ? MetricsMethod::kExecuteChain
                        : MetricsMethod::kExecute},
        [this](Outcome outcome) { OnOutcome(std::move(outcome)); });
  }

  void OnCancel() override {
    cancelled_->store(true);
    // Answer now; the engine's late callback finds finished_ set.
    if (MarkFinished()) Finish(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    ticket_.End();  // the response is written; the engine may still call back
    Unref();
  }

 private:
  void OnOutcome(Outcome outcome) {
    grpc::Status status;
    grpc::ByteBuffer serialized;
    if (outcome.error.ok()) {
      status = SerializeResponse(outcome.response, &serialized);
    }
    bool finish = false;
    {
      MutexLock lock(&mu_);
      if (!finished_) {
        finished_ = finish = true;
        // response_ stays valid until OnDone, which cannot come before the
        // Finish below.
        if (outcome.error.ok()) {
          response_->Swap(&serialized);
          // Held until the reactor goes, after the response is written.
          admitted_ = std::move(outcome.admitted);
        } else {
          status = ToGrpcStatus(outcome.error, logger_);
        }
      }
    }
    if (finish) Finish(status);
    Unref();
  }

  bool MarkFinished() {
    MutexLock lock(&mu_);
    if (finished_) return false;
    finished_ = true;
    return true;
  }

  void Unref() {
    if (refs_.fetch_sub(1) == 1) delete this;
  }

  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const response_;
  absl::StatusOr<std::string> principal_;  // moved into the CallContext by Start
  CallTracker::Ticket ticket_;  // ended in OnDone
  spdlog::logger* const logger_;
  const std::shared_ptr<std::atomic<bool>> cancelled_ =
      std::make_shared<std::atomic<bool>>(false);
  // One for gRPC (dropped in OnDone), one for the engine's outcome.
  std::atomic<int> refs_{2};
  Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  sched::Admitted admitted_ ABSL_GUARDED_BY(mu_);
};

// ExecuteStream. State machine under mu_: at most one read and one write
// outstanding; `window_used_` counts requests read whose response is not yet
// written. Lives until gRPC is done (OnDone) and every engine callback has
// arrived. Tracked as a Stoppable call: when the server stops, it reads no
// more, answers the requests it has read and ends with ShuttingDownStatus.
class ExecuteStreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
      public CallTracker::Stoppable {
 public:
  ExecuteStreamReactor(grpc::CallbackServerContext* context,
                       absl::StatusOr<std::string> principal, CallTracker& calls,
                       RequestProcessor& processor, uint32_t window,
                       uint64_t max_queued_bytes, std::shared_ptr<spdlog::logger> logger)
      : processor_(processor),
        window_(window == 0 ? 1 : window),
        max_queued_bytes_(max_queued_bytes == 0 ? 1 : max_queued_bytes),
        deadline_(DeadlineOf(*context)),
        principal_(std::move(principal)),
        output_ratio_(RequestedOutputRatio(*context)),
        logger_(std::move(logger)) {
    // The read is marked before Begin: Stop may come (on another thread)
    // as soon as Begin has registered this. Until the handler returns,
    // gRPC keeps StartRead and Finish in its backlog, in that order.
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

  // Reads no more (a read outstanding ends when Finish is called), answers
  // what was read, then finishes with ShuttingDownStatus.
  void Stop() override {
    Actions actions;
    {
      MutexLock lock(&mu_);
      if (!read_done_) {
        read_done_ = true;
        if (end_status_.ok()) end_status_ = ShuttingDownStatus();
      }
      actions = NextLocked();
    }
    Run(actions);
    Unref();
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // half-close, or the call broke
      Actions actions;
      {
        MutexLock lock(&mu_);
        reading_ = false;
        read_done_ = true;
        actions = NextLocked();
      }
      Run(actions);
      return;
    }
    v1::ExecuteRequest request;
    absl::Status parsed = ParseRequest(read_buffer_, &request);
    read_buffer_.Clear();
    // The response this request will make, counted against the stream's
    // byte bound from now until it is written.
    const uint64_t expected = parsed.ok() ? ExpectedResponseBytes(request) : 0;
    Actions actions;
    bool execute = false;
    bool stopped = false;
    {
      MutexLock lock(&mu_);
      reading_ = false;
      if (read_done_) {
        // Stop came while this read was outstanding: what it read is
        // dropped.
        stopped = true;
      } else if (!parsed.ok()) {
        // Read no more; answer what was read, then end with the error.
        read_done_ = true;
        end_status_ = ToGrpcStatus(parsed);
      } else {
        ++window_used_;
        expected_bytes_ += expected;
        ++refs_;  // held by the outcome callback
        execute = true;
      }
      // The next read, or the Finish once every request read is answered.
      actions = NextLocked();
    }
    if (!parsed.ok() && !stopped) {
      logger_->debug("ExecuteStream: {}", std::string(parsed.message()));
    }
    Run(actions);
    if (!execute) return;
    processor_.Execute(
        request, CallContext{deadline_, cancelled_, principal_, output_ratio_,
                             MetricsMethod::kExecuteStream},
        [this, expected](ExecuteOutcome outcome) { OnOutcome(std::move(outcome), expected); });
  }

  void OnWriteDone(bool ok) override {
    Actions actions;
    {
      MutexLock lock(&mu_);
      writing_ = false;
      if (!queue_.empty()) {
        queued_bytes_ -= queue_.front().bytes.Length();
        queue_.pop_front();
      }
      --window_used_;
      if (!ok && !finished_) {
        // The client is gone; nothing more can be delivered.
        finished_ = true;
        DropUnsentLocked();
        actions.finish = true;
        actions.status =
            grpc::Status(grpc::StatusCode::CANCELLED, "response write failed");
      } else {
        actions = NextLocked();
      }
    }
    Run(actions);
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
    logger_->debug("ExecuteStream done");
    ticket_.End();
    Unref();
  }

 private:
  // What to start once mu_ is released (gRPC calls are made unlocked).
  struct Actions {
    const grpc::ByteBuffer* write = nullptr;
    bool read = false;
    bool finish = false;
    grpc::Status status;
  };

  void OnOutcome(ExecuteOutcome outcome, uint64_t expected) {
    if (!outcome.error.ok()) {
      FillResponse(outcome.error, &outcome.response, logger_.get());
    }
    grpc::ByteBuffer serialized;
    grpc::Status status = SerializeResponse(outcome.response, &serialized);
    Actions actions;
    {
      MutexLock lock(&mu_);
      expected_bytes_ -= expected;
      if (finished_) {
        --window_used_;  // dropped: the stream is over
      } else if (!status.ok()) {
        --window_used_;
        finished_ = true;
        DropUnsentLocked();
        actions.finish = true;
        actions.status = status;
      } else {
        queued_bytes_ += serialized.Length();
        queue_.push_back(Pending{std::move(serialized), std::move(outcome.admitted)});
        actions = NextLocked();
      }
    }
    Run(actions);
    Unref();
  }

  // The next write, read or Finish the state allows. Deque elements keep
  // their address while others are pushed, so `write` stays valid.
  Actions NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Actions a;
    if (finished_) return a;
    if (!writing_ && !queue_.empty()) {
      writing_ = true;
      a.write = &queue_.front().bytes;
    }
    if (!reading_ && !read_done_ && MayReadLocked()) {
      reading_ = true;
      a.read = true;
    }
    if (read_done_ && window_used_ == 0 && !writing_) {
      finished_ = true;
      a.finish = true;
      a.status = end_status_;
    }
    return a;
  }

  // Another request may be read: the window has room and the responses
  // waiting to be written stay under the stream's byte bound (a client
  // that does not read its responses stops being read).
  bool MayReadLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return window_used_ < window_ && expected_bytes_ + queued_bytes_ < max_queued_bytes_;
  }

  // Forgets the responses not yet handed to gRPC. The one being written
  // stays: gRPC may use it until OnWriteDone.
  void DropUnsentLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const auto first = queue_.begin() + (writing_ && !queue_.empty() ? 1 : 0);
    for (auto it = first; it != queue_.end(); ++it) queued_bytes_ -= it->bytes.Length();
    queue_.erase(first, queue_.end());
  }

  void Run(const Actions& a) {
    if (a.write != nullptr) StartWrite(a.write);
    if (a.read) StartRead(&read_buffer_);
    if (a.finish) Finish(a.status);
  }

  void Unref() {
    bool last;
    {
      MutexLock lock(&mu_);
      last = --refs_ == 0;
    }
    if (last) delete this;
  }

  RequestProcessor& processor_;
  CallTracker::Ticket ticket_;  // set in the constructor, ended in OnDone
  const uint32_t window_;
  const uint64_t max_queued_bytes_;
  const absl::Time deadline_;
  const absl::StatusOr<std::string> principal_;
  const absl::StatusOr<uint64_t> output_ratio_;
  const std::shared_ptr<spdlog::logger> logger_;
  const std::shared_ptr<std::atomic<bool>> cancelled_ =
      std::make_shared<std::atomic<bool>>(false);
  // Only touched by the one outstanding read and the code that starts it.
  grpc::ByteBuffer read_buffer_;

  Mutex mu_;
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t window_used_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // serialized, in queue_
  uint64_t expected_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // of requests not answered yet
  // How the stream ends once every request read is answered: OK, or the
  // error of a message that did not parse.
  grpc::Status end_status_ ABSL_GUARDED_BY(mu_);
  // Serialized ExecuteResponses.
  // A serialized response and the memory-budget share it holds until it
  // has been written or dropped.
  struct Pending {
    grpc::ByteBuffer bytes;
    sched::Admitted admitted;
  };
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  // One for gRPC (dropped in OnDone) plus one per engine callback pending
  // and one while the tracker's Stop is due.
  int refs_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace

DmlServiceImpl::DmlServiceImpl(Engine* engine, ServiceOptions options,
                               v1::GetCapabilitiesResponse capabilities,
                               std::shared_ptr<spdlog::logger> logger)
    : options_(options),
      engine_(engine),
      capabilities_(std::move(capabilities)),
      logger_(logger),
      store_(engine, options.store),
      processor_(engine, options.processor, std::move(logger), &store_) {}

grpc::ServerUnaryReactor* DmlServiceImpl::GetCapabilities(
    grpc::CallbackServerContext* context, const v1::GetCapabilitiesRequest*,
    v1::GetCapabilitiesResponse* response) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  *response = capabilities_;
  auto* reactor = new TrackedUnaryReactor(std::move(ticket));
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* DmlServiceImpl::Validate(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  auto* reactor = new TrackedUnaryReactor(std::move(ticket));
  v1::ValidateRequest parsed;
  if (absl::Status status = ParseRequest(*request, &parsed); !status.ok()) {
    logger_->debug("Validate: {}", std::string(status.message()));
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  reactor->Finish(SerializeResponse(processor_.Validate(parsed), response));
  return reactor;
}

grpc::ServerUnaryReactor* DmlServiceImpl::Execute(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  auto* reactor = new UnaryExecuteReactor<v1::ExecuteRequest, ExecuteOutcome>(
      context, response, PrincipalOf(*context, options_.tokens.get(), options_.tenant_from_peer),
      std::move(ticket), logger_.get());
  reactor->Start(processor_, &RequestProcessor::Execute, *request);
  return reactor;
}

grpc::ServerUnaryReactor* DmlServiceImpl::ExecuteChain(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  CallTracker::Ticket ticket = calls_.Begin();
  if (!ticket) return new RefusedReactor<grpc::ServerUnaryReactor>();
  auto* reactor = new UnaryExecuteReactor<v1::ChainRequest, ChainOutcome>(
      context, response, PrincipalOf(*context, options_.tokens.get(), options_.tenant_from_peer),
      std::move(ticket), logger_.get());
  reactor->Start(processor_, &RequestProcessor::ExecuteChain, *request);
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>*
DmlServiceImpl::ExecuteStream(grpc::CallbackServerContext* context) {
  return new ExecuteStreamReactor(context,
                                  PrincipalOf(*context, options_.tokens.get(),
                                              options_.tenant_from_peer),
                                  calls_, processor_, options_.stream_window,
                                  options_.stream_queue_bytes, logger_);
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
                  PrincipalOf(*context, options_.tokens.get(), /*tenant_from_peer=*/true),
                  RequestedOutputRatio(*context)},
      engine_, &store_, &processor_.admission(), options_.chunked, std::move(ticket), logger_);
}

}  // namespace dmls::server
