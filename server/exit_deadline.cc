#include "server/exit_deadline.h"

#include <utility>

#include "absl/time/clock.h"

namespace dmls::server {

ExitDeadline::ExitDeadline(absl::Duration after,
                           std::function<void()> on_expiry)
    : on_expiry_(std::move(on_expiry)) {
  const absl::Time deadline = absl::Now() + after;
  thread_ = std::thread([this, deadline] { Watch(deadline); });
}

ExitDeadline::~ExitDeadline() {
  {
    absl::MutexLock lock(&mu_);
    disarmed_ = true;
  }
  thread_.join();
}

void ExitDeadline::Watch(absl::Time deadline) {
  {
    absl::MutexLock lock(&mu_);
    // Wakes when disarmed or at the deadline, whichever comes first.
    mu_.AwaitWithDeadline(absl::Condition(&disarmed_), deadline);
    if (disarmed_) return;
  }
  on_expiry_();
}

}  // namespace dmls::server
