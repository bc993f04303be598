// RunLoad against an in-process EchoService: both drivers, both loops.
#include "bench/load/load_runner.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/echo/echo_service.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace dmls::load {
namespace {

class LoadRunnerTest : public testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&service_);
    builder.SetMaxReceiveMessageSize(256 << 20);
    builder.SetMaxSendMessageSize(256 << 20);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(port_, 0);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  LoadOptions Options() const {
    LoadOptions o;
    o.target = absl::StrCat("127.0.0.1:", port_);
    o.duration = absl::Milliseconds(300);
    o.warmup = absl::Milliseconds(50);
    o.timeout = absl::Seconds(5);
    o.concurrency = 4;
    o.check = true;
    o.payload.bytes = 4096;
    return o;
  }

  static Report Run(const LoadOptions& o) {
    absl::StatusOr<Payload> payload = BuildPayload(o.payload);
    EXPECT_TRUE(payload.ok()) << payload.status();
    absl::StatusOr<Report> report = RunLoad(o, *payload);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : Report{};
  }

  static void ExpectClean(const Report& r) {
    EXPECT_GT(r.ok, 0u);
    EXPECT_EQ(r.errors, 0u);
    EXPECT_EQ(r.unmatched_responses, 0u);
    EXPECT_GT(r.checked, 0u);
    EXPECT_EQ(r.check_failures, 0u);
    EXPECT_EQ(r.status_counts.at("OK"), r.ok);
    for (const auto& [name, n] : r.late_status_counts) {
      EXPECT_EQ(name, "OK") << n << " answered " << name << " in the drain";
    }
    EXPECT_GT(r.p50_ms, 0.0);
    EXPECT_LE(r.p50_ms, r.p99_ms);
    EXPECT_LE(r.p99_ms, r.max_ms);
    EXPECT_NEAR(r.bytes_in_per_s, r.ok_per_s * 4096, 1.0);
    EXPECT_NEAR(r.bytes_out_per_s, r.ok_per_s * 4096, 1.0);
  }

  dmls::echo::EchoService service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(LoadRunnerTest, UnaryClosedLoop) {
  LoadOptions o = Options();
  o.connections = 2;
  Report r = Run(o);
  ExpectClean(r);
  EXPECT_EQ(r.mode, "closed");
}

TEST_F(LoadRunnerTest, StreamClosedLoop) {
  LoadOptions o = Options();
  o.rpc = RpcKind::kStream;
  o.streams = 3;
  o.concurrency = 8;
  ExpectClean(Run(o));
}

TEST_F(LoadRunnerTest, UnaryOpenLoop) {
  LoadOptions o = Options();
  o.rate = 500;
  Report r = Run(o);
  ExpectClean(r);
  EXPECT_EQ(r.mode, "open");
  // 500/s over 0.3 s: about 150, give or take the window edges.
  EXPECT_GT(r.ok, 100u);
  EXPECT_LT(r.ok, 200u);
}

TEST_F(LoadRunnerTest, StreamOpenLoop) {
  LoadOptions o = Options();
  o.rpc = RpcKind::kStream;
  o.rate = 500;
  ExpectClean(Run(o));
}

TEST_F(LoadRunnerTest, WrongOutputSizeFailsTheCheck) {
  LoadOptions o = Options();
  o.payload.op_json = "";
  absl::StatusOr<Payload> payload = BuildPayload(o.payload);
  ASSERT_TRUE(payload.ok());
  payload->output_bytes += 4;  // the echo answers with the input's size
  absl::StatusOr<Report> r = RunLoad(o, *payload);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->check_failures, r->checked);
  EXPECT_GT(r->check_failures, 0u);
}

TEST(LoadRunnerNoServer, UnreachableTargetIsUnavailable) {
  LoadOptions o;
  o.target = "127.0.0.1:1";  // nothing listens on port 1
  o.connect_timeout = absl::Milliseconds(200);
  absl::StatusOr<Payload> payload = BuildPayload(o.payload);
  ASSERT_TRUE(payload.ok());
  EXPECT_EQ(RunLoad(o, *payload).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dmls::load
