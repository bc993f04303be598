// Coalescing of element-wise requests (engine/sched batches them by key):
// which plans may be concatenated with other requests of the same key and
// run as one dispatch over the joined span, and the plan of that span. The
// D3D12 runtime gets these as a Coalescer (engine/d3d12/gpu_runner.h), so
// it does not depend on the planner. Pure functions; thread-safe.
#ifndef DMLSERVE_ENGINE_PLAN_COALESCE_H_
#define DMLSERVE_ENGINE_PLAN_COALESCE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/plan/plan.h"
#include "engine/plan/planner_options.h"

namespace dmls::gpu {

// Whether a plan is one element-wise operator over a packed buffer that may
// be concatenated with other requests of the same CoalesceKey and run as
// one dispatch. True for contiguous-layout element-wise plans.
bool IsCoalescable(const DispatchPlan& plan);
// Requests with equal keys compute the same function of each 32-bit word
// (same kernel, same parameters); only the element count differs.
std::string CoalesceKey(const DispatchPlan& plan, bool in_place);
// The plan of a coalescable request's kernel over `texels` 16-byte texels
// starting at texel 0 of kInput/kOutput: vector dispatches only (a span
// rounds up to whole texels; the extra lanes are padding).
absl::StatusOr<DispatchPlan> PlanCoalescedSpan(const DispatchPlan& like,
                                               uint64_t texels,
                                               const PlannerOptions& options = {});

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_PLAN_COALESCE_H_
