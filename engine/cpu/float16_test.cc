#include "engine/cpu/float16.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace dmls::cpu {
namespace {

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

TEST(Float16, ExhaustiveRoundTripThroughFloatAndDouble) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f = HalfBitsToFloat(bits);
    const double d = HalfBitsToDouble(bits);
    const bool is_nan = (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0;
    if (is_nan) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_TRUE(std::isnan(d)) << h;
      // NaN stays NaN, payload and sign kept.
      ASSERT_EQ(FloatToHalfBits(f), bits) << h;
      ASSERT_EQ(DoubleToHalfBits(d), bits) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), d) << h;
    ASSERT_EQ(FloatToHalfBits(f), bits) << h;
    ASSERT_EQ(DoubleToHalfBits(d), bits) << h;
    ASSERT_EQ(std::signbit(d), (bits & 0x8000) != 0) << h;
  }
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(HalfBitsToDouble(0x3c00), 1.0);
  EXPECT_EQ(HalfBitsToDouble(0xc000), -2.0);
  EXPECT_EQ(HalfBitsToDouble(0x7bff), 65504.0);
  EXPECT_EQ(HalfBitsToDouble(0x0001), std::ldexp(1.0, -24));  // subnormal
  EXPECT_EQ(HalfBitsToDouble(0x03ff), 1023 * std::ldexp(1.0, -24));
  EXPECT_EQ(HalfBitsToDouble(0x0400), std::ldexp(1.0, -14));
  EXPECT_TRUE(std::isinf(HalfBitsToDouble(0x7c00)));
  EXPECT_TRUE(std::isinf(HalfBitsToDouble(0xfc00)));
  EXPECT_EQ(DoubleToHalfBits(-0.0), 0x8000);
}

TEST(Float16, RoundsTiesToEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even 1.
  EXPECT_EQ(FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3*2^-11 is halfway between 0x3c01 and 0x3c02: even is 0x3c02.
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above the tie rounds up.
  EXPECT_EQ(DoubleToHalfBits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)),
            0x3c01);
  // Subnormal ties: 0.5 * 2^-24 -> 0 (even), 1.5 * 2^-24 -> 2 * 2^-24.
  EXPECT_EQ(DoubleToHalfBits(std::ldexp(0.5, -24)), 0x0000);
  EXPECT_EQ(DoubleToHalfBits(std::ldexp(1.5, -24)), 0x0002);
  EXPECT_EQ(DoubleToHalfBits(-std::ldexp(2.5, -24)), 0x8002);
  // Below half of the smallest subnormal: signed zero.
  EXPECT_EQ(DoubleToHalfBits(-std::ldexp(1.0, -26)), 0x8000);
  // Rounding carries from the largest subnormal into the smallest normal.
  EXPECT_EQ(DoubleToHalfBits(std::ldexp(1023.5, -24)), 0x0400);
}

TEST(Float16, OverflowGoesToInfinity) {
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(65519.0f), 0x7bff);  // below the midpoint
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);  // tie -> even (inf)
  EXPECT_EQ(FloatToHalfBits(-65520.0f), 0xfc00);
  EXPECT_EQ(FloatToHalfBits(1e10f), 0x7c00);
  EXPECT_EQ(DoubleToHalfBits(1e300), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(-std::numeric_limits<float>::infinity()), 0xfc00);
}

TEST(Float16, DoubleRoundsOnceNotTwice) {
  // d lies just above the half tie 1 + 2^-11, but rounds to exactly that
  // tie as a float; a double->float->half path would give 0x3c00.
  const double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(static_cast<double>(static_cast<float>(d)),
            1.0 + std::ldexp(1.0, -11));
  EXPECT_EQ(DoubleToHalfBits(d), 0x3c01);
}

TEST(Float16, NanFromFloatStaysNan) {
  EXPECT_EQ(FloatToHalfBits(FloatFromBits(0x7fc00000)) & 0x7c00, 0x7c00);
  EXPECT_NE(FloatToHalfBits(FloatFromBits(0x7fc00000)) & 0x3ff, 0);
  // A NaN whose payload lives only in low float bits must not become inf.
  const uint16_t h = FloatToHalfBits(FloatFromBits(0x7f800001));
  EXPECT_EQ(h & 0x7c00, 0x7c00);
  EXPECT_NE(h & 0x3ff, 0);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(std::nanf("")))));
  EXPECT_EQ(FloatToHalfBits(-std::nanf("")) & 0x8000, 0x8000);
}

// Property check of round-to-nearest-even against the neighbours of the
// result, over random doubles of every binary16 magnitude (normal,
// subnormal, underflowing) including exact ties.
TEST(Float16, RandomDoublesRoundToNearestEven) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-27, 15);
  for (int i = 0; i < 200000; ++i) {
    double d = std::ldexp(mantissa(rng), exponent(rng));
    if (i % 4 == 0) {
      // Make an exact tie: a half value plus half an ULP of its binade.
      const uint16_t h = DoubleToHalfBits(d) & 0x7bfe;
      const double lo = HalfBitsToDouble(h);
      const double hi = HalfBitsToDouble(static_cast<uint16_t>(h + 1));
      d = (lo + hi) / 2;  // exact in binary64
    }
    if (i % 2) d = -d;
    const uint16_t h = DoubleToHalfBits(d);
    ASSERT_EQ((h & 0x8000) != 0, std::signbit(d)) << d;
    const uint16_t mag = h & 0x7fff;
    const double a = std::fabs(d);
    if (a >= 65520.0) {
      ASSERT_EQ(mag, 0x7c00) << d;
      continue;
    }
    ASSERT_LT(mag, 0x7c00) << d;
    const double err = std::fabs(a - HalfBitsToDouble(mag));
    const double err_up =
        std::fabs(a - HalfBitsToDouble(static_cast<uint16_t>(mag + 1)));
    ASSERT_LE(err, err_up) << d;
    if (mag > 0) {
      const double err_down =
          std::fabs(a - HalfBitsToDouble(static_cast<uint16_t>(mag - 1)));
      ASSERT_LE(err, err_down) << d;
      if (err == err_down) {
        ASSERT_EQ(mag & 1, 0) << "tie not even: " << d;
      }
    }
    if (err == err_up) {
      ASSERT_EQ(mag & 1, 0) << "tie not even: " << d;
    }
  }
}

}  // namespace
}  // namespace dmls::cpu
