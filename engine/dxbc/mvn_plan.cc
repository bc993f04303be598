#include "engine/dxbc/mvn_plan.h"

namespace dmls::gpu {

absl::StatusOr<DispatchPlan> PlanMvn(const OperatorDesc& op, const PlannerOptions& options) {
  return absl::UnimplementedError("MVN planning is not available yet");
}

}  // namespace dmls::gpu
