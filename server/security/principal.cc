#include "server/security/principal.h"

#include <map>
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
namespace {

// A `tenant` beside a token or a client certificate is the balancer's
// routing key (deploy/nginx): it must name the call's own principal
// `name`, or the calls of one principal could be routed by different keys
// and miss their tensors on another replica. OK without a `tenant`.
// `credential` names what `name` came from, for the message.
absl::Status CheckTenantNames(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
    absl::string_view name, absl::string_view credential) {
  auto tenant = metadata.find(kTenantMetadataKey);
  if (tenant == metadata.end() ||
      absl::string_view(tenant->second.data(), tenant->second.size()) == name) {
    return absl::OkStatus();
  }
  return ops::RuleStatus(
      absl::StatusCode::kInvalidArgument, kTenantMismatch, kTenantMetadataKey,
      absl::StrCat("metadata '", kTenantMetadataKey, "' names another principal than the call's ",
                   credential, "; send the ", credential, "'s own principal (the balancer ",
                   "routes on it) or no '", kTenantMetadataKey, "'"));
}

// The call names no principal. Built once: every Execute without a tenant
// asks for its principal (only resident tensors need it, and the caller
// reports this status only then), so building the message and the rule
// payload per call cost the serving path ~2% of its CPU (an H200 profile,
// docs/perf/h200-engine-2026-11-28-stop25). A copy only takes a reference.
absl::Status TenantRequired() {
  static const absl::Status* const status = new absl::Status(ops::RuleStatus(
      absl::StatusCode::kInvalidArgument, kTenantRequired, kTenantMetadataKey,
      absl::StrCat("metadata '", kTenantMetadataKey,
                   "': resident tensors belong to a bearer token's user, a client "
                   "certificate's name or a tenant, and this call names none (set the '",
                   kTenantMetadataKey, "' metadata; --tenant_from_peer keys them by the "
                   "connection's address, for one trusted client)")));
  return *status;
}

}  // namespace

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
      absl::Status same = CheckTenantNames(metadata, (*entry)->principal, "token");
      if (!same.ok()) return same;
      return absl::StrCat("user:", (*entry)->principal);
    }
  }
  if (std::shared_ptr<const grpc::AuthContext> auth = context.auth_context()) {
    // Mutual TLS without a token: the verified client certificate's name
    // (set by the handshake, so the connection's by right).
    if (auth->IsPeerAuthenticated()) {
      std::vector<grpc::string_ref> cn = auth->FindPropertyValues("x509_common_name");
      if (!cn.empty() && !cn.front().empty()) {
        absl::string_view name(cn.front().data(), cn.front().size());
        absl::Status same = CheckTenantNames(metadata, name, "client certificate");
        if (!same.ok()) return same;
        return absl::StrCat("cert:", name);
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
  return TenantRequired();
}

}  // namespace dmls::server
