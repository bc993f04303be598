#include "engine/core/tensor_desc.h"

#include <algorithm>
#include <utility>

#include "engine/core/strided_overlap.h"

namespace dmls {

bool operator==(const TensorDesc& a, const TensorDesc& b) {
  return a.tensor_type == b.tensor_type && a.data_type == b.data_type && a.flags == b.flags &&
         a.dimension_count == b.dimension_count && a.sizes == b.sizes &&
         a.strides == b.strides && a.total_tensor_size_in_bytes == b.total_tensor_size_in_bytes &&
         a.guaranteed_base_offset_alignment == b.guaranteed_base_offset_alignment;
}

std::vector<uint64_t> PackedStrides(const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> strides(sizes.size());
  uint64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = acc;
    acc *= sizes[i];
  }
  return strides;
}

std::vector<uint64_t> EffectiveStrides(const TensorDesc& desc) {
  return desc.strides ? *desc.strides : PackedStrides(desc.sizes);
}

StrideList EffectiveStrideList(const TensorDesc& desc) {
  if (desc.strides) return StrideList(desc.strides->begin(), desc.strides->end());
  StrideList strides(desc.sizes.size());
  uint64_t acc = 1;
  for (size_t i = desc.sizes.size(); i-- > 0;) {
    strides[i] = acc;
    acc *= desc.sizes[i];
  }
  return strides;
}

uint64_t ElementCount(const std::vector<uint64_t>& sizes) {
  uint64_t n = 1;
  for (uint64_t s : sizes) n *= s;
  return n;
}

uint64_t IndexOfLastElement(const TensorDesc& desc) {
  const StrideList strides = EffectiveStrideList(desc);
  uint64_t last = 0;
  for (size_t i = 0; i < desc.sizes.size() && i < strides.size(); ++i) {
    if (desc.sizes[i] > 0) last += (desc.sizes[i] - 1) * strides[i];
  }
  return last;
}

uint64_t CalcBufferTensorSize(
    DataType type, const std::vector<uint64_t>& sizes,
    const std::optional<std::vector<uint64_t>>& strides) {
  const uint64_t bits = ElementBits(type);
  if (bits == 0) return 0;
  uint64_t elements;
  if (!strides) {
    elements = ElementCount(sizes);
  } else {
    uint64_t last = 0;
    for (size_t i = 0; i < sizes.size() && i < strides->size(); ++i) {
      if (sizes[i] > 0) last += (sizes[i] - 1) * (*strides)[i];
    }
    elements = last + 1;
  }
  const uint64_t bytes = (elements * bits + 7) / 8;
  return (bytes + 3) & ~uint64_t{3};
}

bool HasSelfOverlap(const TensorDesc& desc) {
  const StrideList strides = EffectiveStrideList(desc);
  absl::InlinedVector<std::pair<uint64_t, uint64_t>, 8> dims;  // (stride, size)
  for (size_t i = 0; i < desc.sizes.size(); ++i) {
    if (desc.sizes[i] > 1) {
      if (strides[i] == 0) return true;
      dims.emplace_back(strides[i], desc.sizes[i]);
    }
  }
  std::sort(dims.begin(), dims.end());
  uint64_t extent = 1;
  bool nested = true;
  for (const auto& [stride, size] : dims) {
    if (stride < extent) {
      nested = false;
      break;
    }
    extent = stride * size;
  }
  if (nested) return false;
  // An interleaved layout. Beyond 2^22 elements the oracle does not decide
  // it and reports an overlap (OPERATORS.md §2.3); so does the validator,
  // so that both agree. An element count that overflows 64 bits counts as
  // beyond.
  uint64_t n = 1;
  bool overflow = false;
  for (uint64_t s : desc.sizes) {
    if (s == 0) return false;  // no elements at all
    overflow |= __builtin_mul_overflow(n, s, &n);
  }
  if (overflow || n > (uint64_t{1} << 22)) return true;
  // Exact, and cheap: not proportional to the element count.
  std::vector<StridedDim> lattice;
  lattice.reserve(dims.size());
  for (const auto& [stride, size] : dims) lattice.push_back({stride, size});
  return StridedOffsetsCollide(lattice);
}

bool IsPacked(const TensorDesc& desc) {
  return !desc.strides || *desc.strides == PackedStrides(desc.sizes);
}

TensorDesc MakeTensorDesc(DataType type, std::vector<uint64_t> sizes,
                          std::optional<std::vector<uint64_t>> strides,
                          uint64_t total) {
  TensorDesc desc;
  desc.data_type = static_cast<uint32_t>(type);
  desc.sizes = std::move(sizes);
  desc.strides = std::move(strides);
  desc.total_tensor_size_in_bytes =
      total ? total : CalcBufferTensorSize(type, desc.sizes, desc.strides);
  return desc;
}

}  // namespace dmls
