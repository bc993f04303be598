// BenchOptions: what one dmls_bench run measures and how, as its flags
// (bench_flags.cc) set it; plain data with documented defaults (the flags'
// defaults are these). Also the text forms of its list and size flags.
#ifndef DMLSERVE_BENCH_BENCH_OPTIONS_H_
#define DMLSERVE_BENCH_BENCH_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/core/types.h"
#include "engine/d3d12/device.h"
#include "engine/plan/planner_options.h"

namespace dmls::bench {

struct BenchOptions {
  // Operators measured (bench_ops.h names them) at each of `sizes` elements.
  std::vector<std::string> ops = {"celu", "threshold", "clip", "relu",
                                  "sigmoid", "tanh", "mvn1"};
  std::vector<uint64_t> sizes = {1ull << 20, 16ull << 20, 128ull << 20};
  // Executions recorded into one command list per measurement.
  int iters = 20;
  d3d12::DeviceOptions device;
  // MVN1 rows: an MVN1 of n elements is mvn_rows x (n / mvn_rows).
  uint64_t mvn_rows = 512;
  bool overlap = false;        // no UAV barrier between executions
  bool dispatch_cost = true;   // measure per-dispatch and submit cost
  bool list_adapters = false;  // print the adapters and exit
  bool show_plan = false;      // print each plan's dispatches
  bool plan_only = false;      // print the plans, measure nothing (no device)
  // Print each plan's kernels as the Vulkan driver compiles them (no D3D12
  // device; kernel_stats.h), measure nothing.
  bool kernel_stats = false;
  // Time only dispatch `only_dispatch` of each plan (0-based; -1: all), to
  // see where a multi-dispatch plan's time goes (MVN's statistics and
  // normalisation passes). The whole plan runs once first, untimed, so that
  // the dispatch reads what it would read in the plan; the check that every
  // output element was written still covers the whole plan's result.
  int only_dispatch = -1;
  // Requests pushed through GpuEngine end to end (0: skip): small CELUs of
  // --engine_elements, --engine_in_flight at a time.
  int engine_requests = 2000;
  uint64_t engine_elements = 1024;
  int engine_in_flight = 64;
  // Threads submitting engine requests, and the max_batch_requests values to
  // measure (each in its own engine).
  int engine_threads = 4;
  std::vector<uint32_t> engine_max_batch = {256};
  // The tensors' data type: float32 or float16 (--data_type).
  DataType data_type = DataType::kFloat32;
  // Planner options (--cache_mib, --mvn_block_kib, --mvn_*).
  gpu::PlannerOptions planner;
};

// A positive element count: decimal digits, optionally followed by K/k
// (x 2^10), M/m (x 2^20) or G/g (x 2^30). False, `*out` untouched, for
// anything else, 0 included.
bool ParseSize(absl::string_view text, uint64_t* out);
// The form ParseSize reads back as `n`, with the largest suffix that divides
// it ("1M" for 2^20, "1000" for 1000).
std::string FormatSize(uint64_t n);

// "1M,16M,128M" -> sizes (empty items skipped); InvalidArgument
// "bad size 'ITEM'" for the first item ParseSize rejects.
absl::StatusOr<std::vector<uint64_t>> ParseSizeList(absl::string_view text);
std::string FormatSizeList(const std::vector<uint64_t>& sizes);

// "256,1" -> {256, 1}: every item a positive integer (an empty item is an
// error, as is an empty list).
absl::StatusOr<std::vector<uint32_t>> ParseMaxBatchList(absl::string_view text);

// "float32" or "float16"; InvalidArgument "--data_type: float32 or float16"
// otherwise.
absl::StatusOr<DataType> ParseDataType(absl::string_view text);
// The name ParseDataType reads back (FLOAT32 and FLOAT16 only).
absl::string_view DataTypeFlagValue(DataType type);

}  // namespace dmls::bench

#endif  // DMLSERVE_BENCH_BENCH_OPTIONS_H_
