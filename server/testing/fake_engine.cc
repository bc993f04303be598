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
  if (options_.on_execute) options_.on_execute(request);
  {
    MutexLock lock(&mu_);
    ++received_;
    changed_.SignalAll();
    if (!stopping_) {
      queue_.push_back(Item{std::move(request), std::move(done)});
      return;
    }
  }
  done(absl::UnavailableError("engine shut down"));
}

void FakeEngine::Shutdown() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    released_ = true;  // queued work runs to completion
    changed_.SignalAll();
  }
  for (std::thread& t : workers_) t.join();
}

void FakeEngine::Release() {
  MutexLock lock(&mu_);
  released_ = true;
  changed_.SignalAll();
}

int FakeEngine::received() const {
  MutexLock lock(&mu_);
  return received_;
}

int FakeEngine::succeeded() const {
  MutexLock lock(&mu_);
  return succeeded_;
}

bool FakeEngine::WaitForReceived(int n) const {
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  MutexLock lock(&mu_);
  while (received_ < n && !changed_.WaitUntil(&mu_, deadline)) {
  }
  return received_ >= n;
}

bool FakeEngine::ReadyLocked() const {
  return (!queue_.empty() && (released_ || !options_.hold)) ||
         (stopping_ && queue_.empty());
}

void FakeEngine::Work() {
  for (;;) {
    Item item;
    {
      MutexLock lock(&mu_);
      while (!ReadyLocked()) changed_.Wait(&mu_);
      if (queue_.empty()) return;  // stopping
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    absl::StatusOr<ExecuteResult> result = Run(item.request);
    if (result.ok()) {
      MutexLock lock(&mu_);
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
  result.output = request.input.ToString();
  result.output.resize(request.op.output->total_tensor_size_in_bytes);
  return result;
}

}  // namespace dmls::server
