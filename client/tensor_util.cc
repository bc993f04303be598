#include "client/tensor_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace dmls::client {
namespace {

using dmlserve::v1::DataType;

struct TypeInfo {
  DataType type;
  uint32_t size;
  const char* descr;
};

constexpr TypeInfo kTypes[] = {
    {dmlserve::v1::DATA_TYPE_FLOAT32, 4, "<f4"},
    {dmlserve::v1::DATA_TYPE_FLOAT16, 2, "<f2"},
    {dmlserve::v1::DATA_TYPE_UINT32, 4, "<u4"},
    {dmlserve::v1::DATA_TYPE_UINT16, 2, "<u2"},
    {dmlserve::v1::DATA_TYPE_UINT8, 1, "<u1"},
    {dmlserve::v1::DATA_TYPE_INT32, 4, "<i4"},
    {dmlserve::v1::DATA_TYPE_INT16, 2, "<i2"},
    {dmlserve::v1::DATA_TYPE_INT8, 1, "<i1"},
    {dmlserve::v1::DATA_TYPE_FLOAT64, 8, "<f8"},
    {dmlserve::v1::DATA_TYPE_UINT64, 8, "<u8"},
    {dmlserve::v1::DATA_TYPE_INT64, 8, "<i8"},
};

const TypeInfo* Find(int data_type) {
  for (const TypeInfo& t : kTypes) {
    if (t.type == data_type) return &t;
  }
  return nullptr;
}

std::vector<uint64_t> Sizes(const dmlserve::v1::TensorDesc& desc) {
  return {desc.sizes().begin(), desc.sizes().end()};
}

// Calls fn(logical_index, element_offset) for every element in C order.
template <typename Fn>
void ForEachElement(const std::vector<uint64_t>& sizes,
                    const std::vector<uint64_t>& strides, Fn fn) {
  uint64_t count = 1;
  for (uint64_t s : sizes) count *= s;
  std::vector<uint64_t> index(sizes.size(), 0);
  uint64_t offset = 0;
  for (uint64_t n = 0; n < count; ++n) {
    fn(n, offset);
    // Odometer increment, last dimension fastest.
    for (size_t k = sizes.size(); k-- > 0;) {
      if (++index[k] < sizes[k]) {
        offset += strides[k];
        break;
      }
      offset -= (sizes[k] - 1) * strides[k];
      index[k] = 0;
    }
  }
}

// Common checks of PackLogical and GatherLogical.
absl::StatusOr<uint32_t> CheckedElementSize(
    const dmlserve::v1::TensorDesc& desc) {
  const uint32_t size = DataTypeSize(desc.data_type());
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("data type ", desc.data_type(), " has no byte size"));
  }
  if (desc.sizes_size() == 0) {
    return absl::InvalidArgumentError("tensor has no sizes");
  }
  if (desc.strides_size() != 0 && desc.strides_size() != desc.sizes_size()) {
    return absl::InvalidArgumentError("strides and sizes differ in length");
  }
  return size;
}

}  // namespace

uint32_t DataTypeSize(int data_type) {
  const TypeInfo* t = Find(data_type);
  return t == nullptr ? 0 : t->size;
}

std::string NpyDescrFor(int data_type) {
  const TypeInfo* t = Find(data_type);
  return t == nullptr ? "" : t->descr;
}

DataType DataTypeForNpyDescr(absl::string_view descr) {
  for (const TypeInfo& t : kTypes) {
    if (descr == t.descr) return t.type;
  }
  return dmlserve::v1::DATA_TYPE_UNKNOWN;
}

std::vector<uint64_t> PackedStrides(const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> strides(sizes.size(), 1);
  for (size_t k = sizes.size(); k-- > 1;) strides[k - 1] = strides[k] * sizes[k];
  return strides;
}

std::vector<uint64_t> EffectiveStrides(const dmlserve::v1::TensorDesc& desc) {
  if (desc.strides_size() == 0) return PackedStrides(Sizes(desc));
  return {desc.strides().begin(), desc.strides().end()};
}

uint64_t MinimumTensorBytes(int data_type, const std::vector<uint64_t>& sizes,
                            const std::vector<uint64_t>& strides) {
  const uint64_t element = DataTypeSize(data_type);
  uint64_t elements = 0;
  if (strides.empty()) {
    elements = 1;
    for (uint64_t s : sizes) elements *= s;
  } else {
    uint64_t last = 0;
    for (size_t k = 0; k < sizes.size() && k < strides.size(); ++k) {
      last += (sizes[k] - 1) * strides[k];
    }
    elements = last + 1;
  }
  return (elements * element + 3) & ~uint64_t{3};
}

dmlserve::v1::TensorDesc MakePackedTensorDesc(DataType data_type,
                                              const std::vector<uint64_t>& sizes) {
  return MakeStridedTensorDesc(data_type, sizes, {});
}

dmlserve::v1::TensorDesc MakeStridedTensorDesc(
    DataType data_type, const std::vector<uint64_t>& sizes,
    const std::vector<uint64_t>& strides) {
  dmlserve::v1::TensorDesc desc;
  desc.set_data_type(data_type);
  for (uint64_t s : sizes) desc.add_sizes(s);
  for (uint64_t s : strides) desc.add_strides(s);
  desc.set_total_tensor_size_in_bytes(
      MinimumTensorBytes(data_type, sizes, strides));
  return desc;
}

absl::StatusOr<std::string> PackLogical(const dmlserve::v1::TensorDesc& desc,
                                        absl::string_view logical) {
  absl::StatusOr<uint32_t> element = CheckedElementSize(desc);
  if (!element.ok()) return element.status();
  const std::vector<uint64_t> sizes = Sizes(desc);
  const std::vector<uint64_t> strides = EffectiveStrides(desc);
  uint64_t count = 1;
  for (uint64_t s : sizes) count *= s;
  if (logical.size() != count * *element) {
    return absl::InvalidArgumentError(
        absl::StrCat("logical data has ", logical.size(), " bytes, sizes need ",
                     count * *element));
  }
  const uint64_t minimum = MinimumTensorBytes(desc.data_type(), sizes,
                                              {strides.begin(), strides.end()});
  if (desc.total_tensor_size_in_bytes() < minimum) {
    return absl::InvalidArgumentError(
        absl::StrCat("total_tensor_size_in_bytes ",
                     desc.total_tensor_size_in_bytes(), " is below ", minimum));
  }
  std::string buffer(desc.total_tensor_size_in_bytes(), '\0');
  ForEachElement(sizes, strides, [&](uint64_t n, uint64_t offset) {
    std::memcpy(&buffer[offset * *element], &logical[n * *element], *element);
  });
  return buffer;
}

absl::StatusOr<std::string> GatherLogical(const dmlserve::v1::TensorDesc& desc,
                                          absl::string_view buffer) {
  absl::StatusOr<uint32_t> element = CheckedElementSize(desc);
  if (!element.ok()) return element.status();
  const std::vector<uint64_t> sizes = Sizes(desc);
  const std::vector<uint64_t> strides = EffectiveStrides(desc);
  const uint64_t minimum = MinimumTensorBytes(desc.data_type(), sizes, strides);
  // The minimum is rounded up to 4; the last element must still fit.
  uint64_t last = 0;
  for (size_t k = 0; k < sizes.size(); ++k) last += (sizes[k] - 1) * strides[k];
  if (buffer.size() < (last + 1) * *element) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer has ", buffer.size(), " bytes, layout needs ",
                     minimum));
  }
  uint64_t count = 1;
  for (uint64_t s : sizes) count *= s;
  std::string logical(count * *element, '\0');
  ForEachElement(sizes, strides, [&](uint64_t n, uint64_t offset) {
    std::memcpy(&logical[n * *element], &buffer[offset * *element], *element);
  });
  return logical;
}

}  // namespace dmls::client
