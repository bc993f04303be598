// The dmlserve binary's flags, read into ServerOptions. They are defined
// in flags.cc, group by group, beside the groups (server_options.h), each
// with its group's default; only dmlserve links them (target
// dmls_server_flags), so no other binary carries them. Call after
// absl::ParseCommandLine, on one thread.
#ifndef DMLSERVE_SERVER_OPTIONS_FLAGS_H_
#define DMLSERVE_SERVER_OPTIONS_FLAGS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/options/server_options.h"

namespace dmls::server {

// Every group from its flags; INVALID_ARGUMENT naming the flag whose text
// does not parse (--gpu_memory_cap_bytes). The values are not validated
// here: ValidateOptions does that.
absl::StatusOr<ServerOptions> ServerOptionsFromFlags();

// Whether `file` (absl's name of a flag's source file) is flags.cc: what
// --help lists.
bool IsServerFlagsFile(absl::string_view file);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_OPTIONS_FLAGS_H_
