// The flags each dmlctl command takes, so that a misspelt or unknown flag
// (--shapee=3, --bogus=1) is a usage error instead of being ignored.
// Stateless functions over constant tables: thread-safe.
#ifndef DMLSERVE_CLIENT_DMLCTL_FLAGS_H_
#define DMLSERVE_CLIENT_DMLCTL_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "client/dmlctl_common.h"

namespace dmls::client::ctl {

// The flags every command takes (server, TLS, tenant, token, help...).
const std::vector<std::string>& GlobalFlags();

// The flags `command` takes besides the global ones: "caps", "health",
// "validate", "run" (one operator), "run-chain" (run CHAIN.json), "upload",
// "download", "ls", "rm". Empty for an unknown command.
std::vector<std::string> CommandFlags(absl::string_view command);

// OK when every flag of `args` is global or one of `command`'s; otherwise
// INVALID_ARGUMENT naming the first unknown flag and the valid ones.
absl::Status CheckFlags(const Args& args, absl::string_view command);

}  // namespace dmls::client::ctl

#endif  // DMLSERVE_CLIENT_DMLCTL_FLAGS_H_
