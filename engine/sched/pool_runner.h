// PoolRunner: a sched::Runner that runs each job of a batch on a thread of
// its own pool with one function (RunFn), for engines that execute one
// request at a time: the CPU reference engine (RunReference on every core)
// and the DirectML engine (DirectML.dll on one thread). There is nothing to
// coalesce, so every request gets an empty batch key. CanAccept() keeps at
// most two jobs per thread handed out, so waiting requests stay in the
// scheduler's queue (earliest deadline first, cancellable, expiring there)
// rather than in the pool's FIFO. Small requests
// (PoolRunnerOptions::inline_max_bytes) that the scheduler offers while its
// queue is empty run on the submitting thread instead, counted against the
// same bound (AcceptInline).
//
// A job is answered CANCELLED or DEADLINE_EXCEEDED without calling RunFn
// when it was cancelled or expired before it started; otherwise with
// RunFn's result (timing says it ran alone).
//
// Ownership: owns its pool; RunFn must stay callable until Shutdown()
// returns. Thread-safety: as sched::Runner; RunFn is called from the pool's
// threads and, inline, from submitting threads, concurrently when the pool
// has several threads.
#ifndef DMLSERVE_ENGINE_SCHED_POOL_RUNNER_H_
#define DMLSERVE_ENGINE_SCHED_POOL_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "engine/core/engine.h"
#include "engine/core/mutex.h"
#include "engine/sched/runner.h"
#include "engine/sched/thread_pool.h"

namespace dmls::sched {

struct PoolRunnerOptions {
  // Pool threads; 0 means std::thread::hardware_concurrency().
  int threads = 0;
  // Largest request (payloads plus output bytes) run on the submitting
  // thread when offered (AcceptInline); 0: none.
  uint64_t inline_max_bytes = 0;
  // The "engine is shut down" answer of a job the pool no longer takes.
  const char* shut_down_message = "engine is shut down";
};

class PoolRunner : public Runner {
 public:
  using RunFn = std::function<absl::StatusOr<ExecuteResult>(ExecuteRequest&)>;
  PoolRunner(PoolRunnerOptions options, RunFn run);
  ~PoolRunner() override;

  absl::StatusOr<Prepared> Prepare(ExecuteRequest& request) override;
  bool CanAccept() override;
  void Run(Batch batch) override;
  bool AcceptInline(const Job& job) override;
  void RunInline(Job job) override;
  void SetCapacityListener(std::function<void()> listener) override;
  void Drain() override;
  // Stops the pool after the jobs it holds; later ones are answered
  // UNAVAILABLE. Idempotent.
  void Shutdown() { pool_.Shutdown(); }

  int thread_count() const { return pool_.thread_count(); }

 private:
  // Answers `job` (cancelled, expired, or its result), then Finished().
  void RunJob(Job& job);
  // One handed-out job is through; tells the listener when that frees
  // capacity the scheduler may be waiting for.
  void Finished();
  int limit() const { return 2 * pool_.thread_count(); }

  const PoolRunnerOptions options_;
  const RunFn run_;
  ThreadPool pool_;
  std::atomic<int> handed_out_{0};
  Mutex listener_mu_;
  std::function<void()> listener_ ABSL_GUARDED_BY(listener_mu_);
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_POOL_RUNNER_H_
