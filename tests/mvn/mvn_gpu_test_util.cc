#include "tests/mvn/mvn_gpu_test_util.h"

#include <utility>

#include "engine/core/execute_sync.h"
#include "engine/d3d12/test_adapter.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/cpu/tensor_access.h"
#include "engine/ops/validator.h"
#include "tests/conformance/tolerance.h"

namespace dmls::mvn_testing {
namespace {

std::vector<double> Logical(const TensorDesc& desc, const std::string& buffer) {
  std::vector<double> out;
  for (uint64_t offset : cpu::ElementOffsets(desc)) {
    out.push_back(cpu::LoadFloat(desc.type(), buffer.data(), offset));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> MakeEngine(const gpu::PlannerOptions& options,
                                                             uint64_t arena_bytes) {
  d3d12::GpuEngineOptions o;
  o.device.kind = d3d12::TestAdapterKind();
  o.poison_outputs = true;
  if (arena_bytes != 0) o.arena_bytes = arena_bytes;
  o.planner = [options](const OperatorDesc& op, bool in_place) {
    return gpu::PlanExecution(op, in_place, options);
  };
  return d3d12::CreateGpuEngine(std::move(o));
}

OperatorDesc Mvn1(DataType type, const std::vector<uint64_t>& sizes,
                  const std::vector<uint64_t>& axes, bool normalize_variance) {
  OperatorDesc op;
  op.type = static_cast<uint32_t>(OperatorType::kMeanVarianceNormalization1);
  op.input = MakeTensorDesc(type, sizes);
  op.output = MakeTensorDesc(type, sizes);
  op.axes = axes;
  op.axis_count = axes.size();
  op.normalize_variance = normalize_variance ? 1 : 0;
  op.epsilon = 1e-5f;
  return op;
}

std::string Payload(const TensorDesc& desc, const std::vector<double>& logical) {
  std::string buffer(desc.total_tensor_size_in_bytes, '\0');
  const std::vector<uint64_t> offsets = cpu::ElementOffsets(desc);
  for (size_t i = 0; i < offsets.size(); ++i) {
    cpu::StoreFloat(desc.type(), buffer.data(), offsets[i], logical[i % logical.size()]);
  }
  return buffer;
}

std::vector<double> RandomValues(size_t n, uint32_t seed, double amplitude, double offset) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = offset + amplitude * (static_cast<double>(seed >> 8) / 8388608.0 - 1.0);
  }
  return v;
}

absl::StatusOr<std::vector<double>> RunGpu(Engine& gpu, const ExecuteRequest& r) {
  absl::StatusOr<ExecuteResult> res = ExecuteSync(gpu, r);
  if (!res.ok()) return res.status();
  return Logical(*r.op.output, res->output);
}

::testing::AssertionResult MatchesCpu(Engine& gpu, const ExecuteRequest& r) {
  const absl::Status valid =
      ops::Validate(r.op, static_cast<uint32_t>(r.feature_level), r.in_place);
  if (!valid.ok()) return ::testing::AssertionFailure() << "invalid: " << valid;
  absl::StatusOr<ExecuteResult> want = CpuEngine::Run(r);
  if (!want.ok()) return ::testing::AssertionFailure() << "CPU: " << want.status();
  absl::StatusOr<std::vector<double>> got = RunGpu(gpu, r);
  if (!got.ok()) return ::testing::AssertionFailure() << "GPU: " << got.status();
  const std::vector<double> expected = Logical(*r.op.output, want->output);
  const DataType type = r.op.output->type();
  absl::StatusOr<conformance::Tolerance> tol = conformance::ToleranceFor("NORMALIZATION", type);
  if (!tol.ok()) return ::testing::AssertionFailure() << tol.status();
  if (got->size() != expected.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!conformance::FloatElementMatches((*got)[i], expected[i], type, *tol)) {
      return ::testing::AssertionFailure()
             << "element " << i << " of " << expected.size() << ": GPU " << (*got)[i]
             << ", CPU " << expected[i];
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace dmls::mvn_testing
