#include "server/lifecycle/call_tracker.h"

#include <utility>
#include <vector>

#include "absl/time/clock.h"

namespace dmls::server {

CallTracker::Ticket::Ticket(Ticket&& other) noexcept
    : tracker_(std::exchange(other.tracker_, nullptr)), stoppable_(other.stoppable_) {}

CallTracker::Ticket& CallTracker::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    End();
    tracker_ = std::exchange(other.tracker_, nullptr);
    stoppable_ = other.stoppable_;
  }
  return *this;
}

void CallTracker::Ticket::End() {
  if (tracker_ == nullptr) return;
  std::exchange(tracker_, nullptr)->End(stoppable_);
}

CallTracker::Ticket CallTracker::Begin(Stoppable* stoppable) {
  MutexLock lock(&mu_);
  if (closed_) {
    ++refused_;
    return Ticket();
  }
  ++in_flight_;
  if (stoppable != nullptr) stoppable_.insert(stoppable);
  return Ticket(this, stoppable);
}

void CallTracker::End(Stoppable* stoppable) {
  MutexLock lock(&mu_);
  if (stoppable != nullptr) stoppable_.erase(stoppable);
  // Only read when nothing is in flight: then the last End is the one
  // that brought the count to 0.
  if (--in_flight_ == 0) {
    last_end_ = absl::Now();
    idle_cv_.SignalAll();
  }
}

void CallTracker::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
}

bool CallTracker::CloseWhenIdle(absl::Time deadline) {
  MutexLock lock(&mu_);
  const bool idle = WaitIdleLocked(deadline);
  closed_ = true;
  return idle;
}

void CallTracker::StopAll() {
  std::vector<Stoppable*> stop;
  {
    MutexLock lock(&mu_);
    closed_ = true;
    if (stopped_) return;
    stopped_ = true;
    stop.reserve(stoppable_.size());
    for (Stoppable* call : stoppable_) {
      call->Retain();
      stop.push_back(call);
    }
  }
  // Unlocked: Stop may Finish, and gRPC may run OnDone (which ends the
  // Ticket) before Finish returns.
  for (Stoppable* call : stop) call->Stop();
}

bool CallTracker::WaitIdle(absl::Time deadline) {
  MutexLock lock(&mu_);
  return WaitIdleLocked(deadline);
}

bool CallTracker::WaitIdleLocked(absl::Time deadline) {
  while (in_flight_ != 0 && !idle_cv_.WaitUntil(&mu_, deadline)) {
  }
  return in_flight_ == 0;
}

size_t CallTracker::in_flight() const {
  MutexLock lock(&mu_);
  return in_flight_;
}

absl::Time CallTracker::last_end() const {
  MutexLock lock(&mu_);
  return last_end_;
}

uint64_t CallTracker::refused() const {
  MutexLock lock(&mu_);
  return refused_;
}

}  // namespace dmls::server
