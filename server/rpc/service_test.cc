// In-process tests of the gRPC surface: a DmlServer on a loopback port with a
// FakeEngine, called through the generated stub.
#include "server/rpc/service.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "inference/grpc_predict_v2.grpc.pb.h"
#include "server/lifecycle/dml_server.h"
#include "server/testing/fake_engine.h"
#include "server/testing/test_requests.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;
using testing::Mvn1Request;
using testing::NullLogger;
using testing::Payload;
using testing::ReluRequest;
using ::testing::StartsWith;


class ServiceTest : public ::testing::Test {
 protected:
  void StartServer(FakeEngineOptions engine_options = {},
                   ServerOptions options = {}) {
    engine_ = std::make_unique<FakeEngine>(engine_options);
    options.network.port = 0;
    auto server = DmlServer::Start(options, engine_.get(), NullLogger());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    channel_ = grpc::CreateCustomChannel(
        server_->address(), grpc::InsecureChannelCredentials(), args);
    stub_ = v1::DmlService::NewStub(channel_);
  }

  // An engine whose every request takes `delay` (cut short by
  // cancellation and deadlines).
  void StartSlowServer(absl::Duration delay) {
    FakeEngineOptions engine_options;
    engine_options.delay = delay;
    StartServer(engine_options);
  }

  // An engine that holds every request until engine_->Release().
  void StartHoldingServer(ServerOptions options = {}) {
    FakeEngineOptions engine_options;
    engine_options.hold = true;
    StartServer(engine_options, options);
  }

  // Execute(ReluRequest(id)) on a thread of its own; its status (and
  // response) land in `status` (`response`) once it ends.
  std::thread ExecuteInBackground(uint64_t id, grpc::Status* status,
                                  v1::ExecuteResponse* response = nullptr) {
    return std::thread([this, id, status, response] {
      grpc::ClientContext context;
      v1::ExecuteResponse ignored;
      *status = stub_->Execute(&context, ReluRequest(id), response ? response : &ignored);
    });
  }

  void TearDown() override {
    if (server_) server_->Shutdown(absl::Seconds(5));
    server_.reset();
    engine_.reset();
  }

  // grpc.health.v1.Health/Check through the generic stub (gRPC C++ ships
  // no generated health client): request field 1 = service, response
  // field 1 = status (1 SERVING, 2 NOT_SERVING).
  grpc::Status HealthCheck(const std::string& service, int* serving_status) {
    std::string request;
    request.push_back(0x0a);
    request.push_back(static_cast<char>(service.size()));
    request += service;
    std::string bytes;
    grpc::Status status = RawUnary("/grpc.health.v1.Health/Check", request, &bytes);
    *serving_status = !status.ok() ? -1 : bytes.size() == 2 && bytes[0] == 0x08 ? bytes[1] : 0;
    return status;
  }

  // A unary call of `method` with `request` as its raw message bytes.
  grpc::Status RawUnary(const std::string& method, const std::string& request,
                        std::string* response = nullptr) {
    grpc::Slice slice(request);
    grpc::ByteBuffer request_buffer(&slice, 1), response_buffer;
    grpc::GenericStub generic(channel_);
    grpc::ClientContext context;
    grpc::Status status;
    absl::Notification done;
    generic.UnaryCall(&context, method, grpc::StubOptions(), &request_buffer,
                      &response_buffer, [&](grpc::Status s) {
                        status = std::move(s);
                        done.Notify();
                      });
    done.WaitForNotification();
    std::vector<grpc::Slice> slices;
    if (response != nullptr && status.ok() &&
        response_buffer.Dump(&slices).ok()) {
      response->clear();
      for (const grpc::Slice& s : slices) {
        response->append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
    return status;
  }

  // The engine saw the call end (cancelled, or past its deadline): its
  // work stopped there, so the stop does not wait 30 s for it.
  void ExpectEngineWorkEnded() {
    const absl::Time start = absl::Now();
    server_->Shutdown(absl::Seconds(5));
    EXPECT_LT(absl::Now() - start, absl::Seconds(5));
    EXPECT_EQ(engine_->succeeded(), 0);
  }

  std::unique_ptr<FakeEngine> engine_;
  std::unique_ptr<DmlServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::DmlService::Stub> stub_;
};

TEST_F(ServiceTest, GetCapabilities) {
  StartServer();
  grpc::ClientContext context;
  v1::GetCapabilitiesResponse response;
  ASSERT_TRUE(stub_->GetCapabilities(&context, {}, &response).ok());
  EXPECT_EQ(response.server_version(), DMLSERVE_VERSION);
  EXPECT_EQ(response.device_name(), "fake device");
  EXPECT_EQ(response.highest_feature_level(), v1::FEATURE_LEVEL_6_4);
  EXPECT_GT(response.operators_size(), 20);
  EXPECT_EQ(response.limits().max_message_bytes(), 256u << 20);
  ASSERT_EQ(response.devices_size(), 1);
  EXPECT_EQ(response.devices(0).name(), "fake device");
  EXPECT_EQ(response.devices(0).backend(), "fake");
}

TEST_F(ServiceTest, HealthIsServing) {
  StartServer();
  int serving = 0;
  ASSERT_TRUE(HealthCheck("", &serving).ok());
  EXPECT_EQ(serving, 1);
  ASSERT_TRUE(HealthCheck(kServiceName, &serving).ok());
  EXPECT_EQ(serving, 1);
  EXPECT_EQ(HealthCheck("no.such.Service", &serving).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServiceTest, HealthFollowsTheEngine) {
  StartServer();
  // Both statuses reach `want` within a few watcher periods (100 ms); the
  // deadline is generous for a loaded machine. (A CI run that once missed
  // 2 s had its watcher thread start after set_healthy(false), when it
  // still took its first status from the engine: DmlServer::WatchHealth.)
  auto wait_for = [&](int want) {
    int serving = -1, service_serving = -1;
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      EXPECT_TRUE(HealthCheck("", &serving).ok());
      EXPECT_TRUE(HealthCheck(kServiceName, &service_serving).ok());
      if (serving == want && service_serving == want) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  };
  ASSERT_TRUE(wait_for(1));
  engine_->set_healthy(false);  // e.g. every device lost
  EXPECT_TRUE(wait_for(2));
  engine_->set_healthy(true);
  EXPECT_TRUE(wait_for(1));
}

TEST_F(ServiceTest, ExecuteReturnsTheOutput) {
  StartServer();
  grpc::ClientContext context;
  v1::ExecuteRequest request = Mvn1Request(9);
  v1::ExecuteResponse response;
  grpc::Status status = stub_->Execute(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.request_id(), 9u);
  EXPECT_EQ(response.output(), request.input());
  EXPECT_EQ(response.engine(), "fake");
  EXPECT_EQ(response.status_code(), 0);
}

TEST_F(ServiceTest, ExecuteCarriesPayloadsAboveGrpcsDefaultLimit) {
  StartServer();
  v1::ExecuteRequest request;
  v1::ActivationRelu* relu = request.mutable_operator_()->mutable_relu();
  *relu->mutable_input() = testing::Float32Tensor({1, 1, 1024, 2048});  // 8 MiB
  *relu->mutable_output() = relu->input();
  request.set_input(Payload(relu->input().total_tensor_size_in_bytes()));
  grpc::ClientContext context;
  v1::ExecuteResponse response;
  grpc::Status status = stub_->Execute(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.output(), request.input());
}

// The unary and streamed Execute hand the engine payloads that borrow
// gRPC's receive slices (message_codec.h's ParseRequestWithPayloads), not
// strings the message was first parsed into: no host copy on the way in.
TEST_F(ServiceTest, ExecutePayloadsReachTheEngineInTheReceivedSlices) {
  std::atomic<int> borrowed{0}, copied{0};
  FakeEngineOptions engine_options;
  engine_options.on_execute = [&](const ExecuteRequest& r) {
    for (const dmls::Payload* p : {&r.input, &r.scale, &r.bias}) {
      if (p->empty()) continue;
      ++(p->borrowed() ? borrowed : copied);
    }
  };
  StartServer(engine_options);
  // MVN1: input, scale and bias; a 4 MiB RELU arrives in several slices.
  v1::ExecuteRequest mvn = Mvn1Request(1);
  v1::ExecuteRequest large;
  v1::ActivationRelu* relu = large.mutable_operator_()->mutable_relu();
  *relu->mutable_input() = testing::Float32Tensor({1, 1, 1024, 1024});
  *relu->mutable_output() = relu->input();
  large.set_input(Payload(relu->input().total_tensor_size_in_bytes(), 5));
  large.set_request_id(2);
  for (const v1::ExecuteRequest* request : {&mvn, &large}) {
    grpc::ClientContext context;
    v1::ExecuteResponse response;
    grpc::Status status = stub_->Execute(&context, *request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.output(), request->input());
  }
  EXPECT_EQ(borrowed.load(), 4);
  EXPECT_EQ(copied.load(), 0);

  grpc::ClientContext context;
  auto stream = stub_->ExecuteStream(&context);
  ASSERT_TRUE(stream->Write(mvn));
  ASSERT_TRUE(stream->Write(large));
  stream->WritesDone();
  v1::ExecuteResponse response;
  for (int i = 0; i < 2; ++i) {  // in completion order
    ASSERT_TRUE(stream->Read(&response));
    EXPECT_EQ(response.output(), (response.request_id() == 1 ? mvn : large).input());
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(borrowed.load(), 8);
  EXPECT_EQ(copied.load(), 0);
}

TEST_F(ServiceTest, MessageAboveTheLimitIsResourceExhausted) {
  ServerOptions options;
  options.network.max_message_bytes = 64 * 1024;
  StartServer({}, options);
  v1::ExecuteRequest request = ReluRequest(1);
  request.set_input(Payload(128 * 1024));
  grpc::ClientContext context;
  v1::ExecuteResponse response;
  EXPECT_EQ(stub_->Execute(&context, request, &response).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(engine_->received(), 0);
}

TEST_F(ServiceTest, ExecuteInvalidHasBadRequestDetails) {
  StartServer();
  v1::ExecuteRequest request = Mvn1Request(1);
  request.mutable_operator_()->mutable_mvn1()->add_axes(3);
  grpc::ClientContext context;
  v1::ExecuteResponse response;
  grpc::Status status = stub_->Execute(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), StartsWith("MVN_AXES_DUPLICATE: "));
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  ASSERT_EQ(details.details_size(), 1);
  google::rpc::BadRequest bad_request;
  ASSERT_TRUE(details.details(0).UnpackTo(&bad_request));
  ASSERT_GE(bad_request.field_violations_size(), 1);
  EXPECT_EQ(bad_request.field_violations(0).field(), "operator.mvn1.axes[1]");
  EXPECT_THAT(bad_request.field_violations(0).description(),
              StartsWith("MVN_AXES_DUPLICATE: "));
}

TEST_F(ServiceTest, ExecuteWithoutOperatorIsInvalid) {
  StartServer();
  grpc::ClientContext context;
  v1::ExecuteResponse response;
  grpc::Status status = stub_->Execute(&context, {}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(status.error_details().empty());
}

TEST_F(ServiceTest, ValidateReportsEveryViolation) {
  StartServer();
  v1::ValidateRequest request;
  *request.mutable_operator_() = Mvn1Request(0).operator_();
  auto* mvn = request.mutable_operator_()->mutable_mvn1();
  mvn->add_axes(3);
  mvn->set_epsilon(-1.0f);
  request.set_in_place(true);
  grpc::ClientContext context;
  v1::ValidateResponse response;
  ASSERT_TRUE(stub_->Validate(&context, request, &response).ok());
  EXPECT_FALSE(response.valid());
  EXPECT_EQ(response.feature_level(), 0x6400u);
  std::vector<std::string> rules;
  for (const v1::FieldViolation& v : response.violations()) {
    rules.push_back(v.rule());
    EXPECT_THAT(v.description(), StartsWith(v.rule() + ": "));
  }
  EXPECT_THAT(
      rules, ::testing::ElementsAre("MVN_AXES_DUPLICATE", "MVN_EPSILON_INVALID",
                                    "INPLACE_NOT_SUPPORTED"));
}

TEST_F(ServiceTest, ExecuteStreamManyInFlightWithPerRequestErrors) {
  StartServer();
  constexpr int kRequests = 300;
  grpc::ClientContext context;
  auto stream = stub_->ExecuteStream(&context);
  std::map<uint64_t, std::string> inputs;
  for (int i = 0; i < kRequests; ++i) {
    v1::ExecuteRequest r = i % 2 ? ReluRequest(i) : Mvn1Request(i);
    if (i % 10 == 3) r.mutable_input()->pop_back();  // PAYLOAD_SIZE_MISMATCH
    inputs[i] = r.input();
  }
  std::thread writer([&] {
    for (int i = 0; i < kRequests; ++i) {
      v1::ExecuteRequest r = i % 2 ? ReluRequest(i) : Mvn1Request(i);
      if (i % 10 == 3) r.mutable_input()->pop_back();
      ASSERT_TRUE(stream->Write(r));
    }
    stream->WritesDone();
  });
  std::set<uint64_t> seen;
  v1::ExecuteResponse response;
  while (stream->Read(&response)) {
    uint64_t id = response.request_id();
    EXPECT_TRUE(seen.insert(id).second) << "duplicate response " << id;
    if (id % 10 == 3) {
      EXPECT_EQ(response.status_code(), 3);
      ASSERT_EQ(response.violations_size(), 1);
      EXPECT_EQ(response.violations(0).rule(), "PAYLOAD_SIZE_MISMATCH");
      EXPECT_EQ(response.violations(0).field(), "input");
    } else {
      EXPECT_EQ(response.status_code(), 0) << response.status_message();
      EXPECT_EQ(response.output(), inputs[id]);
    }
  }
  writer.join();
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(seen.size(), static_cast<size_t>(kRequests));
}

TEST_F(ServiceTest, ExecuteStreamWindowBoundsRequestsInFlight) {
  ServerOptions options;
  options.limits.stream_window = 8;
  StartHoldingServer(options);
  grpc::ClientContext context;
  auto stream = stub_->ExecuteStream(&context);
  constexpr int kRequests = 20;
  std::thread writer([&] {
    for (int i = 0; i < kRequests; ++i) stream->Write(ReluRequest(i));
    stream->WritesDone();
  });
  // All eight of the window are in the engine at once, and no more.
  ASSERT_TRUE(engine_->WaitForReceived(8));
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(engine_->received(), 8);
  engine_->Release();
  int responses = 0;
  v1::ExecuteResponse response;
  while (stream->Read(&response)) {
    EXPECT_EQ(response.status_code(), 0);
    ++responses;
  }
  writer.join();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(responses, kRequests);
}

TEST_F(ServiceTest, ExecuteStreamCancelledWhileTheEngineHoldsRequests) {
  StartHoldingServer();
  grpc::ClientContext context;
  auto stream = stub_->ExecuteStream(&context);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(stream->Write(ReluRequest(i)));
  ASSERT_TRUE(engine_->WaitForReceived(5));
  context.TryCancel();
  v1::ExecuteResponse response;
  while (stream->Read(&response)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The engine completes the held requests after the stream is gone; the
  // server must neither crash nor hang on shutdown.
  engine_->Release();
  server_->Shutdown(absl::Seconds(5));
  EXPECT_EQ(engine_->received(), 5);
}

TEST_F(ServiceTest, ExecuteStreamCancelledWithResponsesQueued) {
  StartServer();
  grpc::ClientContext context;
  auto stream = stub_->ExecuteStream(&context);
  // 1 MiB outputs that the client never reads: flow control stalls the
  // server's writes and the rest queue up behind the one being written.
  v1::ExecuteRequest request;
  v1::ActivationRelu* relu = request.mutable_operator_()->mutable_relu();
  *relu->mutable_input() = testing::Float32Tensor({1, 1, 512, 512});
  *relu->mutable_output() = relu->input();
  request.set_input(Payload(relu->input().total_tensor_size_in_bytes()));
  constexpr int kRequests = 16;
  for (int i = 0; i < kRequests; ++i) {
    request.set_request_id(i);
    ASSERT_TRUE(stream->Write(request));
  }
  ASSERT_TRUE(engine_->WaitForReceived(kRequests));
  absl::SleepFor(absl::Milliseconds(100));
  context.TryCancel();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  server_->Shutdown(absl::Seconds(5));
  EXPECT_EQ(engine_->succeeded(), kRequests);
}

TEST_F(ServiceTest, ExecuteStreamEmptyFinishesOk) {
  StartServer();
  grpc::ClientContext context;
  auto stream = stub_->ExecuteStream(&context);
  stream->WritesDone();
  v1::ExecuteResponse response;
  EXPECT_FALSE(stream->Read(&response));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(ServiceTest, ClientCancellationEndsTheCallPromptly) {
  StartSlowServer(absl::Seconds(30));
  grpc::ClientContext context;
  std::thread canceller([&] {
    engine_->WaitForReceived(1);
    context.TryCancel();
  });
  v1::ExecuteResponse response;
  absl::Time start = absl::Now();
  grpc::Status status = stub_->Execute(&context, ReluRequest(1), &response);
  canceller.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ExpectEngineWorkEnded();
}

// One unary call of RaceCancellations: its context, and its status once it
// ended (`ended` counts the ends).
struct RacingCall {
  grpc::ClientContext context;
  std::atomic<int> ended{0};
  grpc::Status status;
};

// The unary reactors' OnCancel and OnDone run on whichever thread gets
// there (rpc/inline_reactions.h): a poller, the engine's thread inside
// Finish, the handler's. `start(i, call, done)` starts call i (done(status)
// when it ends); some calls are cancelled at varying points of their life,
// racing answers of the 1 ms engine. Every call must end exactly once, OK
// or CANCELLED, some of each, and every call's ticket must end (the stop
// finds none left to wait for).
template <typename Start>
void RaceCancellations(DmlServer& server, Start start) {
  constexpr int kCalls = 400;
  std::vector<std::unique_ptr<RacingCall>> calls;
  absl::Mutex mu;
  int pending = kCalls;
  for (int i = 0; i < kCalls; ++i) {
    calls.push_back(std::make_unique<RacingCall>());
    RacingCall* c = calls.back().get();
    start(i, c, [c, &mu, &pending](grpc::Status status) {
      c->status = std::move(status);
      c->ended.fetch_add(1);
      absl::MutexLock lock(&mu);
      --pending;
    });
    // Cancel this call or an earlier one, at a point that varies with i.
    if (i >= 3 && i % 2 == 1) calls[i - (i % 7 == 1 ? 0 : 3)]->context.TryCancel();
  }
  {
    absl::MutexLock lock(&mu);
    auto all_ended = [&pending] { return pending == 0; };
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&all_ended), absl::Seconds(20)))
        << pending << " calls never ended";
  }
  int ok = 0, cancelled = 0;
  for (const auto& c : calls) {
    EXPECT_EQ(c->ended.load(), 1);
    if (c->status.ok()) {
      ++ok;
    } else {
      EXPECT_EQ(c->status.error_code(), grpc::StatusCode::CANCELLED) << c->status.error_message();
      ++cancelled;
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(cancelled, 0);
  const absl::Time start_of_stop = absl::Now();
  server.Shutdown(absl::Seconds(5));
  EXPECT_LT(absl::Now() - start_of_stop, absl::Seconds(4)) << "a call's ticket never ended";
}

TEST_F(ServiceTest, CancellationsRacingAnswersEndEveryCallOnce) {
  StartSlowServer(absl::Milliseconds(1));
  std::vector<std::pair<v1::ExecuteRequest, v1::ExecuteResponse>> messages(400);
  RaceCancellations(*server_, [&](int i, RacingCall* c, auto done) {
    auto& [request, response] = messages[i];
    request = ReluRequest(static_cast<uint64_t>(i));
    stub_->async()->Execute(&c->context, &request, &response, std::move(done));
  });
}

// The same for KServe's ModelInfer reactor.
TEST_F(ServiceTest, ModelInferCancellationsRacingAnswersEndEveryCallOnce) {
  StartSlowServer(absl::Milliseconds(1));
  auto kserve = inference::GRPCInferenceService::NewStub(channel_);
  std::vector<std::pair<inference::ModelInferRequest, inference::ModelInferResponse>> messages(
      400);
  RaceCancellations(*server_, [&](int i, RacingCall* c, auto done) {
    inference::ModelInferRequest& request = messages[i].first;
    request.set_model_name("activation_relu");
    auto* input = request.add_inputs();
    input->set_name("input");
    input->set_datatype("FP32");
    input->add_shape(4);
    request.add_raw_input_contents(std::string(16, '\0'));
    request.add_outputs()->set_name("output");
    kserve->async()->ModelInfer(&c->context, &request, &messages[i].second, std::move(done));
  });
}

TEST_F(ServiceTest, DeadlineIsHonoured) {
  StartSlowServer(absl::Seconds(30));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(200));
  v1::ExecuteResponse response;
  absl::Time start = absl::Now();
  grpc::Status status = stub_->Execute(&context, ReluRequest(1), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ExpectEngineWorkEnded();
}

TEST_F(ServiceTest, InFlightLimitIsResourceExhausted) {
  ServerOptions options;
  options.limits.max_in_flight = 2;
  StartHoldingServer(options);
  std::vector<std::thread> held;
  for (int i = 0; i < 2; ++i) {
    held.emplace_back([this, i] {
      grpc::ClientContext context;
      v1::ExecuteResponse response;
      EXPECT_TRUE(stub_->Execute(&context, ReluRequest(i), &response).ok());
    });
  }
  ASSERT_TRUE(engine_->WaitForReceived(2));
  grpc::ClientContext context;
  v1::ExecuteResponse response;
  grpc::Status status = stub_->Execute(&context, ReluRequest(3), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), StartsWith("IN_FLIGHT_LIMIT: "));
  engine_->Release();
  for (std::thread& t : held) t.join();
}

// A RELU chain step whose 4 KiB input broadcasts into a 4 MiB output.
v1::ChainStep AmplifyingStep() {
  v1::ChainStep step;
  v1::ActivationRelu* relu = step.mutable_operator_()->mutable_relu();
  *relu->mutable_output() = testing::Float32Tensor({1024, 1024});
  v1::TensorDesc* in = relu->mutable_input();
  *in = testing::Float32Tensor({1024, 1024});
  in->clear_strides();
  in->add_strides(0);
  in->add_strides(1);
  in->set_total_tensor_size_in_bytes(4096);
  step.mutable_input()->set_data(Payload(4096));
  step.set_return_output(true);
  return step;
}

TEST_F(ServiceTest, ExecuteChainRefusesOutputAmplification) {
  StartServer();
  v1::ChainRequest request;
  *request.add_steps() = AmplifyingStep();
  v1::ChainResponse response;
  {
    grpc::ClientContext context;
    context.AddMetadata("tenant", "amplifier");  // chains need an identity
    grpc::Status status = stub_->ExecuteChain(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(status.error_message(), StartsWith("OUTPUT_AMPLIFICATION: "));
  }
  EXPECT_EQ(engine_->received(), 0);
  // The call may raise the ratio with its metadata, as for Execute.
  grpc::ClientContext context;
  context.AddMetadata("tenant", "amplifier");
  context.AddMetadata("dmls-max-output-ratio", "1024");
  grpc::Status status = stub_->ExecuteChain(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.outputs_size(), 1);
  EXPECT_EQ(response.outputs(0).data().size(), 4u << 20);
}

// One ExecuteChunked call of `step`'s operator (a RELU by default): the
// header, its input in one chunk, end; the output bytes into *output.
grpc::Status RunChunked(v1::DmlService::Stub& stub, grpc::ClientContext& context,
                        std::string* output = nullptr, const v1::ChainStep* step = nullptr) {
  v1::ExecuteRequest relu = ReluRequest(1);
  const v1::OperatorDesc& op = step != nullptr ? step->operator_() : relu.operator_();
  const std::string& input = step != nullptr ? step->input().data() : relu.input();
  auto stream = stub.ExecuteChunked(&context);
  v1::ChunkedRequest header;
  header.mutable_header()->set_request_id(1);
  *header.mutable_header()->mutable_operator_() = op;
  stream->Write(header);
  v1::ChunkedRequest chunk;
  chunk.mutable_chunk()->set_slot(v1::TENSOR_SLOT_INPUT);
  chunk.mutable_chunk()->set_data(input);
  stream->Write(chunk);
  stream->WritesDone();
  v1::ChunkedResponse response;
  while (stream->Read(&response)) {
    if (output != nullptr) *output += response.chunk().data();
  }
  return stream->Finish();
}

TEST_F(ServiceTest, ExecuteChunkedRuns) {
  StartServer();
  grpc::ClientContext context;
  std::string output;
  grpc::Status status = RunChunked(*stub_, context, &output);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(output, ReluRequest(1).input());
}

// With room for one call in flight and an engine that holds it: `held`
// runs (and succeeds once released), and `refused`, started while it is
// held, gets IN_FLIGHT_LIMIT. Each call is given a deadline.
using Call = std::function<grpc::Status(grpc::ClientContext&)>;
void ExpectRefusedBehind(FakeEngine& engine, const Call& held, const Call& refused) {
  std::thread first([&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status = held(context);
    EXPECT_TRUE(status.ok()) << status.error_message();
  });
  ASSERT_TRUE(engine.WaitForReceived(1));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  grpc::Status status = refused(context);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), StartsWith("IN_FLIGHT_LIMIT: "));
  engine.Release();
  first.join();
}

TEST_F(ServiceTest, ExecuteChunkedCountsAgainstTheInFlightLimit) {
  ServerOptions options;
  options.limits.max_in_flight = 1;
  StartHoldingServer(options);
  const Call execute = [this](grpc::ClientContext& context) {
    v1::ExecuteResponse response;
    return stub_->Execute(&context, ReluRequest(1), &response);
  };
  const Call chunked = [this](grpc::ClientContext& context) {
    return RunChunked(*stub_, context);
  };
  // Refused behind an Execute, and holding its slot (from its header to
  // its end) in front of one.
  ExpectRefusedBehind(*engine_, execute, chunked);
  server_->Shutdown(absl::Seconds(5));
  server_.reset();
  StartHoldingServer(options);  // an engine that holds again
  ExpectRefusedBehind(*engine_, chunked, execute);
}

TEST_F(ServiceTest, ExecuteChunkedCountsAgainstTheMemoryBudget) {
  ServerOptions options;
  // 144 bytes each way, twice: 576 bytes.
  options.limits.memory_budget_bytes = 500;
  StartServer({}, options);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Status status = RunChunked(*stub_, context);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), StartsWith("MEMORY_BUDGET: "));
  EXPECT_EQ(engine_->received(), 0);
}

TEST_F(ServiceTest, ExecuteChunkedRefusesOutputAmplification) {
  StartServer();
  const v1::ChainStep step = AmplifyingStep();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Status status = RunChunked(*stub_, context, nullptr, &step);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), StartsWith("OUTPUT_AMPLIFICATION: "));
  EXPECT_EQ(engine_->received(), 0);
}

TEST_F(ServiceTest, ExecuteChunkedHonoursItsDeadline) {
  StartSlowServer(absl::Seconds(30));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  grpc::Status status = RunChunked(*stub_, context);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ExpectEngineWorkEnded();
}

TEST_F(ServiceTest, ShutdownLetsCallsInFlightFinish) {
  StartSlowServer(absl::Milliseconds(300));
  grpc::Status status;
  v1::ExecuteResponse response;
  std::thread call = ExecuteInBackground(5, &status, &response);
  ASSERT_TRUE(engine_->WaitForReceived(1));
  server_->Shutdown(absl::Seconds(10));
  call.join();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.request_id(), 5u);
  // New calls are refused after shutdown.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
  EXPECT_FALSE(stub_->Execute(&context, ReluRequest(6), &response).ok());
}

TEST_F(ServiceTest, DrainReportsNotServingAndKeepsServing) {
  StartSlowServer(absl::Milliseconds(300));
  grpc::Status slow_status;
  std::thread slow = ExecuteInBackground(1, &slow_status);
  ASSERT_TRUE(engine_->WaitForReceived(1));
  server_->StartDrain();
  int serving = 0;
  ASSERT_TRUE(HealthCheck("", &serving).ok());
  EXPECT_EQ(serving, 2);  // NOT_SERVING
  ASSERT_TRUE(HealthCheck(kServiceName, &serving).ok());
  EXPECT_EQ(serving, 2);
  // New calls are still accepted and answered during the drain.
  grpc::ClientContext context;
  v1::ExecuteResponse response;
  grpc::Status status = stub_->Execute(&context, ReluRequest(2), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.request_id(), 2u);
  server_->StartDrain();  // idempotent
  server_->Shutdown(absl::Seconds(10));
  slow.join();
  EXPECT_TRUE(slow_status.ok()) << slow_status.error_message();
}

TEST_F(ServiceTest, ShutdownCancelsCallsPastTheGrace) {
  StartSlowServer(absl::Seconds(30));
  grpc::Status status;
  std::thread call = ExecuteInBackground(5, &status);
  ASSERT_TRUE(engine_->WaitForReceived(1));
  absl::Time start = absl::Now();
  server_->Shutdown(absl::Milliseconds(200));
  call.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_FALSE(status.ok());
}

// gRPC's generated handlers would answer UNIMPLEMENTED with no message.
TEST_F(ServiceTest, UnparseableMessagesAreInvalidArgumentWithAReason) {
  StartServer();
  for (std::string method : {"Execute", "Validate"}) {
    grpc::Status s =
        RawUnary("/dmlserve.v1.DmlService/" + method, "\xff\xff\xff garbage");
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_EQ(s.error_message(),
              "the request is not a valid dmlserve.v1." + method +
                  "Request (11 bytes): field #8650751: invalid wire type 7 "
                  "at byte 0");
  }
  // Well-formed bytes through the same raw path work as before.
  std::string bytes;
  ASSERT_TRUE(RawUnary("/dmlserve.v1.DmlService/Execute",
                       ReluRequest(3).SerializeAsString(), &bytes)
                  .ok());
  v1::ExecuteResponse response;
  ASSERT_TRUE(response.ParseFromString(bytes));
  EXPECT_EQ(response.request_id(), 3u);
  EXPECT_EQ(response.output(), ReluRequest(3).input());
}

// Once the call tracker is closed (the stop has begun), every unary call is
// refused with UNAVAILABLE before its request is looked at: those answered
// inline (AnswerInline: Validate, the tensor and KServe calls) and those
// the engine answers (StartExecute, StartExecuteChain).
TEST_F(ServiceTest, UnaryCallsAreRefusedOnceTheStopHasBegun) {
  StartServer();
  server_->service().calls().Close();
  for (const char* method :
       {"/dmlserve.v1.DmlService/GetCapabilities", "/dmlserve.v1.DmlService/Validate",
        "/dmlserve.v1.DmlService/Execute", "/dmlserve.v1.DmlService/ExecuteChain",
        "/dmlserve.v1.TensorService/CreateTensor", "/dmlserve.v1.TensorService/ListTensors",
        "/dmlserve.v1.TensorService/ReleaseTensor",
        "/inference.GRPCInferenceService/ServerLive",
        "/inference.GRPCInferenceService/ModelReady"}) {
    grpc::Status s = RawUnary(method, "");
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << method;
    EXPECT_EQ(s.error_message(), kShuttingDownMessage) << method;
  }
  EXPECT_EQ(engine_->received(), 0);
}

TEST(DmlServerStart, PortInUseIsAnError) {
  FakeEngine engine;
  ServerOptions options;
  options.network.port = 0;
  auto first = DmlServer::Start(options, &engine, NullLogger());
  ASSERT_TRUE(first.ok());
  options.network.port = (*first)->port();
  auto second = DmlServer::Start(options, &engine, NullLogger());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace dmls::server
