// The operands of MathEmitter::MadIsFused tell a fused mad from a rounded
// product plus a sum (built with -ffp-contract=off, so `k * k + c` below
// rounds twice and std::fma once).
#include <cmath>

#include "engine/kernels/activation_emit.h"
#include "engine/kernels/testing/ftz_float.h"
#include "gtest/gtest.h"

namespace dmls::gpu {
namespace {

using testing::FromBits;

TEST(MadProbeTest, FusedAndUnfusedMadDiffer) {
  const float k = FromBits(kMadProbeK), c = FromBits(kMadProbeC);
  EXPECT_EQ(k, 1.0f + 0x1p-12f);
  EXPECT_EQ(c, -(1.0f + 0x1p-11f));
  EXPECT_EQ(std::fma(k, k, c), 0x1p-24f);  // one rounding
  volatile float product = k * k;          // rounded on its own
  EXPECT_EQ(product + c, 0.0f);
}

}  // namespace
}  // namespace dmls::gpu
