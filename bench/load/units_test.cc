#include "bench/load/units.h"

#include "gtest/gtest.h"

namespace dmls::load {
namespace {

TEST(ParseByteSize, Suffixes) {
  EXPECT_EQ(*ParseByteSize("1000"), 1000u);
  EXPECT_EQ(*ParseByteSize("12B"), 12u);
  EXPECT_EQ(*ParseByteSize("1KiB"), 1024u);
  EXPECT_EQ(*ParseByteSize("64k"), 64u * 1024);
  EXPECT_EQ(*ParseByteSize("4MiB"), 4u << 20);
  EXPECT_EQ(*ParseByteSize("64MB"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("1GiB"), 1u << 30);
}

TEST(ParseByteSize, Rejects) {
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("KiB").ok());
  EXPECT_FALSE(ParseByteSize("1.5KiB").ok());
  EXPECT_FALSE(ParseByteSize("-1").ok());
  EXPECT_FALSE(ParseByteSize("3TiB").ok());
  EXPECT_FALSE(ParseByteSize("99999999999999999999").ok());
  EXPECT_FALSE(ParseByteSize("17179869184GiB").ok());  // overflows 64 bits
}

TEST(FormatByteSize, ExactBinaryUnits) {
  EXPECT_EQ(FormatByteSize(0), "0B");
  EXPECT_EQ(FormatByteSize(1024), "1KiB");
  EXPECT_EQ(FormatByteSize(1536), "1536B");
  EXPECT_EQ(FormatByteSize(64u << 20), "64MiB");
}

TEST(FormatByteRate, DecimalUnits) {
  EXPECT_EQ(FormatByteRate(999), "999 B/s");
  EXPECT_EQ(FormatByteRate(1.5e9), "1.5 GB/s");
}

}  // namespace
}  // namespace dmls::load
