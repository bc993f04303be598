#include "engine/ops/schema.h"

#include <string>

namespace dmls::ops {
namespace {

using FL = FeatureLevel;
using OT = OperatorType;
using TC = ToleranceClass;

constexpr DataTypeMask F = kFloatTypes;

// Support tables of OPERATORS.md §3.
constexpr SupportTier kTiersActivation[] = {
    {FL::k1_0, 4, 4, F}, {FL::k2_0, 4, 5, F}, {FL::k3_0, 1, 8, F}};
constexpr SupportTier kTiersThreshold[] = {{FL::k1_0, 4, 4, F},
                                           {FL::k2_1, 4, 4, F | kInt32Types},
                                           {FL::k3_0, 1, 8, F | kInt32Types}};
constexpr SupportTier kTiersClip[] = {
    {FL::k1_0, 4, 4, F},
    {FL::k2_1, 4, 4, F | kInt32Types},
    {FL::k3_0, 1, 8, F | kInt32Types},
    {FL::k5_0, 1, 8, F | kInt32Types | kInt64Types}};
constexpr SupportTier kTiersRelu[] = {{FL::k1_0, 4, 4, F},
                                      {FL::k2_0, 4, 5, F},
                                      {FL::k3_0, 1, 8, F},
                                      {FL::k5_1, 1, 8, F | kSignedIntTypes}};
constexpr SupportTier kTiersShrink[] = {{FL::k2_0, 4, 5, F},
                                        {FL::k3_0, 1, 8, F},
                                        {FL::k5_1, 1, 8, F | kInt32Types}};
constexpr SupportTier kTiersCelu[] = {{FL::k3_0, 1, 8, F}};
constexpr SupportTier kTiersGelu[] = {{FL::k5_1, 1, 8, F}};
constexpr SupportTier kTiersMvn[] = {{FL::k1_0, 4, 4, F}};
constexpr SupportTier kTiersMvn1[] = {{FL::k2_1, 4, 4, F},
                                      {FL::k3_1, 1, 8, F}};

constexpr std::optional<FeatureLevel> kNever = std::nullopt;

#define ACT(TYPE, NAME, FIELD, INTRO, TIERS, P0, P1, INPLACE, TOL) \
  OperatorSchema {                                                \
    OT::TYPE, NAME, FIELD, OpKind::kActivation, FL::INTRO, TIERS, \
        {P0, P1}, INPLACE, FL::INTRO, TC::TOL                     \
  }

const OperatorSchema kOperators[] = {
    {OT::kElementWiseClip, "ELEMENT_WISE_CLIP", "clip", OpKind::kUnaryScaleBias,
     FL::k1_0, kTiersClip, {"min", "max"}, true, kNever, TC::kExact},
    {OT::kElementWiseThreshold, "ELEMENT_WISE_THRESHOLD", "threshold",
     OpKind::kUnaryScaleBias, FL::k1_0, kTiersThreshold, {"min", ""}, true,
     kNever, TC::kExact},
    ACT(kActivationElu, "ACTIVATION_ELU", "elu", k1_0, kTiersActivation,
        "alpha", "", true, kTranscendental),
    ACT(kActivationHardSigmoid, "ACTIVATION_HARD_SIGMOID", "hard_sigmoid",
        k1_0, kTiersActivation, "alpha", "beta", true, kArith),
    ACT(kActivationIdentity, "ACTIVATION_IDENTITY", "identity", k1_0,
        kTiersActivation, "", "", true, kExact),
    ACT(kActivationLeakyRelu, "ACTIVATION_LEAKY_RELU", "leaky_relu", k1_0,
        kTiersActivation, "alpha", "", true, kArith),
    ACT(kActivationLinear, "ACTIVATION_LINEAR", "linear", k1_0,
        kTiersActivation, "alpha", "beta", true, kArith),
    ACT(kActivationParametricSoftplus, "ACTIVATION_PARAMETRIC_SOFTPLUS",
        "parametric_softplus", k1_0, kTiersActivation, "alpha", "beta", true,
        kTranscendental),
    ACT(kActivationRelu, "ACTIVATION_RELU", "relu", k1_0, kTiersRelu, "", "",
        true, kExact),
    ACT(kActivationScaledElu, "ACTIVATION_SCALED_ELU", "scaled_elu", k1_0,
        kTiersActivation, "alpha", "gamma", true, kTranscendental),
    ACT(kActivationScaledTanh, "ACTIVATION_SCALED_TANH", "scaled_tanh", k1_0,
        kTiersActivation, "alpha", "beta", true, kTranscendental),
    ACT(kActivationSigmoid, "ACTIVATION_SIGMOID", "sigmoid", k1_0,
        kTiersActivation, "", "", true, kTranscendental),
    ACT(kActivationSoftplus, "ACTIVATION_SOFTPLUS", "softplus", k1_0,
        kTiersActivation, "steepness", "", true, kTranscendental),
    ACT(kActivationSoftsign, "ACTIVATION_SOFTSIGN", "softsign", k1_0,
        kTiersActivation, "", "", true, kArith),
    ACT(kActivationTanh, "ACTIVATION_TANH", "tanh", k1_0, kTiersActivation, "",
        "", true, kTranscendental),
    ACT(kActivationThresholdedRelu, "ACTIVATION_THRESHOLDED_RELU",
        "thresholded_relu", k1_0, kTiersActivation, "alpha", "", true, kExact),
    {OT::kMeanVarianceNormalization, "MEAN_VARIANCE_NORMALIZATION", "mvn",
     OpKind::kMvn, FL::k1_0, kTiersMvn, {}, false, kNever, TC::kNormalization},
    ACT(kActivationShrink, "ACTIVATION_SHRINK", "shrink", k2_0, kTiersShrink,
        "bias", "threshold", true, kArith),
    {OT::kMeanVarianceNormalization1, "MEAN_VARIANCE_NORMALIZATION1", "mvn1",
     OpKind::kMvn1, FL::k2_1, kTiersMvn1, {}, false, kNever,
     TC::kNormalization},
    ACT(kActivationCelu, "ACTIVATION_CELU", "celu", k3_0, kTiersCelu, "alpha",
        "", true, kTranscendental),
    // GELU: in-place undocumented, so rejected [P] (OPERATORS.md §10).
    ACT(kActivationGelu, "ACTIVATION_GELU", "gelu", k5_1, kTiersGelu, "", "",
        false, kTranscendental),
};

#undef ACT

struct OtherName {
  OperatorType type;
  std::string_view name;
};
constexpr OtherName kOtherNames[] = {
    {OT::kActivationHardmax, "ACTIVATION_HARDMAX"},
    {OT::kActivationLogSoftmax, "ACTIVATION_LOG_SOFTMAX"},
    {OT::kActivationParameterizedRelu, "ACTIVATION_PARAMETERIZED_RELU"},
    {OT::kActivationSoftmax, "ACTIVATION_SOFTMAX"},
    {OT::kActivationSoftmax1, "ACTIVATION_SOFTMAX1"},
    {OT::kActivationSwish, "ACTIVATION_SWISH"},
    {OT::kActivationHardSwish, "ACTIVATION_HARD_SWISH"},
    {OT::kElementWiseClip1, "ELEMENT_WISE_CLIP1"},
    {OT::kMeanVarianceNormalization2, "MEAN_VARIANCE_NORMALIZATION2"},
};

}  // namespace

std::string_view ToleranceClassName(ToleranceClass c) {
  switch (c) {
    case TC::kExact:
      return "EXACT";
    case TC::kArith:
      return "ARITH";
    case TC::kTranscendental:
      return "TRANSCENDENTAL";
    case TC::kNormalization:
      return "NORMALIZATION";
  }
  return "?";
}

absl::Span<const OperatorSchema> AllOperators() { return kOperators; }

const OperatorSchema* FindOperator(uint32_t raw_type) {
  for (const auto& s : kOperators) {
    if (static_cast<uint32_t>(s.type) == raw_type) return &s;
  }
  return nullptr;
}

const OperatorSchema* FindOperatorByField(std::string_view field) {
  for (const auto& s : kOperators) {
    if (s.field == field) return &s;
  }
  return nullptr;
}

const OperatorSchema* FindOperatorByName(std::string_view name) {
  for (const auto& s : kOperators) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const SupportTier* TierFor(const OperatorSchema& schema, FeatureLevel fl) {
  const SupportTier* best = nullptr;
  for (const auto& tier : schema.tiers) {
    if (static_cast<uint32_t>(tier.from) <= static_cast<uint32_t>(fl)) {
      best = &tier;
    }
  }
  return best;
}

std::string OperatorTypeName(uint32_t raw_type) {
  if (const OperatorSchema* s = FindOperator(raw_type)) {
    return std::string(s->name);
  }
  for (const auto& o : kOtherNames) {
    if (static_cast<uint32_t>(o.type) == raw_type) return std::string(o.name);
  }
  return "OPERATOR_" + std::to_string(raw_type);
}

}  // namespace dmls::ops
