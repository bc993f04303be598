// InProcessServerTest<Service>: a GoogleTest fixture that serves one fake
// gRPC service on a loopback port for the client tests, with
// DmlClientOptions aimed at it. Test-only.
#ifndef DMLSERVE_CLIENT_IN_PROCESS_SERVER_TEST_UTIL_H_
#define DMLSERVE_CLIENT_IN_PROCESS_SERVER_TEST_UTIL_H_

#include <memory>
#include <string>

#include "client/dml_client.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace dmls::client {

template <typename Service>
class InProcessServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    options_.target = "127.0.0.1:" + std::to_string(port);
    options_.timeout = absl::Seconds(10);
  }
  void TearDown() override { server_->Shutdown(); }

  Service service_;  // serves on server_'s threads
  std::unique_ptr<grpc::Server> server_;
  DmlClientOptions options_;
};

}  // namespace dmls::client

#endif  // DMLSERVE_CLIENT_IN_PROCESS_SERVER_TEST_UTIL_H_
