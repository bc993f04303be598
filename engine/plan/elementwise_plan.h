// Element-wise plans (every operator but MVN): the kernel key and
// constant block of the operator's parameters, one vector dispatch series
// over packed buffers (PlanContiguous) or strided dispatches over coalesced
// dimensions. planner.h dispatches here; coalesce.h plans joined spans
// with PlanContiguous. Pure functions; thread-safe.
#ifndef DMLSERVE_ENGINE_PLAN_ELEMENTWISE_PLAN_H_
#define DMLSERVE_ENGINE_PLAN_ELEMENTWISE_PLAN_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/core/operator_desc.h"
#include "engine/kernels/kernel_abi.h"
#include "engine/kernels/kernel_key.h"
#include "engine/plan/plan.h"
#include "engine/plan/planner_options.h"

namespace dmls::gpu {

// `op` must have passed the validator and not be MVN.
absl::StatusOr<DispatchPlan> PlanElementwise(const OperatorDesc& op, const PlannerOptions& o);

// Appends to `plan` the dispatches of `base_key` (kContiguous layout) over
// `elements` elements of type `t` of packed buffers, with `base_args` as
// the operator's parameters.
absl::Status PlanContiguous(const KernelKey& base_key, const ElementwiseArgs& base_args,
                            uint64_t elements, DataType t, const PlannerOptions& o,
                            DispatchPlan& plan);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_PLAN_ELEMENTWISE_PLAN_H_
