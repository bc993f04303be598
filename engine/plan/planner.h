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

// The constant block of a dispatch, decoded (for tests and logging).
ElementwiseArgs DecodeElementwiseArgs(const Dispatch& d);
MvnArgs DecodeMvnArgs(const Dispatch& d);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_PLAN_PLANNER_H_
