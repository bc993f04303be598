// The server's logger: spdlog to stderr, in human text or one JSON object per
// line (for log collectors). Built once in main and passed down by pointer;
// spdlog loggers are thread-safe (the _mt sink).
#ifndef DMLSERVE_SERVER_TELEMETRY_LOGGING_H_
#define DMLSERVE_SERVER_TELEMETRY_LOGGING_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "spdlog/logger.h"

namespace dmls::server {

// `level`: trace|debug|info|warn|warning|error|critical|off.
// `format`: "text" or "json". INVALID_ARGUMENT for anything else.
absl::StatusOr<std::shared_ptr<spdlog::logger>> MakeLogger(
    const std::string& name, const std::string& level,
    const std::string& format);

// Sends gRPC's own log lines (bind errors, transport trouble) to `logger` so
// that --log_format=json covers them too. gRPC's hook is process-wide, so
// this is for main() only; the logger stays alive until the process exits.
void RouteGrpcLogsTo(std::shared_ptr<spdlog::logger> logger);

// `text` as the inside of a JSON string literal.
std::string JsonEscape(std::string_view text);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_TELEMETRY_LOGGING_H_
