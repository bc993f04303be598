// PlanMvn: the MVN/MVN1 part of the planner (two dispatches: partial
// statistics into scratch, then combine + normalise). Pure; thread-safe.
#ifndef DMLSERVE_ENGINE_DXBC_MVN_PLAN_H_
#define DMLSERVE_ENGINE_DXBC_MVN_PLAN_H_

#include "absl/status/statusor.h"
#include "engine/core/operator_desc.h"
#include "engine/dxbc/plan.h"
#include "engine/dxbc/planner.h"

namespace dmls::gpu {

absl::StatusOr<DispatchPlan> PlanMvn(const OperatorDesc& op, const PlannerOptions& options);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_DXBC_MVN_PLAN_H_
