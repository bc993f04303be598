#include "engine/core/strided_overlap.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "engine/core/tensor_desc.h"
#include "gtest/gtest.h"

namespace dmls {
namespace {

// Every offset of the box, mod 2^64, sorted: the brute-force answer.
bool BruteCollide(const std::vector<StridedDim>& dims) {
  std::vector<uint64_t> offsets{0};
  for (const StridedDim& d : dims) {
    std::vector<uint64_t> next;
    next.reserve(offsets.size() * d.size);
    for (uint64_t o : offsets) {
      for (uint64_t i = 0; i < d.size; ++i) next.push_back(o + i * d.stride);
    }
    offsets.swap(next);
  }
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) != offsets.end();
}

// The reference HasSelfOverlap must agree with: every offset of the tensor
// enumerated (BruteCollide). Exact for the shapes below, all of at most 2^22
// elements; beyond that HasSelfOverlap reports interleaved layouts as
// overlapping without deciding them (OPERATORS.md §2.3).
bool ReferenceHasSelfOverlap(const TensorDesc& desc) {
  const std::vector<uint64_t> strides = EffectiveStrides(desc);
  std::vector<StridedDim> dims;
  for (size_t i = 0; i < desc.sizes.size(); ++i) {
    dims.push_back({strides[i], desc.sizes[i]});
  }
  return BruteCollide(dims);
}

TensorDesc Desc(std::vector<uint64_t> sizes, std::vector<uint64_t> strides) {
  return MakeTensorDesc(DataType::kFloat32, std::move(sizes),
                        std::move(strides));
}

TEST(CoreStridedOverlapTest, KnownAnswers) {
  using V = std::vector<StridedDim>;
  EXPECT_FALSE(StridedOffsetsCollide(V{}));
  EXPECT_FALSE(StridedOffsetsCollide(V{{0, 1}, {5, 1}}));  // sizes 1
  EXPECT_TRUE(StridedOffsetsCollide(V{{0, 2}}));           // broadcast
  EXPECT_FALSE(StridedOffsetsCollide(V{{7, 5}}));
  EXPECT_FALSE(StridedOffsetsCollide(V{{2, 3}, {3, 2}}));  // 0,3,2,5,4,7
  EXPECT_TRUE(StridedOffsetsCollide(V{{1, 3}, {2, 2}}));   // 2 twice
  EXPECT_TRUE(StridedOffsetsCollide(V{{1, 2}, {3, 2}, {2, 2}}));
  // Two dimensions: the first collision is d = (s2, -s1) / gcd.
  EXPECT_FALSE(StridedOffsetsCollide(V{{6, 5}, {10, 3}}));  // needs (5, -3)
  EXPECT_TRUE(StridedOffsetsCollide(V{{6, 6}, {10, 4}}));
  // The slow case: 4,194,303 distinct offsets 2a + 3b, a < 3.
  EXPECT_FALSE(StridedOffsetsCollide(V{{2, 3}, {3, 1398101}}));
  EXPECT_TRUE(StridedOffsetsCollide(V{{2, 4}, {3, 1398101}}));
  // Offsets wrap modulo 2^64 as the enumeration computed them.
  const uint64_t half = uint64_t{1} << 63;
  EXPECT_FALSE(StridedOffsetsCollide(V{{half, 2}}));
  EXPECT_TRUE(StridedOffsetsCollide(V{{half, 3}}));  // 2 * 2^63 == 0
  EXPECT_TRUE(StridedOffsetsCollide(V{{half + 1, 2}, {half - 1, 2}}));
  EXPECT_TRUE(StridedOffsetsCollide(V{{~uint64_t{0}, 2}, {1, 2}}));  // -1+1
}

TEST(CoreStridedOverlapTest, AgreesWithBruteForceOnRandomLattices) {
  std::mt19937_64 rng(20261124);
  int collisions = 0;
  for (int iter = 0; iter < 40000; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 8);
    std::vector<StridedDim> dims;
    uint64_t n = 1;
    const int mode = static_cast<int>(rng() % 4);
    for (int k = 0; k < rank; ++k) {
      uint64_t size = 1 + rng() % (rank <= 3 ? 24 : 5);
      if (n * size > 4096) size = 1;
      n *= size;
      uint64_t stride;
      switch (mode) {
        case 0:
          stride = rng() % 16;
          break;
        case 1:
          stride = 1 + rng() % 200;
          break;
        case 2:
          stride = (uint64_t{1} << 63) + rng() % 8 - 4;
          break;
        default:
          stride = rng();
          break;
      }
      if (rng() % 16 == 0) stride = 0;
      dims.push_back({stride, size});
    }
    const bool expected = BruteCollide(dims);
    collisions += expected;
    ASSERT_EQ(StridedOffsetsCollide(dims), expected) << "iteration " << iter;
  }
  // Both answers occur often enough for the comparison to mean something.
  EXPECT_GT(collisions, 4000);
  EXPECT_LT(collisions, 36000);
}

// HasSelfOverlap against the enumeration on random descriptors, packed
// and strided, nested and interleaved, up to 2^14 elements.
TEST(CoreStridedOverlapTest, HasSelfOverlapAgreesWithTheOldEnumeration) {
  std::mt19937_64 rng(7);
  int overlaps = 0, interleaved_distinct = 0;
  for (int iter = 0; iter < 60000; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 8);
    std::vector<uint64_t> sizes, strides;
    uint64_t n = 1;
    for (int k = 0; k < rank; ++k) {
      uint64_t size = 1 + rng() % (rank <= 2 ? 64 : rank <= 4 ? 10 : 4);
      if (n * size > (1u << 14)) size = 1;
      n *= size;
      sizes.push_back(size);
    }
    const int mode = static_cast<int>(rng() % 5);
    if (mode == 0) {
      strides = PackedStrides(sizes);  // nested, sometimes permuted
      std::shuffle(strides.begin(), strides.end(), rng);
    } else {
      for (int k = 0; k < rank; ++k) {
        uint64_t bound = mode == 1 ? 4 : mode == 2 ? 12 : mode == 3 ? 64 : 4096;
        strides.push_back(rng() % bound);
      }
    }
    TensorDesc t = Desc(sizes, strides);
    const bool expected = ReferenceHasSelfOverlap(t);
    overlaps += expected;
    if (!expected && mode != 0) ++interleaved_distinct;
    ASSERT_EQ(HasSelfOverlap(t), expected) << "iteration " << iter;
  }
  EXPECT_GT(overlaps, 10000);
  EXPECT_GT(interleaved_distinct, 1000);
}

// Interleaved layouts near the 2^22-element boundary, where the reference
// still enumerates (and is slow): a few, to check agreement there too.
TEST(CoreStridedOverlapTest, HasSelfOverlapAgreesNearTheEnumerationLimit) {
  const std::pair<std::vector<uint64_t>, std::vector<uint64_t>> cases[] = {
      {{3, 1398101}, {2, 3}},
      {{4, 1048576}, {3, 2}},
      {{1u << 19, 3, 2}, {8, 2, 3}},
      {{1u << 20, 2, 2}, {8, 2, 3}},
      {{3, 15, 3, 15, 3, 15, 3, 8},
       {2, 3, 94, 141, 4418, 6627, 207646, 311469}},
  };
  for (const auto& [sizes, strides] : cases) {
    TensorDesc t = Desc(sizes, strides);
    EXPECT_EQ(HasSelfOverlap(t), ReferenceHasSelfOverlap(t))
        << "sizes " << ::testing::PrintToString(sizes) << " strides "
        << ::testing::PrintToString(strides);
  }
}

double MillisecondsOf(const TensorDesc& t, bool* result) {
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    auto start = std::chrono::steady_clock::now();
    *result = HasSelfOverlap(t);
    std::chrono::duration<double, std::milli> ms =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, ms.count());
  }
  return best;
}

// The case (0.73 s when every offset was enumerated and sorted) and
// the costliest shapes of up to 2^22 elements: well under 10 ms each.
TEST(CoreStridedOverlapTest, InterleavedLayoutsAreCheap) {
  bool overlap = true;
  EXPECT_LT(MillisecondsOf(Desc({3, 1398101}, {2, 3}), &overlap), 10.0);
  EXPECT_FALSE(overlap);
  const std::pair<std::vector<uint64_t>, std::vector<uint64_t>> worst[] = {
      // Eight dimensions of 6 or 7 (about 2^22 elements), interleaved.
      {{7, 7, 7, 7, 7, 7, 7, 5}, {1, 7, 49, 343, 2401, 16807, 117649, 823542}},
      {{6, 6, 6, 6, 6, 6, 6, 6}, {1, 6, 36, 216, 1296, 7776, 46656, 279935}},
      // Three and four even dimensions.
      {{161, 161, 161}, {1, 161, 25920}},
      {{45, 45, 45, 45}, {1, 45, 2025, 91124}},
      {{2048, 2048}, {2047, 1}},
      // Interleaved pairs (2a + 3b) that never collide: nothing ends early.
      {{3, 15, 3, 15, 3, 15, 3, 8},
       {2, 3, 94, 141, 4418, 6627, 207646, 311469}},
  };
  for (const auto& [sizes, strides] : worst) {
    TensorDesc t = Desc(sizes, strides);
    EXPECT_LT(MillisecondsOf(t, &overlap), 10.0)
        << ::testing::PrintToString(sizes);
  }
}

// The cost model's worst case over shapes of at most 2^22 elements and
// eight dimensions stays small (a few 10^4 sums), whatever the strides.
TEST(CoreStridedOverlapTest, WorkIsBoundedForTwoTo22Elements) {
  uint64_t worst = 0;
  std::vector<uint64_t> worst_sizes;
  // Every non-increasing vector of at most 8 sizes from a geometric ladder
  // with a product <= 2^22 (the order of dimensions does not change the
  // work).
  std::vector<uint64_t> ladder = {2,  3,  4,  5,  6,  7,  8,   10,  12,
                                  16, 23, 32, 45, 64, 91, 128, 181, 256};
  for (uint64_t s = 512; s <= (1u << 21); s *= 2) ladder.push_back(s);
  std::vector<uint64_t> sizes;
  auto visit = [&](auto&& self, size_t max_rung, uint64_t product) -> void {
    if (!sizes.empty()) {
      std::vector<StridedDim> dims;
      for (uint64_t s : sizes) dims.push_back({1, s});
      uint64_t work = StridedOffsetsCollideWork(dims);
      if (work > worst) {
        worst = work;
        worst_sizes = sizes;
      }
    }
    if (sizes.size() == 8) return;
    for (size_t rung = 0; rung <= max_rung; ++rung) {
      if (product * ladder[rung] > (1u << 22)) break;
      sizes.push_back(ladder[rung]);
      self(self, rung, product * ladder[rung]);
      sizes.pop_back();
    }
  };
  visit(visit, ladder.size() - 1, 1);
  EXPECT_LT(worst, uint64_t{1} << 18) << ::testing::PrintToString(worst_sizes);
}

}  // namespace
}  // namespace dmls
