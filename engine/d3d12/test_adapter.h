// TestAdapterKind: which adapter the GPU tests run on. The software adapter
// (lavapipe, what CI has), or the hardware GPU when the environment says
// DMLS_KERNELS_TEST_ADAPTER=gpu (the GPU machine's runs). Header-only, for
// tests; thread-safe (reads the environment).
#ifndef DMLSERVE_ENGINE_D3D12_TEST_ADAPTER_H_
#define DMLSERVE_ENGINE_D3D12_TEST_ADAPTER_H_

#include <cstdlib>
#include <string>

#include "engine/d3d12/device.h"

namespace dmls::d3d12 {

inline DeviceOptions::Kind TestAdapterKind() {
  const char* adapter = std::getenv("DMLS_KERNELS_TEST_ADAPTER");
  return adapter != nullptr && std::string(adapter) == "gpu" ? DeviceOptions::Kind::kGpu
                                                             : DeviceOptions::Kind::kSoftware;
}

}  // namespace dmls::d3d12

#endif  // DMLSERVE_ENGINE_D3D12_TEST_ADAPTER_H_
