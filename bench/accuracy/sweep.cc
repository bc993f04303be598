#include "bench/accuracy/sweep.h"

#include <cfloat>
#include <cmath>
#include <cstring>

#include "engine/cpu/float16.h"

namespace dmls::accuracy {
namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

}  // namespace

Budget BudgetFor(TolClass c, bool half) {
  switch (c) {
    case TolClass::kExact:
      return {0, 0};
    case TolClass::kArith:
      return {half ? 1 : 2, 0};
    case TolClass::kTranscendental:
      return half ? Budget{2, 0} : Budget{4, 4e-6};
  }
  return {};
}

const char* TolClassName(TolClass c) {
  switch (c) {
    case TolClass::kExact: return "EXACT";
    case TolClass::kArith: return "ARITH";
    case TolClass::kTranscendental: return "TRANSC";
  }
  return "?";
}

std::vector<SweepCase> DefaultCases() {
  using T = OperatorType;
  using C = TolClass;
  const float kMax = FLT_MAX, kMin = FLT_MIN, kDenorm = 0x1p-149f;
  return {
      {"identity", T::kActivationIdentity, {}, {}, C::kExact},
      {"relu", T::kActivationRelu, {}, {}, C::kExact},
      {"leaky_relu(0.01)", T::kActivationLeakyRelu, 0.01f, {}, C::kArith},
      {"linear(1.5,0.25)", T::kActivationLinear, 1.5f, 0.25f, C::kArith},
      {"hard_sigmoid(0.2,0.5)", T::kActivationHardSigmoid, 0.2f, 0.5f, C::kArith},
      {"softsign", T::kActivationSoftsign, {}, {}, C::kArith},
      {"thresholded_relu(1)", T::kActivationThresholdedRelu, 1.0f, {}, C::kExact},
      {"shrink(0.5,0.5)", T::kActivationShrink, 0.5f, 0.5f, C::kArith},
      {"sigmoid", T::kActivationSigmoid, {}, {}, C::kTranscendental},
      {"tanh", T::kActivationTanh, {}, {}, C::kTranscendental},
      {"scaled_tanh(1.7,0.66)", T::kActivationScaledTanh, 1.7159f, 0.6666f, C::kTranscendental},
      {"scaled_tanh(1e30,FLT_MIN)", T::kActivationScaledTanh, 1e30f, kMin, C::kTranscendental},
      {"softplus(1)", T::kActivationSoftplus, 1.0f, {}, C::kTranscendental},
      {"softplus(-1.4e-45)", T::kActivationSoftplus, -kDenorm, {}, C::kTranscendental},
      {"softplus(FLT_MAX)", T::kActivationSoftplus, kMax, {}, C::kTranscendental},
      {"softplus(-FLT_MAX)", T::kActivationSoftplus, -kMax, {}, C::kTranscendental},
      {"softplus(FLT_MIN)", T::kActivationSoftplus, kMin, {}, C::kTranscendental},
      {"param_softplus(1,1)", T::kActivationParametricSoftplus, 1.0f, 1.0f, C::kTranscendental},
      {"param_softplus(FLT_MIN,1)", T::kActivationParametricSoftplus, kMin, 1.0f,
       C::kTranscendental},
      {"gelu", T::kActivationGelu, {}, {}, C::kTranscendental},
      {"elu(1)", T::kActivationElu, 1.0f, {}, C::kTranscendental},
      {"elu(FLT_MAX)", T::kActivationElu, kMax, {}, C::kTranscendental},
      {"elu(-FLT_MAX)", T::kActivationElu, -kMax, {}, C::kTranscendental},
      {"elu(1e-30)", T::kActivationElu, 1e-30f, {}, C::kTranscendental},
      {"scaled_elu(1.67,1.05)", T::kActivationScaledElu, 1.67326f, 1.0507f, C::kTranscendental},
      {"scaled_elu(FLT_MAX,1)", T::kActivationScaledElu, kMax, 1.0f, C::kTranscendental},
      {"scaled_elu(1,FLT_MAX)", T::kActivationScaledElu, 1.0f, kMax, C::kTranscendental},
      {"scaled_elu(FLT_MIN,1e30)", T::kActivationScaledElu, kMin, 1e30f, C::kTranscendental},
      {"celu(1)", T::kActivationCelu, 1.0f, {}, C::kTranscendental},
      {"celu(-1)", T::kActivationCelu, -1.0f, {}, C::kTranscendental},
      {"celu(FLT_MAX)", T::kActivationCelu, kMax, {}, C::kTranscendental},
      {"celu(-FLT_MAX)", T::kActivationCelu, -kMax, {}, C::kTranscendental},
      {"celu(1e30)", T::kActivationCelu, 1e30f, {}, C::kTranscendental},
      {"celu(1e-30)", T::kActivationCelu, 1e-30f, {}, C::kTranscendental},
      {"celu(FLT_MIN)", T::kActivationCelu, kMin, {}, C::kTranscendental},
      {"celu(-FLT_MIN)", T::kActivationCelu, -kMin, {}, C::kTranscendental},
      {"celu(1.4e-45)", T::kActivationCelu, kDenorm, {}, C::kTranscendental},
      {"celu(-1.4e-45)", T::kActivationCelu, -kDenorm, {}, C::kTranscendental},
  };
}

std::vector<float> Float32Sweep(uint32_t mantissas) {
  if (mantissas < 2) mantissas = 2;
  std::vector<float> v;
  v.reserve(size_t{254} * 2 * mantissas + 6);
  for (uint32_t e = 1; e <= 254; ++e) {
    for (uint32_t k = 0; k < mantissas; ++k) {
      // k = 0 -> 1.0, k = mantissas - 1 -> the largest mantissa.
      const uint64_t m = uint64_t{0x7fffff} * k / (mantissas - 1);
      const uint32_t bits = (e << 23) | static_cast<uint32_t>(m);
      v.push_back(FromBits(bits));
      v.push_back(FromBits(bits | 0x80000000u));
    }
  }
  for (uint32_t b : {0x0u, 0x1u, 0x7f800000u}) {
    v.push_back(FromBits(b));
    v.push_back(FromBits(b | 0x80000000u));
  }
  return v;
}

std::vector<uint16_t> Float16Sweep() {
  std::vector<uint16_t> v;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7c00) != 0x7c00) v.push_back(static_cast<uint16_t>(b));
  }
  return v;
}

ElementError MeasureError(double got, double ref, bool half_ulps) {
  ElementError e;
  const double diff = std::fabs(got - ref);
  if (ref != 0) e.rel = diff / std::fabs(ref);
  int exp2 = 0;
  std::frexp(ref, &exp2);  // |ref| in [2^(exp2-1), 2^exp2)
  const int min_exp = half_ulps ? -14 : -126;
  const int digits = half_ulps ? 10 : 23;
  const int e_ref = std::max(exp2 - 1, min_exp);
  e.ulp = diff / std::ldexp(1.0, e_ref - digits);
  return e;
}

void ErrorStats::Add(float x, double ref, double got, int ulp_budget, double rel_budget) {
  // The reference as the result type would hold it.
  const double typed = half_ ? cpu::RoundToHalf(ref) : static_cast<double>(static_cast<float>(ref));
  const double min_normal = half_ ? 0x1p-24 : static_cast<double>(FLT_MIN);
  auto special = [&](bool ok) {
    if (!ok && special_mismatches_++ == 0) first_special_x_ = x;
  };
  if (std::isnan(ref)) return special(std::isnan(got));
  if (std::isinf(typed)) return special(got == typed);
  if (!std::isfinite(got)) return special(false);
  if (std::fabs(typed) < min_normal) {
    // Zero, or a denormal the driver may flush (float32): a result beyond
    // that range counts unless it is within the ulp budget (FLT_MIN for a
    // reference just below it).
    return special(std::fabs(got) < min_normal || got == typed ||
                   MeasureError(got, ref, half_).ulp <= ulp_budget);
  }
  if (!half_ && got == 0 && std::fabs(typed) <= min_normal + ulp_budget * 0x1p-149) {
    // Within the ulp budget of the denormals: the device's own rounding
    // may land below FLT_MIN, and then the driver flushes (§7.5).
    return;
  }
  ++compared_;
  const ElementError e = MeasureError(got, ref, half_);
  if (e.rel > worst_rel_) worst_rel_ = e.rel;
  if (e.ulp > worst_ulp_) {
    worst_ulp_ = e.ulp;
    worst_x_ = x;
    worst_got_ = got;
    worst_ref_ = ref;
  }
  if (e.ulp > ulp_budget && e.rel > rel_budget) ++over_budget_;
}

}  // namespace dmls::accuracy
