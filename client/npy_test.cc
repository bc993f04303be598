#include "client/npy.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace dmls::client {
namespace {

// The exact header NumPy 1.24 writes for np.save(np.arange(6, dtype='<f4')
// .reshape(2, 3)): v1.0, 118 header bytes, data starting at offset 128.
std::string NumpyHeader(const std::string& dict, bool v2 = false) {
  std::string header = dict;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(v2 ? 2 : 1);
  out.push_back(0);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  if (v2) out.append(2, '\0');
  return out + header;
}

std::string Floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out.append(reinterpret_cast<const char*>(&v), 4);
  return out;
}

TEST(NpyTest, SerializeMatchesNumpyBytes) {
  NpyArray a;
  a.descr = "<f4";
  a.shape = {2, 3};
  a.data = Floats({0, 1, 2, 3, 4, 5});
  absl::StatusOr<std::string> bytes = SerializeNpy(a);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  const std::string expected =
      NumpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") +
      a.data;
  EXPECT_EQ(*bytes, expected);
  EXPECT_EQ(bytes->size(), 128u + 24u);
  EXPECT_EQ(static_cast<uint8_t>((*bytes)[8]), 118u);
}

TEST(NpyTest, OneByteTypesUseNumpysPipeSpelling) {
  NpyArray a{"<i1", {3}, std::string("\xff\x02\xfd", 3)};
  absl::StatusOr<std::string> bytes = SerializeNpy(a);
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find("'descr': '|i1'"), std::string::npos);
  EXPECT_NE(bytes->find("'shape': (3,)"), std::string::npos);
  absl::StatusOr<NpyArray> back = ParseNpy(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->descr, "<i1");
  EXPECT_EQ(back->shape, std::vector<uint64_t>{3});
  EXPECT_EQ(back->data, a.data);
}

TEST(NpyTest, ParsesVersion2Float16) {
  const std::string file =
      NumpyHeader("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }",
                  /*v2=*/true) +
      std::string("\x00\x3e", 2);  // 1.5 in binary16
  absl::StatusOr<NpyArray> a = ParseNpy(file);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->descr, "<f2");
  EXPECT_EQ(a->shape, std::vector<uint64_t>{1});
  EXPECT_EQ(a->data, std::string("\x00\x3e", 2));
}

TEST(NpyTest, RoundTripsEveryTypeAndZeroDim) {
  for (const char* descr :
       {"<f4", "<f2", "<i1", "<u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8"}) {
    NpyArray a;
    a.descr = descr;
    a.shape = {2, 1, 2};
    const uint32_t size = NpyElementSize(descr);
    ASSERT_GT(size, 0u) << descr;
    for (uint32_t i = 0; i < 4 * size; ++i) a.data.push_back(static_cast<char>(i * 7));
    absl::StatusOr<NpyArray> back = ParseNpy(*SerializeNpy(a));
    ASSERT_TRUE(back.ok()) << descr << ": " << back.status();
    EXPECT_EQ(back->descr, a.descr);
    EXPECT_EQ(back->shape, a.shape);
    EXPECT_EQ(back->data, a.data);
  }
  NpyArray scalar{"<f4", {}, Floats({2.5f})};
  absl::StatusOr<std::string> bytes = SerializeNpy(scalar);
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find("'shape': ()"), std::string::npos);
  absl::StatusOr<NpyArray> back = ParseNpy(*bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->shape.empty());
  EXPECT_EQ(back->ElementCount(), 1u);
}

TEST(NpyTest, RejectsWhatItCannotRepresent) {
  EXPECT_FALSE(ParseNpy("not an npy file").ok());
  EXPECT_FALSE(ParseNpy(NumpyHeader(
                   "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") +
               Floats({1}))
                   .ok());
  EXPECT_FALSE(ParseNpy(NumpyHeader(
                   "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }") +
               Floats({1}))
                   .ok());
  EXPECT_FALSE(ParseNpy(NumpyHeader(
                   "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }") +
               Floats({1, 2}))
                   .ok());
  // Shape promises 3 floats, only 2 follow.
  EXPECT_FALSE(ParseNpy(NumpyHeader(
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }") +
               Floats({1, 2}))
                   .ok());
  EXPECT_FALSE(SerializeNpy(NpyArray{"<f4", {2}, Floats({1})}).ok());
  EXPECT_FALSE(SerializeNpy(NpyArray{"<f8", {1}, std::string(8, '\0')}).ok());
}

}  // namespace
}  // namespace dmls::client
