#include "server/engine_factory.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/null_sink.h"

namespace dmls::server {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

TEST(EngineFactory, CpuIsTheReferenceEngine) {
  ServerOptions options;
  options.engine.device = "cpu";
  options.engine.worker_threads = 1;
  auto engine = CreateEngine(options, NullLogger());
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->device_info().kind, "cpu");
  (*engine)->Shutdown();
}

#if !defined(_WIN32)
// DirectML.dll exists for Windows only: a Linux server refuses the device at
// startup with INVALID_ARGUMENT saying so, and names the devices it has.
TEST(EngineFactory, DirectMlIsWindowsOnly) {
  ServerOptions options;
  options.engine.device = "directml";
  auto engine = CreateEngine(options, NullLogger());
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(), HasSubstr("--device=directml"));
  EXPECT_THAT(engine.status().message(), HasSubstr("Windows-only"));
  EXPECT_THAT(engine.status().message(), HasSubstr("--device=auto, gpu, software or cpu"));
}
#endif

#if DMLSERVE_HAVE_D3D12
// --device=software: the Direct3D 12 engine on lavapipe.
ServerOptions Software() {
  ServerOptions options;
  options.engine.device = "software";
  return options;
}

// The message CreateEngine fails with for `options`; empty when it succeeds.
std::string CreateError(const ServerOptions& options) {
  absl::StatusOr<std::unique_ptr<Engine>> engine = CreateEngine(options, NullLogger());
  if (!engine.ok()) return std::string(engine.status().message());
  (*engine)->Shutdown();
  return "";
}

// lavapipe is present on every machine the suite runs on.
TEST(EngineFactory, AutoAndSoftwareGiveTheDirect3D12Engine) {
  for (const char* device : {"auto", "software"}) {
    ServerOptions options;
    options.engine.device = device;
    auto engine = CreateEngine(options, NullLogger());
    ASSERT_TRUE(engine.ok()) << device << ": " << engine.status();
    EXPECT_NE((*engine)->device_info().kind, "cpu") << device;
    EXPECT_NE((*engine)->device_info().backend.find("d3d12"), std::string::npos)
        << (*engine)->device_info().backend;
    (*engine)->Shutdown();
  }
}

TEST(EngineFactory, AdapterOverrideBySubstring) {
  ServerOptions options = Software();
  options.engine.adapter = "llvmpipe";
  auto engine = CreateEngine(options, NullLogger());
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_NE((*engine)->device_info().name.find("llvmpipe"), std::string::npos);
  (*engine)->Shutdown();

  options.engine.adapter = "no such adapter";
  const std::string error = CreateError(options);
  EXPECT_THAT(error, HasSubstr("no such adapter"));
  EXPECT_THAT(error, HasSubstr("--device=cpu"));
}

TEST(EngineFactory, AdapterListGivesOneEngineEach) {
  // Twice the software adapter: two engines on one device (testing).
  ServerOptions options = Software();
  options.engine.adapters = "llvmpipe,llvmpipe";
  auto engine = CreateEngine(options, NullLogger());
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<DeviceInfo> devices = (*engine)->devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, devices[1].name);
  EXPECT_EQ((*engine)->device_info().name, "2 x " + devices[0].name);
  EXPECT_TRUE((*engine)->Healthy());
  bool labelled = false;
  for (const auto& [name, value] : (*engine)->Counters()) {
    labelled |= name == "software1.requests";
  }
  EXPECT_TRUE(labelled);
  (*engine)->Shutdown();

  // One entry: the engine itself, no router in front.
  options.engine.adapters = "llvmpipe";
  auto one = CreateEngine(options, NullLogger());
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*one)->devices().size(), 1u);
  (*one)->Shutdown();

  options.engine.adapters = "llvmpipe,no such adapter";
  EXPECT_THAT(CreateError(options), HasSubstr("no such adapter"));
  options.engine.adapters = "99";
  EXPECT_FALSE(CreateEngine(options, NullLogger()).ok());
}
#endif

TEST(EngineFactory, UnknownDeviceIsInvalid) {
  ServerOptions options;
  options.engine.device = "tpu";
  EXPECT_EQ(CreateEngine(options, NullLogger()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dmls::server
