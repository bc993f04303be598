// Element access of the CPU engine: the buffer offsets of a tensor's logical
// elements (strides, zero strides, size-1 broadcast), typed loads and stores
// into raw little-endian buffer bytes, and the bounds check that keeps a
// payload of the wrong length from being read out of range. Pure functions:
// thread-safe.
#ifndef DMLSERVE_ENGINE_CPU_TENSOR_ACCESS_H_
#define DMLSERVE_ENGINE_CPU_TENSOR_ACCESS_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/core/tensor_desc.h"
#include "engine/core/types.h"

namespace dmls::cpu {

// Element offsets of every logical element of `desc`, in logical row-major
// order (last dimension fastest), through its effective strides.
std::vector<uint64_t> ElementOffsets(const TensorDesc& desc);

// The offsets of a row-major walk over `sizes` with per-dimension
// `strides`, one at a time (ElementOffsets without the list). Dimensions
// that continue one another in memory and dimensions of size 1 are merged
// first, so a packed tensor is one run of consecutive offsets whatever its
// rank. Inline state for rank <= 8: nothing is allocated. A value type;
// thread-compatible.
class OffsetWalk {
 public:
  explicit OffsetWalk(const TensorDesc& desc);
  OffsetWalk(absl::Span<const uint64_t> sizes, absl::Span<const uint64_t> strides);

  // Elements of the walk.
  uint64_t count() const { return count_; }
  // Before the first Next(): whether the walk is 0, 1, ..., count() - 1.
  bool packed() const { return count_ <= 1 || (sizes_.empty() && step_ == 1); }
  // The next element's offset; at most count() calls.
  uint64_t Next() {
    const uint64_t offset = base_ + i_ * step_;
    if (++i_ == run_) NextRun();
    return offset;
  }

 private:
  // Odometer increment over the outer merged dimensions, last fastest.
  void NextRun();

  uint64_t count_ = 1;
  StrideList sizes_, strides_, index_;  // the outer merged dimensions
  uint64_t run_ = 1, step_ = 0;         // the innermost merged dimension
  uint64_t base_ = 0, i_ = 0;
};

// Calls f(input offset, output offset) for every logical element of two
// tensors of one shape, in row-major order; allocates nothing.
template <typename F>
void ForEachElement(const TensorDesc& input, const TensorDesc& output, F&& f) {
  OffsetWalk in(input), out(output);
  for (uint64_t i = 0, n = in.count(); i < n; ++i) {
    const uint64_t a = in.Next();
    f(a, out.Next());
  }
}

// Element offsets of `desc` read at every logical index of a tensor of
// `logical_sizes` (same rank): a dimension where `desc` has size 1 is
// broadcast (offset contribution 0). This is how MVN reads Scale/Bias.
std::vector<uint64_t> BroadcastOffsets(
    const std::vector<uint64_t>& logical_sizes, const TensorDesc& desc);

// INVALID_ARGUMENT unless `payload_size` equals TotalTensorSizeInBytes and
// every element of `desc` lies inside it. `name` is used in the message.
absl::Status CheckPayload(const TensorDesc& desc, size_t payload_size,
                          absl::string_view name);

template <typename T>
T Load(const char* buffer, uint64_t offset) {
  T value;
  std::memcpy(&value, buffer + offset * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void Store(char* buffer, uint64_t offset, T value) {
  std::memcpy(buffer + offset * sizeof(T), &value, sizeof(T));
}

// FLOAT32/FLOAT16 element widened exactly to binary64.
double LoadFloat(DataType type, const char* buffer, uint64_t offset);
// Rounds once (RNE) to FLOAT32/FLOAT16 and stores.
void StoreFloat(DataType type, char* buffer, uint64_t offset, double value);

}  // namespace dmls::cpu

#endif  // DMLSERVE_ENGINE_CPU_TENSOR_ACCESS_H_
