// RunLoad: one dmls_load run. Connects the channels, starts the driver
// (unary or stream), applies the load for warmup + duration (closed loop:
// `concurrency` requests outstanding; open loop: one request due every
// 1/rate s, skipped while `max_outstanding` are out), then stops sending,
// waits for what is outstanding (up to `timeout`), closes the driver and
// returns the report of the measured window.
//
// Blocking; uses gRPC's callback threads plus the calling thread (the open
// loop's pacer). Thread-compatible: one run at a time per caller.
#ifndef DMLSERVE_BENCH_LOAD_LOAD_RUNNER_H_
#define DMLSERVE_BENCH_LOAD_LOAD_RUNNER_H_

#include "absl/status/statusor.h"
#include "bench/load/load_options.h"
#include "bench/load/payload.h"
#include "bench/load/report.h"

namespace dmls::load {

// UNAVAILABLE when the target cannot be reached; otherwise the report, even
// when every request failed (the caller decides what that means).
absl::StatusOr<Report> RunLoad(const LoadOptions& options,
                               const Payload& payload);

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_LOAD_RUNNER_H_
