// Planner building blocks shared by the element-wise and MVN planners:
// dimension coalescing, splitting a strided iteration space into chunks whose
// views fit the view texel limit, 2-D dispatch grids, and constant-block
// encoding. Pure functions; thread-safe.
#ifndef DMLSERVE_ENGINE_PLAN_PLAN_UTIL_H_
#define DMLSERVE_ENGINE_PLAN_PLAN_UTIL_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/statusor.h"

namespace dmls::gpu {

// One dimension of an iteration space shared by several tensors (one
// element stride per tensor).
struct Dim {
  uint64_t size = 1;
  std::vector<uint64_t> strides;
};

// Drops size-1 dimensions and merges neighbours that are contiguous in every
// tensor (outer stride == inner stride * inner size). Never returns an empty
// list: a scalar becomes one dimension of size 1 and stride 0.
std::vector<Dim> CoalesceDims(const std::vector<uint64_t>& sizes,
                              const std::vector<std::vector<uint64_t>>& strides);

// A word range of one tensor's buffer, as an R32 view: `bias` is the element
// offset of the chunk's first element from the view start.
struct WordRange {
  uint64_t first_word = 0;
  uint32_t words = 0;
  uint32_t bias = 0;
};

// A sub-iteration space (its own dims; outer ones fixed) and its views.
struct Chunk {
  std::vector<Dim> dims;
  std::vector<WordRange> views;  // one per tensor
};

// Splits `dims` (all tensors with elements of `bits` bits) so that each
// chunk's views hold at most `max_words` words. ResourceExhausted-style
// Unimplemented when more than `max_chunks` chunks would be needed.
absl::StatusOr<std::vector<Chunk>> SplitForViews(const std::vector<Dim>& dims,
                                                 uint32_t bits, uint64_t max_words,
                                                 uint32_t max_chunks);

// A grid of at least `groups` groups with no dimension above `max_groups`
// (x * y >= groups; kernels skip the excess).
absl::StatusOr<std::array<uint32_t, 3>> GridFor(uint64_t groups, uint32_t max_groups);

// The bytes of a constant block struct.
template <typename T>
std::vector<uint8_t> EncodeArgs(const T& args) {
  std::vector<uint8_t> bytes(sizeof(T));
  std::memcpy(bytes.data(), &args, sizeof(T));
  return bytes;
}

}  // namespace dmls::gpu

#endif  // DMLSERVE_ENGINE_PLAN_PLAN_UTIL_H_
