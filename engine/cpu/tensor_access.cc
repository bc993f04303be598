#include "engine/cpu/tensor_access.h"

#include "absl/strings/str_cat.h"
#include "engine/cpu/float16.h"

namespace dmls::cpu {
namespace {

// Offsets of a row-major walk over `sizes` with per-dimension `strides`.
std::vector<uint64_t> WalkOffsets(const std::vector<uint64_t>& sizes,
                                  const std::vector<uint64_t>& strides) {
  const uint64_t count = ElementCount(sizes);
  std::vector<uint64_t> offsets;
  offsets.reserve(count);
  std::vector<uint64_t> index(sizes.size(), 0);
  uint64_t offset = 0;
  for (uint64_t e = 0; e < count; ++e) {
    offsets.push_back(offset);
    // Odometer increment, last dimension fastest.
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) {
        offset += strides[d];
        break;
      }
      offset -= (sizes[d] - 1) * strides[d];
      index[d] = 0;
    }
  }
  return offsets;
}

}  // namespace

std::vector<uint64_t> ElementOffsets(const TensorDesc& desc) {
  return WalkOffsets(desc.sizes, EffectiveStrides(desc));
}

std::vector<uint64_t> BroadcastOffsets(const std::vector<uint64_t>& logical_sizes,
                                       const TensorDesc& desc) {
  std::vector<uint64_t> strides = EffectiveStrides(desc);
  for (size_t d = 0; d < strides.size() && d < desc.sizes.size(); ++d) {
    if (desc.sizes[d] == 1) strides[d] = 0;
  }
  return WalkOffsets(logical_sizes, strides);
}

absl::Status CheckPayload(const TensorDesc& desc, size_t payload_size,
                          absl::string_view name) {
  if (payload_size != desc.total_tensor_size_in_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " payload is ", payload_size,
                     " bytes, TotalTensorSizeInBytes is ",
                     desc.total_tensor_size_in_bytes));
  }
  const uint32_t bytes = ElementBytes(desc.type());
  const std::vector<uint64_t> strides = EffectiveStrides(desc);
  if (bytes == 0 || desc.sizes.empty() || strides.size() != desc.sizes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has an unusable tensor description"));
  }
  for (uint64_t s : desc.sizes) {
    if (s == 0 || s > UINT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(name, " has a bad size"));
    }
  }
  for (uint64_t s : strides) {
    if (s > UINT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(name, " has a bad stride"));
    }
  }
  // Sizes and strides are below 2^32 and there are at most a few dozen
  // dimensions, so this sum cannot wrap in practice; still compare in bytes
  // against the payload, which is what protects the reads.
  const uint64_t last = IndexOfLastElement(desc);
  if ((last + 1) > payload_size / bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " elements reach beyond its ", payload_size, "-byte payload"));
  }
  return absl::OkStatus();
}

double LoadFloat(DataType type, const char* buffer, uint64_t offset) {
  if (type == DataType::kFloat16) {
    return HalfBitsToDouble(Load<uint16_t>(buffer, offset));
  }
  return static_cast<double>(Load<float>(buffer, offset));
}

void StoreFloat(DataType type, char* buffer, uint64_t offset, double value) {
  if (type == DataType::kFloat16) {
    Store<uint16_t>(buffer, offset, DoubleToHalfBits(value));
  } else {
    Store<float>(buffer, offset, static_cast<float>(value));
  }
}

}  // namespace dmls::cpu
