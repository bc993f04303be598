#include "server/lifecycle/exit_deadline.h"

#include <utility>

#include "absl/time/clock.h"
#include "engine/core/thread_name.h"

namespace dmls::server {

ExitDeadline::ExitDeadline(absl::Duration after,
                           std::function<void()> on_expiry)
    : on_expiry_(std::move(on_expiry)) {
  const absl::Time deadline = absl::Now() + after;
  // Wakes when disarmed or at the deadline, whichever comes first.
  thread_ = std::thread([this, deadline] {
    SetThreadName("dmls-exit");
    if (!disarmed_.WaitForNotificationWithDeadline(deadline)) on_expiry_();
  });
}

ExitDeadline::~ExitDeadline() {
  disarmed_.Notify();
  thread_.join();
}

}  // namespace dmls::server
