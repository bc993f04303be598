// The production wiring of GpuEngine: kernels from engine/kernels
// (BuildKernel), plans from engine/plan's planner (PlanExecution) and its
// coalescing (coalesce.h). The server and
// the benchmark create the engine through here; tests of the runtime alone
// inject their own kernels and plans into GpuEngine::Create.
#ifndef DMLSERVE_ENGINE_D3D12_DXBC_ENGINE_H_
#define DMLSERVE_ENGINE_D3D12_DXBC_ENGINE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/d3d12/gpu_engine.h"
#include "engine/plan/planner.h"

namespace dmls::d3d12 {

// engine/kernels' kernel source and engine/plan's planner and coalescing,
// as GpuEngineOptions wants them.
PipelineCache::DxbcSource DxbcKernelSource();
Planner DxbcPlanner();
// The same with planner options (the adapter's cache size, limits).
Planner DxbcPlanner(const gpu::PlannerOptions& options);
// Spans are planned with the default PlannerOptions.
Coalescer DxbcCoalescer();

// GpuEngine::Create with `options.kernel_source`, `options.planner` and
// `options.coalescer` filled in from the above where they are empty. Fails (UNAVAILABLE, NOT_FOUND)
// with a readable message when no adapter can be created.
absl::StatusOr<std::unique_ptr<GpuEngine>> CreateGpuEngine(
    GpuEngineOptions options);

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_DXBC_ENGINE_H_
