#include "server/security/principal.h"

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "engine/ops/rule_status.h"
#include "grpcpp/security/auth_context.h"
#include "server/security/token_auth.h"

namespace dmls::server {

absl::StatusOr<std::string> PrincipalOf(const grpc::ServerContextBase& context,
                                        const TokenAuthenticator* tokens,
                                        bool tenant_from_peer) {
  const auto& metadata = context.client_metadata();
  if (tokens != nullptr) {
    // This call's own token, through the table the processor used: the
    // auth context is the connection's and must not carry identities.
    std::vector<absl::string_view> authorization;
    auto [begin, end] = metadata.equal_range(kAuthorizationMetadataKey);
    for (auto it = begin; it != end; ++it) {
      authorization.emplace_back(it->second.data(), it->second.size());
    }
    absl::StatusOr<std::optional<TokenEntry>> entry =
        tokens->Authenticate(authorization);
    if (!entry.ok()) return entry.status();
    if (entry->has_value()) {
      // A `tenant` beside a token is the balancer's routing key
      // (deploy/nginx): it must name the token's own principal, or the
      // calls of one principal could be routed by different keys.
      auto tenant = metadata.find(kTenantMetadataKey);
      if (tenant != metadata.end() &&
          absl::string_view(tenant->second.data(), tenant->second.size()) !=
              (*entry)->principal) {
        return ops::RuleStatus(
            absl::StatusCode::kInvalidArgument, kTenantMismatch, kTenantMetadataKey,
            absl::StrCat("metadata '", kTenantMetadataKey,
                         "' names another principal than the call's token; send the "
                         "token's own principal (the balancer routes on it) or no '",
                         kTenantMetadataKey, "'"));
      }
      return absl::StrCat("user:", (*entry)->principal);
    }
  }
  if (std::shared_ptr<const grpc::AuthContext> auth = context.auth_context()) {
    // Mutual TLS without a token: the verified client certificate's name
    // (set by the handshake, so the connection's by right).
    if (auth->IsPeerAuthenticated()) {
      std::vector<grpc::string_ref> cn = auth->FindPropertyValues("x509_common_name");
      if (!cn.empty() && !cn.front().empty()) {
        return absl::StrCat("cert:", std::string(cn.front().data(), cn.front().size()));
      }
    }
  }
  auto it = metadata.find(kTenantMetadataKey);
  if (it != metadata.end()) {
    if (it->second.empty() || it->second.size() > kMaxTenantLength) {
      return ops::RuleStatus(absl::StatusCode::kInvalidArgument, "TENANT_INVALID",
                             kTenantMetadataKey,
                             absl::StrCat("metadata '", kTenantMetadataKey, "' must be 1 to ",
                                          kMaxTenantLength, " bytes"));
    }
    return absl::StrCat("tenant:",
                        std::string(it->second.data(), it->second.size()));
  }
  if (tenant_from_peer) return absl::StrCat("peer:", context.peer());
  return ops::RuleStatus(
      absl::StatusCode::kInvalidArgument, kTenantRequired, kTenantMetadataKey,
      absl::StrCat("metadata '", kTenantMetadataKey,
                   "': resident tensors belong to a bearer token's user, a client "
                   "certificate's name or a tenant, and this call names none (set the '",
                   kTenantMetadataKey, "' metadata; --tenant_from_peer keys them by the "
                   "connection's address, for one trusted client)"));
}

}  // namespace dmls::server
