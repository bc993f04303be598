// PlanExecution: turns a *validated* OperatorDesc into a DispatchPlan
// (kernels by key, views, constant blocks, group counts). Picks the layout
// class (contiguous when input and output are packed, else strided with
// coalesced dimensions), and splits work so that no view exceeds the view
// texel limit and no dispatch dimension exceeds the group limit. Pure
// functions; thread-safe.
#ifndef DMLSERVE_ENGINE_PLAN_PLANNER_H_
#define DMLSERVE_ENGINE_PLAN_PLANNER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/core/operator_desc.h"
#include "engine/plan/plan.h"
#include "engine/plan/planner_options.h"

namespace dmls::gpu {

// `op` must have passed the validator. `in_place` only documents intent:
// the runtime aliases kOutput to kInput; every plan is safe in place when
// the validator allowed it (each element is read and written by one thread).
absl::StatusOr<DispatchPlan> PlanExecution(const OperatorDesc& op, bool in_place);
absl::StatusOr<DispatchPlan> PlanExecution(const OperatorDesc& op, bool in_place,
                                           const PlannerOptions& options);

// Coalescing (engine/sched batches): whether a plan is one element-wise
// operator over a packed buffer that may be concatenated with other
// requests of the same CoalesceKey and run as one dispatch. True for
// contiguous-layout element-wise plans.
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

// The constant block of a dispatch, decoded (for tests and logging).
ElementwiseArgs DecodeElementwiseArgs(const Dispatch& d);
MvnArgs DecodeMvnArgs(const Dispatch& d);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_PLAN_PLANNER_H_
