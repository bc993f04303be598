#include "client/tensor_util.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace dmls::client {
namespace {

using dmlserve::v1::DATA_TYPE_FLOAT16;
using dmlserve::v1::DATA_TYPE_FLOAT32;
using dmlserve::v1::DATA_TYPE_INT8;

std::string Floats(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()),
                     values.size() * 4);
}

std::vector<float> AsFloats(const std::string& bytes) {
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

TEST(TensorUtilTest, MinimumSizesFollowDmlCalcBufferTensorSize) {
  // The examples of OPERATORS.md §2.4.
  EXPECT_EQ(MinimumTensorBytes(DATA_TYPE_FLOAT32, {1, 1, 2, 3}, {}), 24u);
  EXPECT_EQ(MinimumTensorBytes(DATA_TYPE_FLOAT16, {1, 1, 1, 3}, {}), 8u);
  EXPECT_EQ(MinimumTensorBytes(DATA_TYPE_INT8, {5}, {}), 8u);
  EXPECT_EQ(MinimumTensorBytes(DATA_TYPE_FLOAT32, {2, 3}, {0, 1}), 12u);
  EXPECT_EQ(MinimumTensorBytes(DATA_TYPE_FLOAT32, {2, 3}, {4, 1}), 28u);
  EXPECT_EQ(MinimumTensorBytes(DATA_TYPE_FLOAT32, {1, 1, 2, 3}, {8, 8, 4, 1}),
            28u);
}

TEST(TensorUtilTest, PackedDescAndStrides) {
  EXPECT_EQ(PackedStrides({2, 3, 4}), (std::vector<uint64_t>{12, 4, 1}));
  dmlserve::v1::TensorDesc d = MakePackedTensorDesc(DATA_TYPE_FLOAT16, {3});
  EXPECT_EQ(d.data_type(), DATA_TYPE_FLOAT16);
  EXPECT_EQ(d.sizes_size(), 1);
  EXPECT_EQ(d.strides_size(), 0);
  EXPECT_EQ(d.total_tensor_size_in_bytes(), 8u);
  EXPECT_EQ(EffectiveStrides(d), std::vector<uint64_t>{1});
}

TEST(TensorUtilTest, PackAndGatherThroughPaddedStrides) {
  // {2,3} with a row pitch of 4: element (1,2) sits at offset 6.
  dmlserve::v1::TensorDesc d =
      MakeStridedTensorDesc(DATA_TYPE_FLOAT32, {2, 3}, {4, 1});
  ASSERT_EQ(d.total_tensor_size_in_bytes(), 28u);
  const std::string logical = Floats({1, 2, 3, 4, 5, 6});
  absl::StatusOr<std::string> buffer = PackLogical(d, logical);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_EQ(AsFloats(*buffer), (std::vector<float>{1, 2, 3, 0, 4, 5, 6}));
  absl::StatusOr<std::string> back = GatherLogical(d, *buffer);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, logical);
}

TEST(TensorUtilTest, GatherTransposedAndBroadcast) {
  // Column-major {2,3}: strides {1,2}.
  dmlserve::v1::TensorDesc t =
      MakeStridedTensorDesc(DATA_TYPE_FLOAT32, {2, 3}, {1, 2});
  absl::StatusOr<std::string> logical =
      GatherLogical(t, Floats({1, 4, 2, 5, 3, 6}));
  ASSERT_TRUE(logical.ok());
  EXPECT_EQ(AsFloats(*logical), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // Zero stride repeats the stored row.
  dmlserve::v1::TensorDesc b =
      MakeStridedTensorDesc(DATA_TYPE_FLOAT32, {2, 3}, {0, 1});
  EXPECT_EQ(b.total_tensor_size_in_bytes(), 12u);
  logical = GatherLogical(b, Floats({7, 8, 9}));
  ASSERT_TRUE(logical.ok());
  EXPECT_EQ(AsFloats(*logical), (std::vector<float>{7, 8, 9, 7, 8, 9}));
}

TEST(TensorUtilTest, RejectsMismatchedData) {
  dmlserve::v1::TensorDesc d = MakePackedTensorDesc(DATA_TYPE_FLOAT32, {2, 2});
  EXPECT_FALSE(PackLogical(d, Floats({1, 2, 3})).ok());
  EXPECT_FALSE(GatherLogical(d, Floats({1, 2, 3})).ok());
  d.set_total_tensor_size_in_bytes(8);
  EXPECT_FALSE(PackLogical(d, Floats({1, 2, 3, 4})).ok());
  dmlserve::v1::TensorDesc unknown = d;
  unknown.set_data_type(dmlserve::v1::DATA_TYPE_UNKNOWN);
  EXPECT_FALSE(GatherLogical(unknown, std::string(16, '\0')).ok());
}

TEST(TensorUtilTest, NpyDescrMapping) {
  EXPECT_EQ(NpyDescrFor(DATA_TYPE_FLOAT16), "<f2");
  EXPECT_EQ(NpyDescrFor(DATA_TYPE_INT8), "<i1");
  EXPECT_EQ(DataTypeForNpyDescr("<u4"), dmlserve::v1::DATA_TYPE_UINT32);
  EXPECT_EQ(DataTypeForNpyDescr("<c8"), dmlserve::v1::DATA_TYPE_UNKNOWN);
  EXPECT_EQ(DataTypeSize(99), 0u);
}

}  // namespace
}  // namespace dmls::client
