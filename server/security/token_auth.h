// Bearer-token authentication: a tokens file maps tokens to principals.
// TokenAuthenticator holds the table (reloadable) and decides about one
// call from that call's own `authorization: Bearer TOKEN` metadata;
// TokenAuthProcessor (a grpc::AuthMetadataProcessor, so TLS only: gRPC runs
// processors on secure credentials, and a token in clear text would be
// given away) applies that decision to every call before its handler runs.
//
// Tokens file: one token per line, '#' starts a comment:
//
//   TOKEN PRINCIPAL [scopes=execute,tensors] [expires=2026-12-31T00:00:00Z]
//
// A token is 16 to 512 printable characters without spaces; the principal
// (what resident tensors and quotas are keyed by: principal.h) 1 to 256.
// Scopes: `execute` (DmlService: GetCapabilities, Validate, Execute...,
// and the Open Inference Protocol's inference.GRPCInferenceService),
// `tensors` (TensorService); none given means both. Past `expires` the
// token is refused.
//
// Decisions, by the call's method (:path):
//   - exempt methods (by default grpc.health.v1 and server reflection) pass
//     without a token;
//   - a missing, unknown or expired token, or more than one `authorization`
//     value: UNAUTHENTICATED;
//   - a valid token without the method's scope: PERMISSION_DENIED;
//   - otherwise the call goes on, and its principal is the token's
//     (principal.h: it wins over the `tenant` metadata).
//
// Identity is per call, never per connection. gRPC (1.51, server_auth_filter)
// hands a processor the connection's auth context, and every call on that
// connection shares it, so a property added for one call is seen by every
// later call on the connection (a pooled channel, a proxy's upstream
// connection: other callers). So the processor only accepts or refuses; it
// writes nothing to the auth context and leaves `authorization` in the
// call's metadata (so handlers see the token: never log metadata), and the
// handler derives the call's principal again from
// that call's own token through the same TokenAuthenticator (PrincipalOf).
// A token that a reload removed or that expired in between is refused then.
#ifndef DMLSERVE_SERVER_SECURITY_TOKEN_AUTH_H_
#define DMLSERVE_SERVER_SECURITY_TOKEN_AUTH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "engine/core/mutex.h"
#include "grpcpp/security/auth_metadata_processor.h"

namespace dmls::server {

// What a token allows (a bit set).
enum TokenScope : uint32_t {
  kScopeExecute = 1u << 0,  // DmlService
  kScopeTensors = 1u << 1,  // TensorService
  kScopeAll = kScopeExecute | kScopeTensors,
};

struct TokenEntry {
  std::string principal;
  uint32_t scopes = kScopeAll;
  std::optional<absl::Time> expires;  // unset: never
};

// A parsed tokens file. Immutable value: thread-compatible.
class TokenTable {
 public:
  // Errors name the line: "tokens file line 3: ...".
  static absl::StatusOr<TokenTable> Parse(absl::string_view text);
  static absl::StatusOr<TokenTable> Load(const std::string& path);

  const TokenEntry* Find(absl::string_view token) const;
  size_t size() const { return entries_.size(); }

 private:
  absl::flat_hash_map<std::string, TokenEntry> entries_;
};

// The outcome of checking one call.
struct AuthDecision {
  absl::Status status;    // OK, UNAUTHENTICATED or PERMISSION_DENIED
  std::string principal;  // the token's, when one was accepted
};

struct TokenAuthOptions {
  std::string tokens_file;
  // Method path prefixes that need no token.
  std::vector<std::string> exempt_prefixes = {
      "/grpc.health.v1.Health/", "/grpc.reflection.v1alpha.ServerReflection/",
      "/grpc.reflection.v1.ServerReflection/"};
  // The clock (tests pass a fake one).
  std::function<absl::Time()> now = absl::Now;
};

// The exempt prefixes of --auth_exempt: a comma-separated list of
// "health", "reflection" (or full path prefixes starting with '/'); ""
// exempts nothing.
absl::StatusOr<std::vector<std::string>> ParseAuthExempt(absl::string_view text);

// The tokens file and the decisions about calls. Thread-safe: Check and
// Authenticate run on gRPC's threads while Reload may swap the table from
// the signal thread; each call sees one table.
class TokenAuthenticator {
 public:
  static absl::StatusOr<std::shared_ptr<TokenAuthenticator>> Create(
      TokenAuthOptions options);

  // Re-reads the tokens file; on error keeps the table it had.
  absl::Status Reload();
  size_t token_count() const;

  // The entry of the token in one call's `authorization` values (all of
  // them, as received); nullopt when there is none. UNAUTHENTICATED for
  // more than one value, one that is not "Bearer TOKEN", an unknown token
  // or an expired one.
  absl::StatusOr<std::optional<TokenEntry>> Authenticate(
      absl::Span<const absl::string_view> authorization) const;

  // The decision for a call to `path` with those `authorization` values.
  AuthDecision Check(absl::string_view path,
                     absl::Span<const absl::string_view> authorization) const;

 private:
  explicit TokenAuthenticator(TokenAuthOptions options)
      : options_(std::move(options)) {}

  const TokenAuthOptions options_;
  mutable Mutex mu_;
  std::shared_ptr<const TokenTable> table_ ABSL_GUARDED_BY(mu_);
};

// The gate in front of every handler: refuses what Check refuses, with its
// code and message. Adds nothing to the auth context and consumes no
// metadata (see the top of this file). Thread-safe; shares the
// authenticator.
class TokenAuthProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenAuthProcessor(std::shared_ptr<const TokenAuthenticator> tokens)
      : tokens_(std::move(tokens)) {}

  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& auth_metadata,
                       grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  const std::shared_ptr<const TokenAuthenticator> tokens_;
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_SECURITY_TOKEN_AUTH_H_
