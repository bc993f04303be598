#include "client/dml_client.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "client/in_process_server_test_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace dmls::client {
namespace {

namespace v1 = dmlserve::v1;

// The serialized google.rpc.Status a server puts in grpc-status-details-bin.
std::string BadRequestDetails(
    const std::vector<std::pair<std::string, std::string>>& violations) {
  google::rpc::BadRequest bad;
  for (const auto& [field, description] : violations) {
    auto* v = bad.add_field_violations();
    v->set_field(field);
    v->set_description(description);
  }
  google::rpc::Status status;
  status.set_code(3);
  status.set_message("rejected");
  status.add_details()->PackFrom(bad);
  return status.SerializeAsString();
}

// A scripted in-process DmlService: Execute rejects request_id 666 with a
// BadRequest and sleeps for request_id 777, otherwise echoes the input; the
// stream answers every request in reverse order of arrival.
class FakeService final : public v1::DmlService::Service {
 public:
  grpc::Status GetCapabilities(grpc::ServerContext*,
                               const v1::GetCapabilitiesRequest*,
                               v1::GetCapabilitiesResponse* response) override {
    response->set_server_version("fake");
    return grpc::Status::OK;
  }
  grpc::Status Validate(grpc::ServerContext*, const v1::ValidateRequest* request,
                        v1::ValidateResponse* response) override {
    response->set_feature_level(request->feature_level());
    response->set_valid(true);
    return grpc::Status::OK;
  }
  grpc::Status Execute(grpc::ServerContext* context,
                       const v1::ExecuteRequest* request,
                       v1::ExecuteResponse* response) override {
    if (request->request_id() == 666) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT, "MVN_AXES_DUPLICATE: twice",
          BadRequestDetails({{"operator.mvn1.axes[1]",
                              "MVN_AXES_DUPLICATE: axes [1, 1] contain 1 "
                              "twice"},
                             {"operator.mvn1.epsilon", "MVN_EPSILON_INVALID"}}));
    }
    if (request->request_id() == 777) {
      for (int i = 0; i < 200 && !context->IsCancelled(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    response->set_request_id(request->request_id());
    response->set_output(request->input());
    return grpc::Status::OK;
  }
  grpc::Status ExecuteStream(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<v1::ExecuteResponse, v1::ExecuteRequest>* stream)
      override {
    std::vector<v1::ExecuteRequest> requests;
    v1::ExecuteRequest request;
    while (stream->Read(&request)) requests.push_back(request);
    for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
      v1::ExecuteResponse response;
      response.set_request_id(it->request_id());
      response.set_output(it->input());
      stream->Write(response);
    }
    return grpc::Status::OK;
  }
  // Records the chain and answers one output per step, its index as data.
  grpc::Status ExecuteChain(grpc::ServerContext*, const v1::ChainRequest* request,
                            v1::ChainResponse* response) override {
    if (request->steps_size() == 0) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT, "CHAIN_EMPTY: no steps",
          BadRequestDetails({{"steps", "CHAIN_EMPTY: no steps"}}));
    }
    response->set_request_id(request->request_id());
    for (int i = 0; i < request->steps_size(); ++i) {
      v1::ChainOutput* out = response->add_outputs();
      out->set_step(i);
      out->set_data(std::to_string(i));
    }
    return grpc::Status::OK;
  }
  // Answers input + scale + bias (as sent, checking order) in 5-byte chunks;
  // an operator-less header is rejected after the chunks were read.
  grpc::Status ExecuteChunked(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<v1::ChunkedResponse, v1::ChunkedRequest>* stream)
      override {
    v1::ChunkedRequest request;
    if (!stream->Read(&request) || !request.has_header()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no header");
    }
    const v1::ChunkedHeader header = request.header();
    std::string all;
    int last_slot = 0;
    while (stream->Read(&request)) {
      if (request.chunk().slot() < last_slot) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "slot order");
      }
      last_slot = request.chunk().slot();
      all += request.chunk().data();
    }
    if (!header.has_operator_()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "OPERATOR_MISSING: x",
                          BadRequestDetails({{"header.operator",
                                              "OPERATOR_MISSING: none"}}));
    }
    for (size_t at = 0; at < all.size(); at += 5) {
      v1::ChunkedResponse response;
      response.mutable_chunk()->set_slot(v1::TENSOR_SLOT_OUTPUT);
      response.mutable_chunk()->set_offset(at);
      response.mutable_chunk()->set_data(all.substr(at, 5));
      stream->Write(response);
    }
    v1::ChunkedResponse done;
    done.set_request_id(header.request_id());
    done.set_done(true);
    done.set_engine("fake");
    stream->Write(done);
    return grpc::Status::OK;
  }
};

class DmlClientTest : public InProcessServerTest<FakeService> {};

TEST_F(DmlClientTest, CapabilitiesAndValidate) {
  DmlClient client(options_);
  absl::StatusOr<v1::GetCapabilitiesResponse> caps = client.GetCapabilities();
  ASSERT_TRUE(caps.ok()) << caps.status();
  EXPECT_EQ(caps->server_version(), "fake");
  v1::ValidateRequest request;
  request.set_feature_level(v1::FEATURE_LEVEL_3_1);
  absl::StatusOr<v1::ValidateResponse> response = client.Validate(request);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->feature_level(), 0x3100u);
}

TEST_F(DmlClientTest, ExecuteDecodesBadRequestViolations) {
  DmlClient client(options_);
  v1::ExecuteRequest request;
  request.set_request_id(666);
  CallError error;
  absl::StatusOr<v1::ExecuteResponse> response = client.Execute(request, &error);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(error.status, response.status());
  ASSERT_EQ(error.violations.size(), 2u);
  EXPECT_EQ(error.violations[0].rule(), "MVN_AXES_DUPLICATE");
  EXPECT_EQ(error.violations[0].field(), "operator.mvn1.axes[1]");
  EXPECT_EQ(error.violations[0].description(),
            "MVN_AXES_DUPLICATE: axes [1, 1] contain 1 twice");
  // A description without a colon is its own rule id.
  EXPECT_EQ(error.violations[1].rule(), "MVN_EPSILON_INVALID");
}

TEST_F(DmlClientTest, ExecuteEchoAndDeadline) {
  DmlClient client(options_);
  v1::ExecuteRequest request;
  request.set_request_id(5);
  request.set_input("abcd");
  absl::StatusOr<v1::ExecuteResponse> response = client.Execute(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->request_id(), 5u);
  EXPECT_EQ(response->output(), "abcd");

  options_.timeout = absl::Milliseconds(50);
  DmlClient impatient(options_);
  request.set_request_id(777);
  CallError error;
  response = impatient.Execute(request, &error);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(error.violations.empty());
}

TEST_F(DmlClientTest, ExecuteStreamReturnsEveryResponse) {
  DmlClient client(options_);
  std::vector<v1::ExecuteRequest> requests(100);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].set_request_id(i);
    requests[i].set_input(std::string(1000, static_cast<char>('a' + i % 26)));
  }
  absl::StatusOr<std::vector<v1::ExecuteResponse>> responses =
      client.ExecuteStream(requests);
  ASSERT_TRUE(responses.ok()) << responses.status();
  ASSERT_EQ(responses->size(), requests.size());
  for (const v1::ExecuteResponse& r : *responses) {
    EXPECT_EQ(r.output(), requests[r.request_id()].input());
  }
  EXPECT_EQ(responses->front().request_id(), 99u);  // the fake reverses
}

TEST_F(DmlClientTest, ExecuteChainAndItsViolations) {
  DmlClient client(options_);
  v1::ChainRequest request;
  request.set_request_id(9);
  request.add_steps();
  request.add_steps();
  absl::StatusOr<v1::ChainResponse> response = client.ExecuteChain(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->outputs_size(), 2);
  EXPECT_EQ(response->outputs(1).data(), "1");
  CallError error;
  response = client.ExecuteChain(v1::ChainRequest(), &error);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(error.violations.size(), 1u);
  EXPECT_EQ(error.violations[0].rule(), "CHAIN_EMPTY");
}

TEST_F(DmlClientTest, ExecuteChunkedSendsEverySlotInOrderAndReassembles) {
  DmlClient client(options_);
  v1::ChunkedHeader header;
  header.set_request_id(4);
  header.mutable_operator_()->mutable_celu();
  ChunkedTensors tensors;
  tensors.input = "the input tensor";
  tensors.scale = "scale";
  tensors.bias = "bias!";
  tensors.chunk_bytes = 3;
  uint64_t uploaded = 0, upload_total = 0, downloaded = 0;
  tensors.upload_progress = [&](uint64_t done, uint64_t total) {
    uploaded = done;
    upload_total = total;
  };
  tensors.download_progress = [&](uint64_t done, uint64_t) { downloaded = done; };
  absl::StatusOr<ChunkedResult> result = client.ExecuteChunked(header, tensors);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->output, "the input tensorscalebias!");
  EXPECT_EQ(result->engine, "fake");
  EXPECT_EQ(uploaded, 26u);
  EXPECT_EQ(upload_total, 26u);
  EXPECT_EQ(downloaded, 26u);

  CallError error;
  header.clear_operator_();
  result = client.ExecuteChunked(header, tensors, &error);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(error.violations.size(), 1u);
  EXPECT_EQ(error.violations[0].field(), "header.operator");
}

TEST(DmlClientHealthTest, ServingNotServingAndUnknownService) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  FakeService service;  // a synchronous service, so the health one is polled
  builder.RegisterService(&service);
  grpc::EnableDefaultHealthCheckService(true);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  grpc::EnableDefaultHealthCheckService(false);
  DmlClientOptions options;
  options.target = "127.0.0.1:" + std::to_string(port);
  options.timeout = absl::Seconds(10);
  DmlClient client(options);
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  ASSERT_NE(health, nullptr);
  health->SetServingStatus("dmlserve.v1.DmlService", true);
  EXPECT_EQ(client.CheckHealth().value(), true);
  EXPECT_EQ(client.CheckHealth("dmlserve.v1.DmlService").value(), true);
  health->SetServingStatus(false);
  EXPECT_EQ(client.CheckHealth().value(), false);
  EXPECT_EQ(client.CheckHealth("no.such.Service").status().code(),
            absl::StatusCode::kNotFound);
  server->Shutdown();
}

TEST(DmlClientStandaloneTest, UnreachableServerIsUnavailable) {
  DmlClientOptions options;
  options.target = "127.0.0.1:1";
  options.timeout = absl::Seconds(5);
  DmlClient client(options);
  EXPECT_EQ(client.GetCapabilities().status().code(),
            absl::StatusCode::kUnavailable);
}

TEST(ViolationsFromStatusTest, IgnoresMissingOrForeignDetails) {
  EXPECT_TRUE(ViolationsFromStatus(grpc::Status::OK).empty());
  EXPECT_TRUE(ViolationsFromStatus(grpc::Status(
                  grpc::StatusCode::INVALID_ARGUMENT, "x", "not a proto \xff"))
                  .empty());
  google::rpc::Status other;
  other.add_details()->PackFrom(google::rpc::Status());  // not a BadRequest
  EXPECT_TRUE(ViolationsFromStatus(grpc::Status(grpc::StatusCode::INTERNAL,
                                                "x", other.SerializeAsString()))
                  .empty());
  EXPECT_EQ(ToAbslStatus(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "big"))
                .code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace dmls::client
