// ThreadPool: a small fixed set of worker threads that run queued tasks in
// FIFO order. Used by the CPU engine to run requests off the caller's
// thread. Schedule() may be called from any thread; Shutdown() stops
// accepting tasks, lets the workers drain what is already queued and joins
// them (idempotent; the destructor calls it). A task must not call
// Shutdown() on its own pool. Thread-safe.
#ifndef DMLSERVE_ENGINE_SCHED_THREAD_POOL_H_
#define DMLSERVE_ENGINE_SCHED_THREAD_POOL_H_

#include <cstddef>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "engine/core/mutex.h"

namespace dmls::sched {

struct ThreadPoolOptions {
  // Number of worker threads; 0 means std::thread::hardware_concurrency()
  // (at least 1).
  int threads = 0;
  // The workers' thread name (SetThreadName: at most 15 bytes shown).
  std::string name = "dmls-pool";
};

class ThreadPool {
 public:
  explicit ThreadPool(ThreadPoolOptions options = {});
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `task`. Returns false (and drops the task without running it)
  // once Shutdown has begun; the caller then owns the failure path.
  bool Schedule(absl::AnyInvocable<void()> task);

  // Stops accepting tasks, runs every task already queued, joins workers.
  void Shutdown();

  int thread_count() const { return static_cast<int>(workers_.size()); }
  // Tasks queued and not yet started (for tests and metrics).
  size_t pending() const;

 private:
  void WorkerLoop();

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<absl::AnyInvocable<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;  // fixed after construction
  Mutex join_mu_;                // serialises concurrent Shutdown calls
};

}  // namespace dmls::sched

#endif  // DMLSERVE_ENGINE_SCHED_THREAD_POOL_H_
