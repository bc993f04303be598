#include "engine/sched/admission.h"

#include <atomic>
#include <memory>

#include "engine/core/engine_test_util.h"
#include "engine/core/tensor_desc.h"
#include "engine/ops/rule_status.h"
#include "gtest/gtest.h"

namespace dmls::sched {
namespace {

using Source = WorkSource::Kind;

ExecuteRequest Celu(uint64_t n) {
  ExecuteRequest r = core::testing::Float32Request(OperatorType::kActivationCelu, n);
  r.op.activation[0] = 1.0f;
  return r;
}

std::string RuleOf(const absl::Status& s) {
  std::vector<ops::Violation> v = ops::ViolationsOf(s);
  return v.empty() ? "" : v[0].rule + "@" + v[0].field;
}

absl::Status Check(const ExecuteRequest& r, AdmissionOptions o = {}) {
  Admission admission(o);
  return admission.Admit(ExecuteWork(r)).status();
}

TEST(AdmissionTest, ValidRequestPasses) {
  EXPECT_TRUE(Check(Celu(16)).ok());
  EXPECT_EQ(RequestBytes(Celu(16)), 128u);
}

TEST(AdmissionTest, ValidationComesFirst) {
  ExecuteRequest r = Celu(16);
  r.op.output->data_type = static_cast<uint32_t>(DataType::kFloat16);
  r.input.clear();            // and the payload is wrong too
  absl::Status s = Check(r);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(RuleOf(s).rfind("PAYLOAD_SIZE_MISMATCH", 0), 0u);
}

TEST(AdmissionTest, Limits) {
  AdmissionOptions o;
  o.max_tensor_bytes = 63;
  absl::Status s = Check(Celu(16), o);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RuleOf(s), "TENSOR_BYTES_LIMIT@operator.celu.input.total_tensor_size_in_bytes");
  EXPECT_NE(s.message().find("the input tensor has 64 bytes, above the server limit of 63"),
            std::string::npos)
      << s.message();
  o.max_tensor_bytes = 64;  // at the limit passes
  EXPECT_TRUE(Check(Celu(16), o).ok());
  o = AdmissionOptions{};
  o.max_output_bytes = 63;
  s = Check(Celu(16), o);
  EXPECT_EQ(RuleOf(s), "MESSAGE_BYTES_LIMIT@operator.celu.output.total_tensor_size_in_bytes");
  o.max_output_bytes = 64;
  EXPECT_TRUE(Check(Celu(16), o).ok());
}

TEST(AdmissionTest, PayloadSizes) {
  ExecuteRequest r = Celu(16);
  r.input.mutable_string().pop_back();
  EXPECT_EQ(RuleOf(Check(r)), "PAYLOAD_SIZE_MISMATCH@input");
  r = Celu(16);
  r.scale = "abcd";
  EXPECT_EQ(RuleOf(Check(r)), "PAYLOAD_SIZE_MISMATCH@scale");
}

// CELU whose input broadcasts one row of `row` elements over `rows` rows.
ExecuteRequest Broadcast(uint64_t rows, uint64_t row) {
  ExecuteRequest r;
  r.op.type = static_cast<uint32_t>(OperatorType::kActivationCelu);
  r.op.input = MakeTensorDesc(DataType::kFloat32, {rows, row}, std::vector<uint64_t>{0, 1});
  r.op.output = MakeTensorDesc(DataType::kFloat32, {rows, row});
  r.op.activation[0] = 1.0f;
  r.input = std::string(r.op.input->total_tensor_size_in_bytes, '\0');
  return r;
}

TEST(AdmissionTest, OutputAmplification) {
  AdmissionOptions o;
  o.max_output_ratio = 64;
  // 4 KiB in, 4 MiB out: 1024x.
  absl::Status s = Check(Broadcast(1024, 1024), o);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RuleOf(s), "OUTPUT_AMPLIFICATION@operator.celu.output.total_tensor_size_in_bytes");
  o.max_output_ratio = 1024;
  EXPECT_TRUE(Check(Broadcast(1024, 1024), o).ok());
  // Below the floor any ratio passes: 4 bytes in, 512 KiB out.
  o.max_output_ratio = 2;
  EXPECT_TRUE(Check(Broadcast(131072, 1), o).ok());
  o.max_output_ratio = 0;  // no limit
  EXPECT_TRUE(Check(Broadcast(1 << 20, 1), o).ok());

  // The call may raise the ratio, up to the limit.
  o.max_output_ratio = 64;
  o.max_output_ratio_limit = 512;
  Admission admission(o);
  Work w = ExecuteWork(Broadcast(1024, 1024));
  w.output_ratio = 4096;
  EXPECT_EQ(RuleOf(admission.Admit(w).status()),
            "OUTPUT_AMPLIFICATION@operator.celu.output.total_tensor_size_in_bytes");
  o.max_output_ratio_limit = 4096;
  Admission raised(o);
  EXPECT_TRUE(raised.Admit(w).ok());
}

// A chain: step 0 broadcasts 4 KiB of inline bytes into 4 MiB; step 1
// reads step 0's output.
Work AmplifyingChain() {
  ExecuteRequest b = Broadcast(1024, 1024);
  Work w;
  w.kind = Work::Kind::kChain;
  WorkStep& s0 = w.steps.emplace_back();
  s0.op = b.op;
  s0.input = {Source::kInline, b.input.size()};
  WorkStep& s1 = w.steps.emplace_back();
  s1.op.type = static_cast<uint32_t>(OperatorType::kActivationCelu);
  s1.op.input = b.op.output;
  s1.op.output = b.op.output;
  s1.op.activation[0] = 1.0f;
  s1.input.kind = Source::kStep;
  s1.input.step = 0;
  s1.returns_output = true;
  return w;
}

TEST(AdmissionTest, ChainsAreCheckedForAmplification) {
  AdmissionOptions o;
  o.max_output_ratio = 64;
  Admission admission(o);
  Work w = AmplifyingChain();
  absl::Status s = admission.Admit(w).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RuleOf(s), "OUTPUT_AMPLIFICATION@steps[0].operator.celu.output.total_tensor_size_in_bytes");
  // A resident input of the full size brings its bytes in.
  w.steps[0].input = {Source::kResident, 4 << 20, static_cast<uint32_t>(DataType::kFloat32)};
  w.steps[0].op.input = w.steps[0].op.output;
  EXPECT_TRUE(admission.Admit(w).ok());
}

TEST(AdmissionTest, ChainSourcesAndOutputs) {
  Admission admission(AdmissionOptions{});
  Work w = AmplifyingChain();
  w.steps[1].input.step = 1;  // itself
  w.steps[1].scale = {Source::kInline, 4};
  w.steps[0].target = WorkTarget{16, static_cast<uint32_t>(DataType::kFloat32)};
  absl::Status s = admission.Admit(w).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  std::vector<ops::Violation> v = ops::ViolationsOf(s);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].rule + "@" + v[0].field, "OUTPUT_HANDLE_TOO_SMALL@steps[0].output_handle");
  EXPECT_EQ(v[1].rule + "@" + v[1].field, "CHAIN_STEP_FORWARD@steps[1].input.step");
  EXPECT_EQ(v[2].rule + "@" + v[2].field, "CHAIN_SOURCE_UNEXPECTED@steps[1].scale");

  AdmissionOptions few;
  few.max_chain_steps = 1;
  Admission short_chains(few);
  EXPECT_EQ(RuleOf(short_chains.Admit(AmplifyingChain()).status()), "CHAIN_TOO_LONG@steps");
  AdmissionOptions small;
  small.max_output_bytes = 100;
  Admission small_responses(small);
  EXPECT_EQ(RuleOf(small_responses.Admit(AmplifyingChain()).status()),
            "MESSAGE_BYTES_LIMIT@steps");
}

TEST(AdmissionTest, ResidentTensorDescriptors) {
  AdmissionOptions o;
  o.max_tensor_bytes = 64;
  Admission admission(o);
  Work w;
  w.kind = Work::Kind::kTensor;
  w.tensor_path = "desc";
  w.tensor = MakeTensorDesc(DataType::kFloat32, {16});
  EXPECT_TRUE(admission.Admit(w).ok());
  w.tensor.total_tensor_size_in_bytes = 3;
  EXPECT_EQ(admission.Admit(w).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ops::ViolationsOf(admission.Admit(w).status())[0].field.rfind("desc.", 0), 0u);
  w.tensor = MakeTensorDesc(DataType::kFloat32, {17});
  EXPECT_EQ(RuleOf(admission.Admit(w).status()),
            "TENSOR_BYTES_LIMIT@desc.total_tensor_size_in_bytes");
}

TEST(AdmissionTest, CancellationAndDeadline) {
  auto clock = std::make_shared<FakeClock>();
  Admission admission(AdmissionOptions{}, clock);
  Work w = ExecuteWork(Celu(16));
  w.deadline = clock->Now() + absl::Seconds(1);
  EXPECT_TRUE(admission.Admit(w).ok());
  clock->Advance(absl::Seconds(1));
  EXPECT_EQ(admission.Admit(w).status().code(), absl::StatusCode::kDeadlineExceeded);
  w.deadline = absl::InfiniteFuture();
  auto cancelled = std::make_shared<std::atomic<bool>>(true);
  w.cancelled = cancelled;
  EXPECT_EQ(admission.Admit(w).status().code(), absl::StatusCode::kCancelled);
}

TEST(AdmissionTest, InFlightSlotsAndTheByteBudget) {
  AdmissionOptions o;
  o.max_in_flight = 1;
  o.memory_budget_bytes = 1000;
  Admission admission(o);
  const Work w = ExecuteWork(Celu(16));  // 64 in, 64 out: 256 bytes reserved
  absl::StatusOr<Admitted> a = admission.Admit(w);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->bytes(), 256u);
  EXPECT_EQ(RuleOf(admission.Admit(w).status()), "IN_FLIGHT_LIMIT@");
  a->ReleaseSlot();  // the engine is done; the bytes stay until the response is written
  EXPECT_EQ(admission.in_flight(), 0u);
  EXPECT_EQ(admission.budget().used(), 256u);
  Admitted moved = std::move(*a);
  absl::StatusOr<Admitted> b = admission.Admit(w);
  ASSERT_TRUE(b.ok());
  b->ReleaseSlot();
  absl::StatusOr<Admitted> c = admission.Admit(w);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(admission.budget().used(), 768u);
  // 1024 more would pass the budget.
  c->ReleaseSlot();
  absl::Status s = admission.Admit(ExecuteWork(Celu(64))).status();
  EXPECT_EQ(RuleOf(s), "MEMORY_BUDGET@");
  EXPECT_EQ(admission.in_flight(), 0u);  // nothing held on refusal
  moved = Admitted();
  *b = Admitted();
  *c = Admitted();
  EXPECT_EQ(admission.budget().used(), 0u);
  // Resident tensors take no slot.
  Work t;
  t.kind = Work::Kind::kTensor;
  t.tensor_path = "desc";
  t.tensor = MakeTensorDesc(DataType::kFloat32, {16});
  absl::StatusOr<Admitted> first = admission.Admit(w);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(admission.Admit(t).ok());
}

TEST(AdmissionTest, BytesReservedOutsideAdmittedWork) {
  AdmissionOptions o;
  o.memory_budget_bytes = 1000;
  Admission admission(o);
  absl::StatusOr<ByteBudget::Reservation> chunk = admission.ReserveBytes(600);
  ASSERT_TRUE(chunk.ok());
  EXPECT_EQ(admission.budget().used(), 600u);
  const absl::Status s = admission.ReserveBytes(600).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RuleOf(s), "MEMORY_BUDGET@");
  // Admitted work shares the budget: 256 more do not fit beside 600 + 200.
  absl::StatusOr<ByteBudget::Reservation> piece = admission.ReserveBytes(200);
  ASSERT_TRUE(piece.ok());
  EXPECT_EQ(RuleOf(admission.Admit(ExecuteWork(Celu(16))).status()), "MEMORY_BUDGET@");
  chunk->reset();
  EXPECT_EQ(admission.budget().used(), 200u);
  EXPECT_TRUE(admission.Admit(ExecuteWork(Celu(16))).ok());
  // Without a budget every reservation is granted.
  Admission unbounded{AdmissionOptions{}};
  EXPECT_TRUE(unbounded.ReserveBytes(uint64_t{1} << 40).ok());
}

}  // namespace
}  // namespace dmls::sched
