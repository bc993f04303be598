#include "server/rpc/ordered_stream_reactor.h"

#include <utility>

#include "server/mapping/status_mapping.h"
#include "server/rpc/call_metadata.h"
#include "server/rpc/tracked_reactor.h"

namespace dmls::server {

OrderedStreamReactor::OrderedStreamReactor(grpc::CallbackServerContext* context,
                                           absl::StatusOr<std::string> principal,
                                           StreamLimits limits,
                                           std::shared_ptr<spdlog::logger> logger,
                                           const char* name)
    : name_(name),
      window_(limits.window == 0 ? 1 : limits.window),
      max_queued_bytes_(limits.max_queued_bytes == 0 ? 1 : limits.max_queued_bytes),
      deadline_(DeadlineOf(*context)),
      principal_(std::move(principal)),
      output_ratio_(RequestedOutputRatio(*context)),
      logger_(std::move(logger)) {}

void OrderedStreamReactor::Begin(CallTracker& calls) {
  // The read is marked before Begin: Stop may come (on another thread) as
  // soon as the tracker has registered us. Until the handler returns, gRPC
  // keeps StartRead and Finish in its backlog, in that order.
  {
    MutexLock lock(&mu_);
    reading_ = true;
  }
  ticket_ = calls.Begin(this);
  if (!ticket_) {
    {
      MutexLock lock(&mu_);
      reading_ = false;
      MarkFinished();
    }
    Finish(ShuttingDownStatus());
    return;
  }
  StartRead(&read_buffer_);
}

void OrderedStreamReactor::Stop() {
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
  Unref();  // the reference Retain took for this Stop
}

bool OrderedStreamReactor::Accept(bool ok, const absl::Status& parsed, uint64_t expected) {
  read_buffer_.Clear();
  bool run = false;
  Next next;
  {
    MutexLock lock(&mu_);
    reading_ = false;
    if (!ok) {
      read_done_ = true;  // half-close, or the call broke
    } else if (read_done_) {
      // Stopped while this read was outstanding: what it read is dropped.
    } else if (!parsed.ok()) {
      // Read no more; answer what was read, then end with the error.
      read_done_ = true;
      end_status_ = ToGrpcStatus(parsed);
    } else {
      ++window_used_;
      expected_bytes_ += expected;
      Ref();  // held until Respond
      run = true;
    }
    next = NextLocked();
  }
  if (ok && !parsed.ok()) logger_->debug("{}: {}", name_, std::string(parsed.message()));
  Start(next);
  return run;
}

void OrderedStreamReactor::Respond(const grpc::Status& status, grpc::ByteBuffer serialized,
                                   sched::Admitted held, uint64_t expected) {
  Next next;
  {
    MutexLock lock(&mu_);
    expected_bytes_ -= expected;
    if (finished() || !status.ok()) {
      --window_used_;  // dropped: the stream is over, or ends now
      next = EndLocked(status);
    } else {
      queued_bytes_ += serialized.Length();
      queue_.push_back(Pending{std::move(serialized), std::move(held)});
      next = NextLocked();
    }
  }
  Start(next);
  Unref();
}

void OrderedStreamReactor::OnWriteDone(bool ok) {
  Next next;
  {
    MutexLock lock(&mu_);
    writing_ = false;
    if (!queue_.empty()) {
      queued_bytes_ -= queue_.front().bytes.Length();
      queue_.pop_front();
    }
    --window_used_;
    // A failed write: the client is gone, nothing more can be delivered.
    next = ok ? NextLocked()
              : EndLocked(grpc::Status(grpc::StatusCode::CANCELLED, "response write failed"));
  }
  Start(next);
}

void OrderedStreamReactor::OnCancel() {
  cancelled_->store(true);
  Next next;
  {
    MutexLock lock(&mu_);
    next = EndLocked(grpc::Status::CANCELLED);
  }
  Start(next);
}

void OrderedStreamReactor::OnDone() {
  logger_->debug("{} done", name_);
  ticket_.End();
  Unref();  // gRPC's
}

OrderedStreamReactor::Next OrderedStreamReactor::NextLocked() {
  Next n;
  if (finished()) return n;
  if (!writing_ && !queue_.empty()) {
    writing_ = true;
    n.write = &queue_.front().bytes;
  }
  // Another request may be read while the window has room and the
  // responses waiting (or expected) stay under the byte bound.
  if (!reading_ && !read_done_ && window_used_ < window_ &&
      expected_bytes_ + queued_bytes_ < max_queued_bytes_) {
    reading_ = true;
    n.read = true;
  }
  if (read_done_ && window_used_ == 0 && !writing_ && MarkFinished()) {
    n.finish = true;
    n.status = end_status_;
  }
  return n;
}

OrderedStreamReactor::Next OrderedStreamReactor::EndLocked(grpc::Status status) {
  Next n;
  if (!MarkFinished()) return n;
  DropUnsentLocked();
  n.finish = true;
  n.status = std::move(status);
  return n;
}

void OrderedStreamReactor::DropUnsentLocked() {
  const auto first = queue_.begin() + (writing_ && !queue_.empty() ? 1 : 0);
  for (auto it = first; it != queue_.end(); ++it) queued_bytes_ -= it->bytes.Length();
  window_used_ -= static_cast<uint32_t>(queue_.end() - first);
  queue_.erase(first, queue_.end());
}

void OrderedStreamReactor::Start(const Next& next) {
  if (next.write != nullptr) StartWrite(next.write);
  if (next.read) StartRead(&read_buffer_);
  if (next.finish) Finish(next.status);
}

}  // namespace dmls::server
