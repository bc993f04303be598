#include "server/security/token_auth.h"

#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/security/auth_context.h"
#include "gtest/gtest.h"
#include "server/testing/temp_file.h"

namespace dmls::server {
namespace {

using ::testing::HasSubstr;

constexpr char kTokens[] =
    "# token                        principal  options\n"
    "alice-token-0123456789abcdef   alice\n"
    "bob-token-0123456789abcdefgh   bob   scopes=execute   # no tensors\n"
    "\n"
    "old-token-0123456789abcdefgh   carol expires=2026-01-01T00:00:00Z\n";

class TokenAuthTest : public ::testing::Test {
 protected:
  void Write(const std::string& text) { file_.Write(text); }

  std::shared_ptr<TokenAuthenticator> Make() {
    TokenAuthOptions options;
    options.tokens_file = file_.path();
    options.now = [this] { return now_; };
    absl::StatusOr<std::shared_ptr<TokenAuthenticator>> p =
        TokenAuthenticator::Create(options);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : nullptr;
  }

  const testing::TempFile file_{"tokens", kTokens};
  absl::Time now_ = absl::FromUnixSeconds(1767000000);  // 2025-12-29
};

TEST_F(TokenAuthTest, ValidTokensGiveTheirPrincipal) {
  auto auth = Make();
  ASSERT_NE(auth, nullptr);
  EXPECT_EQ(auth->token_count(), 3u);
  const std::string alice = "Bearer alice-token-0123456789abcdef";
  AuthDecision d = auth->Check("/dmlserve.v1.DmlService/Execute", {alice});
  EXPECT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.principal, "alice");
  d = auth->Check("/dmlserve.v1.TensorService/CreateTensor", {alice});
  EXPECT_TRUE(d.status.ok()) << d.status;
}

TEST_F(TokenAuthTest, MissingWrongAndMalformedTokensAreUnauthenticated) {
  auto auth = Make();
  AuthDecision d = auth->Check("/dmlserve.v1.DmlService/Execute", {});
  EXPECT_EQ(d.status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(d.status.message()), HasSubstr("AUTH_TOKEN_MISSING"));
  for (const std::string& bad :
       {std::string("Bearer not-a-known-token-at-all"),
        std::string("alice-token-0123456789abcdef"),  // no "Bearer "
        std::string("Basic YWxpY2U6c2VjcmV0"), std::string("Bearer ")}) {
    d = auth->Check("/dmlserve.v1.DmlService/Execute", {bad});
    EXPECT_EQ(d.status.code(), absl::StatusCode::kUnauthenticated) << bad;
    EXPECT_THAT(std::string(d.status.message()), HasSubstr("AUTH_TOKEN_INVALID"));
    EXPECT_TRUE(d.principal.empty());
  }
}

TEST_F(TokenAuthTest, ExpiredTokensAreUnauthenticated) {
  auto auth = Make();
  const std::string carol = "Bearer old-token-0123456789abcdefgh";
  EXPECT_TRUE(auth->Check("/dmlserve.v1.DmlService/Execute", {carol}).status.ok());
  now_ = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z
  AuthDecision d = auth->Check("/dmlserve.v1.DmlService/Execute", {carol});
  EXPECT_EQ(d.status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(d.status.message()),
              HasSubstr("AUTH_TOKEN_EXPIRED: the token expired at 2026-01-01T00:00:00"));
}

TEST_F(TokenAuthTest, ScopesGivePermissionDenied) {
  auto auth = Make();
  const std::string bob = "Bearer bob-token-0123456789abcdefgh";
  EXPECT_TRUE(auth->Check("/dmlserve.v1.DmlService/Execute", {bob}).status.ok());
  AuthDecision d = auth->Check("/dmlserve.v1.TensorService/ReadTensor", {bob});
  EXPECT_EQ(d.status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(d.status.message()),
              HasSubstr("AUTH_SCOPE: principal 'bob' may not call "
                        "/dmlserve.v1.TensorService/ReadTensor"));
}

TEST_F(TokenAuthTest, OpenInferenceProtocolNeedsTheExecuteScope) {
  Write(std::string(kTokens) + "dave-token-0123456789abcdefg  dave  scopes=tensors\n");
  auto auth = Make();
  const std::string bob = "Bearer bob-token-0123456789abcdefgh";  // execute only
  EXPECT_TRUE(auth->Check("/inference.GRPCInferenceService/ModelInfer", {bob}).status.ok());
  const std::string dave = "Bearer dave-token-0123456789abcdefg";  // tensors only
  AuthDecision d = auth->Check("/inference.GRPCInferenceService/ModelInfer", {dave});
  EXPECT_EQ(d.status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(d.status.message()), HasSubstr("AUTH_SCOPE: principal 'dave'"));
  EXPECT_EQ(auth->Check("/inference.GRPCInferenceService/ServerLive", {}).status.code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(TokenAuthTest, HealthAndReflectionAreExemptUnlessConfigured) {
  auto auth = Make();
  EXPECT_TRUE(auth->Check("/grpc.health.v1.Health/Check", {}).status.ok());
  EXPECT_TRUE(auth->Check("/grpc.reflection.v1alpha.ServerReflection/"
                          "ServerReflectionInfo", {}).status.ok());
  // A wrong token is refused even where none is needed.
  const std::string wrong = "Bearer not-a-known-token-at-all";
  EXPECT_EQ(auth->Check("/grpc.health.v1.Health/Check", {wrong}).status.code(),
            absl::StatusCode::kUnauthenticated);

  TokenAuthOptions strict;
  strict.tokens_file = file_.path();
  strict.exempt_prefixes = *ParseAuthExempt("");
  auto all = *TokenAuthenticator::Create(strict);
  EXPECT_EQ(all->Check("/grpc.health.v1.Health/Check", {}).status.code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(*ParseAuthExempt("health"),
            std::vector<std::string>{"/grpc.health.v1.Health/"});
  EXPECT_EQ(ParseAuthExempt("health,bogus").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(TokenAuthTest, ReloadSwapsTheTableAndKeepsItOnError) {
  auto auth = Make();
  Write("new-token-0123456789abcdefgh dave\n");
  ASSERT_TRUE(auth->Reload().ok());
  const std::string alice = "Bearer alice-token-0123456789abcdef";
  const std::string dave = "Bearer new-token-0123456789abcdefgh";
  EXPECT_EQ(auth->Check("/dmlserve.v1.DmlService/Execute", {alice}).status.code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(auth->Check("/dmlserve.v1.DmlService/Execute", {dave}).principal, "dave");
  Write("short dave\n");
  absl::Status bad = auth->Reload();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("line 1"));
  EXPECT_EQ(auth->Check("/dmlserve.v1.DmlService/Execute", {dave}).principal, "dave");
}

TEST_F(TokenAuthTest, AuthenticateTakesEachCallsOwnTokenAndKeepsNothing) {
  auto auth = Make();
  const std::string alice = "Bearer alice-token-0123456789abcdef";
  const std::string bob = "Bearer bob-token-0123456789abcdefgh";
  // Calls alternate as they do on a connection that several callers share:
  // each answer is its own token's, whatever came before.
  for (int round = 0; round < 3; ++round) {
    absl::StatusOr<std::optional<TokenEntry>> a = auth->Authenticate({alice});
    ASSERT_TRUE(a.ok() && a->has_value()) << a.status();
    EXPECT_EQ((*a)->principal, "alice");
    EXPECT_EQ((*a)->scopes, kScopeAll);
    absl::StatusOr<std::optional<TokenEntry>> b = auth->Authenticate({bob});
    ASSERT_TRUE(b.ok() && b->has_value()) << b.status();
    EXPECT_EQ((*b)->principal, "bob");
    EXPECT_EQ((*b)->scopes, kScopeExecute);
    absl::StatusOr<std::optional<TokenEntry>> none = auth->Authenticate({});
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_FALSE(none->has_value());
  }
}

TEST_F(TokenAuthTest, MoreThanOneAuthorizationValueIsUnauthenticated) {
  // The gate and the handler must not pick different values of the same
  // call, so a call with two gets neither.
  auto auth = Make();
  const std::string alice = "Bearer alice-token-0123456789abcdef";
  const std::string bob = "Bearer bob-token-0123456789abcdefgh";
  absl::StatusOr<std::optional<TokenEntry>> both = auth->Authenticate({bob, alice});
  EXPECT_EQ(both.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(both.status().message()),
              HasSubstr("more than one authorization value"));
  AuthDecision d = auth->Check("/grpc.health.v1.Health/Check", {alice, alice});
  EXPECT_EQ(d.status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(d.principal.empty());
}

TEST_F(TokenAuthTest, AuthenticateUsesTheTableAndClockOfTheMoment) {
  // A handler derives the principal after the processor let the call in;
  // a reload or an expiry in between counts.
  auto auth = Make();
  const std::string carol = "Bearer old-token-0123456789abcdefgh";
  EXPECT_TRUE(auth->Authenticate({carol}).ok());
  now_ = absl::FromUnixSeconds(1767225600);  // its expiry
  EXPECT_THAT(std::string(auth->Authenticate({carol}).status().message()),
              HasSubstr("AUTH_TOKEN_EXPIRED"));
  const std::string alice = "Bearer alice-token-0123456789abcdef";
  Write("alice-token-0123456789abcdef  alicia\n");
  ASSERT_TRUE(auth->Reload().ok());
  absl::StatusOr<std::optional<TokenEntry>> a = auth->Authenticate({alice});
  ASSERT_TRUE(a.ok() && a->has_value()) << a.status();
  EXPECT_EQ((*a)->principal, "alicia");
  Write("other-token-0123456789abcdef  dave\n");
  ASSERT_TRUE(auth->Reload().ok());
  EXPECT_EQ(auth->Authenticate({alice}).status().code(),
            absl::StatusCode::kUnauthenticated);
}

// An auth context that records what is added to it. gRPC hands the
// processor the connection's context, shared by all its calls.
class RecordingAuthContext final : public grpc::AuthContext {
 public:
  bool IsPeerAuthenticated() const override { return false; }
  std::vector<grpc::string_ref> GetPeerIdentity() const override { return {}; }
  std::string GetPeerIdentityPropertyName() const override { return ""; }
  std::vector<grpc::string_ref> FindPropertyValues(const std::string&) const override {
    return {};
  }
  grpc::AuthPropertyIterator begin() const override { return Iterator(); }
  grpc::AuthPropertyIterator end() const override { return Iterator(); }
  void AddProperty(const std::string& key, const grpc::string_ref& value) override {
    added.push_back(key + "=" + std::string(value.data(), value.size()));
  }
  bool SetPeerIdentityPropertyName(const std::string&) override { return false; }

  std::vector<std::string> added;

 private:
  struct Iterator : grpc::AuthPropertyIterator {};
};

TEST_F(TokenAuthTest, TheProcessorDecidesAndLeavesTheConnectionAlone) {
  std::shared_ptr<TokenAuthenticator> tokens = Make();
  TokenAuthProcessor processor(tokens);
  RecordingAuthContext connection;
  struct Call {
    const char* path;
    std::vector<const char*> authorization;
    grpc::StatusCode want;
  };
  const Call calls[] = {
      {"/dmlserve.v1.TensorService/ListTensors",
       {"Bearer alice-token-0123456789abcdef"}, grpc::StatusCode::OK},
      {"/dmlserve.v1.DmlService/Execute",
       {"Bearer bob-token-0123456789abcdefgh"}, grpc::StatusCode::OK},
      {"/dmlserve.v1.TensorService/ListTensors",
       {"Bearer bob-token-0123456789abcdefgh"}, grpc::StatusCode::PERMISSION_DENIED},
      {"/dmlserve.v1.TensorService/ListTensors", {}, grpc::StatusCode::UNAUTHENTICATED},
      {"/dmlserve.v1.TensorService/ListTensors",
       {"Bearer alice-token-0123456789abcdef", "Bearer bob-token-0123456789abcdefgh"},
       grpc::StatusCode::UNAUTHENTICATED},
      {"/grpc.health.v1.Health/Check", {}, grpc::StatusCode::OK},
  };
  for (const Call& call : calls) {
    grpc::AuthMetadataProcessor::InputMetadata metadata;
    metadata.emplace(":path", call.path);
    for (const char* value : call.authorization) metadata.emplace("authorization", value);
    grpc::AuthMetadataProcessor::OutputMetadata consumed, response;
    grpc::Status status = processor.Process(metadata, &connection, &consumed, &response);
    EXPECT_EQ(status.error_code(), call.want) << call.path << ": " << status.error_message();
    // The token stays in the call's metadata for the handler
    // (PrincipalOf), and nothing of the call goes to the connection.
    EXPECT_TRUE(consumed.empty()) << call.path;
  }
  EXPECT_THAT(connection.added, ::testing::IsEmpty());
}

TEST(TokenTableTest, ParseErrorsNameTheLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"only-a-token-0123456789\n", "line 1: want TOKEN PRINCIPAL"},
      {"# c\nshort p\n", "line 2: a token is 16 to 512"},
      {"a-token-0123456789abcdef p scopes=admin\n", "unknown scope 'admin'"},
      {"a-token-0123456789abcdef p expires=tomorrow\n", "expires: want RFC 3339"},
      {"a-token-0123456789abcdef p color=red\n", "unknown field 'color=red'"},
      {"a-token-0123456789abcdef p\na-token-0123456789abcdef q\n",
       "line 2: the token appears twice"},
  };
  for (const auto& [text, want] : cases) {
    absl::StatusOr<TokenTable> table = TokenTable::Parse(text);
    ASSERT_FALSE(table.ok()) << text;
    EXPECT_THAT(std::string(table.status().message()), HasSubstr(want)) << text;
  }
  EXPECT_EQ(TokenTable::Load("/no/such/tokens").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dmls::server
