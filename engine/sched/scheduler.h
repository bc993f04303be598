// Scheduler: dynamic batching and dispatch in front of a Runner (runner.h).
// Both engines embed one: Engine::Execute is Submit(); the GPU engine's
// ExecuteChain is SubmitChain(), so a resident chain is queued, admitted,
// counted in flight, expired at its deadline and batched like a plain
// request (it is never coalesced, and chains keep their submission order:
// batcher.h).
//
// Submit() and SubmitChain(), on the caller's thread:
//   1. for callers of the engine that admit nothing themselves (tests,
//      benches, tools), admission (admission.h) when options.admission is
//      set; the server admits every request once, before the engine, and
//      leaves it empty;
//   2. cancellation and the deadline (the queue's expiry, checked again
//      while queued);
//   3. Runner::Prepare (PrepareChain for a chain): planning, so the batch key is known at enqueue, and
//      the runner's staging (e.g. the GPU upload copy);
//   4. Batcher::Enqueue (QUEUE_FULL beyond max_queue_depth), or, for a
//      plain request that would leave an empty queue at once as a batch of
//      one, the runner's inline path when it takes it (runner.h
//      AcceptInline: the request runs on the caller's thread, counted and
//      stamped as a batch of one; what a small CPU request costs in thread
//      hops then is what gRPC's own thread costs).
// A failure in any step calls `done` before Submit returns.
//
// Ownership after Submit: once Submit has returned, the scheduler owns the
// request and its callback whatever happened; `done` is called exactly once
// (on the caller's thread for a rejection or a request run inline, else on
// the dispatch thread for a request that expired or was cancelled in the
// queue, else wherever the runner completes it). What its own admission admitted (an in-flight
// slot, bytes of its budget) is held until `done` returns.
//
// One dispatch thread forms batches (batcher.h) whenever one is due and the
// runner can accept it, fails queued requests whose deadline passes or that
// are cancelled, and hands batches to Runner::Run.
//
// Thread-safety: Submit, stats and Shutdown may be called from any thread;
// `done` callbacks may call Submit but not Shutdown.
#ifndef DMLSERVE_ENGINE_SCHED_SCHEDULER_H_
#define DMLSERVE_ENGINE_SCHED_SCHEDULER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "engine/core/engine.h"
#include "engine/core/mutex.h"
#include "engine/sched/admission.h"
#include "engine/sched/batch_policy.h"
#include "engine/sched/batcher.h"
#include "engine/sched/clock.h"
#include "engine/sched/runner.h"
#include "engine/sched/scheduler_observer.h"

namespace dmls::sched {

struct SchedulerOptions {
  BatchPolicy policy;
  // The checks of requests that reach the engine unadmitted (see above);
  // empty: none (the server's engines: it admitted them already).
  std::optional<AdmissionOptions> admission = AdmissionOptions{};
  // Null: RealClock. With a fake clock the dispatch thread only wakes on
  // events (Submit, runner capacity, Poke), never on timeouts.
  std::shared_ptr<Clock> clock;
  // How often queued requests are scanned for cancellation.
  absl::Duration cancel_scan_interval = absl::Milliseconds(5);
  // Optional: told about queueing, batches and run times (metrics).
  std::shared_ptr<SchedulerObserver> observer;
};

struct SchedulerStats {
  uint64_t admitted = 0;    // requests that reached the queue
  uint64_t rejected = 0;    // failed in Submit
  uint64_t expired = 0;     // failed in the queue (deadline or cancelled)
  uint64_t batches = 0;     // handed to the runner
  uint64_t batched_requests = 0;
  uint64_t largest_batch = 0;
  uint64_t queued = 0;      // now
  uint64_t in_flight = 0;   // now; counted only with admission->max_in_flight
};

class Scheduler {
 public:
  // `runner` must outlive the scheduler; it gets our capacity listener.
  Scheduler(Runner* runner, SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void Submit(ExecuteRequest request, ExecuteCallback done);
  // A validated resident chain (engine/core/resident.h), as Submit; the
  // runner must implement PrepareChain (else UNIMPLEMENTED).
  void SubmitChain(ChainRequest chain, ChainCallback done);
  // The runner's own work in the chain lane, in submission order with the
  // chains (the GPU engine's resident writes and reads): no admission, no
  // PrepareChain; Runner::Run gets a chain job with no steps and `state`,
  // and answers `done` (queue errors answer it here or in the queue).
  void SubmitOrdered(std::unique_ptr<JobState> state, ChainCallback done);

  // Stops admitting (UNAVAILABLE), hands every queued request to the
  // runner, waits for it to finish them, joins the dispatch thread.
  // Idempotent.
  void Shutdown();

  // Re-evaluates the policy now (tests with a fake clock call it after
  // advancing time).
  void Poke();

  SchedulerStats stats() const;
  const SchedulerOptions& options() const { return options_; }

 private:
  // Submit and SubmitChain from admission on.
  void Start(Job& job);
  // Start's last part: into the queue (or rejected), prepared at `now`.
  void Enqueue(Job& job, absl::Time now);
  void DispatchLoop();
  // Stamps each job of `batch`, handed to the runner at `now`, with its
  // times (StampedCallback, job.h: its answer tells the observer the run
  // time and, for a plain request, fills the result's ExecuteTiming; no
  // allocation) and, with an observer, reports the batch and the queue
  // times.
  void Stamp(Batch& batch, absl::Time now);
  // One job of a batch handed over at `now` (Stamp's part per job).
  void StampJob(Job& job, absl::Time now);
  // Enqueue's inline path: true when the runner took `job` (then counted
  // as admitted and as a batch of one).
  bool TakeInline(const Job& job);
  // Answers `job` with `status` (counted as rejected), its state released
  // first.
  void Reject(Job& job, absl::Status status);

  Runner* const runner_;
  const SchedulerOptions options_;
  const std::shared_ptr<Clock> clock_;
  const std::unique_ptr<Admission> admission_;  // null: none
  std::atomic<uint64_t> next_seq_{1};

  mutable Mutex mu_;
  CondVar cv_;
  Batcher batcher_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  SchedulerStats stats_ ABSL_GUARDED_BY(mu_);

  Mutex shutdown_mu_;  // serialises Shutdown
  std::thread thread_;
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_SCHEDULER_H_
