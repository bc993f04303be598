#include "server/options/server_options.h"

#include <functional>
#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/options/physical_memory.h"
#include "server/telemetry/logging.h"

namespace dmls::server {
namespace {

using ::testing::HasSubstr;

TEST(ServerOptions, DefaultsAreValid) {
  ServerOptions o;
  EXPECT_TRUE(ValidateOptions(o).ok());
  EXPECT_EQ(o.network.max_message_bytes, 256u * 1024 * 1024);
  EXPECT_EQ(ListenAddress(o.network), "127.0.0.1:50051");
}

// The unset memory budget is a quarter of the machine's memory (Windows:
// GlobalMemoryStatusEx), never less than four of the largest messages.
TEST(ServerOptions, MemoryBudgetFollowsPhysicalMemory) {
  const uint64_t physical = PhysicalMemoryBytes();
  ASSERT_GT(physical, 64u * 1024 * 1024);
  ServerOptions o;
  o.network.max_message_bytes = 1024;
  EXPECT_EQ(EffectiveMemoryBudget(o), physical / 4);
  o.network.max_message_bytes = physical;
  EXPECT_EQ(EffectiveMemoryBudget(o), 4 * physical);
  o.limits.memory_budget_bytes = 12345;
  EXPECT_EQ(EffectiveMemoryBudget(o), 12345u);
}

TEST(ServerOptions, Ipv6GetsBrackets) {
  ServerOptions o;
  o.network.address = "::";
  o.network.port = 7;
  EXPECT_EQ(ListenAddress(o.network), "[::]:7");
  o.network.address = "[::1]";
  EXPECT_EQ(ListenAddress(o.network), "[::1]:7");
}

// ValidateOptions' message for the defaults changed by `mutate` (empty when
// they pass).
std::string Rejection(const std::function<void(ServerOptions&)>& mutate) {
  ServerOptions o;
  mutate(o);
  return std::string(ValidateOptions(o).message());
}

TEST(ServerOptions, BadValuesAreNamed) {
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.network.port = 70000; }), HasSubstr("--port"));
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.telemetry.metrics_port = -1; }),
              HasSubstr("--metrics_port"));
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.telemetry.metrics_port = o.network.port; }),
              HasSubstr("--metrics_port"));
  EXPECT_THAT(Rejection([](ServerOptions& o) {
                o.telemetry.metrics_port = 9464;
                o.telemetry.metrics_address = "";
              }),
              HasSubstr("--metrics_address"));
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.engine.device = "tpu"; }), HasSubstr("--device"));
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.telemetry.log_format = "xml"; }),
              HasSubstr("--log_format"));
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.telemetry.log_level = "loud"; }),
              HasSubstr("--log_level"));
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.limits.max_in_flight = 0; }),
              HasSubstr("--max_in_flight"));
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.network.max_message_bytes = 1ull << 40; }),
              HasSubstr("--max_message_bytes"));
  EXPECT_THAT(Rejection([](ServerOptions& o) {
                o.engine.adapter = "H200";
                o.engine.adapters = "0,1";
              }),
              HasSubstr("exclude each other"));
  EXPECT_THAT(Rejection([](ServerOptions& o) {
                o.engine.device = "cpu";
                o.engine.adapters = "0";
              }),
              HasSubstr("--device=cpu"));
  EXPECT_THAT(Rejection([](ServerOptions& o) {
                o.engine.device = "directml";
                o.engine.adapters = "0";
              }),
              HasSubstr("--device=directml"));
  ServerOptions two;
  two.engine.device = "gpu";
  two.engine.adapters = "0,1";
  EXPECT_TRUE(ValidateOptions(two).ok());
  // Accepted on every platform; CreateEngine says where it cannot run.
  ServerOptions directml;
  directml.engine.device = "directml";
  directml.engine.adapter = "llvmpipe";
  EXPECT_TRUE(ValidateOptions(directml).ok());
}

TEST(ServerOptions, TimeoutsAreChecked) {
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.stop.drain_seconds = -1; }),
              HasSubstr("--drain_seconds"));
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.network.handshake_timeout_seconds = 0; }),
              HasSubstr("--handshake_timeout_seconds"));
  EXPECT_THAT(Rejection([](ServerOptions& o) { o.network.keepalive_time_seconds = 3000000; }),
              HasSubstr("--keepalive_time_seconds"));
  ServerOptions zero;
  zero.stop.drain_seconds = 0;
  zero.network.keepalive_time_seconds = 0;
  zero.network.max_connection_idle_seconds = 0;
  EXPECT_TRUE(ValidateOptions(zero).ok());
}

TEST(ServerOptions, ConnectionChannelArgs) {
  ServerOptions o;
  o.network.handshake_timeout_seconds = 3;
  auto args = ConnectionChannelArgs(o.network);
  std::map<std::string, int> m(args.begin(), args.end());
  EXPECT_EQ(m.size(), args.size());
  EXPECT_EQ(m["grpc.server_handshake_timeout_ms"], 3000);
  EXPECT_EQ(m["grpc.keepalive_time_ms"], 60000);
  EXPECT_EQ(m["grpc.keepalive_timeout_ms"], 20000);
  EXPECT_EQ(m["grpc.keepalive_permit_without_calls"], 1);
  EXPECT_EQ(m["grpc.http2.max_pings_without_data"], 0);
  EXPECT_EQ(m["grpc.http2.min_ping_interval_without_data_ms"], 10000);
  EXPECT_EQ(m["grpc.max_connection_idle_ms"], 600000);
  // 0 turns keepalive and the idle limit off (gRPC's defaults apply).
  o.network.keepalive_time_seconds = 0;
  o.network.max_connection_idle_seconds = 0;
  m.clear();
  for (const auto& [k, v] : ConnectionChannelArgs(o.network)) m[k] = v;
  EXPECT_EQ(m.count("grpc.keepalive_time_ms"), 0u);
  EXPECT_EQ(m.count("grpc.max_connection_idle_ms"), 0u);
  EXPECT_EQ(m["grpc.server_handshake_timeout_ms"], 3000);
}

TEST(Logging, JsonEscapeKeepsLinesParseable) {
  EXPECT_EQ(JsonEscape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
}

TEST(Logging, MakeLoggerChecksItsArguments) {
  EXPECT_TRUE(MakeLogger("t1", "debug", "json").ok());
  EXPECT_TRUE(MakeLogger("t2", "warning", "text").ok());
  EXPECT_TRUE(MakeLogger("t3", "off", "text").ok());
  EXPECT_FALSE(MakeLogger("t4", "loud", "text").ok());
  EXPECT_FALSE(MakeLogger("t5", "info", "xml").ok());
}

TEST(ServerOptions, MemoryCapAutoZeroAndSizes) {
  EXPECT_EQ(*ParseMemoryCap("auto"), std::nullopt);
  EXPECT_EQ(*ParseMemoryCap("0"), std::optional<uint64_t>(0));
  EXPECT_EQ(*ParseMemoryCap("1073741824"), std::optional<uint64_t>(kGiB));
  EXPECT_EQ(*ParseMemoryCap("8G"), std::optional<uint64_t>(8 * kGiB));
  EXPECT_EQ(*ParseMemoryCap("512M"), std::optional<uint64_t>(512 * kMiB));
  EXPECT_EQ(*ParseMemoryCap("64K"), std::optional<uint64_t>(64 << 10));
  for (const char* bad : {"", "G", "-1", "1.5G", "half", "99999999999999999999",
                          "20000000000G"}) {
    absl::StatusOr<std::optional<uint64_t>> cap = ParseMemoryCap(bad);
    EXPECT_FALSE(cap.ok()) << bad;
    EXPECT_THAT(std::string(cap.status().message()),
                ::testing::HasSubstr("--gpu_memory_cap_bytes")) << bad;
  }
  EXPECT_FALSE(ServerOptions().engine.gpu_memory_cap_bytes.has_value());  // auto
}

}  // namespace
}  // namespace dmls::server
