// Bearer-token authentication: a tokens file maps tokens to principals, and
// TokenAuthProcessor (a grpc::AuthMetadataProcessor, so TLS only: gRPC runs
// processors on secure credentials, and a token in clear text would be
// given away) checks every call's `authorization: Bearer TOKEN` metadata
// before its handler runs.
//
// Tokens file: one token per line, '#' starts a comment:
//
//   TOKEN PRINCIPAL [scopes=execute,tensors] [expires=2026-12-31T00:00:00Z]
//
// A token is 16 to 512 printable characters without spaces; the principal
// (what resident tensors and quotas are keyed by: principal.h) 1 to 256.
// Scopes: `execute` (DmlService: GetCapabilities, Validate, Execute...),
// `tensors` (TensorService); none given means both. Past `expires` the
// token is refused.
//
// Decisions, by the call's method (:path):
//   - exempt methods (by default grpc.health.v1 and server reflection) pass
//     without a token;
//   - a missing, unknown or expired token: UNAUTHENTICATED;
//   - a valid token without the method's scope: PERMISSION_DENIED;
//   - otherwise the call goes on with the token's principal in the auth
//     context (kPrincipalProperty), which wins over the `tenant` metadata.
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
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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

// Thread-safe: Process runs on gRPC's threads while Reload may swap the
// table from the signal thread.
class TokenAuthProcessor final : public grpc::AuthMetadataProcessor {
 public:
  static absl::StatusOr<std::shared_ptr<TokenAuthProcessor>> Create(
      TokenAuthOptions options);

  // Re-reads the tokens file; on error keeps the table it had.
  absl::Status Reload();
  size_t token_count() const;

  // The decision for a call to `path` with `authorization` (the metadata
  // value, or null when absent).
  AuthDecision Check(absl::string_view path,
                     const std::string* authorization) const;

  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& auth_metadata,
                       grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  explicit TokenAuthProcessor(TokenAuthOptions options)
      : options_(std::move(options)) {}

  const TokenAuthOptions options_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const TokenTable> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_SECURITY_TOKEN_AUTH_H_
