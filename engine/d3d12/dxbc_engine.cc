#include "engine/d3d12/dxbc_engine.h"

#include <utility>

#include "engine/dxbc/kernels.h"
#include "engine/dxbc/planner.h"

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

gpu::PlannerOptions PlannerOptionsFor(const AdapterInfo& adapter, gpu::PlannerOptions options) {
  if (options.mvn_coop_max_chunks == 0 && adapter.kind == "gpu") {
    options.mvn_coop_max_chunks = adapter.discrete ? kCoopChunksDiscrete : kCoopChunksIntegrated;
  }
  return options;
}

absl::StatusOr<std::unique_ptr<GpuEngine>> CreateGpuEngine(
    GpuEngineOptions options) {
  if (!options.kernel_source) options.kernel_source = DxbcKernelSource();
  if (!options.planner) {
    // The planner defaults of the adapter the device will pick.
    gpu::PlannerOptions planner;
    absl::StatusOr<std::vector<AdapterInfo>> adapters = Device::ListAdapters();
    if (adapters.ok()) {
      absl::StatusOr<int> index = options.device.adapter_index.has_value()
                                      ? absl::StatusOr<int>(*options.device.adapter_index)
                                      : ChooseAdapter(*adapters, options.device);
      if (index.ok() && *index >= 0 && static_cast<size_t>(*index) < adapters->size()) {
        planner = PlannerOptionsFor((*adapters)[*index], planner);
      }
    }
    options.planner = DxbcPlanner(planner);
  }
  return GpuEngine::Create(std::move(options));
}

}  // namespace dmls::d3d12
