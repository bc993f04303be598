#include "engine/dxbc/kernels.h"

#include "absl/strings/str_cat.h"
#include "engine/dxbc/activation_emit.h"
#include "engine/dxbc/elementwise_kernel.h"
#include "engine/dxbc/mvn_kernel.h"

namespace dmls::gpu {
namespace {

constexpr DataType kFloats[] = {DataType::kFloat32, DataType::kFloat16};
constexpr DataType kAllInts[] = {DataType::kInt32, DataType::kInt16, DataType::kInt8,
                                 DataType::kUint32, DataType::kUint16, DataType::kUint8};
constexpr DataType kSignedInts[] = {DataType::kInt32, DataType::kInt16, DataType::kInt8};

// The element-wise operators this engine runs.
constexpr OperatorType kElementwiseOps[] = {
    OperatorType::kElementWiseThreshold,   OperatorType::kElementWiseClip,
    OperatorType::kActivationIdentity,     OperatorType::kActivationRelu,
    OperatorType::kActivationLeakyRelu,    OperatorType::kActivationLinear,
    OperatorType::kActivationElu,          OperatorType::kActivationCelu,
    OperatorType::kActivationScaledElu,    OperatorType::kActivationHardSigmoid,
    OperatorType::kActivationSigmoid,      OperatorType::kActivationTanh,
    OperatorType::kActivationScaledTanh,   OperatorType::kActivationSoftplus,
    OperatorType::kActivationParametricSoftplus, OperatorType::kActivationSoftsign,
    OperatorType::kActivationThresholdedRelu,    OperatorType::kActivationShrink,
    OperatorType::kActivationGelu,
};

}  // namespace

std::vector<DataType> ElementwiseTypes(OperatorType op) {
  std::vector<DataType> types;
  bool known = false;
  for (OperatorType o : kElementwiseOps) known |= o == op;
  if (!known) return types;
  types.assign(std::begin(kFloats), std::end(kFloats));
  switch (op) {
    case OperatorType::kElementWiseThreshold:
    case OperatorType::kActivationShrink:
      types.insert(types.end(), std::begin(kAllInts), std::end(kAllInts));
      break;
    case OperatorType::kElementWiseClip:  // + 64-bit ints from FL 5_0
      types.insert(types.end(), std::begin(kAllInts), std::end(kAllInts));
      types.push_back(DataType::kInt64);
      types.push_back(DataType::kUint64);
      break;
    case OperatorType::kActivationRelu:
      types.insert(types.end(), std::begin(kSignedInts), std::end(kSignedInts));
      break;
    default:
      break;
  }
  return types;
}

bool TakesScaleBias(OperatorType op) {
  return op == OperatorType::kElementWiseThreshold || op == OperatorType::kElementWiseClip;
}

absl::StatusOr<KernelInfo> Finish(const ShaderBuilder& b, uint32_t threads_per_group) {
  absl::Status s = b.Validate();
  if (!s.ok()) return s;
  return KernelInfo{b.FinishContainer(), threads_per_group};
}

absl::StatusOr<KernelInfo> BuildKernel(const KernelKey& key) {
  switch (key.stage) {
    case KernelStage::kElementwise: {
      bool type_ok = false;
      for (DataType t : ElementwiseTypes(key.op)) type_ok |= t == key.data_type;
      if (!type_ok || (key.scale_bias && !TakesScaleBias(key.op)) ||
          (key.scale_bias && ElementBits(key.data_type) == 64)) {
        return absl::InvalidArgumentError(
            absl::StrCat("no element-wise kernel for ", key.DebugString()));
      }
      return BuildElementwiseKernel(key);
    }
    case KernelStage::kMvnPartial:
    case KernelStage::kMvnApply:
      return BuildMvnKernel(key);
  }
  return absl::InvalidArgumentError("unknown kernel stage");
}

std::vector<KernelKey> AllKernelKeys() {
  std::vector<KernelKey> keys;
  for (OperatorType op : kElementwiseOps) {
    for (DataType t : ElementwiseTypes(op)) {
      for (bool sb : {false, true}) {
        if (sb && (!TakesScaleBias(op) || ElementBits(t) == 64)) continue;
        KernelKey k;
        k.stage = KernelStage::kElementwise;
        k.op = op;
        k.data_type = t;
        k.scale_bias = sb;
        k.layout = LayoutClass::kContiguous;
        for (uint8_t v : {kVariantVec4, kVariantWord}) {
          if (v == kVariantWord && ElementBits(t) == 64) continue;  // tail is strided
          k.variant = v;
          keys.push_back(k);
        }
        k.layout = LayoutClass::kStrided;
        for (uint8_t r = 1; r <= kMaxRank; ++r) {
          k.variant = r;
          keys.push_back(k);
        }
      }
    }
  }
  AppendMvnKernelKeys(keys);
  return keys;
}

}  // namespace dmls::gpu
