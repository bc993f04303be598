// CpuEngine: the reference executor. Plain loops over logical elements that
// reproduce oracle.py (OPERATORS.md §4-§7): binary64 math, one final RNE
// rounding to the output type, strides/zero strides/padding honoured, and
// in-place execution into a copy of the input buffer. It is the yardstick
// the Direct3D 12 engine is checked against and the fallback backend of the
// server.
//
// Ownership: owns its thread pool. Thread-safe: Execute may be called from
// any number of threads; each request runs on one pool thread.
#ifndef DMLSERVE_ENGINE_CPU_CPU_ENGINE_H_
#define DMLSERVE_ENGINE_CPU_CPU_ENGINE_H_

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/sched/thread_pool.h"

namespace dmls {

struct CpuEngineOptions {
  // Worker threads; 0 means std::thread::hardware_concurrency().
  int threads = 0;
  // Largest output buffer (TotalTensorSizeInBytes, or the aliased range
  // in-place) one request may produce; above it RESOURCE_EXHAUSTED. The
  // engine also holds per-element bookkeeping (about 3x8 bytes per element
  // for MVN), so this bounds its memory per request.
  uint64_t max_buffer_bytes = uint64_t{1} << 30;
};

class CpuEngine : public Engine {
 public:
  explicit CpuEngine(CpuEngineOptions options = {});
  ~CpuEngine() override;

  DeviceInfo device_info() const override;

  // Queues the request on the pool. Before starting work it fails the
  // request with CANCELLED (request.cancelled set) or DEADLINE_EXCEEDED
  // (deadline passed); after Shutdown it fails with UNAVAILABLE. `done` is
  // called exactly once, on a pool thread (or inline after Shutdown).
  void Execute(ExecuteRequest request, ExecuteCallback done) override;

  // Stops accepting work and finishes the queued requests. Idempotent.
  void Shutdown() override;

  // Runs `request` synchronously on the calling thread (no deadline or
  // cancellation checks). The request must have passed ops::Validate;
  // payload lengths that differ from TotalTensorSizeInBytes and other
  // inconsistent descriptors give INVALID_ARGUMENT, never a crash.
  static absl::StatusOr<ExecuteResult> Run(
      const ExecuteRequest& request, const CpuEngineOptions& options = {});

 private:
  const CpuEngineOptions options_;
  sched::ThreadPool pool_;
};

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CPU_CPU_ENGINE_H_
