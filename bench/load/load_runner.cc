#include "bench/load/load_runner.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/load/channels.h"
#include "bench/load/recorder.h"
#include "bench/load/stream_driver.h"
#include "bench/load/unary_driver.h"

namespace dmls::load {
namespace {

// True while this thread is inside Driver::Send.
thread_local bool tls_in_send = false;

class Runner {
 public:
  Runner(const LoadOptions& options, const Payload& payload)
      : options_(options), payload_(payload) {}

  absl::StatusOr<Report> Run() {
    absl::StatusOr<std::vector<std::shared_ptr<grpc::Channel>>> channels =
        MakeChannels(options_.target, options_.connections,
                     options_.connect_timeout);
    if (!channels.ok()) return channels.status();

    const int64_t start_ns = NowNs();
    const int64_t window_ns = absl::ToInt64Nanoseconds(options_.warmup);
    const int64_t end_ns =
        start_ns + window_ns + absl::ToInt64Nanoseconds(options_.duration);
    recorder_ = std::make_unique<Recorder>(start_ns + window_ns, end_ns);
    CompletionSink sink = [this](const Completion& c,
                                 const dmlserve::v1::ExecuteResponse* r) {
      OnCompletion(c, r);
    };
    StreamDriver* streams = nullptr;
    if (options_.rpc == RpcKind::kUnary) {
      driver_ = std::make_unique<UnaryDriver>(*channels, payload_,
                                              options_.timeout, sink);
    } else {
      auto driver = std::make_unique<StreamDriver>(
          *channels, payload_, options_.streams,
          options_.warmup + options_.duration + 2 * options_.timeout, sink);
      streams = driver.get();
      driver_ = std::move(driver);
    }

    if (options_.rate > 0) {
      PaceOpenLoop(start_ns, end_ns);
    } else {
      for (uint32_t i = 0; i < options_.concurrency; ++i) SendOne(NowNs());
      absl::SleepFor(absl::Nanoseconds(end_ns - NowNs()));
    }
    stopping_.store(true);

    // Drain: what is outstanding completes (unary calls by their deadline
    // at the latest); then the streams are closed, which answers the rest.
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(this, &Runner::Idle),
                           options_.timeout);
    }
    driver_->Close(options_.timeout);
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &Runner::Idle));
    }

    Report report = Describe();
    report.drain_s = std::max<int64_t>(0, NowNs() - end_ns) / 1e9;
    if (streams != nullptr) report.unmatched_responses = streams->unmatched_responses();
    driver_.reset();
    recorder_->Fill(&report);
    return report;
  }

 private:
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return outstanding_ == 0;
  }

  void SendOne(int64_t due_ns) {
    {
      absl::MutexLock lock(&mu_);
      ++outstanding_;
    }
    tls_in_send = true;
    driver_->Send(due_ns);
    tls_in_send = false;
  }

  // One request due every 1/rate s from start to end, on this thread.
  void PaceOpenLoop(int64_t start_ns, int64_t end_ns) {
    const double period_ns = 1e9 / options_.rate;
    for (uint64_t i = 0;; ++i) {
      const int64_t due_ns =
          start_ns + static_cast<int64_t>(static_cast<double>(i) * period_ns);
      if (due_ns >= end_ns) break;
      const int64_t early_ns = due_ns - NowNs();
      // Short waits are not worth a sleep's wake-up jitter: send now.
      if (early_ns > 50'000) absl::SleepFor(absl::Nanoseconds(early_ns));
      bool send;
      {
        absl::MutexLock lock(&mu_);
        send = outstanding_ < options_.max_outstanding;
        if (send) ++outstanding_;
      }
      if (send) {
        driver_->Send(due_ns);
      } else {
        recorder_->RecordSkipped(due_ns);
      }
    }
  }

  // On gRPC's threads. The closed loop replaces each completed request at
  // once; its successor is counted before the request is uncounted, so the
  // drain never sees a false zero. A request that failed inside Send itself
  // (every stream has ended) is not replaced: that would recurse without
  // end; the run goes on with less concurrency and reports the errors.
  void OnCompletion(const Completion& c,
                    const dmlserve::v1::ExecuteResponse* response) {
    recorder_->Record(c);
    if (options_.check && c.code == 0 && response != nullptr &&
        recorder_->WantsCheck(options_.check_count)) {
      Check(*response);
    }
    if (options_.rate == 0 && !stopping_.load() && !tls_in_send) SendOne(NowNs());
    absl::MutexLock lock(&mu_);
    --outstanding_;
  }

  void Check(const dmlserve::v1::ExecuteResponse& response) {
    std::string problem;
    if (response.output().size() != payload_.output_bytes) {
      problem = absl::StrCat("output has ", response.output().size(),
                             " bytes, expected ", payload_.output_bytes);
    } else if (options_.rpc == RpcKind::kUnary &&
               response.request_id() != payload_.request.request_id()) {
      problem = absl::StrCat("response request_id ", response.request_id(),
                             ", sent ", payload_.request.request_id());
    }
    recorder_->RecordCheck(problem.empty(), problem);
  }

  Report Describe() const {
    Report r;
    r.target = options_.target;
    r.rpc = RpcKindName(options_.rpc);
    r.mode = options_.rate > 0 ? "open" : "closed";
    r.concurrency = options_.rate > 0 ? 0 : options_.concurrency;
    r.rate = options_.rate;
    r.max_outstanding = options_.rate > 0 ? options_.max_outstanding : 0;
    r.connections = options_.connections;
    r.streams = options_.rpc == RpcKind::kStream ? options_.streams : 0;
    r.payload = payload_.description;
    r.request_bytes = payload_.request_bytes;
    r.expected_output_bytes = payload_.output_bytes;
    r.warmup_s = absl::ToDoubleSeconds(options_.warmup);
    r.duration_s = absl::ToDoubleSeconds(options_.duration);
    return r;
  }

  const LoadOptions& options_;
  const Payload& payload_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<Driver> driver_;  // after recorder_: its sink uses it
  std::atomic<bool> stopping_{false};

  absl::Mutex mu_;
  uint64_t outstanding_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

absl::StatusOr<Report> RunLoad(const LoadOptions& options,
                               const Payload& payload) {
  Runner runner(options, payload);
  return runner.Run();
}

}  // namespace dmls::load
