#include "server/engine_factory.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/cpu/cpu_engine.h"
#if DMLSERVE_HAVE_D3D12
#include "engine/d3d12/dxbc_engine.h"
#endif

namespace dmls::server {
namespace {

std::unique_ptr<Engine> CreateCpuEngine(const ServerOptions& options) {
  CpuEngineOptions cpu;
  cpu.threads = options.worker_threads;
  cpu.scheduler = EngineSchedulerOptions(options);
  return std::make_unique<CpuEngine>(cpu);
}

#if DMLSERVE_HAVE_D3D12
// --adapter: the first adapter whose name contains the text.
absl::StatusOr<int> FindAdapter(const std::string& text) {
  absl::StatusOr<std::vector<d3d12::AdapterInfo>> adapters =
      d3d12::Device::ListAdapters();
  if (!adapters.ok()) return adapters.status();
  std::string seen;
  for (const d3d12::AdapterInfo& a : *adapters) {
    if (absl::StrContains(a.name, text)) return a.index;
    absl::StrAppend(&seen, seen.empty() ? "" : ", ", "\"", a.name, "\"");
  }
  return absl::NotFoundError(absl::StrCat("--adapter=\"", text,
                                          "\" matches no adapter (seen: ",
                                          seen, ")"));
}
#endif

// The Direct3D 12 engine; device is "auto" (a GPU, else the software
// adapter), "gpu" or "software".
absl::StatusOr<std::unique_ptr<Engine>> CreateD3D12Engine(
    const ServerOptions& options,
    const std::shared_ptr<spdlog::logger>& logger) {
#if DMLSERVE_HAVE_D3D12
  d3d12::GpuEngineOptions gpu;
  absl::StatusOr<d3d12::DeviceOptions::Kind> kind =
      d3d12::ParseDeviceKind(options.device);
  if (!kind.ok()) return kind.status();
  gpu.device.kind = *kind;
  if (!options.adapter.empty()) {
    absl::StatusOr<int> index = FindAdapter(options.adapter);
    if (!index.ok()) return index.status();
    gpu.device.adapter_index = *index;
  }
  gpu.memory_cap_bytes = options.gpu_memory_cap_bytes;
  gpu.scheduler = EngineSchedulerOptions(options);
  gpu.logger = logger;
  absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine =
      d3d12::CreateGpuEngine(std::move(gpu));
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Engine>(std::move(*engine));
#else
  return absl::FailedPreconditionError(
      absl::StrCat("--device=", options.device,
                   ": Direct3D 12 engine not built into this server"));
#endif
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> CreateEngine(
    const ServerOptions& options, std::shared_ptr<spdlog::logger> logger) {
  if (options.device == "cpu") return CreateCpuEngine(options);
  if (options.device == "auto" || options.device == "gpu" ||
      options.device == "software") {
    // No silent fallback: a server asked for Direct3D 12 that cannot create
    // an adapter fails at startup with the reason (use --device=cpu).
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        CreateD3D12Engine(options, logger);
    if (!engine.ok()) {
      return absl::Status(
          engine.status().code(),
          absl::StrCat("--device=", options.device,
                       ": cannot create a Direct3D 12 engine: ",
                       engine.status().message(),
                       " (use --device=cpu for the reference CPU engine)"));
    }
    return engine;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --device \"", options.device, "\""));
}

}  // namespace dmls::server
