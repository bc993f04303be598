#include "engine/kernels/mvn_kernel.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/kernels/activation_emit.h"
#include "engine/kernels/mvn_emitter.h"
#include "engine/ops/schema.h"

namespace dmls::gpu {
namespace {

using mvn_emit::MvnEmitter;

static_assert(kMvnElementsPerThread % 8 == 0 && kMvnWideRowElementsPerThread % 8 == 0 &&
                  kMvnLongSpanElementsPerThread % 8 == 0,
              "FLOAT16 elements go in pairs, and in whole texels with kMvnVariantVec4");
static_assert(kMvnSmallRowThreads % 2 == 0 && kMvnThreads % 2 == 0 &&
                  kMvnMediumRowThreads % 2 == 0 && kMvnWideRowThreads % 2 == 0,
              "FLOAT16 texel kernels take half the threads (MvnEmitter::HalvesThreads)");

bool IsMvnType(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat16; }

}  // namespace

uint32_t MvnKernelThreads(const KernelKey& key) { return MvnEmitter::ThreadsOf(key); }

absl::StatusOr<KernelInfo> BuildMvnKernel(const KernelKey& key) {
  if (key.op != OperatorType::kMeanVarianceNormalization1 || !IsMvnType(key.data_type) ||
      key.layout != LayoutClass::kStrided ||
      (key.variant & ~(kMvnVariantRankMask | kMvnVariantSmallRow | kMvnVariantWideRow |
                       kMvnVariantVec4 | kMvnVariantVec4ScaleBias)) != 0 ||
      (key.variant & kMvnVariantRankMask) < 1 || (key.variant & kMvnVariantRankMask) > kMaxRank ||
      key.scale_bias ||
      (key.fused != OperatorType::kInvalid && !IsSupportedActivation(key.fused))) {
    return absl::InvalidArgumentError(absl::StrCat("no MVN kernel for ", key.DebugString()));
  }
  const uint8_t row_bits = key.variant & (kMvnVariantSmallRow | kMvnVariantWideRow);
  // kMvnPartial: kMvnVariantTexelSpan alone, or with kMvnVariantLongSpan;
  // kMvnNormalise: kMvnVariantTexelSpan.
  const bool span =
      (key.variant & kMvnVariantVec4) == 0 &&
      ((key.stage == KernelStage::kMvnPartial && (row_bits & kMvnVariantTexelSpan) != 0) ||
       (key.stage == KernelStage::kMvnNormalise && row_bits == kMvnVariantTexelSpan));
  if (row_bits != 0 && !span && key.stage != KernelStage::kMvnRow) {
    return absl::InvalidArgumentError(absl::StrCat("row sizes are kMvnRow only: ",
                                                   key.DebugString()));
  }
  const bool applies =
      key.stage == KernelStage::kMvnApply || key.stage == KernelStage::kMvnNormalise;
  if ((key.variant & kMvnVariantVec4) != 0 && key.stage != KernelStage::kMvnPartial &&
      !applies && key.stage != KernelStage::kMvnRow) {
    return absl::InvalidArgumentError(
        absl::StrCat("texel loads are kMvnPartial/Apply/Normalise/Row only: ",
                     key.DebugString()));
  }
  if ((key.variant & kMvnVariantVec4ScaleBias) != 0 &&
      ((key.variant & kMvnVariantVec4) == 0 || (!key.has_scale && !key.has_bias) ||
       (!applies && key.stage != KernelStage::kMvnRow))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Scale/Bias texels need texel loads, a Scale or Bias, kMvnApply/Normalise/Row: ",
        key.DebugString()));
  }
  if (key.stage == KernelStage::kMvnClear && key != MvnClearKey()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the MVN clear kernel has one key: ", key.DebugString()));
  }
  if (key.stage == KernelStage::kMvnCombine && key != MvnCombineKey(key.normalize_variance)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the MVN combine kernels have one key each: ", key.DebugString()));
  }
  ShaderBuilder b(MvnEmitter::ThreadsOf(key));
  MvnEmitter e(b, key);
  if (key.stage == KernelStage::kMvnClear) return e.Clear();
  if (key.stage == KernelStage::kMvnCoop) return e.Coop();
  if (key.stage == KernelStage::kMvnCombine) return e.Combine();
  if (key.stage == KernelStage::kMvnPartial) {
    if (key.has_scale || key.has_bias || key.fused != OperatorType::kInvalid) {
      return absl::InvalidArgumentError(
          absl::StrCat("MVN partial keys carry no apply options: ", key.DebugString()));
    }
    return e.Partial();
  }
  return key.stage == KernelStage::kMvnRow ? e.Row() : e.Apply();
}

KernelKey MvnClearKey() {
  KernelKey k;
  k.stage = KernelStage::kMvnClear;
  k.op = OperatorType::kMeanVarianceNormalization1;
  k.data_type = DataType::kFloat32;
  k.layout = LayoutClass::kStrided;
  k.variant = 1;
  return k;
}

KernelKey MvnCombineKey(bool normalize_variance) {
  KernelKey k = MvnClearKey();
  k.stage = KernelStage::kMvnCombine;
  k.normalize_variance = normalize_variance;
  return k;
}

void AppendMvnKernelKeys(std::vector<KernelKey>& keys) {
  keys.push_back(MvnClearKey());
  for (bool nv : {false, true}) keys.push_back(MvnCombineKey(nv));
  // No fused activation, then every activation the schema lets MVN fuse.
  std::vector<OperatorType> fused = {OperatorType::kInvalid};
  for (const ops::OperatorSchema& s : ops::AllOperators()) {
    if (s.fusable_from.has_value()) fused.push_back(s.type);
  }
  for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
    for (uint8_t r = 1; r <= kMaxRank; ++r) {
      KernelKey k;
      k.op = OperatorType::kMeanVarianceNormalization1;
      k.data_type = t;
      k.layout = LayoutClass::kStrided;
      k.variant = r;
      k.stage = KernelStage::kMvnPartial;
      for (uint8_t bits : {uint8_t{0}, kMvnVariantVec4, kMvnVariantTexelSpan,
                           uint8_t{kMvnVariantTexelSpan | kMvnVariantLongSpan}}) {
        k.variant = static_cast<uint8_t>(r | bits);
        for (bool nv : {false, true}) {
          k.normalize_variance = nv;  // false: exact-mean statistics
          keys.push_back(k);
        }
      }
      const uint8_t row_bits[] = {0, kMvnVariantSmallRow, kMvnVariantWideRow,
                                  kMvnVariantMediumRow};
      // Apply, the four row kernels, coop; then apply and the row kernels
      // with texel loads (kMvnVariantVec4), with a Scale or Bias also with
      // their texel loads (kMvnVariantVec4ScaleBias).
      for (int stage = 0; stage < 11; ++stage) {
        const int s = stage < 6 ? stage : stage - 6;
        k.stage = s == 0   ? KernelStage::kMvnApply
                  : s == 5 ? KernelStage::kMvnCoop
                           : KernelStage::kMvnRow;
        k.variant = s == 0 || s == 5 ? r : static_cast<uint8_t>(r | row_bits[s - 1]);
        if (stage >= 6) k.variant |= kMvnVariantVec4;
        for (bool nv : {false, true}) {
          for (bool hs : {false, true}) {
            for (bool hb : {false, true}) {
              for (OperatorType f : fused) {
                k.normalize_variance = nv;
                k.has_scale = hs;
                k.has_bias = hb;
                k.fused = f;
                // kMvnApply's keys also as kMvnNormalise.
                const int copies = s == 0 ? 2 : 1;
                for (int c = 0; c < copies; ++c) {
                  KernelKey ck = k;
                  if (c == 1) ck.stage = KernelStage::kMvnNormalise;
                  keys.push_back(ck);
                  if (c == 1 && stage == 0) {
                    ck.variant |= kMvnVariantTexelSpan;  // and by texels of the tensor
                    keys.push_back(ck);
                    ck.variant = k.variant;
                  }
                  if (stage >= 6 && (hs || hb)) {
                    ck.variant |= kMvnVariantVec4ScaleBias;  // and with Scale/Bias texels
                    keys.push_back(ck);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace dmls::gpu
