// Helpers of the MVN GPU tests: build MVN1 requests from logical values,
// run them on a GpuEngine with chosen planner options and on the CPU
// engine (the reference), and compare every output element with the §8
// NORMALIZATION tolerance. Test-only; thread-compatible.
#ifndef DMLSERVE_TESTS_MVN_MVN_GPU_TEST_UTIL_H_
#define DMLSERVE_TESTS_MVN_MVN_GPU_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/d3d12/dxbc_engine.h"
#include "engine/plan/planner.h"
#include "gtest/gtest.h"

namespace dmls::mvn_testing {

// A GpuEngine (software adapter, or the GPU with
// DMLS_KERNELS_TEST_ADAPTER=gpu) whose planner uses `options`, with
// poisoned outputs (an unwritten element reads back as NaN); `arena_bytes`
// (nonzero) sets its arena size (requests above half of it take dedicated
// buffers and views).
absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> MakeEngine(const gpu::PlannerOptions& options,
                                                             uint64_t arena_bytes = 0);

// MVN1 over `axes` of a packed tensor, Epsilon 1e-5.
OperatorDesc Mvn1(DataType type, const std::vector<uint64_t>& sizes,
                  const std::vector<uint64_t>& axes, bool normalize_variance = true);

// A payload for `desc` holding `logical` (row-major; repeated when shorter)
// at its element offsets, rounded to its type; other bytes 0.
std::string Payload(const TensorDesc& desc, const std::vector<double>& logical);

// n pseudo-random values in offset + [-amplitude, amplitude).
std::vector<double> RandomValues(size_t n, uint32_t seed, double amplitude, double offset = 0);

// Validates `r.op`, runs it on `gpu` and on the CPU engine and compares
// every logical output element (NaN matches NaN, infinities exactly).
::testing::AssertionResult MatchesCpu(Engine& gpu, const ExecuteRequest& r);

// The GPU's logical output elements of `r`, widened to double.
absl::StatusOr<std::vector<double>> RunGpu(Engine& gpu, const ExecuteRequest& r);

}  // namespace dmls::mvn_testing

#endif  // DMLSERVE_TESTS_MVN_MVN_GPU_TEST_UTIL_H_
