#include "bench/upload.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace dmls::bench {
namespace {

TEST(BenchHalfOf, NormalValuesAndFlushToZero) {
  EXPECT_EQ(HalfOf(1.0f), 0x3c00);
  EXPECT_EQ(HalfOf(-2.0f), 0xc000);
  EXPECT_EQ(HalfOf(0.5f), 0x3800);
  EXPECT_EQ(HalfOf(1e-6f), 0x0000);
  EXPECT_EQ(HalfOf(-1e-6f), 0x8000);
}

// FillUniform writes what dmls_bench always wrote: u * 8 - 4 for the input,
// then 0.5 + u for Scale and 2u - 1 for Bias, u running on one sequence.
TEST(BenchFillUniform, TheBenchmarksValues) {
  const uint64_t n = 4096, count = 64;
  for (DataType type : {DataType::kFloat32, DataType::kFloat16}) {
    const size_t width = type == DataType::kFloat16 ? 2 : 4;
    std::vector<uint8_t> filled((n + 2 * count) * width), expected(filled.size());
    uint32_t seed = 1;
    FillUniform(filled.data(), 0, n, -4.0f, 4.0f, type, seed);
    FillUniform(filled.data() + n * width, 0, count, 0.5f, 1.5f, type, seed);
    FillUniform(filled.data() + n * width, count, count, -1.0f, 1.0f, type, seed);
    uint32_t s = 1;
    for (uint64_t i = 0; i < n; ++i) {
      PutElement(expected.data(), i, NextUniform(s) * 8.0f - 4.0f, type);
    }
    for (uint64_t i = 0; i < 2 * count; ++i) {
      const float u = NextUniform(s);
      PutElement(expected.data() + n * width, i, i < count ? 0.5f + u : 2.0f * u - 1.0f, type);
    }
    EXPECT_EQ(seed, s);
    EXPECT_EQ(std::memcmp(filled.data(), expected.data(), filled.size()), 0);
  }
}

}  // namespace
}  // namespace dmls::bench
