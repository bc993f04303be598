// Client-side helpers for dmlserve.v1.TensorDesc payloads: build packed
// descriptors, scatter a logical (C-order) array into a tensor's buffer range
// through its strides, and gather the logical elements back out of a returned
// buffer. The server defines the layout (dmlserve.proto, TensorDesc): the
// element at logical index (i0..in-1) sits at element offset
// sum_k(ik * strides[k]) of a buffer of total_tensor_size_in_bytes bytes.
// Stateless free functions: thread-safe.
#ifndef DMLSERVE_CLIENT_TENSOR_UTIL_H_
#define DMLSERVE_CLIENT_TENSOR_UTIL_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "dmlserve/v1/dmlserve.pb.h"

namespace dmls::client {

// Bytes per element of a data type; 0 for UNKNOWN, the 4-bit types and
// values outside the enum.
uint32_t DataTypeSize(int data_type);

// The NumPy descr of a data type ("<f4"), or "" when .npy has no match.
std::string NpyDescrFor(int data_type);
// The data type of a NumPy descr; DATA_TYPE_UNKNOWN when unsupported.
dmlserve::v1::DataType DataTypeForNpyDescr(absl::string_view descr);

// Row-major strides of `sizes` (OPERATORS.md §2.2).
std::vector<uint64_t> PackedStrides(const std::vector<uint64_t>& sizes);

// The strides the layout uses: explicit ones, or packed when absent.
std::vector<uint64_t> EffectiveStrides(const dmlserve::v1::TensorDesc& desc);

// DMLCalcBufferTensorSize (OPERATORS.md §2.4), 64-bit, rounded up to 4.
uint64_t MinimumTensorBytes(int data_type, const std::vector<uint64_t>& sizes,
                            const std::vector<uint64_t>& strides);

// A packed descriptor with total_tensor_size_in_bytes at its minimum.
dmlserve::v1::TensorDesc MakePackedTensorDesc(dmlserve::v1::DataType data_type,
                                              const std::vector<uint64_t>& sizes);

// A descriptor with explicit strides; total size at its minimum.
dmlserve::v1::TensorDesc MakeStridedTensorDesc(
    dmlserve::v1::DataType data_type, const std::vector<uint64_t>& sizes,
    const std::vector<uint64_t>& strides);

// Builds the payload of `desc` from `logical`, product(sizes) elements in
// C order: a zero-filled buffer of total_tensor_size_in_bytes with each
// element written at its strided offset. With zero strides (broadcast) the
// last element written to a shared offset wins, so callers pass logical data
// that agrees along broadcast dimensions.
absl::StatusOr<std::string> PackLogical(const dmlserve::v1::TensorDesc& desc,
                                        absl::string_view logical);

// The inverse: reads the product(sizes) logical elements of `desc` out of
// `buffer` (at least the minimum size) in C order.
absl::StatusOr<std::string> GatherLogical(const dmlserve::v1::TensorDesc& desc,
                                          absl::string_view buffer);

}  // namespace dmls::client

#endif  // DMLSERVE_CLIENT_TENSOR_UTIL_H_
