#include "engine/cpu/tensor_access.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "engine/cpu/float16.h"
#include "gtest/gtest.h"

namespace dmls::cpu {
namespace {

using Offsets = std::vector<uint64_t>;

TEST(TensorAccess, PackedOffsetsAreRowMajor) {
  const TensorDesc t = MakeTensorDesc(DataType::kFloat32, {2, 3});
  EXPECT_EQ(ElementOffsets(t), (Offsets{0, 1, 2, 3, 4, 5}));
}

TEST(TensorAccess, StridedPaddedAndTransposedOffsets) {
  // Padded rows: {2,3} with strides {4,1}.
  EXPECT_EQ(
      ElementOffsets(MakeTensorDesc(DataType::kFloat32, {2, 3}, {{4, 1}})),
      (Offsets{0, 1, 2, 4, 5, 6}));
  // Transposed (column-major) storage: strides {1,2}.
  EXPECT_EQ(
      ElementOffsets(MakeTensorDesc(DataType::kFloat32, {2, 3}, {{1, 2}})),
      (Offsets{0, 2, 4, 1, 3, 5}));
  // Zero stride broadcasts (OPERATORS.md §2.3 example).
  EXPECT_EQ(ElementOffsets(MakeTensorDesc(DataType::kFloat32, {1, 1, 2, 3},
                                          {{0, 0, 0, 1}})),
            (Offsets{0, 1, 2, 0, 1, 2}));
  // Rank 1 and size-1 dimensions.
  EXPECT_EQ(ElementOffsets(MakeTensorDesc(DataType::kInt8, {1}, {{7}})),
            (Offsets{0}));
  EXPECT_EQ(ElementOffsets(MakeTensorDesc(DataType::kInt8, {3, 1}, {{5, 9}})),
            (Offsets{0, 5, 10}));
}

TEST(TensorAccess, BroadcastOffsetsIgnoreSizeOneDimensions) {
  // A {1,3,1} per-channel operand read at every index of {2,3,2}.
  const TensorDesc c = MakeTensorDesc(DataType::kFloat32, {1, 3, 1});
  EXPECT_EQ(BroadcastOffsets({2, 3, 2}, c),
            (Offsets{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  // Same sizes as the target with strides: identical to ElementOffsets.
  const TensorDesc s = MakeTensorDesc(DataType::kFloat32, {2, 2}, {{1, 3}});
  EXPECT_EQ(BroadcastOffsets({2, 2}, s), ElementOffsets(s));
}

TEST(TensorAccess, ForEachElementZipsTwoLayoutsOfOneShape) {
  // A transposed input into padded rows, then a packed {1} (one element).
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  ForEachElement(MakeTensorDesc(DataType::kFloat32, {2, 3}, {{1, 2}}),
                 MakeTensorDesc(DataType::kFloat32, {2, 3}, {{4, 1}}),
                 [&](uint64_t in, uint64_t out) { pairs.emplace_back(in, out); });
  EXPECT_EQ(pairs, (std::vector<std::pair<uint64_t, uint64_t>>{
                       {0, 0}, {2, 1}, {4, 2}, {1, 4}, {3, 5}, {5, 6}}));
  pairs.clear();
  const TensorDesc one = MakeTensorDesc(DataType::kInt8, {1, 1}, {{3, 9}});
  ForEachElement(one, one, [&](uint64_t in, uint64_t out) { pairs.emplace_back(in, out); });
  EXPECT_EQ(pairs, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 0}}));
  // No elements: no calls.
  const TensorDesc empty = MakeTensorDesc(DataType::kInt8, {2, 0});
  ForEachElement(empty, empty, [&](uint64_t, uint64_t) { ADD_FAILURE(); });
}

TEST(TensorAccess, PackedWalksAreTheOnesFromZeroByOne) {
  EXPECT_TRUE(OffsetWalk(MakeTensorDesc(DataType::kFloat32, {2, 3})).packed());
  EXPECT_TRUE(OffsetWalk(MakeTensorDesc(DataType::kFloat32, {2, 1, 3}, {{3, 7, 1}})).packed());
  EXPECT_TRUE(OffsetWalk(MakeTensorDesc(DataType::kInt8, {1, 1}, {{3, 9}})).packed());
  EXPECT_TRUE(OffsetWalk(MakeTensorDesc(DataType::kInt8, {2, 0})).packed());
  EXPECT_FALSE(OffsetWalk(MakeTensorDesc(DataType::kFloat32, {2, 3}, {{4, 1}})).packed());
  EXPECT_FALSE(OffsetWalk(MakeTensorDesc(DataType::kFloat32, {2, 3}, {{1, 2}})).packed());
  EXPECT_FALSE(OffsetWalk(MakeTensorDesc(DataType::kFloat32, {3}, {{2}})).packed());
  EXPECT_FALSE(OffsetWalk(MakeTensorDesc(DataType::kFloat32, {2, 3}, {{0, 1}})).packed());
}

// Every element's offset by its index, dimension by dimension: what the
// walk (which merges dimensions) must reproduce.
Offsets NaiveOffsets(const std::vector<uint64_t>& sizes,
                     const std::vector<uint64_t>& strides) {
  Offsets out;
  uint64_t count = 1;
  for (uint64_t n : sizes) count *= n;
  for (uint64_t e = 0; e < count; ++e) {
    uint64_t rest = e, offset = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      offset += (rest % sizes[d]) * strides[d];
      rest /= sizes[d];
    }
    out.push_back(offset);
  }
  return out;
}

TEST(TensorAccess, MergedWalksMatchTheIndexByIndexOffsets) {
  struct Layout {
    std::vector<uint64_t> sizes, strides;
  };
  const Layout layouts[] = {
      {{2, 3, 4}, {12, 4, 1}},        // packed: one run
      {{2, 3, 4}, {16, 4, 1}},        // padded rows between the 3x4 blocks
      {{2, 3, 4}, {1, 8, 2}},         // permuted
      {{4, 1, 1, 5}, {5, 99, 7, 1}},  // size-1 dimensions with odd strides
      {{3, 2, 2}, {0, 2, 1}},         // broadcast outer
      {{3, 2, 2}, {4, 0, 1}},         // broadcast middle
      {{2, 2, 3}, {0, 0, 0}},         // all broadcast
      {{1, 1, 1}, {3, 2, 1}},         // one element
      {{5}, {3}},                     // strided vector
  };
  for (const Layout& l : layouts) {
    const TensorDesc desc = MakeTensorDesc(DataType::kFloat32, l.sizes, l.strides);
    EXPECT_EQ(ElementOffsets(desc), NaiveOffsets(l.sizes, l.strides))
        << "sizes " << ::testing::PrintToString(l.sizes) << " strides "
        << ::testing::PrintToString(l.strides);
  }
}

TEST(TensorAccess, CheckPayload) {
  const TensorDesc t = MakeTensorDesc(DataType::kFloat16, {1, 1, 1, 3});
  EXPECT_EQ(t.total_tensor_size_in_bytes, 8u);
  EXPECT_TRUE(CheckPayload(t, 8, "in").ok());
  EXPECT_EQ(CheckPayload(t, 6, "in").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckPayload(t, 12, "in").code(),
            absl::StatusCode::kInvalidArgument);
  // TotalTensorSizeInBytes below the strided extent: rejected, not read.
  const TensorDesc lying =
      MakeTensorDesc(DataType::kFloat32, {2, 3}, {{4, 1}}, 24);
  EXPECT_EQ(CheckPayload(lying, 24, "in").code(),
            absl::StatusCode::kInvalidArgument);
  TensorDesc unknown = t;
  unknown.data_type = 0;
  EXPECT_EQ(CheckPayload(unknown, 8, "in").code(),
            absl::StatusCode::kInvalidArgument);
  TensorDesc zero = t;
  zero.sizes[0] = 0;
  EXPECT_EQ(CheckPayload(zero, 8, "in").code(),
            absl::StatusCode::kInvalidArgument);
  TensorDesc bad_strides = t;
  bad_strides.strides = std::vector<uint64_t>{1, 1};
  EXPECT_EQ(CheckPayload(bad_strides, 8, "in").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorAccess, FloatLoadStoreRoundOnce) {
  std::string buffer(8, '\0');
  StoreFloat(DataType::kFloat32, buffer.data(), 1, 1.0 + std::ldexp(1.0, -30));
  EXPECT_EQ(LoadFloat(DataType::kFloat32, buffer.data(), 1), 1.0);
  StoreFloat(DataType::kFloat32, buffer.data(), 0, 1e300);
  EXPECT_TRUE(std::isinf(LoadFloat(DataType::kFloat32, buffer.data(), 0)));
  StoreFloat(DataType::kFloat16, buffer.data(), 3, 65520.0);
  EXPECT_EQ(Load<uint16_t>(buffer.data(), 3), 0x7c00);
  StoreFloat(DataType::kFloat16, buffer.data(), 2, 0.1);
  EXPECT_EQ(LoadFloat(DataType::kFloat16, buffer.data(), 2), RoundToHalf(0.1));
}

}  // namespace
}  // namespace dmls::cpu
