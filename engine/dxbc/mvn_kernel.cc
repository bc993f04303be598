#include "engine/dxbc/mvn_kernel.h"

namespace dmls::gpu {

absl::StatusOr<KernelInfo> BuildMvnKernel(const KernelKey& key) {
  return absl::UnimplementedError("MVN kernels are not generated yet");
}

void AppendMvnKernelKeys(std::vector<KernelKey>& keys) {}

}  // namespace dmls::gpu
