#include "server/options/flags.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace dmls::server {
namespace {

// One flag, a text other than its default, the value that text gives, and
// the field of ServerOptions where the flag's group keeps it (as text).
struct FlagCase {
  const char* flag;
  const char* text;
  const char* value;
  std::function<std::string(const ServerOptions&)> field;
};

std::vector<FlagCase> Cases() {
  return {
      {"address", "0.0.0.0", "0.0.0.0",
       [](const ServerOptions& o) { return absl::StrCat(o.network.address); }},
      {"port", "7001", "7001", [](const ServerOptions& o) { return absl::StrCat(o.network.port); }},
      {"max_message_bytes", "64M", "67108864",
       [](const ServerOptions& o) { return absl::StrCat(o.network.max_message_bytes); }},
      {"handshake_timeout_seconds", "3", "3",
       [](const ServerOptions& o) { return absl::StrCat(o.network.handshake_timeout_seconds); }},
      {"keepalive_time_seconds", "4", "4",
       [](const ServerOptions& o) { return absl::StrCat(o.network.keepalive_time_seconds); }},
      {"keepalive_timeout_seconds", "5", "5",
       [](const ServerOptions& o) { return absl::StrCat(o.network.keepalive_timeout_seconds); }},
      {"max_connection_idle_seconds", "6", "6",
       [](const ServerOptions& o) { return absl::StrCat(o.network.max_connection_idle_seconds); }},
      {"device", "cpu", "cpu",
       [](const ServerOptions& o) { return absl::StrCat(o.engine.device); }},
      {"directml_dll", "x.dll", "x.dll",
       [](const ServerOptions& o) { return absl::StrCat(o.engine.directml_dll); }},
      {"adapter", "H200", "H200",
       [](const ServerOptions& o) { return absl::StrCat(o.engine.adapter); }},
      {"adapters", "0,1", "0,1",
       [](const ServerOptions& o) { return absl::StrCat(o.engine.adapters); }},
      {"gpu_memory_cap_bytes", "8G", "8589934592",
       [](const ServerOptions& o) { return o.engine.gpu_memory_cap_bytes ? absl::StrCat(*o.engine.gpu_memory_cap_bytes) : "auto"; }},
      {"gpu_cache_mib", "50", "50",
       [](const ServerOptions& o) { return absl::StrCat(o.engine.gpu_cache_mib); }},
      {"worker_threads", "21", "21",
       [](const ServerOptions& o) { return absl::StrCat(o.engine.worker_threads); }},
      {"max_batch_requests", "7", "7",
       [](const ServerOptions& o) { return absl::StrCat(o.batching.max_batch_requests); }},
      {"max_batch_bytes", "1M", "1048576",
       [](const ServerOptions& o) { return absl::StrCat(o.batching.max_batch_bytes); }},
      {"max_queue_delay_us", "8", "8",
       [](const ServerOptions& o) { return absl::StrCat(o.batching.max_queue_delay_us); }},
      {"max_queue_depth", "9", "9",
       [](const ServerOptions& o) { return absl::StrCat(o.batching.max_queue_depth); }},
      {"max_in_flight", "10", "10",
       [](const ServerOptions& o) { return absl::StrCat(o.limits.max_in_flight); }},
      {"max_tensor_bytes", "2M", "2097152",
       [](const ServerOptions& o) { return absl::StrCat(o.limits.max_tensor_bytes); }},
      {"memory_budget_bytes", "3M", "3145728",
       [](const ServerOptions& o) { return absl::StrCat(o.limits.memory_budget_bytes); }},
      {"max_output_ratio", "11", "11",
       [](const ServerOptions& o) { return absl::StrCat(o.limits.max_output_ratio); }},
      {"max_output_ratio_limit", "12", "12",
       [](const ServerOptions& o) { return absl::StrCat(o.limits.max_output_ratio_limit); }},
      {"stream_window", "13", "13",
       [](const ServerOptions& o) { return absl::StrCat(o.limits.stream_window); }},
      {"stream_queue_bytes", "4M", "4194304",
       [](const ServerOptions& o) { return absl::StrCat(o.limits.stream_queue_bytes); }},
      {"resident_bytes_per_principal", "5M", "5242880",
       [](const ServerOptions& o) { return absl::StrCat(o.resident.resident_bytes_per_principal); }},
      {"resident_bytes_total", "6M", "6291456",
       [](const ServerOptions& o) { return absl::StrCat(o.resident.resident_bytes_total); }},
      {"resident_ttl_seconds", "14", "14",
       [](const ServerOptions& o) { return absl::StrCat(o.resident.resident_ttl_seconds); }},
      {"max_chain_steps", "15", "15",
       [](const ServerOptions& o) { return absl::StrCat(o.resident.max_chain_steps); }},
      {"chunk_bytes", "7M", "7340032",
       [](const ServerOptions& o) { return absl::StrCat(o.resident.chunk_bytes); }},
      {"tls_cert_file", "c.pem", "c.pem",
       [](const ServerOptions& o) { return absl::StrCat(o.security.tls_cert_file); }},
      {"tls_key_file", "k.pem", "k.pem",
       [](const ServerOptions& o) { return absl::StrCat(o.security.tls_key_file); }},
      {"tls_client_ca_file", "ca.pem", "ca.pem",
       [](const ServerOptions& o) { return absl::StrCat(o.security.tls_client_ca_file); }},
      {"tls_client_auth", "optional", "optional",
       [](const ServerOptions& o) { return absl::StrCat(o.security.tls_client_auth); }},
      {"tls_reload_seconds", "16", "16",
       [](const ServerOptions& o) { return absl::StrCat(o.security.tls_reload_seconds); }},
      {"auth_tokens_file", "t.txt", "t.txt",
       [](const ServerOptions& o) { return absl::StrCat(o.security.auth_tokens_file); }},
      {"auth_tokens_poll_ms", "17", "17",
       [](const ServerOptions& o) { return absl::StrCat(o.security.auth_tokens_poll_ms); }},
      {"auth_exempt", "health", "health",
       [](const ServerOptions& o) { return absl::StrCat(o.security.auth_exempt); }},
      {"tenant_from_peer", "true", "1",
       [](const ServerOptions& o) { return absl::StrCat(o.security.tenant_from_peer); }},
      {"metrics_port", "9464", "9464",
       [](const ServerOptions& o) { return absl::StrCat(o.telemetry.metrics_port); }},
      {"metrics_address", "127.0.0.2", "127.0.0.2",
       [](const ServerOptions& o) { return absl::StrCat(o.telemetry.metrics_address); }},
      {"log_level", "warn", "warn",
       [](const ServerOptions& o) { return absl::StrCat(o.telemetry.log_level); }},
      {"log_format", "json", "json",
       [](const ServerOptions& o) { return absl::StrCat(o.telemetry.log_format); }},
      {"drain_seconds", "18", "18",
       [](const ServerOptions& o) { return absl::StrCat(o.stop.drain_seconds); }},
      {"shutdown_grace_seconds", "19", "19",
       [](const ServerOptions& o) { return absl::StrCat(o.stop.shutdown_grace_seconds); }},
  };
}

// Restores every flag this test sets.
class FlagsTest : public ::testing::Test {
 private:
  absl::FlagSaver saver_;
};

// Unset flags give each group's defaults, field by field.
TEST_F(FlagsTest, DefaultsAreTheGroupsDefaults) {
  absl::StatusOr<ServerOptions> read = ServerOptionsFromFlags();
  ASSERT_TRUE(read.ok()) << read.status();
  const ServerOptions defaults;
  for (const FlagCase& c : Cases()) {
    EXPECT_EQ(c.field(*read), c.field(defaults)) << "--" << c.flag;
    EXPECT_NE(c.field(*read), c.value) << "--" << c.flag << " defaults to the test's value";
  }
  EXPECT_EQ(read->engine.gpu_memory_cap_bytes, std::nullopt);  // "auto"
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
  // Every case's value is its own, so a flag read into another's field
  // (or two flags into one) fails here.
  std::set<std::string> values;
  for (const FlagCase& c : Cases()) {
    EXPECT_EQ(c.field(*read), c.value) << "--" << c.flag;
    EXPECT_TRUE(values.insert(c.value).second) << "two cases give " << c.value;
  }
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
