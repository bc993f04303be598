// DiffCase and DiffMarkdown with the CPU reference on both sides (every
// case agrees) and against engines that change one output element or refuse
// everything (each is reported as such, with the element's values).
#include "tests/conformance/differential.h"

#include <cstring>

#include "engine/cpu/cpu_engine.h"
#include "engine/cpu/tensor_access.h"
#include "gtest/gtest.h"

namespace dmls::conformance {
namespace {

// The CPU reference, except that the first logical output element of every
// FLOAT32 result has 1.0 added.
class PerturbingEngine : public Engine {
 public:
  DeviceInfo device_info() const override { return {"perturbing", "cpu", "test"}; }
  void Execute(ExecuteRequest request, ExecuteCallback done) override {
    absl::StatusOr<ExecuteResult> r = CpuEngine::Run(request);
    if (r.ok() && request.op.output->type() == DataType::kFloat32) {
      const uint64_t first = cpu::ElementOffsets(*request.op.output).front();
      float v = cpu::Load<float>(r->output.data(), first);
      cpu::Store<float>(r->output.data(), first, v + 1.0f);
    }
    done(std::move(r));
  }
};

class RefusingEngine : public Engine {
 public:
  DeviceInfo device_info() const override { return {"refusing", "cpu", "test"}; }
  void Execute(ExecuteRequest request, ExecuteCallback done) override {
    done(absl::InvalidArgumentError("DIRECTML_REFUSED: test"));
  }
};

std::vector<Case> SomeFloat32Cases() {
  absl::StatusOr<CaseSet> set = LoadCaseSet(DMLS_CONFORMANCE_DATA_DIR "/conformance_edge.pb");
  EXPECT_TRUE(set.ok()) << set.status();
  std::vector<Case> cases;
  if (!set.ok()) return cases;
  for (const Case& c : set->cases()) {
    if (c.output_dtype() == "FLOAT32" && cases.size() < 20) cases.push_back(c);
  }
  EXPECT_FALSE(cases.empty());
  return cases;
}

TEST(Differential, TheReferenceAgreesWithItself) {
  CpuEngine a, b;
  std::vector<DiffRow> rows;
  for (const Case& c : SomeFloat32Cases()) {
    rows.push_back(DiffCase(c, a, b));
    EXPECT_EQ(rows.back().kind, DiffRow::Kind::kAgree) << c.id() << ": " << rows.back().detail;
    EXPECT_TRUE(rows.back().ours_conforms) << c.id();
    EXPECT_TRUE(rows.back().theirs_conforms) << c.id();
  }
  const std::string md = DiffMarkdown(rows);
  EXPECT_NE(md.find("| operator | output type | cases | agree |"), std::string::npos);
  EXPECT_EQ(md.find("| disagree |", md.find("| case |")), std::string::npos);
}

TEST(Differential, AChangedElementIsADisagreementWithItsValues) {
  CpuEngine ours;
  PerturbingEngine theirs;
  int disagreements = 0;
  for (const Case& c : SomeFloat32Cases()) {
    const DiffRow row = DiffCase(c, ours, theirs);
    if (row.kind != DiffRow::Kind::kDisagree) continue;  // e.g. an Inf/NaN first element
    ++disagreements;
    EXPECT_EQ(row.element, 0u) << c.id();
    EXPECT_NE(row.ours, row.theirs) << c.id();
    EXPECT_FALSE(row.theirs_conforms) << c.id();
    EXPECT_TRUE(row.ours_conforms) << c.id();
    const std::string md = DiffMarkdown({row});
    EXPECT_NE(md.find("| " + row.id + " | disagree | 0 |"), std::string::npos) << md;
  }
  EXPECT_GT(disagreements, 0);
}

TEST(Differential, AnErrorIsARefusal) {
  CpuEngine ours;
  RefusingEngine theirs;
  const std::vector<Case> cases = SomeFloat32Cases();
  ASSERT_FALSE(cases.empty());
  const DiffRow row = DiffCase(cases.front(), ours, theirs);
  EXPECT_EQ(row.kind, DiffRow::Kind::kRefused);
  EXPECT_NE(row.detail.find("DIRECTML_REFUSED"), std::string::npos);
  EXPECT_NE(row.detail.find("; input FLOAT32 sizes ["), std::string::npos) << row.detail;
  EXPECT_NE(DiffMarkdown({row}).find("| 1 | 0 | 0 | 1 | 0 | 0 |"), std::string::npos)
      << DiffMarkdown({row});
}

}  // namespace
}  // namespace dmls::conformance
