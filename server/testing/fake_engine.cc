#include "server/testing/fake_engine.h"

#include <utility>

#include "absl/time/clock.h"

namespace dmls::server {

FakeEngine::FakeEngine(FakeEngineOptions options) : options_(options) {
  for (int i = 0; i < options_.threads; ++i) {
    workers_.emplace_back([this] { Work(); });
  }
}

FakeEngine::~FakeEngine() { Shutdown(); }

DeviceInfo FakeEngine::device_info() const {
  return DeviceInfo{"fake device", "cpu", "fake", 0};
}

void FakeEngine::Execute(ExecuteRequest request, ExecuteCallback done) {
  {
    absl::MutexLock lock(&mu_);
    ++received_;
    if (!stopping_) {
      queue_.push_back(Item{std::move(request), std::move(done)});
      return;
    }
  }
  done(absl::UnavailableError("engine shut down"));
}

void FakeEngine::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    released_ = true;  // queued work runs to completion
  }
  for (std::thread& t : workers_) t.join();
}

void FakeEngine::Release() {
  absl::MutexLock lock(&mu_);
  released_ = true;
}

int FakeEngine::received() const {
  absl::MutexLock lock(&mu_);
  return received_;
}

int FakeEngine::succeeded() const {
  absl::MutexLock lock(&mu_);
  return succeeded_;
}

bool FakeEngine::WaitForReceived(int n) const {
  absl::MutexLock lock(&mu_);
  auto reached = [this, n]()
                     ABSL_SHARED_LOCKS_REQUIRED(mu_) { return received_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(5));
}

void FakeEngine::Work() {
  for (;;) {
    Item item;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return (!queue_.empty() && (released_ || !options_.hold)) ||
               (stopping_ && queue_.empty());
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    absl::StatusOr<ExecuteResult> result = Run(item.request);
    if (result.ok()) {
      absl::MutexLock lock(&mu_);
      ++succeeded_;
    }
    item.done(std::move(result));
  }
}

absl::StatusOr<ExecuteResult> FakeEngine::Run(const ExecuteRequest& request) {
  auto cancelled = [&] {
    return request.cancelled != nullptr && request.cancelled->load();
  };
  // Sleep in small steps so that a cancelled request ends promptly.
  const absl::Time until = absl::Now() + options_.delay;
  while (absl::Now() < until && !cancelled() &&
         absl::Now() < request.deadline) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  if (cancelled()) return absl::CancelledError("cancelled");
  if (absl::Now() >= request.deadline) {
    return absl::DeadlineExceededError("deadline exceeded");
  }
  if (!options_.fail_with.ok()) return options_.fail_with;
  ExecuteResult result;
  result.output = request.input;
  result.output.resize(request.op.output->total_tensor_size_in_bytes);
  return result;
}

}  // namespace dmls::server
