#include "engine/d3d12/dxbc_engine.h"

#include <utility>

#include "engine/kernels/kernels.h"
#include "engine/plan/coalesce.h"
#include "engine/plan/planner.h"

namespace dmls::d3d12 {

PipelineCache::DxbcSource DxbcKernelSource() {
  return [](const gpu::KernelKey& key) -> absl::StatusOr<std::vector<uint8_t>> {
    absl::StatusOr<gpu::KernelInfo> kernel = gpu::BuildKernel(key);
    if (!kernel.ok()) return kernel.status();
    return std::move(kernel->dxbc);
  };
}

Planner DxbcPlanner() { return DxbcPlanner(gpu::PlannerOptions{}); }

Planner DxbcPlanner(const gpu::PlannerOptions& options) {
  return [options](const OperatorDesc& op, bool in_place) {
    return gpu::PlanExecution(op, in_place, options);
  };
}

Coalescer DxbcCoalescer() {
  Coalescer c;
  c.key = [](const gpu::DispatchPlan& plan, bool in_place) -> std::string {
    return gpu::IsCoalescable(plan) ? gpu::CoalesceKey(plan, in_place) : std::string();
  };
  c.span = [](const gpu::DispatchPlan& like, uint64_t texels) {
    return gpu::PlanCoalescedSpan(like, texels);
  };
  return c;
}

absl::StatusOr<std::unique_ptr<GpuEngine>> CreateGpuEngine(
    GpuEngineOptions options) {
  if (!options.kernel_source) options.kernel_source = DxbcKernelSource();
  if (!options.planner) options.planner = DxbcPlanner();
  if (!options.coalescer.key && !options.coalescer.span) {
    options.coalescer = DxbcCoalescer();
  }
  return GpuEngine::Create(std::move(options));
}

}  // namespace dmls::d3d12
