#include "client/dmlctl_flags.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dmls::client::ctl {
namespace {

using ::testing::HasSubstr;

Args Parse(std::vector<std::string> words) {
  std::vector<char*> argv;
  static char program[] = "dmlctl";
  argv.push_back(program);
  for (std::string& w : words) argv.push_back(w.data());
  return ParseArgs(static_cast<int>(argv.size()), argv.data());
}

TEST(DmlctlFlagsTest, UnknownFlagsAreErrorsThatListTheValidOnes) {
  for (const auto& [words, command] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--bogus=1", "caps"}, "caps"},
           {{"run", "op.json", "--random=1", "--shapee=3"}, "run"},
           {{"validate", "op.json", "--random=1"}, "validate"},
           {{"run", "chain.json", "--repeat=2"}, "run-chain"},
           {{"rm", "h", "--json"}, "rm"}}) {
    absl::Status s = CheckFlags(Parse(words), command);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << command;
    EXPECT_THAT(s.message(), HasSubstr("unknown flag --"));
    EXPECT_THAT(s.message(), HasSubstr("global: --server"));
  }
  EXPECT_THAT(CheckFlags(Parse({"--bogus=1", "caps"}), "caps").message(),
              HasSubstr("--bogus for dmlctl caps; its flags: --summary"));
  EXPECT_THAT(CheckFlags(Parse({"run", "c.json", "--repeat=2"}), "run-chain")
                  .message(),
              HasSubstr("for dmlctl run CHAIN.json"));
}

TEST(DmlctlFlagsTest, EachCommandTakesItsOwnAndTheGlobalFlags) {
  EXPECT_TRUE(CheckFlags(Parse({"--server=h:1", "--tenant=t", "--tls", "caps",
                                "--summary"}),
                         "caps")
                  .ok());
  EXPECT_TRUE(CheckFlags(Parse({"validate", "op.json", "--shape=2,3",
                                "--data-type=FLOAT16", "--feature-level=6_4"}),
                         "validate")
                  .ok());
  EXPECT_TRUE(CheckFlags(Parse({"run", "op.json", "--random=1", "--shape=2",
                                "--output=o.npy", "--repeat=3"}),
                         "run")
                  .ok());
  EXPECT_TRUE(CheckFlags(Parse({"run", "chain.json", "--input-handle=t-1",
                                "--output-dir=d"}),
                         "run-chain")
                  .ok());
  EXPECT_TRUE(CheckFlags(Parse({"rm", "a", "b"}), "rm").ok());
}

TEST(DmlctlFlagsTest, BooleanFlagsTakeNoValue) {
  const Args args = Parse({"--help", "caps", "--summary", "--version"});
  ASSERT_EQ(args.positional.size(), 1u);
  EXPECT_EQ(args.positional[0], "caps");
  EXPECT_TRUE(args.Has("summary"));
  EXPECT_TRUE(args.Has("version"));
}

}  // namespace
}  // namespace dmls::client::ctl
