// OrderedStreamReactor: the base of the server's request/response streams
// (ExecuteStream, KServe's ModelStreamInfer): requests in, one response
// each out, in completion order, on one bidirectional stream.
//
// It owns the stream's state machine under one mutex: at most one read and
// one write outstanding; at most `window` requests between read and
// response written, and at most `max_queued_bytes` of responses waiting to
// be written plus those expected from requests still running; while either
// is full the stream is not read (gRPC flow control then holds the client
// back, and a client that never reads cannot make the server hold more).
// A message that does not parse stops the reading: the requests read
// before it are answered, then the stream ends with its error.
//
// Tracked as a Stoppable call (call_tracker.h): asked to stop, it reads no
// more, answers what it has read and ends with ShuttingDownStatus; refused
// with it once the stop has begun. A cancelled call or a failed write ends
// the stream at once (responses not handed to gRPC are dropped).
//
// A derived reactor implements OnReadDone:
//
//   void OnReadDone(bool ok) override {
//     MyRequest request;
//     absl::Status parsed = ok ? ParseRequest(read_buffer(), &request) : absl::OkStatus();
//     if (!Accept(ok, parsed, ExpectedBytesOf(request))) return;
//     ... run it; its completion serializes the response and calls Respond ...
//   }
//
// Ownership: deletes itself (RefCountedReactor) when gRPC is done with it
// and every request it accepted has been answered through Respond.
// Thread-safety: gRPC's reactor rules; Respond from any thread.
#ifndef DMLSERVE_SERVER_RPC_ORDERED_STREAM_REACTOR_H_
#define DMLSERVE_SERVER_RPC_ORDERED_STREAM_REACTOR_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/core/mutex.h"
#include "engine/sched/admission.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/lifecycle/call_tracker.h"
#include "server/request_processor.h"
#include "server/rpc/ref_counted_reactor.h"
#include "spdlog/logger.h"

namespace dmls::server {

struct StreamLimits {
  uint32_t window = 64;                            // 0 counts as 1
  uint64_t max_queued_bytes = uint64_t{256} << 20;  // 0 counts as 1
};

class OrderedStreamReactor
    : public RefCountedReactor<grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>>,
      public CallTracker::Stoppable {
 public:
  void Retain() final { Ref(); }
  void Stop() final;
  void OnWriteDone(bool ok) final;
  void OnCancel() final;
  void OnDone() final;

  // Registers the call with `calls` and reads, or finishes it with
  // ShuttingDownStatus once the stop has begun. Called once, by the
  // handler, right after construction.
  void Begin(CallTracker& calls);

 protected:
  // `name`: the method, for the log.
  OrderedStreamReactor(grpc::CallbackServerContext* context,
                       absl::StatusOr<std::string> principal, StreamLimits limits,
                       std::shared_ptr<spdlog::logger> logger, const char* name);

  // The message the outstanding read filled (for OnReadDone to parse).
  grpc::ByteBuffer& read_buffer() { return read_buffer_; }
  // OnReadDone's verdict on what it read: `ok` is gRPC's (false: the
  // client half-closed or the call broke), `parsed` whether the message
  // parsed, `expected` the response bytes its request will make. Clears
  // the read buffer and starts the next read or the Finish the state
  // allows. True when the request is to run: the caller starts it, and its
  // completion calls Respond exactly once.
  bool Accept(bool ok, const absl::Status& parsed, uint64_t expected);
  // The response of an accepted request, `serialized` when `status` is OK
  // (else the stream ends with `status`), with the memory-budget share it
  // holds until it has been written or dropped. `expected` as given to
  // Accept. Drops the request's reference: `this` may be gone after.
  void Respond(const grpc::Status& status, grpc::ByteBuffer serialized,
               sched::Admitted held, uint64_t expected);

  // What the stream's requests run with.
  CallContext Context(MetricsMethod method) const {
    return CallContext{deadline_, cancelled_, principal_, output_ratio_, method};
  }
  spdlog::logger& logger() const { return *logger_; }

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
    sched::Admitted held;
  };

  // The next write, read or Finish the state allows. Deque elements keep
  // their address while others are pushed, so `write` stays valid.
  Next NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the stream with `status` at once (nothing more is written).
  Next EndLocked(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the responses not handed to gRPC (the one being written stays:
  // gRPC may use it until OnWriteDone).
  void DropUnsentLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Start(const Next& next);

  const char* const name_;
  const uint32_t window_;
  const uint64_t max_queued_bytes_;
  const absl::Time deadline_;
  const absl::StatusOr<std::string> principal_;
  const absl::StatusOr<uint64_t> output_ratio_;
  const std::shared_ptr<spdlog::logger> logger_;
  const std::shared_ptr<std::atomic<bool>> cancelled_ =
      std::make_shared<std::atomic<bool>>(false);
  CallTracker::Ticket ticket_;  // set in Begin, ended in OnDone
  grpc::ByteBuffer read_buffer_;  // only the one outstanding read uses it

  // Guards the state below; RefCountedReactor's finished flag is set only
  // with it held.
  Mutex mu_;
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t window_used_ ABSL_GUARDED_BY(mu_) = 0;  // read, response not written
  uint64_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // serialized, in queue_
  uint64_t expected_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // of requests still running
  // How the stream ends once every request read is answered: OK, the
  // error of a message that did not parse, or ShuttingDownStatus.
  grpc::Status end_status_ ABSL_GUARDED_BY(mu_);
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_ORDERED_STREAM_REACTOR_H_
