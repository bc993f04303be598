#include "server/metrics.h"

#include <string>

#include "dmlserve/v1/dmlserve.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

using ::testing::HasSubstr;

TEST(MetricsTest, RequestsAreCountedByMethodOperatorAndCode) {
  std::unique_ptr<Metrics> metrics = Metrics::CreateUnexposed();
  const int celu = dmlserve::v1::OperatorDesc::kCelu;
  for (int i = 0; i < 3; ++i) {
    metrics->RecordRequest(MetricsMethod::kExecute, celu, false,
                           absl::StatusCode::kOk, absl::Microseconds(300), 4096,
                           4096);
  }
  metrics->RecordRequest(MetricsMethod::kExecuteStream,
                         dmlserve::v1::OperatorDesc::kMvn1, false,
                         absl::StatusCode::kInvalidArgument, absl::Microseconds(20),
                         100, 0);
  metrics->RecordRequest(MetricsMethod::kExecuteChain, 0, true,
                         absl::StatusCode::kOk, absl::Milliseconds(2), 0, 64);
  const std::string text = metrics->TextExposition();
  EXPECT_THAT(text, HasSubstr("dmlserve_requests_total{code=\"OK\",method="
                              "\"Execute\",operator=\"celu\"} 3"));
  EXPECT_THAT(text, HasSubstr("dmlserve_requests_total{code=\"INVALID_ARGUMENT\","
                              "method=\"ExecuteStream\",operator=\"mvn1\"} 1"));
  EXPECT_THAT(text, HasSubstr("dmlserve_requests_total{code=\"OK\",method="
                              "\"ExecuteChain\",operator=\"chain\"} 1"));
  EXPECT_THAT(text, HasSubstr("dmlserve_request_duration_seconds_count{method="
                              "\"Execute\"} 3"));
  // 300 us lands in the 500 us bucket, not the 250 us one.
  EXPECT_THAT(text, HasSubstr("dmlserve_request_duration_seconds_bucket{method="
                              "\"Execute\",le=\"0.00025\"} 0"));
  EXPECT_THAT(text, HasSubstr("dmlserve_request_duration_seconds_bucket{method="
                              "\"Execute\",le=\"0.0005\"} 3"));
  EXPECT_THAT(text, HasSubstr("dmlserve_request_bytes_total{method=\"Execute\"} 12288"));
  EXPECT_THAT(text, HasSubstr("dmlserve_response_bytes_total{method=\"ExecuteChain\"} 64"));
}

TEST(MetricsTest, SchedulerObserverFeedsQueueAndBatchFigures) {
  std::unique_ptr<Metrics> metrics = Metrics::CreateUnexposed();
  std::shared_ptr<sched::SchedulerObserver> gpu1 = metrics->ObserverFor("1");
  for (int i = 0; i < 5; ++i) gpu1->OnQueued();
  gpu1->OnBatch(3, 3000);
  for (int i = 0; i < 3; ++i) gpu1->OnWaited(absl::Microseconds(80));
  gpu1->OnExecuted(absl::Milliseconds(1));
  gpu1->OnDropped(1);
  const std::string text = metrics->TextExposition();
  EXPECT_THAT(text, HasSubstr("dmlserve_queue_depth{device=\"1\"} 1"));
  EXPECT_THAT(text, HasSubstr("dmlserve_batch_requests_count{device=\"1\"} 1"));
  EXPECT_THAT(text, HasSubstr("dmlserve_batch_requests_sum{device=\"1\"} 3"));
  EXPECT_THAT(text, HasSubstr("dmlserve_queue_wait_seconds_count{device=\"1\"} 3"));
  EXPECT_THAT(text, HasSubstr("dmlserve_execute_duration_seconds_count{device=\"1\"} 1"));
}

TEST(MetricsTest, GaugesReadTheSourcesAtScrapeTime) {
  std::unique_ptr<Metrics> metrics = Metrics::CreateUnexposed();
  uint32_t in_flight = 7;
  MetricsSources sources;
  sources.devices = [] {
    return std::vector<DeviceInfo>{{"NVIDIA H200", "gpu", "d3d12 (vkd3d)",
                                    uint64_t{140} << 30, uint64_t{70} << 30},
                                   {"NVIDIA H200", "gpu", "d3d12 (vkd3d)",
                                    uint64_t{140} << 30, uint64_t{70} << 30}};
  };
  sources.engine_counters = [] {
    return std::vector<std::pair<std::string, uint64_t>>{
        {"gpu0.arena_bytes", 1024}, {"gpu1.resident_bytes", 2048},
        {"gpu1.pipelines", 5}};
  };
  sources.in_flight = [&in_flight] { return in_flight; };
  sources.resident = [] { return std::pair<uint64_t, uint64_t>(2, 2048); };
  metrics->SetSources(std::move(sources));
  std::string text = metrics->TextExposition();
  EXPECT_THAT(text, HasSubstr("dmlserve_in_flight_requests 7"));
  EXPECT_THAT(text, HasSubstr("dmlserve_device_memory_cap_bytes{device=\"1\"} 75161927680"));
  EXPECT_THAT(text, HasSubstr("dmlserve_device_memory_held_bytes{device=\"0\",kind=\"arenas\"} 1024"));
  EXPECT_THAT(text, HasSubstr("dmlserve_device_memory_held_bytes{device=\"1\",kind=\"resident\"} 2048"));
  EXPECT_THAT(text, HasSubstr("dmlserve_pipeline_cache_entries{device=\"1\"} 5"));
  EXPECT_THAT(text, HasSubstr("dmlserve_resident_tensor_bytes 2048"));
  EXPECT_THAT(text, HasSubstr("dmlserve_build_info{backend=\"d3d12 (vkd3d)\""));
  in_flight = 0;
  EXPECT_THAT(metrics->TextExposition(), HasSubstr("dmlserve_in_flight_requests 0"));
}

TEST(MetricsTest, ATakenPortIsUnavailable) {
  MetricsOptions options;
  options.address = "127.0.0.1";
  absl::StatusOr<std::unique_ptr<Metrics>> first = Metrics::Start(options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_GT((*first)->port(), 0);
  options.port = (*first)->port();
  absl::StatusOr<std::unique_ptr<Metrics>> second = Metrics::Start(options);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dmls::server
