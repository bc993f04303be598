// Generator of the element-wise kernels (THRESHOLD, CLIP and the
// activations) for every data type, in a vectorised contiguous form and a
// general strided form (see ElementwiseArgs in kernel_abi.h for the
// binding and constant-block contract). Pure function; thread-safe.
#ifndef DMLSERVE_ENGINE_KERNELS_ELEMENTWISE_KERNEL_H_
#define DMLSERVE_ENGINE_KERNELS_ELEMENTWISE_KERNEL_H_

#include "absl/status/statusor.h"
#include "engine/kernels/kernel_info.h"
#include "engine/kernels/kernel_key.h"

namespace dmls::gpu {

absl::StatusOr<KernelInfo> BuildElementwiseKernel(const KernelKey& key);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_ELEMENTWISE_KERNEL_H_
