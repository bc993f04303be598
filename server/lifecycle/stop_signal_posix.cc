// StopSignal on POSIX: sigwait on SIGTERM, SIGINT (stop) and SIGHUP
// (reload), blocked in every thread (stop_signal.h).
#include "server/lifecycle/stop_signal.h"

#include <pthread.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace dmls::server {

struct StopSignal::State {
  sigset_t stop;      // SIGTERM, SIGINT
  sigset_t requests;  // stop + SIGHUP
};

StopSignal::StopSignal(std::unique_ptr<State> state) : state_(std::move(state)) {}
StopSignal::~StopSignal() = default;

absl::StatusOr<std::unique_ptr<StopSignal>> StopSignal::Install() {
  auto state = std::make_unique<State>();
  sigemptyset(&state->stop);
  sigaddset(&state->stop, SIGTERM);
  sigaddset(&state->stop, SIGINT);
  state->requests = state->stop;
  sigaddset(&state->requests, SIGHUP);
  if (int err = pthread_sigmask(SIG_BLOCK, &state->requests, nullptr); err != 0) {
    return absl::InternalError(absl::StrCat("pthread_sigmask: ", std::strerror(err)));
  }
  return std::unique_ptr<StopSignal>(new StopSignal(std::move(state)));
}

StopSignal::Request StopSignal::Wait(std::string* name) {
  int number = 0;
  while (sigwait(&state_->requests, &number) != 0) {
  }
  *name = number == SIGHUP ? "SIGHUP" : number == SIGTERM ? "SIGTERM" : "SIGINT";
  return number == SIGHUP ? Request::kReload : Request::kStop;
}

bool StopSignal::WaitForStop(absl::Duration timeout) {
  const absl::Time end = absl::Now() + timeout;
  while (absl::Now() < end) {
    const timespec wait = absl::ToTimespec(end - absl::Now());
    if (sigtimedwait(&state_->stop, nullptr, &wait) > 0) return true;
    // EAGAIN: the time is over (the loop ends); EINTR: wait again.
  }
  return false;
}

}  // namespace dmls::server
