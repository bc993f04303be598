// Generator of the MVN/MVN1 kernels: kMvnPartial computes per-chunk
// (count, mean, M2) partials of each reduction group into scratch;
// kMvnApply combines a group's partials with Chan's formula and normalises
// its chunk (Scale/Bias broadcast, fused activation); kMvnCombine combines
// them once per group into scratch, for kMvnNormalise (kMvnApply reading
// that statistic) to normalise each chunk; kMvnRow does both for
// a group of at most kMvnChunk elements in one workgroup, reading it once;
// kMvnCoop does both for larger groups in one dispatch, a statistics and a
// normalisation workgroup per chunk exchanging partials through scratch
// (after kMvnClear has zeroed the counters; kernel_abi.h). With
// kMvnVariantVec4, kMvnPartial, kMvnApply/kMvnNormalise and kMvnRow load and store the
// input and output in whole 16-byte texels, and with
// kMvnVariantVec4ScaleBias kMvnApply and kMvnRow load Scale/Bias so too
// (kMvnRow after the reduction, a texel at a time, four in the FLOAT16
// wide row; kernel_abi.h).
// With kMvnVariantTexelSpan kMvnPartial loads texels of the whole input,
// masked to the group (groups packed, any N).
// Statistics: mvn_stats_emit.h. Contract: MvnArgs in kernel_abi.h. Pure
// functions; thread-safe.
#ifndef DMLSERVE_ENGINE_KERNELS_MVN_KERNEL_H_
#define DMLSERVE_ENGINE_KERNELS_MVN_KERNEL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "engine/kernels/kernel_info.h"
#include "engine/kernels/kernel_key.h"

namespace dmls::gpu {

absl::StatusOr<KernelInfo> BuildMvnKernel(const KernelKey& key);
// The one key of kMvnClear.
KernelKey MvnClearKey();
// The key of kMvnCombine (the statistics' form depends on NormalizeVariance
// alone: exact means when it is FALSE).
KernelKey MvnCombineKey(bool normalize_variance);
// Threads of the workgroup of `key`'s kernel (for reports).
uint32_t MvnKernelThreads(const KernelKey& key);
// Appends every MVN key the planner can produce.
void AppendMvnKernelKeys(std::vector<KernelKey>& keys);

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_MVN_KERNEL_H_
