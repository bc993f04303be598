#include "bench/accuracy/sweep.h"

#include <cfloat>
#include <cmath>

#include "gtest/gtest.h"

namespace dmls::accuracy {
namespace {

TEST(Float32SweepTest, CoversEveryBinadeBothSignsAndSpecials) {
  const std::vector<float> v = Float32Sweep(4);
  EXPECT_EQ(v.size(), 254u * 2 * 4 + 6);
  int pos_max = 0, neg_min_normal = 0, inf = 0, zero = 0;
  for (float x : v) {
    if (x == FLT_MAX) ++pos_max;
    if (x == -FLT_MIN) ++neg_min_normal;
    if (std::isinf(x)) ++inf;
    if (x == 0) ++zero;
    EXPECT_FALSE(std::isnan(x));
  }
  EXPECT_EQ(pos_max, 1);
  EXPECT_EQ(neg_min_normal, 1);
  EXPECT_EQ(inf, 2);
  EXPECT_EQ(zero, 2);
}

TEST(Float16SweepTest, EveryFiniteHalf) { EXPECT_EQ(Float16Sweep().size(), 63488u); }

TEST(MeasureErrorTest, UlpsOfTheReference) {
  // One float32 ulp at 1.0 is 2^-23.
  EXPECT_DOUBLE_EQ(MeasureError(1.0 + 0x1p-23, 1.0, false).ulp, 1.0);
  EXPECT_DOUBLE_EQ(MeasureError(1.0 + 0x1p-23, 1.0, false).rel, 0x1p-23);
  EXPECT_DOUBLE_EQ(MeasureError(1.0 + 0x1p-10, 1.0, true).ulp, 1.0);
  // Half denormals: the ulp is 2^-24 whatever the magnitude.
  EXPECT_DOUBLE_EQ(MeasureError(3 * 0x1p-24, 2 * 0x1p-24, true).ulp, 1.0);
}

TEST(ErrorStatsTest, CountsOverBudgetAndSpecials) {
  ErrorStats s(false);
  s.Add(1.0f, 1.0, 1.0 + 0x1p-23, 4, 4e-6);        // 1 ulp
  s.Add(2.0f, 1.0, 1.0 + 100 * 0x1p-23, 4, 4e-6);  // 100 ulp, 1.2e-5 rel
  s.Add(3.0f, 1e-40, 0.0, 4, 4e-6);                // denormal ref flushed: fine
  s.Add(4.0f, 1e-40, 1e-30, 4, 4e-6);              // beyond the denormals
  s.Add(4.5f, FLT_MIN, 0.0, 4, 4e-6);              // FLT_MIN flushed: fine
  s.Add(4.7f, 2 * FLT_MIN, 0.0, 4, 4e-6);          // not within 4 ulp: counted
  s.Add(5.0f, INFINITY, 3e38, 4, 4e-6);            // infinity missed
  s.Add(6.0f, NAN, NAN, 4, 4e-6);
  EXPECT_EQ(s.compared(), 3u);
  EXPECT_EQ(s.over_budget(), 2u);
  EXPECT_EQ(s.special_mismatches(), 2u);
  EXPECT_EQ(s.first_special_x(), 4.0f);
  EXPECT_NEAR(s.worst_ulp(), 0x1p23, 1e-3);  // 2*FLT_MIN read as 0
  EXPECT_EQ(s.worst_x(), 4.7f);
}

TEST(ErrorStatsTest, RelativeBudgetAloneSuffices) {
  ErrorStats s(false);
  s.Add(1.0f, 1.0, 1.0 + 20 * 0x1p-23, 4, 4e-6);  // 20 ulp but 2.4e-6 rel
  EXPECT_EQ(s.over_budget(), 0u);
}

}  // namespace
}  // namespace dmls::accuracy
