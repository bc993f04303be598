// StreamDriver: carries the load on `streams` DmlService.ExecuteStream
// calls, spread round-robin over the channels. Each Send goes to the stream
// with the fewest requests outstanding; on a stream, requests are written
// one at a time in due order, numbered 1, 2, ... (request_id), and each
// response is matched back to its request by request_id (completion order is
// free). A response with an unknown id is counted, not matched.
//
// A request that cannot be sent (its stream has broken) or whose stream ends
// before it is answered completes with the stream's status (UNKNOWN when the
// stream ended OK without answering it).
//
// Ownership: owns its stubs and the stream calls; borrows the Payload, which
// must outlive the driver (each stream keeps its own copy of the request to
// number it). Destroying it closes it with no grace. Thread-safe.
#ifndef DMLSERVE_BENCH_LOAD_STREAM_DRIVER_H_
#define DMLSERVE_BENCH_LOAD_STREAM_DRIVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "bench/load/completion.h"
#include "bench/load/driver.h"
#include "bench/load/payload.h"
#include "dmlserve/v1/dmlserve.grpc.pb.h"
#include "grpcpp/channel.h"

namespace dmls::load {

class StreamDriver final : public Driver {
 public:
  // Starts the streams; `lifetime` is their deadline from now (the whole
  // run plus the drain).
  StreamDriver(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
               const Payload& payload, uint32_t streams,
               absl::Duration lifetime, CompletionSink sink);
  ~StreamDriver() override;

  void Send(int64_t due_ns) override;
  void Close(absl::Duration timeout) override;

  // Responses whose request_id matched no outstanding request.
  uint64_t unmatched_responses() const;

 private:
  class StreamCall;

  void OnStreamDone();
  bool AllDone() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const CompletionSink sink_;  // the calls hold a reference
  std::vector<std::unique_ptr<dmlserve::v1::DmlService::Stub>> stubs_;
  std::vector<std::unique_ptr<StreamCall>> calls_;
  std::atomic<uint32_t> next_call_{0};

  absl::Mutex mu_;
  uint32_t streams_done_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_STREAM_DRIVER_H_
