// dmls_bench's engine mode: small CELU requests pushed through GpuEngine end
// to end (admission, scheduler, arenas, coalescing, copies, callbacks) by
// --engine_threads submitting threads, --engine_in_flight outstanding in
// all, once per --engine_max_batch value (1 = batching and coalescing off),
// each in a fresh engine so that the runs are independent. Prints one
// "engine: max_batch=..." line per value.
#ifndef DMLSERVE_BENCH_ENGINE_THROUGHPUT_H_
#define DMLSERVE_BENCH_ENGINE_THROUGHPUT_H_

#include "bench/bench_options.h"

namespace dmls::bench {

// Runs and prints the engine measurement of `options` (device, data_type,
// engine_*): a warm-up of up to 2,000 requests, then engine_requests timed.
void MeasureEngine(const BenchOptions& options);

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_ENGINE_THROUGHPUT_H_
