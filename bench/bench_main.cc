// dmls_bench: measures the D3D12 engine's kernels in GB/s and, in the same
// run and on the same buffers, a D3D12 device-to-device CopyBufferRegion of
// the same size as the anchor. Each measurement records `iters` executions
// into one command list between two timestamp queries, runs the list once
// to warm up and once timed, and reports GPU time per execution (and the
// wall time of the submit + fence wait as a cross-check). Bytes counted per
// execution: input read + output written (MVN1 too, as PyTorch's
// layer_norm bar in DESIGN.md §3 counts it).
//
//   dmls_bench [--ops=celu,threshold,...] [--sizes=1M,16M,128M] [--iters=20]
//              [--device=auto|gpu|software] [--adapter=N] [--mvn_rows=512]
//              [--overlap] [--no_dispatch_cost] [--list_adapters] [--show_plan]
//              [--engine_requests=2000] [--engine_elements=1K]
//              [--engine_in_flight=64] [--engine_threads=4]
//              [--engine_max_batch=256[,1]] [--data_type=float32|float16]
//              [--cache_mib=N] [--mvn_block_kib=N] [--mvn_no_row]
//              [--mvn_wide_row] [--mvn_blocked] [--plan_only] [--only_dispatch=K]
//              [--mvn_coop_max_chunks=N] [--mvn_coop_spin_limit=N]
//              [--mvn_vec4=0|1] [--mvn_vec4_scale_bias=0|1] [--mvn_combine_min_chunks=N]
//              [--mvn_combine_float32] [--mvn_texel_span=0|1]
//              [--mvn_texel_span_float32=0|1]
//
// (--help lists them with their defaults: bench_flags.cc.) In this order:
// --list_adapters prints the adapters; --plan_only prints the plans without
// a device (plan_report.h); otherwise the fixed costs of a dispatch and a
// submit (kernel_timing.h, unless --no_dispatch_cost), the engine end to
// end (engine_throughput.h, unless --engine_requests=0), then every
// operator at every size (kernel_timing.h) and the table (result_table.h).
//
// MVN1 normalises rows of --mvn_rows x (size / mvn_rows) over the last
// axis; --sizes=134217216 gives PyTorch's 512 x 262143 layer_norm case.
// mvn1_nv0 is the same with NormalizeVariance FALSE (exact-mean statistics);
// mvn1_affine with a Scale and a Bias per column (PyTorch's layer_norm with
// weight and bias), whose FLOAT32 kernels carry the overflow and
// cancellation slow path (mvn_emitter_normalise.cc, Affine).
// --cache_mib tells the planner the adapter's L2 size (D3D12 does not
// report it; default gpu::kAssumedCacheBytes); --mvn_blocked turns on the
// blocked MVN schedule (off by default) with row blocks of a quarter of the
// cache, --mvn_block_kib=N with blocks of N KiB; --mvn_wide_row lets rows of
// up to 32,768 elements take the row schedule (off by default); --mvn_no_row
// keeps MVN off the row schedule (to compare with the two dispatches); --show_plan
// prints the MVN schedule chosen (row, blocked, two-pass or cooperative);
// --plan_only prints the plans without a device and measures nothing;
// --kernel_stats prints each plan's kernels as the Vulkan driver compiles
// them (registers, binary size, spills where it says; kernel_stats.h);
// --only_dispatch=K times dispatch K of each plan alone (after one untimed
// run of the whole plan), e.g. MVN's statistics and normalisation passes.
// --mvn_coop_max_chunks=N turns on the cooperative MVN schedule (off by
// default: slower than the two passes on the H100) for groups of up to N
// 4,096-element chunks; --mvn_coop_spin_limit sets the polls before one of
// its normalisation tasks stops waiting. --mvn_vec4=0 keeps MVN on one
// 32-bit load per element where it would load whole 16-byte texels
// (PlannerOptions::mvn_vec4; --show_plan says which it took);
// --mvn_vec4_scale_bias=0 keeps Scale and Bias on one load per element
// beside texels of the input (PlannerOptions::mvn_vec4_scale_bias).
//
// Exit status: 0 when every operator measured; 3 when one failed; 1 when
// the device (or the adapter list) is not there, or absl rejected a flag;
// 2 for a flag value out of range.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/bench_device.h"
#include "bench/bench_flags.h"
#include "bench/bench_options.h"
#include "bench/engine_throughput.h"
#include "bench/kernel_stats.h"
#include "bench/kernel_timing.h"
#include "bench/plan_report.h"
#include "bench/result_table.h"
#include "engine/d3d12/device.h"

namespace dmls::bench {
namespace {

int ListAdapters() {
  absl::StatusOr<std::vector<d3d12::AdapterInfo>> adapters = d3d12::Device::ListAdapters();
  if (!adapters.ok()) {
    std::fprintf(stderr, "dmls_bench: %s\n", std::string(adapters.status().message()).c_str());
    return 1;
  }
  for (const d3d12::AdapterInfo& a : *adapters) {
    std::printf("#%d %s (%s%s), %llu MiB\n", a.index, a.name.c_str(), a.kind.c_str(),
                a.discrete ? ", discrete" : "",
                static_cast<unsigned long long>(a.memory_bytes >> 20));
  }
  return 0;
}

int Main(int argc, char** argv) {
  absl::StatusOr<BenchOptions> parsed = ParseBenchCommandLine(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  const BenchOptions& flags = *parsed;
  if (flags.list_adapters) return ListAdapters();
  if (flags.plan_only) {
    PrintPlans(flags);
    return 0;
  }
  if (flags.kernel_stats) return PrintKernelStats(flags);
  BenchDevice bench;
  if (absl::Status s = bench.Init(flags.device); !s.ok()) {
    std::fprintf(stderr, "dmls_bench: no %s device: %s\n",
                 std::string(d3d12::DeviceKindName(flags.device.kind)).c_str(),
                 std::string(s.message()).c_str());
    return 1;
  }
  const d3d12::AdapterInfo& a = bench.device().adapter();
  std::printf("adapter #%d: %s (%s), %llu MiB, %s\n", a.index, a.name.c_str(),
              a.kind.c_str(), static_cast<unsigned long long>(a.memory_bytes >> 20),
              bench.device().device_info().backend.c_str());
  std::printf("iters per measurement: %d, %s between executions; GB/s = "
              "(input read + output written) / GPU time\n",
              flags.iters, flags.overlap ? "no barrier" : "a UAV barrier");
  std::fflush(stdout);
  if (flags.dispatch_cost) MeasureOverheads(bench);
  if (flags.engine_requests > 0) MeasureEngine(flags);
  std::fflush(stdout);

  std::vector<OpTiming> rows;
  for (const std::string& op : flags.ops) {
    for (uint64_t n : flags.sizes) {
      rows.push_back(MeasureOp(bench, op, n, flags));
      PrintProgressLine(rows.back());
      std::fflush(stdout);
    }
  }
  return PrintResultTable(rows) == 0 ? 0 : 3;
}

}  // namespace
}  // namespace dmls::bench

int main(int argc, char** argv) { return dmls::bench::Main(argc, argv); }
