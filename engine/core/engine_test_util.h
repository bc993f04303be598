// Helpers shared by the engines' unit tests (cpu, sched, d3d12): build
// requests for one operator and read an engine's named counters.
// Test-only; header-only; thread-compatible.
#ifndef DMLSERVE_ENGINE_CORE_ENGINE_TEST_UTIL_H_
#define DMLSERVE_ENGINE_CORE_ENGINE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>

#include "engine/core/engine.h"
#include "engine/core/execute_request.h"
#include "engine/core/tensor_desc.h"
#include "gtest/gtest.h"

namespace dmls::core::testing {

// A request for operator `type` from `in` to `out`; every other field keeps
// its default and the payloads are empty.
inline ExecuteRequest OpRequest(OperatorType type, TensorDesc in,
                                TensorDesc out) {
  ExecuteRequest r;
  r.op.type = static_cast<uint32_t>(type);
  r.op.input = std::move(in);
  r.op.output = std::move(out);
  return r;
}

// OpRequest over one packed FLOAT32 tensor of `elements` values (input and
// output alike) with an input payload of bytes `fill`.
inline ExecuteRequest Float32Request(OperatorType type, uint64_t elements,
                                     char fill = '\0') {
  TensorDesc t = MakeTensorDesc(DataType::kFloat32, {elements});
  ExecuteRequest r = OpRequest(type, t, t);
  r.input = std::string(t.total_tensor_size_in_bytes, fill);
  return r;
}

// The value of the engine's counter `name`; a missing counter fails the
// test and reads as 0.
inline uint64_t Counter(const Engine& engine, const std::string& name) {
  for (const auto& [n, v] : engine.Counters()) {
    if (n == name) return v;
  }
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

}  // namespace dmls::core::testing

#endif  // DMLSERVE_ENGINE_CORE_ENGINE_TEST_UTIL_H_
