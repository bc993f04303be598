#include "server/security/server_credentials.h"

#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace dmls::server {
namespace {

// A readable PEM file, or the error naming `flag`.
absl::Status CheckPemFile(const char* flag, const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (!absl::StrContains(text, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is not a PEM file"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ServerSecurity> MakeServerSecurity(const SecurityOptions& o) {
  ServerSecurity security;
  const bool tls = !o.tls_cert_file.empty() || !o.tls_key_file.empty();
  if (!tls) {
    if (!o.tls_client_ca_file.empty() || !o.auth_tokens_file.empty()) {
      return absl::InvalidArgumentError(
          !o.auth_tokens_file.empty()
              ? "--auth_tokens_file needs TLS (--tls_cert_file and "
                "--tls_key_file): bearer tokens must not travel in clear text"
              : "--tls_client_ca_file needs --tls_cert_file and --tls_key_file");
    }
    security.credentials = grpc::InsecureServerCredentials();
    security.description = "plaintext";
    return security;
  }
  if (o.tls_cert_file.empty() || o.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert_file and --tls_key_file go together");
  }
  const std::string& client_auth = o.tls_client_auth;
  if (client_auth != "" && client_auth != "none" && client_auth != "optional" &&
      client_auth != "require") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_client_auth must be none, optional or require; got \"",
        client_auth, "\""));
  }
  const bool ca = !o.tls_client_ca_file.empty();
  if (!ca && (client_auth == "optional" || client_auth == "require")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_client_auth=", client_auth, " needs --tls_client_ca_file"));
  }
  if (o.tls_reload_seconds < 1) {
    return absl::InvalidArgumentError("--tls_reload_seconds must be at least 1");
  }
  if (o.auth_tokens_poll_ms < 0) {
    return absl::InvalidArgumentError(
        "--auth_tokens_poll_ms must be 0 (off) or more");
  }
  for (const auto& [flag, path] :
       {std::pair<const char*, const std::string&>{"--tls_cert_file", o.tls_cert_file},
        {"--tls_key_file", o.tls_key_file},
        {"--tls_client_ca_file", o.tls_client_ca_file}}) {
    if (path.empty()) continue;
    if (absl::Status s = CheckPemFile(flag, path); !s.ok()) return s;
  }
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      o.tls_key_file, o.tls_cert_file, ca ? o.tls_client_ca_file : "",
      static_cast<unsigned>(o.tls_reload_seconds));
  grpc::experimental::TlsServerCredentialsOptions tls_options(provider);
  tls_options.watch_identity_key_cert_pairs();
  const bool mutual = ca && client_auth != "none";
  if (ca) tls_options.watch_root_certs();
  tls_options.set_cert_request_type(
      !mutual ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
      : client_auth == "optional"
          ? GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  security.credentials = grpc::experimental::TlsServerCredentials(tls_options);
  security.description =
      !mutual ? "TLS"
      : client_auth == "optional" ? "TLS, client certificates optional"
                                  : "mutual TLS";
  if (!o.auth_tokens_file.empty()) {
    TokenAuthOptions auth;
    auth.tokens_file = o.auth_tokens_file;
    absl::StatusOr<std::vector<std::string>> exempt = ParseAuthExempt(o.auth_exempt);
    if (!exempt.ok()) return exempt.status();
    auth.exempt_prefixes = *std::move(exempt);
    absl::StatusOr<std::shared_ptr<TokenAuthenticator>> tokens =
        TokenAuthenticator::Create(std::move(auth));
    if (!tokens.ok()) {
      return absl::Status(tokens.status().code(),
                          absl::StrCat("--auth_tokens_file: ", tokens.status().message()));
    }
    security.tokens = *std::move(tokens);
    security.credentials->SetAuthMetadataProcessor(
        std::make_shared<TokenAuthProcessor>(security.tokens));
    absl::StrAppend(&security.description, ", bearer tokens (",
                    security.tokens->token_count(), ")");
  }
  return security;
}

}  // namespace dmls::server
