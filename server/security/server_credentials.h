// The credentials of the gRPC port: plaintext, TLS, or mutual TLS, with
// bearer tokens (token_auth.h) on top of TLS. Built once at startup from
// SecurityOptions (server/options/server_options.h).
#ifndef DMLSERVE_SERVER_SECURITY_SERVER_CREDENTIALS_H_
#define DMLSERVE_SERVER_SECURITY_SERVER_CREDENTIALS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"
#include "server/options/server_options.h"
#include "server/security/token_auth.h"

namespace dmls::server {

struct ServerSecurity {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  // Set when tokens are checked; the server reloads it on SIGHUP. Shared with
  // the credentials' processor and the services, which call it on gRPC's
  // threads (thread-safe).
  std::shared_ptr<TokenAuthenticator> tokens;
  // For the startup log: "plaintext", "TLS", "mutual TLS, 3 tokens", ...
  std::string description;
};

// INVALID_ARGUMENT for inconsistent flags (a key without a certificate,
// tokens without TLS, ...), NOT_FOUND for unreadable files, with the flag
// named.
absl::StatusOr<ServerSecurity> MakeServerSecurity(const SecurityOptions& options);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_SECURITY_SERVER_CREDENTIALS_H_
