#include "engine/core/strided_overlap.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace dmls {
namespace {

using Dims = std::vector<StridedDim>;

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint64_t SatMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

uint64_t SatAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

// The number of difference vectors of a group: prod(2 * size - 1).
uint64_t BoxSize(const Dims& group) {
  uint64_t n = 1;
  for (const StridedDim& d : group) n = SatMul(n, SatMul(2, d.size) - 1);
  return n;
}

// Which dimensions are stored (group A) and which are looked up (group B).
struct Split {
  uint64_t stored_mask = 0;
  uint64_t stored = 0;  // sums stored: 0 for a group of at most one
  uint64_t probed = 0;  // sums looked up: |box(B)|
  uint64_t Cost() const { return SatAdd(SatMul(2, stored), probed); }
};

Split MakeSplit(const Dims& dims, uint64_t mask) {
  Dims a, b;
  for (size_t k = 0; k < dims.size(); ++k) {
    ((mask >> k) & 1 ? a : b).push_back(dims[k]);
  }
  Split s;
  s.stored_mask = mask;
  // A single stored dimension is tested arithmetically, never enumerated.
  s.stored = a.size() <= 1 ? 0 : BoxSize(a) - 1;
  s.probed = BoxSize(b);
  return s;
}

// The cheapest split: every subset for the ranks tensors have (at most 8
// dimensions); beyond 12, a greedy balance of the groups' box sizes against
// the largest dimension stored alone.
Split ChooseSplit(const Dims& dims) {
  const size_t r = dims.size();
  Split best = MakeSplit(dims, 0);
  if (r <= 12) {
    for (uint64_t mask = 1; mask < (uint64_t{1} << r); ++mask) {
      Split s = MakeSplit(dims, mask);
      if (s.Cost() < best.Cost()) best = s;
    }
    return best;
  }
  std::vector<size_t> order(r);
  for (size_t k = 0; k < r; ++k) order[k] = k;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return dims[x].size > dims[y].size; });
  Split alone = MakeSplit(dims, uint64_t{1} << order[0]);
  if (alone.Cost() < best.Cost()) best = alone;
  uint64_t mask = 0, box_a = 1, box_b = 1;
  for (size_t k : order) {
    const uint64_t box = SatMul(2, dims[k].size) - 1;
    if (box_a <= box_b) {
      mask |= uint64_t{1} << k;
      box_a = SatMul(box_a, box);
    } else {
      box_b = SatMul(box_b, box);
    }
  }
  Split balanced = MakeSplit(dims, mask);
  if (balanced.Cost() < best.Cost()) best = balanced;
  return best;
}

// Calls f(sum, nonzero) for every difference vector d of the group (sum =
// d . stride mod 2^64, nonzero = d != 0) until f returns true; returns
// whether it did. An odometer with one addition per step.
template <typename F>
bool ForEachSum(const Dims& group, F&& f) {
  const size_t r = group.size();
  // u_k = d_k + m_k in [0, 2 m_k], with m_k = size_k - 1.
  std::vector<uint64_t> u(r, 0);
  uint64_t sum = 0;
  size_t zeros = 0;  // components with d_k == 0
  for (const StridedDim& d : group) sum -= (d.size - 1) * d.stride;
  while (true) {
    if (f(sum, zeros != r)) return true;
    size_t k = 0;
    for (; k < r; ++k) {
      const uint64_t m = group[k].size - 1;
      if (u[k] < 2 * m) {
        if (u[k] == m) --zeros;
        ++u[k];
        if (u[k] == m) ++zeros;
        sum += group[k].stride;
        break;
      }
      u[k] = 0;  // d_k from +m back to -m: both non-zero
      sum -= 2 * m * group[k].stride;
    }
    if (k == r) return false;
  }
}

// The inverse of an odd number modulo 2^64 (Newton: each step doubles the
// number of correct low bits, from 3).
uint64_t InverseOdd(uint64_t u) {
  uint64_t x = u;
  for (int i = 0; i < 5; ++i) x *= 2 - u * x;
  return x;
}

// Whether t == k * stride (mod 2^64) for some |k| <= size - 1, k != 0 when
// `need_nonzero`. stride != 0.
bool SingleDimHas(const StridedDim& d, uint64_t t, bool need_nonzero) {
  const uint64_t m = d.size - 1;
  const int z = __builtin_ctzll(d.stride);  // stride = 2^z * odd
  if (z > 0 && (t & ((uint64_t{1} << z) - 1)) != 0) return false;
  // The solutions are k0 + j * M with M = 2^(64 - z).
  const uint64_t mask = kSaturated >> z;  // M - 1
  const uint64_t k0 = ((t >> z) * InverseOdd(d.stride >> z)) & mask;
  if (k0 == 0) {
    // k = 0 solves; the next solutions are +-M, and M > m when z == 0.
    return !need_nonzero || (z > 0 && mask < m);
  }
  // The solutions nearest 0 are k0 and k0 - M; |k0 - M| = M - k0.
  return k0 <= m || mask - k0 < m;
}

}  // namespace

uint64_t StridedOffsetsCollideWork(const std::vector<StridedDim>& in) {
  Dims dims;
  for (const StridedDim& d : in) {
    if (d.size < 2) continue;
    if (d.stride == 0) return 0;
    dims.push_back(d);
  }
  if (dims.empty()) return 0;
  Split s = ChooseSplit(dims);
  return SatAdd(s.stored, s.probed);
}

bool StridedOffsetsCollide(const std::vector<StridedDim>& in) {
  Dims dims;
  for (const StridedDim& d : in) {
    if (d.size < 2) continue;
    if (d.stride == 0) return true;
    dims.push_back(d);
  }
  if (dims.empty()) return false;
  const Split split = ChooseSplit(dims);
  Dims a, b;
  for (size_t k = 0; k < dims.size(); ++k) {
    ((split.stored_mask >> k) & 1 ? a : b).push_back(dims[k]);
  }
  // A collision is d = (d_A, d_B) != 0 with d_A . s_A == -(d_B . s_B). Each
  // d_B is looked up; d_B == 0 needs a non-zero d_A.
  if (a.size() == 1) {
    return ForEachSum(b, [&](uint64_t sum, bool nonzero) {
      return SingleDimHas(a[0], 0 - sum, !nonzero);
    });
  }
  std::vector<uint64_t> stored;  // sums of the non-zero d_A
  stored.reserve(split.stored);
  ForEachSum(a, [&](uint64_t sum, bool nonzero) {
    if (nonzero) stored.push_back(sum);
    return false;
  });
  std::sort(stored.begin(), stored.end());
  return ForEachSum(b, [&](uint64_t sum, bool nonzero) {
    const uint64_t t = 0 - sum;
    if (t == 0 && nonzero) return true;  // d_A = 0
    return std::binary_search(stored.begin(), stored.end(), t);
  });
}

}  // namespace dmls
