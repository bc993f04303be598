#include "engine/sched/admission.h"

#include "engine/core/tensor_desc.h"
#include "engine/ops/rule_status.h"
#include "gtest/gtest.h"

namespace dmls::sched {
namespace {

ExecuteRequest Celu(uint64_t n) {
  ExecuteRequest r;
  r.op.type = static_cast<uint32_t>(OperatorType::kActivationCelu);
  r.op.input = MakeTensorDesc(DataType::kFloat32, {n});
  r.op.output = r.op.input;
  r.op.activation[0] = 1.0f;
  r.input.assign(r.op.input->total_tensor_size_in_bytes, '\0');
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

}  // namespace
}  // namespace dmls::sched
