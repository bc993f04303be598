#include "bench/bench_options.h"

#include "gtest/gtest.h"

namespace dmls::bench {
namespace {

TEST(BenchParseSize, Suffixes) {
  uint64_t n = 0;
  EXPECT_TRUE(ParseSize("4096", &n));
  EXPECT_EQ(n, 4096u);
  EXPECT_TRUE(ParseSize("4K", &n));
  EXPECT_EQ(n, 4096u);
  EXPECT_TRUE(ParseSize("64k", &n));
  EXPECT_EQ(n, 64u << 10);
  EXPECT_TRUE(ParseSize("16m", &n));
  EXPECT_EQ(n, 16u << 20);
  EXPECT_TRUE(ParseSize("1G", &n));
  EXPECT_EQ(n, 1u << 30);
}

TEST(BenchParseSize, RejectsZeroAndText) {
  uint64_t n = 7;
  EXPECT_FALSE(ParseSize("0", &n));
  EXPECT_FALSE(ParseSize("", &n));
  EXPECT_FALSE(ParseSize("K", &n));
  EXPECT_FALSE(ParseSize("1.5M", &n));
  EXPECT_FALSE(ParseSize("-4", &n));
  EXPECT_FALSE(ParseSize("4T", &n));
  EXPECT_EQ(n, 7u);
}

TEST(BenchFormatSize, LargestExactSuffix) {
  EXPECT_EQ(FormatSize(1000), "1000");
  EXPECT_EQ(FormatSize(1024), "1K");
  EXPECT_EQ(FormatSize(1536), "1536");
  EXPECT_EQ(FormatSize(3u << 20), "3M");
  EXPECT_EQ(FormatSize(134217216), "134217216");  // 512 x 262143
  EXPECT_EQ(FormatSize(134216704), "131071K");
  EXPECT_EQ(FormatSize(2ull << 30), "2G");
}

// The flags' defaults are the options' defaults written as text
// (bench_flags.cc): they must read back as the same values.
TEST(BenchOptions, DefaultListsRoundTrip) {
  const BenchOptions defaults;
  EXPECT_EQ(FormatSizeList(defaults.sizes), "1M,16M,128M");
  absl::StatusOr<std::vector<uint64_t>> sizes = ParseSizeList(FormatSizeList(defaults.sizes));
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(*sizes, defaults.sizes);
  uint64_t elements = 0;
  ASSERT_TRUE(ParseSize(FormatSize(defaults.engine_elements), &elements));
  EXPECT_EQ(elements, defaults.engine_elements);
  absl::StatusOr<DataType> type = ParseDataType(DataTypeFlagValue(defaults.data_type));
  ASSERT_TRUE(type.ok());
  EXPECT_EQ(*type, defaults.data_type);
}

TEST(BenchParseSizeList, SkipsEmptyItemsAndNamesTheBadOne) {
  absl::StatusOr<std::vector<uint64_t>> sizes = ParseSizeList("4K,,1000,");
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(*sizes, (std::vector<uint64_t>{4096, 1000}));
  sizes = ParseSizeList("");
  ASSERT_TRUE(sizes.ok());
  EXPECT_TRUE(sizes->empty());
  sizes = ParseSizeList("4K,abc");
  ASSERT_FALSE(sizes.ok());
  EXPECT_EQ(sizes.status().message(), "bad size 'abc'");
}

TEST(BenchParseMaxBatchList, PositiveIntegersWithoutGaps) {
  absl::StatusOr<std::vector<uint32_t>> v = ParseMaxBatchList("256,1");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<uint32_t>{256, 1}));
  EXPECT_FALSE(ParseMaxBatchList("256,,1").ok());
  EXPECT_FALSE(ParseMaxBatchList("").ok());
  EXPECT_FALSE(ParseMaxBatchList("0").ok());
  EXPECT_FALSE(ParseMaxBatchList("1K").ok());
}

TEST(BenchParseDataType, TwoNames) {
  EXPECT_EQ(*ParseDataType("float16"), DataType::kFloat16);
  EXPECT_EQ(*ParseDataType("float32"), DataType::kFloat32);
  absl::StatusOr<DataType> bad = ParseDataType("FLOAT32");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--data_type: float32 or float16");
}

}  // namespace
}  // namespace dmls::bench
