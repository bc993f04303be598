// What a call says besides its messages: its deadline, and the per-call
// options a client sends as request metadata (besides `tenant`,
// principal.h):
//   dmls-max-output-ratio: N   raise (or lower) the amplification limit of
//                              this call's requests (admission.h) to N, at
//                              most the server's --max_output_ratio_limit.
// Stateless: thread-safe.
#ifndef DMLSERVE_SERVER_RPC_CALL_METADATA_H_
#define DMLSERVE_SERVER_RPC_CALL_METADATA_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"

namespace dmls::server {

inline constexpr char kOutputRatioMetadataKey[] = "dmls-max-output-ratio";

// The ratio the call asks for; 0 when it sends none. INVALID_ARGUMENT
// (OUTPUT_RATIO_INVALID) for anything but a positive decimal integer.
absl::StatusOr<uint64_t> RequestedOutputRatio(const grpc::ServerContextBase& context);

// The call's deadline; InfiniteFuture when it has none.
absl::Time DeadlineOf(const grpc::ServerContextBase& context);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_RPC_CALL_METADATA_H_
