#include "client/dmlctl_flags.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dmls::client::ctl {
namespace {

// The tensor sources and sinks of `run` on one operator.
const char* const kRunTensorFlags[] = {
    "input",  "scale",      "bias",          "input-handle", "scale-handle",
    "bias-handle", "random", "shape",        "data-type",    "output",
    "output-handle", "keep-output", "ttl"};

const std::map<std::string, std::vector<std::string>, std::less<>>& Table() {
  static const auto* table =
      new std::map<std::string, std::vector<std::string>, std::less<>>{
          {"caps", {"summary"}},
          {"health", {"service"}},
          {"validate", {"feature-level", "in-place", "shape", "data-type"}},
          {"run",
           [] {
             std::vector<std::string> flags = {"json", "feature-level",
                                               "in-place", "repeat"};
             flags.insert(flags.end(), std::begin(kRunTensorFlags),
                          std::end(kRunTensorFlags));
             return flags;
           }()},
          {"run-chain",
           {"input", "input-handle", "output", "output-dir", "json",
            "feature-level"}},
          {"upload", {"ttl", "chunk-bytes", "progress", "json"}},
          {"download",
           {"output", "chunk-bytes", "progress", "raw", "offset", "length"}},
          {"ls", {"json"}},
          {"rm", {}},
      };
  return *table;
}

}  // namespace

const std::vector<std::string>& GlobalFlags() {
  static const auto* flags = new std::vector<std::string>{
      "server", "timeout",  "tenant",     "tls",   "tls-ca",  "tls-cert",
      "tls-key", "tls-server-name", "token", "token-file", "help", "version"};
  return *flags;
}

std::vector<std::string> CommandFlags(absl::string_view command) {
  auto it = Table().find(command);
  return it == Table().end() ? std::vector<std::string>() : it->second;
}

absl::Status CheckFlags(const Args& args, absl::string_view command) {
  const std::vector<std::string> own = CommandFlags(command);
  const std::vector<std::string>& global = GlobalFlags();
  for (const auto& [name, value] : args.flags) {
    const bool known =
        std::find(own.begin(), own.end(), name) != own.end() ||
        std::find(global.begin(), global.end(), name) != global.end();
    if (!known) {
      const absl::string_view shown = command == "run-chain" ? "run CHAIN.json"
                                                             : command;
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag --", name, " for dmlctl ", shown, "; its flags: ",
          own.empty() ? "(none)" : absl::StrCat("--", absl::StrJoin(own, ", --")),
          "; global: --", absl::StrJoin(global, ", --")));
    }
  }
  return absl::OkStatus();
}

}  // namespace dmls::client::ctl
