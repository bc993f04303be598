// The whole oracle-generated corpus on the reference CPU engine: every case
// must pass (OPERATORS.md §8 tolerances, minNum/maxNum NaN rules). The CPU
// engine never flushes denormals, so the §7.5 flushed-input alternative
// (expected_ftz) is not accepted here: it must give the exact result.
#include "engine/cpu/cpu_engine.h"
#include "gtest/gtest.h"
#include "tests/conformance/corpus.h"

namespace dmls::conformance {
namespace {

TEST(ConformanceCpu, EveryCasePasses) {
  absl::StatusOr<CaseSet> corpus = LoadCorpusDir(DMLS_CONFORMANCE_DATA_DIR);
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  CpuEngine engine(CpuEngineOptions{2});
  RunOptions options;
  options.max_in_flight = 8;
  options.accept_ftz = false;
  const CorpusReport report = RunCorpus(engine, *corpus, options);
  EXPECT_EQ(report.total, corpus->cases_size());
  EXPECT_TRUE(report.failures.empty()) << report.Summary();
  EXPECT_EQ(report.passed, report.total) << report.Summary();
}

// The reference engine computes what the oracle computes (binary64, one
// rounding), so it must agree exactly -- the EXACT class: equal values, with
// only +0/-0, NaN payloads and flushed FLOAT32 denormals let through -- not
// just within the operator's §8 budget.
TEST(ConformanceCpu, BitExactWithTheOracle) {
  absl::StatusOr<CaseSet> corpus = LoadCorpusDir(DMLS_CONFORMANCE_DATA_DIR);
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  CpuEngine engine(CpuEngineOptions{2});
  RunOptions options;
  options.max_in_flight = 8;
  options.tolerance_override = "EXACT";
  options.accept_ftz = false;
  const CorpusReport report = RunCorpus(engine, *corpus, options);
  EXPECT_EQ(report.passed, report.total) << report.Summary();
}

}  // namespace
}  // namespace dmls::conformance
