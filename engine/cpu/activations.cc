#include "engine/cpu/activations.h"

#include <cmath>

#include "engine/core/types.h"
#include "engine/cpu/tensor_access.h"

namespace dmls::cpu {
namespace {

// ln(1 + exp(y)) without overflow: max(y,0) + log1p(exp(-|y|)). Unlike
// MaxNum, a NaN y propagates here (the oracle uses np.maximum).
double SoftplusCore(double y) {
  if (std::isnan(y)) return y;
  return (y > 0 ? y : 0.0) + std::log1p(std::exp(-std::fabs(y)));
}

double Identity(double x, const ActivationArgs&) { return x; }
double Relu(double x, const ActivationArgs&) { return MaxNum(0.0, x); }
double LeakyRelu(double x, const ActivationArgs& a) {
  return x >= 0 ? x : a.p0 * x;
}
double Linear(double x, const ActivationArgs& a) { return a.p0 * x + a.p1; }
double Elu(double x, const ActivationArgs& a) {
  return x >= 0 ? x : a.p0 * std::expm1(x);
}
double Celu(double x, const ActivationArgs& a) {
  // Alpha·expm1(x/Alpha) has the sign of x whatever Alpha's (or is NaN for
  // an Alpha of 0 or NaN), so for x > 0 and for a NaN x the second term is
  // MinNum's +0: skipping expm1 there gives the same bits at half the cost
  // on mixed-sign data (CeluSkipsExpm1WithTheSameBits).
  if (!(x <= 0)) return MaxNum(0.0, x);
  return MaxNum(0.0, x) + MinNum(0.0, a.p0 * std::expm1(x / a.p0));
}
double ScaledElu(double x, const ActivationArgs& a) {
  // p0 = Alpha, p1 = Gamma.
  return x > 0 ? a.p1 * x : a.p1 * (a.p0 * std::expm1(x));
}
double HardSigmoid(double x, const ActivationArgs& a) {
  return MaxNum(0.0, MinNum(a.p0 * x + a.p1, 1.0));
}
double Sigmoid(double x, const ActivationArgs&) {
  const double z = std::exp(-std::fabs(x));
  return x >= 0 ? 1.0 / (1.0 + z) : z / (1.0 + z);
}
double Tanh(double x, const ActivationArgs&) { return std::tanh(x); }
double ScaledTanh(double x, const ActivationArgs& a) {
  return a.p0 * std::tanh(a.p1 * x);
}
double Softplus(double x, const ActivationArgs& a) {
  return SoftplusCore(a.p0 * x) / a.p0;
}
double ParametricSoftplus(double x, const ActivationArgs& a) {
  return a.p0 * SoftplusCore(a.p1 * x);
}
double Softsign(double x, const ActivationArgs&) {
  if (std::isinf(x)) return x > 0 ? 1.0 : -1.0;
  return x / (1.0 + std::fabs(x));
}
double ThresholdedRelu(double x, const ActivationArgs& a) {
  return x > a.p0 ? x : 0.0;
}
double Shrink(double x, const ActivationArgs& a) {
  // p0 = Bias, p1 = Threshold.
  if (x > a.p1) return x - a.p0;
  if (x < -a.p1) return x + a.p0;
  return 0.0;
}
double Gelu(double x, const ActivationArgs&) {
  // 0.5 x (1 + erf(x/sqrt2)) written with erfc, which keeps the accuracy of
  // the small left tail; -inf gives the limit 0 instead of -inf * 0.
  if (std::isinf(x) && x < 0) return 0.0;
  return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}

template <ActivationFn F>
void OverFloat32(const char* input, char* output, uint64_t count,
                 const ActivationArgs& args) {
  for (uint64_t i = 0; i < count; ++i) {
    Store<float>(output, i, static_cast<float>(F(Load<float>(input, i), args)));
  }
}

struct ActivationEntry {
  OperatorType type;
  ActivationFn fn;
  ActivationFloat32Fn float32;
};

template <ActivationFn F>
constexpr ActivationEntry Entry(OperatorType type) {
  return {type, F, OverFloat32<F>};
}

constexpr ActivationEntry kActivations[] = {
    Entry<Elu>(OperatorType::kActivationElu),
    Entry<HardSigmoid>(OperatorType::kActivationHardSigmoid),
    Entry<Identity>(OperatorType::kActivationIdentity),
    Entry<LeakyRelu>(OperatorType::kActivationLeakyRelu),
    Entry<Linear>(OperatorType::kActivationLinear),
    Entry<ParametricSoftplus>(OperatorType::kActivationParametricSoftplus),
    Entry<Relu>(OperatorType::kActivationRelu),
    Entry<ScaledElu>(OperatorType::kActivationScaledElu),
    Entry<ScaledTanh>(OperatorType::kActivationScaledTanh),
    Entry<Sigmoid>(OperatorType::kActivationSigmoid),
    Entry<Softplus>(OperatorType::kActivationSoftplus),
    Entry<Softsign>(OperatorType::kActivationSoftsign),
    Entry<Tanh>(OperatorType::kActivationTanh),
    Entry<ThresholdedRelu>(OperatorType::kActivationThresholdedRelu),
    Entry<Shrink>(OperatorType::kActivationShrink),
    Entry<Celu>(OperatorType::kActivationCelu),
    Entry<Gelu>(OperatorType::kActivationGelu),
};

const ActivationEntry* FindEntry(uint32_t raw_type) {
  for (const auto& entry : kActivations) {
    if (static_cast<uint32_t>(entry.type) == raw_type) return &entry;
  }
  return nullptr;
}

}  // namespace

double MaxNum(double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == 0 && b == 0) return a + b;  // +0 unless both are -0
  return a > b ? a : b;
}

double MinNum(double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == 0 && b == 0) return -((-a) + (-b));  // -0 unless both are +0
  return a < b ? a : b;
}

ActivationFn FindActivation(uint32_t raw_type) {
  const ActivationEntry* entry = FindEntry(raw_type);
  return entry == nullptr ? nullptr : entry->fn;
}

ActivationFloat32Fn FindActivationFloat32(uint32_t raw_type) {
  const ActivationEntry* entry = FindEntry(raw_type);
  return entry == nullptr ? nullptr : entry->float32;
}

}  // namespace dmls::cpu
