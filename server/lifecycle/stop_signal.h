// StopSignal: what the operating system says to a running dmlserve, turned
// into calls main() blocks on. One pair of files per platform:
//
//   POSIX (stop_signal_posix.cc): SIGTERM and SIGINT ask it to stop, SIGHUP
//     to reload the tokens file. Install() blocks the three in the calling
//     thread, so every thread started after it inherits the mask and only
//     Wait()/WaitForStop() see them (sigwait, sigtimedwait).
//   Windows (stop_signal_win.cc): console control events ask it to stop:
//     Ctrl-C, Ctrl-Break, the console closing, logoff and system shutdown
//     (CTRL_SHUTDOWN_EVENT is what `docker stop` sends a Windows container's
//     process). No reload request. For close/logoff/shutdown Windows ends
//     the process as soon as the handler returns, so the handler waits until
//     this object is destroyed (main() is done) or Windows' own limit.
//
// Either way main() does the same: Wait() for a stop, drain, WaitForStop()
// as the "second signal ends the drain early", shut down with the grace.
//
// Thread-safety: one per process, installed by main() before any other
// thread starts; Wait() and WaitForStop() from that one thread.
#ifndef DMLSERVE_SERVER_LIFECYCLE_STOP_SIGNAL_H_
#define DMLSERVE_SERVER_LIFECYCLE_STOP_SIGNAL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace dmls::server {

class StopSignal {
 public:
  enum class Request { kStop, kReload };

  // Installs the process-wide handling; call once, before any thread starts.
  static absl::StatusOr<std::unique_ptr<StopSignal>> Install();
  ~StopSignal();

  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // Blocks until the next request; `*name` gets its name for the log
  // ("SIGTERM", "CTRL_C_EVENT", ...).
  Request Wait(std::string* name);

  // Blocks until another stop request comes (true) or `timeout` passes
  // (false). A reload request meanwhile stays pending for the next Wait().
  bool WaitForStop(absl::Duration timeout);

  // The platform file's own state (public only so that its handler can
  // name it).
  struct State;

 private:
  explicit StopSignal(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace dmls::server

#endif  // DMLSERVE_SERVER_LIFECYCLE_STOP_SIGNAL_H_
