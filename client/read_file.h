// ReadFile: a whole file's bytes, for the client's TLS files, .npy arrays
// and JSON descriptors. Stateless; thread-safe.
#ifndef DMLSERVE_CLIENT_READ_FILE_H_
#define DMLSERVE_CLIENT_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace dmls::client {

// NOT_FOUND ("cannot read PATH") when the file cannot be opened.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace dmls::client

#endif  // DMLSERVE_CLIENT_READ_FILE_H_
