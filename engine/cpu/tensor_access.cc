#include "engine/cpu/tensor_access.h"

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "engine/cpu/float16.h"

namespace dmls::cpu {
namespace {

// Offsets of a row-major walk over `sizes` with per-dimension `strides`.
// Dimensions that continue one another in memory (stride[d] ==
// sizes[d+1] * stride[d+1]) and dimensions of size 1 are merged first, so a
// packed tensor is one run of consecutive offsets whatever its rank; the
// odometer then moves once per run of the innermost merged dimension.
// Its working lists are inline (rank <= 8): only the offsets are allocated.
std::vector<uint64_t> WalkOffsets(absl::Span<const uint64_t> sizes,
                                  absl::Span<const uint64_t> strides) {
  uint64_t count = 1;
  for (uint64_t s : sizes) count *= s;
  std::vector<uint64_t> offsets;
  offsets.reserve(count);
  if (count == 0) return offsets;
  StrideList merged_sizes;
  StrideList merged_strides;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (!merged_sizes.empty() &&
        merged_strides.back() == sizes[d] * strides[d]) {
      merged_sizes.back() *= sizes[d];
      merged_strides.back() = strides[d];
      continue;
    }
    merged_sizes.push_back(sizes[d]);
    merged_strides.push_back(strides[d]);
  }
  if (merged_sizes.empty()) {  // a single element
    offsets.push_back(0);
    return offsets;
  }
  const size_t inner = merged_sizes.size() - 1;
  const uint64_t run = merged_sizes[inner];
  const uint64_t step = merged_strides[inner];
  StrideList index(inner, 0);
  uint64_t base = 0;
  for (uint64_t done = 0; done < count; done += run) {
    for (uint64_t i = 0; i < run; ++i) offsets.push_back(base + i * step);
    // Odometer increment over the outer dimensions, last fastest.
    for (size_t d = inner; d-- > 0;) {
      if (++index[d] < merged_sizes[d]) {
        base += merged_strides[d];
        break;
      }
      base -= (merged_sizes[d] - 1) * merged_strides[d];
      index[d] = 0;
    }
  }
  return offsets;
}

}  // namespace

std::vector<uint64_t> ElementOffsets(const TensorDesc& desc) {
  return WalkOffsets(desc.sizes, EffectiveStrideList(desc));
}

std::vector<uint64_t> BroadcastOffsets(
    const std::vector<uint64_t>& logical_sizes, const TensorDesc& desc) {
  StrideList strides = EffectiveStrideList(desc);
  for (size_t d = 0; d < strides.size() && d < desc.sizes.size(); ++d) {
    if (desc.sizes[d] == 1) strides[d] = 0;
  }
  return WalkOffsets(logical_sizes, strides);
}

absl::Status CheckPayload(const TensorDesc& desc, size_t payload_size,
                          absl::string_view name) {
  if (payload_size != desc.total_tensor_size_in_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " payload is ", payload_size,
        " bytes, TotalTensorSizeInBytes is ", desc.total_tensor_size_in_bytes));
  }
  const uint32_t bytes = ElementBytes(desc.type());
  const StrideList strides = EffectiveStrideList(desc);
  if (bytes == 0 || desc.sizes.empty() || strides.size() != desc.sizes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has an unusable tensor description"));
  }
  if (desc.sizes.size() > kTensorDimensionCountMax1) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has too many dimensions"));
  }
  // Element count and last offset computed with overflow checks: an
  // unvalidated descriptor must not wrap around into a "small" tensor.
  uint64_t count = 1;
  uint64_t last = 0;
  for (size_t d = 0; d < desc.sizes.size(); ++d) {
    const uint64_t size = desc.sizes[d];
    if (size == 0 || size > UINT32_MAX || strides[d] > UINT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " has a bad size or stride"));
    }
    uint64_t term;
    if (__builtin_mul_overflow(count, size, &count) ||
        __builtin_mul_overflow(size - 1, strides[d], &term) ||
        __builtin_add_overflow(last, term, &last)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " is too large"));
    }
  }
  if (count > UINT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " has more than 2^32-1 elements"));
  }
  if (last >= payload_size / bytes) {
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
