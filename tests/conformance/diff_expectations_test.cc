// The expectations of the differential: parsing, the text a run writes, and
// what counts as a change.
#include "tests/conformance/diff_expectations.h"

#include "gtest/gtest.h"

namespace dmls::conformance {
namespace {

DiffRow Row(const std::string& id, DiffRow::Kind kind, const std::string& detail = "") {
  DiffRow r;
  r.id = id;
  r.kind = kind;
  r.detail = detail;
  return r;
}

TEST(DiffExpectations, TextRoundTripsAndListsOnlyWhatDoesNotAgree) {
  const std::vector<DiffRow> rows = {Row("b/2", DiffRow::Kind::kRefused),
                                     Row("a/1", DiffRow::Kind::kAgree),
                                     Row("a/3", DiffRow::Kind::kDisagree),
                                     Row("c/4", DiffRow::Kind::kTheirsFailed)};
  const std::string text = DiffExpectationsText(rows, "DirectML 1.15.4\nline two");
  EXPECT_EQ(text, "# DirectML 1.15.4\n# line two\na/3\tdisagree\nb/2\trefused\nc/4\tfailed\n");
  absl::StatusOr<DiffExpectations> parsed = ParseDiffExpectations(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->size(), 3u);
  EXPECT_EQ(parsed->at("b/2"), "refused");
  EXPECT_TRUE(DiffChanges(rows, *parsed).empty());
}

TEST(DiffExpectations, EveryChangeOfKindIsReportedBothWays) {
  const DiffExpectations expected = {{"a/1", "disagree"}, {"b/2", "refused"}};
  const std::vector<DiffRow> rows = {
      Row("a/1", DiffRow::Kind::kAgree),                       // a disagreement went away
      Row("b/2", DiffRow::Kind::kRefused),                     // as expected
      Row("c/3", DiffRow::Kind::kDisagree, "element 4: 1 vs 2"),  // a new one
  };
  const std::vector<std::string> changes = DiffChanges(rows, expected);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0], "a/1: expected disagree, got agree");
  EXPECT_EQ(changes[1], "c/3: expected agree, got disagree: element 4: 1 vs 2");
}

TEST(DiffExpectations, CasesNotRunAreNotCompared) {
  const DiffExpectations expected = {{"random/9", "failed"}};
  EXPECT_TRUE(DiffChanges({Row("edge/1", DiffRow::Kind::kAgree)}, expected).empty());
}

TEST(DiffExpectations, MalformedTextIsRefusedWithItsLine) {
  EXPECT_NE(ParseDiffExpectations("# c\na/1 disagree\n").status().message().find("line 2"),
            std::string::npos);
  EXPECT_NE(ParseDiffExpectations("a/1\tagree\n").status().message().find("not listed"),
            std::string::npos);
  EXPECT_NE(ParseDiffExpectations("a/1\tsideways\n").status().message().find("sideways"),
            std::string::npos);
  EXPECT_NE(ParseDiffExpectations("a/1\trefused\na/1\tfailed\n").status().message().find("twice"),
            std::string::npos);
  EXPECT_TRUE(ParseDiffExpectations("\n# only a comment\n").ok());
}

}  // namespace
}  // namespace dmls::conformance
