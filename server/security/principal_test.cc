// PrincipalOf on real calls: an in-process server whose one generic method
// answers with the caller's principal, called over one channel (one
// connection) with different tokens and tenants in turn.
#include "server/security/principal.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "server/testing/temp_file.h"
#include "server/security/token_auth.h"

namespace dmls::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kAlice[] = "Bearer alice-token-0123456789abcdef";
constexpr char kCarol[] = "Bearer carol-token-0123456789abcdef";

// Answers every call with PrincipalOf(its context), or fails with its
// error.
class PrincipalEcho final : public grpc::CallbackGenericService {
 public:
  PrincipalEcho(const TokenAuthenticator* tokens, bool tenant_from_peer)
      : tokens_(tokens), tenant_from_peer_(tenant_from_peer) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    class Reactor final : public grpc::ServerGenericBidiReactor {
     public:
      explicit Reactor(absl::StatusOr<std::string> principal)
          : principal_(std::move(principal)) {
        StartRead(&request_);
      }
      void OnReadDone(bool ok) override {
        if (!ok) return Finish(grpc::Status(grpc::StatusCode::INTERNAL, "no request"));
        if (!principal_.ok()) {
          return Finish(grpc::Status(static_cast<grpc::StatusCode>(principal_.status().code()),
                                     std::string(principal_.status().message())));
        }
        grpc::Slice slice(*principal_);
        response_ = grpc::ByteBuffer(&slice, 1);
        StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
      }
      void OnDone() override { delete this; }

     private:
      const absl::StatusOr<std::string> principal_;
      grpc::ByteBuffer request_, response_;
    };
    return new Reactor(PrincipalOf(*context, tokens_, tenant_from_peer_));
  }

 private:
  const TokenAuthenticator* const tokens_;
  const bool tenant_from_peer_;
};

// A call with no token, certificate or tenant: TENANT_REQUIRED, naming the
// metadata key and the flag.
void ExpectTenantRequired(const absl::StatusOr<std::string>& principal) {
  EXPECT_EQ(principal.status().code(), absl::StatusCode::kInvalidArgument) << principal.status();
  EXPECT_THAT(std::string(principal.status().message()), HasSubstr("TENANT_REQUIRED: metadata 'tenant'"));
  EXPECT_THAT(std::string(principal.status().message()), HasSubstr("--tenant_from_peer"));
}

// A tenant beside a token that names another principal: TENANT_MISMATCH at
// the metadata.
void ExpectTenantMismatch(const absl::StatusOr<std::string>& principal) {
  EXPECT_EQ(principal.status().code(), absl::StatusCode::kInvalidArgument) << principal.status();
  EXPECT_THAT(std::string(principal.status().message()),
              HasSubstr("TENANT_MISMATCH: metadata 'tenant' names another principal"));
}

class PrincipalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TokenAuthOptions options;
    options.tokens_file = file_.path();
    absl::StatusOr<std::shared_ptr<TokenAuthenticator>> tokens =
        TokenAuthenticator::Create(options);
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    tokens_ = *std::move(tokens);
  }

  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  // Starts the echo server, with the tokens or without.
  void Start(bool with_tokens, bool tenant_from_peer = false) {
    echo_ = std::make_unique<PrincipalEcho>(with_tokens ? tokens_.get() : nullptr,
                                            tenant_from_peer);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterCallbackGenericService(echo_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
  }

  // One call on the shared channel with `metadata`; the principal, or the
  // call's status.
  absl::StatusOr<std::string> Call(
      const std::vector<std::pair<std::string, std::string>>& metadata) {
    grpc::ClientContext context;
    for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
    grpc::Slice slice(std::string("?"));
    grpc::ByteBuffer request(&slice, 1), response;
    grpc::GenericStub stub(channel_);
    grpc::Status status;
    absl::Notification done;
    stub.UnaryCall(&context, "/test.Principal/Echo", grpc::StubOptions(), &request,
                   &response, [&](grpc::Status s) {
                     status = std::move(s);
                     done.Notify();
                   });
    done.WaitForNotification();
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    std::vector<grpc::Slice> slices;
    EXPECT_TRUE(response.Dump(&slices).ok());
    std::string out;
    for (const grpc::Slice& s : slices) out.append(s.begin(), s.end());
    return out;
  }

  const testing::TempFile file_{"principal_tokens",
                                "alice-token-0123456789abcdef alice\n"
                                "carol-token-0123456789abcdef carol scopes=tensors\n"};
  std::shared_ptr<TokenAuthenticator> tokens_;
  std::unique_ptr<PrincipalEcho> echo_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(PrincipalTest, EachCallOnOneConnectionIsItsOwnTokensPrincipal) {
  Start(/*with_tokens=*/true);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(Call({{"authorization", kAlice}}).value_or("?"), "user:alice");
    EXPECT_EQ(Call({{"authorization", kCarol}}).value_or("?"), "user:carol");
    // A tenant beside a token names the token's principal (the routing
    // key behind the balancer), never another caller.
    EXPECT_EQ(Call({{"authorization", kCarol}, {"tenant", "carol"}}).value_or("?"),
              "user:carol");
    ExpectTenantMismatch(Call({{"authorization", kCarol}, {"tenant", "alice"}}));
    // A call without a token (an exempt method) is not the last caller.
    EXPECT_EQ(Call({{"tenant", "t1"}}).value_or("?"), "tenant:t1");
    ExpectTenantRequired(Call({}));
  }
}

TEST_F(PrincipalTest, NoIdentityFromThePeerAddressUnlessAskedFor) {
  Start(/*with_tokens=*/false);
  ExpectTenantRequired(Call({}));
  ExpectTenantRequired(Call({{"authorization", kAlice}}));  // no tokens: ignored
  EXPECT_EQ(Call({{"tenant", "t1"}}).value_or("?"), "tenant:t1");
}

TEST_F(PrincipalTest, TenantFromPeerKeysCallsWithoutIdentityByAddress) {
  Start(/*with_tokens=*/true, /*tenant_from_peer=*/true);
  EXPECT_THAT(Call({}).value_or("?"), StartsWith("peer:ipv4:127.0.0.1:"));
  EXPECT_EQ(Call({{"tenant", "t1"}}).value_or("?"), "tenant:t1");
  EXPECT_EQ(Call({{"authorization", kAlice}}).value_or("?"), "user:alice");
}

TEST_F(PrincipalTest, ATenantBesideATokenMustBeItsPrincipal) {
  Start(/*with_tokens=*/true);
  // Alternating on one connection: each call is judged on its own.
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(Call({{"authorization", kAlice}, {"tenant", "alice"}}).value_or("?"),
              "user:alice");
    ExpectTenantMismatch(Call({{"authorization", kAlice}, {"tenant", "carol"}}));
    ExpectTenantMismatch(Call({{"authorization", kAlice}, {"tenant", "user:alice"}}));
    EXPECT_EQ(Call({{"authorization", kAlice}}).value_or("?"), "user:alice");
  }
}

TEST_F(PrincipalTest, TokensTheTableNoLongerHoldsAreRefused) {
  Start(/*with_tokens=*/true);
  EXPECT_EQ(Call({{"authorization", kAlice}}).value_or("?"), "user:alice");
  file_.Write("carol-token-0123456789abcdef carol\n");
  ASSERT_TRUE(tokens_->Reload().ok());
  absl::StatusOr<std::string> gone = Call({{"authorization", kAlice}});
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(gone.status().message()), HasSubstr("AUTH_TOKEN_INVALID"));
  EXPECT_EQ(Call({{"authorization", kCarol}}).value_or("?"), "user:carol");
  absl::StatusOr<std::string> two =
      Call({{"authorization", kCarol}, {"authorization", kCarol}});
  EXPECT_EQ(two.status().code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(PrincipalTest, WithoutTokensAuthorizationIsIgnored) {
  Start(/*with_tokens=*/false);
  EXPECT_EQ(Call({{"authorization", kAlice}, {"tenant", "t1"}}).value_or("?"),
            "tenant:t1");
  absl::StatusOr<std::string> empty = Call({{"tenant", ""}});
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Call({{"tenant", std::string(kMaxTenantLength + 1, 'x')}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dmls::server
