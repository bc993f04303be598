#include "engine/plan/coalesce.h"

#include <algorithm>
#include <string>

#include "engine/plan/elementwise_plan.h"
#include "engine/plan/planner.h"

namespace dmls::gpu {

bool IsCoalescable(const DispatchPlan& plan) {
  if (plan.dispatches.empty() || plan.scratch_bytes != 0) return false;
  for (const Dispatch& d : plan.dispatches) {
    if (d.key.stage != KernelStage::kElementwise ||
        d.key.layout != LayoutClass::kContiguous) {
      return false;
    }
  }
  return true;
}

std::string CoalesceKey(const DispatchPlan& plan, bool in_place) {
  const Dispatch& d = plan.dispatches.front();
  KernelKey key = d.key;
  key.variant = kVariantVec4;
  // Made per request on the submitting thread, compared, never shown: raw
  // bytes (one allocation), not text. The packed kernel key, in_place, and
  // the operator's parameters (c0 holds the count and grid; c1 onwards the
  // parameters).
  const uint64_t packed = key.Packed();
  const size_t params_at = std::min<size_t>(16, d.args.size());
  std::string out;
  out.reserve(sizeof(packed) + 1 + (d.args.size() - params_at));
  out.append(reinterpret_cast<const char*>(&packed), sizeof(packed));
  out.push_back(in_place ? 'i' : 'o');
  out.append(reinterpret_cast<const char*>(d.args.data()) + params_at, d.args.size() - params_at);
  return out;
}

absl::StatusOr<DispatchPlan> PlanCoalescedSpan(const DispatchPlan& like,
                                               uint64_t texels,
                                               const PlannerOptions& o) {
  if (!IsCoalescable(like)) {
    return absl::InternalError("PlanCoalescedSpan of a plan that cannot coalesce");
  }
  KernelKey key = like.dispatches.front().key;
  key.variant = kVariantVec4;
  ElementwiseArgs args = DecodeElementwiseArgs(like.dispatches.front());
  DispatchPlan plan;
  absl::Status s = PlanContiguous(key, args, texels * 128 / ElementBits(key.data_type),
                                  key.data_type, o, plan);
  if (!s.ok()) return s;
  return plan;
}

}  // namespace dmls::gpu
