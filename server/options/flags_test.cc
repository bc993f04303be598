#include "server/options/flags.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

// One flag, a value other than its default, and whether ServerOptions
// carries that value where the flag's group says.
struct FlagCase {
  const char* flag;
  const char* text;
  std::function<bool(const ServerOptions&)> read;
};

std::vector<FlagCase> Cases() {
  return {
      {"address", "0.0.0.0", [](const ServerOptions& o) { return o.network.address == "0.0.0.0"; }},
      {"port", "7001", [](const ServerOptions& o) { return o.network.port == 7001; }},
      {"max_message_bytes", "64M", [](const ServerOptions& o) { return o.network.max_message_bytes == 64 * kMiB; }},
      {"handshake_timeout_seconds", "3", [](const ServerOptions& o) { return o.network.handshake_timeout_seconds == 3; }},
      {"keepalive_time_seconds", "4", [](const ServerOptions& o) { return o.network.keepalive_time_seconds == 4; }},
      {"keepalive_timeout_seconds", "5", [](const ServerOptions& o) { return o.network.keepalive_timeout_seconds == 5; }},
      {"max_connection_idle_seconds", "6", [](const ServerOptions& o) { return o.network.max_connection_idle_seconds == 6; }},
      {"device", "cpu", [](const ServerOptions& o) { return o.engine.device == "cpu"; }},
      {"directml_dll", "x.dll", [](const ServerOptions& o) { return o.engine.directml_dll == "x.dll"; }},
      {"adapter", "H200", [](const ServerOptions& o) { return o.engine.adapter == "H200"; }},
      {"adapters", "0,1", [](const ServerOptions& o) { return o.engine.adapters == "0,1"; }},
      {"gpu_memory_cap_bytes", "8G", [](const ServerOptions& o) { return o.engine.gpu_memory_cap_bytes == 8 * kGiB; }},
      {"gpu_cache_mib", "50", [](const ServerOptions& o) { return o.engine.gpu_cache_mib == 50; }},
      {"worker_threads", "3", [](const ServerOptions& o) { return o.engine.worker_threads == 3; }},
      {"max_batch_requests", "7", [](const ServerOptions& o) { return o.batching.max_batch_requests == 7; }},
      {"max_batch_bytes", "1M", [](const ServerOptions& o) { return o.batching.max_batch_bytes == kMiB; }},
      {"max_queue_delay_us", "8", [](const ServerOptions& o) { return o.batching.max_queue_delay_us == 8; }},
      {"max_queue_depth", "9", [](const ServerOptions& o) { return o.batching.max_queue_depth == 9; }},
      {"max_in_flight", "10", [](const ServerOptions& o) { return o.limits.max_in_flight == 10; }},
      {"max_tensor_bytes", "2M", [](const ServerOptions& o) { return o.limits.max_tensor_bytes == 2 * kMiB; }},
      {"memory_budget_bytes", "3M", [](const ServerOptions& o) { return o.limits.memory_budget_bytes == 3 * kMiB; }},
      {"max_output_ratio", "11", [](const ServerOptions& o) { return o.limits.max_output_ratio == 11; }},
      {"max_output_ratio_limit", "12", [](const ServerOptions& o) { return o.limits.max_output_ratio_limit == 12; }},
      {"stream_window", "13", [](const ServerOptions& o) { return o.limits.stream_window == 13; }},
      {"stream_queue_bytes", "4M", [](const ServerOptions& o) { return o.limits.stream_queue_bytes == 4 * kMiB; }},
      {"resident_bytes_per_principal", "5M", [](const ServerOptions& o) { return o.resident.resident_bytes_per_principal == 5 * kMiB; }},
      {"resident_bytes_total", "6M", [](const ServerOptions& o) { return o.resident.resident_bytes_total == 6 * kMiB; }},
      {"resident_ttl_seconds", "14", [](const ServerOptions& o) { return o.resident.resident_ttl_seconds == 14; }},
      {"max_chain_steps", "15", [](const ServerOptions& o) { return o.resident.max_chain_steps == 15; }},
      {"chunk_bytes", "7M", [](const ServerOptions& o) { return o.resident.chunk_bytes == 7 * kMiB; }},
      {"tls_cert_file", "c.pem", [](const ServerOptions& o) { return o.security.tls_cert_file == "c.pem"; }},
      {"tls_key_file", "k.pem", [](const ServerOptions& o) { return o.security.tls_key_file == "k.pem"; }},
      {"tls_client_ca_file", "ca.pem", [](const ServerOptions& o) { return o.security.tls_client_ca_file == "ca.pem"; }},
      {"tls_client_auth", "optional", [](const ServerOptions& o) { return o.security.tls_client_auth == "optional"; }},
      {"tls_reload_seconds", "16", [](const ServerOptions& o) { return o.security.tls_reload_seconds == 16; }},
      {"auth_tokens_file", "t.txt", [](const ServerOptions& o) { return o.security.auth_tokens_file == "t.txt"; }},
      {"auth_tokens_poll_ms", "17", [](const ServerOptions& o) { return o.security.auth_tokens_poll_ms == 17; }},
      {"auth_exempt", "health", [](const ServerOptions& o) { return o.security.auth_exempt == "health"; }},
      {"tenant_from_peer", "true", [](const ServerOptions& o) { return o.security.tenant_from_peer; }},
      {"metrics_port", "9464", [](const ServerOptions& o) { return o.telemetry.metrics_port == 9464; }},
      {"metrics_address", "127.0.0.2", [](const ServerOptions& o) { return o.telemetry.metrics_address == "127.0.0.2"; }},
      {"log_level", "warn", [](const ServerOptions& o) { return o.telemetry.log_level == "warn"; }},
      {"log_format", "json", [](const ServerOptions& o) { return o.telemetry.log_format == "json"; }},
      {"drain_seconds", "18", [](const ServerOptions& o) { return o.stop.drain_seconds == 18; }},
      {"shutdown_grace_seconds", "19", [](const ServerOptions& o) { return o.stop.shutdown_grace_seconds == 19; }},
  };
}

// Restores every flag this test sets.
class FlagsTest : public ::testing::Test {
 private:
  absl::FlagSaver saver_;
};

// Unset flags give each group's defaults.
TEST_F(FlagsTest, DefaultsAreTheGroupsDefaults) {
  absl::StatusOr<ServerOptions> read = ServerOptionsFromFlags();
  ASSERT_TRUE(read.ok()) << read.status();
  const ServerOptions defaults;
  for (const FlagCase& c : Cases()) {
    EXPECT_FALSE(c.read(*read)) << "--" << c.flag << " defaults to the test's value";
  }
  EXPECT_EQ(read->network.port, defaults.network.port);
  EXPECT_EQ(read->limits.max_in_flight, defaults.limits.max_in_flight);
  EXPECT_FALSE(read->engine.gpu_memory_cap_bytes.has_value());  // "auto"
  EXPECT_TRUE(ValidateOptions(*read).ok());
}

// Each flag lands in its own field, and every flag of the binary has a case.
TEST_F(FlagsTest, EveryFlagReachesItsField) {
  std::set<std::string> covered;
  for (const FlagCase& c : Cases()) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(c.flag);
    ASSERT_NE(flag, nullptr) << c.flag;
    EXPECT_TRUE(IsServerFlagsFile(flag->Filename())) << flag->Filename();
    std::string error;
    ASSERT_TRUE(flag->ParseFrom(c.text, &error)) << c.flag << ": " << error;
    covered.insert(c.flag);
  }
  absl::StatusOr<ServerOptions> read = ServerOptionsFromFlags();
  ASSERT_TRUE(read.ok()) << read.status();
  for (const FlagCase& c : Cases()) EXPECT_TRUE(c.read(*read)) << "--" << c.flag;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsServerFlagsFile(flag->Filename())) {
      EXPECT_TRUE(covered.count(std::string(name))) << "--" << name << " has no case";
    }
  }
}

TEST_F(FlagsTest, AMemoryCapThatDoesNotParseIsNamed) {
  std::string error;
  ASSERT_TRUE(absl::FindCommandLineFlag("gpu_memory_cap_bytes")->ParseFrom("half", &error));
  absl::StatusOr<ServerOptions> read = ServerOptionsFromFlags();
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find("--gpu_memory_cap_bytes"), std::string::npos);
}

}  // namespace
}  // namespace dmls::server
