#include "server/telemetry/metrics.h"

#include <string>
#include <thread>
#include <vector>

#include "dmlserve/v1/dmlserve.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

using ::testing::HasSubstr;

// How often `needle` occurs in `text`.
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

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

TEST(MetricsTest, UnknownOperatorsAndCodesShareOneSeries) {
  std::unique_ptr<Metrics> metrics = Metrics::CreateUnexposed();
  // Not OperatorDesc fields: 0 (unset), 1, a number past the table.
  for (int operator_case : {0, 1, 4000, -3}) {
    metrics->RecordRequest(MetricsMethod::kExecute, operator_case, false,
                           absl::StatusCode::kInvalidArgument, absl::ZeroDuration(),
                           0, 0);
  }
  metrics->RecordRequest(MetricsMethod::kExecute, dmlserve::v1::OperatorDesc::kGelu,
                         false, static_cast<absl::StatusCode>(99),
                         absl::ZeroDuration(), 0, 0);
  const std::string text = metrics->TextExposition();
  EXPECT_THAT(text, HasSubstr("dmlserve_requests_total{code=\"INVALID_ARGUMENT\","
                              "method=\"Execute\",operator=\"\"} 4"));
  EXPECT_THAT(text, HasSubstr("dmlserve_requests_total{code=\"UNKNOWN\","
                              "method=\"Execute\",operator=\"gelu\"} 1"));
  EXPECT_EQ(Count(text, "dmlserve_requests_total{"), 2u);
}

TEST(MetricsTest, ConcurrentRecordsAreAllCounted) {
  std::unique_ptr<Metrics> metrics = Metrics::CreateUnexposed();
  const int ops[] = {dmlserve::v1::OperatorDesc::kCelu,
                     dmlserve::v1::OperatorDesc::kRelu};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&metrics, &ops] {
      for (int i = 0; i < 1000; ++i) {
        metrics->RecordRequest(MetricsMethod::kExecute, ops[i % 2], false,
                               absl::StatusCode::kOk, absl::Microseconds(1), 1, 2);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const std::string text = metrics->TextExposition();
  EXPECT_THAT(text, HasSubstr("dmlserve_requests_total{code=\"OK\",method="
                              "\"Execute\",operator=\"celu\"} 2000"));
  EXPECT_THAT(text, HasSubstr("dmlserve_requests_total{code=\"OK\",method="
                              "\"Execute\",operator=\"relu\"} 2000"));
  EXPECT_THAT(text, HasSubstr("dmlserve_request_duration_seconds_count{method="
                              "\"Execute\"} 4000"));
  EXPECT_THAT(text, HasSubstr("dmlserve_response_bytes_total{method=\"Execute\"} 8000"));
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
  // One build_info series although both devices have the same name.
  EXPECT_THAT(text, HasSubstr("dmlserve_build_info{backend=\"d3d12 (vkd3d)\",version="));
  EXPECT_EQ(Count(text, "dmlserve_build_info{"), 1u);
  EXPECT_THAT(text, HasSubstr("dmlserve_device_memory_bytes{device=\"1\",kind=\"gpu\","
                              "name=\"NVIDIA H200\"} 150323855360"));
  in_flight = 0;
  EXPECT_THAT(metrics->TextExposition(), HasSubstr("dmlserve_in_flight_requests 0"));
#if defined(__GLIBC__)
  EXPECT_THAT(text, HasSubstr("dmlserve_process_heap_bytes{state=\"in_use\"} "));
  EXPECT_THAT(text, HasSubstr("dmlserve_process_heap_bytes{state=\"free\"} "));
#endif
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
