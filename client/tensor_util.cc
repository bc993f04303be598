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

// The layout of a tensor whose descriptor passed CheckedLayout.
struct Layout {
  uint32_t element = 0;  // bytes
  std::vector<uint64_t> sizes;
  std::vector<uint64_t> strides;  // effective: never empty
  uint64_t count = 0;             // elements
  uint64_t logical_bytes = 0;     // all elements, packed
  uint64_t extent_bytes = 0;      // up to the end of the last element
  uint64_t minimum_bytes = 0;     // MinimumTensorBytes (extent rounded up to 4)
};

// Calls fn(logical_byte, buffer_byte) with each element's offsets in the
// packed logical bytes and in the tensor's buffer, in C order.
template <typename Fn>
void ForEachElement(const Layout& layout, Fn fn) {
  const std::vector<uint64_t>& sizes = layout.sizes;
  const std::vector<uint64_t>& strides = layout.strides;
  std::vector<uint64_t> index(sizes.size(), 0);
  uint64_t offset = 0;
  for (uint64_t n = 0; n < layout.count; ++n) {
    fn(n * layout.element, offset * layout.element);
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

// The layout of `desc` for PackLogical and GatherLogical, after the checks
// both need.
absl::StatusOr<Layout> CheckedLayout(const dmlserve::v1::TensorDesc& desc) {
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
  Layout layout;
  layout.element = size;
  layout.sizes = Sizes(desc);
  layout.strides = EffectiveStrides(desc);
  layout.count = 1;
  uint64_t last = 0;
  for (size_t k = 0; k < layout.sizes.size(); ++k) {
    layout.count *= layout.sizes[k];
    last += (layout.sizes[k] - 1) * layout.strides[k];
  }
  layout.logical_bytes = layout.count * size;
  layout.extent_bytes = (last + 1) * size;
  layout.minimum_bytes =
      MinimumTensorBytes(desc.data_type(), layout.sizes, layout.strides);
  return layout;
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
  absl::StatusOr<Layout> layout = CheckedLayout(desc);
  if (!layout.ok()) return layout.status();
  if (logical.size() != layout->logical_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "logical data has ", logical.size(), " bytes, sizes need ", layout->logical_bytes));
  }
  if (desc.total_tensor_size_in_bytes() < layout->minimum_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "total_tensor_size_in_bytes ", desc.total_tensor_size_in_bytes(),
        " is below ", layout->minimum_bytes));
  }
  std::string buffer(desc.total_tensor_size_in_bytes(), '\0');
  ForEachElement(*layout, [&](uint64_t logical_byte, uint64_t buffer_byte) {
    std::memcpy(&buffer[buffer_byte], &logical[logical_byte], layout->element);
  });
  return buffer;
}

absl::StatusOr<std::string> GatherLogical(const dmlserve::v1::TensorDesc& desc,
                                          absl::string_view buffer) {
  absl::StatusOr<Layout> layout = CheckedLayout(desc);
  if (!layout.ok()) return layout.status();
  // The minimum is rounded up to 4; the last element must still fit.
  if (buffer.size() < layout->extent_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer has ", buffer.size(), " bytes, layout needs ", layout->minimum_bytes));
  }
  std::string logical(layout->logical_bytes, '\0');
  ForEachElement(*layout, [&](uint64_t logical_byte, uint64_t buffer_byte) {
    std::memcpy(&logical[logical_byte], &buffer[buffer_byte], layout->element);
  });
  return logical;
}

}  // namespace dmls::client
