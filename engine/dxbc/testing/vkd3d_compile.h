// Test-only helper: compiles a DXBC blob to SPIR-V with libvkd3d-shader (no
// device needed), the same front end the D3D12 runtime uses, so tests can
// check that every emitted kernel is accepted. Thread-safe (vkd3d-shader
// compilation is reentrant).
#ifndef DMLSERVE_ENGINE_DXBC_TESTING_VKD3D_COMPILE_H_
#define DMLSERVE_ENGINE_DXBC_TESTING_VKD3D_COMPILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace dmls::gpu::testing {

// OK when vkd3d-shader compiles `dxbc` to SPIR-V; otherwise the vkd3d error
// code and messages. NOTE: vkd3d-shader may abort() on malformed shaders.
absl::Status CompileWithVkd3d(const std::vector<uint8_t>& dxbc);

}  // namespace dmls::gpu::testing

#endif  // DMLSERVE_ENGINE_DXBC_TESTING_VKD3D_COMPILE_H_
