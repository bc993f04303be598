// TensorDesc: the engine's form of DML_BUFFER_TENSOR_DESC, kept close to the
// wire so that the validator can report every malformation (a DimensionCount
// that disagrees with Sizes, sizes above UINT32_MAX, ...). After validation
// the helpers below are safe to use. Plain value type; thread-compatible.
#ifndef DMLSERVE_ENGINE_CORE_TENSOR_DESC_H_
#define DMLSERVE_ENGINE_CORE_TENSOR_DESC_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "engine/core/types.h"

namespace dmls {

struct TensorDesc {
  uint32_t tensor_type = kTensorTypeBuffer;  // DML_TENSOR_TYPE, raw
  uint32_t data_type = 0;                    // DML_TENSOR_DATA_TYPE, raw
  uint32_t flags = kTensorFlagNone;          // DML_TENSOR_FLAGS, raw
  // DimensionCount as sent; nullopt means "sizes.size()".
  std::optional<uint32_t> dimension_count;
  std::vector<uint64_t> sizes;  // elements per dimension
  // Element strides; nullopt is DirectML's NULL (packed row-major).
  std::optional<std::vector<uint64_t>> strides;
  uint64_t total_tensor_size_in_bytes = 0;
  uint64_t guaranteed_base_offset_alignment = 0;

  DataType type() const { return static_cast<DataType>(data_type); }
  uint32_t rank() const {
    return dimension_count ? *dimension_count
                           : static_cast<uint32_t>(sizes.size());
  }
};

// Every field equal (so an absent dimension_count differs from a present
// one of the same value).
bool operator==(const TensorDesc& a, const TensorDesc& b);
inline bool operator!=(const TensorDesc& a, const TensorDesc& b) { return !(a == b); }

// Row-major packed strides for `sizes` (OPERATORS.md §2.2).
std::vector<uint64_t> PackedStrides(const std::vector<uint64_t>& sizes);
// The strides the tensor really uses (explicit, or packed when NULL).
std::vector<uint64_t> EffectiveStrides(const TensorDesc& desc);
// The same strides without a heap allocation up to rank 8 (DirectML's
// largest), for the per-request checks and walks.
using StrideList = absl::InlinedVector<uint64_t, 8>;
StrideList EffectiveStrideList(const TensorDesc& desc);
// Product of sizes, in 64 bits without wrapping (sizes must be < 2^32).
uint64_t ElementCount(const std::vector<uint64_t>& sizes);
// sum((size-1)*stride); the offset of the last logical element.
uint64_t IndexOfLastElement(const TensorDesc& desc);
// DMLCalcBufferTensorSize in exact 64-bit arithmetic (OPERATORS.md §2.4);
// 0 for an unknown data type.
uint64_t CalcBufferTensorSize(DataType type, const std::vector<uint64_t>& sizes,
                              const std::optional<std::vector<uint64_t>>& strides);
// True when two logical elements share one offset (OPERATORS.md §2.3):
// the nesting test, then, for interleaved layouts of up to 2^22 elements,
// the exact StridedOffsetsCollide (work independent of the element count);
// larger interleaved layouts count as overlapping, as in the oracle.
bool HasSelfOverlap(const TensorDesc& desc);
// True when the layout is packed row-major (strides NULL or equal to packed).
bool IsPacked(const TensorDesc& desc);

// A convenience constructor for tests and clients: packed unless strides are
// given, TotalTensorSizeInBytes computed when total is 0.
TensorDesc MakeTensorDesc(DataType type, std::vector<uint64_t> sizes,
                          std::optional<std::vector<uint64_t>> strides = {},
                          uint64_t total = 0);

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_TENSOR_DESC_H_
