#include "server/request_processor.h"

#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/testing/fake_engine.h"
#include "server/testing/test_requests.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;
using testing::Mvn1Request;
using testing::NullLogger;
using testing::Payload;
using testing::ReluRequest;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::StartsWith;

// Runs one request through `p` and waits for its outcome.
ExecuteOutcome RunOne(RequestProcessor& p, v1::ExecuteRequest request,
                      CallContext context = {}) {
  absl::Notification done;
  ExecuteOutcome result;
  p.Execute(request, std::move(context), [&](ExecuteOutcome outcome) {
    result = std::move(outcome);
    done.Notify();
  });
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  return result;
}

// The outcome's violations, each as "RULE@field".
std::vector<std::string> Violations(const ExecuteOutcome& outcome) {
  std::vector<std::string> out;
  for (const auto& v : outcome.error.violations) out.push_back(v.rule + "@" + v.field);
  return out;
}

class RequestProcessorTest : public ::testing::Test {
 protected:
  explicit RequestProcessorTest(FakeEngineOptions engine_options = {},
                                ProcessorOptions options = {})
      : engine_(engine_options), processor_(&engine_, options, NullLogger()) {}

  FakeEngine engine_;
  RequestProcessor processor_;
};

TEST_F(RequestProcessorTest, ExecutesAndEchoesTheRequestId) {
  v1::ExecuteRequest request = ReluRequest(42);
  std::string input = request.input();
  absl::Notification done;
  ExecuteOutcome outcome;
  processor_.Execute(request, {}, [&](ExecuteOutcome o) {
    outcome = std::move(o);
    done.Notify();
  });
  // The payload was moved into the engine request, not copied.
  EXPECT_TRUE(request.input().empty());
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  ASSERT_TRUE(outcome.error.ok()) << outcome.error.message;
  EXPECT_EQ(outcome.response.request_id(), 42u);
  EXPECT_EQ(outcome.response.output(), input);
  EXPECT_EQ(outcome.response.engine(), "fake");
  EXPECT_EQ(processor_.in_flight(), 0u);
}

// Payloads the transport located in the received message (service.cc) reach
// the engine as they are: the same memory, no copy.
TEST(RequestProcessorPayloads, GivenPayloadsReachTheEngineUncopied) {
  auto received = std::make_shared<std::string>();
  v1::ExecuteRequest request = Mvn1Request(3);
  for (const std::string* field :
       {&request.input(), &request.scale(), &request.bias()}) {
    *received += *field;
  }
  const std::string_view all(*received);
  const size_t in = request.input().size(), scale = request.scale().size();
  // The input in two pieces, as gRPC may deliver it.
  std::array<dmls::Payload, 3> payloads = {
      dmls::Payload::Borrowed({all.substr(0, 100), all.substr(100, in - 100)}, received),
      dmls::Payload::Borrowed({all.substr(in, scale)}, received),
      dmls::Payload::Borrowed({all.substr(in + scale)}, received)};
  const std::string input = request.input();
  request.clear_input();
  request.clear_scale();
  request.clear_bias();

  std::vector<const char*> seen;  // each range's first byte, in order
  FakeEngineOptions engine_options;
  engine_options.on_execute = [&](const ExecuteRequest& r) {
    for (const dmls::Payload* p : {&r.input, &r.scale, &r.bias}) {
      for (std::string_view range : p->ranges()) seen.push_back(range.data());
    }
  };
  FakeEngine engine(engine_options);
  RequestProcessor processor(&engine, {}, NullLogger());
  absl::Notification done;
  ExecuteOutcome outcome;
  processor.Execute(
      request, {},
      [&](ExecuteOutcome o) {
        outcome = std::move(o);
        done.Notify();
      },
      std::move(payloads));
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  ASSERT_TRUE(outcome.error.ok()) << outcome.error.message;
  EXPECT_EQ(outcome.response.output(), input);
  const char* base = received->data();
  EXPECT_THAT(seen, ElementsAre(base, base + 100, base + in, base + in + scale));
}

// An Execute on handles: a tensor given both ways is reported before the
// server's lack of a tensor store and the call's malformed metadata.
TEST_F(RequestProcessorTest, AnExecuteOnHandlesReportsBothWaysFirst) {
  auto run = [this](v1::ExecuteRequest request, CallContext context) {
    ExecuteOutcome outcome;
    processor_.Execute(request, std::move(context), [&](ExecuteOutcome o) { outcome = std::move(o); });
    return outcome;
  };
  v1::ExecuteRequest both = ReluRequest(1);
  both.set_input_handle("t-" + std::string(32, 'f'));
  CallContext bad_metadata;
  bad_metadata.output_ratio = absl::InvalidArgumentError("malformed");
  ExecuteOutcome outcome = run(both, bad_metadata);
  EXPECT_EQ(outcome.error.code, absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Violations(outcome), ::testing::ElementsAre("HANDLE_AND_BYTES@input_handle"));
  v1::ExecuteRequest handle_only = both;
  handle_only.clear_input();
  EXPECT_EQ(run(handle_only, {}).error.code, absl::StatusCode::kUnimplemented);
}

TEST_F(RequestProcessorTest, Mvn1WithScaleAndBiasRuns) {
  ExecuteOutcome outcome = RunOne(processor_, Mvn1Request(7));
  EXPECT_TRUE(outcome.error.ok()) << outcome.error.message;
  EXPECT_EQ(outcome.response.output().size(), 144u);
}

TEST_F(RequestProcessorTest, ValidationErrorsCarryEveryViolation) {
  v1::ExecuteRequest request = ReluRequest(1);
  request.mutable_operator_()->mutable_relu()->mutable_input()->set_sizes(1, 0);
  request.mutable_operator_()->mutable_relu()->mutable_output()->set_flags(4);
  ExecuteOutcome outcome = RunOne(processor_, request);
  EXPECT_EQ(outcome.error.code, absl::StatusCode::kInvalidArgument);
  const std::vector<std::string> violations = Violations(outcome);
  ASSERT_GE(violations.size(), 2u);
  EXPECT_EQ(violations[0], "SIZE_ZERO@operator.relu.input.sizes[1]");
  EXPECT_THAT(outcome.error.message, StartsWith("SIZE_ZERO: "));
  EXPECT_EQ(outcome.response.request_id(), 1u);
  EXPECT_TRUE(outcome.response.output().empty());
  EXPECT_EQ(engine_.received(), 0);
}

TEST_F(RequestProcessorTest, FeatureLevelIsValidated) {
  v1::ExecuteRequest request = ReluRequest(1);
  request.set_feature_level(static_cast<v1::FeatureLevel>(0x2200));
  ExecuteOutcome outcome = RunOne(processor_, request);
  const std::vector<std::string> violations = Violations(outcome);
  ASSERT_FALSE(violations.empty());
  EXPECT_EQ(violations[0], "FL_UNKNOWN@feature_level");
}

TEST_F(RequestProcessorTest, PayloadSizeMustMatchTheTensor) {
  v1::ExecuteRequest request = ReluRequest(1);
  request.mutable_input()->pop_back();
  ExecuteOutcome outcome = RunOne(processor_, request);
  EXPECT_EQ(outcome.error.code, absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Violations(outcome), ElementsAre("PAYLOAD_SIZE_MISMATCH@input"));
  EXPECT_THAT(outcome.error.message, StartsWith("PAYLOAD_SIZE_MISMATCH: "));

  v1::ExecuteRequest mvn = Mvn1Request(2);
  mvn.set_bias(Payload(8));
  outcome = RunOne(processor_, mvn);
  EXPECT_THAT(Violations(outcome), ElementsAre(EndsWith("@bias")));
  EXPECT_EQ(engine_.received(), 0);
}

TEST_F(RequestProcessorTest, PayloadForAnAbsentTensorIsRejected) {
  v1::ExecuteRequest request = ReluRequest(1);
  request.set_scale(Payload(4));
  ExecuteOutcome outcome = RunOne(processor_, request);
  EXPECT_THAT(Violations(outcome), ElementsAre("PAYLOAD_SIZE_MISMATCH@scale"));
}

TEST_F(RequestProcessorTest, EngineErrorsKeepTheirCode) {
  ExecuteOutcome outcome =
      RunOne(processor_, ReluRequest(3),
             CallContext{absl::Now() - absl::Seconds(1), nullptr});
  EXPECT_EQ(outcome.error.code, absl::StatusCode::kDeadlineExceeded);

  auto cancelled = std::make_shared<std::atomic<bool>>(true);
  outcome = RunOne(processor_, ReluRequest(4),
                   CallContext{absl::InfiniteFuture(), cancelled});
  EXPECT_EQ(outcome.error.code, absl::StatusCode::kCancelled);
  EXPECT_EQ(engine_.received(), 0);

  FakeEngineOptions failing_options;
  failing_options.fail_with = absl::InternalError("boom");
  FakeEngine failing(failing_options);
  RequestProcessor p(&failing, {}, NullLogger());
  outcome = RunOne(p, ReluRequest(5));
  EXPECT_EQ(outcome.error.code, absl::StatusCode::kInternal);
  EXPECT_EQ(outcome.error.message, "boom");
  EXPECT_EQ(outcome.response.request_id(), 5u);
}

// A limit test: processors over one engine, each with options_ as the test
// has set them by then.
class RequestProcessorLimits : public ::testing::Test {
 protected:
  RequestProcessor& Processor() { return processors_.emplace_back(&engine_, options_, NullLogger()); }

  FakeEngine engine_;
  ProcessorOptions options_;
  std::deque<RequestProcessor> processors_;
};

TEST_F(RequestProcessorLimits, TensorBytesLimit) {
  options_.max_tensor_bytes = 100;
  RequestProcessor& p = Processor();
  ExecuteOutcome outcome = RunOne(p, ReluRequest(1));
  EXPECT_EQ(outcome.error.code, absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Violations(outcome),
              ElementsAre("TENSOR_BYTES_LIMIT@operator.relu.input.total_tensor_size_in_bytes"));
  EXPECT_THAT(outcome.error.message, StartsWith("TENSOR_BYTES_LIMIT: "));
  EXPECT_EQ(engine_.received(), 0);
}

TEST_F(RequestProcessorLimits, OutputThatCannotBeSentIsRefusedUpFront) {
  options_.max_message_bytes = 1024 + 143;  // the relu output is 144 bytes
  RequestProcessor& p = Processor();
  ExecuteOutcome outcome = RunOne(p, ReluRequest(1));
  EXPECT_EQ(outcome.error.code, absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Violations(outcome),
              ElementsAre("MESSAGE_BYTES_LIMIT@operator.relu.output.total_tensor_size_in_bytes"));
  EXPECT_EQ(engine_.received(), 0);

  options_.max_message_bytes = 1024 + 144;
  RequestProcessor& fits = Processor();
  EXPECT_TRUE(RunOne(fits, ReluRequest(2)).error.ok());
}

// The memory budget is held by a request until its outcome (and with it the
// reservation) is let go, i.e. until the response has been written.
TEST_F(RequestProcessorLimits, MemoryBudgetHoldsUntilTheResponseIsGone) {
  // A RELU request of 144 bytes reserves 2 x 144 + 2 x 144 = 576 bytes.
  options_.memory_budget_bytes = 1000;
  RequestProcessor& p = Processor();
  ExecuteOutcome first = RunOne(p, ReluRequest(1));
  ASSERT_TRUE(first.error.ok()) << first.error.message;
  EXPECT_EQ(first.admitted.bytes(), 576u);
  // While the first response is "being written", a second does not fit.
  ExecuteOutcome second = RunOne(p, ReluRequest(2));
  EXPECT_EQ(second.error.code, absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Violations(second), ElementsAre(StartsWith("MEMORY_BUDGET@")));
  EXPECT_EQ(p.in_flight(), 0u);
  first.admitted = sched::Admitted();  // written: the bytes come back
  ExecuteOutcome third = RunOne(p, ReluRequest(3));
  EXPECT_TRUE(third.error.ok()) << third.error.message;
  // A request larger than the whole budget never runs.
  options_.memory_budget_bytes = 100;
  RequestProcessor& small = Processor();
  EXPECT_EQ(RunOne(small, ReluRequest(4)).error.code,
            absl::StatusCode::kResourceExhausted);
}

TEST(RequestProcessorHeldLimits, InFlightLimit) {
  FakeEngineOptions engine_options;
  engine_options.hold = true;
  FakeEngine engine(engine_options);
  ProcessorOptions options;
  options.max_in_flight = 2;
  RequestProcessor p(&engine, options, NullLogger());
  absl::Notification first, second;
  v1::ExecuteRequest r1 = ReluRequest(1), r2 = ReluRequest(2);
  p.Execute(r1, {}, [&](ExecuteOutcome o) {
    EXPECT_TRUE(o.error.ok());
    first.Notify();
  });
  p.Execute(r2, {}, [&](ExecuteOutcome o) {
    EXPECT_TRUE(o.error.ok());
    second.Notify();
  });
  EXPECT_EQ(p.in_flight(), 2u);
  // The third is refused at once, while the engine still holds the others.
  ExecuteOutcome third = RunOne(p, ReluRequest(3));
  EXPECT_EQ(third.error.code, absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Violations(third), ElementsAre(StartsWith("IN_FLIGHT_LIMIT@")));
  EXPECT_FALSE(first.HasBeenNotified());

  engine.Release();
  ASSERT_TRUE(first.WaitForNotificationWithTimeout(absl::Seconds(5)));
  ASSERT_TRUE(second.WaitForNotificationWithTimeout(absl::Seconds(5)));
  // The callback runs after the count dropped.
  EXPECT_EQ(p.in_flight(), 0u);
  EXPECT_TRUE(RunOne(p, ReluRequest(4)).error.ok());
}

TEST(RequestProcessorHeldLimits, AbandonedCallsHoldNoSlot) {
  FakeEngineOptions engine_options;
  engine_options.hold = true;  // the engine's queue: nothing answered yet
  FakeEngine engine(engine_options);
  ProcessorOptions options;
  options.max_in_flight = 2;
  RequestProcessor p(&engine, options, NullLogger());
  // One call whose deadline passes while it waits, one whose client goes.
  CallContext short_deadline;
  short_deadline.deadline = absl::Now() + absl::Milliseconds(50);
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  CallContext cancelling;
  cancelling.cancelled = cancelled;
  std::atomic<int> answered{0};
  v1::ExecuteRequest r1 = ReluRequest(1), r2 = ReluRequest(2);
  p.Execute(r1, std::move(short_deadline), [&](ExecuteOutcome) { ++answered; });
  p.Execute(r2, std::move(cancelling), [&](ExecuteOutcome) { ++answered; });
  EXPECT_EQ(RunOne(p, ReluRequest(3)).error.code, absl::StatusCode::kResourceExhausted);
  cancelled->store(true);
  absl::SleepFor(absl::Milliseconds(60));
  // Both still with the engine, neither wanted: two new calls get slots.
  EXPECT_EQ(p.in_flight(), 2u);
  std::atomic<int> later{0};
  v1::ExecuteRequest r4 = ReluRequest(4), r5 = ReluRequest(5);
  p.Execute(r4, {}, [&](ExecuteOutcome o) {
    EXPECT_TRUE(o.error.ok()) << o.error.message;
    ++later;
  });
  p.Execute(r5, {}, [&](ExecuteOutcome o) {
    EXPECT_TRUE(o.error.ok()) << o.error.message;
    ++later;
  });
  EXPECT_EQ(p.in_flight(), 4u);
  // Those two are wanted: the limit holds again.
  EXPECT_EQ(RunOne(p, ReluRequest(6)).error.code, absl::StatusCode::kResourceExhausted);
  engine.Release();
  for (int i = 0; i < 500 && (answered < 2 || later < 2); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(answered.load(), 2);
  EXPECT_EQ(later.load(), 2);
  EXPECT_EQ(p.in_flight(), 0u);
}

TEST(RequestProcessorValidate, ReturnsEveryViolationAndTheLevelUsed) {
  FakeEngine engine;
  RequestProcessor p(&engine, {}, NullLogger());
  v1::ValidateRequest request;
  *request.mutable_operator_() = Mvn1Request(0).operator_();
  v1::ValidateResponse ok = p.Validate(request);
  EXPECT_TRUE(ok.valid());
  EXPECT_EQ(ok.feature_level(), 0x6400u);
  EXPECT_EQ(ok.violations_size(), 0);

  auto* mvn = request.mutable_operator_()->mutable_mvn1();
  mvn->add_axes(3);  // duplicate
  mvn->set_epsilon(-1.0f);
  request.set_feature_level(v1::FEATURE_LEVEL_3_1);
  v1::ValidateResponse bad = p.Validate(request);
  EXPECT_FALSE(bad.valid());
  EXPECT_EQ(bad.feature_level(), 0x3100u);
  ASSERT_GE(bad.violations_size(), 2);
  EXPECT_EQ(bad.violations(0).rule(), "MVN_AXES_DUPLICATE");
  EXPECT_EQ(bad.violations(0).field(), "operator.mvn1.axes[1]");
  EXPECT_THAT(bad.violations(0).description(),
              StartsWith("MVN_AXES_DUPLICATE: "));
  EXPECT_EQ(bad.violations(1).rule(), "MVN_EPSILON_INVALID");
  EXPECT_EQ(engine.received(), 0);
}

}  // namespace
}  // namespace dmls::server
