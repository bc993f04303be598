// KernelKey: everything that changes the code of a generated kernel (not the
// values it reads from its constant block). Kernels are generated and cached
// per key. Plain value type; thread-compatible. Owned by engine/dxbc.
#ifndef DMLSERVE_ENGINE_KERNELS_KERNEL_KEY_H_
#define DMLSERVE_ENGINE_KERNELS_KERNEL_KEY_H_

#include <cstdint>
#include <string>

#include "engine/core/types.h"
#include "engine/kernels/kernel_abi.h"

namespace dmls::gpu {

enum class KernelStage : uint8_t {
  kElementwise = 0,  // THRESHOLD, CLIP, the activations
  kMvnPartial = 1,   // MVN/MVN1: per-chunk count/mean/M2 partials
  kMvnApply = 2,     // MVN/MVN1: combine partials, normalise, scale/bias, fused act
  kMvnRow = 3,       // MVN/MVN1: one workgroup per group (N <= kMvnChunk): statistics
                     // and normalisation in one dispatch, the group read once
  kMvnCoop = 4,      // MVN/MVN1: one workgroup per chunk; the chunks of a group
                     // exchange partials through scratch in one dispatch, each
                     // chunk read once (kernel_abi.h)
  kMvnClear = 5,     // MVN/MVN1: zeroes kMvnCoop's counters (one key)
  kMvnCombine = 6,   // MVN/MVN1: combines each group's partials once into its
                     // group statistic in scratch (one key per NormalizeVariance)
  kMvnNormalise = 7, // MVN/MVN1: kMvnApply reading its group's statistic from
                     // kMvnCombine instead of combining the partials itself
};

struct KernelKey {
  KernelStage stage = KernelStage::kElementwise;
  OperatorType op = OperatorType::kInvalid;  // elementwise op, or MVN/MVN1
  DataType data_type = DataType::kFloat32;
  LayoutClass layout = LayoutClass::kContiguous;
  bool scale_bias = false;          // THRESHOLD/CLIP ScaleBias present
  bool normalize_variance = true;   // MVN stages
  bool has_scale = false;           // MVN apply: Scale tensor present
  bool has_bias = false;            // MVN apply: Bias tensor present
  OperatorType fused = OperatorType::kInvalid;  // MVN fused activation
  uint8_t variant = 0;              // generator-specific specialisation

  bool operator==(const KernelKey& o) const;
  bool operator!=(const KernelKey& o) const { return !(*this == o); }
  // Every field in 64 bits (they are small enums and bools: injective).
  uint64_t Packed() const;
  uint64_t Hash() const;
  std::string DebugString() const;
};

struct KernelKeyHash {
  size_t operator()(const KernelKey& k) const { return k.Hash(); }
};

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_KERNELS_KERNEL_KEY_H_
