#include "server/telemetry/logging.h"

#include <cstdio>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "grpc/support/log.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace dmls::server {
namespace {

// %j: the log message escaped for a JSON string (a plain %v would break the
// line's JSON on a quote or newline in the message).
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string escaped =
        JsonEscape(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

// gRPC's log hook is a plain function pointer, hence a process-wide logger.
// Deliberately leaked: gRPC may log from its threads during exit.
std::shared_ptr<spdlog::logger>* grpc_logger = nullptr;

void LogFromGrpc(gpr_log_func_args* args) {
  if (grpc_logger == nullptr) return;
  spdlog::level::level_enum level = spdlog::level::info;
  if (args->severity == GPR_LOG_SEVERITY_DEBUG) level = spdlog::level::debug;
  if (args->severity == GPR_LOG_SEVERITY_ERROR) level = spdlog::level::err;
  // What gRPC says about a listener that the stop shut down under it
  // (server_sockets.h), on every stop: no error.
  if (std::string_view(args->message) == "Failed accept4: Invalid argument") {
    level = spdlog::level::debug;
  }
  (*grpc_logger)
      ->log(level, "grpc {}:{}: {}", args->file, args->line, args->message);
}

}  // namespace

void RouteGrpcLogsTo(std::shared_ptr<spdlog::logger> logger) {
  grpc_logger = new std::shared_ptr<spdlog::logger>(std::move(logger));
  gpr_set_log_function(&LogFromGrpc);
}

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

absl::StatusOr<std::shared_ptr<spdlog::logger>> MakeLogger(
    const std::string& name, const std::string& level,
    const std::string& format) {
  std::string level_name = level == "warning" ? "warn" : level;
  spdlog::level::level_enum parsed = spdlog::level::from_str(level_name);
  // from_str maps unknown names to "off"; only "off" itself may mean off.
  if (parsed == spdlog::level::off && level_name != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown log level \"", level, "\""));
  }
  std::unique_ptr<spdlog::pattern_formatter> formatter;
  if (format == "json") {
    formatter = std::make_unique<spdlog::pattern_formatter>(
        spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('j').set_pattern(
        "{\"time\":\"%Y-%m-%dT%H:%M:%S.%fZ\",\"level\":\"%l\","
        "\"logger\":\"%n\",\"thread\":%t,\"msg\":\"%j\"}");
  } else if (format == "text") {
    formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v");
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown log format \"", format, "\""));
  }
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(name, std::move(sink));
  logger->set_formatter(std::move(formatter));
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::info);
  return logger;
}

}  // namespace dmls::server
