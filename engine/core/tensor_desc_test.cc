#include "engine/core/tensor_desc.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace dmls {
namespace {

using Strides = std::optional<std::vector<uint64_t>>;

// The examples of OPERATORS.md §2.4.
TEST(CoreTensorDescTest, CalcBufferTensorSizeSpecExamples) {
  EXPECT_EQ(CalcBufferTensorSize(DataType::kFloat32, {1, 1, 2, 3}, {}), 24u);
  EXPECT_EQ(CalcBufferTensorSize(DataType::kFloat16, {1, 1, 1, 3}, {}), 8u);
  EXPECT_EQ(CalcBufferTensorSize(DataType::kInt8, {5}, {}), 8u);
  EXPECT_EQ(CalcBufferTensorSize(DataType::kFloat32, {2, 3}, Strides{{0, 1}}),
            12u);
  EXPECT_EQ(CalcBufferTensorSize(DataType::kFloat32, {2, 3}, Strides{{4, 1}}),
            28u);
  EXPECT_EQ(CalcBufferTensorSize(DataType::kFloat32, {1, 1, 2, 3},
                                 Strides{{8, 8, 4, 1}}),
            28u);
}

TEST(CoreTensorDescTest, CalcBufferTensorSizeOtherTypes) {
  // 4-bit types round a partial byte up, then to a DWORD.
  EXPECT_EQ(CalcBufferTensorSize(DataType::kInt4, {3}, {}), 4u);
  EXPECT_EQ(CalcBufferTensorSize(DataType::kUint4, {9}, {}), 8u);
  EXPECT_EQ(CalcBufferTensorSize(DataType::kInt64, {3}, {}), 24u);
  EXPECT_EQ(CalcBufferTensorSize(DataType::kUnknown, {3}, {}), 0u);
  EXPECT_EQ(CalcBufferTensorSize(static_cast<DataType>(99), {3}, {}), 0u);
  // Exact 64-bit arithmetic: no wrap at 2^32 elements.
  EXPECT_EQ(CalcBufferTensorSize(DataType::kFloat32, {65536, 65536}, {}),
            uint64_t{1} << 34);
  EXPECT_EQ(CalcBufferTensorSize(DataType::kFloat16, {2, 0xFFFFFFFFull},
                                 Strides{{0xFFFFFFFFull, 1}}),
            // last index (2^32-1) + (2^32-2) = 2^33-3: 2^33-2 halves.
            (uint64_t{1} << 34) - 4);
}

TEST(CoreTensorDescTest, EffectiveStrideListIsEffectiveStrides) {
  TensorDesc d = MakeTensorDesc(DataType::kFloat32, {2, 3, 4});
  EXPECT_EQ(EffectiveStrideList(d), (StrideList{12, 4, 1}));
  d.strides = std::vector<uint64_t>{1, 2, 6};
  EXPECT_EQ(EffectiveStrideList(d), (StrideList{1, 2, 6}));
  // Past the inline capacity it still answers (on the heap).
  TensorDesc wide = MakeTensorDesc(DataType::kFloat32, std::vector<uint64_t>(10, 2));
  const std::vector<uint64_t> want = EffectiveStrides(wide);
  EXPECT_EQ(EffectiveStrideList(wide), StrideList(want.begin(), want.end()));
  EXPECT_EQ(EffectiveStrideList(wide)[0], 512u);
}

TEST(CoreTensorDescTest, PackedStridesAreRowMajor) {
  EXPECT_EQ(PackedStrides({2, 3, 4}), (std::vector<uint64_t>{12, 4, 1}));
  EXPECT_EQ(PackedStrides({7}), (std::vector<uint64_t>{1}));
  EXPECT_EQ(PackedStrides({}), (std::vector<uint64_t>{}));
  EXPECT_EQ(PackedStrides({1, 3, 1, 2}), (std::vector<uint64_t>{6, 2, 2, 1}));
}

TEST(CoreTensorDescTest, EffectiveStridesAndPacking) {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {2, 3});
  EXPECT_EQ(EffectiveStrides(t), (std::vector<uint64_t>{3, 1}));
  EXPECT_TRUE(IsPacked(t));
  EXPECT_EQ(t.total_tensor_size_in_bytes, 24u);
  EXPECT_EQ(t.rank(), 2u);
  t.strides = std::vector<uint64_t>{3, 1};
  EXPECT_TRUE(IsPacked(t));
  t.strides = std::vector<uint64_t>{4, 1};
  EXPECT_FALSE(IsPacked(t));
  EXPECT_EQ(IndexOfLastElement(t), 6u);
  t.dimension_count = 5;
  EXPECT_EQ(t.rank(), 5u);  // as sent, even when it disagrees with sizes
  TensorDesc given = MakeTensorDesc(DataType::kFloat32, {2}, {}, 64);
  EXPECT_EQ(given.total_tensor_size_in_bytes, 64u);
  EXPECT_EQ(ElementCount({2, 3, 4}), 24u);
}

bool Overlaps(std::vector<uint64_t> sizes, std::vector<uint64_t> strides) {
  return HasSelfOverlap(
      MakeTensorDesc(DataType::kFloat32, std::move(sizes), std::move(strides)));
}

TEST(CoreTensorDescTest, SelfOverlapNestedLayouts) {
  EXPECT_FALSE(HasSelfOverlap(MakeTensorDesc(DataType::kFloat32, {2, 3, 4})));
  EXPECT_FALSE(Overlaps({2, 3}, {4, 1}));               // padding
  EXPECT_FALSE(Overlaps({1, 2, 2, 3}, {12, 1, 6, 2}));  // NHWC
  EXPECT_TRUE(Overlaps({2, 3}, {0, 1}));                // broadcast row
  EXPECT_FALSE(Overlaps({1, 3}, {0, 1}));               // zero stride, size 1
  EXPECT_TRUE(Overlaps({2, 2}, {1, 1}));
  EXPECT_FALSE(Overlaps({5}, {7}));
}

TEST(CoreTensorDescTest, SelfOverlapEnumerationPath) {
  // Interleaved dimensions fail the nesting test; the offsets decide.
  EXPECT_FALSE(Overlaps({3, 2}, {2, 3}));       // 0,3,2,5,4,7: distinct
  EXPECT_TRUE(Overlaps({3, 2}, {1, 2}));        // 0,2,1,3,2,4: 2 twice
  EXPECT_FALSE(Overlaps({2, 3}, {3, 2}));       // 0,2,4,3,5,7: distinct
  EXPECT_TRUE(Overlaps({2, 2, 2}, {1, 3, 2}));  // 1+2 == 3: 3 twice
}

TEST(CoreTensorDescTest, SelfOverlapIsConservativeBeyond4MElements) {
  // Distinct offsets (inner block {0,2,3,4,5,7} < 8), but the interleaved
  // layout has 6M elements: like the oracle, it is not enumerated and is
  // treated as overlapping.
  EXPECT_TRUE(Overlaps({1u << 20, 3, 2}, {8, 2, 3}));
  EXPECT_FALSE(Overlaps({1u << 19, 3, 2}, {8, 2, 3}));  // 3M: enumerated
}

}  // namespace
}  // namespace dmls
