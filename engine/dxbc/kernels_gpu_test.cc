// Every corpus case (element-wise ops on every type and layout, MVN/MVN1
// with every fused activation, edge values, large tensors) executed with
// this directory's kernels and plans on the Direct3D 12 engine's software
// adapter, compared with the float64 oracle under OPERATORS.md §8.
// DMLS_KERNELS_TEST_ADAPTER=gpu runs it on the hardware GPU instead (the
// H200 check: lavapipe accepts some usage NVIDIA's driver may not), and
// DMLS_CONFORMANCE_DATA_DIR overrides the corpus directory for binaries
// copied to another machine.
#include <cstdlib>
#include <memory>
#include <string>

#include "engine/d3d12/dxbc_engine.h"
#include "gtest/gtest.h"
#include "tests/conformance/corpus.h"

namespace dmls::gpu {
namespace {

TEST(KernelsGpuTest, CorpusPassesOnSoftwareAdapter) {
  const char* dir = std::getenv("DMLS_CONFORMANCE_DATA_DIR");
  absl::StatusOr<conformance::CaseSet> corpus =
      conformance::LoadCorpusDir(dir ? dir : DMLS_CONFORMANCE_DATA_DIR);
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  ASSERT_GT(corpus->cases_size(), 0);
  d3d12::GpuEngineOptions o;
  const char* adapter = std::getenv("DMLS_KERNELS_TEST_ADAPTER");
  o.device.kind = adapter && std::string(adapter) == "gpu" ? d3d12::DeviceOptions::Kind::kGpu
                                                           : d3d12::DeviceOptions::Kind::kSoftware;
  absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine = d3d12::CreateGpuEngine(std::move(o));
  ASSERT_TRUE(engine.ok()) << engine.status();
  conformance::RunOptions options;
  options.max_in_flight = 8;
  const conformance::CorpusReport report = conformance::RunCorpus(**engine, *corpus, options);
  EXPECT_EQ(report.total, corpus->cases_size());
  EXPECT_EQ(report.passed, report.total) << report.Summary(40);
}

}  // namespace
}  // namespace dmls::gpu
