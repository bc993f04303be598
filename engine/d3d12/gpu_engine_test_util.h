// Helpers shared by the GpuEngine plumbing tests (gpu_engine_test.cc,
// multi_gpu_test.cc): engines on the software adapter whose plans have no
// dispatches, so that an in-place request's output is its uploaded input.
// Test-only; header-only; thread-compatible.
#ifndef DMLSERVE_ENGINE_D3D12_GPU_ENGINE_TEST_UTIL_H_
#define DMLSERVE_ENGINE_D3D12_GPU_ENGINE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/tensor_desc.h"
#include "engine/d3d12/gpu_engine.h"

namespace dmls::d3d12::testing {

// IDENTITY over `elements` FLOAT32 values.
inline OperatorDesc CopyOp(uint64_t elements) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kActivationIdentity);
  op.input = MakeTensorDesc(DataType::kFloat32, {1, 1, 1, elements});
  op.output = op.input;
  return op;
}

// `bytes` pseudo-random bytes, a different sequence per seed.
inline std::string Pattern(uint64_t bytes, uint32_t seed) {
  std::string s(bytes, '\0');
  for (uint64_t i = 0; i < bytes; ++i) {
    seed = seed * 1664525u + 1013904223u;
    s[i] = static_cast<char>(seed >> 24);
  }
  return s;
}

// A CopyOp request carrying Pattern(elements * 4, seed).
inline ExecuteRequest CopyRequest(uint64_t elements, bool in_place, uint32_t seed) {
  ExecuteRequest r;
  r.op = CopyOp(elements);
  r.in_place = in_place;
  r.input = Pattern(elements * 4, seed);
  return r;
}

// The software adapter, no kernels, empty plans.
inline GpuEngineOptions NoKernelOptions() {
  GpuEngineOptions o;
  o.device.kind = DeviceOptions::Kind::kSoftware;
  o.kernel_source = [](const gpu::KernelKey&) -> absl::StatusOr<std::vector<uint8_t>> {
    return absl::UnimplementedError("no kernels in this test");
  };
  o.planner = [](const OperatorDesc&, bool) -> absl::StatusOr<gpu::DispatchPlan> {
    return gpu::DispatchPlan();
  };
  return o;
}

}  // namespace dmls::d3d12::testing

#endif  // DMLSERVE_ENGINE_D3D12_GPU_ENGINE_TEST_UTIL_H_
