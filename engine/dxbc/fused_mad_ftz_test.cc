// A CPU model of MathEmitter::FusedMad (activation_emit.cc: ExactMad,
// TwoSum and the rescaled path), operation for operation in float32, with
// and without denormal flushing (testing/ftz_float.h), against fmaf: the
// exact a*b + c rounded once (LINEAR, HARD_SIGMOID), or the same of the
// flushed operands (OPERATORS.md §7.5), within the 2-ulp ARITH budget.
// lavapipe keeps denormals; this shows what the H100 makes of the split
// (random/2631). Keep it in step with the emitter.
#include <cmath>
#include <cstdint>
#include <random>

#include "engine/dxbc/testing/ftz_float.h"
#include "gtest/gtest.h"

namespace dmls::gpu {
namespace {

using testing::Bits;
using testing::FromBits;
using testing::FtzFloat;

class FusedMadModel {
 public:
  // `tiny_scaling` false: the emitter before operands below 2^-40 were
  // scaled up.
  FusedMadModel(bool ftz, bool tiny_scaling) : f_(ftz), tiny_scaling_(tiny_scaling) {}

  void TwoSum(float& s, float& e_acc, float a) const {
    const float sum = f_.Add(s, a), bb = f_.Sub(sum, s);
    const float t = f_.Sub(s, f_.Sub(sum, bb));
    e_acc = f_.Add(e_acc, f_.Add(t, f_.Sub(a, bb)));
    s = sum;
  }

  float ExactMad(float a, float b, float c) const {
    const float p = f_.Mul(a, b);
    const float ah = FromBits(Bits(a) & 0xfffff000u), al = f_.Sub(a, ah);
    const float bh = FromBits(Bits(b) & 0xfffff000u), bl = f_.Sub(b, bh);
    float e = f_.Sub(f_.Mul(ah, bh), p);
    e = f_.Add(e, f_.Mul(ah, bl));
    e = f_.Add(e, f_.Mul(al, bh));
    e = f_.Add(e, f_.Mul(al, bl));
    float s = p;
    TwoSum(s, e, c);
    return f_.Add(s, e);
  }

  float FusedMad(float a, float b, float c) const {
    const float s = ExactMad(a, b, c), plain = f_.Mad(a, b, c);
    const bool ta = tiny_scaling_ && std::fabs(a) < 0x1p-40f;  // on the bits in the kernel
    const bool tb = tiny_scaling_ && std::fabs(b) < 0x1p-40f;
    const float ka = ta ? 0x1p88f : (tb ? 1.0f : 0.25f), ika = ta ? 0x1p-88f : (tb ? 1.0f : 4.0f);
    const float kb = tb ? 0x1p88f : 1.0f, ikb = tb ? 0x1p-88f : 1.0f;
    const float qa = f_.Mul(a, ka), qb = f_.Mul(b, kb), qc = f_.Mul(f_.Mul(c, ka), kb);
    float sc = ExactMad(qa, qb, qc);
    const float plain2 = f_.Mad(qa, qb, qc);
    if (!std::isfinite(plain2)) sc = plain2;
    sc = f_.Mul(f_.Mul(sc, ika), ikb);
    float alt = std::isfinite(c) ? sc : c;
    if (!std::isfinite(a) || !std::isfinite(b)) alt = plain;
    const float r = std::isfinite(s) && std::isfinite(plain) ? s : alt;
    if (std::fabs(sc) <= 0x1p-126f && std::fabs(r) <= 0x1p-126f) sc = r;
    return (ta || tb) && std::isfinite(sc) ? sc : r;
  }

 private:
  FtzFloat f_;
  bool tiny_scaling_;
};

int64_t OrderedBits(float f) {
  const int64_t i = static_cast<int32_t>(Bits(f));
  return i >= 0 ? i : -(i & 0x7fffffff);
}

// The §8 ARITH check of FLOAT32 (2 ulp; a denormal expectation accepts
// ±0 or a denormal), against fmaf of the operands or, under flushing, of
// the flushed operands.
::testing::AssertionResult WithinBudget(float r, float a, float b, float c, bool ftz) {
  const FtzFloat f(true);
  const float refs[2] = {std::fmaf(a, b, c), std::fmaf(f.Flush(a), f.Flush(b), f.Flush(c))};
  for (int i = 0; i < (ftz ? 2 : 1); ++i) {
    const float e = refs[i];
    if (std::isnan(e) || std::isnan(r)) {
      if (std::isnan(e) && std::isnan(r)) return ::testing::AssertionSuccess();
      continue;
    }
    if (r == e) return ::testing::AssertionSuccess();
    if (std::isinf(e) || std::isinf(r)) continue;
    if (std::fabs(e) < 0x1p-126f && std::fabs(r) < 0x1p-126f) return ::testing::AssertionSuccess();
    if (std::llabs(OrderedBits(r) - OrderedBits(e)) <= 2) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << r << " for " << a << " * " << b << " + " << c
                                       << ", expected " << refs[0] << " (ulp "
                                       << std::llabs(OrderedBits(r) - OrderedBits(refs[0])) << ")";
}

TEST(FusedMadFtzTest, Random2631) {
  // LINEAR, Alpha 88, Beta the smallest denormal, x = -1.6743118e-36.
  const float a = -1.6743118e-36f, b = 88.0f, c = 1.401298464324817e-45f;
  EXPECT_TRUE(WithinBudget(FusedMadModel(true, true).FusedMad(a, b, c), a, b, c, true));
  EXPECT_TRUE(WithinBudget(FusedMadModel(false, true).FusedMad(a, b, c), a, b, c, false));
  // Negative control: the unscaled split under flushing (5,379 ulp on the
  // H100).
  EXPECT_FALSE(WithinBudget(FusedMadModel(true, false).FusedMad(a, b, c), a, b, c, true));
}

TEST(FusedMadFtzTest, OperandsOfEveryMagnitude) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> ex(-149, 127), sign(0, 1);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  auto draw = [&](int lo, int hi) {
    const int e = std::uniform_int_distribution<int>(lo, hi)(rng);
    return (sign(rng) ? -1.0f : 1.0f) * std::ldexp(mant(rng), e);
  };
  for (int trial = 0; trial < 200000; ++trial) {
    // Mostly small products (the flushing cases), some of anything.
    const bool any = trial % 4 == 0;
    const float a = draw(any ? -149 : -140, any ? 127 : 0);
    const float b = draw(any ? -149 : -60, any ? 127 : 60);
    // c near a*b (cancellation) or of any size.
    const float c = trial % 3 == 0 ? -a * b * mant(rng) : draw(-149, any ? 127 : -20);
    for (bool ftz : {false, true}) {
      ASSERT_TRUE(WithinBudget(FusedMadModel(ftz, true).FusedMad(a, b, c), a, b, c, ftz))
          << "ftz=" << ftz << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace dmls::gpu
