#include "engine/plan/planner.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/kernels/kernels.h"
#include "engine/plan/elementwise_plan.h"
#include "engine/plan/mvn_plan.h"

namespace dmls::gpu {

absl::StatusOr<DispatchPlan> PlanExecution(const OperatorDesc& op, bool in_place) {
  return PlanExecution(op, in_place, PlannerOptions{});
}

absl::StatusOr<DispatchPlan> PlanExecution(const OperatorDesc& op, bool in_place,
                                           const PlannerOptions& options) {
  const OperatorType type = op.op();
  if (type == OperatorType::kMeanVarianceNormalization ||
      type == OperatorType::kMeanVarianceNormalization1) {
    if (in_place) return absl::InvalidArgumentError("MVN cannot run in place");
    return PlanMvn(op, options);
  }
  if (ElementwiseTypes(type).empty()) {
    return absl::UnimplementedError(absl::StrCat("no GPU kernels for operator ", op.type));
  }
  return PlanElementwise(op, options);
}

ElementwiseArgs DecodeElementwiseArgs(const Dispatch& d) {
  ElementwiseArgs a;
  std::memcpy(&a, d.args.data(), std::min(sizeof(a), d.args.size()));
  return a;
}

MvnArgs DecodeMvnArgs(const Dispatch& d) {
  MvnArgs a;
  std::memcpy(&a, d.args.data(), std::min(sizeof(a), d.args.size()));
  return a;
}

}  // namespace dmls::gpu
