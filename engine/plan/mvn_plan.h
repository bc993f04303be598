// PlanMvn: the MVN/MVN1 part of the planner. Three schedules:
//  * row: a group of at most kMvnWideRowChunk elements is one workgroup of one
//    dispatch (kMvnRow), read from memory once (64-thread workgroups up to
//    kMvnSmallRowChunk elements, 256 up to kMvnChunk, 512 up to
//    kMvnMediumRowChunk, 1,024 threads of 32 elements up to
//    kMvnWideRowChunk where the groups fill most of it, FillsWideRow;
//    FLOAT16 texel kernels have half those threads with twice the
//    elements, MvnEmitter::HalvesThreads);
//  * blocked: larger groups in blocks of rows sized from the adapter's cache
//    (PlannerOptions::cache_bytes): per block, partial statistics into
//    scratch then combine + normalise, so that the normalisation rereads
//    the block from the cache instead of DRAM;
//  * two-pass: the same two dispatches over all groups at once, when one
//    group alone exceeds the block budget or the tensor fits one block;
//  * cooperative (PlannerOptions::mvn_coop_max_chunks): a clear of the
//    counters, then one kMvnCoop dispatch whose workgroups take the
//    statistics of each chunk, then, a cache's worth of groups later, its
//    normalisation (kernel_abi.h), so that DRAM sees the input once; it
//    takes precedence over the two above where enabled.
// Where each group is a run of whole 16-byte texels of the input and of the
// output (packed over the reduced dimensions, N and every outer stride a
// multiple of 16 bytes: tensors start at their buffer's first byte, which
// the runtime aligns to 16 bytes or more), the row, blocked and two-pass
// kernels take kMvnVariantVec4 (PlannerOptions::mvn_vec4): R32G32B32A32_UINT
// views of the input and output, one load per 4 FLOAT32 or 8 FLOAT16
// elements, whole-texel stores; where Scale/Bias are packed over the
// reduced dimensions too, with their groups' starts 16 bytes times a whole
// number, the apply and row kernels load them so as well
// (kMvnVariantVec4ScaleBias, PlannerOptions::mvn_vec4_scale_bias).
// Pure; thread-safe.
#ifndef DMLSERVE_ENGINE_PLAN_MVN_PLAN_H_
#define DMLSERVE_ENGINE_PLAN_MVN_PLAN_H_

#include "absl/status/statusor.h"
#include "engine/core/operator_desc.h"
#include "engine/plan/plan.h"
#include "engine/plan/planner_options.h"

namespace dmls::gpu {

absl::StatusOr<DispatchPlan> PlanMvn(const OperatorDesc& op, const PlannerOptions& options);

// Whether groups of `n` elements fill enough of the wide row kernel's
// threads to win over the two passes without it: it keeps one workgroup an
// SM, and a thread without elements still waits through the reduction. On
// the H200 the wide row against the two passes, us at about 2^27
// elements: FLOAT32 370/393 at 32,768, 418/393 at 28,672, 578/393 at
// 16,384 (d6a1ba5, docs/perf/h200-mvn28-2026-11-28/v4.sh); FLOAT16, since
// its texel kernels take half the threads (49e1fae,
// docs/perf/h200-mvn34-2026-11-29/x4.sh), 203/220 at 32,768, 226/224 at
// 31,744, 231/226 at 30,720, 241/220 at 28,672 (before: 207/274 at
// 32,768, 250/274 at 28,672, 276/274 at 24,576). Hence more than 31,744
// elements (31/32) for FLOAT16, 28,672 (7/8) for FLOAT32.
bool FillsWideRow(uint64_t n, uint32_t element_bytes);

// The schedule of `groups` reduction groups of `n` elements each;
// `texel_runs`: they take texel loads (kMvnVariantVec4), with which the
// wide row kernel is the fastest up to kMvnWideRowChunk elements where
// FillsWideRow, unless
// `scale_or_bias`: with a Scale or Bias its 32 elements a thread carry two
// more values each. With one load per element for them it ran 2.8
// (FLOAT32) and 4.6 (FLOAT16) times slower than the two passes at 4,096 x
// 32,768 on the H100 (run 15). With `scale_bias_texels`
// (kMvnVariantVec4ScaleBias, loaded a texel at a time after the reduction)
// FLOAT16 wins (282 against 356 us) and FLOAT32 still loses (615 against
// 590; run 21), so only FLOAT16 takes it (PlannerOptions::mvn_wide_row
// still forces it).
// The 512-thread row (kMvnVariantMediumRow, PlannerOptions::mvn_medium_row)
// takes groups of kMvnChunk to kMvnMediumRowChunk elements that load
// texels (and Scale/Bias texels where present). On the H200 (v5.sh), us
// against the two passes: FLOAT16 216/270 at 16,384 x 8,192, 310/364 at
// 21,845 x 6,144, 454/527 at 32,704 x 4,104; FLOAT32 290/395, 361/459,
// 486/589; with a Scale and Bias per column FLOAT16 242/304 and FLOAT32
// 432/499 at 16,384 x 8,192. By words (N = 8,191) it lost: FLOAT16
// 788/513, FLOAT32 616/513.
// A 1,024-thread row of 16 elements a thread for groups of 8,193 to 16,384
// elements (61-63 registers, so one workgroup an SM) lost to the two passes
// there and was not kept (9d6b741, reverted; H200,
// docs/perf/h200-mvn29-2026-11-28): us, row against two passes, at 8,200
// FLOAT16 538/401 and FLOAT32 582/486, at 12,288 367/271 and 442/393; only
// full rows of 16,384 won a little, 265/271 and 369/393 (with a Scale and
// Bias 296/307 and 517/501).
// `texel_span`: the groups would take texel-span statistics in the two
// passes (packed, not whole texels; PlannerOptions::mvn_texel_span), which
// count their chunks from up to a texel before the group and, with
// mvn_long_span, combine from mvn_combine_min_chunks of them in either type
// (MvnSchedule::combine is decided here alone).
MvnSchedule ChooseMvnSchedule(uint64_t groups, uint64_t n, uint32_t element_bytes,
                              const PlannerOptions& options, bool texel_runs = false,
                              bool scale_or_bias = false, bool scale_bias_texels = false,
                              bool texel_span = false);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_PLAN_MVN_PLAN_H_
