// PlannerOptions: the planner's limits and schedule switches (planner.h,
// mvn_plan.h). Plain data with documented defaults.
#ifndef DMLSERVE_ENGINE_PLAN_PLANNER_OPTIONS_H_
#define DMLSERVE_ENGINE_PLAN_PLANNER_OPTIONS_H_

#include <cstdint>

#include "engine/kernels/kernel_abi.h"

namespace dmls::gpu {

struct PlannerOptions {
  // Largest view, in texels of its format (vkd3d 1.2: 2^27).
  uint32_t max_view_texels = kMaxViewTexels;
  // Largest group count per dispatch dimension (D3D12: 65535).
  uint32_t max_groups = kMaxDispatchGroups;
  // Upper bound on dispatches in one plan; larger plans are Unimplemented.
  uint32_t max_dispatches = 1u << 16;
  // The adapter's last-level (L2) cache in bytes. D3D12 does not report
  // it; 0 = unknown, planned as kAssumedCacheBytes. MVN plans size their
  // row blocks from it (mvn_plan.h).
  uint64_t cache_bytes = 0;
  // MVN input bytes per row block of a blocked plan; 0 = cache / 4 (the
  // block being normalised and the next block's statistics are in flight
  // together, and the output passes through the cache too).
  uint64_t mvn_block_bytes = 0;
  // false: MVN never takes the row schedule (benchmarks compare schedules).
  bool mvn_row = true;
  // The row schedule for groups of kMvnChunk to kMvnWideRowChunk elements
  // (1,024 threads of 32 elements each) with one load per element. Off by
  // default: on the H100 it ran 4,096 x 32,768 FLOAT32 at 737 GB/s against
  // 1,852 for the two passes (32 values a thread in registers cost
  // occupancy; docs/PERFORMANCE.md). Groups that take texel loads
  // (mvn_vec4) use it where they fill most of it: there it won, 2,212
  // against 1,995 GB/s FLOAT32 and 2,171 against 1,628 FLOAT16 at 4,096 x
  // 32,768, and lost below 3/4 (FLOAT16) or 7/8 (FLOAT32) of its 32,768
  // elements on the H200 (FillsWideRow); with a Scale or Bias only FLOAT16
  // with Scale/Bias texels does (ChooseMvnSchedule, mvn_plan.h). true
  // forces it for every group of kMvnChunk to kMvnWideRowChunk elements.
  bool mvn_wide_row = false;
  // The row schedule of 512 threads (kMvnVariantMediumRow) for groups of
  // kMvnChunk to kMvnMediumRowChunk elements, unless mvn_wide_row; false:
  // the two passes there (to compare the two).
  bool mvn_medium_row = true;
  // MVN statistics and normalisation (row, two-pass and blocked schedules,
  // not cooperative) load and store whole 16-byte texels where every group
  // is a run of whole texels of the input and of the output (kMvnVariantVec4,
  // mvn_plan.h); false: one word per element always (to compare the two).
  bool mvn_vec4 = true;
  // With mvn_vec4, Scale and Bias load whole texels too where each is
  // packed over the reduced dimensions like the input (per column, as in a
  // layer norm's weight and bias; kMvnVariantVec4ScaleBias); false: one
  // word per element (to compare the two).
  bool mvn_vec4_scale_bias = true;
  // The blocked schedule (statistics and normalisation of cache-sized row
  // blocks in turn). Off by default, and implied by a nonzero
  // mvn_block_bytes: on the H100 it was slower than the two passes at
  // every block size tried (512 x 262,143 FLOAT32: 1,153-1,613 GB/s against
  // 1,791; docs/PERFORMANCE.md).
  bool mvn_blocked = false;
  // The two-pass and blocked schedules of FLOAT16 combine each group's
  // partials once, in a third dispatch between the statistics and the
  // normalisation (kMvnCombine, then kMvnNormalise), for groups of at least
  // this many kMvnChunk chunks; below it (and with 0) every normalisation
  // workgroup combines its group's partials itself (kMvnApply). On the
  // H200 (docs/perf/h200-mvn16b-2026-11-28, two passes over 128 Mi
  // elements): FLOAT16 476-478 us against 533-545 at 16, 32 and 64 chunks,
  // 295.0 against 295.6 at 8 (the normalisation pass at 512 x 262,143:
  // 237 against 309 us, the combine 3.5); FLOAT32 lost at every count
  // (538 against 517 at 64 chunks: its normalisation pass took 325 us
  // against 308), so it combines only with mvn_combine_float32.
  uint32_t mvn_combine_min_chunks = 16;
  bool mvn_combine_float32 = false;
  // The two-pass and blocked schedules' statistics of groups packed in the
  // input but not runs of whole texels (odd N, e.g. 512 x 262,143) load
  // 16-byte texels of the whole input, masked to each group
  // (kMvnVariantTexelSpan), instead of a word per element or pair:
  // FLOAT16 (mvn_texel_span) and FLOAT32 (mvn_texel_span_float32). With a
  // lane mask per texel (stop 26) FLOAT32's statistics pass at
  // 512 x 262,143 takes 202.5 us against 210.1 with words (H200,
  // docs/perf/h200-mvn26-2026-11-28).
  bool mvn_texel_span = true;
  bool mvn_texel_span_float32 = true;
  // Texel-span statistics of groups of at least mvn_combine_min_chunks
  // chunks are combined once a group (kMvnCombine, FLOAT32 included) and
  // each statistics workgroup takes kMvnLongSpanChunk elements instead of
  // kMvnChunk (kMvnVariantLongSpan): half the workgroups, reductions and
  // partials for the same bytes. At 512 x 262,143 on the H200 the
  // statistics pass took FLOAT16 147.4 us against 195.2, FLOAT32 165.4
  // against 202.5; the whole MVN1 389.4 against 437.4 and 494.4 against
  // 512.4 (docs/perf/h200-mvn26-2026-11-28).
  bool mvn_long_span = true;
  // Where the two passes combine each group's statistics once and the
  // groups lie back to back in the input and the output (packed odd N,
  // e.g. 512 x 262,143), the normalisation loads and stores whole 16-byte
  // texels of the tensor (kMvnNormalise with kMvnVariantTexelSpan) instead
  // of words or pairs of halves; Scale and Bias stay by element. At
  // 512 x 262,143 on the H200 (no Scale/Bias) the pass took 141.9 against
  // 239.3 us FLOAT16, 258.9 against 325.9 FLOAT32, both at the copy's time
  // (docs/perf/h200-mvn26-2026-11-28).
  bool mvn_span_normalise = true;
  // The cooperative schedule (kMvnCoop: one dispatch; statistics tasks,
  // then a cache's worth of groups later the normalisation tasks, so that
  // DRAM sees the input once) for groups of 2 to this many kMvnChunk chunks
  // (at most kMvnCoopMaxChunks); 0 = off, the default: on the H100 it ran
  // 512 x 262,143 FLOAT32 at 1,483-1,646 GB/s against the two passes'
  // 1,766 (docs/PERFORMANCE.md). Its tasks wait for each other, so on the
  // software adapter, which runs as many workgroups at once as it has CPU
  // threads, most of them stop waiting and take the slow fallback.
  uint32_t mvn_coop_max_chunks = 0;
  // kMvnCoop: polls of a group's counter before a workgroup stops waiting
  // and computes its group's statistics alone (kernel_abi.h). A poll is an
  // atomic in the GPU's L2 (about a microsecond on an H100): 2^15 polls
  // are tens of milliseconds, where a group's chunks normally come in
  // within microseconds. Keep it well below 65,535: llvmpipe stops every
  // loop of an invocation once they have run that many iterations together.
  uint32_t mvn_coop_spin_limit = 1u << 15;
};

// Planned when PlannerOptions::cache_bytes is 0: below the L2 of current
// datacenter GPUs (H100/H200: 50 MiB, A100: 40 MiB), above most others'.
inline constexpr uint64_t kAssumedCacheBytes = 32ull << 20;

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_PLAN_PLANNER_OPTIONS_H_
