// CreateEngine: picks and builds the execution engine for --device. The one
// place that knows every engine type; the rest of the server sees only
// dmls::Engine. Stateless function: thread-safe.
#ifndef DMLSERVE_SERVER_ENGINE_FACTORY_H_
#define DMLSERVE_SERVER_ENGINE_FACTORY_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/sched/scheduler_observer.h"
#include "server/options/server_options.h"
#include "spdlog/logger.h"

namespace dmls::server {

// device "cpu": the reference CPU engine. "auto": the Direct3D 12 engine on
// a hardware GPU when present, else on the software adapter (lavapipe/WARP).
// "gpu"/"software": the Direct3D 12 engine on that kind of adapter. Any
// Direct3D 12 failure is an error naming the cause: there is no silent
// fallback to the CPU. "gpu" and "auto" run one engine on every discrete
// GPU (a MultiEngine over them when there are several); options.adapter
// (one adapter, by name substring) or options.adapters (a list, see
// ServerOptions) override that and the kind; an adapter that fails is
// logged and left out. options.gpu_memory_cap_bytes caps each engine's
// pools. "directml": Microsoft's DirectML.dll (options.directml_dll) on one
// adapter (options.adapter, else a hardware GPU, else the software one);
// Windows builds only, INVALID_ARGUMENT elsewhere.
// Optional observers of the engines built.
struct EngineHooks {
  // The scheduler observer of the engine of device label "0", "1", ... (its
  // index among the engines that started).
  std::function<std::shared_ptr<sched::SchedulerObserver>(const std::string&)>
      scheduler_observer;
};

absl::StatusOr<std::unique_ptr<Engine>> CreateEngine(
    const ServerOptions& options, std::shared_ptr<spdlog::logger> logger,
    const EngineHooks& hooks = {});

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_ENGINE_FACTORY_H_
