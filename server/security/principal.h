// Principal: who is calling. Resident tensors, their quotas and (with the
// operations work) authorization are keyed by it.
//
// In order: the bearer token's principal (auth context property
// kPrincipalProperty, set by token_auth.h) as "user:NAME"; a verified client
// certificate's common name (mutual TLS) as "cert:NAME"; the value of the
// `tenant` request metadata key as "tenant:NAME" (trusted as given: anyone
// who can reach the port can name any tenant, so servers with users turn on
// tokens or mTLS); else the connection's peer address
// ("peer:ipv4:127.0.0.1:53312"), so that a client that names no tenant sees
// only what its own connection created.
//
// Thread-safe (stateless).
#ifndef DMLSERVE_SERVER_SECURITY_PRINCIPAL_H_
#define DMLSERVE_SERVER_SECURITY_PRINCIPAL_H_

#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"

namespace dmls::server {

// Metadata key that names a tenant (lower case, as gRPC requires).
inline constexpr char kTenantMetadataKey[] = "tenant";
// Auth context property that an authenticator sets to the caller's name.
inline constexpr char kPrincipalProperty[] = "dmls_principal";
// Longest tenant name accepted (longer ones get INVALID_ARGUMENT).
inline constexpr size_t kMaxTenantLength = 256;

// The principal of the call. INVALID_ARGUMENT for an empty or over-long
// tenant value.
absl::StatusOr<std::string> PrincipalOf(const grpc::ServerContextBase& context);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_SECURITY_PRINCIPAL_H_
