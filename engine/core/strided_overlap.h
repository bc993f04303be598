// StridedOffsetsCollide: the exact test behind HasSelfOverlap (OPERATORS.md
// §2.3) for layouts that fail the cheap nesting test, without enumerating
// every offset.
//
// Two distinct indices i != i' of the box prod[0, size_k) share an offset
// exactly when the difference d = i - i' is a non-zero vector with
// |d_k| <= size_k - 1 and sum_k d_k * stride_k == 0. Offsets are taken
// modulo 2^64, as the old enumeration computed them, so the answer is that
// enumeration's answer for every input. Deciding this is a bounded
// zero-sum (knapsack) problem; with few dimensions a meet-in-the-middle
// search is exact and cheap: the dimensions are split in two groups, the
// sums of one group's difference vectors are stored and sorted, the other
// group's are looked up. A group of a single dimension is never
// enumerated: "t is a multiple k * stride with |k| <= size - 1" is decided
// with a modular inverse. The split with the least work is picked.
//
// Work: about sqrt(prod(2 * size_k - 1)) steps for balanced shapes, never
// more than the product of all groups but the cheapest; a caller that bounds
// the element count bounds the work (for 2^22 elements and eight
// dimensions, at most about 10^5 sums, well under a millisecond to a few).
// Stateless functions: thread-safe.
#ifndef DMLSERVE_ENGINE_CORE_STRIDED_OVERLAP_H_
#define DMLSERVE_ENGINE_CORE_STRIDED_OVERLAP_H_

#include <cstdint>
#include <vector>

namespace dmls {

struct StridedDim {
  uint64_t stride = 0;  // elements; may be 0
  uint64_t size = 1;    // elements; dimensions of size 0 or 1 are ignored
};

// True when two distinct indices map to one offset (mod 2^64). A dimension
// with size > 1 and stride 0 always collides.
bool StridedOffsetsCollide(const std::vector<StridedDim>& dims);

// The number of sums StridedOffsetsCollide would compute for `dims` (its
// cost model, saturating at UINT64_MAX); for tests and work bounds.
uint64_t StridedOffsetsCollideWork(const std::vector<StridedDim>& dims);

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_STRIDED_OVERLAP_H_
