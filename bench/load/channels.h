// MakeChannels: the gRPC channels of a dmls_load run. Each channel gets a
// distinct channel argument, so gRPC gives each its own subchannel and TCP
// connection instead of sharing one between equal channels. Message sizes
// are unlimited on the client side: the server's limits are the ones under
// test. Stateless free functions: thread-safe.
#ifndef DMLSERVE_BENCH_LOAD_CHANNELS_H_
#define DMLSERVE_BENCH_LOAD_CHANNELS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace dmls::load {

// `count` insecure channels to `target`, each connected (or
// UNAVAILABLE once `connect_timeout` has passed without a connection).
absl::StatusOr<std::vector<std::shared_ptr<grpc::Channel>>> MakeChannels(
    const std::string& target, uint32_t count, absl::Duration connect_timeout);

}  // namespace dmls::load

#endif  // DMLSERVE_BENCH_LOAD_CHANNELS_H_
