#include "server/tracked_reactor.h"

namespace dmls::server {

grpc::Status ShuttingDownStatus() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, kShuttingDownMessage);
}

}  // namespace dmls::server
