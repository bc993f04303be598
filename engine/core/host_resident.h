// Resident tensors and chains for engines without device memory of their
// own: buffers in host memory, and chains run one step at a time through
// Engine::Execute with the intermediates in host memory. This is what the
// Engine interface does by default (engine.h): the CPU engine and test
// engines use it; the GPU engine keeps tensors on its device instead
// (engine/d3d12/resident_executor.h).
//
// Thread-safety: HostResidentBuffer is thread-safe; RunChainOnHost may be
// called from any thread.
#ifndef DMLSERVE_ENGINE_CORE_HOST_RESIDENT_H_
#define DMLSERVE_ENGINE_CORE_HOST_RESIDENT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/core/execute_request.h"
#include "engine/core/mutex.h"
#include "engine/core/resident.h"

namespace dmls {

class HostResidentBuffer : public ResidentBuffer {
 public:
  // Zero-filled. RESOURCE_EXHAUSTED when the host has no memory for it.
  static absl::StatusOr<std::shared_ptr<HostResidentBuffer>> Create(
      Engine* engine, uint64_t size, std::string device);

  // OUT_OF_RANGE when [offset, offset + bytes.size()) is not inside.
  absl::Status Write(uint64_t offset, absl::string_view bytes);
  absl::StatusOr<std::string> Read(uint64_t offset, uint64_t length) const;
  // [offset, offset + into.size()) into `into`.
  absl::Status ReadInto(uint64_t offset, absl::Span<char> into) const;

 private:
  HostResidentBuffer(Engine* engine, uint64_t size, std::string device)
      : ResidentBuffer(engine, size, std::move(device)) {}

  mutable Mutex mu_;
  std::string bytes_ ABSL_GUARDED_BY(mu_);
};

// Checks that [offset, offset + length) lies inside a buffer of `size`
// bytes (OUT_OF_RANGE otherwise).
absl::Status CheckResidentRange(uint64_t size, uint64_t offset, uint64_t length);

// Runs one step of a chain: Engine::Execute of the engine running it.
using ExecuteFn = absl::AnyInvocable<void(ExecuteRequest, ExecuteCallback)>;

// Runs a validated chain through `execute`, step by step, each step's
// inputs copied out of host buffers (inline bytes, earlier outputs,
// HostResidentBuffers made by `owner`, the engine `execute` runs on).
// `done` is called once.
void RunChainOnHost(Engine* owner, ExecuteFn execute, ChainRequest request,
                    ChainCallback done);

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CORE_HOST_RESIDENT_H_
