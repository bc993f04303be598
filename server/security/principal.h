// Principal: who is calling. Resident tensors, their quotas and (with the
// operations work) authorization are keyed by it.
//
// Per call: each call's principal comes from that call's own metadata and
// its connection's TLS handshake, never from anything an earlier call on
// the same connection left behind (calls of different callers share
// connections behind channel pools and proxies). In order:
//   - with bearer tokens (token_auth.h; `tokens` not null), the token of the
//     call's `authorization` metadata, looked up in the tokens table now, as
//     "user:NAME" (a token that is no longer valid: UNAUTHENTICATED). A
//     call that sends a `tenant` beside its token must name the token's
//     principal in it (INVALID_ARGUMENT, TENANT_MISMATCH, kTenantMismatch):
//     behind a balancer the tenant is the routing key (deploy/nginx), so
//     that every token of one principal reaches the replica that holds
//     its tensors;
//   - a verified client certificate's common name (mutual TLS) as
//     "cert:NAME", where a `tenant` beside it must likewise be NAME
//     (TENANT_MISMATCH);
//   - the value of the `tenant` request metadata key as "tenant:NAME"
//     (trusted as given: anyone who can reach the port can name any tenant,
//     so servers with users turn on tokens or mTLS);
//   - else, with `tenant_from_peer` (--tenant_from_peer, off by default),
//     the connection's peer address ("peer:ipv4:127.0.0.1:53312"): only
//     for one trusted client reaching the server directly, since behind a
//     proxy every caller has the proxy's address;
//   - else none: INVALID_ARGUMENT, TENANT_REQUIRED (kTenantRequired), which
//     is answered only to calls that need a principal: the tensor RPCs, and
//     Execute or ExecuteChain where a step names a handle or keeps its
//     output (chain_builder.h decides, at that field).
// The INVALID_ARGUMENT errors carry their rule as a violation
// (engine/ops/rule_status.h) at the metadata key, which chain_builder.h
// moves to the field that needed the principal.
// Without tokens, `authorization` metadata is ignored. A call without a
// token reaches a handler only on a method that --auth_exempt lets through;
// the rules after the first apply to it.
//
// Thread-safe (stateless; the authenticator is thread-safe).
#ifndef DMLSERVE_SERVER_SECURITY_PRINCIPAL_H_
#define DMLSERVE_SERVER_SECURITY_PRINCIPAL_H_

#include <memory>
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
// The rule id of a call that needs a principal and has none.
inline constexpr char kTenantRequired[] = "TENANT_REQUIRED";
// The rule id of a call whose `tenant` is not its token's principal.
inline constexpr char kTenantMismatch[] = "TENANT_MISMATCH";

// The principal of the call. `tokens`: the server's bearer tokens, null
// when it checks none. INVALID_ARGUMENT for an empty or over-long tenant
// value, for a `tenant` that is not the token's or the client
// certificate's principal (TENANT_MISMATCH)
// and for a call with no identity (TENANT_REQUIRED) unless
// `tenant_from_peer`; UNAUTHENTICATED for a token the authenticator refuses.
absl::StatusOr<std::string> PrincipalOf(const grpc::ServerContextBase& context,
                                        const TokenAuthenticator* tokens,
                                        bool tenant_from_peer);

// Where a service's calls get their principal from: the server's bearer
// tokens (token_auth.h; null: none) and SecurityOptions::tenant_from_peer.
struct PrincipalSource {
  std::shared_ptr<const TokenAuthenticator> tokens;
  bool tenant_from_peer = false;
};

inline absl::StatusOr<std::string> PrincipalOf(const grpc::ServerContextBase& context,
                                               const PrincipalSource& source) {
  return PrincipalOf(context, source.tokens.get(), source.tenant_from_peer);
}

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_SECURITY_PRINCIPAL_H_
