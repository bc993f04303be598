#include "server/engine_factory.h"

#include "gtest/gtest.h"
#include "spdlog/sinks/null_sink.h"

namespace dmls::server {
namespace {

std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

TEST(EngineFactory, CpuIsTheReferenceEngine) {
  ServerOptions options;
  options.device = "cpu";
  options.worker_threads = 1;
  auto engine = CreateEngine(options, NullLogger());
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->device_info().kind, "cpu");
  (*engine)->Shutdown();
}

TEST(EngineFactory, AutoAlwaysGivesAnEngine) {
  ServerOptions options;
  options.worker_threads = 1;
  auto engine = CreateEngine(options, NullLogger());
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_FALSE((*engine)->device_info().kind.empty());
  (*engine)->Shutdown();
}

TEST(EngineFactory, UnknownDeviceIsInvalid) {
  ServerOptions options;
  options.device = "tpu";
  EXPECT_EQ(CreateEngine(options, NullLogger()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dmls::server
