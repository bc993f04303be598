#include "server/security/token_auth.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/security/principal.h"

namespace dmls::server {
namespace {

constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxTokenLength = 512;
constexpr char kBearerPrefix[] = "Bearer ";

bool Printable(absl::string_view s) {
  for (char c : s) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

absl::Status LineError(int line, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("tokens file line ", line, ": ", message));
}

absl::StatusOr<uint32_t> ParseScopes(absl::string_view list, int line) {
  uint32_t scopes = 0;
  for (absl::string_view scope : absl::StrSplit(list, ',')) {
    if (scope == "execute") {
      scopes |= kScopeExecute;
    } else if (scope == "tensors") {
      scopes |= kScopeTensors;
    } else {
      return LineError(line, absl::StrCat("unknown scope '", scope,
                                          "' (execute, tensors)"));
    }
  }
  return scopes;
}

// The scope a method needs; 0 for methods of other services (any valid
// token will do).
uint32_t ScopeOf(absl::string_view path) {
  if (absl::StartsWith(path, "/dmlserve.v1.DmlService/")) return kScopeExecute;
  // The Open Inference Protocol runs operators like DmlService.
  if (absl::StartsWith(path, "/inference.GRPCInferenceService/")) return kScopeExecute;
  if (absl::StartsWith(path, "/dmlserve.v1.TensorService/")) return kScopeTensors;
  return 0;
}

}  // namespace

absl::StatusOr<TokenTable> TokenTable::Parse(absl::string_view text) {
  TokenTable table;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty()) continue;
    if (fields.size() < 2) {
      return LineError(line_number, "want TOKEN PRINCIPAL [scopes=...] [expires=...]");
    }
    const absl::string_view token = fields[0];
    if (token.size() < kMinTokenLength || token.size() > kMaxTokenLength ||
        !Printable(token)) {
      return LineError(line_number,
                       absl::StrCat("a token is ", kMinTokenLength, " to ",
                                    kMaxTokenLength, " printable characters"));
    }
    TokenEntry entry;
    entry.principal = std::string(fields[1]);
    if (entry.principal.size() > kMaxTenantLength) {
      return LineError(line_number, "principal too long");
    }
    for (size_t i = 2; i < fields.size(); ++i) {
      absl::string_view field = fields[i];
      if (absl::ConsumePrefix(&field, "scopes=")) {
        absl::StatusOr<uint32_t> scopes = ParseScopes(field, line_number);
        if (!scopes.ok()) return scopes.status();
        entry.scopes = *scopes;
      } else if (absl::ConsumePrefix(&field, "expires=")) {
        absl::Time expires;
        std::string error;
        if (!absl::ParseTime(absl::RFC3339_full, field, &expires, &error)) {
          return LineError(line_number,
                           absl::StrCat("expires: want RFC 3339 such as "
                                        "2026-12-31T00:00:00Z (", error, ")"));
        }
        entry.expires = expires;
      } else {
        return LineError(line_number,
                         absl::StrCat("unknown field '", field, "'"));
      }
    }
    if (!table.entries_.emplace(std::string(token), std::move(entry)).second) {
      return LineError(line_number, "the token appears twice");
    }
  }
  return table;
}

absl::StatusOr<TokenTable> TokenTable::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<TokenTable> table = Parse(text.str());
  if (!table.ok()) {
    return absl::Status(table.status().code(),
                        absl::StrCat(path, ": ", table.status().message()));
  }
  return table;
}

const TokenEntry* TokenTable::Find(absl::string_view token) const {
  auto it = entries_.find(token);
  return it == entries_.end() ? nullptr : &it->second;
}

absl::StatusOr<std::vector<std::string>> ParseAuthExempt(absl::string_view text) {
  std::vector<std::string> prefixes;
  for (absl::string_view name : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    if (name == "health") {
      prefixes.push_back("/grpc.health.v1.Health/");
    } else if (name == "reflection") {
      prefixes.push_back("/grpc.reflection.v1alpha.ServerReflection/");
      prefixes.push_back("/grpc.reflection.v1.ServerReflection/");
    } else if (absl::StartsWith(name, "/")) {
      prefixes.push_back(std::string(name));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "--auth_exempt: unknown '", name,
          "' (health, reflection, or a method path prefix such as "
          "/dmlserve.v1.DmlService/GetCapabilities)"));
    }
  }
  return prefixes;
}

absl::StatusOr<std::shared_ptr<TokenAuthenticator>> TokenAuthenticator::Create(
    TokenAuthOptions options) {
  std::shared_ptr<TokenAuthenticator> tokens(
      new TokenAuthenticator(std::move(options)));
  if (absl::Status loaded = tokens->Reload(); !loaded.ok()) return loaded;
  return tokens;
}

absl::Status TokenAuthenticator::Reload() {
  absl::StatusOr<TokenTable> table = TokenTable::Load(options_.tokens_file);
  if (!table.ok()) return table.status();
  auto shared = std::make_shared<const TokenTable>(*std::move(table));
  MutexLock lock(&mu_);
  table_ = std::move(shared);
  return absl::OkStatus();
}

size_t TokenAuthenticator::token_count() const {
  MutexLock lock(&mu_);
  return table_->size();
}

absl::StatusOr<std::optional<TokenEntry>> TokenAuthenticator::Authenticate(
    absl::Span<const absl::string_view> authorization) const {
  if (authorization.empty()) return std::nullopt;
  if (authorization.size() > 1) {
    // The gate and the handler must read the same token; with several,
    // which one each picks would be up to the order of the metadata.
    return absl::UnauthenticatedError(
        "AUTH_TOKEN_INVALID: more than one authorization value");
  }
  absl::string_view token = authorization.front();
  if (!absl::ConsumePrefix(&token, kBearerPrefix)) {
    return absl::UnauthenticatedError(
        "AUTH_TOKEN_INVALID: the authorization metadata is not 'Bearer TOKEN'");
  }
  std::shared_ptr<const TokenTable> table;
  {
    MutexLock lock(&mu_);
    table = table_;
  }
  const TokenEntry* entry = table->Find(token);
  if (entry == nullptr) {
    return absl::UnauthenticatedError("AUTH_TOKEN_INVALID: unknown token");
  }
  if (entry->expires.has_value() && options_.now() >= *entry->expires) {
    return absl::UnauthenticatedError(absl::StrCat(
        "AUTH_TOKEN_EXPIRED: the token expired at ",
        absl::FormatTime(absl::RFC3339_sec, *entry->expires, absl::UTCTimeZone())));
  }
  return *entry;
}

AuthDecision TokenAuthenticator::Check(
    absl::string_view path, absl::Span<const absl::string_view> authorization) const {
  AuthDecision decision;
  bool exempt = false;
  for (const std::string& prefix : options_.exempt_prefixes) {
    exempt |= absl::StartsWith(path, prefix);
  }
  absl::StatusOr<std::optional<TokenEntry>> entry = Authenticate(authorization);
  if (!entry.ok()) {
    decision.status = entry.status();
    return decision;
  }
  if (!entry->has_value()) {
    if (!exempt) {
      decision.status = absl::UnauthenticatedError(
          "AUTH_TOKEN_MISSING: this server wants 'authorization: Bearer "
          "TOKEN' metadata");
    }
    return decision;
  }
  const uint32_t needed = ScopeOf(path);
  if (!exempt && ((*entry)->scopes & needed) != needed) {
    decision.status = absl::PermissionDeniedError(absl::StrCat(
        "AUTH_SCOPE: principal '", (*entry)->principal, "' may not call ", path));
    return decision;
  }
  decision.principal = (*entry)->principal;
  return decision;
}

grpc::Status TokenAuthProcessor::Process(const InputMetadata& auth_metadata,
                                         grpc::AuthContext* /*context*/,
                                         OutputMetadata* /*consumed_auth_metadata*/,
                                         OutputMetadata* /*response_metadata*/) {
  // `context` is the connection's, shared by all its calls: nothing of this
  // call goes there, and `authorization` stays for the handler, which reads
  // the call's principal from it (token_auth.h).
  absl::string_view path;
  std::vector<absl::string_view> authorization;
  for (const auto& [key, value] : auth_metadata) {
    const absl::string_view k(key.data(), key.size());
    const absl::string_view v(value.data(), value.size());
    if (k == ":path") path = v;
    if (k == kAuthorizationMetadataKey) authorization.push_back(v);
  }
  AuthDecision decision = tokens_->Check(path, authorization);
  if (!decision.status.ok()) {
    return grpc::Status(static_cast<grpc::StatusCode>(decision.status.code()),
                        std::string(decision.status.message()));
  }
  return grpc::Status::OK;
}

}  // namespace dmls::server
