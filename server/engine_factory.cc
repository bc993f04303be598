#include "server/engine_factory.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/cpu/cpu_engine.h"

namespace dmls::server {
namespace {

std::unique_ptr<Engine> CreateCpuEngine(const ServerOptions& options) {
  CpuEngineOptions cpu;
  cpu.threads = options.worker_threads;
  return std::make_unique<CpuEngine>(cpu);
}

// The Direct3D 12 engine for device "gpu" or "software".
absl::StatusOr<std::unique_ptr<Engine>> CreateD3D12Engine(
    const ServerOptions& options, const std::shared_ptr<spdlog::logger>&) {
  return absl::FailedPreconditionError(
      absl::StrCat("--device=", options.device,
                   ": Direct3D 12 engine not built into this server"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> CreateEngine(
    const ServerOptions& options, std::shared_ptr<spdlog::logger> logger) {
  if (options.device == "cpu") return CreateCpuEngine(options);
  if (options.device == "gpu" || options.device == "software") {
    return CreateD3D12Engine(options, logger);
  }
  if (options.device == "auto") {
    ServerOptions gpu = options;
    gpu.device = "gpu";
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        CreateD3D12Engine(gpu, logger);
    if (engine.ok()) return engine;
    logger->warn("Direct3D 12 unavailable ({}); falling back to the CPU engine",
                 std::string(engine.status().message()));
    return CreateCpuEngine(options);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --device \"", options.device, "\""));
}

}  // namespace dmls::server
