#include "engine/sched/admission.h"

#include "engine/core/engine_test_util.h"
#include "engine/core/tensor_desc.h"
#include "engine/ops/rule_status.h"
#include "gtest/gtest.h"

namespace dmls::sched {
namespace {

ExecuteRequest Celu(uint64_t n) {
  ExecuteRequest r = core::testing::Float32Request(OperatorType::kActivationCelu, n);
  r.op.activation[0] = 1.0f;
  return r;
}

std::string RuleOf(const absl::Status& s) {
  std::vector<ops::Violation> v = ops::ViolationsOf(s);
  return v.empty() ? "" : v[0].rule + "@" + v[0].field;
}

TEST(AdmissionTest, ValidRequestPasses) {
  EXPECT_TRUE(Admit(Celu(16), AdmissionOptions{}).ok());
  EXPECT_EQ(RequestBytes(Celu(16)), 128u);
}

TEST(AdmissionTest, ValidationComesFirst) {
  ExecuteRequest r = Celu(16);
  r.op.output->data_type = static_cast<uint32_t>(DataType::kFloat16);
  r.input.clear();            // and the payload is wrong too
  absl::Status s = Admit(r, AdmissionOptions{});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(RuleOf(s).rfind("PAYLOAD_SIZE_MISMATCH", 0), 0u);
}

TEST(AdmissionTest, Limits) {
  AdmissionOptions o;
  o.max_tensor_bytes = 63;
  absl::Status s = Admit(Celu(16), o);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RuleOf(s), "TENSOR_BYTES_LIMIT@operator.celu.input.total_tensor_size_in_bytes");
  o = AdmissionOptions{};
  o.max_output_bytes = 63;
  s = Admit(Celu(16), o);
  EXPECT_EQ(RuleOf(s), "MESSAGE_BYTES_LIMIT@operator.celu.output.total_tensor_size_in_bytes");
  o.max_output_bytes = 64;
  EXPECT_TRUE(Admit(Celu(16), o).ok());
}

TEST(AdmissionTest, PayloadSizes) {
  ExecuteRequest r = Celu(16);
  r.input.pop_back();
  EXPECT_EQ(RuleOf(Admit(r, {})), "PAYLOAD_SIZE_MISMATCH@input");
  r = Celu(16);
  r.scale = "abcd";
  EXPECT_EQ(RuleOf(Admit(r, {})), "PAYLOAD_SIZE_MISMATCH@scale");
}

// CELU whose input broadcasts one row of `row` elements over `rows` rows.
ExecuteRequest Broadcast(uint64_t rows, uint64_t row) {
  ExecuteRequest r;
  r.op.type = static_cast<uint32_t>(OperatorType::kActivationCelu);
  r.op.input = MakeTensorDesc(DataType::kFloat32, {rows, row}, std::vector<uint64_t>{0, 1});
  r.op.output = MakeTensorDesc(DataType::kFloat32, {rows, row});
  r.op.activation[0] = 1.0f;
  r.input.assign(r.op.input->total_tensor_size_in_bytes, '\0');
  return r;
}

TEST(AdmissionTest, OutputAmplification) {
  AdmissionOptions o;
  o.max_output_ratio = 64;
  // 4 KiB in, 4 MiB out: 1024x.
  absl::Status s = Admit(Broadcast(1024, 1024), o);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RuleOf(s), "OUTPUT_AMPLIFICATION@operator.celu.output.total_tensor_size_in_bytes");
  o.max_output_ratio = 1024;
  EXPECT_TRUE(Admit(Broadcast(1024, 1024), o).ok());
  // Below the floor any ratio passes: 4 bytes in, 512 KiB out.
  o.max_output_ratio = 2;
  EXPECT_TRUE(Admit(Broadcast(131072, 1), o).ok());
  o.max_output_ratio = 0;  // no limit
  EXPECT_TRUE(Admit(Broadcast(1 << 20, 1), o).ok());
}

}  // namespace
}  // namespace dmls::sched
