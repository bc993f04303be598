#include "bench/echo/echo_service.h"

#include <deque>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace dmls::echo {
namespace {

namespace v1 = dmlserve::v1;

// The answer to one request: its id and its input bytes, moved.
v1::ExecuteResponse Echo(v1::ExecuteRequest& request) {
  v1::ExecuteResponse response;
  response.set_request_id(request.request_id());
  response.mutable_output()->swap(*request.mutable_input());
  return response;
}

// ExecuteStream. State under mu_: one read and one write outstanding at
// most; `queue_` holds the answers not yet written (front: being written).
// Reading pauses while `stream_window` answers are queued.
class EchoStreamReactor final
    : public grpc::ServerBidiReactor<v1::ExecuteRequest, v1::ExecuteResponse> {
 public:
  explicit EchoStreamReactor(uint32_t window) : window_(window) {
    reading_ = true;
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    Actions a;
    {
      absl::MutexLock lock(&mu_);
      reading_ = false;
      if (!ok) {
        read_done_ = true;
      } else {
        queue_.push_back(Echo(request_));
        request_.Clear();
      }
      a = NextLocked();
    }
    Run(a);
  }

  void OnWriteDone(bool ok) override {
    Actions a;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      queue_.pop_front();
      if (!ok && !finished_) {
        finished_ = true;
        a.finish = true;
        a.status = grpc::Status(grpc::StatusCode::CANCELLED,
                                "response write failed");
      } else {
        a = NextLocked();
      }
    }
    Run(a);
  }

  void OnCancel() override {
    bool finish = false;
    {
      absl::MutexLock lock(&mu_);
      finish = !finished_;
      finished_ = true;
    }
    if (finish) Finish(grpc::Status::CANCELLED);
  }

  void OnDone() override { delete this; }

 private:
  struct Actions {
    const v1::ExecuteResponse* write = nullptr;
    bool read = false;
    bool finish = false;
    grpc::Status status;
  };

  Actions NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Actions a;
    if (finished_) return a;
    if (!writing_ && !queue_.empty()) {
      writing_ = true;
      a.write = &queue_.front();
    }
    if (!reading_ && !read_done_ && queue_.size() < window_) {
      reading_ = true;
      a.read = true;
    }
    if (read_done_ && queue_.empty() && !writing_) {
      finished_ = true;
      a.finish = true;
      a.status = grpc::Status::OK;
    }
    return a;
  }

  void Run(const Actions& a) {
    if (a.write != nullptr) StartWrite(a.write);
    if (a.read) StartRead(&request_);
    if (a.finish) Finish(a.status);
  }

  const uint32_t window_;
  // Only touched by the one outstanding read and the code that starts it.
  v1::ExecuteRequest request_;

  absl::Mutex mu_;
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // Deque elements keep their address while others are pushed, so the one
  // being written stays valid.
  std::deque<v1::ExecuteResponse> queue_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

grpc::ServerUnaryReactor* EchoService::GetCapabilities(
    grpc::CallbackServerContext* context, const v1::GetCapabilitiesRequest*,
    v1::GetCapabilitiesResponse*) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* EchoService::Validate(
    grpc::CallbackServerContext* context, const v1::ValidateRequest*,
    v1::ValidateResponse*) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* EchoService::Execute(
    grpc::CallbackServerContext* context, const v1::ExecuteRequest* request,
    v1::ExecuteResponse* response) {
  // gRPC owns the request and destroys it after the call; moving its input
  // out saves a copy, as dmlserve's service does.
  *response = Echo(*const_cast<v1::ExecuteRequest*>(request));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerBidiReactor<v1::ExecuteRequest, v1::ExecuteResponse>*
EchoService::ExecuteStream(grpc::CallbackServerContext*) {
  return new EchoStreamReactor(stream_window_);
}

}  // namespace dmls::echo
