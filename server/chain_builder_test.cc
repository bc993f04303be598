#include "server/chain_builder.h"

#include <array>

#include "engine/ops/rule_status.h"
#include "engine/sched/admission.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/testing/fake_engine.h"
#include "server/mapping/proto_mapping.h"
#include "server/security/principal.h"
#include "server/testing/test_requests.h"

namespace dmls::server {
namespace {

namespace v1 = dmlserve::v1;
using ::testing::ElementsAre;
using ::testing::Pair;
using testing::Float32Tensor;
using testing::ReluRequest;

std::vector<std::pair<std::string, std::string>> RulesOf(const absl::Status& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ops::Violation& v : ops::ViolationsOf(s)) out.emplace_back(v.rule, v.field);
  return out;
}

class ChainBuilderTest : public ::testing::Test {
 protected:
  ChainBuilderTest() : store_(&engine_, StoreOptions()) {}
  static store::TensorStoreOptions StoreOptions() {
    store::TensorStoreOptions o;
    o.sweep_interval = absl::ZeroDuration();
    return o;
  }
  // A resident FLOAT32 tensor of `sizes` owned by `owner`.
  std::string Resident(const std::vector<uint64_t>& sizes, const std::string& owner = "me") {
    auto t = store_.Create(owner, TensorFromProto(Float32Tensor(sizes)), absl::ZeroDuration(),
                           false);
    EXPECT_TRUE(t.ok());
    return (*t)->handle;
  }
  // A RELU step over 2x3x2x3 FLOAT32.
  static v1::ChainStep Relu() {
    v1::ExecuteRequest r = ReluRequest(1);
    v1::ChainStep s;
    *s.mutable_operator_() = r.operator_();
    return s;
  }
  // Built, admitted and its kept outputs created, as RequestProcessor does.
  absl::StatusOr<BuiltChain> Build(v1::ChainRequest& r) {
    absl::StatusOr<BuiltChain> built = BuildChain(r, principal_, store_, kHighestFeatureLevel);
    if (!built.ok()) return built.status();
    sched::Admission admission(limits_);
    if (absl::Status s = admission.Admit(built->work).status(); !s.ok()) return s;
    if (absl::Status s = built->CreateKept(store_, principal_); !s.ok()) return s;
    return built;
  }
  // The violations admission (under `limits`) reports for `e` (with its
  // payloads `bytes`), which must build.
  std::vector<std::pair<std::string, std::string>> AdmissionRules(
      v1::ExecuteRequest e, std::array<std::string, 3> bytes,
      const sched::AdmissionOptions& limits) {
    absl::StatusOr<BuiltChain> built =
        BuildExecute(e, bytes, principal_, store_, kHighestFeatureLevel);
    EXPECT_TRUE(built.ok()) << built.status();
    if (!built.ok()) return {};
    return RulesOf(sched::Admission(limits).Admit(built->work).status());
  }
  FakeEngine engine_;
  store::TensorStore store_;
  sched::AdmissionOptions limits_;
  // The caller, as PrincipalOf gives it.
  absl::StatusOr<std::string> principal_ = std::string("me");
};

// RELU over the resident tensor `handle` (its input bytes left out).
v1::ExecuteRequest ReluOn(const std::string& handle) {
  v1::ExecuteRequest r = ReluRequest(1);
  r.clear_input();
  r.set_input_handle(handle);
  return r;
}

// A caller without identity needs none for a chain of inline bytes; a
// chain that names a handle or keeps an output gets the principal's
// TENANT_REQUIRED at that field.
TEST_F(ChainBuilderTest, IdentityIsNeededOnlyWhereATensorIs) {
  const std::string h = Resident({2, 3, 2, 3});
  principal_ = ops::RuleStatus(absl::StatusCode::kInvalidArgument, kTenantRequired,
                               kTenantMetadataKey, "no identity");
  v1::ChainRequest inline_only;
  v1::ChainStep* a = inline_only.add_steps();
  *a = Relu();
  a->mutable_input()->set_data(std::string(36 * 4, '\0'));
  v1::ChainStep* b = inline_only.add_steps();
  *b = Relu();
  b->mutable_input()->set_step(0);
  b->set_return_output(true);
  absl::StatusOr<BuiltChain> built = Build(inline_only);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->outputs.size(), 1u);

  struct Case {
    const char* field;
    void (*use)(v1::ChainStep&, const std::string&);
  };
  const Case cases[] = {
      {"steps[1].input.handle",
       [](v1::ChainStep& s, const std::string& h) { s.mutable_input()->set_handle(h); }},
      {"steps[1].output_handle",
       [](v1::ChainStep& s, const std::string& h) {
         s.mutable_input()->set_step(0);
         s.set_output_handle(h);
       }},
      {"steps[1].keep_output", [](v1::ChainStep& s, const std::string&) {
         s.mutable_input()->set_step(0);
         s.set_keep_output(true);
       }}};
  for (const Case& c : cases) {
    v1::ChainRequest r;
    v1::ChainStep* first = r.add_steps();
    *first = Relu();
    first->mutable_input()->set_data(std::string(36 * 4, '\0'));
    first->set_return_output(true);
    v1::ChainStep* second = r.add_steps();
    *second = Relu();
    c.use(*second, h);
    absl::Status s = Build(r).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(RulesOf(s), ElementsAre(Pair(kTenantRequired, c.field))) << s;
  }
  EXPECT_EQ(store_.stats().tensors, 1u);  // nothing created or left pending
}

TEST_F(ChainBuilderTest, BuildsSourcesAndOutputs) {
  const std::string h = Resident({2, 3, 2, 3});
  v1::ChainRequest r;
  v1::ChainStep* a = r.add_steps();
  *a = Relu();
  a->mutable_input()->set_handle(h);
  v1::ChainStep* b = r.add_steps();
  *b = Relu();
  b->mutable_input()->set_step(0);
  b->set_return_output(true);
  b->set_keep_output(true);
  absl::StatusOr<BuiltChain> built = Build(r);
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_EQ(built->request.steps.size(), 2u);
  EXPECT_EQ(built->request.steps[0].input.kind, ChainSource::Kind::kResident);
  EXPECT_EQ(built->request.steps[1].input.kind, ChainSource::Kind::kStep);
  EXPECT_NE(built->request.steps[1].output, nullptr);
  ASSERT_EQ(built->outputs.size(), 1u);
  EXPECT_TRUE(built->outputs[0].returns_bytes);
  EXPECT_TRUE(built->outputs[0].new_tensor);
  // Pending until settled.
  EXPECT_FALSE(store_.Find("me", built->outputs[0].handle).ok());
  built->Settle(store_, true);
  EXPECT_TRUE(store_.Find("me", built->outputs[0].handle).ok());
}

TEST_F(ChainBuilderTest, EveryProblemWithItsPath) {
  const std::string small = Resident({1, 1, 1, 2});
  v1::ChainRequest r;
  *r.add_steps() = Relu();  // step 0: no input source
  v1::ChainStep* s1 = r.add_steps();
  *s1 = Relu();
  s1->mutable_input()->set_step(1);  // itself
  v1::ChainStep* s2 = r.add_steps();
  *s2 = Relu();
  s2->mutable_input()->set_handle(small);  // wrong size
  s2->mutable_scale()->set_data("xx");     // RELU has no scale
  s2->set_return_output(true);
  v1::ChainStep* s3 = r.add_steps();
  *s3 = Relu();
  s3->mutable_operator_()->mutable_relu()->mutable_input()->add_sizes(7);  // rank mismatch
  s3->mutable_input()->set_data(std::string(144, 'a'));
  s3->set_return_output(true);
  absl::Status s = Build(r).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  std::vector<std::pair<std::string, std::string>> rules = RulesOf(s);
  ASSERT_GE(rules.size(), 5u);
  EXPECT_EQ(rules[0], std::make_pair(std::string("CHAIN_SOURCE_MISSING"), std::string("steps[0].input")));
  EXPECT_EQ(rules[1], std::make_pair(std::string("CHAIN_STEP_FORWARD"), std::string("steps[1].input.step")));
  EXPECT_EQ(rules[2], std::make_pair(std::string("HANDLE_SIZE_MISMATCH"), std::string("steps[2].input.handle")));
  EXPECT_EQ(rules[3], std::make_pair(std::string("CHAIN_SOURCE_UNEXPECTED"), std::string("steps[2].scale")));
  EXPECT_THAT(rules[4].second, ::testing::StartsWith("steps[3].operator.relu."));
}

TEST_F(ChainBuilderTest, AnotherPrincipalsHandleIsNotFound) {
  const std::string theirs = Resident({2, 3, 2, 3}, "them");
  v1::ChainRequest r;
  *r.add_steps() = Relu();
  r.mutable_steps(0)->mutable_input()->set_handle(theirs);
  r.mutable_steps(0)->set_return_output(true);
  absl::Status s = Build(r).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(RulesOf(s), ElementsAre(Pair("HANDLE_NOT_FOUND", "steps[0].input.handle")));
}

TEST_F(ChainBuilderTest, OutputRules) {
  const std::string h = Resident({2, 3, 2, 3});
  const std::string small = Resident({1, 1, 1, 2});
  auto one = [&](auto edit) {
    v1::ChainRequest r;
    *r.add_steps() = Relu();
    r.mutable_steps(0)->mutable_input()->set_handle(h);
    edit(*r.mutable_steps(0));
    return RulesOf(Build(r).status());
  };
  EXPECT_THAT(one([](v1::ChainStep&) {}), ElementsAre(Pair("CHAIN_NO_OUTPUT", "steps")));
  EXPECT_THAT(one([&](v1::ChainStep& s) { s.set_output_handle(h); }),
              ElementsAre(Pair("OUTPUT_ALIASES_INPUT", "steps[0].output_handle")));
  EXPECT_THAT(one([&](v1::ChainStep& s) { s.set_output_handle(small); }),
              ElementsAre(Pair("OUTPUT_HANDLE_TOO_SMALL", "steps[0].output_handle")));
  EXPECT_THAT(one([&](v1::ChainStep& s) {
                s.set_output_handle(small);
                s.set_keep_output(true);
              }),
              ElementsAre(Pair("OUTPUT_MODE_CONFLICT", "steps[0].keep_output")));
  // In place on a resident input is an output of its own.
  EXPECT_TRUE(one([](v1::ChainStep& s) { s.set_in_place(true); }).empty());
}

TEST_F(ChainBuilderTest, LimitsAreResourceExhausted) {
  limits_.max_chain_steps = 2;
  v1::ChainRequest r;
  for (int i = 0; i < 3; ++i) *r.add_steps() = Relu();
  // Its length is checked before its steps (none has an input).
  r.mutable_steps(2)->set_return_output(true);
  EXPECT_EQ(Build(r).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(RulesOf(Build(r).status()), ElementsAre(Pair("CHAIN_TOO_LONG", "steps")));
  limits_.max_chain_steps = 64;
  limits_.max_output_bytes = 100;
  v1::ChainRequest big;
  *big.add_steps() = Relu();
  big.mutable_steps(0)->mutable_input()->set_data(std::string(144, 'a'));
  big.mutable_steps(0)->set_return_output(true);
  EXPECT_THAT(RulesOf(Build(big).status()), ElementsAre(Pair("MESSAGE_BYTES_LIMIT", "steps")));
}

// An Execute on handles is a one-step chain of kind kExecute whose errors
// name ExecuteRequest's fields, from the builder and from admission alike.
TEST_F(ChainBuilderTest, ExecuteRequestsBecomeOneStepChains) {
  std::array<std::string, 3> none;
  v1::ExecuteRequest e = ReluRequest(9);
  e.set_input_handle("t-x");
  std::array<std::string, 3> bytes = {e.input(), "", ""};
  EXPECT_THAT(RulesOf(BuildExecute(e, bytes, principal_, store_, kHighestFeatureLevel).status()),
              ElementsAre(Pair("HANDLE_AND_BYTES", "input_handle")));

  const std::string h = Resident({2, 3, 2, 3});
  v1::ExecuteRequest k = ReluRequest(9);
  k.clear_input();
  k.set_input_handle(h);
  k.set_keep_output(true);
  EXPECT_TRUE(UsesResidentTensors(k));
  EXPECT_FALSE(UsesResidentTensors(ReluRequest(1)));
  absl::StatusOr<BuiltChain> built = BuildExecute(k, none, principal_, store_, kHighestFeatureLevel);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->work.kind, sched::Work::Kind::kExecute);
  ASSERT_EQ(built->request.steps.size(), 1u);
  EXPECT_EQ(built->request.steps[0].input.kind, ChainSource::Kind::kResident);
  EXPECT_FALSE(built->request.steps[0].return_output);
  ASSERT_EQ(built->outputs.size(), 1u);
  EXPECT_TRUE(built->outputs[0].keep);
  EXPECT_EQ(built->outputs[0].keep_path, "keep_output");

  // Admission reports the Execute's fields: a resident tensor of the wrong
  // size at input_handle, a handle for a tensor the operator lacks at its
  // slot, a response above the limit at the operator's output.
  EXPECT_THAT(AdmissionRules(ReluOn(Resident({3})), none, limits_),
              ElementsAre(Pair("HANDLE_SIZE_MISMATCH", "input_handle")));
  v1::ExecuteRequest scale = ReluRequest(1);
  scale.set_scale_handle(h);
  EXPECT_THAT(AdmissionRules(scale, {scale.input(), "", ""}, limits_),
              ElementsAre(Pair("CHAIN_SOURCE_UNEXPECTED", "scale_handle")));
  sched::AdmissionOptions tight = limits_;
  tight.max_output_bytes = 100;
  EXPECT_THAT(AdmissionRules(ReluOn(h), none, tight),
              ElementsAre(Pair("MESSAGE_BYTES_LIMIT", "operator.relu.output.total_tensor_size_in_bytes")));
  // Inline scale bytes for an operator without a scale: the payload rule of
  // an inline Execute, at the Execute's field.
  EXPECT_THAT(AdmissionRules(ReluOn(h), {"", "abcd", ""}, limits_),
              ElementsAre(Pair("PAYLOAD_SIZE_MISMATCH", "scale")));
  // An unknown output handle and a caller without identity, at their fields.
  v1::ExecuteRequest out = ReluRequest(1);
  out.set_output_handle("t-" + std::string(32, 'f'));
  bytes = {out.input(), "", ""};
  EXPECT_THAT(RulesOf(BuildExecute(out, bytes, principal_, store_, kHighestFeatureLevel).status()),
              ElementsAre(Pair("HANDLE_NOT_FOUND", "output_handle")));
  principal_ = ops::RuleStatus(absl::StatusCode::kInvalidArgument, kTenantRequired,
                               kTenantMetadataKey, "no identity");
  EXPECT_THAT(RulesOf(BuildExecute(k, none, principal_, store_, kHighestFeatureLevel).status()),
              ElementsAre(Pair(kTenantRequired, "input_handle")));
}

}  // namespace
}  // namespace dmls::server
