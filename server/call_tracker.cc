#include "server/call_tracker.h"

#include <utility>
#include <vector>

#include "absl/time/clock.h"

namespace dmls::server {

CallTracker::Ticket::Ticket(Ticket&& other) noexcept
    : tracker_(std::exchange(other.tracker_, nullptr)), id_(other.id_) {}

CallTracker::Ticket& CallTracker::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    End();
    tracker_ = std::exchange(other.tracker_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

void CallTracker::Ticket::End() {
  if (tracker_ == nullptr) return;
  std::exchange(tracker_, nullptr)->End(id_);
}

CallTracker::Ticket CallTracker::Begin(Stoppable* stoppable) {
  absl::MutexLock lock(&mu_);
  if (closed_) return Ticket();
  const uint64_t id = next_id_++;
  ++in_flight_;
  if (stoppable != nullptr) stoppable_.emplace(id, stoppable);
  return Ticket(this, id);
}

void CallTracker::End(uint64_t id) {
  absl::MutexLock lock(&mu_);
  --in_flight_;
  stoppable_.erase(id);
  last_end_ = absl::Now();
}

void CallTracker::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

bool CallTracker::CloseWhenIdle(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  const bool idle = mu_.AwaitWithDeadline(absl::Condition(this, &CallTracker::IdleLocked), deadline);
  closed_ = true;
  return idle;
}

void CallTracker::StopAll() {
  std::vector<Stoppable*> stop;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    if (stopped_) return;
    stopped_ = true;
    stop.reserve(stoppable_.size());
    for (const auto& [id, call] : stoppable_) {
      call->Retain();
      stop.push_back(call);
    }
  }
  // Unlocked: Stop may Finish, and gRPC may run OnDone (which ends the
  // Ticket) before Finish returns.
  for (Stoppable* call : stop) call->Stop();
}

bool CallTracker::WaitIdle(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithDeadline(absl::Condition(this, &CallTracker::IdleLocked), deadline);
}

size_t CallTracker::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

absl::Time CallTracker::last_end() const {
  absl::MutexLock lock(&mu_);
  return last_end_;
}

}  // namespace dmls::server
