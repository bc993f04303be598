// Principal: who is calling. Resident tensors, their quotas and (with the
// operations work) authorization are keyed by it.
//
// Per call: each call's principal comes from that call's own metadata and
// its connection's TLS handshake, never from anything an earlier call on
// the same connection left behind (calls of different callers share
// connections behind channel pools and proxies). In order:
//   - with bearer tokens (token_auth.h; `tokens` not null), the token of the
//     call's `authorization` metadata, looked up in the tokens table now, as
//     "user:NAME" (a token that is no longer valid: UNAUTHENTICATED);
//   - a verified client certificate's common name (mutual TLS) as
//     "cert:NAME";
//   - the value of the `tenant` request metadata key as "tenant:NAME"
//     (trusted as given: anyone who can reach the port can name any tenant,
//     so servers with users turn on tokens or mTLS);
//   - else the connection's peer address ("peer:ipv4:127.0.0.1:53312"), so
//     that a client that names no tenant sees only what its own connection
//     created.
// Without tokens, `authorization` metadata is ignored. A call without a
// token reaches a handler only on a method that --auth_exempt lets through;
// the rules after the first apply to it.
//
// Thread-safe (stateless; the authenticator is thread-safe).
#ifndef DMLSERVE_SERVER_SECURITY_PRINCIPAL_H_
#define DMLSERVE_SERVER_SECURITY_PRINCIPAL_H_

#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"

namespace dmls::server {

class TokenAuthenticator;

// Metadata key that names a tenant (lower case, as gRPC requires).
inline constexpr char kTenantMetadataKey[] = "tenant";
// Metadata key of the bearer token ("Bearer TOKEN").
inline constexpr char kAuthorizationMetadataKey[] = "authorization";
// Longest tenant name accepted (longer ones get INVALID_ARGUMENT).
inline constexpr size_t kMaxTenantLength = 256;

// The principal of the call. `tokens`: the server's bearer tokens, null
// when it checks none. INVALID_ARGUMENT for an empty or over-long tenant
// value; UNAUTHENTICATED for a token the authenticator refuses.
absl::StatusOr<std::string> PrincipalOf(const grpc::ServerContextBase& context,
                                        const TokenAuthenticator* tokens);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_SECURITY_PRINCIPAL_H_
