#include "server/kserve/model_statistics.h"

#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "engine/cpu/cpu_engine.h"
#include "gtest/gtest.h"
#include "server/kserve/infer_runner.h"
#include "server/testing/test_requests.h"

namespace dmls::server::kserve {
namespace {

using inference::ModelInferRequest;
using inference::ModelStatistics;
using inference::ModelStatisticsResponse;

ModelStatistics Row(const ModelStatisticsTable& table, const std::string& model) {
  ModelStatisticsResponse response;
  EXPECT_TRUE(table.Report(model, &response));
  EXPECT_EQ(response.model_stats_size(), 1);
  return response.model_stats_size() == 1 ? response.model_stats(0) : ModelStatistics();
}

TEST(ModelStatisticsTableTest, SumsTheTimingOfEachInference) {
  const ModelCatalog catalog(kHighestFeatureLevel);
  ModelStatisticsTable table(&catalog);
  const ModelEntry& celu = *catalog.Find("activation_celu");
  const absl::Time end = absl::FromUnixMillis(1'700'000'000'000);
  // Three requests coalesced into one execution, then one alone.
  for (int i = 0; i < 4; ++i) {
    ExecuteTiming t;
    t.input = absl::Microseconds(1);
    t.queued = absl::Microseconds(10);
    t.run = absl::Microseconds(100);
    t.output = absl::Microseconds(30);
    t.execution_requests = i < 3 ? 3 : 1;
    t.counts_execution = i == 0 || i == 3;
    table.RecordSuccess(celu, t, absl::Microseconds(200), end);
  }
  table.RecordFailure(celu, absl::Microseconds(50), end + absl::Milliseconds(1));
  // An engine that says nothing of its executions: each request is one.
  table.RecordSuccess(*catalog.Find("activation_relu"), ExecuteTiming{}, absl::Microseconds(9),
                      end);
  EXPECT_EQ(Row(table, "activation_relu").execution_count(), 1u);

  const ModelStatistics row = Row(table, "activation_celu");
  EXPECT_EQ(row.name(), "activation_celu");
  EXPECT_EQ(row.version(), "1");
  EXPECT_EQ(row.inference_count(), 4u);
  EXPECT_EQ(row.execution_count(), 2u);
  EXPECT_EQ(row.last_inference(), 1'700'000'000'001u);
  const inference::InferStatistics& s = row.inference_stats();
  // (count, ns) of each duration; the output copy is part of the run:
  // compute_infer is the rest of it.
  auto pair = [](const inference::StatisticDuration& d) {
    return std::make_pair(d.count(), d.ns());
  };
  using P = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(pair(s.success()), P(4, 800'000));
  EXPECT_EQ(pair(s.fail()), P(1, 50'000));
  EXPECT_EQ(pair(s.queue()), P(4, 40'000));
  EXPECT_EQ(pair(s.compute_input()), P(4, 4'000));
  EXPECT_EQ(pair(s.compute_infer()), P(4, 280'000));
  EXPECT_EQ(pair(s.compute_output()), P(4, 120'000));

  // Other models are untouched; an unknown name is reported as such.
  EXPECT_EQ(Row(table, "activation_celu_fp16").inference_stats().success().count(), 0u);
  ModelStatisticsResponse none;
  EXPECT_FALSE(table.Report("no_such_model", &none));
  ModelStatisticsResponse every;
  EXPECT_TRUE(table.Report("", &every));
  EXPECT_EQ(every.model_stats_size(), static_cast<int>(catalog.models().size()));
}

// One worker; no admission of its own (the processor admits, as in the
// server).
CpuEngineOptions OneWorker() {
  CpuEngineOptions options;
  options.threads = 1;
  options.scheduler.admission = std::nullopt;
  return options;
}

// ModelInfer requests through the request processor and a CPU engine (its
// scheduler and runner): the table holds what the engine measured.
class InferStatisticsTest : public ::testing::Test {
 protected:
  InferStatisticsTest()
      : engine_(OneWorker()),
        processor_(&engine_, ProcessorOptions{}, testing::NullLogger()),
        catalog_(kHighestFeatureLevel),
        table_(&catalog_),
        runner_(&catalog_, &processor_, &table_) {}
  ~InferStatisticsTest() override { engine_.Shutdown(); }

  static ModelInferRequest Celu(int64_t rows, bool with_alpha = true) {
    ModelInferRequest r;
    r.set_model_name("activation_celu");
    auto* input = r.add_inputs();
    input->set_name("input");
    input->set_datatype("FP32");
    input->add_shape(rows);
    input->add_shape(1024);
    std::vector<float> x(static_cast<size_t>(rows) * 1024, -0.5f);
    std::string raw(x.size() * sizeof(float), '\0');
    std::memcpy(raw.data(), x.data(), raw.size());
    r.add_raw_input_contents(std::move(raw));
    if (with_alpha) (*r.mutable_parameters())["alpha"].set_double_param(1.0);
    return r;
  }
  // Runs `requests` at once and waits for every answer; returns the errors.
  int RunAll(std::vector<ModelInferRequest> requests) {
    absl::BlockingCounter left(static_cast<int>(requests.size()));
    std::atomic<int> errors{0};
    for (ModelInferRequest& r : requests) {
      runner_.Run(r, CallContext{}, [&](InferOutcome outcome) {
        if (!outcome.error.ok()) ++errors;
        left.DecrementCount();
      });
    }
    left.Wait();
    return errors.load();
  }

  CpuEngine engine_;
  RequestProcessor processor_;
  const ModelCatalog catalog_;
  ModelStatisticsTable table_;
  InferRunner runner_;
};

TEST_F(InferStatisticsTest, QueueAndComputeTimesComeFromTheEngine) {
  constexpr int kRequests = 16;
  std::vector<ModelInferRequest> requests;
  for (int i = 0; i < kRequests; ++i) requests.push_back(Celu(64));
  ASSERT_EQ(RunAll(std::move(requests)), 0);

  const ModelStatistics row = Row(table_, "activation_celu");
  const inference::InferStatistics& s = row.inference_stats();
  EXPECT_EQ(row.inference_count(), static_cast<uint64_t>(kRequests));
  // The CPU engine runs every request alone: one execution each.
  EXPECT_EQ(row.execution_count(), static_cast<uint64_t>(kRequests));
  EXPECT_EQ(s.success().count(), static_cast<uint64_t>(kRequests));
  EXPECT_EQ(s.fail().count(), 0u);
  for (const inference::StatisticDuration* d :
       {&s.queue(), &s.compute_input(), &s.compute_infer(), &s.compute_output()}) {
    EXPECT_EQ(d->count(), static_cast<uint64_t>(kRequests));
  }
  // 16 requests on one worker: they waited in the queue, and each ran.
  EXPECT_GT(s.queue().ns(), 0u);
  EXPECT_GT(s.compute_infer().ns(), 0u);
  // The parts lie within each request's time in the server.
  EXPECT_LE(s.queue().ns() + s.compute_input().ns() + s.compute_infer().ns() +
                s.compute_output().ns(),
            s.success().ns());
  // Plausible: 64 K elements of CELU take well under a second each.
  EXPECT_LT(s.compute_infer().ns() / kRequests, 1'000'000'000u);
  EXPECT_GT(row.last_inference(), 0u);
}

TEST_F(InferStatisticsTest, RejectedRequestsCountAsFailures) {
  std::vector<ModelInferRequest> requests;
  requests.push_back(Celu(2, /*with_alpha=*/false));  // PARAM_MISSING (admission)
  ModelInferRequest no_input = Celu(2);
  no_input.clear_inputs();
  no_input.clear_raw_input_contents();
  requests.push_back(std::move(no_input));  // KSERVE_INPUT_MISSING (mapping)
  ModelInferRequest unknown = Celu(2);
  unknown.set_model_name("no_such_model");  // no model: counted nowhere
  requests.push_back(std::move(unknown));
  requests.push_back(Celu(2));
  ASSERT_EQ(RunAll(std::move(requests)), 3);

  const ModelStatistics row = Row(table_, "activation_celu");
  const inference::InferStatistics& s = row.inference_stats();
  EXPECT_EQ(s.fail().count(), 2u);
  EXPECT_GT(s.fail().ns(), 0u);
  EXPECT_EQ(s.success().count(), 1u);
  EXPECT_EQ(row.inference_count(), 1u);
  EXPECT_EQ(row.execution_count(), 1u);
  EXPECT_EQ(s.queue().count(), 1u);
}

}  // namespace
}  // namespace dmls::server::kserve
