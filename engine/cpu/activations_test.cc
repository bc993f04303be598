#include "engine/cpu/activations.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/core/types.h"
#include "engine/ops/schema.h"
#include "gtest/gtest.h"

namespace dmls::cpu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Eval(OperatorType type, double x, double p0 = 0, double p1 = 0) {
  ActivationFn fn = FindActivation(static_cast<uint32_t>(type));
  EXPECT_NE(fn, nullptr);
  return fn(x, ActivationArgs{p0, p1});
}

TEST(Activations, EveryActivationOfTheSchemaHasAFunction) {
  int count = 0;
  for (const auto& schema : ops::AllOperators()) {
    if (schema.kind != ops::OpKind::kActivation) continue;
    EXPECT_NE(FindActivation(static_cast<uint32_t>(schema.type)), nullptr)
        << schema.name;
    ++count;
  }
  EXPECT_EQ(count, 17);
  EXPECT_EQ(
      FindActivation(static_cast<uint32_t>(OperatorType::kActivationSoftmax)),
      nullptr);
  EXPECT_EQ(
      FindActivation(static_cast<uint32_t>(OperatorType::kElementWiseClip)),
      nullptr);
}

TEST(Activations, MaxNumMinNumFollowD3D) {
  EXPECT_EQ(MaxNum(kNaN, 2.0), 2.0);
  EXPECT_EQ(MaxNum(2.0, kNaN), 2.0);
  EXPECT_TRUE(std::isnan(MaxNum(kNaN, kNaN)));
  EXPECT_EQ(MinNum(kNaN, -1.0), -1.0);
  EXPECT_FALSE(std::signbit(MaxNum(-0.0, 0.0)));
  EXPECT_FALSE(std::signbit(MaxNum(0.0, -0.0)));
  EXPECT_TRUE(std::signbit(MaxNum(-0.0, -0.0)));
  EXPECT_TRUE(std::signbit(MinNum(-0.0, 0.0)));
  EXPECT_TRUE(std::signbit(MinNum(0.0, -0.0)));
  EXPECT_FALSE(std::signbit(MinNum(0.0, 0.0)));
}

TEST(Activations, HandValues) {
  using OT = OperatorType;
  EXPECT_EQ(Eval(OT::kActivationIdentity, -3.5), -3.5);
  EXPECT_EQ(Eval(OT::kActivationRelu, -3.5), 0.0);
  EXPECT_EQ(Eval(OT::kActivationRelu, 3.5), 3.5);
  EXPECT_EQ(Eval(OT::kActivationLeakyRelu, -2.0, 0.5), -1.0);
  EXPECT_EQ(Eval(OT::kActivationLeakyRelu, 2.0, 0.5), 2.0);
  EXPECT_EQ(Eval(OT::kActivationLinear, 2.0, 3.0, -1.0), 5.0);
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationElu, -1.0, 2.0),
                   2.0 * (std::exp(-1.0) - 1));
  EXPECT_EQ(Eval(OT::kActivationElu, 0.0, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationCelu, -1.0, 0.5),
                   0.5 * (std::exp(-2.0) - 1));
  EXPECT_EQ(Eval(OT::kActivationCelu, 3.0, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationScaledElu, -1.0, 2.0, 3.0),
                   3.0 * 2.0 * (std::exp(-1.0) - 1));
  EXPECT_EQ(Eval(OT::kActivationScaledElu, 2.0, 2.0, 3.0), 6.0);
  EXPECT_EQ(Eval(OT::kActivationHardSigmoid, 0.0, 0.2, 0.5), 0.5);
  EXPECT_EQ(Eval(OT::kActivationHardSigmoid, 10.0, 0.2, 0.5), 1.0);
  EXPECT_EQ(Eval(OT::kActivationHardSigmoid, -10.0, 0.2, 0.5), 0.0);
  EXPECT_EQ(Eval(OT::kActivationSigmoid, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationSigmoid, 2.0), 1 / (1 + std::exp(-2.0)));
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationSigmoid, -2.0), 1 / (1 + std::exp(2.0)));
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationTanh, 0.5), std::tanh(0.5));
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationScaledTanh, 1.0, 2.0, 0.5),
                   2.0 * std::tanh(0.5));
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationSoftplus, 1.0, 2.0),
                   std::log(1 + std::exp(2.0)) / 2.0);
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationParametricSoftplus, 1.0, 3.0, 2.0),
                   3.0 * std::log(1 + std::exp(2.0)));
  EXPECT_EQ(Eval(OT::kActivationSoftsign, 3.0), 0.75);
  EXPECT_EQ(Eval(OT::kActivationSoftsign, -1.0), -0.5);
  EXPECT_EQ(Eval(OT::kActivationThresholdedRelu, 1.0, 1.0), 0.0);  // strict >
  EXPECT_EQ(Eval(OT::kActivationThresholdedRelu, 1.5, 1.0), 1.5);
  EXPECT_EQ(Eval(OT::kActivationShrink, 2.0, 0.5, 1.0), 1.5);
  EXPECT_EQ(Eval(OT::kActivationShrink, -2.0, 0.5, 1.0), -1.5);
  EXPECT_EQ(Eval(OT::kActivationShrink, 1.0, 0.5, 1.0), 0.0);
  EXPECT_EQ(Eval(OT::kActivationShrink, -1.0, 0.5, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(Eval(OT::kActivationGelu, 1.0),
                   0.5 * (1 + std::erf(1.0 / std::sqrt(2.0))));
  EXPECT_EQ(Eval(OT::kActivationGelu, 0.0), 0.0);
}

// OPERATORS.md §7.3: the max/min of the formulas ignore one NaN operand;
// everything else propagates NaN; failing comparisons give 0.
TEST(Activations, NanSemantics) {
  using OT = OperatorType;
  EXPECT_EQ(Eval(OT::kActivationRelu, kNaN), 0.0);
  EXPECT_EQ(Eval(OT::kActivationCelu, kNaN, 1.0), 0.0);
  EXPECT_EQ(Eval(OT::kActivationHardSigmoid, kNaN, 0.2, 0.5), 1.0);
  EXPECT_EQ(Eval(OT::kActivationThresholdedRelu, kNaN, 1.0), 0.0);
  EXPECT_EQ(Eval(OT::kActivationShrink, kNaN, 0.5, 1.0), 0.0);
  for (OT t :
       {OT::kActivationElu, OT::kActivationLeakyRelu, OT::kActivationSigmoid,
        OT::kActivationTanh, OT::kActivationSoftplus, OT::kActivationSoftsign,
        OT::kActivationGelu, OT::kActivationIdentity, OT::kActivationLinear,
        OT::kActivationScaledElu}) {
    EXPECT_TRUE(std::isnan(Eval(t, kNaN, 1.0, 1.0))) << static_cast<int>(t);
  }
}

// OPERATORS.md §7.4: limits at infinity, no spurious overflow.
TEST(Activations, InfinitiesAndOverflow) {
  using OT = OperatorType;
  EXPECT_EQ(Eval(OT::kActivationSigmoid, -kInf), 0.0);
  EXPECT_EQ(Eval(OT::kActivationSigmoid, kInf), 1.0);
  EXPECT_EQ(Eval(OT::kActivationTanh, -kInf), -1.0);
  EXPECT_EQ(Eval(OT::kActivationSoftsign, kInf), 1.0);
  EXPECT_EQ(Eval(OT::kActivationSoftsign, -kInf), -1.0);
  EXPECT_EQ(Eval(OT::kActivationGelu, -kInf), 0.0);
  EXPECT_EQ(Eval(OT::kActivationGelu, kInf), kInf);
  EXPECT_EQ(Eval(OT::kActivationSoftplus, 1000.0, 1.0), 1000.0);
  EXPECT_EQ(Eval(OT::kActivationSoftplus, -kInf, 1.0), 0.0);
  EXPECT_EQ(Eval(OT::kActivationCelu, 1e30, 0.5), 1e30);
  EXPECT_EQ(Eval(OT::kActivationCelu, -1e30, 0.5), -0.5);
  EXPECT_EQ(Eval(OT::kActivationElu, -kInf, 2.0), -2.0);
  EXPECT_EQ(Eval(OT::kActivationRelu, kInf), kInf);
  // IEEE-undefined parameter products stay NaN: LINEAR 0 * inf.
  EXPECT_TRUE(std::isnan(Eval(OT::kActivationLinear, kInf, 0.0, 1.0)));
}

// Celu returns early where x > 0 or x is NaN; over signed zeros,
// denormals, infinities, NaN and Alphas of both signs (0 and NaN too) it
// must give the bits of the whole formula.
TEST(Activations, CeluSkipsExpm1WithTheSameBits) {
  const double denorm = std::numeric_limits<float>::denorm_min();
  const double xs[] = {0.0,  -0.0,  denorm, -denorm, 1e-30, -1e-30, 0.5,  -0.5, 3.0,
                       -3.0, 80.0,  -80.0,  1e30,    -1e30, kInf,   -kInf, kNaN, -kNaN};
  const double alphas[] = {1.0,  -1.0, 0.5,    -0.5, denorm, -denorm, 3e38,
                           -3e38, 0.0, -0.0,   kNaN, kInf,   -kInf};
  for (double alpha : alphas) {
    for (double x : xs) {
      const double whole = MaxNum(0.0, x) + MinNum(0.0, alpha * std::expm1(x / alpha));
      const double got = Eval(OperatorType::kActivationCelu, x, alpha);
      if (std::isnan(whole)) {
        EXPECT_TRUE(std::isnan(got)) << "x " << x << " alpha " << alpha;
      } else {
        EXPECT_EQ(got, whole) << "x " << x << " alpha " << alpha;
        EXPECT_EQ(std::signbit(got), std::signbit(whole)) << "x " << x << " alpha " << alpha;
      }
    }
  }
}

// The FLOAT32 span form is the scalar function inlined: the same bits for
// every activation (a NaN for a NaN), on special values and random ones, in
// place too.
TEST(Activations, Float32SpanGivesTheScalarBits) {
  std::vector<float> xs = {0.0f,  -0.0f, 1e-40f, -1e-40f, 1e-30f, -1e-30f, 0.5f,
                           -0.5f, 3.0f,  -3.0f,  80.0f,   -80.0f, 1e30f,   -1e30f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> spread(-20.0f, 20.0f);
  for (int i = 0; i < 200; ++i) xs.push_back(spread(rng));
  const ActivationArgs arg_sets[] = {{1.0, 0.0}, {0.5, -2.0}, {-1.5, 3.0}, {1e-40, 1e30}};
  int checked = 0;
  for (const auto& schema : ops::AllOperators()) {
    if (schema.kind != ops::OpKind::kActivation) continue;
    const auto raw = static_cast<uint32_t>(schema.type);
    const ActivationFn fn = FindActivation(raw);
    const ActivationFloat32Fn span = FindActivationFloat32(raw);
    ASSERT_NE(span, nullptr) << schema.name;
    for (const ActivationArgs& args : arg_sets) {
      std::vector<float> out(xs.size()), in_place = xs;
      span(reinterpret_cast<const char*>(xs.data()), reinterpret_cast<char*>(out.data()),
           xs.size(), args);
      span(reinterpret_cast<const char*>(in_place.data()),
           reinterpret_cast<char*>(in_place.data()), in_place.size(), args);
      for (size_t i = 0; i < xs.size(); ++i) {
        const float want = static_cast<float>(fn(xs[i], args));
        if (std::isnan(want)) {  // any NaN matches a NaN (OPERATORS.md §8)
          EXPECT_TRUE(std::isnan(out[i]) && std::isnan(in_place[i])) << schema.name;
          continue;
        }
        uint32_t a, b, c;
        std::memcpy(&a, &want, 4);
        std::memcpy(&b, &out[i], 4);
        std::memcpy(&c, &in_place[i], 4);
        EXPECT_EQ(b, a) << schema.name << " x " << xs[i] << " p0 " << args.p0;
        EXPECT_EQ(c, a) << schema.name << " in place, x " << xs[i];
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 17);
  EXPECT_EQ(FindActivationFloat32(static_cast<uint32_t>(OperatorType::kElementWiseClip)),
            nullptr);
}

}  // namespace
}  // namespace dmls::cpu
