#include "engine/cpu/tensor_access.h"

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "engine/cpu/float16.h"

namespace dmls::cpu {
namespace {

// OffsetWalk's offsets as a list.
std::vector<uint64_t> WalkOffsets(absl::Span<const uint64_t> sizes,
                                  absl::Span<const uint64_t> strides) {
  OffsetWalk walk(sizes, strides);
  std::vector<uint64_t> offsets;
  offsets.reserve(walk.count());
  for (uint64_t i = 0; i < walk.count(); ++i) offsets.push_back(walk.Next());
  return offsets;
}

}  // namespace

OffsetWalk::OffsetWalk(const TensorDesc& desc)
    : OffsetWalk(desc.sizes, EffectiveStrideList(desc)) {}

OffsetWalk::OffsetWalk(absl::Span<const uint64_t> sizes, absl::Span<const uint64_t> strides) {
  for (uint64_t s : sizes) count_ *= s;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (!sizes_.empty() && strides_.back() == sizes[d] * strides[d]) {
      sizes_.back() *= sizes[d];
      strides_.back() = strides[d];
      continue;
    }
    sizes_.push_back(sizes[d]);
    strides_.push_back(strides[d]);
  }
  if (sizes_.empty()) return;  // a single element (or none): one run of 1
  run_ = sizes_.back();
  step_ = strides_.back();
  sizes_.pop_back();
  strides_.pop_back();
  index_.assign(sizes_.size(), 0);
}

void OffsetWalk::NextRun() {
  i_ = 0;
  for (size_t d = sizes_.size(); d-- > 0;) {
    if (++index_[d] < sizes_[d]) {
      base_ += strides_[d];
      return;
    }
    base_ -= (sizes_[d] - 1) * strides_[d];
    index_[d] = 0;
  }
}

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
