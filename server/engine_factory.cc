#include "server/engine_factory.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/sched/multi_engine.h"
#if DMLSERVE_HAVE_D3D12
#include "engine/d3d12/dxbc_engine.h"
#endif
#if DMLSERVE_HAVE_DIRECTML
#include "engine/directml/dml_engine.h"
#endif

namespace dmls::server {
namespace {

std::unique_ptr<Engine> CreateCpuEngine(const ServerOptions& options,
                                        const EngineHooks& hooks) {
  CpuEngineOptions cpu;
  cpu.threads = options.engine.worker_threads;
  cpu.scheduler = EngineSchedulerOptions(options.batching);
  if (hooks.scheduler_observer) cpu.scheduler.observer = hooks.scheduler_observer("0");
  return std::make_unique<CpuEngine>(cpu);
}

#if DMLSERVE_HAVE_D3D12
// --adapter: the first adapter whose name contains the text.
absl::StatusOr<int> FindAdapter(const std::vector<d3d12::AdapterInfo>& adapters,
                                const std::string& text) {
  std::string seen;
  for (const d3d12::AdapterInfo& a : adapters) {
    if (absl::StrContains(a.name, text)) return a.index;
    absl::StrAppend(&seen, seen.empty() ? "" : ", ", "\"", a.name, "\"");
  }
  return absl::NotFoundError(absl::StrCat("--adapter=\"", text,
                                          "\" matches no adapter (seen: ",
                                          seen, ")"));
}

// The adapters to run engines on: --adapter (one), --adapters (a list), or
// by default every discrete GPU for gpu/auto, else the one `kind` picks.
absl::StatusOr<std::vector<int>> SelectAdapters(
    const ServerOptions& options, d3d12::DeviceOptions::Kind kind) {
  absl::StatusOr<std::vector<d3d12::AdapterInfo>> adapters =
      d3d12::Device::ListAdapters();
  if (!adapters.ok()) return adapters.status();
  if (!options.engine.adapter.empty()) {
    absl::StatusOr<int> index = FindAdapter(*adapters, options.engine.adapter);
    if (!index.ok()) return index.status();
    return std::vector<int>{*index};
  }
  if (!options.engine.adapters.empty()) {
    return d3d12::ParseAdapterList(*adapters, options.engine.adapters);
  }
  d3d12::DeviceOptions device;
  device.kind = kind;
  return d3d12::ChooseAdapters(*adapters, device);
}
#endif

// The Direct3D 12 engine; device is "auto" (every discrete GPU, else one
// GPU, else the software adapter), "gpu" or "software". One GpuEngine per
// selected adapter; several go behind a MultiEngine. An adapter whose engine
// cannot be created is logged and left out; only when none can is it an
// error.
absl::StatusOr<std::unique_ptr<Engine>> CreateD3D12Engine(
    const ServerOptions& options,
    const std::shared_ptr<spdlog::logger>& logger, const EngineHooks& hooks) {
#if DMLSERVE_HAVE_D3D12
  absl::StatusOr<d3d12::DeviceOptions::Kind> kind =
      d3d12::ParseDeviceKind(options.engine.device);
  if (!kind.ok()) return kind.status();
  absl::StatusOr<std::vector<int>> selected = SelectAdapters(options, *kind);
  if (!selected.ok()) return selected.status();
  std::vector<std::unique_ptr<Engine>> engines;
  std::vector<std::string> labels;
  std::string failures;
  for (size_t i = 0; i < selected->size(); ++i) {
    const int index = (*selected)[i];
    for (size_t j = 0; j < i; ++j) {
      if ((*selected)[j] == index) {
        logger->warn("adapter #{} selected again: a second engine on the "
                     "same device (a testing setup)", index);
        break;
      }
    }
    d3d12::GpuEngineOptions gpu;
    gpu.device.kind = *kind;
    gpu.device.adapter_index = index;
    gpu.memory_cap_bytes = options.engine.gpu_memory_cap_bytes;
    dmls::gpu::PlannerOptions planner;
    planner.cache_bytes = options.engine.gpu_cache_mib << 20;
    gpu.planner = d3d12::DxbcPlanner(planner);
    gpu.scheduler = EngineSchedulerOptions(options.batching);
    if (hooks.scheduler_observer) {
      // The index the engine gets among the live ones (its device label).
      gpu.scheduler.observer = hooks.scheduler_observer(std::to_string(engines.size()));
    }
    gpu.logger = logger;
    absl::StatusOr<std::unique_ptr<d3d12::GpuEngine>> engine =
        d3d12::CreateGpuEngine(std::move(gpu));
    if (!engine.ok()) {
      logger->error("adapter #{}: cannot create a Direct3D 12 engine: {}{}",
                    index, std::string(engine.status().message()),
                    selected->size() > 1 ? "; going on without it" : "");
      absl::StrAppend(&failures, failures.empty() ? "" : "; ", "adapter #",
                      index, ": ", engine.status().message());
      continue;
    }
    labels.push_back(absl::StrCat((*engine)->device_info().kind, engines.size()));
    engines.push_back(std::move(*engine));
  }
  if (engines.empty()) {
    return absl::UnavailableError(failures);
  }
  if (engines.size() == 1) return std::move(engines.front());
  sched::MultiEngineOptions multi;
  multi.labels = std::move(labels);
  multi.logger = logger;
  return std::unique_ptr<Engine>(
      std::make_unique<sched::MultiEngine>(std::move(engines), multi));
#else
  return absl::FailedPreconditionError(
      absl::StrCat("--device=", options.engine.device,
                   ": Direct3D 12 engine not built into this server"));
#endif
}

// --device=directml: Microsoft's DirectML.dll (engine/directml) on one
// Direct3D 12 adapter, --adapter's or the one "auto" picks. Windows only.
absl::StatusOr<std::unique_ptr<Engine>> CreateDirectMlEngine(
    const ServerOptions& options,
    const std::shared_ptr<spdlog::logger>& logger, const EngineHooks& hooks) {
#if DMLSERVE_HAVE_DIRECTML
  directml::DmlEngineOptions dml;
  dml.dll_path = options.engine.directml_dll;
  dml.scheduler = EngineSchedulerOptions(options.batching);
  if (hooks.scheduler_observer) dml.scheduler.observer = hooks.scheduler_observer("0");
  if (!options.engine.adapter.empty()) {
    absl::StatusOr<std::vector<int>> selected =
        SelectAdapters(options, d3d12::DeviceOptions::Kind::kAuto);
    if (!selected.ok()) return selected.status();
    dml.device.adapter_index = selected->front();
  }
  absl::StatusOr<std::unique_ptr<directml::DmlEngine>> engine =
      directml::DmlEngine::Create(dml);
  if (!engine.ok()) {
    return absl::Status(
        engine.status().code(),
        absl::StrCat("--device=directml: cannot create the DirectML engine "
                     "(--directml_dll=", options.engine.directml_dll, "): ",
                     engine.status().message()));
  }
  if (logger) {
    logger->warn("--device=directml: the DirectML reference engine runs one "
                 "request at a time behind the scheduler (no coalescing, "
                 "resident tensors in host memory, chains step by step)");
    if (options.engine.gpu_memory_cap_bytes.value_or(0) != 0) {
      logger->warn("--device=directml: --gpu_memory_cap_bytes is ignored (the "
                   "DirectML engine keeps no pools; GetCapabilities reports no cap)");
    }
  }
  return std::unique_ptr<Engine>(*std::move(engine));
#else
  (void)logger;
  (void)hooks;
  return absl::InvalidArgumentError(absl::StrCat(
      "--device=directml: the DirectML engine is Windows-only (it loads "
      "DirectML.dll, --directml_dll=", options.engine.directml_dll,
      ") and this dmlserve was not built for Windows; use --device=auto, "
      "gpu, software or cpu"));
#endif
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> CreateEngine(
    const ServerOptions& options, std::shared_ptr<spdlog::logger> logger,
    const EngineHooks& hooks) {
  if (options.engine.device == "cpu") return CreateCpuEngine(options, hooks);
  if (options.engine.device == "directml") return CreateDirectMlEngine(options, logger, hooks);
  if (options.engine.device == "auto" || options.engine.device == "gpu" ||
      options.engine.device == "software") {
    // No silent fallback: a server asked for Direct3D 12 that cannot create
    // an adapter fails at startup with the reason (use --device=cpu).
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        CreateD3D12Engine(options, logger, hooks);
    if (!engine.ok()) {
      return absl::Status(
          engine.status().code(),
          absl::StrCat("--device=", options.engine.device,
                       ": cannot create a Direct3D 12 engine: ",
                       engine.status().message(),
                       " (use --device=cpu for the reference CPU engine)"));
    }
    const DeviceInfo device = (*engine)->device_info();
    if (options.engine.device == "auto" && device.kind == "software" && logger) {
      // Loud, since it is usually a mistake: a GPU host whose driver vkd3d
      // cannot reach (in a container: no Vulkan without the NVIDIA
      // runtime's "graphics" capability) serves at CPU speed.
      logger->warn(
          "--device=auto found no hardware GPU that Vulkan/vkd3d can use and "
          "runs on the software adapter \"{}\" (lavapipe: CPU speed). On a "
          "GPU host check the driver; in a container the NVIDIA runtime needs "
          "NVIDIA_DRIVER_CAPABILITIES to include graphics. --device=gpu "
          "fails instead of falling back.",
          device.name);
    }
    return engine;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown --device \"", options.engine.device, "\""));
}

}  // namespace dmls::server
