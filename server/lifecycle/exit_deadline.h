// ExitDeadline: a watchdog that bounds how long the process may take to
// stop. Armed when shutdown starts; if the shutdown has not returned (the
// object is still alive) when the deadline passes, it calls `on_expiry` on
// its own thread. dmlserve's main() passes a callback that logs and ends
// the process with exit status 0: by then every call has been cancelled
// (gRPC's grace is over), and what still runs is device work of those
// calls (a long lavapipe dispatch holds the engine for seconds) that no
// client waits for. Without it, `docker stop` (10 s) ends in SIGKILL.
//
// Thread-safety: construct and destroy on one thread. The destructor
// disarms (joins the watchdog) unless the callback has already started;
// a callback that returns lets the destructor finish normally.
#ifndef DMLSERVE_SERVER_LIFECYCLE_EXIT_DEADLINE_H_
#define DMLSERVE_SERVER_LIFECYCLE_EXIT_DEADLINE_H_

#include <functional>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace dmls::server {

class ExitDeadline {
 public:
  ExitDeadline(absl::Duration after, std::function<void()> on_expiry);
  ~ExitDeadline();

  ExitDeadline(const ExitDeadline&) = delete;
  ExitDeadline& operator=(const ExitDeadline&) = delete;

 private:
  std::function<void()> on_expiry_;  // called at most once, on thread_
  absl::Notification disarmed_;
  std::thread thread_;
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_LIFECYCLE_EXIT_DEADLINE_H_
