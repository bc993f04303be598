// Tests of the runner itself: it must load the corpus, pass a conforming
// engine and catch engines that are wrong in each way that matters.
#include "tests/conformance/corpus.h"

#include <cstring>
#include <functional>
#include <set>

#include "engine/cpu/cpu_engine.h"
#include "engine/cpu/tensor_access.h"
#include "engine/ops/validator.h"
#include "gtest/gtest.h"

namespace dmls::conformance {
namespace {

// Runs the CPU engine inline and lets a test tamper with the result.
class TamperingEngine : public Engine {
 public:
  using Tamper = std::function<void(const ExecuteRequest&, ExecuteResult&)>;
  explicit TamperingEngine(Tamper tamper) : tamper_(std::move(tamper)) {}
  DeviceInfo device_info() const override { return {}; }
  void Execute(ExecuteRequest request, ExecuteCallback done) override {
    absl::StatusOr<ExecuteResult> result = CpuEngine::Run(request);
    if (result.ok()) tamper_(request, *result);
    done(std::move(result));
  }

 private:
  Tamper tamper_;
};

const CaseSet& Corpus() {
  static const CaseSet* corpus = [] {
    absl::StatusOr<CaseSet> set = LoadCorpusDir(DMLS_CONFORMANCE_DATA_DIR);
    EXPECT_TRUE(set.ok()) << set.status();
    return new CaseSet(set.ok() ? *std::move(set) : CaseSet());
  }();
  return *corpus;
}

// A subset that runs fast: every 7th case.
CaseSet Sample() {
  CaseSet sample;
  for (int i = 0; i < Corpus().cases_size(); i += 7) {
    *sample.add_cases() = Corpus().cases(i);
  }
  return sample;
}

TEST(Corpus, LoadsEveryFileWithUniqueIds) {
  ASSERT_GT(Corpus().cases_size(), 500);
  std::set<std::string> ids;
  for (const Case& c : Corpus().cases()) {
    EXPECT_TRUE(ids.insert(c.id()).second) << c.id();
    EXPECT_FALSE(c.expected().empty()) << c.id();
  }
  EXPECT_FALSE(LoadCorpusDir("/nonexistent").ok());
}

// Every case is valid per the oracle; the C++ validator must agree (this
// also checks the proto mapping of every operator, parameter and layout).
TEST(Corpus, EveryCasePassesTheValidator) {
  for (const Case& c : Corpus().cases()) {
    const ExecuteRequest r = RequestFromCase(c);
    const absl::Status status =
        ops::Validate(r.op, static_cast<uint32_t>(r.feature_level), r.in_place);
    EXPECT_TRUE(status.ok()) << c.id() << ": " << status;
  }
}

TEST(Corpus, UntouchedResultsPass) {
  TamperingEngine engine([](const ExecuteRequest&, ExecuteResult&) {});
  CorpusReport report = RunCorpus(engine, Sample());
  EXPECT_GT(report.total, 50);
  EXPECT_EQ(report.passed, report.total) << report.Summary();
}

TEST(Corpus, CorruptedElementsAreCaught) {
  // Flip the low mantissa/value bits of the first output element by more
  // than any budget allows.
  TamperingEngine engine([](const ExecuteRequest& r, ExecuteResult& result) {
    const uint32_t size = ElementBytes(r.op.output->type());
    const uint64_t offset = cpu::ElementOffsets(*r.op.output)[0];
    result.output[offset * size + size - 1] ^= 0x40;  // sign/exponent byte
  });
  CorpusReport report = RunCorpus(engine, Sample());
  // A few elements (NaN) survive the flip; almost every case must fail.
  EXPECT_GT(report.failures.size(), static_cast<size_t>(report.total * 9 / 10))
      << report.Summary();
}

TEST(Corpus, WrongBufferSizeAndErrorsAreCaught) {
  TamperingEngine shorter([](const ExecuteRequest&, ExecuteResult& result) {
    result.output.pop_back();
  });
  CorpusReport report = RunCorpus(shorter, Sample());
  EXPECT_EQ(report.passed, 0);
  ASSERT_FALSE(report.failures.empty());
  EXPECT_NE(report.failures[0].message.find("bytes"), std::string::npos);

  class FailingEngine : public Engine {
    DeviceInfo device_info() const override { return {}; }
    void Execute(ExecuteRequest, ExecuteCallback done) override {
      done(absl::InternalError("boom"));
    }
  } failing;
  report = RunCorpus(failing, Sample());
  EXPECT_EQ(report.passed, 0);
  EXPECT_EQ(report.failures.size(), static_cast<size_t>(report.total));
}

TEST(Corpus, PaddingIsNotCompared) {
  // Scribble over every byte that is not an output element: still passes.
  TamperingEngine engine([](const ExecuteRequest& r, ExecuteResult& result) {
    const uint32_t size = ElementBytes(r.op.output->type());
    std::string keep(result.output.size(), 0);
    for (uint64_t o : cpu::ElementOffsets(*r.op.output)) {
      for (uint32_t b = 0; b < size; ++b) keep[o * size + b] = 1;
    }
    for (size_t i = 0; i < result.output.size(); ++i) {
      if (!keep[i]) result.output[i] = '\x7f';
    }
  });
  CorpusReport report = RunCorpus(engine, Sample());
  EXPECT_EQ(report.passed, report.total) << report.Summary();
}

TEST(Corpus, FilterAndRelaxedNan) {
  TamperingEngine engine([](const ExecuteRequest&, ExecuteResult&) {});
  RunOptions options;
  options.id_filter = "mvn1/";
  CorpusReport report = RunCorpus(engine, Corpus(), options);
  EXPECT_GT(report.total, 20);
  EXPECT_LT(report.total, Corpus().cases_size());

  // An engine whose max propagates NaN returns NaN where the oracle
  // expects Min: such a result fails unless the case is relaxed.
  int sensitive = 0;
  for (const Case& c : Corpus().cases()) sensitive += c.nan_sensitive();
  EXPECT_GT(sensitive, 10);
  const Case* thr = nullptr;
  for (const Case& c : Corpus().cases()) {
    if (c.nan_sensitive() && c.id().rfind("threshold/FLOAT32", 0) == 0) {
      thr = &c;
      break;
    }
  }
  ASSERT_NE(thr, nullptr);
  ExecuteRequest request = RequestFromCase(*thr);
  absl::StatusOr<ExecuteResult> result = CpuEngine::Run(request);
  ASSERT_TRUE(result.ok());
  for (uint64_t o : cpu::ElementOffsets(*request.op.output)) {
    cpu::Store<float>(result->output.data(), o, NAN);
  }
  EXPECT_TRUE(CheckResult(*thr, request.op, request.in_place, result));
  RunOptions relaxed;
  relaxed.relax_nan_sensitive = true;
  EXPECT_FALSE(
      CheckResult(*thr, request.op, request.in_place, result, relaxed));
}

}  // namespace
}  // namespace dmls::conformance
