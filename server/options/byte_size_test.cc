#include "server/options/byte_size.h"

#include <string>

#include "absl/flags/marshalling.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

TEST(ByteSizeTest, ReadsBytesAndBinarySuffixes) {
  EXPECT_EQ(*ParseByteSize("0"), 0u);
  EXPECT_EQ(*ParseByteSize("1073741824"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseByteSize("64K"), uint64_t{64} << 10);
  EXPECT_EQ(*ParseByteSize("64M"), uint64_t{64} << 20);
  EXPECT_EQ(*ParseByteSize("8G"), uint64_t{8} << 30);
  EXPECT_EQ(*ParseByteSize("2T"), uint64_t{2} << 40);
  EXPECT_EQ(*ParseByteSize("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "G", "-1", "+5", " 5", "1.5G", "64MB", "64m", "half",
                          "18446744073709551616", "16777216T"}) {
    absl::StatusOr<uint64_t> size = ParseByteSize(bad);
    EXPECT_FALSE(size.ok()) << bad;
    EXPECT_THAT(std::string(size.status().message()), ::testing::HasSubstr("such as 8G")) << bad;
  }
}

TEST(ByteSizeTest, FormatsWhatItReadsBack) {
  EXPECT_EQ(FormatByteSize(0), "0");
  EXPECT_EQ(FormatByteSize(1000), "1000");
  EXPECT_EQ(FormatByteSize(uint64_t{8} << 30), "8G");
  EXPECT_EQ(FormatByteSize(uint64_t{3} << 20), "3M");
  EXPECT_EQ(FormatByteSize((uint64_t{1} << 20) + 1024), "1025K");
  for (uint64_t bytes : {uint64_t{0}, uint64_t{4097}, uint64_t{256} << 20, UINT64_MAX}) {
    EXPECT_EQ(*ParseByteSize(FormatByteSize(bytes)), bytes);
  }
}

// What the server's byte-count flags (options/flags.cc) go through:
// every byte-count flag takes a suffix (--resident_bytes_per_principal=64M
// was refused while --gpu_memory_cap_bytes took 8G).
TEST(ByteSizeTest, IsAnAbslFlagType) {
  ByteSize size;
  std::string error;
  ASSERT_TRUE(absl::ParseFlag("64M", &size, &error)) << error;
  EXPECT_EQ(size.bytes, uint64_t{64} << 20);
  EXPECT_FALSE(absl::ParseFlag("64 MiB", &size, &error));
  EXPECT_THAT(error, ::testing::HasSubstr("such as 8G"));
  EXPECT_EQ(absl::UnparseFlag(ByteSize{uint64_t{16} << 30}), "16G");
}

}  // namespace
}  // namespace dmls::server
