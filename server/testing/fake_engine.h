// FakeEngine: a test double of dmls::Engine for the server tests. It echoes
// the input payload as the output (resized to the output tensor's size) on
// its own worker threads, optionally after a delay or only once released,
// and honours cancellation and deadlines like a real engine. Thread-safe.
#ifndef DMLSERVE_SERVER_TESTING_FAKE_ENGINE_H_
#define DMLSERVE_SERVER_TESTING_FAKE_ENGINE_H_

#include <atomic>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/core/engine.h"
#include "engine/core/mutex.h"

namespace dmls::server {

struct FakeEngineOptions {
  int threads = 4;
  // Time each request "runs"; cancellation and the deadline cut it short.
  absl::Duration delay = absl::ZeroDuration();
  // Requests wait until Release() before they run.
  bool hold = false;
  // Every request fails with this status when not OK.
  absl::Status fail_with = absl::OkStatus();
  // When set, called with each request as Execute receives it, on the
  // caller's thread, before it is queued (tests look at what the engine was
  // handed: its payloads' memory). Must be thread-safe.
  std::function<void(const ExecuteRequest&)> on_execute;
};

class FakeEngine final : public Engine {
 public:
  explicit FakeEngine(FakeEngineOptions options = {});
  ~FakeEngine() override;

  DeviceInfo device_info() const override;
  void Execute(ExecuteRequest request, ExecuteCallback done) override;
  void Shutdown() override;
  bool Healthy() const override { return healthy_.load(); }
  // What Healthy() answers from now on (true at first).
  void set_healthy(bool healthy) { healthy_.store(healthy); }

  // Lets held requests run.
  void Release();
  // Requests received by Execute so far / completed with OK.
  int received() const;
  int succeeded() const;
  // Blocks until `n` requests have been received (or 5 s have passed).
  bool WaitForReceived(int n) const;

 private:
  struct Item {
    ExecuteRequest request;
    ExecuteCallback done;
  };
  void Work();
  // Whether a worker has something to do: a request it may run, or the
  // end (stopping, nothing left).
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<ExecuteResult> Run(const ExecuteRequest& request);

  const FakeEngineOptions options_;
  std::atomic<bool> healthy_{true};
  mutable Mutex mu_;
  // Signalled whenever queue_ grows or received_, released_ or stopping_
  // change (what the waits below look at).
  mutable CondVar changed_;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int received_ ABSL_GUARDED_BY(mu_) = 0;
  int succeeded_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> workers_;
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_TESTING_FAKE_ENGINE_H_
