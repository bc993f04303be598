// CreateEngine: picks and builds the execution engine for --device. The one
// place that knows every engine type; the rest of the server sees only
// dmls::Engine. Stateless function: thread-safe.
#ifndef DMLSERVE_SERVER_ENGINE_FACTORY_H_
#define DMLSERVE_SERVER_ENGINE_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "server/server_options.h"
#include "spdlog/logger.h"

namespace dmls::server {

// device "cpu": the reference CPU engine. "gpu"/"software": the Direct3D 12
// engine, FAILED_PRECONDITION when it is not available. "auto": Direct3D 12
// when available, else the CPU engine (with a warning).
absl::StatusOr<std::unique_ptr<Engine>> CreateEngine(
    const ServerOptions& options, std::shared_ptr<spdlog::logger> logger);

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_ENGINE_FACTORY_H_
