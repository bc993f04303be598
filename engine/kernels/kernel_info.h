// KernelInfo: a finished kernel (its checksummed DXBC container and group
// size), and Finish, which validates a ShaderBuilder and wraps its
// container. Every kernel builder returns one (kernels.h dispatches on the
// key to elementwise_kernel.h and mvn_kernel.h). Plain data; thread-safe.
#ifndef DMLSERVE_ENGINE_KERNELS_KERNEL_INFO_H_
#define DMLSERVE_ENGINE_KERNELS_KERNEL_INFO_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/dxbc/shader_builder.h"

namespace dmls::gpu {

struct KernelInfo {
  std::vector<uint8_t> dxbc;       // checksummed DXBC container
  uint32_t threads_per_group = 0;  // x; y = z = 1
};

// Validates the builder (ShaderBuilder::Validate) and wraps its container.
absl::StatusOr<KernelInfo> Finish(const ShaderBuilder& b, uint32_t threads_per_group);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_KERNEL_INFO_H_
