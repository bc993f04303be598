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

#if DMLSERVE_HAVE_D3D12
// lavapipe is present on every machine the suite runs on.
TEST(EngineFactory, AutoAndSoftwareGiveTheDirect3D12Engine) {
  for (const char* device : {"auto", "software"}) {
    ServerOptions options;
    options.device = device;
    auto engine = CreateEngine(options, NullLogger());
    ASSERT_TRUE(engine.ok()) << device << ": " << engine.status();
    EXPECT_NE((*engine)->device_info().kind, "cpu") << device;
    EXPECT_NE((*engine)->device_info().backend.find("d3d12"), std::string::npos)
        << (*engine)->device_info().backend;
    (*engine)->Shutdown();
  }
}

TEST(EngineFactory, AdapterOverrideBySubstring) {
  ServerOptions options;
  options.device = "software";
  options.adapter = "llvmpipe";
  auto engine = CreateEngine(options, NullLogger());
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_NE((*engine)->device_info().name.find("llvmpipe"), std::string::npos);
  (*engine)->Shutdown();

  options.adapter = "no such adapter";
  auto missing = CreateEngine(options, NullLogger());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no such adapter"),
            std::string::npos);
  EXPECT_NE(missing.status().message().find("--device=cpu"), std::string::npos);
}
#endif

TEST(EngineFactory, UnknownDeviceIsInvalid) {
  ServerOptions options;
  options.device = "tpu";
  EXPECT_EQ(CreateEngine(options, NullLogger()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dmls::server
