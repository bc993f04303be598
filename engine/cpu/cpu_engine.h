// CpuEngine: the reference executor. Plain loops over logical elements that
// reproduce oracle.py (OPERATORS.md §4-§7): binary64 math, one final RNE
// rounding to the output type, strides/zero strides/padding honoured, and
// in-place execution into a copy of the input buffer. It is the yardstick
// the Direct3D 12 engine is checked against and the fallback backend of the
// server.
//
// Requests go through engine/sched's scheduler (admission, queueing,
// deadlines) to a sched::PoolRunner (pool_runner.h) that runs each with
// RunReference on a pool thread.
//
// Ownership: owns its runner and scheduler. Thread-safe: Execute may be
// called from any number of threads; each request runs on one pool thread.
#ifndef DMLSERVE_ENGINE_CPU_CPU_ENGINE_H_
#define DMLSERVE_ENGINE_CPU_CPU_ENGINE_H_

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/cpu/cpu_engine_options.h"
#include "engine/sched/pool_runner.h"
#include "engine/sched/scheduler.h"

namespace dmls {

class CpuEngine : public Engine {
 public:
  explicit CpuEngine(CpuEngineOptions options = {});
  ~CpuEngine() override;

  DeviceInfo device_info() const override;

  // Admits and queues the request (sched::Scheduler::Submit). Before
  // starting work it fails the request with CANCELLED (request.cancelled
  // set) or DEADLINE_EXCEEDED (deadline passed); after Shutdown it fails
  // with UNAVAILABLE. `done` is called exactly once.
  void Execute(ExecuteRequest request, ExecuteCallback done) override;

  // Stops accepting work and finishes the queued requests. Idempotent.
  void Shutdown() override;

  std::vector<std::pair<std::string, uint64_t>> Counters() const override;

  // RunReference (reference.h): `request` computed synchronously on the
  // calling thread.
  static absl::StatusOr<ExecuteResult> Run(
      const ExecuteRequest& request, const CpuEngineOptions& options = {});

 private:
  const CpuEngineOptions options_;
  sched::PoolRunner runner_;
  sched::Scheduler scheduler_;
};

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CPU_CPU_ENGINE_H_
