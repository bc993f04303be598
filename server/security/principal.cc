#include "server/security/principal.h"

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/security/auth_context.h"

namespace dmls::server {

absl::StatusOr<std::string> PrincipalOf(
    const grpc::ServerContextBase& context) {
  if (std::shared_ptr<const grpc::AuthContext> auth = context.auth_context()) {
    std::vector<grpc::string_ref> names =
        auth->FindPropertyValues(kPrincipalProperty);
    if (!names.empty() && !names.front().empty()) {
      return absl::StrCat("user:",
                          std::string(names.front().data(), names.front().size()));
    }
    // Mutual TLS without a token: the verified client certificate's name.
    if (auth->IsPeerAuthenticated()) {
      std::vector<grpc::string_ref> cn = auth->FindPropertyValues("x509_common_name");
      if (!cn.empty() && !cn.front().empty()) {
        return absl::StrCat("cert:", std::string(cn.front().data(), cn.front().size()));
      }
    }
  }
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kTenantMetadataKey);
  if (it != metadata.end()) {
    if (it->second.empty() || it->second.size() > kMaxTenantLength) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TENANT_INVALID: metadata '", kTenantMetadataKey,
          "' must be 1 to ", kMaxTenantLength, " bytes"));
    }
    return absl::StrCat("tenant:",
                        std::string(it->second.data(), it->second.size()));
  }
  return absl::StrCat("peer:", context.peer());
}

}  // namespace dmls::server
