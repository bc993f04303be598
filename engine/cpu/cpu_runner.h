// CpuRunner: the reference engine's sched::Runner. Each job of a batch runs
// on a thread pool with CpuEngine::Run; there is nothing to coalesce, so
// every request gets an empty batch key. CanAccept() keeps at most two jobs
// per thread handed out, so waiting requests stay in the scheduler's queue
// (earliest deadline first, cancellable) rather than in the pool's FIFO.
// Small requests (options.inline_max_bytes) that the scheduler offers
// while its queue is empty run on the submitting thread instead, counted
// against the same bound (AcceptInline).
//
// Ownership: owns its pool. Thread-safety: as sched::Runner.
#ifndef DMLSERVE_ENGINE_CPU_CPU_RUNNER_H_
#define DMLSERVE_ENGINE_CPU_CPU_RUNNER_H_

#include <atomic>
#include <functional>

#include "engine/core/mutex.h"
#include "engine/cpu/cpu_engine_options.h"
#include "engine/sched/runner.h"
#include "engine/sched/thread_pool.h"

namespace dmls {

class CpuRunner : public sched::Runner {
 public:
  explicit CpuRunner(CpuEngineOptions options);
  ~CpuRunner() override;

  absl::StatusOr<sched::Prepared> Prepare(ExecuteRequest& request) override;
  bool CanAccept() override;
  void Run(sched::Batch batch) override;
  bool AcceptInline(const sched::Job& job) override;
  void RunInline(sched::Job job) override;
  void SetCapacityListener(std::function<void()> listener) override;
  void Drain() override;
  void Shutdown() { pool_.Shutdown(); }

  int thread_count() const { return pool_.thread_count(); }

 private:
  // Answers `job` (cancelled, expired, or its result), then Finished().
  void RunJob(sched::Job& job);
  // One handed-out job is through; tells the listener when that frees
  // capacity the scheduler may be waiting for.
  void Finished();
  int limit() const { return 2 * pool_.thread_count(); }

  const CpuEngineOptions options_;
  sched::ThreadPool pool_;
  std::atomic<int> handed_out_{0};
  Mutex listener_mu_;
  std::function<void()> listener_ ABSL_GUARDED_BY(listener_mu_);
};

}  // namespace dmls

#endif  // DMLSERVE_ENGINE_CPU_CPU_RUNNER_H_
