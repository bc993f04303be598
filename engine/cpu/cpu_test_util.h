// Helpers shared by the CPU engine's unit tests: build payloads from logical
// values and read output elements back through a tensor's strides.
// Test-only; header-only; thread-compatible.
#ifndef DMLSERVE_ENGINE_CPU_CPU_TEST_UTIL_H_
#define DMLSERVE_ENGINE_CPU_CPU_TEST_UTIL_H_

#include <cstring>
#include <string>
#include <vector>

#include "engine/core/tensor_desc.h"
#include "engine/cpu/tensor_access.h"

namespace dmls::cpu::testing {

// A payload of desc.total_tensor_size_in_bytes bytes filled with `fill`,
// holding `logical` (row-major, of element type T) at the tensor's offsets.
template <typename T>
std::string MakePayload(const TensorDesc& desc, const std::vector<T>& logical,
                        char fill = '\x5a') {
  std::string buffer(desc.total_tensor_size_in_bytes, fill);
  const std::vector<uint64_t> offsets = ElementOffsets(desc);
  for (size_t i = 0; i < offsets.size(); ++i) {
    Store<T>(buffer.data(), offsets[i], logical[i % logical.size()]);
  }
  return buffer;
}

// The logical elements (row-major) of `desc` read from `buffer`.
template <typename T>
std::vector<T> ReadLogical(const TensorDesc& desc, const std::string& buffer) {
  std::vector<T> out;
  for (uint64_t offset : ElementOffsets(desc)) {
    out.push_back(Load<T>(buffer.data(), offset));
  }
  return out;
}

}  // namespace dmls::cpu::testing

#endif  // DMLSERVE_ENGINE_CPU_CPU_TEST_UTIL_H_
