// The production wiring of GpuEngine: kernels from engine/dxbc's generator
// (BuildKernel) and plans from its planner (PlanExecution). The server and
// the benchmark create the engine through here; tests of the runtime alone
// inject their own kernels and plans into GpuEngine::Create.
#ifndef DMLSERVE_ENGINE_D3D12_DXBC_ENGINE_H_
#define DMLSERVE_ENGINE_D3D12_DXBC_ENGINE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/d3d12/gpu_engine.h"
#include "engine/plan/planner.h"

namespace dmls::d3d12 {

// engine/dxbc's kernel source and planner, as GpuEngineOptions wants them.
PipelineCache::DxbcSource DxbcKernelSource();
Planner DxbcPlanner();
// The same with planner options (the adapter's cache size, limits).
Planner DxbcPlanner(const gpu::PlannerOptions& options);

// GpuEngine::Create with `options.kernel_source` / `options.planner` filled
// in from engine/dxbc where they are empty. Fails (UNAVAILABLE, NOT_FOUND)
// with a readable message when no adapter can be created.
absl::StatusOr<std::unique_ptr<GpuEngine>> CreateGpuEngine(
    GpuEngineOptions options);

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_DXBC_ENGINE_H_
