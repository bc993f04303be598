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
#include "engine/core/tensor_desc.h"
#include "engine/core/types.h"

namespace dmls::cpu {

// Element offsets of every logical element of `desc`, in logical row-major
// order (last dimension fastest), through its effective strides.
std::vector<uint64_t> ElementOffsets(const TensorDesc& desc);

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
