#include "bench/load/stream_driver.h"

#include <chrono>
#include <deque>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"

namespace dmls::load {

namespace v1 = dmlserve::v1;

// One ExecuteStream call. State machine under mu_: at most one write and
// one read outstanding; a hold (AddHold) keeps the call open while Send may
// still start writes from outside gRPC's callbacks, and is removed once the
// stream is closing and idle, or broken.
class StreamDriver::StreamCall final
    : public grpc::ClientBidiReactor<v1::ExecuteRequest, v1::ExecuteResponse> {
 public:
  StreamCall(v1::DmlService::Stub* stub, const Payload& payload,
             absl::Duration lifetime, const CompletionSink& sink,
             std::function<void()> on_done)
      : payload_(payload),
        sink_(sink),
        on_done_(std::move(on_done)),
        request_(payload.request) {
    context_.set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(lifetime));
    stub->async()->ExecuteStream(&context_, this);
    AddHold();
    StartRead(&response_);
    StartCall();
  }

  int outstanding() const { return outstanding_.load(); }
  // The stream can no longer carry requests (it broke or ended).
  bool broken() const { return broken_.load(); }
  uint64_t unmatched() const { return unmatched_.load(); }

  void Send(int64_t due_ns) {
    Actions actions;
    bool ended = false;
    {
      absl::MutexLock lock(&mu_);
      if (Ended()) {
        ended = true;
      } else {
        queue_.push_back(due_ns);
        ++outstanding_;
        actions = NextLocked();
      }
    }
    if (ended) {
      Fail(due_ns, grpc::StatusCode::UNAVAILABLE,
           "the stream had ended before the request could be sent");
      return;
    }
    Run(actions);
  }

  // Half-closes once every request is answered.
  void Close() {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      closing_ = true;
      actions = NextLocked();
    }
    Run(actions);
  }

  void Cancel() { context_.TryCancel(); }

  void OnWriteDone(bool ok) override {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) {
        write_failed_ = true;  // OnDone fails what is pending
        broken_ = true;
      }
      actions = NextLocked();
    }
    Run(actions);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Actions actions;
      {
        absl::MutexLock lock(&mu_);
        read_done_ = true;
        broken_ = true;
        actions = NextLocked();
      }
      Run(actions);
      return;
    }
    v1::ExecuteResponse response;
    response.Swap(&response_);
    int64_t due_ns = -1;
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      auto it = pending_.find(response.request_id());
      if (it != pending_.end()) {
        due_ns = it->second;
        pending_.erase(it);
        --outstanding_;
      }
      actions = NextLocked();
    }
    StartRead(&response_);
    if (due_ns < 0) {
      ++unmatched_;
    } else {
      Completion c;
      c.due_ns = due_ns;
      c.done_ns = NowNs();
      c.code = response.status_code();
      if (c.code != 0) c.message = response.status_message();
      c.bytes_in = payload_.request_bytes;
      c.bytes_out = response.output().size();
      sink_(c, &response);
    }
    Run(actions);
  }

  void OnDone(const grpc::Status& status) override {
    std::vector<int64_t> lost;
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
      broken_ = true;
      for (const auto& [id, due_ns] : pending_) lost.push_back(due_ns);
      lost.insert(lost.end(), queue_.begin(), queue_.end());
      pending_.clear();
      queue_.clear();
      outstanding_ -= static_cast<int>(lost.size());
    }
    for (int64_t due_ns : lost) {
      if (status.ok()) {
        Fail(due_ns, grpc::StatusCode::UNKNOWN,
             "the stream ended without answering the request");
      } else {
        Fail(due_ns, status.error_code(), status.error_message());
      }
    }
    on_done_();
  }

 private:
  // gRPC calls to make once mu_ is released.
  struct Actions {
    bool write = false;
    bool writes_done = false;
    bool remove_hold = false;
  };

  bool Ended() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return done_ || hold_removed_ || closing_ || read_done_ || write_failed_;
  }

  // The next write, or the end of this side of the call, the state allows.
  // request_ is only modified here, while no write is outstanding.
  Actions NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Actions a;
    if (done_ || writing_) return a;
    const bool broken = read_done_ || write_failed_;
    if (!broken && !queue_.empty()) {
      const uint64_t id = next_id_++;
      request_.set_request_id(id);
      pending_[id] = queue_.front();
      queue_.pop_front();
      writing_ = true;
      a.write = true;
    } else if (!hold_removed_ &&
               (broken || (closing_ && queue_.empty() && pending_.empty()))) {
      a.writes_done = !broken;
      hold_removed_ = true;
      a.remove_hold = true;
    }
    return a;
  }

  void Run(const Actions& a) {
    if (a.write) StartWrite(&request_);
    if (a.writes_done) StartWritesDone();
    if (a.remove_hold) RemoveHold();
  }

  void Fail(int64_t due_ns, grpc::StatusCode code, std::string message) {
    Completion c;
    c.due_ns = due_ns;
    c.done_ns = NowNs();
    c.code = static_cast<int>(code);
    c.message = std::move(message);
    sink_(c, nullptr);
  }

  const Payload& payload_;
  const CompletionSink& sink_;
  const std::function<void()> on_done_;
  grpc::ClientContext context_;
  // The request written, renumbered per write (only while no write is
  // outstanding), and the one read buffer.
  v1::ExecuteRequest request_;
  v1::ExecuteResponse response_;
  std::atomic<int> outstanding_{0};
  std::atomic<uint64_t> unmatched_{0};
  std::atomic<bool> broken_{false};

  absl::Mutex mu_;
  std::deque<int64_t> queue_ ABSL_GUARDED_BY(mu_);  // due, not yet written
  absl::flat_hash_map<uint64_t, int64_t> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool hold_removed_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

StreamDriver::StreamDriver(
    const std::vector<std::shared_ptr<grpc::Channel>>& channels,
    const Payload& payload, uint32_t streams, absl::Duration lifetime,
    CompletionSink sink)
    : sink_(std::move(sink)) {
  for (const auto& channel : channels) {
    stubs_.push_back(v1::DmlService::NewStub(channel));
  }
  for (uint32_t i = 0; i < streams; ++i) {
    calls_.push_back(std::make_unique<StreamCall>(
        stubs_[i % stubs_.size()].get(), payload, lifetime, sink_,
        [this] { OnStreamDone(); }));
  }
}

StreamDriver::~StreamDriver() {
  bool all_done;
  {
    absl::MutexLock lock(&mu_);
    all_done = AllDone();
  }
  // The calls must not outlive this object: end what Close did not.
  if (!all_done) Close(absl::ZeroDuration());
}

bool StreamDriver::AllDone() const { return streams_done_ == calls_.size(); }

void StreamDriver::Send(int64_t due_ns) {
  // The live stream with the fewest outstanding, scanning from a rotating
  // start so that ties spread; a broken one only when all are (it fails the
  // request).
  const size_t n = calls_.size();
  const size_t start = next_call_.fetch_add(1) % n;
  size_t best = start;
  for (size_t k = 1; k < n; ++k) {
    const size_t i = (start + k) % n;
    const StreamCall& a = *calls_[i];
    const StreamCall& b = *calls_[best];
    if (a.broken() != b.broken() ? !a.broken()
                                 : a.outstanding() < b.outstanding()) {
      best = i;
    }
  }
  calls_[best]->Send(due_ns);
}

void StreamDriver::Close(absl::Duration timeout) {
  for (auto& call : calls_) call->Close();
  absl::MutexLock lock(&mu_);
  const absl::Condition all_done(this, &StreamDriver::AllDone);
  if (mu_.AwaitWithTimeout(all_done, timeout)) return;
  // Cancelling ends every call promptly; its OnDone fails what is left.
  mu_.Unlock();
  for (auto& call : calls_) call->Cancel();
  mu_.Lock();
  mu_.Await(all_done);
}

uint64_t StreamDriver::unmatched_responses() const {
  uint64_t total = 0;
  for (const auto& call : calls_) total += call->unmatched();
  return total;
}

void StreamDriver::OnStreamDone() {
  absl::MutexLock lock(&mu_);
  ++streams_done_;
}

}  // namespace dmls::load
