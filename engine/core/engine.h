// Engine: the interface every executor implements (engine/cpu, engine/d3d12).
// The server talks only to this interface, so executors drop in without
// touching it. Implementations are thread-safe: Execute may be called from
// many threads at once.
#ifndef DMLSERVE_ENGINE_CORE_ENGINE_H_
#define DMLSERVE_ENGINE_CORE_ENGINE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/core/execute_request.h"
#include "engine/core/operator_desc.h"
#include "engine/core/resident.h"
#include "engine/core/types.h"

namespace dmls {

struct DeviceInfo {
  std::string name;         // adapter description, e.g. "NVIDIA H200"
  std::string kind;         // "cpu", "software", "gpu"
  std::string backend;      // "cpu-reference", "d3d12 (vkd3d)", ...
  uint64_t memory_bytes = 0;  // dedicated memory, 0 when unknown
  // Device memory the engine may hold on it (pools, arenas, resident
  // tensors); 0 = no cap (or not a GPU engine).
  uint64_t memory_cap_bytes = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;

  // The device, or for an engine over several devices a summary of them
  // (e.g. "2 x NVIDIA H200", memory summed).
  virtual DeviceInfo device_info() const = 0;
  // Every device the engine runs on, in order.
  virtual std::vector<DeviceInfo> devices() const { return {device_info()}; }
  // False once the engine can no longer run anything (its device, or every
  // device, is lost). The server reports NOT_SERVING then. Thread-safe.
  virtual bool Healthy() const { return true; }

  // Executes a validated request. `done` is called exactly once, possibly on
  // another thread and possibly before Execute returns. Errors: see
  // absl::StatusCode; RESOURCE_EXHAUSTED when a memory cap is hit.
  virtual void Execute(ExecuteRequest request, ExecuteCallback done) = 0;

  // Resident tensors and chains (resident.h). The defaults keep buffers in
  // host memory and run chains step by step through Execute
  // (host_resident.h); engines with device memory override all four.
  //
  // A zero-filled buffer of `bytes` bytes: every use of it (chains, writes,
  // reads) sees zeros where nothing was written (a device engine may clear
  // it after returning, ahead of every use). `placement_key` groups buffers
  // that should share a device (the server passes the owner), for engines
  // over several devices. RESOURCE_EXHAUSTED when memory (or the device
  // memory cap) runs out.
  virtual absl::StatusOr<std::shared_ptr<ResidentBuffer>> AllocateResident(
      uint64_t bytes, absl::string_view placement_key);
  // Copies `bytes` to [offset, offset + bytes.size()) of `buffer` (one this
  // engine allocated). `done` once, possibly on another thread; writes and
  // reads of a buffer and chains using it take effect in call order.
  virtual void WriteResident(std::shared_ptr<ResidentBuffer> buffer,
                             uint64_t offset, std::string bytes,
                             StatusCallback done);
  // Copies [offset, offset + into.size()) of `buffer` into `into`, memory
  // of the caller's that it keeps alive and leaves alone until `done` (the
  // engine allocates nothing for the bytes: a caller can reuse its chunk
  // buffers). `done` once, possibly on another thread; `into` holds the
  // bytes only when it says OK. In call order with writes and chains.
  virtual void ReadResidentInto(std::shared_ptr<ResidentBuffer> buffer,
                                uint64_t offset, absl::Span<char> into,
                                StatusCallback done);
  // Runs a validated chain (resident.h): its resident buffers are this
  // engine's. `done` is called exactly once.
  virtual void ExecuteChain(ChainRequest request, ChainCallback done);
  // ReadResidentInto a string of `length` bytes made (its pages touched)
  // on the caller's thread; the one read every engine implements is
  // ReadResidentInto.
  void ReadResident(std::shared_ptr<ResidentBuffer> buffer, uint64_t offset,
                    uint64_t length, BytesCallback done);

  // Stops accepting work and waits for work in flight. Idempotent.
  virtual void Shutdown() {}

  // Named counters for logs and metrics (requests, batches, dispatches,
  // coalesced requests, ...); names are stable snake_case. Thread-safe.
  virtual std::vector<std::pair<std::string, uint64_t>> Counters() const {
    return {};
  }
};

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_ENGINE_H_
