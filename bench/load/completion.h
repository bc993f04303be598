// Completion: what a driver reports about one request, and the sink it
// reports to. The contract between the drivers (unary_driver.h,
// stream_driver.h) and the runner (load_runner.h): every Driver::Send is
// answered by exactly one sink call, success or not.
#ifndef DMLSERVE_BENCH_LOAD_COMPLETION_H_
#define DMLSERVE_BENCH_LOAD_COMPLETION_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "dmlserve/v1/dmlserve.pb.h"

namespace dmls::load {

// Monotonic nanoseconds; all times of a run are on this clock.
inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Completion {
  // When the request was due (closed loop: when it was sent) and when its
  // answer arrived; latency is the difference.
  int64_t due_ns = 0;
  int64_t done_ns = 0;
  // google.rpc.Code: the call's status (unary) or the response's
  // status_code (stream; the stream's status when the stream broke).
  int code = 0;
  std::string message;  // only for errors
  uint64_t bytes_in = 0;   // payload bytes sent
  uint64_t bytes_out = 0;  // output bytes received
};

// Called on gRPC's threads, possibly concurrently. `response` is the
// answer when there is one (null when the call failed); valid during the
// call only.
using CompletionSink = std::function<void(
    const Completion& completion, const dmlserve::v1::ExecuteResponse* response)>;

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_COMPLETION_H_
