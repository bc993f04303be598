#include "engine/kernels/kernels.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "engine/kernels/activation_emit.h"
#include "engine/kernels/elementwise_kernel.h"
#include "engine/kernels/mvn_kernel.h"
#include "engine/ops/schema.h"

namespace dmls::gpu {
namespace {

// The element-wise operators and their data types come from the operator
// schema (engine/ops/schema.h): the last support tier of an operator is the
// union of all its tiers (feature levels are strict supersets).
const ops::OperatorSchema* ElementwiseSchema(OperatorType op) {
  const ops::OperatorSchema* s = ops::FindOperator(static_cast<uint32_t>(op));
  if (s == nullptr || (s->kind != ops::OpKind::kActivation &&
                       s->kind != ops::OpKind::kUnaryScaleBias)) {
    return nullptr;
  }
  return s;
}

}  // namespace

std::vector<DataType> ElementwiseTypes(OperatorType op) {
  std::vector<DataType> types;
  const ops::OperatorSchema* s = ElementwiseSchema(op);
  if (s == nullptr) return types;
  const ops::DataTypeMask mask = s->tiers.back().types;
  for (uint32_t t = 0; t < kDataTypeCount; ++t) {
    if (mask & ops::Bit(static_cast<DataType>(t))) types.push_back(static_cast<DataType>(t));
  }
  return types;
}

bool TakesScaleBias(OperatorType op) {
  const ops::OperatorSchema* s = ElementwiseSchema(op);
  return s != nullptr && s->kind == ops::OpKind::kUnaryScaleBias;
}

absl::StatusOr<KernelInfo> BuildKernel(const KernelKey& key) {
  // Exactly the listed keys: fields a stage does not use (a variant, MVN
  // flags on an element-wise key, ...) must be at their defaults, so that
  // one kernel never gets two keys (found by tests/fuzz/fuzz_kernel).
  static const absl::flat_hash_set<KernelKey, KernelKeyHash>* const listed = [] {
    auto* set = new absl::flat_hash_set<KernelKey, KernelKeyHash>();
    for (const KernelKey& k : AllKernelKeys()) set->insert(k);
    return set;
  }();
  if (!listed->contains(key)) {
    return absl::InvalidArgumentError(absl::StrCat("no kernel for ", key.DebugString()));
  }
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
    case KernelStage::kMvnRow:
    case KernelStage::kMvnCoop:
    case KernelStage::kMvnClear:
    case KernelStage::kMvnCombine:
    case KernelStage::kMvnNormalise:
      return BuildMvnKernel(key);
  }
  return absl::InvalidArgumentError("unknown kernel stage");
}

std::vector<KernelKey> AllKernelKeys() {
  std::vector<KernelKey> keys;
  for (const ops::OperatorSchema& schema : ops::AllOperators()) {
    const OperatorType op = schema.type;
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
