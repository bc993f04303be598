#include "engine/kernels/kernel_info.h"

namespace dmls::gpu {

absl::StatusOr<KernelInfo> Finish(const ShaderBuilder& b, uint32_t threads_per_group) {
  absl::Status s = b.Validate();
  if (!s.ok()) return s;
  return KernelInfo{b.FinishContainer(), threads_per_group};
}

}  // namespace dmls::gpu
