// Recorder: collects the completions of a run and the open loop's skipped
// requests, counting only those that complete inside the measured window
// [window_start_ns, window_end_ns), and fills the outcome part of a Report.
// Completions after the window (the drain) are counted apart, by status: a
// server that loses requests shows there as DEADLINE_EXCEEDED.
// Latency is recorded for successful requests only (errors are often fast
// rejections and would flatter the percentiles); every status is counted.
//
// Thread-safe: Record is called concurrently from gRPC's threads. One mutex
// guards everything; a completion costs a histogram increment under it,
// negligible next to a gRPC call.
#ifndef DMLSERVE_BENCH_LOAD_RECORDER_H_
#define DMLSERVE_BENCH_LOAD_RECORDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "bench/load/completion.h"
#include "bench/load/latency_histogram.h"
#include "bench/load/report.h"

namespace dmls::load {

// "OK", "CANCELLED", ... for a google.rpc.Code; "CODE_<n>" otherwise.
std::string StatusCodeName(int code);

class Recorder {
 public:
  // Distinct error messages kept per status code.
  static constexpr size_t kMessagesPerCode = 3;

  Recorder(int64_t window_start_ns, int64_t window_end_ns);

  void Record(const Completion& completion);
  // An open-loop request due at `due_ns` that was not sent.
  void RecordSkipped(int64_t due_ns);
  // A --check result (counted whenever it happens, window or not).
  void RecordCheck(bool passed, const std::string& message);
  // Checks still wanted before `limit` have been made.
  bool WantsCheck(uint64_t limit);

  // Fills the outcome fields of `report` (requests ... check_messages;
  // unmatched_responses is the driver's). `report->duration_s` must be set.
  void Fill(Report* report);

 private:
  const int64_t window_start_ns_;
  const int64_t window_end_ns_;

  absl::Mutex mu_;
  LatencyHistogram latency_ ABSL_GUARDED_BY(mu_);
  uint64_t requests_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t ok_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t skipped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t ok_bytes_in_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t ok_bytes_out_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int, uint64_t> codes_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::vector<std::string>> messages_ ABSL_GUARDED_BY(mu_);
  std::map<int, uint64_t> late_codes_ ABSL_GUARDED_BY(mu_);
  uint64_t checks_started_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t checked_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t check_failures_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> check_messages_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_RECORDER_H_
