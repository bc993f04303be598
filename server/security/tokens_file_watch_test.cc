#include "server/security/tokens_file_watch.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/testing/temp_file.h"
#include "spdlog/sinks/ostream_sink.h"

namespace dmls::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kAlice[] = "alice-token-0123456789abcdef alice\n";
constexpr char kDave[] = "dave-token-0123456789abcdefgh dave\n";

class TokensFileWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logger_ = std::make_shared<spdlog::logger>(
        "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_));
    TokenAuthOptions options;
    options.tokens_file = file_.path();
    absl::StatusOr<std::shared_ptr<TokenAuthenticator>> tokens =
        TokenAuthenticator::Create(options);
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    tokens_ = *tokens;
  }
  void Write(const std::string& text) { file_.Write(text); }

  bool Knows(const std::string& token) const {
    const std::string header = "Bearer " + token;
    const absl::string_view values[] = {header};
    absl::StatusOr<std::optional<TokenEntry>> entry = tokens_->Authenticate(values);
    return entry.ok() && entry->has_value();
  }
  // Polls `done` for up to 5 s.
  template <typename F>
  bool Eventually(F done) const {
    const absl::Time until = absl::Now() + absl::Seconds(5);
    while (!done()) {
      if (absl::Now() > until) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }
  std::string Log() {
    logger_->flush();
    return log_.str();
  }
  TokensFileWatchOptions Fast() const {
    TokensFileWatchOptions options;
    options.path = file_.path();
    options.interval = absl::Milliseconds(20);
    options.settle = absl::Milliseconds(10);
    return options;
  }

  const testing::TempFile file_{"watched_tokens", kAlice};
  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<TokenAuthenticator> tokens_;
};

TEST_F(TokensFileWatchTest, AChangedFileIsPickedUp) {
  TokensFileWatch watch(tokens_, Fast(), logger_);
  EXPECT_TRUE(Knows("alice-token-0123456789abcdef"));
  Write(std::string(kAlice) + kDave);
  EXPECT_TRUE(Eventually([&] { return Knows("dave-token-0123456789abcdefgh"); }));
  EXPECT_TRUE(Knows("alice-token-0123456789abcdef"));
  EXPECT_EQ(tokens_->token_count(), 2u);
  EXPECT_THAT(Log(), HasSubstr("tokens file changed: reloaded the tokens file (2 tokens)"));
  // A removed token goes at the next change. Wait for the whole new file:
  // a watch turn that falls between the write's truncation and its bytes
  // (a loaded machine) reads an empty file, which knows neither token,
  // and the next turn reads the rest.
  Write(kDave);
  EXPECT_TRUE(Eventually([&] {
    return !Knows("alice-token-0123456789abcdef") && Knows("dave-token-0123456789abcdefgh");
  }));
}

TEST_F(TokensFileWatchTest, ABadFileKeepsTheOldTokensAndIsLoggedOnce) {
  TokensFileWatch watch(tokens_, Fast(), logger_);
  Write("short dave\n");
  EXPECT_TRUE(Eventually([&] { return watch.reloads() >= 1; }));
  EXPECT_TRUE(Eventually([&] { return Log().find("keeping the tokens in use") != std::string::npos; }));
  EXPECT_TRUE(Knows("alice-token-0123456789abcdef"));
  EXPECT_EQ(tokens_->token_count(), 1u);
  EXPECT_THAT(Log(), HasSubstr("tokens file changed: "));
  EXPECT_THAT(Log(), HasSubstr("line 1"));
  // Unchanged since: not read (nor logged) again.
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(watch.reloads(), 1u);
  // Fixed: picked up.
  Write(kDave);
  EXPECT_TRUE(Eventually([&] { return Knows("dave-token-0123456789abcdefgh"); }));
  EXPECT_FALSE(Knows("alice-token-0123456789abcdef"));
}

TEST_F(TokensFileWatchTest, AnUnchangedFileIsNotReread) {
  {
    TokensFileWatch watch(tokens_, Fast(), logger_);
    absl::SleepFor(absl::Milliseconds(200));
    EXPECT_EQ(watch.reloads(), 0u);
  }
  EXPECT_THAT(Log(), Not(HasSubstr("reloaded")));
}

TEST_F(TokensFileWatchTest, TheStampSeesSizeAndExistence) {
  const FileStamp first = StampOf(file_.path());
  EXPECT_TRUE(first.exists);
  EXPECT_EQ(first.size, std::string(kAlice).size());
  Write(std::string(kAlice) + kDave);
  EXPECT_NE(StampOf(file_.path()), first);
  std::remove(file_.path().c_str());
  EXPECT_FALSE(StampOf(file_.path()).exists);
}

// SIGHUP's path: the same lines with its own prefix.
TEST_F(TokensFileWatchTest, ReloadTokensAndLogNamesTheTrigger) {
  Write(kDave);
  EXPECT_TRUE(ReloadTokensAndLog(*tokens_, "SIGHUP", *logger_).ok());
  EXPECT_THAT(Log(), HasSubstr("SIGHUP: reloaded the tokens file (1 tokens)"));
  Write("short dave\n");
  EXPECT_FALSE(ReloadTokensAndLog(*tokens_, "SIGHUP", *logger_).ok());
  EXPECT_THAT(Log(), HasSubstr("; keeping the tokens in use"));
  EXPECT_TRUE(Knows("dave-token-0123456789abcdefgh"));
}

}  // namespace
}  // namespace dmls::server
