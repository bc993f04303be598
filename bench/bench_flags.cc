#include "bench/bench_flags.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/flags_help.h"

namespace {
const dmls::bench::BenchOptions kDefaults;
}  // namespace

// What is measured.
ABSL_FLAG(std::string, ops, absl::StrJoin(kDefaults.ops, ","),
          "Operators, comma-separated: celu, elu, relu, sigmoid, tanh, gelu, "
          "identity, linear, hard_sigmoid, threshold, clip, mvn1, mvn1_nv0 "
          "(NormalizeVariance FALSE), mvn1_affine (a Scale and a Bias per column).");
ABSL_FLAG(std::string, sizes, dmls::bench::FormatSizeList(kDefaults.sizes),
          "Elements per tensor, comma-separated, with K/M/G suffixes (x 2^10, "
          "2^20, 2^30).");
ABSL_FLAG(std::string, data_type, std::string(dmls::bench::DataTypeFlagValue(kDefaults.data_type)),
          "float32 or float16.");
ABSL_FLAG(int, iters, kDefaults.iters,
          "Executions recorded into one command list per measurement.");
ABSL_FLAG(uint64_t, mvn_rows, kDefaults.mvn_rows,
          "MVN1 rows: a size n is mvn_rows x (n / mvn_rows), normalised over the "
          "last axis (--sizes=134217216: PyTorch's 512 x 262143 layer_norm).");
ABSL_FLAG(bool, overlap, kDefaults.overlap, "No UAV barrier between executions.");

// Where.
ABSL_FLAG(std::string, device,
          std::string(dmls::d3d12::DeviceKindName(kDefaults.device.kind)),
          "auto, gpu or software.");
ABSL_FLAG(std::optional<int>, adapter, kDefaults.device.adapter_index,
          "Adapter index (as --list_adapters numbers them); overrides --device.");
ABSL_FLAG(bool, list_adapters, kDefaults.list_adapters, "Print the adapters and exit.");

// Other measurements.
ABSL_FLAG(bool, no_dispatch_cost, !kDefaults.dispatch_cost,
          "Skip the per-dispatch and per-submit cost measurements.");
ABSL_FLAG(int, engine_requests, kDefaults.engine_requests,
          "Small CELU requests pushed through GpuEngine end to end (0: skip).");
ABSL_FLAG(std::string, engine_elements, dmls::bench::FormatSize(kDefaults.engine_elements),
          "Elements per engine request (K/M/G suffixes).");
ABSL_FLAG(int, engine_in_flight, kDefaults.engine_in_flight,
          "Engine requests outstanding at a time, over all submitting threads.");
ABSL_FLAG(int, engine_threads, kDefaults.engine_threads,
          "Threads submitting engine requests.");
ABSL_FLAG(std::string, engine_max_batch, absl::StrJoin(kDefaults.engine_max_batch, ","),
          "max_batch_requests values, comma-separated, each measured in a fresh "
          "engine (256,1: batching on and off).");

// Plans.
ABSL_FLAG(bool, show_plan, kDefaults.show_plan,
          "Print each plan's dispatches and the MVN schedule chosen (row, "
          "blocked, two-pass or cooperative).");
ABSL_FLAG(bool, plan_only, kDefaults.plan_only,
          "Print the plans without a device and measure nothing.");
ABSL_FLAG(bool, kernel_stats, kDefaults.kernel_stats,
          "Print what the Vulkan driver makes of each kernel of the plans "
          "(registers, binary size, spills where it offers "
          "VK_KHR_pipeline_executable_properties) and measure nothing.");
ABSL_FLAG(int, only_dispatch, kDefaults.only_dispatch,
          "Time only this dispatch of each plan (0-based; -1: the whole plan), "
          "after one untimed run of the whole plan (e.g. MVN's two passes apart).");
ABSL_FLAG(std::optional<uint64_t>, cache_mib, std::nullopt,
          "The adapter's L2 size in MiB for the planner (D3D12 does not report "
          "it; unset: gpu::kAssumedCacheBytes).");
ABSL_FLAG(std::optional<uint64_t>, mvn_block_kib, std::nullopt,
          "MVN blocked schedule with row blocks of this many KiB.");
ABSL_FLAG(bool, mvn_no_row, !kDefaults.planner.mvn_row,
          "Keep MVN off the row schedule (to compare with the two dispatches).");
ABSL_FLAG(bool, mvn_no_medium_row, !kDefaults.planner.mvn_medium_row,
          "Groups of 4,097 to 8,192 elements take the two passes instead of the "
          "512-thread row (to compare the two).");
ABSL_FLAG(bool, mvn_wide_row, kDefaults.planner.mvn_wide_row,
          "Let rows of up to 32,768 elements take the MVN row schedule.");
ABSL_FLAG(bool, mvn_blocked, kDefaults.planner.mvn_blocked,
          "The blocked MVN schedule, row blocks of a quarter of the cache.");
ABSL_FLAG(std::optional<uint32_t>, mvn_coop_max_chunks, std::nullopt,
          "The cooperative MVN schedule for groups of up to N 4,096-element "
          "chunks (unset: off).");
ABSL_FLAG(uint32_t, mvn_combine_min_chunks, kDefaults.planner.mvn_combine_min_chunks,
          "Two-pass/blocked FLOAT16 MVN: combine each group's partials once, in a "
          "third dispatch, for groups of at least N 4,096-element chunks (0: never; "
          "PlannerOptions::mvn_combine_min_chunks).");
ABSL_FLAG(bool, mvn_combine_float32, kDefaults.planner.mvn_combine_float32,
          "FLOAT32 MVN combines as FLOAT16 does (--mvn_combine_min_chunks).");
ABSL_FLAG(int, mvn_texel_span, kDefaults.planner.mvn_texel_span ? 1 : 0,
          "1: FLOAT16 MVN statistics of packed groups that are not whole texels load "
          "texels of the whole input, masked (PlannerOptions::mvn_texel_span); 0: words.");
ABSL_FLAG(int, mvn_texel_span_float32, kDefaults.planner.mvn_texel_span_float32 ? 1 : 0,
          "The same for FLOAT32 (PlannerOptions::mvn_texel_span_float32).");
ABSL_FLAG(int, mvn_long_span, kDefaults.planner.mvn_long_span ? 1 : 0,
          "1: texel-span statistics combined once a group take kMvnLongSpanChunk elements a "
          "workgroup (PlannerOptions::mvn_long_span); 0: kMvnChunk.");
ABSL_FLAG(int, mvn_span_normalise, kDefaults.planner.mvn_span_normalise ? 1 : 0,
          "1: groups back to back normalised by texels of the tensor where the two passes "
          "combine once (PlannerOptions::mvn_span_normalise); 0: by words.");
ABSL_FLAG(uint32_t, mvn_coop_spin_limit, kDefaults.planner.mvn_coop_spin_limit,
          "Cooperative MVN: polls before a normalisation task stops waiting.");
ABSL_FLAG(int, mvn_vec4, kDefaults.planner.mvn_vec4 ? 1 : 0,
          "1: MVN loads and stores whole 16-byte texels where it can; 0: one "
          "32-bit load per element (PlannerOptions::mvn_vec4).");
ABSL_FLAG(int, mvn_vec4_scale_bias, kDefaults.planner.mvn_vec4_scale_bias ? 1 : 0,
          "1: Scale and Bias texels beside texels of the input; 0: one load per "
          "element (PlannerOptions::mvn_vec4_scale_bias).");

namespace dmls::bench {
namespace {

absl::Status OutOfRange(absl::string_view flag, absl::string_view value,
                        absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", value, ": ", expected));
}

// OK when `flag` is at least `min` (or, optional, unset).
template <typename T>
absl::Status AtLeast(const absl::Flag<T>& flag, T min) {
  const T value = absl::GetFlag(flag);
  if (value >= min) return absl::OkStatus();
  return OutOfRange(absl::GetFlagReflectionHandle(flag).Name(), absl::StrCat(value),
                    absl::StrCat("must be at least ", min));
}
template <typename T>
absl::Status AtLeast(const absl::Flag<std::optional<T>>& flag, T min) {
  const std::optional<T> value = absl::GetFlag(flag);
  if (!value.has_value() || *value >= min) return absl::OkStatus();
  return OutOfRange(absl::GetFlagReflectionHandle(flag).Name(), absl::StrCat(*value),
                    absl::StrCat("must be at least ", min));
}

absl::Status ZeroOrOne(const absl::Flag<int>& flag) {
  const int value = absl::GetFlag(flag);
  if (value == 0 || value == 1) return absl::OkStatus();
  return OutOfRange(absl::GetFlagReflectionHandle(flag).Name(), absl::StrCat(value), "0 or 1");
}

// The counts' ranges, which their flags' types do not carry.
absl::Status CheckRanges() {
  for (const absl::Status& s : {
           AtLeast(FLAGS_iters, 1),
           AtLeast(FLAGS_only_dispatch, -1),
           AtLeast(FLAGS_mvn_rows, uint64_t{1}),
           AtLeast(FLAGS_engine_requests, 0),
           AtLeast(FLAGS_engine_in_flight, 1),
           AtLeast(FLAGS_engine_threads, 1),
           AtLeast(FLAGS_cache_mib, uint64_t{1}),
           AtLeast(FLAGS_mvn_block_kib, uint64_t{1}),
           AtLeast(FLAGS_mvn_coop_max_chunks, uint32_t{1}),
           ZeroOrOne(FLAGS_mvn_vec4),
           ZeroOrOne(FLAGS_mvn_vec4_scale_bias),
           ZeroOrOne(FLAGS_mvn_texel_span),
           ZeroOrOne(FLAGS_mvn_texel_span_float32),
           ZeroOrOne(FLAGS_mvn_long_span),
           ZeroOrOne(FLAGS_mvn_span_normalise),
       }) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// The flags, parsed, into options; the first bad value as an error.
absl::StatusOr<BenchOptions> OptionsFromFlags() {
  if (absl::Status s = CheckRanges(); !s.ok()) return s;
  BenchOptions o;
  o.ops = absl::StrSplit(absl::GetFlag(FLAGS_ops), ',', absl::SkipEmpty());
  absl::StatusOr<std::vector<uint64_t>> sizes = ParseSizeList(absl::GetFlag(FLAGS_sizes));
  if (!sizes.ok()) return sizes.status();
  o.sizes = *std::move(sizes);
  absl::StatusOr<DataType> type = ParseDataType(absl::GetFlag(FLAGS_data_type));
  if (!type.ok()) return type.status();
  o.data_type = *type;
  absl::StatusOr<d3d12::DeviceOptions::Kind> kind =
      d3d12::ParseDeviceKind(absl::GetFlag(FLAGS_device));
  if (!kind.ok()) return kind.status();
  o.device.kind = *kind;
  o.device.adapter_index = absl::GetFlag(FLAGS_adapter);
  const std::string elements = absl::GetFlag(FLAGS_engine_elements);
  if (!ParseSize(elements, &o.engine_elements)) {
    return OutOfRange("engine_elements", elements, "a positive count (K/M/G suffixes)");
  }
  absl::StatusOr<std::vector<uint32_t>> max_batch =
      ParseMaxBatchList(absl::GetFlag(FLAGS_engine_max_batch));
  if (!max_batch.ok()) return max_batch.status();
  o.engine_max_batch = *std::move(max_batch);

  o.iters = absl::GetFlag(FLAGS_iters);
  o.mvn_rows = absl::GetFlag(FLAGS_mvn_rows);
  o.overlap = absl::GetFlag(FLAGS_overlap);
  o.dispatch_cost = !absl::GetFlag(FLAGS_no_dispatch_cost);
  o.list_adapters = absl::GetFlag(FLAGS_list_adapters);
  o.plan_only = absl::GetFlag(FLAGS_plan_only);
  o.kernel_stats = absl::GetFlag(FLAGS_kernel_stats);
  o.only_dispatch = absl::GetFlag(FLAGS_only_dispatch);
  o.show_plan = absl::GetFlag(FLAGS_show_plan) || o.plan_only;
  o.engine_requests = absl::GetFlag(FLAGS_engine_requests);
  o.engine_in_flight = absl::GetFlag(FLAGS_engine_in_flight);
  o.engine_threads = absl::GetFlag(FLAGS_engine_threads);

  gpu::PlannerOptions& p = o.planner;
  if (const std::optional<uint64_t> mib = absl::GetFlag(FLAGS_cache_mib)) {
    p.cache_bytes = *mib << 20;
  }
  if (const std::optional<uint64_t> kib = absl::GetFlag(FLAGS_mvn_block_kib)) {
    p.mvn_block_bytes = *kib << 10;
  }
  p.mvn_row = !absl::GetFlag(FLAGS_mvn_no_row);
  p.mvn_wide_row = absl::GetFlag(FLAGS_mvn_wide_row);
  p.mvn_medium_row = !absl::GetFlag(FLAGS_mvn_no_medium_row);
  p.mvn_blocked = absl::GetFlag(FLAGS_mvn_blocked);
  if (const std::optional<uint32_t> chunks = absl::GetFlag(FLAGS_mvn_coop_max_chunks)) {
    p.mvn_coop_max_chunks = *chunks;
  }
  p.mvn_coop_spin_limit = absl::GetFlag(FLAGS_mvn_coop_spin_limit);
  p.mvn_combine_min_chunks = absl::GetFlag(FLAGS_mvn_combine_min_chunks);
  p.mvn_combine_float32 = absl::GetFlag(FLAGS_mvn_combine_float32);
  p.mvn_texel_span = absl::GetFlag(FLAGS_mvn_texel_span) == 1;
  p.mvn_texel_span_float32 = absl::GetFlag(FLAGS_mvn_texel_span_float32) == 1;
  p.mvn_long_span = absl::GetFlag(FLAGS_mvn_long_span) == 1;
  p.mvn_span_normalise = absl::GetFlag(FLAGS_mvn_span_normalise) == 1;
  p.mvn_vec4 = absl::GetFlag(FLAGS_mvn_vec4) == 1;
  p.mvn_vec4_scale_bias = absl::GetFlag(FLAGS_mvn_vec4_scale_bias) == 1;
  return o;
}

}  // namespace

absl::StatusOr<BenchOptions> ParseBenchCommandLine(int argc, char** argv) {
  const std::vector<char*> rest = ParseCommandLineWithHelp(
      argc, argv,
      "GPU bandwidth of the Direct3D 12 engine's kernels against the same "
      "machine's D3D12 copy (bench/README.md).\n"
      "Usage: dmls_bench [--device=auto|gpu|software] [--ops=a,b] "
      "[--sizes=1M,16M] [--flag=value]...",
      "bench/bench_flags.cc");
  if (rest.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", rest[1], "' (flags are --name=value)"));
  }
  return OptionsFromFlags();
}

}  // namespace dmls::bench
