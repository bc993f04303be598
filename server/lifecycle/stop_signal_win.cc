// StopSignal on Windows: console control events (stop_signal.h). The
// handler runs on a thread Windows creates; it counts the event on a
// semaphore that Wait()/WaitForStop() take.
#include "server/lifecycle/stop_signal.h"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <atomic>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dmls::server {

struct StopSignal::State {
  HANDLE requests = nullptr;  // semaphore: one count per console event
  HANDLE done = nullptr;      // manual-reset event: set by ~StopSignal
  std::atomic<DWORD> last{CTRL_C_EVENT};
};

namespace {

// The handler's view of the one installed State; set before the handler is
// registered and never cleared (the process ends after ~StopSignal).
std::atomic<StopSignal::State*> g_state{nullptr};

const char* EventName(DWORD type) {
  switch (type) {
    case CTRL_C_EVENT: return "CTRL_C_EVENT";
    case CTRL_BREAK_EVENT: return "CTRL_BREAK_EVENT";
    case CTRL_CLOSE_EVENT: return "CTRL_CLOSE_EVENT";
    case CTRL_LOGOFF_EVENT: return "CTRL_LOGOFF_EVENT";
    case CTRL_SHUTDOWN_EVENT: return "CTRL_SHUTDOWN_EVENT";
    default: return "console event";
  }
}

BOOL WINAPI OnConsoleEvent(DWORD type) {
  StopSignal::State* state = g_state.load();
  if (state == nullptr) return FALSE;
  state->last.store(type);
  ReleaseSemaphore(state->requests, 1, nullptr);
  if (type == CTRL_CLOSE_EVENT || type == CTRL_LOGOFF_EVENT ||
      type == CTRL_SHUTDOWN_EVENT) {
    // Windows ends the process when this returns: hold it until main() has
    // drained and shut down (Windows' own timeout still applies).
    WaitForSingleObject(state->done, INFINITE);
  }
  return TRUE;
}

}  // namespace

StopSignal::StopSignal(std::unique_ptr<State> state) : state_(std::move(state)) {}

// The handles stay open: a handler may still be running when this returns
// (it ends with the process).
StopSignal::~StopSignal() { SetEvent(state_->done); }

absl::StatusOr<std::unique_ptr<StopSignal>> StopSignal::Install() {
  auto state = std::make_unique<State>();
  state->requests = CreateSemaphoreW(nullptr, 0, 1 << 20, nullptr);
  state->done = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  if (state->requests == nullptr || state->done == nullptr) {
    return absl::InternalError(absl::StrCat("CreateSemaphore/CreateEvent: error ",
                                            GetLastError()));
  }
  State* expected = nullptr;
  if (!g_state.compare_exchange_strong(expected, state.get())) {
    return absl::FailedPreconditionError("StopSignal::Install called twice");
  }
  if (!SetConsoleCtrlHandler(OnConsoleEvent, TRUE)) {
    return absl::InternalError(absl::StrCat("SetConsoleCtrlHandler: error ", GetLastError()));
  }
  return std::unique_ptr<StopSignal>(new StopSignal(std::move(state)));
}

StopSignal::Request StopSignal::Wait(std::string* name) {
  WaitForSingleObject(state_->requests, INFINITE);
  *name = EventName(state_->last.load());
  return Request::kStop;
}

bool StopSignal::WaitForStop(absl::Duration timeout) {
  const int64_t ms = absl::ToInt64Milliseconds(timeout);
  const DWORD wait = ms <= 0 ? 0 : ms >= INFINITE ? INFINITE - 1 : static_cast<DWORD>(ms);
  return WaitForSingleObject(state_->requests, wait) == WAIT_OBJECT_0;
}

}  // namespace dmls::server
